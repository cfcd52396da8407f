"""The ranking pass on an NVIDIA GPU (numba-cuda): :func:`rank_values_cuda`, and the older sort
kernels.

:func:`rank_values_cuda` hands the work to the rank-by-counting kernel
(:mod:`uefast.gpu.counting`) unless ``UEFAST_CUDA_KERNEL=sort``; the sort kernels below rank
what that kernel declines (segments too costly to count) and everything under ``sort``.

Sort kernels, host side: copy the grouping, labels, scores, docids (for trec_eval's tie order) and the judged
pass's Np and IDCG to the device, launch, copy the values back.

By default every segment (one system's ranking of one query) is ranked by one thread with the CPU
engine's exact quicksort in device memory (the ``threads`` kernel,
:func:`uefast.kernels.segment.segment_values`; 64 bytes of scratch per input row, 1 KiB per
segment). With ``UEFAST_CUDA_NET_MAX=N`` (N <= 1,024)
a segment of at most N documents is ranked by one thread block instead (the ``network`` kernel):
Batcher's bitonic network over (score, position) pairs in shared memory, compare-exchanges in the
tie policy's order (:func:`uefast.kernels.segment.net_step`), then one thread computes every
measure (:func:`uefast.kernels.segment.ranked_measures`). Both kernels ran on an H100
(2026-11-23) and matched the CPU engine; end to end both were slower than 16 CPU cores.

Every routine is the CPU engine's ``@njit`` code compiled by Numba for the GPU. Values equal the
CPU backend's up to floating-point contraction (the GPU may fuse a*b+c) and, with
``ties="expected"``, the order of additions inside a tie group: the tests allow 1e-12.

With ``UEFAST_CUDA_EMULATE=1`` the same host code runs, and the same per-segment routines are
called by CPU loops (:func:`_emulated_network`: the network's stages slot after slot;
:func:`_emulated_threads`) instead of the two GPU launches. The kernels themselves also run in
numba's CUDA simulator (``tests/cuda_simulator_run.py``).
"""
from __future__ import annotations

import functools
import os

import numba as nb
import numpy as np

from uefast.kernels.segment import (
    STACK_LEN,
    net_load,
    net_size,
    net_step,
    rank_by_network,
    ranked_measures,
    segment_values,
)

__all__ = ["EMULATE_ENV", "KERNEL_ENV", "kernel_choice", "cuda_available",
           "cuda_unavailable_reason", "rank_values_cuda", "rank_systems_cuda"]

#: Environment variable: "1" runs the CUDA backend's per-segment body on the CPU (tests, debugging).
EMULATE_ENV = "UEFAST_CUDA_EMULATE"
_THREADS_PER_BLOCK = 128
#: Shared-memory slots of the ``network`` kernel (5 arrays of 8-byte values: 40 KiB a block).
NET_SLOTS = 1024
_NET_SLOTS_1 = NET_SLOTS + 1  # a shared array's length must be a constant, not an expression
#: Longest segment ranked by a block's network (at most :data:`NET_SLOTS`); longer ones take the
#: one-thread quicksort. Default 0 (every segment by the one-thread kernel, the faster of the two
#: on an H100); the environment variable ``UEFAST_CUDA_NET_MAX`` (e.g. 1024) turns the network
#: kernel on. Both are tested emulated and on hardware (the tests set this to 8 and 1024).
NET_MAX: int | None = None  # None: from UEFAST_CUDA_NET_MAX at each call (unset: 0)
NET_MAX_ENV = "UEFAST_CUDA_NET_MAX"


def _net_max() -> int:
    if NET_MAX is not None:
        return min(int(NET_MAX), NET_SLOTS)
    raw = os.environ.get(NET_MAX_ENV, "0")
    try:
        v = int(raw)
    except ValueError:
        v = -1
    if v < 0:
        raise ValueError(f"environment variable {NET_MAX_ENV} must be an integer >= 0, got {raw!r}")
    return min(v, NET_SLOTS)
_NET_THREADS = 128


#: Environment variable choosing the CUDA ranking kernel: ``counting`` (default; rank by counting,
#: :mod:`uefast.gpu.counting`) or ``sort`` (the one-thread quicksort / block network below).
KERNEL_ENV = "UEFAST_CUDA_KERNEL"
KERNELS = ("counting", "sort")


