"""Paired bootstrap and randomisation (sign-flip) resamples on an NVIDIA GPU (numba-cuda), with the
CPU's counter-based random streams (:mod:`uefast.stats._rng`).

:func:`bootstrap_sums_cuda` and :func:`signflip_sums_cuda` take the arguments of
:func:`uefast.stats._kernels.bootstrap_sums` / :func:`~uefast.stats._kernels.signflip_sums` and
fill ``out`` with the same quantities: for resample ``b = b0 + r``, ``out[r, j] = sum_k w_k
vt[j, k]`` with ``w_k`` the multinomial count of topic k (bootstrap: n draws
``below(draw32(key_b, d), n, key_b, d)``, d = 0..n-1) or its sign (randomisation: bit k mod 64
of word k // 64 of ``key_b``). Every draw is the same integer function of ``(seed, domain, b, d)``
as on the CPU -- the very ``@njit`` routines of ``_rng``, compiled for the GPU -- so the resampled
counts and signs are identical; the sums differ from the CPU's only in the order of their
float additions (the CPU's 4 x 4 micro-kernel is compiled with reassociation), far inside the
tie tolerance the p-values use, so the p-values are identical (tested).

Kernel layout: one thread block per resample; its threads share out the n draws (atomic adds
into the resample's count row), then, after a barrier, the columns (thread j sums column j over
the topics in order). ``UEFAST_CUDA_EMULATE=1`` runs the same per-thread steps on the CPU.
"""
from __future__ import annotations

import functools

import numba as nb
import numpy as np

from uefast.stats._kernels import _draw32
from uefast.stats._rng import below, resample_key, stream_base, word

__all__ = ["THREADS", "bootstrap_sums_cuda", "signflip_sums_cuda", "boot_draw", "flip_sign"]

#: Threads per block (one block per resample).
THREADS = 128

_jit = nb.njit(cache=True, nogil=True)


@_jit
def boot_draw(key, d, n):
    """Topic drawn by bootstrap draw d of the stream ``key`` (uniform on [0, n))."""
    return below(_draw32(key, d), np.uint64(n), key, d)


@_jit
def flip_sign(key, k):
    """+1.0 or -1.0: bit k mod 64 of word k // 64 of the stream ``key`` (1 keeps the sign)."""
    w = word(key, k // 64)
    return 2.0 * np.float64((w >> np.uint64(k % 64)) & np.uint64(1)) - 1.0


@_jit
def _column_sum(w, r, vt, j, n):
    s = 0.0
    for k in range(n):
        s += w[r, k] * vt[j, k]
    return s


cuda = None  # numba.cuda, bound at first use (a module global: the simulator looks for it here)


def _boot_kernel(vt, base, b0, n, cnt, out):
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    key = resample_key(base, b0 + r)
    for k in range(t, n, nt):
        cnt[r, k] = 0.0
    cuda.syncthreads()
    for d in range(t, n, nt):
        cuda.atomic.add(cnt, (r, boot_draw(key, d, n)), 1.0)
    cuda.syncthreads()
    for j in range(t, vt.shape[0], nt):
        out[r, j] = _column_sum(cnt, r, vt, j, n)


def _flip_kernel(vt, base, b0, n, sg, out):
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    key = resample_key(base, b0 + r)
    for k in range(t, n, nt):
        sg[r, k] = flip_sign(key, k)
    cuda.syncthreads()
    for j in range(t, vt.shape[0], nt):
        out[r, j] = _column_sum(sg, r, vt, j, n)


@_jit
def _emulated(vt, base, b0, n, w, out, boot):
    for r in range(out.shape[0]):
        key = resample_key(base, b0 + r)
        for k in range(n):
            w[r, k] = 0.0 if boot else flip_sign(key, k)
        if boot:
            for d in range(n):
                w[r, boot_draw(key, d, n)] += 1.0
        for j in range(vt.shape[0]):
            out[r, j] = _column_sum(w, r, vt, j, n)


@functools.cache
def _kernels():
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_boot_kernel), _cuda.jit(_flip_kernel)


def _run(which: int, vt, seed, domain, b0, out, emulate: bool | None):
    from uefast.gpu.ranking import _emulating

    emulate = _emulating() if emulate is None else emulate
    vt = np.ascontiguousarray(vt, np.float64)
    n = vt.shape[1]
    base = np.uint64(stream_base(np.uint64(seed), domain))  # uint64: int64 + uint64 is float64
    rows = out.shape[0]
    if emulate:
        _emulated(vt, base, np.int64(b0), n, np.empty((rows, n)), out, which == 0)
        return
    from numba import cuda as _cuda

    d_out = _cuda.device_array(out.shape, np.float64)
    _kernels()[which][rows, THREADS](_cuda.to_device(vt), base, np.int64(b0), n,
                                     _cuda.device_array((rows, n), np.float64), d_out)
    d_out.copy_to_host(out)


def bootstrap_sums_cuda(vt, seed, domain, b0, out, proto=None, emulate: bool | None = None):
    """:func:`uefast.stats._kernels.bootstrap_sums` on the GPU (``proto`` unused: the counts are
    float64, exact up to 2^53)."""
    _run(0, vt, seed, domain, b0, out, emulate)


def signflip_sums_cuda(vt, seed, domain, b0, out, emulate: bool | None = None):
    """:func:`uefast.stats._kernels.signflip_sums` on the GPU."""
    _run(1, vt, seed, domain, b0, out, emulate)
