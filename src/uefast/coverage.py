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

    _check_columns(table)
    return pl.from_arrow(table.select(["system", "measure", "qid"]))


def query_coverage(table: pa.Table) -> list[QueryCoverage]:
    """For each measure (in order of appearance): the number of distinct queries of each system
    (systems in order of appearance within the measure) and of the queries that every system of
    that measure has.

    Algorithm: the three columns dictionary-encoded (codes in order of first appearance, nulls a
    value of their own, as Polars' ``n_unique`` counts them), the distinct (measure, system,
    query) code triples by one ``np.unique``; queries per (measure, system) and systems per
    (measure, query) are then counts of those triples. NumPy and Arrow only: ``uefast evaluate``
    runs this on every call and Polars' import costs ~0.05 s of its start-up."""
    import numpy as np
    import pyarrow.compute as pc

    _check_columns(table)
    if table.num_rows == 0:
        return []
    enc = [pc.dictionary_encode(table[c], null_encoding="encode").combine_chunks()
           for c in ("measure", "system", "qid")]
    (m, s, q), names = ([e.indices.to_numpy(zero_copy_only=False).astype(np.int64) for e in enc],
                        [e.dictionary.to_pylist() for e in enc])
    n_s, n_q = len(names[1]), len(names[2])
    ms = m * n_s + s
    trip = np.unique(ms * n_q + q)                      # distinct (measure, system, query)
    t_ms, t_m, t_q = trip // n_q, trip // (n_q * n_s), trip % n_q
    pair, n_per = np.unique(t_ms, return_counts=True)   # queries per (measure, system)
    mq, k = np.unique(t_m * n_q + t_q, return_counts=True)  # systems per (measure, query)
    first_ms = np.full(pair.size, table.num_rows, np.int64)  # first row of each pair: its order
    np.minimum.at(first_ms, np.searchsorted(pair, ms), np.arange(ms.size))
    n_sys = np.bincount(pair // n_s, minlength=len(names[0]))
    common = np.bincount((mq // n_q)[k == n_sys[mq // n_q]], minlength=len(names[0]))
    out = []
    for mi in range(len(names[0])):  # measure codes: order of first appearance
        sel = np.flatnonzero(pair // n_s == mi)
        sel = sel[np.argsort(first_ms[sel], kind="stable")]
        per = {names[1][int(pair[j] % n_s)]: int(n_per[j]) for j in sel}
        out.append(QueryCoverage(names[0][mi], per, int(common[mi])))
    return out


def _check_columns(table: pa.Table) -> None:
    for c in ("system", "measure", "qid"):
        if c not in table.column_names:
            from uefast.errors import InputError

            raise InputError(f"evaluation table: column {c!r} missing (got {table.column_names})")


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