def kernel_choice() -> str:
    """The CUDA ranking kernel in use (:data:`KERNEL_ENV`, default ``sort``: the kernels that
    ran on GPU hardware; ``counting`` has run only in emulation and numba's CUDA simulator so far,
    README says so, and becomes the default once a device check has run it)."""
    v = os.environ.get(KERNEL_ENV, "sort")
    if v not in KERNELS:
        raise ValueError(f"environment variable {KERNEL_ENV} must be one of {KERNELS}, got {v!r}")
    return v


def _emulating() -> bool:
    return os.environ.get(EMULATE_ENV, "") == "1"


def cuda_unavailable_reason() -> str | None:
    """Why ``backend="cuda"`` cannot run here (None when it can): numba-cuda missing, or no
    usable NVIDIA GPU / driver."""
    return None if _emulating() else _device_reason()


@functools.cache
def _device_reason() -> str | None:
    try:
        from numba import cuda
    except Exception as e:  # numba without its CUDA target
        return f"numba.cuda cannot be imported ({e}); install the gpu extra: pip install 'uefast[gpu]'"
    try:
        if not cuda.is_available():
            return ("numba.cuda finds no usable NVIDIA GPU / CUDA driver (numba.cuda.is_available() "
                    "is False)")
    except Exception as e:
        return f"numba.cuda could not query the GPU ({e})"
    try:
        _probe_compile(cuda)
    except Exception as e:  # e.g. numba-cuda 0.30.x with numpy >= 2.5 (np.row_stack removed)
        return _compile_failure(e)
    return None


def _probe_kernel(a):
    a[0] = 1


def _probe_compile(cuda) -> None:
    """Compile a one-line kernel for the GPU: loads numba-cuda's whole typing registry, which is
    where a numba-cuda / numpy mismatch fails, so that it fails here with a reason rather than
    inside the first real launch."""
    cuda.jit("void(int64[:])")(_probe_kernel)


def _compile_failure(e: Exception) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ncv = version("numba-cuda")
    except PackageNotFoundError:
        ncv = "(version unknown)"
    msg = (f"numba-cuda cannot compile a kernel here ({type(e).__name__}: {e}); numba-cuda {ncv}, "
           f"numba {nb.__version__}, numpy {np.__version__}")
    if "row_stack" in str(e):
        msg += ("; numba-cuda 0.30.x does not import with numpy >= 2.5, which removed np.row_stack: "
                "install numpy<2.5 or a numba-cuda release that supports this numpy")
    return msg


def cuda_available() -> bool:
    """True when ``evaluate(..., backend="cuda")`` can run (or is emulated, ``UEFAST_CUDA_EMULATE=1``)."""
    return cuda_unavailable_reason() is None


#: ``numba.cuda``, imported at first use (:func:`_kernels`). The kernels name it as a module global,
#: which is where numba's CUDA simulator looks for it (tests run them there).
cuda = None


def _network(seg_ids, offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int,
             doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, out,
             nan_out):
    """The ``network`` kernel: thread block b ranks segment ``seg_ids[b]`` (at most
    :data:`NET_SLOTS` documents) by the bitonic network in shared memory, then its thread 0
    computes the measures."""
    g = seg_ids[cuda.blockIdx.x]
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    sk = cuda.shared.array(NET_SLOTS, nb.float64)
    si = cuda.shared.array(NET_SLOTS, nb.int64)
    srow = cuda.shared.array(NET_SLOTS, nb.int64)
    lab = cuda.shared.array(NET_SLOTS, nb.int64)
    fs = cuda.shared.array(_NET_SLOTS_1, nb.float64)
    nanc = cuda.shared.array(1, nb.int64)
    base = offsets[g]
    n = offsets[g + 1] - base
    m = net_size(n)
    if t == 0:
        nanc[0] = 0
    cuda.syncthreads()
    for i in range(t, m, nt):
        if net_load(i, base, n, perm, has_perm, scores, sk, si, srow):
            cuda.atomic.add(nanc, 0, 1)
    cuda.syncthreads()
    if nanc[0] > 0:  # the same for every thread of the block
        if t == 0:
            nan_out[g] = nanc[0]
        return
    k = 2
    while k <= m:
        j = k // 2
        while j >= 1:
            for i in range(t, m, nt):
                net_step(i, j, k, sk, si, n, tie_mode, srow, doc_mode, doc_int, doc_off, doc_data)
            cuda.syncthreads()
            j //= 2
        k *= 2
    for i in range(t, n, nt):
        lab[i] = max(np.int64(labels[srow[si[i]]]), 0)
    cuda.syncthreads()
    if t == 0:
        nan_out[g] = 0
        # si[] is free now: the tie groups' ends, or the measures' int scratch
        ranked_measures(g, qref[g], sk, lab, si, n, tie_mode, kinds, ks, gtypes, rels, fparams,
                        norms, nrel_q, idcg_q, ioff, ideal, tabs, si, fs, out)


