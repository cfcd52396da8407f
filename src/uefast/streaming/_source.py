"""Streaming sources: Parquet files/datasets, RecordBatchReaders and iterators of RecordBatches."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from uefast.errors import InputError

__all__ = ["Source", "open_source", "read_source", "is_streaming_source",
           "STREAMING_THRESHOLD_BYTES"]

#: Parquet inputs larger than this (bytes on disk) are streamed by ``uefast.evaluate`` / the CLI.
#: Override with the environment variable ``UEFAST_STREAMING_THRESHOLD`` (bytes).
STREAMING_THRESHOLD_BYTES = 1 << 30


def _threshold() -> int:
    env = os.environ.get("UEFAST_STREAMING_THRESHOLD")
    return int(env) if env else STREAMING_THRESHOLD_BYTES


def _parquet_files(path: str) -> list[str]:
    if os.path.isdir(path):
        out = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            out += [os.path.join(root, f) for f in sorted(files)
                    if not f.startswith((".", "_")) and not f.endswith(".crc")]
        return out
    return [path]


def _is_iterator(obj: Any) -> bool:
    return hasattr(obj, "__next__") and hasattr(obj, "__iter__")


def is_streaming_source(obj: Any, threshold: int | None = None) -> bool:
    """Whether ``uefast.evaluate`` should stream ``obj`` instead of loading it.

    True for a ``pa.RecordBatchReader``, a ``pq.ParquetFile``, a ``pyarrow.dataset.Dataset``, an
    iterator/generator (of RecordBatches or Tables), and a Parquet path (file or directory) whose
    size on disk exceeds ``threshold`` (default :data:`STREAMING_THRESHOLD_BYTES` = 1 GiB, or the
    ``UEFAST_STREAMING_THRESHOLD`` environment variable). False for in-memory tables and frames.
    """
    if isinstance(obj, (pa.RecordBatchReader, pq.ParquetFile)):
        return True
    # a Dataset exists only once pyarrow's dataset module is loaded: importing it here just to
    # ask would make pyarrow import pandas (~0.4 s of every command)
    ds = sys.modules.get("pyarrow._dataset")
    if ds is not None and isinstance(obj, ds.Dataset):
        return True
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if not os.path.exists(path):
            return False
        size = sum(os.path.getsize(f) for f in _parquet_files(path))
        return size > (_threshold() if threshold is None else threshold)
    if isinstance(obj, (pa.Table, pa.RecordBatch, dict, list, tuple)):
        return False
    return _is_iterator(obj)


@dataclass
class Source:
    """An opened source: schema, ``batches()`` (one pass), total rows if known, Parquet files."""

    schema: pa.Schema
    batches: Callable[[list[str] | None], Iterator[pa.RecordBatch]]
    total_rows: int | None
    files: list[str]
    table: pa.Table | None = None


def _first_and_rest(it: Iterator[Any]):
    for first in it:
        return first, it
    raise InputError("run: the input has no rows (empty stream)")


def _as_batches(items) -> Iterator[pa.RecordBatch]:
    for x in items:
        if isinstance(x, pa.RecordBatch):
            yield x
        elif isinstance(x, pa.Table):
            yield from x.to_batches()
        else:
            raise InputError(f"run: a stream must yield pyarrow RecordBatches or Tables, got "
                             f"{type(x).__name__}")


def open_source(obj: Any, batch_size: int) -> Source:
    """Open a streaming source; Parquet is read with ``iter_batches`` file by file, a directory
    in the order and with the partition columns of the in-memory read
    (:func:`uefast.inputs.parquet_dataset`)."""
    import pyarrow.dataset as ds

    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if not os.path.exists(path):
            raise InputError(f"run: file not found: {path!r}")
        if os.path.isfile(path):
            return _parquet_source([path], batch_size)
        from uefast.inputs import parquet_dataset

        d = parquet_dataset(path)  # as the in-memory read: same files, order, partition columns
        if not d.fragments:
            raise InputError(f"run: no Parquet files under {path!r}")
        return _dataset_source(d.fragments, d.schema, batch_size)
    if isinstance(obj, pq.ParquetFile):
        return _parquet_source([obj], batch_size)
    if isinstance(obj, ds.FileSystemDataset):
        return _dataset_source(list(obj.get_fragments()), obj.schema, batch_size)
    if isinstance(obj, pa.RecordBatchReader):
        return Source(obj.schema, lambda cols: _select(obj, cols), None, [])
    if isinstance(obj, pa.Table):
        return Source(obj.schema, lambda cols: _select(obj.to_batches(max_chunksize=batch_size),
                                                       cols), obj.num_rows, [], obj)
    if _is_iterator(obj) or isinstance(obj, (list, tuple)):
        first, rest = _first_and_rest(_as_batches(iter(obj)))

        def gen(cols):
            yield from _select(_chain(first, rest), cols)
        return Source(first.schema, gen, None, [])
    raise InputError(f"run: cannot stream a {type(obj).__name__}; pass a Parquet path, a "
                     "ParquetFile, a pyarrow dataset, a RecordBatchReader or an iterator of "
                     "RecordBatches")


def read_source(obj: Any, batch_size: int = 1 << 20) -> pa.Table:
    """The whole of a streaming source as one table, read as :func:`open_source` streams it
    (same rows, order and columns): for evaluations that need all the data in memory."""
    src = open_source(obj, batch_size)
    if src.table is not None:
        return src.table
    return pa.Table.from_batches(list(src.batches(None)), schema=src.schema)


def _chain(first, rest):
    yield first
    yield from rest


def _select(batches, cols):
    """The batches (their columns ``cols`` if given), each of the first one's schema: a batch
    that differs is an error naming it, its first row and the column."""
    first, row = None, 0
    for i, b in enumerate(batches):
        if cols is not None:
            missing = [c for c in cols if c not in b.schema.names]
            if missing:
                raise InputError(f"run: batch {i} of the stream (first row {row}) has no column "
                                 f"{missing[0]!r}; its columns are {b.schema.names}")
            b = b.select(cols)
        if first is None:
            first = b.schema
        elif not b.schema.equals(first):
            _check_same_columns(first, b.schema, i, row)
            b = pa.RecordBatch.from_arrays(b.columns, schema=first)  # nullability / metadata
        row += b.num_rows
        yield b


def _check_same_columns(first: pa.Schema, schema: pa.Schema, i: int, row: int) -> None:
    where = f"run: batch {i} of the stream (first row {row})"
    for f in first:
        if f.name not in schema.names:
            raise InputError(f"{where} has no column {f.name!r}; every batch must have the "
                             f"columns of batch 0: {first.names}")
        t = schema.field(f.name).type
        if t != f.type:
            raise InputError(f"{where}: column {f.name!r} is {t}, but {f.type} in batch 0; every "
                             "batch must have the same schema")
    if schema.names != first.names:
        raise InputError(f"{where} has columns {schema.names}, batch 0 {first.names}; every batch "
                         "must have the same schema")


def _dataset_source(fragments: list, schema: pa.Schema, batch_size: int) -> Source:
    """The files of a Parquet dataset, each with its partition values (hive ``qid=...``)."""
    import pyarrow.dataset as ds

    keys = [ds.get_partition_keys(f.partition_expression) for f in fragments]
    return _parquet_source([f.path for f in fragments], batch_size, schema, keys)


def _parquet_source(files: list, batch_size: int, schema: pa.Schema | None = None,
                    keys: list[dict] | None = None) -> Source:
    # pre_buffer=False: with pyarrow's default read coalescing the cached ranges of every row group
    # already read stay alive until the reader closes, so memory grows with the file (measured:
    # +1.1 GiB per 80 M rows); without it memory is flat at one batch.
    pfs = [f if isinstance(f, pq.ParquetFile) else pq.ParquetFile(f, pre_buffer=False)
           for f in files]
    schema = schema or pfs[0].schema_arrow
    total = sum(p.metadata.num_rows for p in pfs)

    def gen(cols):
        def read():
            for i, p in enumerate(pfs):
                if keys is None:
                    yield from p.iter_batches(batch_size=batch_size, columns=cols,
                                              use_threads=True)
                else:
                    yield from _dataset_batches(p, keys[i], schema, cols, batch_size)
        return prefetch(read())
    return Source(schema, gen, total, pfs)


def _dataset_batches(p: pq.ParquetFile, keys: dict, schema: pa.Schema, cols, batch_size: int):
    """The batches of one file of a dataset as the dataset reads them: columns of the dataset's
    schema (cast to it), partition columns filled with the file's values (null if absent)."""
    fields = [schema.field(c) for c in (schema.names if cols is None else cols)]
    have = p.schema_arrow
    read = [f.name for f in fields if f.name in have.names]
    if len(read) == len(fields) and all(have.field(f.name).type == f.type for f in fields):
        yield from p.iter_batches(batch_size=batch_size, columns=read, use_threads=True)
        return
    out = pa.schema(fields)
    for b in p.iter_batches(batch_size=batch_size, columns=read, use_threads=True):
        yield pa.RecordBatch.from_arrays(
            [_conform(b.column(f.name), f.type) if f.name in read else
             pa.repeat(pa.scalar(keys.get(f.name), f.type), b.num_rows) for f in fields],
            schema=out)


