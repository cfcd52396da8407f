"""What the Dask and Spark adapters share: checking the options once on the driver, and the
function that evaluates one part (whole queries) with :func:`uefast.evaluate`.

The options are ``uefast.evaluate``'s keywords, passed through unchanged (``**options``); this
module reads only those whose meaning depends on the partitioning:

* ``ties``: ``"input"`` (and ``"trec_eval"`` without a docid column, whose ties keep input order)
  needs the rows' order, which a shuffle does not keep (Dask: "not deterministic if done in
  parallel"; Spark's hash repartition likewise): refused after a shuffle unless ``order=`` names
  a column to sort each query's rows by (stable, ascending);
* ``queries="qrels"`` would give every part every qrels query: refused (as in streaming);
* ERR without ``lmax`` takes its default from the largest label of the *whole* data: resolved on
  the driver (the adapters pass the global maximum) and renamed back in the output, as
  :func:`uefast.streaming.evaluate_stream` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError

OUTPUT_FIELDS = [("system", pa.string()), ("qid", None), ("measure", pa.string()),
                 ("value", pa.float64()), ("iub", pa.float64()), ("reb", pa.float64()),
                 ("ue_v1", pa.float64()), ("ue_v2", pa.float64()), ("n_docs", pa.int64()),
                 ("n_judged", pa.int64()), ("n_rel", pa.int64())]

_ORDER_HINT = ("a shuffle on qid does not keep the rows' order (Dask and Spark shuffles are not "
               "order-preserving), so {what} has no defined meaning here: pass order='<column>' "
               "(rows of a query are sorted by it, ascending), use ties='trec_eval' with a docid "
               "column or ties='expected', or give input already clustered by qid "
               "(clustered=True, e.g. written by uefast.streaming.cluster_parquet)")


def output_schema(qid_type: pa.DataType) -> pa.Schema:
    """The per-query schema of ``uefast.evaluate`` (``data_schemas/evaluate_output.md``) with the
    qid as ``int64`` for integer ids, ``string`` otherwise."""
    if pa.types.is_dictionary(qid_type):
        qid_type = qid_type.value_type
    qt = pa.int64() if pa.types.is_integer(qid_type) else pa.string()
    return pa.schema([pa.field(n, t if t is not None else qt) for n, t in OUTPUT_FIELDS])


@dataclass
class PartSpec:
    """Everything a worker needs to evaluate a part (picklable)."""

    measures: list  # measure strings passed to uefast.evaluate (ERR lmax resolved)
    back: dict  # resolved measure string -> the user's
    options: dict  # uefast.evaluate keywords
    schema: pa.Schema
    qid: str = "qid"
    order: str | None = None
    qrels: pa.Table | None = None
    qrels_qid: str = "qid"
    canonical: list = field(default_factory=list)  # sort keys of a shuffled part (no order=)
    qrels_queries: int | None = None  # distinct queries of the whole qrels (uefast.info)


def check_options(options: dict, *, shuffled: bool, order: str | None, has_docid: bool) -> None:
    """Refuse the options a distributed evaluation cannot honour (see the module docstring)."""
    if options.get("queries", "intersect") != "intersect":
        raise InputError("distributed evaluation supports queries='intersect' only (every part "
                         "would score every qrels query); for queries='qrels' call "
                         "uefast.evaluate on one machine")
    if options.get("backend", "cpu") != "cpu":
        raise InputError(f"`backend`={options['backend']!r}: the distributed adapters run the CPU "
                         "engine on each worker")
    if not shuffled or order is not None:
        return
    ties = options.get("ties", "trec_eval")
    if ties == "input":
        raise InputError("ties='input' after a shuffle: " + _ORDER_HINT.format(what="input order"))
    if ties == "trec_eval" and not has_docid:
        raise InputError("ties='trec_eval' without a docid column breaks ties by input order; "
                         "after a shuffle: " + _ORDER_HINT.format(what="input order"))


def part_spec(measures: Any, options: dict, *, schema: pa.Schema, qrels: Any,
              order: str | None, max_label: Callable[[], int], shuffled: bool) -> PartSpec:
    """Parse the measures, resolve ERR's default lmax from ``max_label()`` (called only when
    needed) and fix the output schema; ``schema`` is the run's Arrow schema.

    A shuffled part without ``order`` is sorted canonically before evaluating: by (qid, docid),
    or without a docid column by every column. The shuffle's row order is not deterministic and
    ``ties="expected"`` sums in row order (values differ in the last bits between orders), so
    this makes every run, and every re-run of a task, give the same bits: those of
    ``uefast.evaluate`` on the input sorted the same way (``ties="trec_eval"`` values do not
    depend on the order at all)."""
    from uefast.inputs import to_arrow
    from uefast.measures import parse_measures
    from uefast.streaming._evaluate import _resolve_err

    qid = options.get("qid", "qid")
    if qid not in schema.names:
        raise InputError(f"run: missing column {qid!r}; columns are {schema.names}")
    if order is not None and order not in schema.names:
        raise InputError(f"run: missing order column {order!r}; columns are {schema.names}")
    mlist = parse_measures(measures)
    qrels_t = None
    if qrels is not None:
        qrels_t = to_arrow(qrels, "qrels")
        if qrels_t.num_rows == 0:
            raise InputError("qrels: the input has no rows")
    back: dict = {}
    if any(m.name == "ERR" and m.param("lmax") is None for m in mlist):
        if qrels_t is not None:
            label = options.get("label", "label")
            if label not in qrels_t.column_names:
                raise InputError(f"qrels: missing column {label!r}; columns are "
                                 f"{qrels_t.column_names}")
            ml = pc.max(qrels_t.column(label)).as_py()
        else:
            ml = max_label()
        mlist, back = _resolve_err(mlist, 0 if ml is None else max(int(ml), 0))
    canonical: list = []
    if shuffled and order is None:
        docid = options.get("docid", "docid")
        canonical = [qid, docid] if docid in schema.names else \
            [qid] + [c for c in schema.names if c != qid]
    nq_qrels = None
    if qrels_t is not None:
        if qid not in qrels_t.column_names:
            raise InputError(f"qrels: missing column {qid!r}; columns are {qrels_t.column_names}")
        nq_qrels = len(unique_qids(qrels_t.column(qid)))
    return PartSpec([str(m) for m in mlist], back, dict(options),
                    output_schema(schema.field(qid).type), qid=qid, order=order, qrels=qrels_t,
                    qrels_qid=qid, canonical=canonical, qrels_queries=nq_qrels)


def evaluate_part(table: pa.Table, spec: PartSpec) -> pa.Table:
    """``uefast.evaluate`` on a table of whole queries, cast to ``spec.schema``, with the
    engine call's metadata and ``uefast.part`` (:func:`uefast.distributed._meta.part_metadata`,
    merged by the aggregate); an empty part gives an empty table without metadata."""
    import uefast
    from uefast.distributed._meta import part_metadata

    if table.num_rows == 0:
        return spec.schema.empty_table()
    if spec.order is not None:
        idx = pc.sort_indices(table, sort_keys=[(spec.qid, "ascending"),
                                                (spec.order, "ascending")])
        table = table.take(idx).drop_columns([spec.order])
    elif spec.canonical:  # shuffled: rows in a canonical order, so a re-run is bit-identical
        table = table.take(pc.sort_indices(table, sort_keys=[(c, "ascending")
                                                             for c in spec.canonical]))
    qrels = spec.qrels
    if qrels is not None:  # only this part's queries: the same values, less work per part
        q = table.column(spec.qid)
        qq = qrels.column(spec.qrels_qid)
        qt, qqt = q.type, qq.type
        qt = qt.value_type if pa.types.is_dictionary(qt) else qt
        qqt = qqt.value_type if pa.types.is_dictionary(qqt) else qqt
        if pa.types.is_integer(qt) == pa.types.is_integer(qqt):  # else evaluate names the clash
            common = pa.int64() if pa.types.is_integer(qt) else pa.large_string()
            vs = unique_qids(q).cast(common)
            qrels = qrels.filter(pc.is_in(qq.cast(common), value_set=vs))
            if qrels.num_rows == 0:  # no query of this part is judged: nothing to evaluate
                return spec.schema.empty_table().replace_schema_metadata(
                    part_metadata(table, None, spec))
    res = uefast.evaluate(table, qrels, spec.measures, **spec.options)
    if spec.back:
        names = [spec.back.get(m, m) for m in res.column("measure").to_pylist()]
        res = res.set_column(res.schema.get_field_index("measure"), "measure",
                             pa.array(names, pa.string()))
    md = part_metadata(table, res, spec)
    return res.replace_schema_metadata(None).cast(spec.schema).replace_schema_metadata(md)


def check_disjoint(parts_qids: list) -> None:
    """Raise :class:`~uefast.streaming.NotClusteredError` when a qid occurs in two parts
    (``parts_qids``: the distinct qids of each part, Arrow arrays)."""
    from uefast.distributed._keyed import qid_keys
    from uefast.streaming import NotClusteredError

    arrays = [a for a in parts_qids if len(a)]
    if not arrays:
        return
    keys = np.concatenate([qid_keys(a) for a in arrays])
    part = np.repeat(np.arange(len(arrays)), [len(a) for a in arrays])
    order = np.argsort(keys, kind="stable")
    dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(dup):
        i, j = order[dup[0]], order[dup[0] + 1]
        flat = pa.chunked_array([a.cast(arrays[0].type) for a in arrays]).combine_chunks()
        raise NotClusteredError(
            f"clustered=True, but qid {flat[int(i)].as_py()!r} occurs in partitions "
            f"{int(part[i])} and {int(part[j])}: a query's rows must all be in one partition; "
            "pass clustered=False (shuffle on qid), or cluster the data with "
            "uefast.streaming.cluster_parquet and read one partition per row group")


def row_groups_disjoint(path: str, qid: str) -> bool:
    """True when the Parquet row groups under ``path`` have min/max statistics for ``qid`` whose
    [min, max] intervals are pairwise disjoint: then no qid is in two row groups (nor in two
    partitions made of whole row groups), proven from the footers alone. False when a statistic
    is missing or two intervals meet (the caller then checks the column itself)."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    bounds = []
    for f in ds.dataset(path, format="parquet").files:
        md = pq.ParquetFile(f).metadata
        try:
            col = md.schema.names.index(qid)
        except ValueError:
            return False
        for i in range(md.num_row_groups):
            st = md.row_group(i).column(col).statistics
            if md.row_group(i).num_rows == 0:
                continue
            if st is None or not st.has_min_max:
                return False
            bounds.append((st.min, st.max))
    bounds.sort()
    return all(a[1] < b[0] for a, b in zip(bounds[:-1], bounds[1:]))


def unique_qids(table_or_array: Any) -> pa.Array:
    """Distinct values of a qid column (dictionary decoded, as Arrow)."""
    a = table_or_array
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    elif not isinstance(a, pa.Array):
        a = pa.array(a)
    if pa.types.is_dictionary(a.type):
        a = a.dictionary_decode()
    return pc.unique(a)
