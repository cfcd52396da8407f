"""Carterette's randomised Tukey HSD null on an NVIDIA GPU (numba-cuda), with the CPU's
counter-based random streams (:mod:`uefast.stats._rng`).

:func:`tukey_ranges_cuda` takes the arguments of :func:`uefast.stats._kernels.tukey_ranges` and
fills ``out`` with the same quantities, bit for bit: for resample ``b = b0 + r`` every row k of
``x`` (n topics x m systems) is permuted by

* ``m <= 8``: permutation ``perms[u_k]`` of the packed table (byte j = ``p_k[j]``) with
  ``u_k = below(draw32(key_b, k), m!, key_b, k)``, one draw per row;
* ``m > 8``: a Fisher-Yates shuffle of ``0..m-1``, ``i = m-1 .. 1`` swapping ``p[i]`` and
  ``p[below(draw32(key_b, d), i + 1, key_b, d)]`` with ``d = k(m-1) + (m-1-i)``;

``S_j = sum_k x[k, p_k[j]]`` is accumulated row by row in topic order (the CPU's order: no
reassociation, only float additions, so no contraction either) and
``out[r] = max_j S_j - min_j S_j``. ``key_b = resample_key(stream_base(seed, domain), b)``: the
very ``@njit`` routines of ``_rng`` compiled for the GPU, so the draws, hence the sums, hence
the statistic and the p-values, are identical to the CPU's (tested).

Kernel layout: one thread per resample (the work of a resample is a sequential scan of the
topics, the same for every thread; the topic row ``x[k]`` is read by all threads of a warp at
once, a broadcast). The accumulators and, for ``m > 8``, the permutation live in per-thread
columns of global scratch ``(m, rows)`` (coalesced across a warp) for ``m > 8``; ``m <= 8``
keeps eight scalar accumulators (registers) and hashes one 64-bit word per two topics. The
per-topic arithmetic is the CPU kernel's own routines (:func:`uefast.stats._kernels
.permuted_sums8`, the unrolled eight-accumulator topic loop, and :func:`uefast.stats._kernels
.shuffle_row`): one definition of the null for both backends. The same kernel counts
exceedances: ``counts[p] += [out[r] >= thr[p]]``
(integer atomics, exact), which is ``#{q*_b >= |S_i - S_j| - gamma}`` of :func:`uefast.stats
.tukey_hsd` when ``thr`` holds its thresholds. ``UEFAST_CUDA_EMULATE=1`` runs the same per-thread
steps on the CPU.
"""
from __future__ import annotations

import functools

import numba as nb
import numpy as np

from uefast.errors import InputError
from uefast.stats._kernels import permuted_sums8, shuffle_row
from uefast.stats._rng import resample_key, stream_base

__all__ = ["THREADS", "LAUNCH_ROWS", "AUTO_MIN_WORK", "tukey_ranges_cuda", "tukey_row_sums",
           "resolve_backend"]

#: Threads per block (one thread per resample).
THREADS = 128
#: Resamples per kernel launch (bounds the ``m > 8`` scratch: 16 bytes x m x LAUNCH_ROWS).
LAUNCH_ROWS = 1 << 16
#: ``backend="auto"`` picks the GPU from this many cell visits (resamples x topics x systems).
#: NOT MEASURED: a placeholder. ``benchmarks/gpu_phases.py`` measures it: its Tukey
#: crossover search ends with ``AUTO_MIN_WORK to commit: W``; commit W here with the device
#: and date in ``benchmarks/RESULTS_gpu.md``.
AUTO_MIN_WORK = 2_000_000_000

_jit = nb.njit(cache=True, nogil=True)


@_jit
def _small_range(x, perms, key):
    """``max_j S_j - min_j S_j`` for ``m <= 8``: the sums of
    :func:`uefast.stats._kernels.permuted_sums8` (the CPU kernel's own routine: eight scalar
    accumulators in registers) with the draws made inline, one draw on ``[0, m!)`` per topic,
    two from each 64-bit word (low half first, as ``draw32``: one hash per two topics)."""
    m = x.shape[1]
    a0, a1, a2, a3, a4, a5, a6, a7 = permuted_sums8(x, perms, perms, key, False)
    hi = max(a0, a1)
    lo = min(a0, a1)
    if m > 2:
        hi, lo = max(hi, a2), min(lo, a2)
    if m > 3:
        hi, lo = max(hi, a3), min(lo, a3)
    if m > 4:
        hi, lo = max(hi, a4), min(lo, a4)
    if m > 5:
        hi, lo = max(hi, a5), min(lo, a5)
    if m > 6:
        hi, lo = max(hi, a6), min(lo, a6)
    if m > 7:
        hi, lo = max(hi, a7), min(lo, a7)
    return hi - lo


