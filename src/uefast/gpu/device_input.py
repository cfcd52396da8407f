"""Evaluate columns that are already in GPU memory: :func:`evaluate_device`.

CuPy arrays, cuDF columns, PyTorch CUDA tensors -- anything exposing
``__cuda_array_interface__`` (read in place through :func:`numba.cuda.as_cuda_array`) or DLPack
on a CUDA device (through ``cupy.from_dlpack``) -- are evaluated LETOR style (every candidate
judged) without copying a column to the host. What crosses to the host is a few scalars (the
qid and label ranges, the first NaN row), the segment offsets, and the output's numeric
columns in one copy (:mod:`uefast.gpu.output`); the judged pass's results, the sorted labels of
the ideal ranking and the values stay on the device.

On the device, in order:

1. the qid and label ranges (:func:`_minmax_kernel`, atomics) -- qids must be non-negative
   integer codes (factorize them first, e.g. ``cudf.Series.factorize``), groups are reported in
   code order, codes with no row are left out;
2. grouping by the stable radix sort (:func:`uefast.gpu.grouping.counting_sort_cuda`, its
   device outputs);
3. the judged pass (:func:`uefast.gpu.judged.judged_pass_cuda`, reading the permutation and the
   labels in place);
4. per score column: gather into segment order with order-preserving int64 keys
   (:func:`gather_row`, the transform of :func:`uefast.gpu.keys.score_keys`) and the first NaN
   row (atomic min), then the rank-by-counting kernel (:mod:`uefast.gpu.counting`) on every
   non-empty segment. The tie-break key is the input row itself: the sort is stable, so within
   a segment row order is input order (``ties="input"``, and ``"trec_eval"`` without docids);
5. the UE scores and the output's numeric columns (:func:`uefast.gpu.output.assemble_columns`,
   degenerate rows compacted out for ``degenerate="drop"``), copied back once.

Docids are not read (``ties="trec_eval"`` with a docid column is refused: its tie order needs
the docid bytes). Without a GPU the same steps run on host arrays: emulated
(``UEFAST_CUDA_EMULATE=1``, the per-thread steps on the CPU) or in numba's CUDA simulator, where
"device memory" is host memory, so an object exposing ``__cuda_array_interface__`` is read
through its pointer there (the tests use a minimal such object).
"""
from __future__ import annotations

import ctypes
import functools

import numba as nb
import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.gpu import counting
from uefast.gpu.grouping import counting_sort_cuda
from uefast.gpu.judged import judged_pass_cuda
from uefast.gpu.partitions import compute_partitions, concat_partitions, is_partitioned

__all__ = ["evaluate_device", "device_column"]

_jit = nb.njit(cache=True, nogil=True)
_THREADS = 128
_I64_MIN = np.int64(-(2 ** 63))
_I64_LOW = np.int64(2 ** 63 - 1)


@_jit
def row_key(bits):
    """Order-preserving int64 key of a float64 given by its bits (``-0.0`` as ``+0.0``):
    ``b ^ ((b >> 63) & (2^63 - 1))``, as :func:`uefast.gpu.keys.score_keys`."""
    b = np.int64(0) if bits == _I64_MIN else bits
    return b ^ ((b >> 63) & _I64_LOW)


@_jit
def gather_row(p, perm, sbits, scores, labels, keys, labs):
    """Position p of the segment order: its score's key and its label clamped at 0; True when
    the score is NaN."""
    r = perm[p]
    keys[p] = row_key(sbits[r])
    v = np.int64(labels[r])
    labs[p] = np.int32(v if v > 0 else 0)
    x = scores[r]
    return x != x


@_jit
def _emulated_minmax(a):
    lo = np.int64(2 ** 63 - 1)
    hi = np.int64(-(2 ** 63))
    for i in range(a.shape[0]):
        v = np.int64(a[i])
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


@_jit
def _emulated_gather(perm, n, sbits, scores, labels, keys, labs):
    first = np.int64(-1)
    for p in range(n):
        if gather_row(p, perm, sbits, scores, labels, keys, labs):
            r = np.int64(perm[p])
            first = r if first < 0 else min(first, r)
    return first


