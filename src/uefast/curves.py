"""Interpolated precision-recall curves: precision at standard recall levels (the textbook's
11-point curve), per query and averaged per system, exactly as trec_eval's ``iprec_at_recall``
and ``11pt_avg``.

Definition (trec_eval ``m_iprec_at_recall.c``; Manning, Raghavan & Schütze, *Introduction to
Information Retrieval* (2008), §8.4; Baeza-Yates & Ribeiro-Neto, *Modern IR*, §3.2): for a
query with R relevant documents and a ranking of n retrieved documents, ``rsf(i)`` the
relevant documents among the first i,

    iprec(f) = max { rsf(i) / i : 1 <= i <= n, rsf(i) >= c(f) }     (0 if there is none)

where c(f), the number of relevant documents recall f needs, is ``lround(f · R)`` in
trec_eval 10 and ``(long)(f · R + 0.9)`` in trec_eval 9.x (``version``); a query without any
relevant document has 0 everywhere. Rankings are trec_eval's: score descending, ties by docno
descending (trec_eval 9.x compares scores as float32). Computed by the trec_eval emulation's
own kernel (:func:`uefast.trec_eval.kernels_cut.iprec_at_recall`) on its ranked lists.

Tables: data_schemas/curves.md.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from uefast.errors import InputError

__all__ = ["STANDARD_RECALL_LEVELS", "interpolated_precision", "mean_curve",
           "eleven_point_average"]

#: 0.0, 0.1, ..., 1.0: trec_eval's default cutoffs of iprec_at_recall and 11pt_avg.
STANDARD_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_VERSIONS = ("10.0", "9.0.8")


def _levels(recall_levels) -> np.ndarray:
    if recall_levels is None:
        return np.asarray(STANDARD_RECALL_LEVELS, np.float64)
    try:
        values = list(recall_levels)
    except TypeError:
        raise InputError(f"`recall_levels` must be a sequence of numbers in [0, 1]; got "
                         f"{recall_levels!r}") from None
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 <= v <= 1.0:
            raise InputError(f"`recall_levels` must hold numbers in [0, 1]; got {v!r}")
    lv = np.sort(np.asarray(values, np.float64))
    if lv.size == 0 or np.unique(lv).size != lv.size:
        raise InputError(f"`recall_levels` must be non-empty without repeats; got {recall_levels!r}")
    return lv


def _systems(run: pa.Table, system: str) -> list[tuple[str, pa.Table]]:
    """The run split by its ``system`` column (first-appearance order), or one system "run"."""
    import pyarrow.compute as pc

    from uefast.inputs import column

    if system not in run.column_names:
        return [("run", run)]
    col = column(run, system, "run")
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = col.cast(pa.string())
    names = pc.unique(col).to_pylist()
    return [(n, run.filter(pc.equal(col, n))) for n in names]


def interpolated_precision(
    run: Any,
    qrels: Any,
    *,
    recall_levels: Sequence[float] | None = None,
    relevance_level: int = 1,
    version: str = "10.0",
    system: str = "system",
) -> pa.Table:
    """Interpolated precision at recall levels, per system and query (the module's formula).

    Parameters
    ----------
    run
        A run table (``qid``, ``docid``, ``score`` and optionally ``system``; Arrow, Polars,
        pandas, dict or Parquet path) or TREC run file path(s) (one system per ``runid``).
    qrels
        A qrels table (``qid``, ``docid``, ``label``) or a qrels file (TREC text or a table
        file), as :func:`uefast.evaluate` takes them.
    recall_levels
        Recall fractions in [0, 1] (default :data:`STANDARD_RECALL_LEVELS`, the 11 points);
        sorted ascending.
    relevance_level
        A document is relevant when its label >= this (trec_eval ``-l``).
    version
        ``"10.0"`` or ``"9.0.8"``: trec_eval's rounding of f · R (and float32 scores in 9.x).

    Returns
    -------
    pyarrow.Table
        ``system``, ``qid``, ``recall``, ``precision``: one row per (system, query, level) for
        the queries that have both results and qrels (trec_eval's evaluated topics), queries
        in trec_eval's order (byte order of qid), levels ascending. Equal to trec_eval's
        per-topic ``iprec_at_recall_<level>`` values.
    """
    from uefast.inputs import check_same_kind, column, numeric_array, text_array
    from uefast.io.tables import qrels_from, run_from
    from uefast.trec_eval import QrelsIndex
    from uefast.trec_eval.kernels_cut import iprec_at_recall
    from uefast.trec_eval.prepare import prepare

    levels = _levels(recall_levels)
    if version not in _VERSIONS:
        raise InputError(f"`version` must be one of {_VERSIONS}; got {version!r}")
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, numbers.Integral):
        raise InputError(f"`relevance_level` must be an integer; got {relevance_level!r}")
    run_t, qrels_t = run_from(run), qrels_from(qrels)
    for key in ("qid", "docid"):
        check_same_kind(column(run_t, key, "run"), column(qrels_t, key, "qrels"), key, "run",
                        "qrels")
    column(run_t, "score", "run")
    column(qrels_t, "label", "qrels")
    qi = QrelsIndex.build(qrels_t)
    v10 = version == "10.0"
    parts = {"system": [], "qid": [], "precision": []}
    for name, part in _systems(run_t, system):
        prep = prepare(part, qi, float32_scores=not v10, level=int(relevance_level))
        if not prep.qids:
            raise InputError(f"run: system {name!r} has no topic with both results and qrels")
        vals = iprec_at_recall(prep.rel, prep.off, _num_rel(prep, int(relevance_level)),
                               int(relevance_level), levels, v10)
        parts["system"] += [name] * vals.size
        parts["qid"] += [q for q in prep.qids for _ in range(levels.size)]
        parts["precision"].append(vals.reshape(-1))
    n = len(parts["qid"])
    return pa.table({
        "system": text_array(parts["system"]),
        "qid": text_array(parts["qid"]),
        "recall": numeric_array(np.tile(levels, n // levels.size)),
        "precision": numeric_array(np.concatenate(parts["precision"])),
    })


def _num_rel(prep, level: int) -> np.ndarray:
    """Relevant documents per evaluated topic (label >= level), as trec_eval counts them."""
    lv = max(level, 0)
    rl = prep.rel_levels
    return rl[:, lv:].sum(axis=1) if lv < rl.shape[1] else np.zeros(len(prep.qids), np.int64)


def _check_curves(curves: pa.Table) -> pa.Table:
    for c in ("system", "qid", "recall", "precision"):
        if c not in curves.column_names:
            raise InputError(f"curves: missing column {c!r}; columns are {curves.column_names} "
                             "(pass the table of interpolated_precision)")
    return curves


def mean_curve(curves: pa.Table) -> pa.Table:
    """The per-system curve: mean interpolated precision over queries at each recall level.

    Returns ``system``, ``recall``, ``precision``, ``n_queries`` (in order of first appearance:
    for :func:`interpolated_precision`'s table, systems in input order, levels ascending); trec_eval's summary ``iprec_at_recall_<level>`` values (without
    ``-c``), up to the order of the floating-point sum."""
    import polars as pl

    df = pl.from_arrow(_check_curves(curves))
    out = df.group_by(["system", "recall"], maintain_order=True).agg(
        pl.col("precision").mean(), pl.len().cast(pl.Int64).alias("n_queries"))
    return out.to_arrow()


def eleven_point_average(curves: pa.Table) -> pa.Table:
    """Per (system, query): the mean interpolated precision over the curve's recall levels,
    trec_eval's ``11pt_avg`` with the same levels (summed from the highest level down, as
    ``m_11pt_avg.c`` does, then divided by their number). Returns ``system``, ``qid``,
    ``value``; the per-system average is its mean over queries."""
    import polars as pl

    df = pl.from_arrow(_check_curves(curves))
    out = (df.group_by(["system", "qid"], maintain_order=True)
           .agg(pl.col("precision").sort_by("recall", descending=True).cum_sum().last()
                / pl.len()).rename({"precision": "value"}))
    return out.to_arrow()
