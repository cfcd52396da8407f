"""Grouping of unclustered rows on an NVIDIA GPU (numba-cuda): dense group codes -> segment
offsets and a permutation, what :func:`uefast.kernels.grouping.counting_sort` computes on the CPU.

Algorithm: a **stable LSD radix sort** of the codes, 8 bits a pass (Knuth, TAOCP vol. 3,
§5.2.5; the tile-histogram layout of Merrill & Grimshaw, "High performance and scalable radix
sorting", 2011), carrying each row's index, so that rows of one group keep their input order
(``ties="input"`` reads that order):

1. :func:`tile_hist` -- thread t counts the digit of each row of its tile (:data:`TILE` rows)
   into ``hist[digit * ntiles + t]`` (digit-major: one thread writes each column, no atomics);
2. :func:`_scan_kernel` -- one block turns ``hist`` into exclusive prefix sums: each thread sums
   a contiguous chunk, thread 0 scans the chunk sums, each thread rescans its chunk. In
   digit-major order that is every (digit, tile)'s first output slot, tiles in input order;
3. :func:`tile_scatter` -- thread t moves its tile's rows to their slots in input order: stable.

Negative codes (rows left out) become the code ``ncodes`` and sort last; after the passes
:func:`segment_starts` (thread per sorted position) writes ``offsets[c]`` = first position of
code c at every boundary. ``ceil(bits(ncodes) / 8)`` passes.

Every per-thread step is plain ``@njit`` code: the kernels run them on threads, the emulated path
(``UEFAST_CUDA_EMULATE=1``) runs them one after another on the CPU, and
``tests/cuda_simulator_grouping.py`` runs the kernels in numba's CUDA simulator. Codes already
in GPU memory (a CuPy array, anything with ``__cuda_array_interface__``) are read in place.
"""
from __future__ import annotations

import functools

import numba as nb
import numpy as np

__all__ = ["TILE", "SCAN_THREADS", "counting_sort_cuda"]

#: Rows a thread handles per pass (tests set it small, so that inputs have many tiles).
TILE = 1024
#: Threads of the one-block scan.
SCAN_THREADS = 256
RADIX_BITS = 8
RADIX = 1 << RADIX_BITS
_THREADS = 128

_jit = nb.njit(cache=True, nogil=True)


@_jit
def sentinel_key(codes, i, ncodes):
    """Row i's sort key: its code, or ``ncodes`` for a negative code (sorted last, dropped)."""
    c = np.int64(codes[i])
    return c if c >= 0 else np.int64(ncodes)


@_jit
def init_keys(i, codes, ncodes, keys, vals):
    """Position i before the first pass: its key and its row index."""
    keys[i] = sentinel_key(codes, i, ncodes)
    vals[i] = i


@_jit
def tile_hist(t, keys, n, shift, ntiles, tile, hist):
    """Thread t: digit counts of its tile into ``hist[digit * ntiles + t]`` (zeroed before)."""
    for i in range(t * tile, min(n, (t + 1) * tile)):
        hist[((keys[i] >> shift) & (RADIX - 1)) * ntiles + t] += 1


@_jit
def tile_scatter(t, keys, vals, n, shift, ntiles, tile, pos, keys_out, vals_out):
    """Thread t: each row of its tile, in input order, to the next slot of its digit's column
    ``pos[digit * ntiles + t]`` (exclusive prefix sums of the histogram): a stable pass."""
    for i in range(t * tile, min(n, (t + 1) * tile)):
        j = ((keys[i] >> shift) & (RADIX - 1)) * ntiles + t
        p = pos[j]
        keys_out[p] = keys[i]
        vals_out[p] = vals[i]
        pos[j] = p + 1


@_jit
def chunk_sum(a, lo, hi):
    """Sum of ``a[lo:hi]``."""
    s = np.int64(0)
    for i in range(lo, hi):
        s += a[i]
    return s


@_jit
def chunk_exclusive(a, lo, hi, start):
    """``a[lo:hi]`` replaced by its exclusive prefix sums, starting from ``start``."""
    s = start
    for i in range(lo, hi):
        v = a[i]
        a[i] = s
        s += v


@_jit
def exclusive_serial(part, m):
    """``part[0:m]`` replaced by its exclusive prefix sums (one thread)."""
    chunk_exclusive(part, 0, m, np.int64(0))


