"""``evaluate_stream``: the core evaluation over a stream of complete-query chunks."""
from __future__ import annotations

import json
import os
from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError, RowError
from uefast.measures import Measure
from uefast.options import EvalOptions
from uefast.streaming._source import open_source, parquet_max
from uefast.streaming._split import iter_query_chunks

__all__ = ["evaluate_stream"]

_AGG_COLS = ("value", "iub", "reb", "ue_v1", "ue_v2")


def _takes_label_max(m: Measure) -> bool:
    """A measure whose grade scale defaults to the data's largest label (ERR, nERR without
    ``lmax``: state ``label_max`` of its family)."""
    return m.definition.takes_label_max(m)


def _resolve_err(mlist: list[Measure], max_label: int | None) -> tuple[list[Measure], dict]:
    """ERR / nERR without lmax -> lmax=max(max_label, 1), and the map back to the user's names."""
    out, back = [], {}
    for m in mlist:
        if _takes_label_max(m):
            lm = max(int(max_label), 1)
            r = Measure(m.name, m.cutoff, tuple((k, lm if k == "lmax" else v) for k, v in m.params))
            if r in mlist or r in out:
                raise InputError(f"measures {m} and {r} coincide on this data; ask for one of them")
            back[str(r)] = str(m)
            out.append(r)
        else:
            out.append(m)
    return out, back


def _needed_columns(schema: pa.Schema, trec: bool, score_columns, names) -> list[str] | None:
    from uefast._tables import letor_score_columns as _letor_score_columns

    have = set(schema.names)
    if trec:
        cols = [names["qid"], names["docid"], names["score"], names["system"]]
    else:
        cols = [names["qid"], names["label"], names["docid"], names["system"]]
        cols += _letor_score_columns(schema.empty_table(), score_columns, names)
    return [c for c in dict.fromkeys(cols) if c in have]


def _unique_values(col: pa.ChunkedArray) -> pa.Array:
    """The distinct values of a column in order of first appearance; of a dictionary column its
    distinct *values* (a dictionary may list one value at two indices)."""
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = pc.unique(arr).dictionary_decode()
    return pc.unique(arr)


