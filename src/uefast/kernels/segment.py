"""One ranked segment, start to finish, with no fast paths: the routines a GPU thread runs (one
thread per segment, :mod:`uefast.gpu`) and the CPU driver's last step.

* :func:`segment_measures` -- every requested measure of one segment from its labels in rank order
  (``measure_plain``, or ``measure_tied`` over the tie groups with ``ties="expected"``), nDCG
  divided by the query's IDCG; the CPU driver (:mod:`uefast.kernels.driver`) calls it for every
  segment, whichever path ranked it.
* :func:`rank_by_sorting` -- the labels of one segment in rank order by sorting its float64 scores
  (:func:`~uefast.kernels.ordering.rank_segment`: quicksort, then each run of equal scores in the
  tie policy's order): the CPU driver's exact fallback, without its float32 and network shortcuts.
* :func:`ranked_measures` -- :func:`segment_measures` after finding the tie groups (runs of equal
  scores) where ``ties="expected"`` needs them.
* :func:`segment_values` -- :func:`rank_by_sorting` then :func:`ranked_measures` for segment g,
  working in slices of whole-input scratch arrays (``keys[offsets[g]:offsets[g+1]]`` and so on),
  so that threads of one launch share nothing (the GPU's one-thread-per-segment kernel).
* :func:`net_load`, :func:`net_step`, :func:`net_before`, :func:`net_size` -- the per-slot steps of
  Batcher's bitonic network over one segment (the GPU's one-block-per-segment kernel runs a
  stage's slots on different threads); :func:`rank_by_network` runs the same stages slot after
  slot (CPU emulation and tests).

All of it is plain ``@njit`` code that allocates nothing: Numba compiles the same functions for
the CPU and, called from a ``numba.cuda`` kernel, for NVIDIA GPUs.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.kernels.dispatch import measure_plain, measure_tied
from uefast.kernels.ordering import TIE_EXPECTED, rank_before, rank_segment, tie_groups

__all__ = ["segment_measure", "segment_measures", "rank_by_sorting",
           "segment_values", "STACK_LEN", "net_load",
           "net_before", "net_step", "net_size", "rank_by_network", "ranked_measures"]

#: Length of the quicksort stack each segment needs (:func:`~uefast.kernels.ordering.quicksort_desc`).
STACK_LEN = 128

_jit = nb.njit(cache=True, nogil=True)


@nb.njit(cache=True, nogil=True, inline="always")
def segment_measure(m, q, lab, gend, ng, n, tie_mode, kinds, ks, gtypes, rels, fparams, norms,
                    nrel_q, idcg_q, ioff, ideal, tabs, pos, scratch):
    """Measure m of a segment of query q whose labels in rank order are ``lab[0:n]`` (with
    ``tie_mode`` TIE_EXPECTED: the tie-aware value over the ``ng`` tie groups ending at
    ``gend``). Np and IDCG come from the judged pass (``nrel_q[q, m]``, ``idcg_q[q, m]``, the
    raw IUB of a normalised measure such as nDCG's IDCG, else 1; the value is divided by it, 0
    when it is 0), and so does the ideal ranking ``ideal[ioff[q]:ioff[q+1]]`` (empty unless a
    family needs it); an empty segment scores 0. ``pos``: int64 scratch of length >= n;
    ``scratch``: float64 of length >= n + 1. One measure per call, so that the GPU's threads can
    share a segment's measures."""
    if n == 0:
        return 0.0
    kind = kinds[m]
    idl = ideal[ioff[q]:ioff[q + 1]]
    nrel = nrel_q[q, m]
    if tie_mode == TIE_EXPECTED:
        v = measure_tied(kind, lab, gend, ng, n, ks[m], gtypes[m], rels[m], fparams[m],
                         norms[m], nrel, tabs, scratch, idl)
    else:
        v = measure_plain(kind, lab, n, ks[m], gtypes[m], rels[m], fparams[m], norms[m], nrel,
                          tabs, pos, idl)
    d = idcg_q[q, m]  # 1 unless the family is normalised (nDCG's IDCG, nERR's ERR*)
    if d != 1.0:
        v = v / d if d > 0.0 else 0.0
    return v


