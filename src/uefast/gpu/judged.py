"""The judged pass on an NVIDIA GPU (numba-cuda): per query, over its judged documents, the
label histogram, the ideal ranking (labels sorted descending), Np, and every measure's IUB, exact
(or the paper's) REB and normaliser (IDCG) -- what :func:`uefast.kernels.driver.judged_pass`
computes on the CPU, once for all systems (it reads no score).

Kernel layout: **one thread block per query, one launch for all queries**.

1. The block's threads stride over the query's judged rows and count each label (clamped at 0)
   into a shared-memory histogram (``cuda.atomic.add``), for labels up to
   :data:`HIST_SLOTS` - 2 (larger label ranges: thread 0 copies the labels and sorts them with
   the CPU engine's heapsort, :func:`uefast.kernels.ordering.heapsort_desc`).
2. Thread 0 turns the histogram into ``geq[v]`` = #labels >= v and the linear / exponential
   gain sums (:func:`hist_prefix`, the CPU pass's order of additions: label values descending).
3. The threads write the sorted labels in parallel: position p holds the largest v with
   ``geq[v] > p`` (:func:`sorted_label`); only the first ``need`` positions the plan reads.
4. Thread m computes measure m with :func:`uefast.kernels.driver.judged_measure` -- the CPU
   pass's own per-measure step (IUB, REB through the measure registry's dispatch), compiled for
   the GPU by Numba: one definition of every measure's IUB and REB. Each measure has its own
   scratch row, so threads never share scratch.

The per-thread steps are plain ``@njit`` code: the kernel runs them on threads, :func:`_emulated`
runs them one after another on the CPU (``UEFAST_CUDA_EMULATE=1``), and
``tests/cuda_simulator_judged.py`` runs the kernel itself in numba's CUDA simulator.
The label histograms come back with the values (:attr:`GpuJudged.hist`).
"""
from __future__ import annotations

import functools

import numba as nb
import numpy as np

from uefast.kernels.driver import judged_measure
from uefast.kernels.metrics import gain
from uefast.kernels.ordering import heapsort_desc

__all__ = ["HIST_SLOTS", "BLOCK_THREADS", "hist_prefix", "sorted_label", "judged_pass_cuda"]

#: Shared-memory histogram slots a block holds: labels 0 .. HIST_SLOTS - 2 are counted there.
HIST_SLOTS = 64
#: Threads per block.
BLOCK_THREADS = 128

_jit = nb.njit(cache=True, nogil=True)


@_jit
def judged_label(jlab, jperm, has_jperm, base, i):
    """Label of judged row i of the query at ``base``, clamped at 0 (labels <= 0 count as 0)."""
    r = jperm[base + i] if has_jperm else base + i
    v = np.int64(jlab[r])
    return v if v > 0 else np.int64(0)


@_jit
def hist_prefix(hist, nhist, exp_gtype, geq):
    """From label counts ``hist[0:nhist]``: ``geq[v]`` = #labels >= v, and the sums of the labels'
    linear and exponential gains ``(gsum_lin, gsum_exp)``, added label value by label value from
    the largest (the order of the CPU pass, so both give the same sums)."""
    gsum_lin = 0.0
    gsum_exp = 0.0
    o = 0
    for v in range(nhist - 1, -1, -1):
        cnt = hist[v]
        if cnt > 0:
            gsum_lin += cnt * gain(v, 0)
            gsum_exp += cnt * gain(v, exp_gtype)
        o += cnt
        geq[v] = o
    return gsum_lin, gsum_exp


@_jit
def sorted_label(p, geq, nhist):
    """The label at position p of the labels sorted descending: the largest v with
    ``geq[v] > p`` (0 if none)."""
    for v in range(nhist - 1, 0, -1):
        if geq[v] > p:
            return v
    return 0


@_jit
def sort_serial(jlab, jperm, has_jperm, base, n, exp_gtype, lab):
    """Labels too wide for the shared histogram: copy the query's clamped labels into ``lab``
    (base-offset), sort them descending (the CPU engine's heapsort) and return the gain sums."""
    gsum_lin = 0.0
    gsum_exp = 0.0
    for i in range(n):
        v = judged_label(jlab, jperm, has_jperm, base, i)
        lab[base + i] = v
        gsum_lin += gain(v, 0)
        gsum_exp += gain(v, exp_gtype)
    heapsort_desc(lab[base:base + n], n)
    return gsum_lin, gsum_exp


