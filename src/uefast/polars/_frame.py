"""``uefast.polars.evaluate``: the long per-query table from a Polars DataFrame / LazyFrame."""
from __future__ import annotations

from typing import Any, Sequence

import polars as pl

from uefast.errors import InputError
from uefast.inputs import explicit_score_columns
from uefast.measures import parse_measures
from uefast.polars._exprs import build_long

__all__ = ["evaluate"]

_OUT = ("system", "qid", "measure", "value", "iub", "reb", "ue_v1", "ue_v2", "n_docs",
        "n_judged", "n_rel")


def _score_columns(schema: pl.Schema, score_columns, names) -> list[str]:
    if score_columns is not None:
        return explicit_score_columns(score_columns, list(schema), names["system"])
    if names["system"] in schema:
        return [names["score"]]
    keys = {names["qid"], names["docid"], names["label"], names["system"]}
    cols = [c for c, t in schema.items() if c not in keys and t.is_float()]
    if not cols:
        raise InputError(f"run: no score column found (floating-point columns other than "
                         f"{sorted(keys)}); columns are {list(schema)}; pass score_columns=")
    return cols


def evaluate(frame: pl.DataFrame | pl.LazyFrame, qrels: Any = None,
             measures: Any = ("nDCG@10", "AP"), *, ue: bool = True, ties: str = "trec_eval",
             reb: str = "exact", degenerate: str = "zero", rel_level: int = 1,
             negative_labels: str = "clamp", score_columns: Sequence[str] | None = None,
             qid: str = "qid", docid: str = "docid", label: str = "label", score: str = "score",
             system: str = "system", max_label: int | None = None, **trec_kw: Any):
    """Frame-level evaluation: the same long table as :func:`uefast.evaluate`, as Polars.

    LETOR style (``qrels=None``): several systems either as score columns (``score_columns``,
    default every float column that is not a key/label) or as a ``system`` column with one score
    column; ``docid`` (if present) breaks ties as trec_eval does. Algorithm: (wide input is
    unpivoted) ``group_by([system, qid]).agg(<one kernel call for all groups>)``, then the per-group
    lists of measures are exploded and rows are ordered as :func:`uefast.evaluate` orders them
    (systems, then queries, by first appearance). A ``LazyFrame`` gives a ``LazyFrame`` (one extra
    pass computes the top label when ERR has no ``lmax`` and ``max_label`` is not given).

    TREC style (``qrels`` given): delegated to :func:`uefast.evaluate` (a join against the qrels),
    returned as a ``pl.DataFrame``. Values are identical to :func:`uefast.evaluate` in both styles.
    A bad value in a DataFrame is reported as :func:`uefast.evaluate` reports it (column and row of
    the input); in a LazyFrame's result it is found at ``collect()``, named by the kernel's batch.
    """
    import uefast

    kw = dict(ue=ue, ties=ties, reb=reb, degenerate=degenerate, rel_level=rel_level,
              negative_labels=negative_labels, qid=qid, docid=docid, label=label, score=score,
              system=system)
    if qrels is not None:
        t = uefast.evaluate(frame, qrels, measures, score_columns=score_columns, **kw, **trec_kw)
        return pl.from_arrow(t)
    if trec_kw:
        raise TypeError(f"unexpected keyword arguments {sorted(trec_kw)}")
    lazy = isinstance(frame, pl.LazyFrame)
    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise InputError(f"uefast.polars.evaluate: expected a polars DataFrame or LazyFrame, got "
                         f"{type(frame).__name__}")
    if degenerate not in ("zero", "nan", "drop"):
        raise InputError(f"`degenerate` must be one of ['zero', 'nan', 'drop'], got {degenerate!r}")
    lf = frame.lazy()
    schema = lf.collect_schema()
    names = dict(qid=qid, docid=docid, label=label, score=score, system=system)
    for c in (qid, label):
        if c not in schema:
            raise InputError(f"run: missing column {c!r}; columns are {list(schema)}")
    keys = [c for c in (qid, system) if c in schema]
    nulls = lf.select(*[pl.col(c).null_count() for c in keys]).collect().row(0)
    for c, n in zip(keys, nulls):  # a null key would be a query (or system) of its own
        if n:
            first = lf.with_row_index("_r").filter(pl.col(c).is_null()).select("_r").head(1).collect().item()
            raise InputError(f"run: column {c!r} has {n} null value(s); first at row {first}")
    mlist = parse_measures(measures)
    if max_label is None and any(m.definition.takes_label_max(m) for m in mlist):
        # labels <= 0 all count as 0 (as in uefast.evaluate, whose lmax is the clamped maximum)
        max_label = max(int(lf.select(pl.col(label).cast(pl.Int64).max()).collect().item() or 0), 0)
    cols = _score_columns(schema, score_columns, names)
    has_doc = docid in schema
    lf = lf.with_row_index("_r")
    if system in schema:
        lf = lf.select("_r", pl.col(system).cast(pl.String).alias("system"), pl.col(qid),
                       pl.col(label), pl.col(cols[0]).alias("_score"),
                       *([pl.col(docid)] if has_doc else []))
        sys_rank = pl.col("_r").min().over("system")
    else:
        keep = ["_r", qid, label] + ([docid] if has_doc else [])
        lf = lf.select(*keep, *[pl.col(c) for c in cols]).unpivot(
            index=keep, on=cols, variable_name="system", value_name="_score")
        sys_rank = pl.col("system").replace_strict(cols, list(range(len(cols))),
                                                   return_dtype=pl.Int64)
    expr = build_long(label, "_score", mlist, docid=docid if has_doc else None, ties=ties, reb=reb,
                      degenerate=degenerate, rel_level=rel_level, max_label=max_label,
                      negative_labels=negative_labels, ue=ue)
    qdt = schema[qid]
    qcast = pl.Int64 if qdt.is_integer() else pl.String
    out = (lf.group_by(["system", qid]).agg(pl.col("_r").min(), expr.alias("_u"))
           .with_columns(sys_rank.alias("_sr"), pl.col("_r").min().over(qid).alias("_qr"))
           .sort(["_sr", "_qr"])
           .unnest("_u")
           .explode(["measure", "value", "iub", "reb", "ue_v1", "ue_v2", "n_rel", "_keep"]))
    if degenerate == "drop":
        out = out.filter(pl.col("_keep"))
    out = out.select(
        pl.col("system"), pl.col(qid).cast(qcast).alias("qid"), pl.col("measure"),
        "value", "iub", "reb",
        *[(pl.col(c) if ue else pl.lit(None, pl.Float64)).alias(c) for c in ("ue_v1", "ue_v2")],
        "n_docs", "n_judged", "n_rel")
    if lazy:
        return out
    try:
        return out.collect()
    except InputError:
        # the kernel saw unpivoted groups: its message names the internal score column and a
        # row of its batch. The in-memory checks name the user's column and row: raise theirs.
        uefast.evaluate(frame.to_arrow(), None, mlist, score_columns=score_columns, **kw)
        raise