@nb.njit(cache=True, nogil=True, inline="always")
def segment_measures(g, q, lab, gend, ng, n, tie_mode, kinds, ks, gtypes, rels, fparams, norms,
                     nrel_q, idcg_q, ioff, ideal, tabs, pos, scratch, out):
    """``out[g, m]`` = :func:`segment_measure` m of segment g (query q) for every measure m.
    Inlined into its callers: a call per segment with some twenty array arguments cost the CPU
    ranking pass ~20% (single thread)."""
    # the body of segment_measure written out: calling it, even inlined at Numba IR level, costs
    # the CPU ranking pass ~15% (benchmarks/RESULTS_core.md); the GPU's per-measure threads call
    # segment_measure, and the GPU tests hold the two equal
    idl = ideal[ioff[q]:ioff[q + 1]]
    for m in range(kinds.shape[0]):
        if n == 0:
            out[g, m] = 0.0
            continue
        kind = kinds[m]
        nrel = nrel_q[q, m]
        if tie_mode == TIE_EXPECTED:
            v = measure_tied(kind, lab, gend, ng, n, ks[m], gtypes[m], rels[m], fparams[m],
                             norms[m], nrel, tabs, scratch, idl)
        else:
            v = measure_plain(kind, lab, n, ks[m], gtypes[m], rels[m], fparams[m], norms[m],
                              nrel, tabs, pos, idl)
        d = idcg_q[q, m]
        if d != 1.0:
            v = v / d if d > 0.0 else 0.0
        out[g, m] = v


@_jit
def rank_by_sorting(perm, has_perm, base, n, labels, scores, tie_mode, doc_mode, doc_int, doc_off,
                    doc_data, keys, idx, tk, ti, rows, stack, lab):
    """Rank rows ``base .. base+n-1`` (through ``perm`` when ``has_perm``) by score descending,
    equal scores by the tie policy: ``lab[r]`` = the label (clamped at 0) ranked r, ``keys[r]``
    its score. Returns the number of NaN scores; when there is one nothing is ranked (NaN has no
    rank: the caller reports it). Scratch: ``keys``, ``tk`` float64, ``idx``, ``ti``, ``rows``
    int64, all of length >= n; ``stack`` int64 of length >= :data:`STACK_LEN`."""
    nan = 0
    for i in range(n):
        r = perm[base + i] if has_perm else base + i
        rows[i] = r
        kv = scores[r]
        keys[i] = kv
        idx[i] = i
        nan += kv != kv
    if nan:
        return nan
    rank_segment(keys, idx, tk, ti, stack, n, tie_mode, rows, doc_mode, doc_int, doc_off, doc_data)
    for i in range(n):
        lab[i] = max(np.int64(labels[rows[idx[i]]]), 0)
    return 0


@_jit
def segment_values(g, offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int,
                   doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q, idcg_q,
                   ioff, ideal, tabs, keys, idx, tk, ti, rows, lab, gend, fscr, stacks, out,
                   nan_out):
    """Segment g (rows ``offsets[g]:offsets[g+1]``, query ``qref[g]``): ``out[g, :]`` by
    :func:`rank_by_sorting` and :func:`segment_measures`, ``nan_out[g]`` = its NaN scores.
    ``keys``, ``tk``, ``idx``, ``ti``, ``rows``, ``lab``, ``gend``: scratch as long as the input
    (segment g uses its own rows' slots); ``fscr`` float64 of length ``len(offsets) - 1`` more
    (segment g uses ``fscr[offsets[g] + g:]``, n + 1 slots); ``stacks`` int64
    ``[n_segments, STACK_LEN]``."""
    base = offsets[g]
    n = offsets[g + 1] - base
    e = base + n
    lab_g = lab[base:e]
    gend_g = gend[base:e]
    nan = rank_by_sorting(perm, has_perm, base, n, labels, scores, tie_mode, doc_mode, doc_int,
                          doc_off, doc_data, keys[base:e], idx[base:e], tk[base:e], ti[base:e],
                          rows[base:e], stacks[g], lab_g)
    nan_out[g] = nan
    if nan:
        return
    # rows[] is free once the labels are in rank order: it is the int64 scratch of the measures
    ranked_measures(g, qref[g], keys[base:e], lab_g, gend_g, n, tie_mode, kinds, ks, gtypes, rels,
                    fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, rows[base:e],
                    fscr[base + g:e + g + 1], out)