@_jit
def measure_step(m, q, base, n, lab, geq, nhist, kinds, ks, gtypes, rels, fparams, norms, paper,
                 normed, n_universe, tabs, gsum_lin, gsum_exp, gend, scratch, out_iub, out_reb,
                 out_nrel, out_idcg):
    """Thread m's step: Np of measure m (from ``geq``, or counted on the sorted labels when the
    histogram was not used, ``nhist`` 0), then its IUB, REB and normaliser
    (:func:`uefast.kernels.driver.judged_measure`) on its own scratch row m."""
    rel = rels[m]
    if nhist > 0:
        nrel = geq[rel] if rel < nhist else 0
    else:
        nrel = 0
        while nrel < n and lab[base + nrel] >= rel:
            nrel += 1
    out_nrel[q, m] = nrel
    if n == 0:
        out_iub[q, m] = 0.0
        out_reb[q, m] = 0.0
        out_idcg[q, m] = 1.0
        return
    iub, reb, idcg = judged_measure(m, lab[base:base + n], n, nrel, kinds, ks, gtypes, rels,
                                    fparams, norms, paper, normed, n_universe, tabs, gsum_lin,
                                    gsum_exp, gend[m, base + q:base + q + n + 1],
                                    scratch[m, base + 2 * q:base + 2 * q + n + 2])
    out_iub[q, m] = iub
    out_reb[q, m] = reb
    out_idcg[q, m] = idcg


@_jit
def _emulated(joff, jperm, has_jperm, jlab, nhist, need, exp_gtype, kinds, ks, gtypes, rels,
              fparams, norms, paper, normed, n_universe, tabs, lab, gend, scratch, hist_out,
              out_iub, out_reb, out_nrel, out_idcg, out_nj):
    """What the kernel computes, every thread's steps run one after another on the CPU."""
    geq = np.zeros(HIST_SLOTS, np.int64)
    hist = np.zeros(HIST_SLOTS, np.int64)
    for q in range(joff.shape[0] - 1):
        base = joff[q]
        n = joff[q + 1] - base
        out_nj[q] = n
        if nhist > 0:
            hist[:] = 0
            for i in range(n):
                hist[judged_label(jlab, jperm, has_jperm, base, i)] += 1
            gl, ge = hist_prefix(hist, nhist, exp_gtype, geq)
            hist_out[q, :nhist] = hist[:nhist]
            fill = n if need < 0 else min(n, need)
            for p in range(fill):
                lab[base + p] = sorted_label(p, geq, nhist)
        else:
            gl, ge = sort_serial(jlab, jperm, has_jperm, base, n, exp_gtype, lab)
        for m in range(kinds.shape[0]):
            measure_step(m, q, base, n, lab, geq, nhist, kinds, ks, gtypes, rels, fparams,
                         norms, paper, normed, n_universe, tabs, gl, ge, gend, scratch, out_iub,
                         out_reb, out_nrel, out_idcg)


#: ``numba.cuda``, imported at first use (:func:`_kernel`); a module global, where numba's CUDA
#: simulator looks for it.
cuda = None


def _judged_kernel(joff, jperm, has_jperm, jlab, nhist, need, exp_gtype, kinds, ks, gtypes, rels,
                   fparams, norms, paper, normed, n_universe, tabs, lab, gend, scratch, hist_out,
                   out_iub, out_reb, out_nrel, out_idcg, out_nj):
    """Thread block q: query q's histogram (shared atomics), prefix and gain sums (thread 0),
    sorted labels (all threads), then thread m measure m (see the module docstring)."""
    q = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    hist = cuda.shared.array(HIST_SLOTS, nb.int64)
    geq = cuda.shared.array(HIST_SLOTS, nb.int64)
    gs = cuda.shared.array(2, nb.float64)
    base = joff[q]
    n = joff[q + 1] - base
    for v in range(t, HIST_SLOTS, nt):
        hist[v] = 0
    cuda.syncthreads()
    if nhist > 0:
        for i in range(t, n, nt):
            cuda.atomic.add(hist, judged_label(jlab, jperm, has_jperm, base, i), 1)
    cuda.syncthreads()
    if t == 0:
        out_nj[q] = n
        if nhist > 0:
            gl, ge = hist_prefix(hist, nhist, exp_gtype, geq)
        else:
            gl, ge = sort_serial(jlab, jperm, has_jperm, base, n, exp_gtype, lab)
        gs[0] = gl
        gs[1] = ge
    cuda.syncthreads()
    if nhist > 0:
        for v in range(t, nhist, nt):
            hist_out[q, v] = hist[v]
        fill = n if need < 0 else min(n, need)
        for p in range(t, fill, nt):
            lab[base + p] = sorted_label(p, geq, nhist)
    cuda.syncthreads()
    for m in range(t, kinds.shape[0], nt):
        measure_step(m, q, base, n, lab, geq, nhist, kinds, ks, gtypes, rels, fparams, norms,
                     paper, normed, n_universe, tabs, gs[0], gs[1], gend, scratch, out_iub,
                     out_reb, out_nrel, out_idcg)


