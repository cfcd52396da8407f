"""Which queries each system of an evaluation table was evaluated on, and the common ones.

Means over different query sets are not comparable: a TREC run that retrieved nothing for 50 of
100 topics is averaged over its 50 topics (as trec_eval without ``-c`` averages), the others over
100.  :func:`query_coverage` says whether that happened; :func:`common_queries` keeps the rows of
the queries every system was evaluated on, so that :func:`uefast.aggregate` then averages each
system over the same set.  ``uefast evaluate`` notes differing coverage on stderr and takes
``--common-queries``.

Input: the per-query table of :func:`uefast.evaluate` (columns ``system``, ``measure``, ``qid``).
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = ["QueryCoverage", "query_coverage", "common_queries"]


@dataclass(frozen=True)
class QueryCoverage:
    """Per measure: queries per system and the number common to all systems."""

    measure: str
    per_system: dict[str, int]
    n_common: int

    @property
    def differs(self) -> bool:
        return any(n != self.n_common for n in self.per_system.values())


def _frame(table: pa.Table):
    import polars as pl

    for c in ("system", "measure", "qid"):
        if c not in table.column_names:
            from uefast.errors import InputError

            raise InputError(f"evaluation table: column {c!r} missing (got {table.column_names})")
    return pl.from_arrow(table.select(["system", "measure", "qid"]))


def query_coverage(table: pa.Table) -> list[QueryCoverage]:
    """For each measure (in order of appearance): the number of distinct queries of each system
    and of the queries that every system of that measure has."""
    import polars as pl

    df = _frame(table)
    out = []
    for (measure,), g in df.group_by("measure", maintain_order=True):
        per = g.group_by("system", maintain_order=True).agg(pl.col("qid").n_unique().alias("n"))
        n_sys = per.height
        common = g.group_by("qid").agg(pl.col("system").n_unique().alias("k")).filter(pl.col("k") == n_sys).height
        out.append(QueryCoverage(measure, dict(zip(per["system"].to_list(), per["n"].to_list())), common))
    return out


def common_queries(table: pa.Table) -> pa.Table:
    """The rows of ``table`` whose query every system has, per measure (row order and metadata
    kept).  Algorithm: count the distinct systems per (measure, qid) and per measure; keep the
    (measure, qid) pairs where the two counts are equal."""
    import numpy as np
    import polars as pl

    df = _frame(table).with_row_index("_row")
    ns = df.group_by("measure").agg(pl.col("system").n_unique().alias("_ns"))
    kq = df.group_by(["measure", "qid"]).agg(pl.col("system").n_unique().alias("_k"))
    keep = (df.join(kq, on=["measure", "qid"]).join(ns, on="measure")
            .filter(pl.col("_k") == pl.col("_ns"))["_row"].to_numpy())
    return table.take(pa.array(np.sort(keep)))