@_jit
def emulated_scan(a, m, part):
    """What :func:`_scan_kernel` computes (``a[0:m]`` replaced by its exclusive prefix sums),
    its threads' steps run one after another; ``part``: one slot per thread."""
    nt = part.shape[0]
    for t in range(nt):
        part[t] = chunk_sum(a, m * t // nt, m * (t + 1) // nt)
    exclusive_serial(part, nt)
    for t in range(nt):
        chunk_exclusive(a, m * t // nt, m * (t + 1) // nt, part[t])


@_jit
def segment_starts(i, keys, n, ncodes, offsets):
    """Sorted position i: at a boundary of codes (or the ends) write ``offsets[c] = i`` for every
    code c that starts here (codes absent from the input start where the next one does);
    ``offsets[ncodes]`` = the rows kept (those with a code >= 0)."""
    prev = keys[i - 1] if i > 0 else np.int64(-1)
    cur = keys[i] if i < n else np.int64(ncodes)
    for c in range(prev + 1, min(cur, ncodes) + 1):
        offsets[c] = i


@_jit
def _emulated(codes, ncodes, tile, npasses):
    """What the kernels compute, every thread's steps run one after another on the CPU."""
    n = codes.shape[0]
    keys, vals = np.empty(n, np.int64), np.empty(n, np.int64)
    for i in range(n):
        init_keys(i, codes, ncodes, keys, vals)
    ntiles = max(1, -(-n // tile))
    ko, vo = np.empty(n, np.int64), np.empty(n, np.int64)
    part = np.zeros(SCAN_THREADS, np.int64)
    for p in range(npasses):
        shift = p * RADIX_BITS
        hist = np.zeros(RADIX * ntiles, np.int64)
        for t in range(ntiles):
            tile_hist(t, keys, n, shift, ntiles, tile, hist)
        emulated_scan(hist, hist.shape[0], part)
        for t in range(ntiles):
            tile_scatter(t, keys, vals, n, shift, ntiles, tile, hist, ko, vo)
        keys, ko = ko, keys
        vals, vo = vo, vals
    offsets = np.zeros(ncodes + 1, np.int64)
    for i in range(n + 1):
        segment_starts(i, keys, n, ncodes, offsets)
    return offsets, vals


#: ``numba.cuda``, imported at first use (:func:`_kernels`); a module global, where numba's CUDA
#: simulator looks for it.
cuda = None


def _init_kernel(codes, n, ncodes, keys, vals):
    i = cuda.grid(1)
    if i < n:
        init_keys(i, codes, ncodes, keys, vals)


def _hist_kernel(keys, n, shift, ntiles, tile, hist):
    t = cuda.grid(1)
    if t < ntiles:
        tile_hist(t, keys, n, shift, ntiles, tile, hist)


def _scan_kernel(a, m):
    """One block: ``a[0:m]`` replaced by its exclusive prefix sums."""
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    part = cuda.shared.array(SCAN_THREADS, nb.int64)
    lo = m * t // nt
    hi = m * (t + 1) // nt
    part[t] = chunk_sum(a, lo, hi)
    cuda.syncthreads()
    if t == 0:
        exclusive_serial(part, nt)
    cuda.syncthreads()
    chunk_exclusive(a, lo, hi, part[t])


def _scatter_kernel(keys, vals, n, shift, ntiles, tile, pos, keys_out, vals_out):
    t = cuda.grid(1)
    if t < ntiles:
        tile_scatter(t, keys, vals, n, shift, ntiles, tile, pos, keys_out, vals_out)


def _starts_kernel(keys, n, ncodes, offsets):
    i = cuda.grid(1)
    if i <= n:
        segment_starts(i, keys, n, ncodes, offsets)


@functools.cache
def _kernels():
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return tuple(_cuda.jit(f) for f in (_init_kernel, _hist_kernel, _scan_kernel,
                                         _scatter_kernel, _starts_kernel))


def n_passes(ncodes: int) -> int:
    """Radix passes for keys 0 .. ncodes (the sentinel included)."""
    return max(1, -(-int(ncodes).bit_length() // RADIX_BITS))


def _blocks(n: int) -> int:
    return max(1, (n + _THREADS - 1) // _THREADS)


def counting_sort_cuda(codes, ncodes: int, emulate: bool, mem=None, to_host: bool = True):
    """``(offsets, perm)`` exactly as :func:`uefast.kernels.grouping.counting_sort` returns them
    (rows of group g are ``perm[offsets[g]:offsets[g+1]]`` in input order; negative codes left
    out), sorted on the GPU (see the module docstring) or emulated on the CPU (``emulate``).
    ``codes``: integers, a host array or one already in GPU memory. ``mem``: the call's
    :class:`uefast.gpu.memory.DeviceMemory`; ``to_host`` False: device arrays back."""
    ncodes = int(ncodes)
    tile = int(TILE)
    if emulate:
        offsets, vals = _emulated(np.ascontiguousarray(codes), ncodes, tile, n_passes(ncodes))
        return offsets, vals[:offsets[ncodes]]
    if mem is None:
        from uefast.gpu.memory import DeviceMemory

        mem = DeviceMemory()
    init, hist_k, scan, scatter, starts = _kernels()
    d_codes = mem.upload(codes)
    n = int(d_codes.shape[0])
    keys, vals = mem.empty(max(n, 1), np.int64), mem.empty(max(n, 1), np.int64)
    ko, vo = mem.empty(max(n, 1), np.int64), mem.empty(max(n, 1), np.int64)
    ntiles = max(1, -(-n // tile))
    mem.sync()
    if n:
        init[_blocks(n), _THREADS](d_codes, n, ncodes, keys, vals)
    for p in range(n_passes(ncodes)):
        shift = p * RADIX_BITS
        hist = mem.zeros(RADIX * ntiles, np.int64)
        hist_k[_blocks(ntiles), _THREADS](keys, n, shift, ntiles, tile, hist)
        scan[1, SCAN_THREADS](hist, RADIX * ntiles)
        scatter[_blocks(ntiles), _THREADS](keys, vals, n, shift, ntiles, tile, hist, ko, vo)
        keys, ko, vals, vo = ko, keys, vo, vals
    offsets = mem.zeros(ncodes + 1, np.int64)
    starts[_blocks(n + 1), _THREADS](keys, n, ncodes, offsets)
    if not to_host:
        return offsets, vals
    offsets = mem.to_host(offsets)
    return offsets, mem.to_host(vals)[:offsets[ncodes]]
