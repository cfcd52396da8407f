"""Rank by counting on an NVIDIA GPU (numba-cuda): the default kernel of ``backend="cuda"``.

Only documents with a positive label need a position: every other label adds nothing to any
measure (the CPU engine's :mod:`uefast.kernels.counting` exploits the same fact). For such a
document j of a segment (one system's ranking of one query)

    rank_j = #{i : key_i > key_j} + #{i : key_i == key_j and tb_i < tb_j}          (0-based)

with ``key`` the order-preserving integer key of the score and ``tb`` the tie-break key of the
tie policy (:mod:`uefast.gpu.keys`: position for input order, docid order for trec_eval's): a
branch-free count, exact because integer keys compare exactly, and a total order, so every
positive label lands in its own slot of the zeroed ranked-label array. With ``ties="expected"``
no tie-break exists; the count gives j's tie group instead -- it starts at
``gt_j = #{key_i > key_j}`` and holds ``eq_j = #{key_i == key_j}`` documents -- and j takes slot
``gt_j + #{i < j : key_i == key_j, label_i > 0}`` in it. The group boundaries of the positive
documents are marked; the stretches between them hold only labels <= 0 and become one group
each (every tie-aware measure is an expectation over the orders inside groups, and permuting
zero labels changes no term, so merging such groups leaves each value unchanged).

Kernel layout: **one thread block per (system, segment) pair, one launch for all of them**; the
block's threads share out the positive documents (each counts over the whole segment, whose keys
every thread reads at the same index: broadcast loads), then, after a barrier, the measures
(thread m computes measure m with the CPU engine's own routine,
:func:`uefast.kernels.segment.segment_measure`, compiled for the GPU by Numba: one definition
per measure). Blocks are :data:`WARP_THREADS` threads (one warp) when every segment has at most
:data:`WARP_MAX` documents, else :data:`BLOCK_THREADS`. A segment whose counting work
n x (positive documents) exceeds :data:`COUNT_MAX_WORK` goes to the sorting kernel of
:mod:`uefast.gpu.ranking` instead, in the same call.

The per-thread steps (:func:`place_positive`, :func:`group_ends`) are plain ``@njit`` code: the
kernel runs them on threads, :func:`_emulated` runs them one after another on the CPU
(``UEFAST_CUDA_EMULATE=1``), and ``tests/cuda_simulator_counting.py`` runs the kernel itself in
numba's CUDA simulator.
"""
from __future__ import annotations

import functools

import numba as nb
import numpy as np

from uefast.gpu.keys import score_keys, segment_rows, tie_breaks
from uefast.kernels.ordering import TIE_EXPECTED
from uefast.kernels.segment import segment_measure

__all__ = ["BLOCK_THREADS", "COUNT_MAX_WORK", "WARP_MAX", "WARP_THREADS", "CountingInputs",
           "counting_inputs", "system_invariants", "place_positive", "group_ends", "ranked_labels",
           "rank_values_counting"]

#: Threads per block when every segment has at most :data:`WARP_MAX` documents (one warp).
WARP_THREADS = 32
#: Longest segment that leaves the launch at one warp per block.
WARP_MAX = 256
#: Threads per block otherwise.
BLOCK_THREADS = 128
#: Largest n x (positive documents) of a segment ranked by counting; beyond, the sorting kernel
#: (:mod:`uefast.gpu.ranking`) ranks it. To be tuned on hardware (``benchmarks/gpu_phases.py``).
COUNT_MAX_WORK = 1 << 24

_jit = nb.njit(cache=True, nogil=True)


@_jit
def place_positive(j, base, g, n, keys, tb, labs, tie_mode, lab, mark):
    """Document j of the segment at ``base`` (segment g, n documents): when its label is
    positive, write it at its rank (``lab[base + rank]``); with ``ties="expected"`` at its slot in
    its tie group, marking the group's start and end in ``mark[base + g + ...]`` (n + 1 slots a
    segment). Branch-free counting loop over the segment (see the module docstring)."""
    lj = labs[base + j]
    if lj <= 0:
        return
    kj = keys[base + j]
    if tie_mode == TIE_EXPECTED:
        gt = 0
        eq = 0
        pb = 0
        for i in range(n):
            ki = keys[base + i]
            e = ki == kj
            gt += ki > kj
            eq += e
            pb += e & (labs[base + i] > 0) & (i < j)
        lab[base + gt + pb] = lj
        mark[base + g + gt] = 1
        mark[base + g + gt + eq] = 1
    else:
        tj = tb[base + j]
        r = 0
        for i in range(n):
            ki = keys[base + i]
            r += (ki > kj) | ((ki == kj) & (tb[base + i] < tj))
        lab[base + r] = lj