class _Order:
    """Global order of systems and queries, to sort a streamed result like the in-memory one."""

    def __init__(self, qrels_keys: pa.Array | None) -> None:
        self.systems: dict[str, int] = {}
        self.q_base = 0
        self.qrels_keys = qrels_keys

    def register(self, names: Iterable[str]) -> None:
        """Systems in order of first appearance in the input (as the in-memory path orders
        them), whether or not a chunk yields rows for them (all dropped, or no query in qrels)."""
        for s in names:
            self.systems.setdefault(s, len(self.systems))

    def register_column(self, col: pa.ChunkedArray) -> int:
        """Register the systems of ``col``; return how many distinct ones it has."""
        u = _unique_values(col)
        self.register(u.cast(pa.string()).to_pylist())
        return len(u)

    def keys(self, res: pa.Table, chunk_qids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        self.register(res.column("system").unique().to_pylist())
        srank = pc.index_in(res.column("system"),
                            value_set=pa.array(list(self.systems), pa.string())).to_numpy()
        if self.qrels_keys is not None:
            qidx = pc.index_in(res.column("qid"), value_set=self.qrels_keys).to_numpy()
        else:
            q = chunk_qids.cast(res.schema.field("qid").type)
            qidx = pc.index_in(res.column("qid"), value_set=q).to_numpy() + self.q_base
            self.q_base += len(chunk_qids)
        return srank.astype(np.int64), qidx.astype(np.int64)


class _Aggregator:
    """Running sum and count per (system, measure), NaN skipped (as ``uefast.aggregate``), and
    the first query index of each, to order them as ``uefast.aggregate`` does (first appearance
    in the result: system, then first query, then measure -- with ``degenerate="drop"`` a
    system's first query may lack a measure)."""

    def __init__(self) -> None:
        self.acc: dict[tuple, np.ndarray] = {}
        self.first_q: dict[tuple, int] = {}

    def add(self, res: pa.Table, srank: np.ndarray, qidx: np.ndarray, midx: np.ndarray) -> None:
        import polars as pl

        df = pl.from_arrow(res.select(["system", "measure", *_AGG_COLS])).with_columns(
            pl.Series("_s", srank), pl.Series("_q", qidx), pl.Series("_m", midx))
        aggs = [pl.len().alias("n"), pl.col("_q").min().alias("first_q")]
        for c in _AGG_COLS:
            e = pl.col(c).fill_nan(None)
            aggs += [e.sum().alias(c), e.count().alias(c + "_n")]
        for row in df.group_by(["_s", "_m", "system", "measure"]).agg(aggs).iter_rows(named=True):
            key = (row["_s"], row["_m"], row["system"], row["measure"])
            v = np.array([row["n"]] + [x for c in _AGG_COLS for x in (row[c], row[c + "_n"])],
                         np.float64)
            self.acc[key] = self.acc[key] + v if key in self.acc else v
            self.first_q[key] = min(self.first_q.get(key, row["first_q"]), row["first_q"])

    def table(self, metadata) -> pa.Table:
        keys = sorted(self.acc, key=lambda k: (k[0], self.first_q[k], k[1]))
        cols: dict[str, Any] = {"system": [k[2] for k in keys], "measure": [k[3] for k in keys],
                                "n_queries": [int(self.acc[k][0]) for k in keys]}
        for i, c in enumerate(_AGG_COLS):
            s = np.array([self.acc[k][1 + 2 * i] for k in keys])
            n = np.array([self.acc[k][2 + 2 * i] for k in keys])
            with np.errstate(invalid="ignore", divide="ignore"):
                cols[c] = pa.array(np.where(n > 0, s / np.maximum(n, 1), np.nan),
                                   from_pandas=True)
        t = pa.table(cols, schema=pa.schema(
            [pa.field("system", pa.string()), pa.field("measure", pa.string()),
             pa.field("n_queries", pa.int64())] + [pa.field(c, pa.float64()) for c in _AGG_COLS]))
        return t.replace_schema_metadata(metadata)


#: the uefast.info key counting (system, query) pairs without run rows, by style
_MISSING = {True: "system_query_pairs_without_run_rows", False: "missing_system_queries"}


def _sum_info(acc: dict, info: dict) -> None:
    for k, v in info.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            acc[k] = acc.get(k, 0) + v


def evaluate_stream(source: Any, qrels: Any = None,
                    measures: str | Measure | Iterable[str | Measure] = ("nDCG@10", "AP"), *,
                    out: str | os.PathLike | None = None, aggregate: bool = False,
                    batch_size: int = 1 << 20, progress: bool = False,
                    max_label: int | None = None, ue: bool = True, ties: str = "trec_eval",
                    reb: str = "exact", degenerate: str = "zero", rel_level: int = 1,
                    queries: str = "intersect", negative_labels: str = "clamp",
                    score_columns: Sequence[str] | None = None, qid: str = "qid",
                    docid: str = "docid", label: str = "label", score: str = "score",
                    system: str = "system") -> pa.Table:
    """Evaluate a run too large for memory, query by query, with bounded memory.

    ``source``: a Parquet file or directory path, ``pq.ParquetFile``, ``pyarrow.dataset``
    dataset, ``pa.RecordBatchReader``, ``pa.Table`` or an iterator of RecordBatches/Tables. Its
    rows must be clustered by ``qid`` (each query's rows contiguous; queries may span batches,
    row groups and files); otherwise :class:`~uefast.streaming.NotClusteredError` names the qid
    and row (fix: :func:`uefast.streaming.cluster_parquet`). ``qrels`` (TREC style) is held in
    memory and sliced per chunk; only ``queries="intersect"`` is supported.

    Algorithm: read ``batch_size``-row batches; :func:`~uefast.streaming.iter_query_chunks` holds
    back the trailing (possibly incomplete) query and releases chunks of >= ``batch_size`` rows of
    complete queries; each chunk goes through :func:`uefast.evaluate` with the same settings.
    Settings the in-memory path takes from the whole data are fixed up front: ERR's default
    ``lmax`` = ``max_label`` or the largest label (qrels, Parquet statistics, or a one-column
    pass); for other iterators ERR without lmax needs ``max_label``.

    Returns the same long table as :func:`uefast.evaluate` (identical values, row order and
    metadata; ``uefast.info`` adds ``streaming``), or, with ``out`` (a Parquet path, written
    incrementally in stream order) or ``aggregate=True``, the per (system, measure) means of
    :func:`uefast.aggregate` accumulated on the fly (equal up to floating summation order).
    ``progress=True`` prints rows, queries and rows/s to stderr.
    """
    import uefast
    from uefast._progress import Progress
    from uefast.inputs import label_array, to_arrow
    from uefast.engine import group_keys
    from uefast.engine import KERNEL_LOCK
    from uefast._tables import qrels_docids

    if queries != "intersect":
        raise InputError("streaming supports queries='intersect' only; for queries='qrels' call "
                         "uefast.evaluate, which reads the source whole into memory")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"`batch_size` must be a positive integer, got {batch_size!r}")
    names = dict(qid=qid, docid=docid, label=label, score=score, system=system)
    # the options validated once, as uefast.evaluate does (each chunk re-reads them)
    mlist = list(EvalOptions(measures=measures, ue=ue, ties=ties, reb=reb, degenerate=degenerate,
                             rel_level=rel_level, queries=queries, negative_labels=negative_labels,
                             score_columns=score_columns, columns=names).validated().measures)
    from uefast.tbg_lengths import refuse_streamed

    refuse_streamed(mlist)
    trec = qrels is not None
    if trec:
        from uefast._tables import check_trec_score_columns

        check_trec_score_columns(score_columns)
    src = open_source(source, int(batch_size))
    need_err = any(_takes_label_max(m) for m in mlist)
    qrels_t = q_sorted = q_off = q_keys = None
    if trec:
        qrels_t = to_arrow(qrels, "qrels")
        if qrels_t.num_rows == 0:
            raise InputError("qrels: the input has no rows")
        from uefast.inputs import column

        q_lab = label_array(column(qrels_t, label, "qrels"), label, "qrels", negative_labels)
        if max_label is None:
            max_label = int(q_lab.max())
        q_qid = column(qrels_t, qid, "qrels")
        g = group_keys(q_qid, qid, "qrels")
        # the whole qrels is checked here, as in memory: a chunk sees only its queries' rows
        qrels_docids(g, q_qid, column(qrels_t, docid, "qrels"), docid)
        q_sorted = qrels_t.take(pa.array(g.perm)) if g.has_perm else qrels_t
        q_off, q_keys = g.offsets, g.keys
        if pa.types.is_dictionary(q_keys.type):
            q_keys = q_keys.dictionary_decode()
    elif need_err and max_label is None:
        if label not in src.schema.names:
            raise InputError(f"run: missing column {label!r}; columns are {src.schema.names}")
        max_label = parquet_max(src, label)
        if max_label is None:
            raise InputError("ERR without lmax takes lmax from the largest label of the whole "
                             "data, unknown for a stream read once: write ERR(lmax=...), e.g. "
                             "ERR(lmax=4)@20, or pass max_label=... to "
                             "uefast.streaming.evaluate_stream")
    run_mlist, back = _resolve_err(mlist, max_label) if need_err else (mlist, {})
    if trec:  # the measures checked against the whole qrels, as in memory (a chunk sees a part)
        from uefast.engine import plan_measures

        plan_measures(run_mlist, rel_level=rel_level, reb=reb, max_label=max(max_label, 0))
    cols = _needed_columns(src.schema, trec, score_columns, names)
    order_keys = None
    if trec:
        order_keys = q_keys.cast(pa.int64()) if pa.types.is_integer(q_keys.type) else \
            q_keys.cast(pa.string())
    order = _Order(order_keys)
    agg = _Aggregator() if (aggregate or out is not None) else None
    kw = dict(ue=ue, ties=ties, reb=reb, degenerate=degenerate, rel_level=rel_level,
              negative_labels=negative_labels, qid=qid, docid=docid, label=label, score=score,
              system=system)
    if trec:
        kw["queries"] = queries
    else:
        kw["score_columns"] = [c for c in cols if c not in (qid, label, docid, system)] \
            if score_columns is None and system not in cols else score_columns
    long_format = system in cols
    if not long_format and kw.get("score_columns") is not None:
        order.register(kw["score_columns"])
    meas_names = pa.array([str(m) for m in mlist], pa.string())
    run_names = pa.array([str(m) for m in run_mlist], pa.string())
    parts: list[pa.Table] = []
    part_keys: list[tuple[np.ndarray, ...]] = []
    info: dict = {}
    dropped: list = []
    meta = None
    writer = None
    stats: dict = {}
    pairs_with_rows = n_queries = 0  # (system, query) pairs with run rows; queries (LETOR)
    row_base = 0  # input row of the chunk's first row (chunks: contiguous, in input order)
    bar = Progress(total_rows=src.total_rows, enabled=progress)
    try:
        for chunk in iter_query_chunks(src.batches(cols), qid, int(batch_size), stats):
            base, row_base = row_base, row_base + chunk.num_rows
            qcol = chunk.column(qid)
            chunk_qids = _unique_values(qcol)
            ns_c = order.register_column(chunk.column(system)) if long_format else 1
            qr, nq_c = None, len(chunk_qids)
            if trec:
                qr, nq_c = _qrels_subset(q_sorted, q_off, q_keys, chunk_qids)
                if qr.num_rows == 0:
                    # no query of the chunk is judged: evaluated all the same, against the first
                    # judged query (none of the chunk's), so that its rows are checked as in
                    # memory and counted in uefast.info; it gives no output row
                    qr, nq_c = q_sorted.slice(0, int(q_off[1])), 1
            try:
                with KERNEL_LOCK:
                    res = uefast.evaluate(chunk, qr, run_mlist, **kw)
            except RowError as exc:  # rows of the chunk -> rows of the input
                if exc.what != "run":
                    raise
                raise exc.shifted(base) from None
            md = res.schema.metadata
            chunk_info = json.loads(md[b"uefast.info"])
            _sum_info(info, chunk_info)
            if _MISSING[trec] in chunk_info:  # pairs with run rows: those of the chunk's grid
                pairs_with_rows += ns_c * nq_c - chunk_info[_MISSING[trec]]
            n_queries += nq_c
            chunk_dropped = json.loads(md[b"uefast.dropped"])
            if meta is None:
                settings = json.loads(md[b"uefast.settings"])
                settings["measures"] = [str(m) for m in mlist]
                meta = {b"uefast.version": md[b"uefast.version"],
                        b"uefast.settings": json.dumps(settings).encode()}
            midx = pc.index_in(res.column("measure"), value_set=run_names).to_numpy()
            if back:
                res = res.set_column(res.schema.get_field_index("measure"), "measure",
                                     meas_names.take(pa.array(midx)))
            res = res.replace_schema_metadata(None)
            q_base = order.q_base
            srank, qidx = order.keys(res, chunk_qids)
            if chunk_dropped:
                dropped += _dropped_keys(chunk_dropped, order, q_base, chunk_qids, run_names,
                                         meas_names, res.schema.field("qid").type)
            if agg is not None:
                agg.add(res, srank, qidx, midx)
            if out is not None:
                if writer is None:
                    import pyarrow.parquet as pq

                    # the metadata (row accounting included) is added when the stream has
                    # ended; without the stored Arrow schema it is what readers see
                    writer = pq.ParquetWriter(os.fspath(out), res.schema, store_schema=False)
                writer.write_table(res)
            elif not aggregate:
                parts.append(res)
                part_keys.append((srank, qidx, midx.astype(np.int64)))
            bar.update(stats["rows"], stats["queries"])
    except BaseException:
        if writer is not None:
            writer.close()
        raise
    finally:
        bar.close(stats.get("rows", 0), stats.get("queries", 0))
    if meta is None:
        raise InputError("run: the input has no rows")
    if _MISSING[trec] in info:  # pairs without run rows: of the whole systems x queries grid
        ns = len(order.systems) if long_format else 1
        info[_MISSING[trec]] = ns * (len(q_keys) if trec else n_queries) - pairs_with_rows
    info["streaming"] = {"batches": stats["batches"], "queries": stats["queries"]}
    if trec:  # each chunk counted the qrels rows of its own queries
        info["qrels_rows_in"] = qrels_t.num_rows
    meta[b"uefast.info"] = json.dumps(info).encode()
    dropped.sort(key=lambda d: d[0])
    meta[b"uefast.dropped"] = json.dumps([d[1] for d in dropped]).encode()
    if writer is not None:
        writer.add_key_value_metadata({k.decode(): v.decode() for k, v in meta.items()})
        writer.close()
    if agg is not None:
        return agg.table(meta)
    table = pa.concat_tables(parts)
    s, q, m = (np.concatenate(k) for k in zip(*part_keys))
    perm = np.lexsort((m, q, s))
    return table.take(pa.array(perm)).replace_schema_metadata(meta)


