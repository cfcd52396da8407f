"""Byte-order ranks of string docids within each group, for trec_eval's tie order.

trec_eval breaks score ties by docid, descending by bytes (``strcmp``). Comparing docid bytes
inside the ranking's sort is slow (every tied segment of every system goes to the general merge
sort, ~14 us per segment measured), while integer docids are ordered by the sorting networks and
tie-aware counting directly. :func:`docid_byte_ranks` sorts each group's docids **once** (shared
by every system evaluated on the same rows) and replaces them by their rank in byte order, offset
to a common width (:data:`RANK_BASE`), so that numeric order, strcmp order of the decimal strings
(trec_eval's rule for integer docids) and byte order of the original docids all agree. The same
sort finds a docid repeated within a group (equal neighbours), so it replaces the hash-set check
of :func:`~uefast.kernels.grouping.find_duplicate` for these columns.

Algorithm (:func:`_sort_group`): per group, every docid is keyed by its first 16 bytes as two
big-endian words (zero padded). Most significant bits first: the bits all keys of a run share are
dropped, and the next ``63 - s`` bits (s = bits of a position) are packed above the position into
one int64, which the sorting networks of :mod:`uefast.kernels.sortnet` order in one pass
(:func:`~uefast.kernels.sortnet.sort_keys_desc`); sub-runs whose packed bits agree share a longer
prefix and are packed and sorted again (TREC docnos such as ``FBIS3-10082`` share more than one
key's worth), until they are short or agree on all 16 bytes, where a stable comparison sort
finishes them with the remaining bytes, then the length (exactly lexicographic byte order, a
proper prefix first). A zero-padded prefix never orders two docids differently from their bytes.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast._intrinsics import _bswap64, _ctlz64, _load_le64
from uefast.kernels.grouping import chunk_span, first_found
from uefast.kernels.sortnet import _pos_bits, sort_keys_desc

__all__ = ["RANK_BASE", "docid_byte_ranks"]

_jit = nb.njit(cache=True, nogil=True)
_inl = nb.njit(cache=True, nogil=True, inline="always")

#: added to every rank: ranks of groups below 9 * 10**12 rows all have 13 decimal digits, so they
#: compare numerically as strcmp compares their decimal strings
RANK_BASE = 10 ** 12
_INSERTION_MAX = 16


@_inl
def _be_word(data, s, e):
    """The bytes data[s:min(s + 8, e)] as a big-endian uint64, zero padded on the right (one
    unaligned load and a byte swap where 8 bytes can be read)."""
    m = min(e - s, 8)
    if m <= 0:
        return np.uint64(0)
    if s + 8 <= data.shape[0]:
        w = _bswap64(_load_le64(data, s))
        if m < 8:
            w &= ~((np.uint64(1) << np.uint64(64 - 8 * m)) - np.uint64(1))
        return w
    w = np.uint64(0)
    for j in range(8):
        w = w << np.uint64(8)
        if j < m:
            w |= np.uint64(data[s + j])
    return w


@_inl
def _cmp(a, b, w0, w1, st, ln, data):
    """Byte-order comparison (-1, 0, 1) of the docids at local positions a and b."""
    if w0[a] != w0[b]:
        return -1 if w0[a] < w0[b] else 1
    if w1[a] != w1[b]:
        return -1 if w1[a] < w1[b] else 1
    la = ln[a]
    lb = ln[b]
    if la > 16 and lb > 16:
        sa = st[a]
        sb = st[b]
        for j in range(16, min(la, lb)):
            ca = data[sa + j]
            cb = data[sb + j]
            if ca != cb:
                return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@_jit
def _sort_positions(idx, tmp, n, w0, w1, st, ln, data):
    """Stable sort of ``idx[:n]`` (local positions) by docid bytes; bottom-up merge sort over
    insertion-sorted runs. The result is in ``idx``."""
    for lo in range(0, n, _INSERTION_MAX):
        hi = min(lo + _INSERTION_MAX, n)
        for i in range(lo + 1, hi):
            x = idx[i]
            j = i - 1
            while j >= lo and _cmp(idx[j], x, w0, w1, st, ln, data) > 0:
                idx[j + 1] = idx[j]
                j -= 1
            idx[j + 1] = x
    width = _INSERTION_MAX
    src, dst = idx, tmp
    in_tmp = False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _cmp(src[j], src[i], w0, w1, st, ln, data) < 0:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for i in range(n):
            idx[i] = tmp[i]


@_jit
def _prefix_shift(idx, lo, hi, w0, w1):
    """Leading bits shared by the 128-bit keys (w0, w1) of positions idx[lo:hi] (128: all)."""
    a = idx[lo]
    x0 = np.uint64(0)
    x1 = np.uint64(0)
    for t in range(lo, hi):
        p = idx[t]
        x0 |= w0[p] ^ w0[a]
        x1 |= w1[p] ^ w1[a]
    if x0 != np.uint64(0):
        return np.int64(_ctlz64(x0))
    if x1 != np.uint64(0):
        return 64 + np.int64(_ctlz64(x1))
    return 128


@_inl
def _top_bits(a, b, c, nb_):
    """The ``nb_`` (1..63) bits of the 128-bit word (a, b) that follow its first c bits."""
    if c == 0:
        hi = a
    elif c < 64:
        hi = (a << np.uint64(c)) | (b >> np.uint64(64 - c))
    elif c < 128:
        hi = b << np.uint64(c - 64)
    else:
        hi = np.uint64(0)
    return hi >> np.uint64(64 - nb_)


@_jit
def _sort_group(idx, tmp, keys, ktmp, pos, stack, n, w0, w1, st, ln, data):
    """``idx[:n]`` = positions 0..n-1 stably sorted by docid bytes.

    Most significant bits first: a run of positions (at first all n) whose keys share their first
    c bits is network-sorted on (the next 63 - s bits, index in the run); sub-runs that agree on
    those bits too share more than c + 63 - s bits and are sorted again the same way, until they
    are short (comparison insertion sort) or agree on all 128 key bits (comparison sort on the
    remaining bytes and the length). Ties keep their order, so the sort is stable."""
    for i in range(n):
        idx[i] = i
    stack[0] = 0
    stack[1] = n
    top = 1
    while top > 0:
        top -= 1
        lo = stack[2 * top]
        hi = stack[2 * top + 1]
        m = hi - lo
        c = 128 if m <= _INSERTION_MAX else _prefix_shift(idx, lo, hi, w0, w1)
        if c == 128:
            _sort_positions(idx[lo:hi], tmp, m, w0, w1, st, ln, data)
            continue
        s = _pos_bits(m)
        nbits = 63 - s
        smax = np.int64((1 << s) - 1)
        kmax = np.int64((1 << nbits) - 1)
        for j in range(m):
            p = idx[lo + j]
            pos[j] = p
            # descending network order = key bits ascending, then index in the run ascending
            keys[j] = ((kmax - np.int64(_top_bits(w0[p], w1[p], c, nbits))) << s) | (smax - j)
        sort_keys_desc(keys, m, np.iinfo(np.int64).min, ktmp)
        for j in range(m):
            idx[lo + j] = pos[smax - (keys[j] & smax)]
        j = 0
        while j < m:
            e = j + 1
            kp = keys[j] >> s
            while e < m and (keys[e] >> s) == kp:
                e += 1
            if e - j > 1:
                stack[2 * top] = lo + j
                stack[2 * top + 1] = lo + e
                top += 1
            j = e


@nb.njit(parallel=True, cache=True, nogil=True)
def docid_byte_ranks(offsets, perm, has_perm, doc_off, doc_data, nchunks, ranks, rising_out):
    """For every group (rows ``offsets[g]:offsets[g+1]``, through ``perm`` when ``has_perm``)
    write ``ranks[row] = RANK_BASE + r``, r the dense rank of the row's docid (Arrow string
    offsets ``doc_off`` / bytes ``doc_data``) among its group's docids in byte order (0 = least),
    and ``rising_out[g] = 1`` where the docids rise strictly with position. Rows in no group are
    left as they are.

    Returns ``(row, first_row)`` of the first docid repeated within a group (the first group that
    has one, the first position in it whose docid appeared earlier, and that earlier row, as
    :func:`~uefast.kernels.grouping.find_duplicate` reports it), or ``(-1, -1)``."""
    found = np.full(nchunks, -1, np.int64)
    found_first = np.full(nchunks, -1, np.int64)
    for c in nb.prange(nchunks):
        s0, s1, maxn = chunk_span(offsets, c, nchunks)
        maxn = max(maxn, 1)
        w0 = np.empty(maxn, np.uint64)
        w1 = np.empty(maxn, np.uint64)
        st = np.empty(maxn, np.int64)
        ln = np.empty(maxn, np.int64)
        rows = np.empty(maxn, np.int64)
        idx = np.empty(maxn, np.int64)
        tmp = np.empty(maxn, np.int64)
        room = (maxn + 511) // 512 * 512
        keys = np.empty(room, np.int64)
        ktmp = np.empty(room, np.int64)
        pos = np.empty(maxn, np.int64)
        stack = np.empty(2 * maxn + 2, np.int64)
        for s in range(s0, s1):
            base = offsets[s]
            n = offsets[s + 1] - base
            for i in range(n):
                r = perm[base + i] if has_perm else base + i
                rows[i] = r
                a = doc_off[r]
                e = doc_off[r + 1]
                st[i] = a
                ln[i] = e - a
                w0[i] = _be_word(doc_data, a, e)
                w1[i] = _be_word(doc_data, a + 8, e)
            _sort_group(idx, tmp, keys, ktmp, pos, stack, n, w0, w1, st, ln, doc_data)
            rk = 0
            dup = -1
            dup_first = -1
            in_order = True
            for t in range(n):
                p = idx[t]
                if t > 0:
                    q = idx[t - 1]
                    if _cmp(q, p, w0, w1, st, ln, doc_data) == 0:
                        # stable sort: q < p; keep the pair whose later position is least
                        if dup < 0 or p < dup:
                            dup = p
                            dup_first = q
                    else:
                        rk += 1
                if p != t:
                    in_order = False
                ranks[rows[p]] = RANK_BASE + rk
            if dup >= 0:
                # in an equal run p1 < p2 < ... the least later position is p2, paired with p1
                found[c] = rows[dup]
                found_first[c] = rows[dup_first]
                break
            if in_order and rising_out.size:
                rising_out[s] = 1
    return first_found(found, found_first)