@functools.cache
def _kernel():
    """The judged-pass kernel, compiled lazily for the argument types it meets."""
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_judged_kernel)


class GpuJudged:
    """The judged pass's results (on the host, or in GPU memory with ``to_host=False``): per
    query and measure ``iub``, ``reb``, ``nrel``, ``idcg``; per query ``n_judged``; ``ideal``
    (the sorted labels, base-offset like the judged rows; positions beyond what the plan reads
    unspecified) and ``hist[q, v]`` (judged labels of value v, labels <= 0 as 0; zero columns
    when the label range is too wide for the histogram)."""

    __slots__ = ("iub", "reb", "nrel", "idcg", "n_judged", "ideal", "hist")

    def __init__(self, iub, reb, nrel, idcg, n_judged, ideal, hist):
        self.iub, self.reb, self.nrel, self.idcg = iub, reb, nrel, idcg
        self.n_judged, self.ideal, self.hist = n_judged, ideal, hist


def judged_pass_cuda(joff, jperm, has_jperm, jlab, max_label, kinds, ks, gtypes, rels, fparams,
                     norms, paper, normed, need, exp_gtype, n_universe, tabs, emulate: bool,
                     mem=None, to_host: bool = True) -> GpuJudged:
    """The judged pass of :func:`uefast.kernels.driver.judged_pass` (same arguments, less the
    chunking and the output arrays) on the GPU, or emulated on the CPU (``emulate``).
    ``jperm`` and ``jlab`` may already be in GPU memory (read in place).
    ``mem``: the call's :class:`uefast.gpu.memory.DeviceMemory` (None: a new one). Values equal
    the CPU pass's up to floating-point contraction on the GPU (tests: within 1e-12); Np,
    ``n_judged`` and the sorted labels exactly. ``to_host`` False: the results stay in GPU
    memory (device arrays; host arrays when emulated)."""
    joff = np.asarray(joff, np.int64)
    nq = len(joff) - 1
    nm = len(kinds)
    ntot = int(joff[-1]) if nq >= 0 and len(joff) else 0
    nhist = int(max(max_label, 0)) + 2
    if nhist > HIST_SLOTS:
        nhist = 0  # thread 0 sorts (heapsort), Np counted on the sorted labels
    from uefast.gpu.memory import is_device_array

    if not has_jperm:
        jperm = np.zeros(1, np.int64)
    elif not is_device_array(jperm):
        jperm = np.asarray(jperm, np.int64)
    host = (joff, jperm,
            bool(has_jperm), jlab, nhist, int(need), int(exp_gtype), kinds, ks, gtypes, rels,
            fparams, norms, paper, normed, int(n_universe), tabs)
    shapes = [((max(ntot, 1),), np.int64), ((nm, ntot + nq + 1), np.int64),
              ((nm, ntot + 2 * nq + 2), np.float64), ((nq, max(nhist, 1)), np.int64),
              ((nq, nm), np.float64), ((nq, nm), np.float64), ((nq, nm), np.int64),
              ((nq, nm), np.float64), ((nq,), np.int64)]
    if emulate:
        outs = [np.zeros(s, d) for s, d in shapes]
        _emulated(*[np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in host],
                  *outs)
    else:
        if mem is None:
            from uefast.gpu.memory import DeviceMemory

            mem = DeviceMemory()
        args = [mem.upload(a) if isinstance(a, np.ndarray) else a for a in host]
        outs = [mem.zeros(s, d) for s, d in shapes]
        if nq:
            mem.sync()
            _kernel()[nq, BLOCK_THREADS](*args, *outs)
        if to_host:
            outs = [mem.to_host(d) for d in outs]
    lab, _, _, hist, iub, reb, nrel, idcg, nj = outs
    return GpuJudged(iub, reb, nrel, idcg, nj, lab[:ntot], hist)
