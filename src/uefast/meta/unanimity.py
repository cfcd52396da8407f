"""Metric Unanimity (MU; Amigo, Spina & Carrillo-de-Albornoz SIGIR'18 §6, SPEC_diversity §5).

Over the ordered pairs (i, j), i != j, of system outputs:

    m_ij = [m(s_i) > m(s_j)], a tie counting 1/2        (so P(m_ij) = 1/2)
    M_ij = [for every m' in M: m'(s_i) >= m'(s_j)]      (M = the reference metrics, m excluded)
    MU_M(m) = log2 P(m_ij and M_ij) / (P(m_ij) P(M_ij))  (the 1/2 tie weight also in the joint)

the pointwise mutual information (bits) between "m prefers s_i" and "every other metric agrees".
The paper's example m1 = (1, .5, .2), m2 = (.8, .3, .4), m3 = (1, .2, .5) gives MU(m1) = 0.4150,
MU(m2) = MU(m3) = 1. A constant metric has MU = 0, repeating a metric in M changes nothing, and
MU <= 1 always (P(m and M) <= P(M), P(m) = 1/2). The symbol of M_ij is lost in the paper's text;
>= is SPEC_diversity's reading. With outputs grouped (queries), only pairs within a group count.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from uefast.errors import InputError

__all__ = ["metric_unanimity", "unanimity_counts", "metric_unanimity_table"]


def unanimity_counts(x: np.ndarray, ref: np.ndarray) -> tuple[float, float, float, int]:
    """(sum m_ij, sum M_ij, sum m_ij M_ij, number of ordered pairs) for one group: ``x`` the
    metric's values over n outputs, ``ref`` (n, r) the reference metrics' values."""
    x = np.asarray(x, float)
    ref = np.asarray(ref, float).reshape(x.size, -1)
    d = x[:, None] - x[None, :]
    m = np.where(d > 0, 1.0, np.where(d == 0, 0.5, 0.0))
    M = np.ones_like(m, bool)
    for c in range(ref.shape[1]):
        M &= ref[:, c][:, None] >= ref[:, c][None, :]
    off = ~np.eye(x.size, dtype=bool)
    return float(m[off].sum()), float(M[off].sum()), float((m * M)[off].sum()), int(off.sum())


def _mu(sm, sM, sj, n) -> float:
    if n == 0 or sM == 0:
        return math.nan
    if sj == 0:
        return -math.inf
    return math.log2((sj / n) / ((sm / n) * (sM / n)))


def metric_unanimity(scores: Mapping[str, Sequence[float]], metric: str,
                     reference: Sequence[str] | None = None, groups: Sequence | None = None) -> float:
    """MU of ``metric`` against ``reference`` (default: every other metric of ``scores``).
    ``scores``: metric name -> values over the same system outputs; ``groups``: a group label
    per output (e.g. the query), pairs only within a group."""
    if metric not in scores:
        raise InputError(f"metric_unanimity: no scores for metric {metric!r}")
    ref = [k for k in scores if k != metric] if reference is None else [k for k in reference if k != metric]
    missing = [k for k in ref if k not in scores]
    if missing:
        raise InputError(f"metric_unanimity: no scores for reference metric {missing[0]!r}")
    if not ref:
        raise InputError("metric_unanimity: the reference set is empty")
    x = np.asarray(scores[metric], float)
    R = np.column_stack([np.asarray(scores[k], float) for k in ref])
    if R.shape[0] != x.size:
        raise InputError("metric_unanimity: every metric needs one value per output")
    g = np.zeros(x.size, np.int64) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    tot = np.zeros(4)
    for k in np.unique(g):
        sel = g == k
        tot += unanimity_counts(x[sel], R[sel])
    return _mu(*tot)


def metric_unanimity_table(table, column: str = "value") -> dict[str, float]:
    """MU of every measure of a long table (``system, qid, measure, <column>``, e.g.
    :func:`uefast.diversity.evaluate`'s) against all the others; outputs are (system, qid) and
    pairs are taken within each qid."""
    import polars as pl

    df = pl.from_arrow(table) if not isinstance(table, pl.DataFrame) else table
    wide = df.pivot(on="measure", index=["qid", "system"], values=column).sort(["qid", "system"])
    names = [c for c in wide.columns if c not in ("qid", "system")]
    if wide.select(pl.any_horizontal(pl.col(names).is_null())).to_series().any():
        raise InputError("metric_unanimity_table: every (system, qid) needs every measure")
    scores = {n: wide[n].to_numpy() for n in names}
    q = wide["qid"].to_numpy()
    return {n: metric_unanimity(scores, n, groups=q) for n in names}
