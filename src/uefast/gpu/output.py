"""The output table's numeric columns assembled on the GPU, UE scores included, with one
device-to-host copy: :func:`assemble_columns` (used by :func:`uefast.gpu.evaluate_device`).

Output row ``i`` of the long table (``data_schemas/evaluate_output.md``; the CPU engine's row
order: system, then kept segment, then measure) is ``t = i // M``, ``m = i mod M``,
``s = t // K``, ``q = keep[t mod K]`` for ``M`` measures and ``K`` kept (non-empty) segments.
Its columns are read from the arrays the device already holds -- the values ``vals[s, q, m]``
of the ranking kernel, ``iub[q, m]``, ``reb[q, m]``, ``nrel[q, m]`` and ``n_judged[q]`` of the
judged pass, the segment sizes -- and its UE scores are computed there by
:func:`uefast.ue.ue_element`, the CPU pass's own routine (one definition of SPEC_math §4's
V1/V2, the same IEEE operations in the same order, so bitwise the CPU's on the same inputs).

With ``degenerate="drop"`` the rows of degenerate queries (:func:`uefast.ue.is_degenerate`)
are compacted out on the device: a flag per row, the one-block exclusive scan of
:mod:`uefast.gpu.grouping`, and every row written at its rank among the kept rows; the dropped
rows follow, in row order, so the host lists them (only their row index is read).

Everything is written into one int64 buffer of ``9 R + 1`` words (``R`` rows): the float64
columns value, iub, reb, ue_v1, ue_v2 through a float64 view of the same memory, then n_docs,
n_judged, n_rel and the row index ``i``, and last the number of kept rows. That buffer is the
one device-to-host copy; the host wraps its pieces as Arrow arrays without copying and builds
the string columns (system, qid, measure) from the row indexes, as the CPU path does
(:func:`uefast._output._assemble_table`). The kernels are one thread per output row.
``UEFAST_CUDA_EMULATE=1`` runs the same per-row steps on the CPU.
"""
from __future__ import annotations

import functools

import numba as nb
import numpy as np

from uefast.gpu import grouping
from uefast.gpu.grouping import emulated_scan
from uefast.ue import is_degenerate, ue_element

__all__ = ["NCOLS", "FLOAT_COLUMNS", "INT_COLUMNS", "row_kept", "write_row", "assemble_columns"]

#: Columns of the output buffer: the float64 ones, then the int64 ones (the last: row index).
FLOAT_COLUMNS = ("value", "iub", "reb", "ue_v1", "ue_v2")
INT_COLUMNS = ("n_docs", "n_judged", "n_rel", "row")
NCOLS = len(FLOAT_COLUMNS) + len(INT_COLUMNS)
_THREADS = 128

_jit = nb.njit(cache=True, nogil=True)
# the UE formula divides by zero on the branch it discards: IEEE results, as on the CPU pass
# (numba-cuda compiles kernels with the NumPy error model unless debugging)
_jit_ieee = nb.njit(cache=True, nogil=True, error_model="numpy")


@_jit
def _where(i, nm, nk, keep):
    """``(s, q, m)`` of output row ``i``: system, segment (query), measure."""
    t = i // nm
    m = i - t * nm
    s = t // nk
    return s, keep[t - s * nk], m


@_jit
def row_kept(i, nm, nk, keep, iub, reb):
    """1 when output row ``i`` is kept under ``degenerate="drop"`` (its query is not
    degenerate for its measure), else 0."""
    s, q, m = _where(i, nm, nk, keep)
    return np.int64(0) if is_degenerate(iub[q, m], reb[q, m]) else np.int64(1)


@_jit_ieee
def write_row(i, pos, rows, nm, nk, keep, vals, iub, reb, nrel, njud, sizes, ue, nan_deg, f, c):
    """Output row ``i`` written at position ``pos`` of the buffer (``f``: its float64 view,
    ``c``: the int64 words; column ``j`` starts at ``j * rows``), its UE scores by
    :func:`uefast.ue.ue_element` when ``ue``."""
    s, q, m = _where(i, nm, nk, keep)
    a = vals[s, q, m]
    u = iub[q, m]
    r = reb[q, m]
    f[pos] = a
    f[rows + pos] = u
    f[2 * rows + pos] = r
    if ue:
        v1, v2 = ue_element(a, u, r, nan_deg)
        f[3 * rows + pos] = v1
        f[4 * rows + pos] = v2
    c[5 * rows + pos] = np.int64(sizes[q])
    c[6 * rows + pos] = np.int64(njud[q])
    c[7 * rows + pos] = np.int64(nrel[q, m])
    c[8 * rows + pos] = i


@_jit
def _position(i, rows, drop, flags, nm, nk, keep, iub, reb):
    """Where row ``i`` goes: ``i``, or with ``drop`` its rank among the kept rows (``flags``
    holds their exclusive prefix sums, ``flags[rows]`` the count), the dropped rows after
    them in row order."""
    if not drop:
        return i
    if row_kept(i, nm, nk, keep, iub, reb):
        return flags[i]
    return flags[rows] + i - flags[i]