@_jit
def group_ends(base, g, n, mark, gend):
    """The tie groups of a segment placed with ``ties="expected"``: ``gend[base + 0 .. ng-1]`` =
    the marked group ends (exclusive) in rank order, n last; returns ng."""
    ng = 0
    for p in range(1, n + 1):
        if mark[base + g + p] != 0 or p == n:
            gend[base + ng] = p
            ng += 1
    return ng


class CountingInputs:
    """What the counting kernel reads, in segment order (position p of the concatenated
    segments): ``keys`` (int32 or int64, :func:`uefast.gpu.keys.score_keys`), ``tb`` (int32
    tie-break keys), ``labs`` (int32 labels, negative ones as 0), plus per-segment ``npos``
    (positive documents)."""

    __slots__ = ("keys", "tb", "labs", "npos")

    def __init__(self, keys, tb, labs, npos):
        self.keys, self.tb, self.labs, self.npos = keys, tb, labs, npos


def counting_inputs(offsets, perm, has_perm, labels, scores, tie_mode, doc_mode, doc_int, doc_off,
                    doc_data) -> CountingInputs:
    """Gather scores and labels into segment order and build the keys (host side, NumPy and the
    CPU engine's tie order). Scores must be free of NaN."""
    rows, tb, labs, npos = system_invariants(offsets, perm, has_perm, labels, tie_mode, doc_mode,
                                             doc_int, doc_off, doc_data)
    return CountingInputs(score_keys(scores, rows), tb, labs, npos)


def system_invariants(offsets, perm, has_perm, labels, tie_mode, doc_mode, doc_int, doc_off,
                      doc_data):
    """What the counting kernel reads that no score changes, the same for every system ranked
    on one grouping: ``(rows, tb, labs, npos)`` (see :class:`CountingInputs`; ``rows``: the input
    row of each position, :func:`uefast.gpu.keys.segment_rows`)."""
    offsets = np.asarray(offsets, np.int64)
    rows = segment_rows(offsets, perm, has_perm)
    labs = np.maximum(np.asarray(labels)[rows], 0).astype(np.int32)
    if tie_mode == TIE_EXPECTED:
        tb = np.zeros(1, np.int32)
    else:
        tb = tie_breaks(offsets, rows, tie_mode, doc_mode, doc_int, doc_off, doc_data)
    pos_c = np.concatenate(([0], np.cumsum(labs > 0, dtype=np.int64)))
    npos = pos_c[offsets[1:]] - pos_c[offsets[:-1]]
    return rows, tb, labs, npos


def _scratch_slots(kinds: np.ndarray, tie_mode: int) -> np.ndarray:
    """Scratch row of each measure: one per measure, so that threads computing different
    measures of a segment never share scratch, whichever families write it."""
    return np.arange(len(kinds), dtype=np.int64)


@_jit
def _emulated(seg_ids, offsets, keys, tb, labs, qref, tie_mode, kinds, ks, gtypes, rels, fparams,
              norms, nrel_q, idcg_q, ioff, ideal, tabs, slots, lab, mark, gend, iscr, fscr, out):
    """What the kernel computes, every thread's steps run one after another on the CPU."""
    for g in seg_ids:
        base = offsets[g]
        n = offsets[g + 1] - base
        for i in range(n):
            lab[base + i] = 0
        for i in range(n + 1):
            mark[base + g + i] = 0
        for j in range(n):
            place_positive(j, base, g, n, keys, tb, labs, tie_mode, lab, mark)
        ng = 0
        if tie_mode == TIE_EXPECTED:
            ng = group_ends(base, g, n, mark, gend)
        for m in range(kinds.shape[0]):
            s = slots[m]
            out[g, m] = segment_measure(m, qref[g], lab[base:base + n], gend[base:base + n], ng,
                                        n, tie_mode, kinds, ks, gtypes, rels, fparams, norms,
                                        nrel_q, idcg_q, ioff, ideal, tabs, iscr[s, base:base + n],
                                        fscr[s, base + g:base + g + n + 1])