def _threads(seg_ids, offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int,
             doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, keys,
             idx, tk, ti, rows, lab, gend, fscr, stacks, out, nan_out):
    """The ``threads`` kernel: thread i ranks and scores segment ``seg_ids[i]``."""
    t = cuda.grid(1)
    if t < seg_ids.shape[0]:
        segment_values(seg_ids[t], offsets, perm, has_perm, labels, scores, qref, tie_mode,
                       doc_mode, doc_int, doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms,
                       nrel_q, idcg_q, ioff, ideal, tabs, keys, idx, tk, ti, rows, lab, gend, fscr, stacks, out,
                       nan_out)


@functools.cache
def _kernels():
    """The two CUDA kernels (:func:`_network`, :func:`_threads`), compiled lazily (first use) for
    the argument types they meet."""
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_network), _cuda.jit(_threads)


@nb.njit(cache=True, nogil=True)
def _emulated_network(seg_ids, offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode,
                      doc_int, doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q,
                      idcg_q, ioff, ideal, tabs, out, nan_out):
    """What the ``network`` kernel computes, its stages run slot after slot on the CPU."""
    sk = np.empty(NET_SLOTS, np.float64)
    si = np.empty(NET_SLOTS, np.int64)
    srow = np.empty(NET_SLOTS, np.int64)
    lab = np.empty(NET_SLOTS, np.int64)
    fs = np.empty(_NET_SLOTS_1, np.float64)
    for g in seg_ids:
        base = offsets[g]
        n = offsets[g + 1] - base
        nan = rank_by_network(base, n, perm, has_perm, labels, scores, tie_mode, doc_mode, doc_int,
                              doc_off, doc_data, sk, si, srow, lab)
        nan_out[g] = nan
        if nan == 0:
            ranked_measures(g, qref[g], sk, lab, si, n, tie_mode, kinds, ks, gtypes, rels,
                            fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, si, fs, out)


@nb.njit(cache=True, nogil=True)
def _emulated_threads(seg_ids, offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode,
                      doc_int, doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q,
                      idcg_q, ioff, ideal, tabs, keys, idx, tk, ti, rows, lab, gend, fscr, stacks, out, nan_out):
    """What the ``threads`` kernel computes, one segment after another on the CPU."""
    for g in seg_ids:
        segment_values(g, offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode,
                       doc_int, doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q,
                       idcg_q, ioff, ideal, tabs, keys, idx, tk, ti, rows, lab, gend, fscr, stacks, out, nan_out)


