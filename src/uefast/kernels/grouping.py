"""Grouping rows by query without sorting on keys (DESIGN §2).

* :func:`run_starts_int` / :func:`run_starts_bytes` -- O(n) scan for runs of equal keys. When every
  key forms a single run (input clustered by query, the usual case) the runs *are* the groups and
  no permutation is needed.
* :func:`counting_sort` -- otherwise, an O(n + G) stable counting sort of dense group codes gives
  the offsets and the row permutation (rows with code < 0 are left out).
* :func:`find_duplicate` -- the first row whose integer docid repeats within its group (hash set
  per group; string docids: :mod:`uefast.kernels.docrank`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.kernels.threads import run_chunks

__all__ = ["run_starts_int", "run_starts_bytes", "counting_sort", "find_duplicate"]

_jit = nb.njit(cache=True, nogil=True)


@_jit
def run_starts_int(values):
    """Start positions of runs of equal values, plus a final ``len(values)``."""
    n = values.shape[0]
    out = np.empty(n + 1, np.int64)
    c = 0
    for i in range(n):
        if i == 0 or values[i] != values[i - 1]:
            out[c] = i
            c += 1
    out[c] = n
    return out[: c + 1].copy()


@_jit
def run_starts_bytes(offsets, data):
    """Like :func:`run_starts_int` for a string column given as Arrow offsets + data bytes."""
    n = offsets.shape[0] - 1
    out = np.empty(n + 1, np.int64)
    c = 0
    for i in range(n):
        new = i == 0
        if not new:
            a0 = offsets[i - 1]
            a1 = offsets[i]
            b1 = offsets[i + 1]
            if a1 - a0 != b1 - a1:
                new = True
            else:
                for j in range(a1 - a0):
                    if data[a0 + j] != data[a1 + j]:
                        new = True
                        break
        if new:
            out[c] = i
            c += 1
    out[c] = n
    return out[: c + 1].copy()


@_jit
def counting_sort(codes, ncodes):
    """Stable counting sort of ``codes`` in [0, ncodes) (negative codes are skipped).

    Returns ``(offsets, perm)``: rows of group g are ``perm[offsets[g]:offsets[g+1]]`` in input order.
    """
    counts = np.zeros(ncodes + 1, np.int64)
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            counts[c + 1] += 1
    for g in range(ncodes):
        counts[g + 1] += counts[g]
    pos = counts[:ncodes].copy()
    perm = np.empty(counts[ncodes], np.int64)
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            perm[pos[c]] = i
            pos[c] += 1
    return counts, perm


@_jit
def chunk_span(offsets, c, nchunks):
    """``(s0, s1, longest)``: the groups ``s0 .. s1-1`` of chunk c of ``nchunks`` (contiguous,
    as the parallel kernels split them) and the most rows any of them has."""
    nseg = offsets.shape[0] - 1
    s0 = nseg * c // nchunks
    s1 = nseg * (c + 1) // nchunks
    longest = 0
    for s in range(s0, s1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    return s0, s1, longest


@_jit
def first_found(found, found_first):
    """The first chunk's ``(found, found_first)`` pair with ``found >= 0``, else ``(-1, -1)``."""
    for c in range(found.size):
        if found[c] >= 0:
            return found[c], found_first[c]
    return -1, -1


@_jit
def _hash_int(x):
    """A 64-bit mix (murmur3's finaliser) of an integer docid."""
    x = np.uint64(x)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    return x


def find_duplicate(offsets, perm, has_perm, doc_int, nchunks, rising_out):
    """Return ``(row, first_row)`` for the first duplicated integer docid within a group (input
    rows), or ``(-1, -1)``. Expected O(n): one open-addressing table per chunk whose slots are
    stamped with the group number, so it never needs clearing between groups; docids spanning a
    range smaller than the table index it directly (no hashing). Groups whose docids strictly
    rise with position (no table needed) get ``rising_out[group] = 1`` when ``rising_out``
    (zeroed, one entry per group) is not empty: the ranking reuses that
    (:func:`~uefast.kernels.counting.tie_order`). String docids: see
    :func:`uefast.kernels.docrank.docid_byte_ranks`."""
    found = np.full(nchunks, -1, np.int64)
    found_first = np.full(nchunks, -1, np.int64)
    run_chunks(_find_duplicate_chunks, nchunks, offsets, perm, has_perm, doc_int, nchunks,
               rising_out, found, found_first)
    return first_found(found, found_first)


@nb.njit(cache=True, nogil=True)
def _find_duplicate_chunks(c0, c1, offsets, perm, has_perm, doc_int, nchunks, rising_out, found,
                           found_first):
    """:func:`find_duplicate` over chunks ``c0 .. c1 - 1``: ``found[c]`` / ``found_first[c]``
    for chunk c."""
    for c in range(c0, c1):
        s0, s1, maxn = chunk_span(offsets, c, nchunks)
        size = 4
        while size < 2 * maxn:
            size *= 2
        slot_row = np.empty(size, np.int64)
        slot_grp = np.full(size, -1, np.int64)
        dv = np.empty(maxn + 1, np.int64)
        mask = np.uint64(size - 1)
        for s in range(s0, s1):
            base = offsets[s]
            n = offsets[s + 1] - base
            if n > 0:
                # strictly increasing docids (e.g. sequential ids) cannot repeat: an early-exit
                # scan over the column, with no copy
                # (slices indexed from 0 and unsigned rows: no negative-index wraparound code)
                rising = True
                if has_perm:
                    rows = perm[base:base + n]
                    for i in range(1, n):
                        if doc_int[np.uint64(rows[i])] <= doc_int[np.uint64(rows[i - 1])]:
                            rising = False
                            break
                else:
                    seg = doc_int[base:base + n]
                    for i in range(1, n):
                        if seg[i] <= seg[i - 1]:
                            rising = False
                            break
                if rising:
                    if rising_out.size:
                        rising_out[s] = 1
                    continue
                # dense integer docids (range < table size): index the table directly, no hashing.
                # The docids are copied first by a loop without a per-row perm test (vectorised).
                if has_perm:
                    rows = perm[base:base + n]
                    for i in range(n):
                        dv[i] = doc_int[np.uint64(rows[i])]
                else:
                    seg = doc_int[base:base + n]
                    for i in range(n):
                        dv[i] = seg[i]
                lo = dv[0]
                hi = lo
                for i in range(1, n):
                    lo = min(lo, dv[i])
                    hi = max(hi, dv[i])
                # the range in uint64: hi - lo wraps negative in int64 when it is >= 2^63
                if np.uint64(hi) - np.uint64(lo) < np.uint64(size):
                    for i in range(n):
                        h = dv[i] - lo
                        if slot_grp[h] == s:
                            found[c] = perm[base + i] if has_perm else base + i
                            found_first[c] = slot_row[h]
                            break
                        slot_grp[h] = s
                        slot_row[h] = perm[base + i] if has_perm else base + i
                    if found[c] >= 0:
                        break
                    continue
            for i in range(n):
                r = perm[base + i] if has_perm else base + i
                h = _hash_int(doc_int[r]) & mask
                while slot_grp[h] == s:
                    o = slot_row[h]
                    if doc_int[o] == doc_int[r]:
                        found[c] = r
                        found_first[c] = o
                        break
                    h = (h + np.uint64(1)) & mask
                if found[c] >= 0:
                    break
                slot_grp[h] = s
                slot_row[h] = r
            if found[c] >= 0:
                break
