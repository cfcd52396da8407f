"""Ranking one query segment: sort by score descending with an explicit tie policy (Numba).

Tie policies (``tie_mode``):

* ``TIE_INPUT`` (0)   -- equal scores keep input order (a stable sort);
* ``TIE_DOCID`` (1)   -- equal scores ordered by docid **descending by bytes**, as trec_eval does
  (``strcmp`` on docnos: "9" ranks before "10"); integer docids compare as their decimal strings;
* ``TIE_EXPECTED`` (2) -- the order inside a tie group is irrelevant; the caller uses the groups.

:func:`rank_segment` sorts the float keys alone with a quicksort (median of three, Hoare partition,
insertion sort below 24 elements) whose comparisons are plain float comparisons, then re-orders
each run of equal scores by the tie policy with a stable merge sort (:func:`sort_segment`). All
work happens in caller-provided buffers: no allocation per query.
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["TIE_INPUT", "TIE_DOCID", "TIE_EXPECTED", "DOC_NONE", "DOC_BYTES", "DOC_INT",
           "COUNT_BY_INDEX", "COUNT_BY_KEY", "COUNT_NO_TIES", "rank_labels_by_counting",
           "F32_MAX_N", "F32_ROWWISE_MAX", "top_positives", "rank_labels_f32", "tie_keys_f32", "rank_labels_f32_ties",
           "docid_compare", "sort_segment", "rank_segment", "tie_groups"]

TIE_INPUT, TIE_DOCID, TIE_EXPECTED = 0, 1, 2
DOC_NONE, DOC_BYTES, DOC_INT = 0, 1, 2

_jit = nb.njit(cache=True, nogil=True)


_P10 = np.array([10 ** i for i in range(19)], dtype=np.int64)


@_jit
def _ndigits(u):
    """Number of decimal digits of u >= 0 (comparisons only: no division)."""
    d = 1
    while d < 19 and u >= _P10[d]:
        d += 1
    return d


@_jit
def _mag_str_compare(ua, ub):
    """strcmp of the decimal strings of two magnitudes ua, ub >= 0: left-align the shorter one
    (one integer division); a string that is a prefix of the other sorts first."""
    da = _ndigits(ua)
    db = _ndigits(ub)
    if da == db:
        return 0 if ua == ub else (1 if ua > ub else -1)
    if da < db:
        q = ub // _P10[db - da]
        return 1 if ua > q else -1  # ua == q: a is a prefix of b, so a sorts first
    q = ua // _P10[da - db]
    return -1 if q < ub else 1  # q == ub: b is a prefix of a, so b sorts first


@_jit
def _int_str_compare(a, b):
    """Compare two int64 values as their decimal strings, bytewise (strcmp semantics)."""
    if a == b:
        return 0
    if a < 0:
        if b >= 0:
            return -1  # '-' (0x2d) sorts before every digit
        # both negative: compare the digits after '-' (int64 min saturates to max; see docs)
        return _mag_str_compare(-max(a, -9223372036854775807), -max(b, -9223372036854775807))
    if b < 0:
        return 1
    return _mag_str_compare(a, b)


@_jit
def docid_compare(ra, rb, doc_mode, doc_int, doc_off, doc_data):
    """strcmp-style comparison of the docids of input rows ``ra`` and ``rb`` (-1, 0 or 1)."""
    if doc_mode == DOC_INT:
        return _int_str_compare(doc_int[ra], doc_int[rb])
    if doc_mode == DOC_BYTES:
        a0 = doc_off[ra]
        a1 = doc_off[ra + 1]
        b0 = doc_off[rb]
        b1 = doc_off[rb + 1]
        la = a1 - a0
        lb = b1 - b0
        for i in range(min(la, lb)):
            ca = doc_data[a0 + i]
            cb = doc_data[b0 + i]
            if ca != cb:
                return 1 if ca > cb else -1
        if la == lb:
            return 0
        return 1 if la > lb else -1
    return 0


@_jit
def _before(ka, ia, kb, ib, tie_mode, rows, doc_mode, doc_int, doc_off, doc_data):
    """True if (score ka, local index ia) ranks strictly before (kb, ib)."""
    if ka > kb:
        return True
    if ka < kb:
        return False
    if tie_mode == TIE_DOCID and doc_mode != DOC_NONE:
        c = docid_compare(rows[ia], rows[ib], doc_mode, doc_int, doc_off, doc_data)
        if c != 0:
            return c > 0
    return ia < ib


@_jit
def sort_segment(keys, idx, tk, ti, n, tie_mode, rows, doc_mode, doc_int, doc_off, doc_data):
    """Sort ``keys[0:n]`` descending, permuting ``idx`` alongside (stable merge sort).

    ``rows[idx]`` maps a local index to its input row (for docid look-ups). ``tk``/``ti`` are
    scratch of length >= n. On return ``keys``/``idx`` hold the sorted order.
    """
    run = 16
    for s in range(0, n, run):
        e = min(s + run, n)
        for i in range(s + 1, e):
            kv = keys[i]
            iv = idx[i]
            j = i - 1
            while j >= s and _before(kv, iv, keys[j], idx[j], tie_mode, rows, doc_mode,
                                     doc_int, doc_off, doc_data):
                keys[j + 1] = keys[j]
                idx[j + 1] = idx[j]
                j -= 1
            keys[j + 1] = kv
            idx[j + 1] = iv
    if n <= run:
        return
    sk = keys
    si = idx
    dk = tk
    di = ti
    width = run
    in_tmp = False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a = lo
            b = mid
            o = lo
            while a < mid and b < hi:
                # take from the right run only if it ranks strictly before (stability)
                if _before(sk[b], si[b], sk[a], si[a], tie_mode, rows, doc_mode,
                           doc_int, doc_off, doc_data):
                    dk[o] = sk[b]
                    di[o] = si[b]
                    b += 1
                else:
                    dk[o] = sk[a]
                    di[o] = si[a]
                    a += 1
                o += 1
            while a < mid:
                dk[o] = sk[a]
                di[o] = si[a]
                a += 1
                o += 1
            while b < hi:
                dk[o] = sk[b]
                di[o] = si[b]
                b += 1
                o += 1
        sk, dk = dk, sk
        si, di = di, si
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for i in range(n):
            keys[i] = sk[i]
            idx[i] = si[i]


@_jit
def tie_groups(keys, n, gend):
    """Write the end positions (exclusive) of runs of equal ``keys[0:n]`` into ``gend``; return
    the number of groups."""
    ng = 0
    for i in range(1, n):
        if keys[i] != keys[i - 1]:
            gend[ng] = i
            ng += 1
    if n > 0:
        gend[ng] = n
        ng += 1
    return ng


@_jit
def _insertion_desc(keys, idx, lo, hi):
    """Insertion sort of keys[lo:hi+1] descending (inclusive bounds), idx alongside."""
    for i in range(lo + 1, hi + 1):
        kv = keys[i]
        iv = idx[i]
        j = i - 1
        while j >= lo and keys[j] < kv:
            keys[j + 1] = keys[j]
            idx[j + 1] = idx[j]
            j -= 1
        keys[j + 1] = kv
        idx[j + 1] = iv


@_jit
def quicksort_desc(keys, idx, n, stack):
    """Unstable in-place sort of keys[0:n] descending with idx alongside; ``stack`` is int64
    scratch of length >= 128 (the smaller side is always handled first: depth <= log2 n).

    Median-of-three pivot and Hoare partition, which splits runs of equal keys evenly (a
    branch-free Lomuto partition measured 25% faster on distinct keys but degrades to O(n^2) on
    heavily tied scores); insertion sort below 25 elements."""
    top = 0
    lo = 0
    hi = n - 1
    while True:
        while hi - lo > 24:
            mid = (lo + hi) >> 1
            a = keys[lo]
            b = keys[mid]
            c = keys[hi]
            if a < b:
                a, b = b, a
            if b < c:
                b = c
                if a < b:
                    b = a
            p = b  # median of the three
            i = lo - 1
            j = hi + 1
            while True:
                i += 1
                while keys[i] > p:
                    i += 1
                j -= 1
                while keys[j] < p:
                    j -= 1
                if i >= j:
                    break
                tk = keys[i]
                keys[i] = keys[j]
                keys[j] = tk
                ti = idx[i]
                idx[i] = idx[j]
                idx[j] = ti
            if j - lo < hi - j:
                stack[top] = j + 1
                stack[top + 1] = hi
                hi = j
            else:
                stack[top] = lo
                stack[top + 1] = j
                lo = j + 1
            top += 2
        _insertion_desc(keys, idx, lo, hi)
        if top == 0:
            return
        top -= 2
        lo = stack[top]
        hi = stack[top + 1]


COUNT_BY_INDEX, COUNT_BY_KEY, COUNT_NO_TIES = 0, 1, 2


@_jit
def counting_ties(tie_mode, doc_mode, doc_int, rows, n, dkey):
    """How :func:`rank_labels_by_counting` can order equal scores in this segment: by position
    (input order, or trec_eval order without docids), by integer docid when every docid of the
    segment is >= 0 with the same number of digits (then numeric order is strcmp order; ``dkey``
    is filled), otherwise not at all (the caller sorts instead)."""
    if tie_mode != TIE_DOCID or doc_mode == DOC_NONE:
        return COUNT_BY_INDEX
    if doc_mode != DOC_INT or n == 0:
        return COUNT_NO_TIES
    lo = doc_int[rows[0]]
    hi = lo
    for i in range(n):
        v = doc_int[rows[i]]
        dkey[i] = v
        lo = min(lo, v)
        hi = max(hi, v)
    if lo >= 0 and _ndigits(lo) == _ndigits(hi):
        return COUNT_BY_KEY
    return COUNT_NO_TIES


@_jit
def rank_labels_by_counting(keys, lraw, n, lab, tie_mode, doc_mode, doc_int, rows, dkey):
    """Ranked labels without sorting: every document with a positive label is placed at its rank
    r_j = #{i : key_i > key_j} + #{i : key_i == key_j and i ranks before j}; every other position
    holds 0 (all that any measure needs of a label <= 0).

    O(n * N+) comparisons in branch-free, vectorisable loops: cheaper than a sort when the number
    N+ of positive labels is small relative to log2(n) * (sort cost / compare cost). Until a
    document is found to share its score the loop counts only greater and equal scores; from the
    first tie on, the tie policy (:func:`counting_ties`: input position, or same-width integer
    docids; for other docids it returns False and the caller sorts) is applied in the same loop."""
    for i in range(n):
        lab[i] = 0
    tie_by = -1  # unknown until the first tie; then every later document takes one fused loop
    for j in range(n):
        lj = lraw[j]
        if lj <= 0:
            continue
        kj = keys[j]
        r = 0
        if tie_by == COUNT_BY_INDEX:
            for i in range(n):
                ki = keys[i]
                r += (ki > kj) | ((ki == kj) & (i < j))
        elif tie_by == COUNT_BY_KEY:
            dj = dkey[j]
            for i in range(n):
                ki = keys[i]
                di = dkey[i]
                r += (ki > kj) | ((ki == kj) & ((di > dj) | ((di == dj) & (i < j))))
        else:
            eq = 0
            for i in range(n):
                r += keys[i] > kj
                eq += keys[i] == kj
            if eq > 1:
                tie_by = counting_ties(tie_mode, doc_mode, doc_int, rows, n, dkey)
                if tie_by == COUNT_NO_TIES:
                    return False
                if tie_by == COUNT_BY_INDEX:
                    for i in range(j):
                        r += keys[i] == kj
                else:
                    dj = dkey[j]
                    for i in range(n):
                        di = dkey[i]
                        r += (keys[i] == kj) & ((di > dj) | ((di == dj) & (i < j)))
        lab[r] = lj
    return True


#: Longest segment :func:`rank_labels_f32` takes: its packed counts need 2 * 16-bit fields.
F32_MAX_N = 32767
#: Up to this many positive documents :func:`rank_labels_f32` loops over them outside (one
#: reduction each); beyond, over the documents outside (the per-document overhead amortised).
F32_ROWWISE_MAX = 16


@_jit
def top_positives(k32, n, pidx, npos, k, tidx, tpk):
    """The positive documents that can rank in the top ``k`` (k < n): those whose float32 score
    is >= tau, where at least k documents score >= tau. Every other positive document then has
    k documents with a greater float32 score, hence a greater float64 score (rounding is
    monotone): its rank is >= k and no measure cut off at k reads it. Writes their positions and
    scores to ``tidx``/``tpk``; returns how many.

    tau is the highest of the grid points max - (max - min) g / 16 (g = 1..16) with at least k
    scores at or above it, each tested by one branch-free, vectorised count."""
    lo = k32[0]
    hi = k32[0]
    for i in range(n):
        lo = min(lo, k32[i])
        hi = max(hi, k32[i])
    tau = lo
    for g in range(1, 16):
        t = np.float32(hi - (hi - lo) * np.float32(g / 16.0))
        c = np.int32(0)
        for i in range(n):
            c += np.int32(k32[i] >= t)
        if c >= k:
            tau = t
            break
    m = 0
    for p in range(npos):
        j = pidx[p]
        v = k32[j]
        tidx[m] = j
        tpk[m] = v
        m += v >= tau
    return m


@_jit
def rank_labels_f32(k32, lraw, pidx, pk, acc, n, npos, lab):
    """Ranked labels by counting in float32 when that is exact; return False (nothing written)
    when it cannot tell.

    ``k32[0:n]`` are the scores rounded to float32, ``pidx[0:npos]`` the positions of the
    documents with a positive label and ``pk`` their float32 scores (scratch, length >= npos + 8).
    For every such document j one vectorised pass over the segment counts, in a packed int32
    ``acc[j] = #{i: k_i == k_j} + 2^16 #{i: k_i > k_j}``. Rounding to float32 is monotone, so when
    no other score rounds to k_j (the first count is 1) the second count is j's exact rank under
    the float64 scores, with no tie to break; otherwise (a tie, or two scores closer than float32
    can tell) the caller ranks the segment exactly. Needs n <= :data:`F32_MAX_N`.

    The loop runs over documents i outside and the positive documents inside, so the inner loop
    is a contiguous, branch-free float32 compare-and-add (8 or 16 lanes per instruction): about
    3x faster than the float64 loop of :func:`rank_labels_by_counting`. With few positive
    documents (<= :data:`F32_ROWWISE_MAX`) the loops swap: one reduction per positive document.
    """
    if npos <= F32_ROWWISE_MAX:
        # few positive documents: one vectorised reduction over the segment per document
        for p in range(npos):
            kj = pk[p]
            eq = np.int32(0)
            gt = np.int32(0)
            for i in range(n):
                eq += np.int32(k32[i] == kj)
                gt += np.int32(k32[i] > kj)
            acc[p] = eq + (gt << 16)
    else:
        npad = (npos + 7) // 8 * 8
        for p in range(npos, npad):
            pk[p] = np.float32(np.inf)
        for p in range(npad):
            acc[p] = 0
        for i in range(n):
            ki = k32[i]
            for p in range(npad):
                acc[p] += np.int32(ki == pk[p]) + (np.int32(ki > pk[p]) << 16)
    for p in range(npos):
        if (acc[p] & 0xFFFF) != 1:
            return False
    for i in range(n):
        lab[i] = 0
    for p in range(npos):
        lab[acc[p] >> 16] = lraw[pidx[p]]
    return True


_FLT_MIN = 1.1754943508222875e-38  # smallest normal float32


@_jit
def tie_keys_f32(keys, bits, rows, n, tie_by, dkey, k32, fp, tb):
    """Inputs of :func:`rank_labels_f32_ties` for one segment; False where it cannot be exact.

    ``fp[i]`` = the low 32 bits of score i's float64 bit pattern. Two doubles that round to the
    same normal, finite float32 lie less than 2^32 apart as bit patterns, so their low 32 bits
    are equal only if the doubles are: (float32 equal and fp equal) <=> float64 equal. Scores
    that round to an infinite or subnormal float32 (other than 0) break that bound: declined.
    ``tb[i]`` = the tie-break key, smaller ranks first: the position i (``COUNT_BY_INDEX``) or
    max(docid) - docid (``COUNT_BY_KEY``: same-width non-negative integer docids, whose numeric
    descending order is trec_eval's strcmp order), which must fit in int32."""
    off = 0
    if tie_by == COUNT_BY_KEY:
        lo = dkey[0]
        hi = lo
        for i in range(n):
            lo = min(lo, dkey[i])
            hi = max(hi, dkey[i])
        if hi - lo > 2147483647:
            return False
        off = hi
    elif tie_by != COUNT_BY_INDEX:
        return False
    bad = 0
    for i in range(n):
        k = keys[i]
        a = abs(k)
        k32[i] = np.float32(k)
        bad += (a > 3.4028234663852886e38) | ((a < _FLT_MIN) & (a > 0.0))
        fp[i] = np.int32(bits[rows[i]] & 0xFFFFFFFF)
        tb[i] = np.int32(off - dkey[i]) if tie_by == COUNT_BY_KEY else np.int32(i)
    return bad == 0


@_jit
def rank_labels_f32_ties(k32, fp, tb, lraw, pidx, pk, pf, pt, acc, n, npos, lab):
    """Like :func:`rank_labels_f32`, for segments with tied scores: one vectorised float32/int32
    pass per document i over the positive documents j counts, packed in int32,
    ``2^16 * #{i ranked before j}`` (greater float32 score, or an exact tie whose tie-break key
    ``tb`` is smaller) ``+ #{i: float32 scores equal but float64 scores not}`` (fingerprints
    ``fp`` differ, see :func:`tie_keys_f32`). Any such collision returns False (the caller ranks
    the segment in float64); otherwise the ranks are exact. Scratch ``pk``/``pf``/``pt``/``acc``
    of length >= npos + 8."""
    npad = (npos + 7) // 8 * 8
    for p in range(npos):
        j = pidx[p]
        pk[p] = k32[j]
        pf[p] = fp[j]
        pt[p] = tb[j]
    for p in range(npos, npad):
        pk[p] = np.float32(np.inf)
        pf[p] = 0
        pt[p] = 0
    for p in range(npad):
        acc[p] = 0
    for i in range(n):
        ki = k32[i]
        fi = fp[i]
        ti = tb[i]
        for p in range(npad):
            eq = ki == pk[p]
            before = (ki > pk[p]) | (eq & (fi == pf[p]) & (ti < pt[p]))
            acc[p] += (np.int32(before) << 16) + np.int32(eq & (fi != pf[p]))
    for p in range(npos):
        if (acc[p] & 0xFFFF) != 0:
            return False
    for i in range(n):
        lab[i] = 0
    for p in range(npos):
        lab[acc[p] >> 16] = lraw[pidx[p]]
    return True


@_jit
def rank_segment(keys, idx, tk, ti, stack, n, tie_mode, rows, doc_mode, doc_int, doc_off,
                 doc_data):
    """Sort keys[0:n] descending; order every run of equal keys by the tie policy (docid
    descending by bytes, else input position) unless ``tie_mode`` is TIE_EXPECTED."""
    quicksort_desc(keys, idx, n, stack)
    if tie_mode == TIE_EXPECTED:
        return
    i = 0
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i]:
            j += 1
        if j - i > 1:
            sort_segment(keys[i:j], idx[i:j], tk, ti, j - i, tie_mode, rows, doc_mode, doc_int,
                         doc_off, doc_data)
        i = j