#: ``numba.cuda``, imported at first use (:func:`_kernel`); a module global, where numba's CUDA
#: simulator looks for it.
cuda = None


def _count_kernel(seg_ids, offsets, keys, tb, labs, qref, tie_mode, kinds, ks, gtypes, rels,
                  fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, slots, lab, mark, gend, iscr,
                  fscr, out):
    """Thread block b: segment ``seg_ids[b]`` -- zero, place the positive documents (threads
    striding over the segment), find the tie groups (thread 0, ``ties="expected"``), then
    thread m computes measure m (striding when there are more measures than threads)."""
    g = seg_ids[cuda.blockIdx.x]
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    ngs = cuda.shared.array(1, nb.int64)
    base = offsets[g]
    n = offsets[g + 1] - base
    for i in range(t, n, nt):
        lab[base + i] = 0
    for i in range(t, n + 1, nt):
        mark[base + g + i] = 0
    cuda.syncthreads()
    for j in range(t, n, nt):
        place_positive(j, base, g, n, keys, tb, labs, tie_mode, lab, mark)
    cuda.syncthreads()
    if t == 0:
        ngs[0] = 0
        if tie_mode == TIE_EXPECTED:
            ngs[0] = group_ends(base, g, n, mark, gend)
    cuda.syncthreads()
    ng = ngs[0]
    for m in range(t, kinds.shape[0], nt):
        s = slots[m]
        out[g, m] = segment_measure(m, qref[g], lab[base:base + n], gend[base:base + n], ng, n,
                                    tie_mode, kinds, ks, gtypes, rels, fparams, norms, nrel_q,
                                    idcg_q, ioff, ideal, tabs, iscr[s, base:base + n],
                                    fscr[s, base + g:base + g + n + 1])


@functools.cache
def _kernel():
    """The counting kernel, compiled lazily for the argument types it meets."""
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_count_kernel)


def _threads_per_block(sizes: np.ndarray) -> int:
    return WARP_THREADS if len(sizes) == 0 or int(sizes.max()) <= WARP_MAX else BLOCK_THREADS


def counting_scratch(offsets, kinds, tie_mode, empty):
    """``(slots, (lab, mark, gend, iscr, fscr))``: each measure's scratch row and the kernel's
    scratch arrays for the grouping ``offsets``, allocated by ``empty(shape, dtype)``; the same
    for every system ranked on that grouping (the kernel zeroes what it reads)."""
    n = max(int(offsets[-1]), 1)
    nseg = len(offsets) - 1
    slots = _scratch_slots(kinds, tie_mode)
    nslot = max(int(slots.max(initial=0)) + 1, 1)
    expected = tie_mode == TIE_EXPECTED
    return slots, (empty(n, np.int64), empty(n + nseg + 1, np.int8),
                   empty(n if expected else 1, np.int64),
                   empty((nslot, n if not expected else 1), np.int64),
                   empty((nslot, n + nseg + 1 if expected else 1), np.float64))