def _qrels_subset(q_sorted: pa.Table, q_off: np.ndarray, q_keys: pa.Array,
                  chunk_qids: pa.Array) -> tuple[pa.Table, int]:
    """Rows of the qrels (clustered by qid) whose qid is in ``chunk_qids``, and how many qids."""
    if pa.types.is_integer(q_keys.type) and pa.types.is_integer(chunk_qids.type):
        a, b = chunk_qids.cast(pa.int64()), q_keys.cast(pa.int64())
    elif pa.types.is_integer(q_keys.type) != pa.types.is_integer(chunk_qids.type):
        raise InputError(f"mismatched dtypes: run column qid is {chunk_qids.type} but qrels "
                         f"column qid is {q_keys.type}; cast one of them")
    else:
        a, b = chunk_qids.cast(pa.large_string()), q_keys.cast(pa.large_string())
    codes = pc.index_in(a, value_set=b).drop_null().to_numpy().astype(np.int64)
    codes.sort()
    starts, ends = q_off[codes], q_off[codes + 1]
    lens = ends - starts
    idx = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + \
        np.arange(int(lens.sum()))
    return q_sorted.take(pa.array(idx)), len(codes)


def _dropped_keys(rows: list, order: _Order, q_base: int, chunk_qids: pa.Array,
                  run_names: pa.Array, meas_names: pa.Array, qtype) -> list:
    """``[((system rank, query index, measure index), [system, qid, measure])]`` of a chunk."""
    order.register(r[0] for r in rows)  # a system whose every row of the chunk was dropped
    qs = pa.array([r[1] for r in rows]).cast(qtype)
    ms = pc.index_in(pa.array([r[2] for r in rows], pa.string()), value_set=run_names).to_numpy()
    if order.qrels_keys is not None:
        qi = pc.index_in(qs, value_set=order.qrels_keys).to_numpy()
    else:
        qi = pc.index_in(qs, value_set=chunk_qids.cast(qtype)).to_numpy() + q_base
    return [((order.systems[r[0]], int(q), int(m)), [r[0], r[1], meas_names[int(m)].as_py()])
            for r, q, m in zip(rows, qi, ms)]