@_jit
def tukey_row_sums(x, perms, key, acc, p, r):
    """``q*`` of the stream ``key`` (see the module docstring): :func:`_small_range` when the
    permutation table ``perms`` is given (``m <= 8``), else a Fisher-Yates shuffle per topic
    (:func:`uefast.stats._kernels.shuffle_row`, the CPU's) with ``acc[:, r]`` (sums) and
    ``p[:, r]`` (the permutation) as scratch. Returns ``max_j - min_j`` of the permuted column
    sums."""
    n, m = x.shape
    if perms.shape[0] > 0:
        return _small_range(x, perms, key)
    for j in range(m):
        acc[j, r] = 0.0
    for k in range(n):
        shuffle_row(key, k, m, p, r)
        for j in range(m):
            acc[j, r] += x[k, p[j, r]]
    hi = acc[0, r]
    lo = acc[0, r]
    for j in range(1, m):
        hi = max(hi, acc[j, r])
        lo = min(lo, acc[j, r])
    return hi - lo


@_jit
def _count(counts, q, thr):
    """Exceedances of one resample: how many thresholds ``q`` reaches (``thr`` ascending is not
    assumed)."""
    for t in range(thr.shape[0]):
        if q >= thr[t]:
            counts[t] += 1


cuda = None  # numba.cuda, bound at first use (a module global: the simulator looks for it here)


def _tukey_kernel(x, perms, base, b0, rows, thr, acc, p, out, counts):
    r = cuda.grid(1)
    if r >= rows:
        return
    q = tukey_row_sums(x, perms, resample_key(base, b0 + r), acc, p, r)
    out[r] = q
    for t in range(thr.shape[0]):
        if q >= thr[t]:
            cuda.atomic.add(counts, t, 1)


@_jit
def _emulated(x, perms, base, b0, rows, thr, acc, p, out, counts):
    for r in range(rows):
        q = tukey_row_sums(x, perms, resample_key(base, b0 + r), acc, p, r)
        out[r] = q
        _count(counts, q, thr)


@functools.cache
def _kernels():
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_tukey_kernel)


def tukey_ranges_cuda(x, perms, seed, domain, b0, out, thresholds=None,
                      emulate: bool | None = None):
    """:func:`uefast.stats._kernels.tukey_ranges` on the GPU: ``out[r] = q*_{b0 + r}``.

    With ``thresholds`` (float64, one per pair) also returns the int64 exceedance counts
    ``#{r : out[r] >= thresholds[t]}``, counted on the device. Resamples are launched
    :data:`LAUNCH_ROWS` at a time.
    """
    from uefast.gpu.ranking import _emulating

    emulate = _emulating() if emulate is None else emulate
    x = np.ascontiguousarray(x, np.float64)
    perms = np.ascontiguousarray(perms, np.uint64)
    # no thresholds: one that no finite q* reaches (no zero-size device array), its count unused
    thr = np.ascontiguousarray([np.inf] if thresholds is None else thresholds, np.float64)
    m = x.shape[1]
    base = np.uint64(stream_base(np.uint64(seed), domain))  # uint64: int64 + uint64 is float64
    total = out.shape[0]
    counts = np.zeros(thr.shape[0], np.int64)
    width = m if perms.shape[0] == 0 else 1  # scratch only where m > 8
    if emulate:
        cols = max(total, 1) if width > 1 else 1
        _emulated(x, perms, base, np.int64(b0), total, thr, np.empty((width, cols)),
                  np.empty((width, cols), np.int64), out, counts)
        return counts if thresholds is not None else None
    from numba import cuda as _cuda

    kernel = _kernels()
    d_x, d_perms, d_thr = _cuda.to_device(x), _cuda.to_device(perms), _cuda.to_device(thr)
    d_counts = _cuda.to_device(counts)
    step = min(LAUNCH_ROWS, max(total, 1))
    cols = step if width > 1 else 1
    d_acc = _cuda.device_array((width, cols), np.float64)
    d_p = _cuda.device_array((width, cols), np.int64)
    d_out = _cuda.device_array(step, np.float64)
    for s0 in range(0, total, step):
        rows = min(step, total - s0)
        kernel[-(-rows // THREADS), THREADS](d_x, d_perms, base, np.int64(b0 + s0), rows, d_thr,
                                             d_acc, d_p, d_out, d_counts)
        d_out[:rows].copy_to_host(out[s0:s0 + rows])
    if thresholds is not None:
        return d_counts.copy_to_host()
    return None


def resolve_backend(backend: str, work: int) -> str:
    """``"cpu"`` or ``"cuda"`` for the resampling tests: ``"cpu"``/``"cuda"`` as given (``"cuda"``
    raises :class:`~uefast.errors.InputError` with the reason where it cannot run); ``"auto"``:
    ``"cuda"`` when a device can run it and ``work`` (resamples x topics x systems) reaches
    :data:`AUTO_MIN_WORK`, else ``"cpu"``."""
    if backend not in ("cpu", "cuda", "auto"):
        raise InputError(f"`backend` must be one of ['cpu', 'cuda', 'auto'], got {backend!r}")
    if backend == "cpu":
        return "cpu"
    from uefast.gpu.ranking import cuda_unavailable_reason

    reason = cuda_unavailable_reason()
    if backend == "cuda":
        if reason is not None:
            raise InputError(f"backend='cuda' cannot run here: {reason}")
        return "cuda"
    return "cuda" if reason is None and work >= AUTO_MIN_WORK else "cpu"