@_jit
def ranked_measures(g, q, keys, lab, gend, n, tie_mode, kinds, ks, gtypes, rels, fparams, norms,
                    nrel_q, idcg_q, ioff, ideal, tabs, pos, scratch, out):
    """:func:`segment_measures` of a segment ranked with its scores ``keys[0:n]`` in rank order
    (the tie groups, for ``ties="expected"``, are its runs of equal scores, written to ``gend``;
    ``gend`` and ``pos`` may be one array)."""
    ng = 0
    if tie_mode == TIE_EXPECTED:
        ng = tie_groups(keys, n, gend)
    segment_measures(g, q, lab, gend, ng, n, tie_mode, kinds, ks, gtypes, rels, fparams, norms,
                     nrel_q, idcg_q, ioff, ideal, tabs, pos, scratch, out)


# ------------------------------------------------------------------ one segment by a sorting network
# The GPU ranks a segment of up to NET_MAX documents with one thread block: Batcher's bitonic
# network over the documents' (score, local index) pairs in shared memory, every compare-exchange
# of a stage done by a different thread. These are the per-element steps; the stage loops are in
# the kernel (threads of a block, a barrier after each stage) and in :func:`rank_by_network`
# (the same stages, one element after another, for the CPU and the tests).

@_jit
def net_load(i, base, n, perm, has_perm, scores, sk, si, srow):
    """Slot i of a network of size >= n: document i of the segment (its score ``sk[i]``, local
    index ``si[i]`` = i, input row ``srow[i]``), or padding (``si[i]`` = i >= n). Returns 1 for a
    NaN score, else 0."""
    si[i] = i
    if i >= n:
        sk[i] = 0.0
        return 0
    r = perm[base + i] if has_perm else base + i
    srow[i] = r
    v = scores[r]
    sk[i] = v
    return 1 if v != v else 0


@_jit
def net_before(sk, si, a, b, n, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data):
    """True if the document in slot a ranks strictly before the one in slot b: higher score, or
    equal scores in the tie policy's order (:func:`~uefast.kernels.ordering.rank_before`); every
    document before every padding slot."""
    ia = si[a]
    ib = si[b]
    if ia >= n or ib >= n:
        return ia < n and ib >= n
    return rank_before(sk[a], ia, sk[b], ib, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data)


@_jit
def net_step(i, j, k, sk, si, n, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data):
    """Stage (k, j) of the bitonic network at slot i: slots i and i ^ j (when i ^ j > i) put in
    rank order (i & k == 0) or reverse rank order (else)."""
    p = i ^ j
    if p <= i:
        return
    if (i & k) == 0:
        swap = net_before(sk, si, p, i, n, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data)
    else:
        swap = net_before(sk, si, i, p, n, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data)
    if swap:
        sk[i], sk[p] = sk[p], sk[i]
        si[i], si[p] = si[p], si[i]


@_jit
def net_size(n):
    """Slots of the network for n documents: the least power of two >= max(n, 1)."""
    m = 1
    while m < n:
        m *= 2
    return m


@_jit
def rank_by_network(base, n, perm, has_perm, labels, scores, tie_mode, doc_mode, doc_int, doc_off,
                    doc_data, sk, si, srow, lab):
    """:func:`rank_by_sorting`'s result (``lab[r]`` the label ranked r, ``sk[r]`` its score)
    through the bitonic network, its stages run one slot after another; returns the number of NaN
    scores (nothing ranked then). Scratch ``sk`` float64, ``si``, ``srow`` int64 of length >=
    :func:`net_size` (n)."""
    m = net_size(n)
    nan = 0
    for i in range(m):
        nan += net_load(i, base, n, perm, has_perm, scores, sk, si, srow)
    if nan:
        return nan
    k = 2
    while k <= m:
        j = k // 2
        while j >= 1:
            for i in range(m):
                net_step(i, j, k, sk, si, n, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data)
            j //= 2
        k *= 2
    for i in range(n):
        lab[i] = max(np.int64(labels[srow[si[i]]]), 0)
    return 0
