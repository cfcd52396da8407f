"""Ranking one query segment without sorting: each document with a positive label is placed at
its rank r_j = #{documents ranked before j}, counted in branch-free, vectorised loops.

Only positive labels need a position (every other label contributes nothing to any measure), so
counting costs O(n * N+) comparisons against a sort's O(n log n), with no data-dependent branches.
Segments of up to 512 documents with many positive labels go to the sorting networks of
:mod:`uefast.kernels.sortnet` first (cheaper there); what they decline comes here. The
routines, tried in this order by the driver (each declines what it cannot rank exactly):

* :func:`rank_labels_f32` -- float32 scores, packed int32 counters of greater and equal scores
  (vectorised: up to 16 lanes per AVX-512 instruction); declines a segment where a positive document shares its
  float32 value. :func:`top_positives` first narrows it to the documents that can reach the
  top k when every measure has a cutoff.
* :func:`rank_labels_f32_ties` -- the same for tied scores: exact ties told apart from float32
  collisions by a 32-bit fingerprint of the float64 bits (:func:`tie_keys_f32`), broken by
  position or by same-width integer docid.
* :func:`rank_labels_by_counting` -- float64 scores with the tie policy in the loop (else the
  caller sorts, :func:`uefast.kernels.ordering.rank_segment`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.kernels.ordering import DOC_INT, DOC_NONE, TIE_DOCID, _ndigits

__all__ = ["COUNT_BY_INDEX", "COUNT_BY_KEY", "COUNT_NO_TIES", "F32_MAX_N", "F32_ROWWISE_MAX",
           "counting_ties", "tie_order", "rank_labels_by_counting", "top_positives",
           "rank_labels_f32", "tie_keys_f32", "rank_labels_f32_ties"]

_jit = nb.njit(cache=True, nogil=True)

COUNT_BY_INDEX, COUNT_BY_KEY, COUNT_NO_TIES = 0, 1, 2


@_jit
def _numeric_is_strcmp(lo, hi):
    """True when integers in [lo, hi] compare numerically as their decimal strings do (strcmp):
    all >= 0 with the same number of digits."""
    return lo >= 0 and _ndigits(lo) == _ndigits(hi)


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
    if _numeric_is_strcmp(lo, hi):
        return COUNT_BY_KEY
    return COUNT_NO_TIES


@_jit
def tie_order(tie_mode, doc_mode, doc_int, perm, has_perm, base, n, rising):
    """How the tie policy orders equal scores in the segment of rows ``base .. base+n-1``
    (through ``perm`` when ``has_perm``), as a direction in position: 1 -- ascending position
    (input order; trec_eval's order without docids; or same-width non-negative integer docids,
    whose numeric order is trec_eval's strcmp order, falling with position), -1 -- descending
    position (such docids rising with position), 0 -- neither (other docids, or docids not
    monotone in position). ``rising``: the docids are already known to rise strictly (then only
    their width is checked). For :func:`uefast.kernels.sortnet.rank_labels_sortnet_groups`."""
    if tie_mode != TIE_DOCID or doc_mode == DOC_NONE:
        return 1
    if doc_mode != DOC_INT or n == 0:
        return 0
    prev = doc_int[perm[base] if has_perm else base]
    if rising:  # the first docid is the least, the last the greatest
        last = doc_int[perm[base + n - 1] if has_perm else base + n - 1]
        return -1 if _numeric_is_strcmp(prev, last) else 0
    lo = prev
    hi = prev
    up = 0
    down = 0
    for i in range(1, n):
        v = doc_int[perm[base + i] if has_perm else base + i]
        up += v > prev
        down += v < prev
        lo = min(lo, v)
        hi = max(hi, v)
        prev = v
    if not _numeric_is_strcmp(lo, hi):
        return 0
    if up == 0:
        return 1
    if down == 0:
        return -1
    return 0


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
def _place_counted(acc, npos, expect, lraw, pidx, n, lab):
    """From packed counts ``acc[p] = low + 2^16 rank``: False if any low field differs from
    ``expect``; else ``lab[0:n]`` = 0 with each positive document's label at its rank."""
    for p in range(npos):
        if (acc[p] & 0xFFFF) != expect:
            return False
    for i in range(n):
        lab[i] = 0
    for p in range(npos):
        lab[acc[p] >> 16] = lraw[pidx[p]]
    return True


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
    is a contiguous, branch-free float32 compare-and-add: about 3x faster than the float64 loop
    of :func:`rank_labels_by_counting`. (As compiled for AVX-512 by LLVM: 64 positive documents
    per iteration in four 512-bit registers, the rest 8 at a time in 256-bit ones; padding the
    list to a multiple of 64, or blocking it by 16, measured no faster.)
    With few positive documents (<= :data:`F32_ROWWISE_MAX`) the loops swap: one reduction per
    positive document.
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
    return _place_counted(acc, npos, 1, lraw, pidx, n, lab)


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
        if np.uint64(hi) - np.uint64(lo) > np.uint64(2147483647):  # no int64 wrap-around
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
    return _place_counted(acc, npos, 0, lraw, pidx, n, lab)