#: ``numba.cuda``, imported at first use; a module global, where numba's CUDA simulator looks.
cuda = None


def _minmax_kernel(a, n, out):
    i = cuda.grid(1)
    if i < n:
        v = np.int64(a[i])
        cuda.atomic.min(out, 0, v)
        cuda.atomic.max(out, 1, v)


def _gather_kernel(perm, n, sbits, scores, labels, keys, labs, first_nan):
    p = cuda.grid(1)
    if p < n:
        if gather_row(p, perm, sbits, scores, labels, keys, labs):
            cuda.atomic.min(first_nan, 0, np.int64(perm[p]))


@functools.cache
def _kernels():
    global cuda
    from numba import cuda as _cuda

    cuda = _cuda
    return _cuda.jit(_minmax_kernel), _cuda.jit(_gather_kernel)


def _blocks(n: int) -> int:
    return max(1, (n + _THREADS - 1) // _THREADS)


def _simulated() -> bool:
    from numba import config

    return bool(config.ENABLE_CUDASIM)


def _host_view(obj, name: str) -> np.ndarray:
    """A NumPy view of an object's ``__cuda_array_interface__`` memory -- only where device
    memory is host memory (numba's CUDA simulator, emulation)."""
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise InputError(f"column {name!r}: null values (a mask) are not supported")
    dt = np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    if len(shape) != 1:
        raise InputError(f"column {name!r}: must be one-dimensional, got shape {shape}")
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != (dt.itemsize,):
        raise InputError(f"column {name!r}: must be contiguous, got strides {strides}")
    n = shape[0]
    if n == 0:
        return np.zeros(0, dt)
    buf = (ctypes.c_char * (n * dt.itemsize)).from_address(int(cai["data"][0]))
    return np.frombuffer(buf, dt, n)


def device_column(obj, name: str, host_memory: bool):
    """The device array of column ``name``: ``obj`` through ``__cuda_array_interface__``
    (zero-copy) or DLPack on a CUDA device (CuPy's ``from_dlpack``, zero-copy). With
    ``host_memory`` (emulation, the simulator) a NumPy view or array. Anything else is refused
    with an :class:`~uefast.errors.InputError` naming the column."""
    from uefast.gpu.memory import cupy_or_none, is_device_array

    if host_memory:
        if isinstance(obj, np.ndarray):
            return obj
        if type(obj).__name__ == "FakeCUDAArray":  # numba's simulator: device memory is this
            return obj._ary
        if hasattr(obj, "__cuda_array_interface__"):
            return _host_view(obj, name)
    elif hasattr(obj, "__cuda_array_interface__"):
        from numba import cuda as _cuda

        if obj.__cuda_array_interface__.get("mask") is not None:
            raise InputError(f"column {name!r}: null values (a mask) are not supported")
        return _cuda.as_cuda_array(obj)
    elif is_device_array(obj):  # DLPack on a CUDA device
        cp = cupy_or_none()
        if cp is None:
            raise InputError(f"column {name!r} is a DLPack array: reading it needs CuPy "
                             "(pip install 'uefast[gpu-cupy]')")
        return _cuda_view(cp.from_dlpack(obj))
    raise InputError(f"column {name!r} is not in GPU memory (no __cuda_array_interface__ or "
                     f"CUDA DLPack; got {type(obj).__name__}): evaluate host data with "
                     "uefast.evaluate")


def _cuda_view(a):
    from numba import cuda as _cuda

    return _cuda.as_cuda_array(a)


def _columns(frame) -> dict:
    """Column name -> object, from a mapping or a frame with ``columns`` (cuDF)."""
    if isinstance(frame, dict):
        return dict(frame)
    if hasattr(frame, "columns") and hasattr(frame, "__getitem__"):
        return {str(c): frame[c] for c in frame.columns}
    raise InputError("evaluate_device takes a mapping of column name -> device array, a "
                     f"cuDF DataFrame or a Dask-cuDF DataFrame, got {type(frame).__name__}")


def _minmax(a, n: int, emulate: bool, mem) -> tuple[int, int]:
    if emulate:
        lo, hi = _emulated_minmax(a)
        return int(lo), int(hi)
    out = mem.upload(np.array([2 ** 63 - 1, -(2 ** 63)], np.int64))
    mem.sync()
    _kernels()[0][_blocks(n), _THREADS](a, n, out)
    lo, hi = mem.to_host(out)
    return int(lo), int(hi)


def evaluate_device(frame, measures=("nDCG@10", "AP"), *, ue: bool = True, ties: str = "input",
                    reb: str = "exact", degenerate: str = "zero", rel_level: int = 1,
                    negative_labels: str = "clamp", score_columns=None, qid: str = "qid",
                    label: str = "label") -> pa.Table:
    """:func:`uefast.evaluate` (LETOR style) of columns already in GPU memory, the same output
    table; see the module docstring for what runs where. ``frame``: a mapping of column name
    to device array, or a cuDF DataFrame. ``qid``: non-negative integer codes; ``label``:
    integers; score columns (``score_columns``, default every other float64 column): float64.
    A Dask-cuDF DataFrame (or any Dask collection of such partitions) is computed and its
    partitions' columns concatenated on the device (:mod:`uefast.gpu.partitions`)."""
    from uefast.engine import TIE_MODES, judged_tables, plan_measures, tables
    from uefast._output import _assemble_table, _dropped_list
    from uefast.gpu.output import assemble_columns
    from uefast.gpu.ranking import _emulating, cuda_unavailable_reason
    from uefast.inputs import text_array
    from uefast.options import EvalOptions

    reason = cuda_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"evaluate_device cannot run: {reason}")
    opts = EvalOptions(measures=measures, ue=ue, ties=ties, reb=reb, degenerate=degenerate,
                       rel_level=rel_level, negative_labels=negative_labels,
                       backend="cuda").validated()
    mlist = list(opts.measures)
    emulate = _emulating()
    host_memory = emulate or _simulated()
    mem = None
    if not emulate:
        from uefast.gpu.memory import DeviceMemory

        mem = DeviceMemory()
    if is_partitioned(frame):  # Dask-cuDF: the partitions' columns joined on the device
        cols = concat_partitions([_columns(p) for p in compute_partitions(frame)],
                                 lambda o, c: device_column(o, c, host_memory), host_memory, mem)
    else:
        cols = _columns(frame)
    for c in (qid, label):
        if c not in cols:
            raise InputError(f"device input: no column {c!r} (columns: {sorted(cols)})")
    if ties == "trec_eval" and "docid" in cols:
        raise InputError("device input: ties='trec_eval' orders ties by docid, which is not read "
                         "on the device; use ties='input' or 'expected', or uefast.evaluate")
    arrs = {c: device_column(o, c, host_memory) for c, o in cols.items()}
    names = list(score_columns) if score_columns is not None else [
        c for c in arrs if c not in (qid, label, "docid") and np.dtype(arrs[c].dtype).kind == "f"]
    if not names:
        raise InputError("device input: no score column (float64 columns other than qid/label)")
    n = int(arrs[qid].shape[0])
    for c in (qid, label, *names):
        if c not in arrs:
            raise InputError(f"device input: no score column {c!r}")
        if int(arrs[c].shape[0]) != n:
            raise InputError(f"device input: column {c!r} has {arrs[c].shape[0]} rows, "
                             f"{qid!r} has {n}")
        kind = np.dtype(arrs[c].dtype).kind
        if c in (qid, label) and kind not in "iu":
            raise InputError(f"column {c!r}: integer codes required, got {arrs[c].dtype}")
        if c in names and np.dtype(arrs[c].dtype) != np.float64:
            raise InputError(f"score column {c!r}: float64 required, got {arrs[c].dtype}")
    if n == 0:
        raise InputError("run: the input has no rows")
    qd, ld = arrs[qid], arrs[label]
    qlo, qhi = _minmax(qd, n, emulate, mem)
    if qlo < 0:
        raise InputError(f"column {qid!r}: qid codes must be >= 0, got {qlo}")
    if qhi >= 4 * n + 1024:
        raise InputError(f"column {qid!r}: codes up to {qhi} for {n} rows are too sparse; "
                         "factorize them first (e.g. cudf.Series.factorize)")
    llo, lhi = _minmax(ld, n, emulate, mem)
    if llo < 0 and negative_labels == "error":
        raise InputError(f"column {label!r}: negative label {llo} (negative_labels='error')")
    ncodes = qhi + 1
    offsets, perm = counting_sort_cuda(qd, ncodes, emulate, mem, to_host=False)
    if not emulate:
        offsets = mem.to_host(offsets)
    max_label = max(lhi, 0)
    plan = plan_measures(mlist, rel_level=opts.rel_level, reb=reb, max_label=max_label)
    jt = judged_tables(offsets, plan)
    normed = plan.normed if plan.normed is not None else np.zeros(len(mlist), np.bool_)
    jd = judged_pass_cuda(offsets, perm, True, ld, max_label, plan.kinds, plan.ks, plan.gtypes,
                          plan.rels, plan.fparams, plan.norms, plan.paper, normed,
                          int(plan.need), int(plan.exp_gtype), 0, jt, emulate, mem,
                          to_host=False)
    sizes = np.diff(offsets)
    keep = np.flatnonzero(sizes > 0)
    nseg, nm, ns = len(sizes), len(mlist), len(names)
    # the sorted labels (int64) stay on the device for the ideal ranking
    ideal = jd.ideal if plan.keep_ideal else np.zeros(0, np.int64)
    tabs = tables(max(int(sizes.max(initial=0)), 1))
    plan_arrays = (plan.kinds, plan.ks, plan.gtypes, plan.rels, plan.fparams, plan.norms)
    host_args = (keep.astype(np.int64), offsets, np.arange(nseg, dtype=np.int64),
                 TIE_MODES[ties], *plan_arrays, jd.nrel, jd.idcg, offsets, ideal, tabs)
    empty = np.empty if emulate else mem.empty
    slots, scratch = counting.counting_scratch(offsets, plan.kinds, TIE_MODES[ties], empty)
    up = [a if emulate or not isinstance(a, np.ndarray) else mem.upload(a)
          for a in (*host_args, slots)]
    keys, labs = empty(max(n, 1), np.int64), empty(max(n, 1), np.int32)
    vals = np.zeros((ns, nseg, nm)) if emulate else mem.zeros((ns, nseg, nm), np.float64)
    tpb = counting._threads_per_block(sizes)
    for s, c in enumerate(names):
        sd = arrs[c]
        sbits = sd.view(np.int64)
        if emulate:
            first = int(_emulated_gather(perm, n, sbits, sd, ld, keys, labs))
            counting._emulated(up[0], up[1], keys, perm, labs, *up[2:], *scratch, vals[s])
        else:
            fn = mem.upload(np.array([2 ** 63 - 1], np.int64))
            mem.sync()
            _kernels()[1][_blocks(n), _THREADS](perm, n, sbits, sd, ld, keys, labs, fn)
            first = int(mem.to_host(fn)[0])
            first = -1 if first == 2 ** 63 - 1 else first
            if len(keep):
                counting._kernel()[len(keep), tpb](up[0], up[1], keys, perm, labs, *up[2:],
                                                   *scratch, vals[s])
        if first >= 0:
            raise InputError(f"score column {c!r}: NaN score at row {first}")
    # UE scores and the numeric columns on the device, one copy back (gpu/output.py)
    out = assemble_columns(vals, keep, jd.iub, jd.reb, jd.nrel, jd.n_judged, sizes, ue=ue,
                           degenerate=degenerate, emulate=emulate, mem=mem)
    nk = max(len(keep), 1)
    seg = out.rows // nm
    dseg = out.dropped // nm
    systems, qids = text_array(names), pa.array(keep.astype(np.int64))
    dropped = _dropped_list(systems, qids, dseg // nk, dseg % nk, out.dropped % nm, mlist)
    info = {"rows_in": n, "rows_evaluated": n, "device_input": True}
    settings = opts.settings("letor")
    settings["input"] = "device"
    num = dict(out.cols)
    if not ue:
        num["ue_v1"] = num["ue_v2"] = None
    return _assemble_table(systems, qids, seg // nk, seg % nk,
                           out.rows % nm if dropped else None, mlist, ns * len(keep), num,
                           dropped, info, settings)
