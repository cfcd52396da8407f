"""Cutting a stream of record batches into tables of complete queries (carry-over reader).

Algorithm: for each batch, find the runs of equal qid (``run_starts_*`` kernels, O(rows)). Every
run but the last is a complete query unless the input is not clustered; the last run is *carried*
into the next batch (it may continue there, across batch, row-group and file boundaries). A query
is *closed* when a different qid follows it. Clustering is checked, not assumed: each closed qid's
64-bit fingerprint (the integer itself, or a hash for strings) goes into a set (sorted NumPy runs
merged like an LSM tree, 8 bytes per query); a run head already in the set, or twice in one batch,
means the input is not clustered, and :class:`~uefast.errors.InputError` names the qid and its row.
Memory: one batch + the carried query + the pending output chunk + 8 bytes per closed query.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from uefast.errors import InputError, RowError
from uefast.inputs import key_kind, string_buffers
from uefast.kernels.grouping import run_starts_bytes, run_starts_int

__all__ = ["ClosedSet", "iter_query_chunks", "NotClusteredError"]

_CLUSTER_HINT = ("the input is not clustered by qid (all rows of a query must be contiguous); "
                 "cluster it first with uefast.streaming.cluster_parquet(src, dst), or evaluate "
                 "it in memory")


class NotClusteredError(InputError):
    """A qid reappeared after its rows had ended: streaming would give wrong numbers."""


class ClosedSet:
    """A set of uint64 fingerprints: sorted arrays whose sizes at least double down the stack."""

    def __init__(self) -> None:
        self._levels: list[np.ndarray] = []

    def __len__(self) -> int:
        return sum(len(a) for a in self._levels)

    def add(self, fps: np.ndarray) -> None:
        if len(fps) == 0:
            return
        a = np.sort(fps)
        self._levels.append(a)
        while len(self._levels) >= 2 and len(self._levels[-2]) <= 2 * len(self._levels[-1]):
            b = self._levels.pop()
            c = self._levels.pop()
            self._levels.append(np.sort(np.concatenate([c, b]), kind="mergesort"))

    def first_member(self, fps: np.ndarray) -> int:
        """Index of the first element of ``fps`` that is in the set, or -1."""
        hit = np.zeros(len(fps), bool)
        for a in self._levels:
            pos = np.searchsorted(a, fps)
            pos[pos == len(a)] = 0
            hit |= a[pos] == fps
        idx = np.flatnonzero(hit)
        return int(idx[0]) if len(idx) else -1


def _runs(arr: pa.Array, name: str) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(run starts incl. the end, uint64 fingerprints of run heads, the heads as Arrow)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_string_view(arr.type):  # accepted in memory too (uefast.inputs.column)
        arr = arr.cast(pa.large_string())
    if key_kind(arr, name, "run") == "int":
        values = arr.cast(pa.int64()).to_numpy()
        starts = run_starts_int(values)
        fps = values[starts[:-1]].view(np.uint64)
        return starts, fps, arr.take(pa.array(starts[:-1]))
    offsets, data = string_buffers(arr)
    starts = run_starts_bytes(offsets, data)
    heads = arr.take(pa.array(starts[:-1]))
    import polars as pl

    fps = pl.Series(heads).hash(seed=0x5EED).to_numpy().astype(np.uint64, copy=False)
    return starts, fps, heads


def _not_clustered(qid, row: int) -> NotClusteredError:
    return NotClusteredError(f"run: qid {qid!r} reappears at row {row} after its rows had ended; "
                             + _CLUSTER_HINT)


def iter_query_chunks(batches: Iterator[pa.RecordBatch], qid: str, min_rows: int,
                      stats: dict | None = None) -> Iterator[pa.Table]:
    """Yield tables of whole queries (>= ``min_rows`` rows each, except the last), in input order.

    ``stats`` (optional) is updated with ``rows`` read, ``queries`` closed and ``batches``.
    """
    closed = ClosedSet()
    carry: list[pa.RecordBatch] = []
    carry_fp = None
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    row_base = 0
    st = stats if stats is not None else {}
    st.setdefault("rows", 0)
    st.setdefault("queries", 0)
    st.setdefault("batches", 0)
    schema = None
    for batch in batches:
        st["batches"] += 1
        n = batch.num_rows
        if n == 0:
            continue
        schema = schema or batch.schema
        if qid not in batch.schema.names:
            raise InputError(f"run: missing column {qid!r}; columns are {batch.schema.names}")
        qarr = batch.column(qid)
        if qarr.null_count:
            first = int(np.flatnonzero(qarr.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"run: column {qid!r} has null value(s); first at row {row_base + first}")
        try:
            starts, fps, heads = _runs(qarr, qid)
        except RowError as exc:  # rows of the batch -> rows of the input
            raise exc.shifted(row_base) from None
        r = len(fps)
        cont = carry_fp is not None and fps[0] == carry_fp
        # a head repeated inside this batch
        _, first_idx = np.unique(fps, return_index=True)
        if len(first_idx) < r:
            dup = np.setdiff1d(np.arange(r), first_idx)[0]
            raise _not_clustered(heads[int(dup)].as_py(), row_base + int(starts[dup]))
        if carry_fp is not None and not cont:
            closed.add(np.array([carry_fp], np.uint64))
            st["queries"] += 1
            pending += carry
            pending_rows += sum(b.num_rows for b in carry)
            carry = []
        hit = closed.first_member(fps)
        if hit >= 0:
            raise _not_clustered(heads[hit].as_py(), row_base + int(starts[hit]))
        last = int(starts[-2])
        if r == 1:
            carry = carry + [batch] if cont else [batch]
        else:
            if cont:
                pending += carry
                pending_rows += sum(b.num_rows for b in carry)
            pending.append(batch.slice(0, last))
            pending_rows += last
            closed.add(fps[:-1])
            st["queries"] += r - 1
            carry = [batch.slice(last)]
        carry_fp = fps[-1]
        row_base += n
        st["rows"] = row_base
        if pending_rows >= min_rows:
            yield pa.Table.from_batches(pending, schema=schema)
            pending, pending_rows = [], 0
    pending += carry
    if carry:
        st["queries"] += 1
    if pending:
        yield pa.Table.from_batches(pending, schema=schema)