def launch_counting(seg_ids, offsets, ci: CountingInputs, qref, tie_mode, plan_arrays, nrel_q,
                    idcg_q, ioff, ideal, tabs, out, emulate: bool, mem=None):
    """Rank and score segments ``seg_ids`` by counting into ``out`` (device or host array);
    returns the ranked-label scratch (``lab``, segment order) for the tests. ``mem``: the call's
    :class:`uefast.gpu.memory.DeviceMemory` (None: host arrays, ``emulate``)."""
    empty = np.empty if mem is None else mem.empty
    to_dev = (lambda a: a) if mem is None else mem.upload
    slots, (lab, mark, gend, iscr, fscr) = counting_scratch(offsets, plan_arrays[0], tie_mode,
                                                            empty)
    args = [to_dev(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in
            (seg_ids, offsets, ci.keys, ci.tb, ci.labs, qref, int(tie_mode), *plan_arrays,
             nrel_q, idcg_q, ioff, ideal, tabs, slots)]
    if emulate:
        _emulated(*args, lab, mark, gend, iscr, fscr, out)
    elif len(seg_ids):
        mem.sync()  # uploads done before the kernel reads them
        tpb = _threads_per_block(np.diff(offsets))
        _kernel()[len(seg_ids), tpb](*args, lab, mark, gend, iscr, fscr, out)
    return lab


def ranked_labels(offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int,
                  doc_off, doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal, tabs, emulate: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(values, lab)``: every segment ranked by counting (no sorting fallback), with the ranked
    labels (segment order, label <= 0 as 0) -- what the tests compare rank by rank with the CPU
    engine's sort."""
    offsets = np.asarray(offsets, np.int64)
    ci = counting_inputs(offsets, perm, has_perm, labels, scores, tie_mode, doc_mode, doc_int,
                         doc_off, doc_data)
    seg = np.arange(len(offsets) - 1, dtype=np.int64)
    out = np.zeros((len(seg), len(plan_arrays[0])))
    if emulate:
        lab = launch_counting(seg, offsets, ci, qref, tie_mode, plan_arrays, nrel_q, idcg_q, ioff,
                              ideal, tabs,
                              out, True)
        return out, lab
    from uefast.gpu.memory import DeviceMemory

    mem = DeviceMemory()
    d_out = mem.empty(out.shape, np.float64)
    d_lab = launch_counting(seg, offsets, ci, qref, tie_mode, plan_arrays, nrel_q, idcg_q, ioff,
                              ideal, tabs,
                            d_out, False, mem=mem)
    return mem.to_host(d_out), mem.to_host(d_lab)


def split_segments(offsets: np.ndarray, npos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(counted, sorted)`` segment ids: counting where n x npos <= :data:`COUNT_MAX_WORK`."""
    sizes = np.diff(np.asarray(offsets, np.int64))
    ok = sizes * npos <= COUNT_MAX_WORK
    return np.flatnonzero(ok).astype(np.int64), np.flatnonzero(~ok).astype(np.int64)


def rank_values_counting(offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode,
                         doc_int, doc_off, doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal,
                         tabs, emulate: bool, sort_segments) -> tuple[np.ndarray, np.ndarray]:
    """``(values, nan)`` as :func:`uefast.gpu.ranking.rank_values_cuda` returns them, ranked by
    counting; ``sort_segments(ids, out)`` ranks the segments too costly to count (the sorting
    kernel) into the same ``out``. NaN scores are counted on the host (NaN has no key); a
    segment with one is not ranked (its values unspecified, as the CPU engine's)."""
    offsets = np.asarray(offsets, np.int64)
    nseg = len(offsets) - 1
    nm = len(plan_arrays[0])
    rows = segment_rows(offsets, perm, has_perm)
    isnan = np.isnan(np.asarray(scores, np.float64)[rows])
    nan_c = np.concatenate(([0], np.cumsum(isnan, dtype=np.int64)))
    nan = nan_c[offsets[1:]] - nan_c[offsets[:-1]]
    if nan.any():
        return np.zeros((nseg, nm)), nan
    ci = counting_inputs(offsets, perm, has_perm, labels, scores, tie_mode, doc_mode, doc_int,
                         doc_off, doc_data)
    counted, sorted_ = split_segments(offsets, ci.npos)
    if emulate:
        out = np.zeros((nseg, nm))
        launch_counting(counted, offsets, ci, qref, tie_mode, plan_arrays, nrel_q, idcg_q, ioff,
                        ideal, tabs,
                        out, True)
    else:
        from uefast.gpu.memory import DeviceMemory

        mem = DeviceMemory()
        d_out = mem.empty((nseg, nm), np.float64)
        launch_counting(counted, offsets, ci, qref, tie_mode, plan_arrays, nrel_q, idcg_q, ioff,
                        ideal, tabs,
                        d_out, False, mem=mem)
        out = mem.to_host(d_out)
    if len(sorted_):
        sort_segments(sorted_, out)
    return out, nan