@_jit_ieee
def _emulated(rows, drop, nm, nk, keep, vals, iub, reb, nrel, njud, sizes, ue, nan_deg, buf,
              scan_threads):
    """What the kernels compute, every thread's steps one after another on the CPU."""
    flags = np.zeros(rows + 1, np.int64)
    if drop:
        for i in range(rows):
            flags[i] = row_kept(i, nm, nk, keep, iub, reb)
        emulated_scan(flags, rows + 1, np.zeros(scan_threads, np.int64))
    f = buf.view(np.float64)
    for i in range(rows):
        pos = _position(i, rows, drop, flags, nm, nk, keep, iub, reb)
        write_row(i, pos, rows, nm, nk, keep, vals, iub, reb, nrel, njud, sizes, ue, nan_deg,
                  f, buf)
    buf[NCOLS * rows] = flags[rows] if drop else rows


#: ``numba.cuda``, imported at first use; a module global, where numba's CUDA simulator looks.
cuda = None


def _flags_kernel(rows, nm, nk, keep, iub, reb, flags):
    i = cuda.grid(1)
    if i < rows:
        flags[i] = row_kept(i, nm, nk, keep, iub, reb)
    elif i == rows:
        flags[rows] = 0


def _write_kernel(rows, drop, flags, nm, nk, keep, vals, iub, reb, nrel, njud, sizes, ue,
                  nan_deg, f, c):
    i = cuda.grid(1)
    if i < rows:
        pos = _position(i, rows, drop, flags, nm, nk, keep, iub, reb)
        write_row(i, pos, rows, nm, nk, keep, vals, iub, reb, nrel, njud, sizes, ue, nan_deg,
                  f, c)
    if i == 0:
        c[NCOLS * rows] = flags[rows] if drop else rows


@functools.cache
def _kernels():
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_flags_kernel), _cuda.jit(_write_kernel)


def _blocks(n: int) -> int:
    return max(1, (n + _THREADS - 1) // _THREADS)


class DeviceColumns:
    """The host copy of the output buffer: ``cols[name]`` (NumPy views of the one buffer,
    kept rows only), ``rows`` (their output row indexes), ``dropped`` (the dropped rows'
    indexes, row order)."""

    __slots__ = ("cols", "rows", "dropped")

    def __init__(self, buf: np.ndarray, rows: int):
        kept = int(buf[NCOLS * rows])
        f = buf.view(np.float64)
        self.cols = {name: f[j * rows:j * rows + kept] for j, name in enumerate(FLOAT_COLUMNS)}
        for j, name in enumerate(INT_COLUMNS, len(FLOAT_COLUMNS)):
            self.cols[name] = buf[j * rows:j * rows + kept]
        self.rows = self.cols.pop("row")
        j = NCOLS - 1
        self.dropped = buf[j * rows + kept:(j + 1) * rows]


def assemble_columns(vals, keep: np.ndarray, iub, reb, nrel, njud, sizes, *, ue: bool,
                     degenerate: str, emulate: bool, mem=None) -> DeviceColumns:
    """The numeric output columns of ``ns`` systems x ``K = len(keep)`` kept segments x ``M``
    measures (see the module docstring). ``vals``: ``(ns, nseg, M)`` float64; ``iub``, ``reb``:
    ``(nseg, M)`` float64; ``nrel``: ``(nseg, M)`` integers; ``njud``, ``sizes``: ``(nseg,)``
    integers; device arrays (host arrays are uploaded), or host arrays with ``emulate``.
    ``keep``: the kept segments (host, int64). ``degenerate``: ``"zero"``, ``"nan"`` or
    ``"drop"`` (:mod:`uefast.ue`). One device-to-host copy."""
    ns, _, nm = vals.shape
    nk = len(keep)
    rows = ns * nk * nm
    drop, nan_deg = degenerate == "drop", degenerate == "nan"
    keep = np.ascontiguousarray(keep, np.int64)
    if emulate:
        buf = np.empty(NCOLS * rows + 1, np.int64)
        _emulated(rows, drop, nm, max(nk, 1), keep, vals, iub, reb, nrel, njud, sizes, ue,
                  nan_deg, buf, grouping.SCAN_THREADS)
        return DeviceColumns(buf, rows)
    if mem is None:
        from uefast.gpu.memory import DeviceMemory

        mem = DeviceMemory()
    flags_k, write_k = _kernels()
    d_keep, d_iub, d_reb, d_nrel, d_njud, d_sizes = (
        mem.upload(a) for a in (keep if nk else np.zeros(1, np.int64), iub, reb, nrel, njud,
                                sizes))
    buf = mem.empty(NCOLS * rows + 1, np.int64)
    flags = mem.empty(rows + 1, np.int64)
    mem.sync()
    if drop:
        flags_k[_blocks(rows + 1), _THREADS](rows, nm, max(nk, 1), d_keep, d_iub, d_reb, flags)
        scan = grouping._kernels()[2]  # the radix sort's one-block exclusive scan
        scan[1, grouping.SCAN_THREADS](flags, rows + 1)
    write_k[_blocks(rows), _THREADS](rows, drop, flags, nm, max(nk, 1), d_keep, vals, d_iub,
                                     d_reb, d_nrel, d_njud, d_sizes, ue, nan_deg,
                                     buf.view(np.float64), buf)
    return DeviceColumns(mem.to_host(buf), rows)