def rank_values_cuda(offsets: np.ndarray, perm: np.ndarray, has_perm: bool, labels: np.ndarray,
                     scores: np.ndarray, qref: np.ndarray, tie_mode: int, doc_mode: int,
                     doc_int: np.ndarray, doc_off: np.ndarray, doc_data: np.ndarray,
                     plan_arrays: tuple[np.ndarray, ...], nrel_q: np.ndarray, idcg_q: np.ndarray,
                     ioff: np.ndarray, ideal: np.ndarray, tabs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values [n_segments, n_measures], nan [n_segments])``: what
    :func:`uefast.engine.rank_values` computes, ranked on the GPU. ``plan_arrays`` = the plan's
    ``(kinds, ks, gtypes, rels, fparams, norms)``; ``nan[g]`` counts segment g's NaN scores (its
    values are then unspecified). Arguments as the CPU ranking pass takes them
    (:func:`uefast.kernels.driver.ranking_pass`).

    ``UEFAST_CUDA_KERNEL=counting``: rank by counting
    (:func:`uefast.gpu.counting.rank_values_counting`), segments too costly to count by the sort
    kernels. ``sort`` (default): every segment by one thread's quicksort in device memory
    (:func:`uefast.kernels.segment.segment_values`); with ``UEFAST_CUDA_NET_MAX=N``, segments of
    at most N documents instead take one thread block each, a bitonic network in shared memory
    (:func:`uefast.kernels.segment.net_step`), then one thread computes the measures."""
    reason = cuda_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"backend='cuda' cannot run: {reason}")
    nseg = len(offsets) - 1
    nm = len(plan_arrays[0])
    if nseg == 0:
        return np.zeros((0, nm)), np.zeros(0, np.int64)
    args = (offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int, doc_off,
            doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal, tabs)
    if kernel_choice() == "counting":
        from uefast.gpu.counting import rank_values_counting

        def sort_segments(ids, out):
            out[ids] = _rank_by_sorting(*args, only=ids)[0][ids]

        return rank_values_counting(*args, _emulating(), sort_segments)
    return _rank_by_sorting(*args)


def rank_systems_cuda(offsets, perm, has_perm, labels, scores_list, qref, tie_mode, doc_mode,
                      doc_int, doc_off, doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal, tabs
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`rank_values_cuda` of every score array of ``scores_list`` (systems ranked on one
    grouping). With the counting kernel the systems go through one pipeline
    (:func:`uefast.gpu.pipeline.rank_systems_counting`: shared arrays uploaded once, system
    s+1's copy overlapped with system s's kernel); with the sort kernels one call each."""
    reason = cuda_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"backend='cuda' cannot run: {reason}")
    common = (doc_mode, doc_int, doc_off, doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal, tabs)
    if kernel_choice() != "counting" or len(offsets) < 2:
        return [rank_values_cuda(offsets, perm, has_perm, labels, sc, qref, tie_mode, *common)
                for sc in scores_list]
    from uefast.gpu.pipeline import rank_systems_counting

    def sort_segments(ids, scores, out):
        out[ids] = _rank_by_sorting(offsets, perm, has_perm, labels, scores, qref, tie_mode,
                                    *common, only=ids)[0][ids]

    return rank_systems_counting(offsets, perm, has_perm, labels, scores_list, qref, tie_mode,
                                 *common, _emulating(), sort_segments)


def _rank_by_sorting(offsets, perm, has_perm, labels, scores, qref, tie_mode, doc_mode, doc_int,
                     doc_off, doc_data, plan_arrays, nrel_q, idcg_q, ioff, ideal, tabs, only=None):
    """The ``sort`` kernels (one thread's quicksort, or a block's network): values of every
    segment, or of segments ``only`` (the other segments' rows of the result unspecified)."""
    nseg = len(offsets) - 1
    nm = len(plan_arrays[0])
    sizes = np.diff(offsets)
    limit = _net_max()
    keep = np.ones(nseg, np.bool_)
    if only is not None:
        keep[:] = False
        keep[only] = True
    on_net = (sizes <= limit) if limit > 0 else np.zeros(nseg, np.bool_)
    small = np.flatnonzero(on_net & keep).astype(np.int64)
    big = np.flatnonzero(~on_net & keep).astype(np.int64)
    emulate = _emulating()
    if emulate:
        empty, to_dev = np.empty, _identity
    else:
        from numba import cuda
        empty, to_dev = cuda.device_array, cuda.to_device
    host = (offsets, perm if has_perm else np.zeros(1, np.int64), bool(has_perm), labels, scores,
            qref, int(tie_mode), int(doc_mode), doc_int, doc_off, doc_data, *plan_arrays, nrel_q,
            idcg_q, ioff, ideal, tabs)
    common = tuple(to_dev(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a
                   for a in host)
    d_out = empty((nseg, nm), np.float64)
    d_nan = empty(nseg, np.int64)
    if len(small):
        if emulate:
            _emulated_network(small, *common, d_out, d_nan)
        else:
            _kernels()[0][len(small), _NET_THREADS](to_dev(small), *common, d_out, d_nan)
    if len(big):
        # whole-input scratch (the kernel slices it by the segments' offsets)
        n = max(int(offsets[-1]), 1)
        scratch = (empty(n, np.float64), empty(n, np.int64), empty(n, np.float64),
                   empty(n, np.int64), empty(n, np.int64), empty(n, np.int64), empty(n, np.int64),
                   empty(n + nseg + 1, np.float64), empty((nseg, STACK_LEN), np.int64))
        if emulate:
            _emulated_threads(big, *common, *scratch, d_out, d_nan)
        else:
            blocks = (len(big) + _THREADS_PER_BLOCK - 1) // _THREADS_PER_BLOCK
            _kernels()[1][blocks, _THREADS_PER_BLOCK](to_dev(big), *common, *scratch, d_out,
                                                      d_nan)
    if emulate:
        return d_out, d_nan
    return d_out.copy_to_host(), d_nan.copy_to_host()


def _identity(a):
    return a
