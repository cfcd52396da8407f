"""Clustering a Parquet dataset by qid, with row groups cut at query boundaries."""
from __future__ import annotations

import math
import os
import shutil
import tempfile
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from uefast.engine import group_keys
from uefast.errors import InputError
from uefast.inputs import column

__all__ = ["ClusteredWriter", "cluster_parquet"]


class ClusteredWriter:
    """Parquet writer whose row groups never split a query.

    ``write(table)`` takes tables of **complete** queries, each query's rows contiguous (e.g.
    the chunks of :func:`~uefast.streaming.iter_query_chunks`); rows are buffered and flushed as
    row groups of about ``row_group_size`` rows, cut at the first query boundary at or after it
    (a query larger than that is one row group on its own).
    """

    def __init__(self, path: str | os.PathLike, schema: pa.Schema, qid: str = "qid",
                 row_group_size: int = 1 << 20, **writer_kw: Any) -> None:
        self.qid = qid
        self.rg = int(row_group_size)
        self._w = pq.ParquetWriter(os.fspath(path), schema, **writer_kw)
        self._buf: list[pa.Table] = []
        self._rows = 0
        self.row_groups = 0

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._buf.append(table)
        self._rows += table.num_rows
        if self._rows >= self.rg:
            t = pa.concat_tables(self._buf)
            self._buf, self._rows = [], 0
            g = group_keys(column(t, self.qid, "run"), self.qid, "run")
            if g.has_perm:
                raise InputError("ClusteredWriter.write: the rows are not clustered by "
                                 f"{self.qid!r}; use uefast.streaming.cluster_parquet")
            starts, pos, n = g.offsets, 0, t.num_rows
            while n - pos >= self.rg:
                end = int(starts[np.searchsorted(starts, pos + self.rg, "left")])
                self._flush(t.slice(pos, end - pos))
                pos = end
            if pos < n:
                self._buf, self._rows = [t.slice(pos)], n - pos

    def _flush(self, t: pa.Table) -> None:
        self._w.write_table(t, row_group_size=max(t.num_rows, 1))
        self.row_groups += 1

    def close(self) -> None:
        if self._buf:
            self._flush(pa.concat_tables(self._buf))
            self._buf, self._rows = [], 0
        self._w.close()

    def __enter__(self) -> "ClusteredWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _partition_ids(arr: pa.Array, k: int) -> np.ndarray:
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_integer(arr.type):
        v = arr.cast(pa.int64()).to_numpy().view(np.uint64)
        h = v * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
    else:
        import polars as pl

        h = pl.Series(arr).hash(seed=7).to_numpy().astype(np.uint64, copy=False)
    return (h % np.uint64(k)).astype(np.int64)


def cluster_parquet(src: Any, dst: str | os.PathLike, *, qid: str = "qid",
                    row_group_size: int = 1 << 20, memory_limit: int = 1 << 30,
                    batch_size: int = 1 << 20, tmpdir: str | None = None,
                    progress: bool = False) -> dict:
    """Rewrite ``src`` (anything :func:`evaluate_stream` reads) to the Parquet file ``dst`` with
    every query's rows contiguous and row groups cut at query boundaries.

    Algorithm (external hash partitioning, two passes, memory ~ ``memory_limit``): pass 1 streams
    ``src`` and appends each row to one of ``K = ceil(uncompressed size / memory_limit)`` temporary
    Parquet files chosen by a hash of its qid (rows keep their input order within a file); pass 2
    loads each partition, groups it by qid with the engine's stable counting sort (queries in order
    of first appearance, rows of a query in input order, so ``ties="input"`` results are kept) and
    writes it through :class:`ClusteredWriter`. Returns ``{"rows", "queries", "row_groups",
    "partitions"}``.
    """
    from uefast._progress import Progress
    from uefast.streaming._source import open_source

    s = open_source(src, batch_size)
    if qid not in s.schema.names:
        raise InputError(f"run: missing column {qid!r}; columns are {s.schema.names}")
    size = sum(p.metadata.row_group(i).total_byte_size for p in s.files
               for i in range(p.metadata.num_row_groups)) if s.files else None
    k = max(1, math.ceil(size / memory_limit)) if size else 1
    tmp = tempfile.mkdtemp(prefix="uefast_cluster_", dir=tmpdir)
    rows = queries = 0
    bar = Progress(total_rows=s.total_rows, enabled=progress, label="uefast cluster")
    try:
        writers: dict[int, pq.ParquetWriter] = {}
        schema = None
        for b in s.batches(None):
            if b.num_rows == 0:
                continue
            schema = schema or b.schema
            part = _partition_ids(b.column(qid), k) if k > 1 else np.zeros(b.num_rows, np.int64)
            order = np.argsort(part, kind="stable")
            bounds = np.searchsorted(part[order], np.arange(k + 1))
            tb = pa.Table.from_batches([b]).take(pa.array(order)) if k > 1 else \
                pa.Table.from_batches([b])
            for p in range(k):
                lo, hi = int(bounds[p]), int(bounds[p + 1])
                if hi > lo:
                    if p not in writers:
                        writers[p] = pq.ParquetWriter(os.path.join(tmp, f"p{p}.parquet"), schema)
                    writers[p].write_table(tb.slice(lo, hi - lo))
            rows += b.num_rows
            bar.update(rows, 0)
        for w in writers.values():
            w.close()
        if schema is None:
            raise InputError("run: the input has no rows")
        with ClusteredWriter(dst, schema, qid, row_group_size) as out:
            for p in sorted(writers):
                t = pq.read_table(os.path.join(tmp, f"p{p}.parquet"))
                g = group_keys(column(t, qid, "run"), qid, "run")
                queries += g.n_groups
                out.write(t.take(pa.array(g.perm)) if g.has_perm else t)
                os.remove(os.path.join(tmp, f"p{p}.parquet"))
        bar.close(rows, queries)
        return {"rows": rows, "queries": queries, "row_groups": out.row_groups,
                "partitions": k}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
