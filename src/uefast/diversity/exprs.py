"""Diversity measures as Polars expressions over a frame with a per-document aspect-grade list.

Each row is a judged candidate document of a query (LETOR style: the group's rows are its judged
set), with a list column of grades, one per aspect (the same aspect order in every row of a
query), and a score::

    import polars as pl
    from uefast.diversity import exprs as dx
    df.group_by("qid").agg(dx.measure("alpha-nDCG@20", "grades", "score", docid="docid"),
                           dx.measure("RBU@20", "grades", "score", stat="ue_v2").alias("rbu_v2"))

``stat``: ``"value"``, ``"iub"``, ``"reb"``, ``"ue_v1"``, ``"ue_v2"``. Ranking: score descending,
then docid descending by bytes (trec_eval; without ``docid`` ties keep row order). Aspects: an
aspect with no grade >= 1 in the query is dropped; uniform weights over the others. Values are
those of :func:`uefast.diversity.evaluate` on the same judgments and ranking (tested); the
groups are evaluated one by one in Python (not a kernel pass).
"""
from __future__ import annotations

import numpy as np
import polars as pl

from uefast.diversity.qrels import Topic
from uefast.diversity.registry import Batch, parse_measure
from uefast.errors import InputError
from uefast.ue import ue_scores

__all__ = ["measure"]

STATS = ("value", "iub", "reb", "ue_v1", "ue_v2")


def _group(m, s: pl.Series, has_doc: bool, stat: str) -> float:
    df = s.struct.unnest()
    n = df.height
    if n == 0:
        return float("nan")
    docs = df["d"].to_list() if has_doc else [f"{i:012d}" for i in range(n)]
    G = np.array(df["g"].to_list(), dtype=np.int64).reshape(n, -1)
    G = np.maximum(G, 0)
    by_doc = sorted(range(n), key=lambda i: docs[i].encode())
    pos = np.empty(n, np.int64)
    pos[by_doc] = np.arange(n)
    act = np.flatnonzero((G >= 1).any(axis=0))
    Gs = G[by_doc][:, act]
    topic = Topic("q", np.array([docs[i] for i in by_doc], object), Gs, [str(a) for a in act],
                  np.full(act.size, 1.0 / act.size) if act.size else np.zeros(0),
                  (Gs >= 1).sum(axis=0).astype(np.int64))
    score = df["s"].cast(pl.Float64).to_numpy()
    if has_doc:  # score descending, then docid descending by bytes
        order = sorted(range(n), key=lambda i: (-score[i], tuple(-b for b in docs[i].encode())))
    else:
        order = list(np.argsort(-score, kind="stable"))
    rows = pos[np.asarray(order, np.int64)]
    if stat == "value" or stat.startswith("ue"):
        v = float(m.fam.value(Batch([topic], np.zeros(1, np.int64), rows, np.array([0, n], np.int64)), m)[0])
    if stat == "value":
        return v
    iub = float(m.fam.iub(topic, m)[0])
    reb = float(m.fam.reb(topic, m))
    if stat == "iub":
        return iub
    if stat == "reb":
        return reb
    low = m.fam.minimum(topic, m) if m.fam.minimum else 0.0
    v1, v2 = ue_scores(np.array([v - low]), np.array([iub - low]), np.array([reb - low]))
    return float(v1[0] if stat == "ue_v1" else v2[0])


def measure(name: str, grades: str = "grades", score: str = "score", *, docid: str | None = None,
            stat: str = "value") -> pl.Expr:
    """One diversity measure (a string of :mod:`uefast.diversity.registry`) per group, as a
    Float64 expression named ``name`` (``stat`` other than value: ``name:stat``)."""
    if stat not in STATS:
        raise InputError(f"`stat` must be one of {STATS}, got {stat!r}")
    m = parse_measure(name)
    cols = [pl.col(grades).alias("g"), pl.col(score).alias("s")]
    if docid is not None:
        cols.append(pl.col(docid).cast(pl.String).alias("d"))

    def fn(s: pl.Series) -> pl.Series:
        return pl.Series([_group(m, x, docid is not None, stat) for x in s], dtype=pl.Float64)

    alias = str(m) if stat == "value" else f"{m}:{stat}"
    return (pl.struct(cols).implode()
            .map_batches(fn, is_elementwise=True, returns_scalar=True, return_dtype=pl.Float64)
            .alias(alias))