def _conform(arr: pa.Array, t: pa.DataType) -> pa.Array:
    return arr if arr.type == t else arr.cast(t)


def prefetch(it: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    """Run ``it`` in a background thread, ``depth`` items ahead: Parquet decoding (which releases
    the GIL) overlaps with evaluation. Exceptions are re-raised in the consumer; closing the
    consumer stops the producer."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def work():
        try:
            for x in it:
                while not stop.is_set():
                    try:
                        q.put((x, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((done, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            q.put((done, exc))

    th = threading.Thread(target=work, name="uefast-prefetch", daemon=True)
    th.start()
    try:
        while True:
            x, exc = q.get()
            if x is done:
                if exc is not None:
                    raise exc
                return
            yield x
    finally:
        stop.set()
        while th.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                th.join(0.05)


def parquet_max(src: Source, column: str) -> int | None:
    """Largest value of an integer/float/bool column from Parquet statistics, or a one-column pass.

    Used to resolve settings that the in-memory path takes from the whole data (ERR's default
    ``lmax`` = the largest label) *before* streaming starts. ``None`` if the source is not Parquet.
    """
    if src.table is not None:
        return _scan_max(src, column)
    if not src.files:
        return None
    best = None
    for p in src.files:
        md = p.metadata
        idx = p.schema_arrow.get_field_index(column)
        if idx < 0:  # a partition column (or absent: the stream says so)
            return _scan_max(src, column)
        for rg in range(md.num_row_groups):
            col = md.row_group(rg).column(idx)
            st = col.statistics
            if col.num_values == 0:
                continue
            if st is None or not st.has_min_max:
                return _scan_max(src, column)
            v = int(st.max)
            best = v if best is None else max(best, v)
    return best


def _scan_max(src: Source, column: str) -> int | None:
    best = None
    for b in src.batches([column]):
        arr = b.column(0)
        if len(arr) - arr.null_count == 0:
            continue
        import pyarrow.compute as pc

        v = int(pc.max(arr.cast(pa.float64()) if pa.types.is_boolean(arr.type) else arr).as_py())
        best = v if best is None else max(best, v)
    return best

