"""Partitioned device frames (Dask-cuDF) for :func:`uefast.gpu.evaluate_device`.

A frame with ``npartitions`` and ``to_delayed()`` (a Dask-cuDF DataFrame, or any Dask
collection of GPU frames) is computed partition by partition with ``dask.compute`` -- each
partition is then a cuDF DataFrame in GPU memory, or a mapping of column name to objects
exposing ``__cuda_array_interface__`` -- and every column's partitions are concatenated in
partition order on the device (device-to-device copies into one array: CuPy when installed,
else ``numba.cuda``'s ``copy_to_device``). No column goes through host memory. The rows of a
query may lie in several partitions: qids must be codes of the whole frame (factorize before
partitioning, or with a categorical of known categories), as for a single frame.

Where device memory is host memory (``UEFAST_CUDA_EMULATE=1``, numba's CUDA simulator) the
partitions are host views and are concatenated there.
"""
from __future__ import annotations

import numpy as np

from uefast.errors import InputError

__all__ = ["is_partitioned", "compute_partitions", "concat_partitions"]


def is_partitioned(frame) -> bool:
    """True for a Dask collection of partitions (``npartitions`` and ``to_delayed``)."""
    return hasattr(frame, "npartitions") and hasattr(frame, "to_delayed")


def compute_partitions(frame) -> list:
    """Every partition of ``frame`` computed (``dask.compute`` of ``frame.to_delayed()``, one
    graph, in partition order)."""
    try:
        import dask
    except ImportError as e:  # pragma: no cover - a Dask frame implies Dask
        raise ImportError("a partitioned frame needs dask: pip install 'uefast[dask]'") from e
    return list(dask.compute(*frame.to_delayed()))


def concat_partitions(parts: list[dict], column, host_memory: bool, mem) -> dict:
    """Column name -> one device array: the partitions' columns (``parts``: a mapping of name to
    object per partition; ``column(obj, name)`` gives the device array of one) concatenated in
    partition order. Every partition must have the same columns with the same dtypes; an
    :class:`~uefast.errors.InputError` names the partition and column that differ."""
    if not parts:
        raise InputError("device input: the partitioned frame has no partitions")
    names = list(parts[0])
    for i, p in enumerate(parts):
        if sorted(p) != sorted(names):
            raise InputError(f"device input: partition {i} has columns {sorted(p)}, "
                             f"partition 0 has {sorted(names)}")
    out = {}
    for c in names:
        arrs = [column(p[c], c) for p in parts]
        dt0 = np.dtype(arrs[0].dtype)
        for i, a in enumerate(arrs):
            if np.dtype(a.dtype) != dt0:
                raise InputError(f"column {c!r}: partition {i} holds {np.dtype(a.dtype)}, "
                                 f"partition 0 holds {dt0}")
        out[c] = _concat(arrs, host_memory, mem)
    return out


def _concat(arrs: list, host_memory: bool, mem):
    """One array of the partitions' arrays end to end (device-to-device copies)."""
    if len(arrs) == 1:
        return arrs[0]
    if host_memory:
        return np.concatenate([np.asarray(a) for a in arrs])
    total = sum(int(a.shape[0]) for a in arrs)
    out = mem.empty(max(total, 1), np.dtype(arrs[0].dtype))
    pos = 0
    for a in arrs:
        k = int(a.shape[0])
        if k:
            if mem.cp is not None:
                out[pos:pos + k] = mem.cp.asarray(a)
            else:
                out[pos:pos + k].copy_to_device(a)
        pos += k
    return out[:total]
