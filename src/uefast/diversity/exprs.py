"""Diversity measures as Polars expressions over a frame with a per-document aspect-grade list.

Each row is a judged candidate document of a query (LETOR style: the group's rows are its judged
set), with a list column of grades, one per aspect (the same aspect order in every row of a
query), and a score::

    import polars as pl
    from uefast.diversity import exprs as dx
    df.group_by("qid").agg(dx.measure("alpha-nDCG@20", "grades", "score", docid="docid"),
                           dx.measure("RBU@20", "grades", "score", stat="ue_v2").alias("rbu_v2"))
    df.group_by("qid").agg(dx.measures(["alpha-nDCG@20", "RBU@20"], "grades", "score",
                                       docid="docid", stats=["value", "ue_v2"]))

``stat``: ``"value"``, ``"iub"``, ``"reb"``, ``"ue_v1"``, ``"ue_v2"``. Ranking: score descending,
then docid descending by bytes (trec_eval; without ``docid`` ties keep row order). Aspects: an
aspect with no grade >= 1 in the query is dropped; uniform weights over the others. Negative
grades count as 0.

Evaluation: Polars hands the expression one list element per group, in one call. The groups are
turned, with vectorised Arrow/NumPy operations only, into a diversity qrels table (group index
as ``qid``, list position as ``subtopic``) and a run table, compiled and ranked as
:func:`uefast.diversity.evaluate` does (:func:`~uefast.diversity.compile_qrels`,
:func:`~uefast.diversity.evaluation.rank_run`), and scored for all groups at once by
:func:`~uefast.diversity.evaluation.score_batch`: the intent-aware families in one Numba call,
ndeval's names by the batch ndeval pass. The numbers are therefore those of
:func:`uefast.diversity.evaluate` on the same judgments and ranking (tested). An empty group gives
NaN; a group whose grade lists differ in length, a null grade, score or docid, a NaN
score or a docid repeated within a group is an :class:`~uefast.errors.InputError`. Polars may
run several expressions at once on its threads: the compile-rank-score step holds
:data:`uefast.engine.KERNEL_LOCK` (the Numba passes already use every core).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from uefast.diversity.registry import parse_measure, parse_measures
from uefast.errors import InputError
from uefast.ue import ue_scores

__all__ = ["measure", "measures", "score_groups"]

STATS = ("value", "iub", "reb", "ue_v1", "ue_v2")


def _list_array(s) -> pa.Array:
    a = s.to_arrow() if isinstance(s, pl.Series) else s
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
    return a


def _no_nulls(arr: pa.Array, what: str, rows=None) -> None:
    if arr.null_count:
        i = int(np.flatnonzero(np.asarray(arr.is_null()))[0])
        where = f"row {i}" if rows is None else f"row {int(rows[i])}"
        raise InputError(f"diversity expression: {what} is null ({where} of the flattened groups)")


def _tables(a: pa.Array, has_doc: bool):
    """(run table, qrels table, number of groups) of a ``List(Struct{g, s[, d]})`` array."""
    G = len(a)
    st = a.flatten()
    parent = np.asarray(pc.list_parent_indices(a), np.int64)
    nrow = parent.size
    sizes = np.bincount(parent, minlength=G)
    gstart = np.r_[0, np.cumsum(sizes)][:-1]
    within = np.arange(nrow, dtype=np.int64) - gstart[parent]  # row's position in its group
    grades, score = st.field("g"), st.field("s")
    _no_nulls(grades, "a grade list")
    _no_nulls(score, "a score")
    sc = np.asarray(score.cast(pa.float64()), np.float64)
    if np.isnan(sc).any():
        raise InputError(f"diversity expression: score is NaN (row {int(np.flatnonzero(np.isnan(sc))[0])} "
                         "of the flattened groups)")
    glen = np.asarray(pc.list_value_length(grades), np.int64)
    first = np.r_[0, np.cumsum(sizes)][:-1]
    if nrow:
        bad = np.flatnonzero(glen != glen[first[parent]])
        if bad.size:
            i = int(bad[0])
            raise InputError(f"diversity expression: group {int(parent[i])} has grade lists of "
                             f"lengths {int(glen[first[parent[i]]])} and {int(glen[i])} (row {i} of "
                             "the flattened groups); every row of a query lists the same aspects")
    gval = grades.flatten()
    _no_nulls(gval, "a grade")
    if not (pa.types.is_integer(gval.type) or gval.type == pa.null()):
        raise InputError(f"diversity expression: grades must be integers, got {gval.type}")
    gpar = np.asarray(pc.list_parent_indices(grades), np.int64)  # row of each grade
    sub = np.arange(gpar.size, dtype=np.int64) - np.r_[0, np.cumsum(glen)][:-1][gpar]
    qid = pc.cast(pa.array(parent), pa.string())
    if has_doc:
        doc = st.field("d").cast(pa.string())
        _no_nulls(doc, "a docid")
        _check_unique(parent, doc)
    else:  # row position, zero-padded: ascending bytes = row order
        doc = pc.utf8_lpad(pc.cast(pa.array(within), pa.string()), 12, "0")
    # rows without aspects keep their query (and document) as judged: one inactive aspect
    empty = np.flatnonzero(glen == 0)
    take = np.r_[gpar, empty]
    qrels = pa.table({"qid": qid.take(pa.array(take)), "docid": doc.take(pa.array(take)),
                      "subtopic": pc.cast(pa.array(np.r_[sub, np.zeros(empty.size, np.int64)]), pa.string()),
                      "label": pa.array(np.r_[np.asarray(gval.cast(pa.int64()), np.int64) if gval.type != pa.null()
                                              else np.zeros(gpar.size, np.int64),
                                              np.zeros(empty.size, np.int64)])})
    run = {"qid": qid, "docid": doc, "score": pa.array(sc)}
    if not has_doc:  # ties keep row order: the rank after (score descending, row)
        o = np.lexsort((within, -sc, parent))
        rank = np.empty(nrow, np.int64)
        rank[o] = np.arange(nrow) - gstart[parent[o]]  # sorted by group first: contiguous
        run["rank"] = pa.array(rank)
    return pa.table(run), qrels, G


def _check_unique(parent: np.ndarray, doc: pa.Array) -> None:
    enc = pc.dictionary_encode(doc)
    code = np.asarray(enc.indices, np.int64)
    key = parent * max(len(enc.dictionary), 1) + code
    o = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[o][1:] == key[o][:-1])
    if dup.size:
        i = int(o[dup[0] + 1])
        raise InputError(f"diversity expression: docid {doc[i].as_py()!r} appears twice in group "
                         f"{int(parent[i])} (row {i} of the flattened groups)")


def score_groups(s, mlist, has_doc: bool, stats: Sequence[str]) -> dict:
    """{stat: (groups x measures) array} of the parsed measures ``mlist`` on a
    ``List(Struct{g, s[, d]})`` Series or Arrow array, one element per group (module
    docstring); NaN for an empty group."""
    from uefast.diversity.evaluation import rank_run, score_batch
    from uefast.diversity.qrels import compile_qrels
    from uefast.engine import KERNEL_LOCK

    run, qrels, G = _tables(_list_array(s), has_doc)
    M = len(mlist)
    out = {st: np.full((G, M), np.nan) for st in stats}
    if run.num_rows == 0:
        return out
    with KERNEL_LOCK:  # Polars calls expressions from several threads; the kernels use every core
        topics = compile_qrels(qrels)
        _, _, batch, _ = rank_run(run, topics, "trec_eval" if has_doc else "rank")
        val, iub, reb, low, _ = score_batch(batch, mlist)
    grp = np.asarray(list(topics), np.int64)[batch.seg_topic]
    got = {"value": val, "iub": iub, "reb": reb}
    if any(st.startswith("ue") for st in stats):
        got["ue_v1"], got["ue_v2"] = ue_scores(val - low, iub - low, reb - low)
    for st in stats:
        out[st][grp] = got[st]
    return out


def _packed(grades: str, score: str, docid: str | None) -> pl.Expr:
    cols = [pl.col(grades).alias("g"), pl.col(score).alias("s")]
    if docid is not None:
        cols.append(pl.col(docid).cast(pl.String).alias("d"))
    return pl.struct(cols).implode()


def _check_stats(stats) -> tuple:
    stats = (stats,) if isinstance(stats, str) else tuple(stats)
    if not stats or any(st not in STATS for st in stats):
        raise InputError(f"`stat`/`stats` must be in {STATS}, got {stats!r}")
    return stats


def measure(name: str, grades: str = "grades", score: str = "score", *, docid: str | None = None,
            stat: str = "value") -> pl.Expr:
    """One diversity measure (a string of :mod:`uefast.diversity.registry`) per group, as a
    Float64 expression named ``name`` (``stat`` other than value: ``name:stat``); all groups in
    one pass (module docstring)."""
    (stat,) = _check_stats(stat)
    m = parse_measure(name)

    def fn(s: pl.Series) -> pl.Series:
        return pl.Series(s.name, score_groups(s, [m], docid is not None, (stat,))[stat][:, 0],
                         dtype=pl.Float64)

    alias = str(m) if stat == "value" else f"{m}:{stat}"
    return (_packed(grades, score, docid)
            .map_batches(fn, is_elementwise=True, returns_scalar=True, return_dtype=pl.Float64)
            .alias(alias))


def measures(names, grades: str = "grades", score: str = "score", *, docid: str | None = None,
             stats: Sequence[str] = ("value",)) -> pl.Expr:
    """Several measures and stats from one pass, as a Struct per group named ``measures`` with
    one Float64 field per (measure, stat): ``name`` when ``stats`` is ``("value",)``, else
    ``name:stat``."""
    stats = _check_stats(stats)
    mlist = parse_measures(names)
    only_value = stats == ("value",)
    fields = [(str(m) if only_value else f"{m}:{st}", j, st) for j, m in enumerate(mlist) for st in stats]
    dtype = pl.Struct({f: pl.Float64 for f, _, _ in fields})

    def fn(s: pl.Series) -> pl.Series:
        r = score_groups(s, mlist, docid is not None, stats)
        return pl.DataFrame({f: pl.Series(f, r[st][:, j], dtype=pl.Float64)
                             for f, j, st in fields}).to_struct(s.name)

    return (_packed(grades, score, docid)
            .map_batches(fn, is_elementwise=True, returns_scalar=True, return_dtype=dtype)
            .alias("measures"))
