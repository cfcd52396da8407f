"""Discriminative power (Sakai, SIGIR 2006), ASL curves, metric conflicts and Cohen's kappa.

SPEC_math §6.7 and §6.14. The p-values come from :mod:`uefast.stats` (one fixed test for all
pairs), or from a caller-supplied ``pvalue_fn(x, y) -> float``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.stats._validation import check_probability
from uefast.meta._matrix import TopicSystemMatrix, as_matrix, pair_indices

__all__ = [
    "DiscriminativePower",
    "discriminative_power",
    "compare_discriminative_power",
    "asl_curves",
    "conflicts",
    "conflict_counts",
    "cohen_kappa",
]

_METHODS = {"t", "wilcoxon", "sign", "bootstrap", "randomization", "tukey"}


@dataclass(frozen=True)
class DiscriminativePower:
    """Result of :func:`discriminative_power`.

    ``pairs`` (data_schemas/meta_power.md) has one row per unordered system pair:
    ``system_a, system_b, mean_a, mean_b, diff, pvalue, significant``.
    """

    count: int
    fraction: float
    n_pairs: int
    alpha: float
    method: str
    pairs: pa.Table

    @property
    def pvalues(self) -> np.ndarray:
        return self.pairs["pvalue"].to_numpy()

    @property
    def asl_curve(self) -> np.ndarray:
        """The ASLs (p-values) of all pairs, sorted ascending (Sakai 2006)."""
        return np.sort(self.pvalues)

    def count_at(self, alpha: float) -> int:
        """#{pairs : p < alpha} for another alpha (same p-values)."""
        return int(np.sum(self.pvalues < alpha))


def _pvalues(
    mat: TopicSystemMatrix,
    method: str,
    n_resamples: int | None,
    seed: int,
    pvalue_fn: Callable[[np.ndarray, np.ndarray], float] | None,
) -> np.ndarray:
    x = mat.values
    ii, jj = pair_indices(x.shape[1])
    if pvalue_fn is not None:
        return np.array([float(pvalue_fn(x[:, i], x[:, j])) for i, j in zip(ii, jj)])
    from uefast import stats

    kw: dict[str, Any] = {"seed": seed, "n_resamples": n_resamples}
    if method == "tukey":
        res = stats.tukey_hsd(x, systems=mat.systems, **kw)
    else:
        res = stats.all_pairs(x, method=method, systems=mat.systems, **kw)
    got = {(a, b): p for a, b, p in zip(res["system_a"].to_pylist(), res["system_b"].to_pylist(),
                                        res["pvalue"].to_pylist())}
    names = mat.systems
    return np.array([got[(names[i], names[j])] if (names[i], names[j]) in got else got[(names[j], names[i])]
                     for i, j in zip(ii, jj)], dtype=np.float64)


def discriminative_power(
    matrix: Any,
    *,
    method: str = "t",
    alpha: float = 0.05,
    n_resamples: int | None = None,
    seed: int = 0,
    pvalue_fn: Callable[[np.ndarray, np.ndarray], float] | None = None,
    measure: str | None = None,
    column: str = "value",
    systems: Sequence[str] | None = None,
) -> DiscriminativePower:
    """Discriminative power of one metric (Sakai, SIGIR 2006).

    For each of the P = m(m-1)/2 unordered pairs of the m systems, a paired test over the topics
    gives an achieved significance level (ASL, the p-value). Then::

        count    = #{pairs : ASL < alpha}      (strictly less)
        fraction = count / P

    ``method`` names the test of :func:`uefast.stats.all_pairs` (``"t"``, ``"wilcoxon"``,
    ``"sign"``, ``"bootstrap"`` = Sakai's paired bootstrap, ``"randomization"``) or ``"tukey"``
    (:func:`uefast.stats.tukey_hsd`, randomised Tukey HSD, Carterette 2012, one null for all
    pairs); uncorrected p-values. Resampling tests take ``n_resamples`` and ``seed``. ``pvalue_fn(x, y)`` overrides ``method``.
    ``matrix`` is topics x systems, or the long table of :func:`uefast.evaluate` with
    ``measure=``/``column=``. Source: SPEC_math §6.7.
    """
    alpha = check_probability("alpha", alpha)
    if pvalue_fn is None and method not in _METHODS:
        raise InputError(f"`method` must be in {sorted(_METHODS)}; got {method!r}")
    mat = as_matrix(matrix, measure=measure, column=column, systems=systems)
    m = mat.values.shape[1]
    if m < 2:
        raise InputError(f"discriminative power needs at least 2 systems; got {m}")
    p = np.clip(_pvalues(mat, method, n_resamples, seed, pvalue_fn), 0.0, 1.0)
    ii, jj = pair_indices(m)
    means = mat.values.mean(axis=0)
    sig = p < alpha
    pairs = pa.table(
        {
            "system_a": pa.array([mat.systems[k] for k in ii], pa.string()),
            "system_b": pa.array([mat.systems[k] for k in jj], pa.string()),
            "mean_a": means[ii],
            "mean_b": means[jj],
            "diff": means[ii] - means[jj],
            "pvalue": p,
            "significant": pa.array(sig, pa.bool_()),
        }
    )
    count = int(sig.sum())
    name = "custom" if pvalue_fn is not None else method
    return DiscriminativePower(count, count / p.size, int(p.size), float(alpha), name, pairs)


def compare_discriminative_power(
    results: Mapping[str, DiscriminativePower], *, alphas: Sequence[float] = (0.05, 0.01)
) -> pa.Table:
    """Side-by-side discriminative power of several metrics (data_schemas/meta_power.md).

    ``results`` maps a metric name to its :func:`discriminative_power`. One row per
    (metric, alpha): ``metric, method, alpha, n_pairs, count, fraction``.
    """
    rows: dict[str, list] = {k: [] for k in ("metric", "method", "alpha", "n_pairs", "count", "fraction")}
    for name, res in results.items():
        for a in alphas:
            c = res.count_at(a)
            for k, v in zip(rows, (name, res.method, float(a), res.n_pairs, c, c / res.n_pairs)):
                rows[k].append(v)
    return pa.table(rows)


def asl_curves(results: Mapping[str, DiscriminativePower]) -> pa.Table:
    """ASL curves in long form: ``metric, rank`` (1..P), ``asl`` (sorted ascending)."""
    metric, rank, asl = [], [], []
    for name, res in results.items():
        curve = res.asl_curve
        metric += [name] * curve.size
        rank += list(range(1, curve.size + 1))
        asl += curve.tolist()
    return pa.table({"metric": pa.array(metric, pa.string()), "rank": pa.array(rank, pa.int64()), "asl": pa.array(asl, pa.float64())})


def _decisions(res: DiscriminativePower) -> np.ndarray:
    """+1 (a significantly better), -1 (b significantly better), 0 (not significant)."""
    sig = res.pairs["significant"].to_numpy(zero_copy_only=False)
    return np.where(sig, np.sign(res.pairs["diff"].to_numpy()), 0).astype(np.int64)


def _check_same_pairs(a: DiscriminativePower, b: DiscriminativePower) -> None:
    same = a.pairs.select(["system_a", "system_b"]).equals(b.pairs.select(["system_a", "system_b"]))
    if not same:
        raise InputError("the two results must cover the same system pairs in the same order")


def conflicts(a: DiscriminativePower, b: DiscriminativePower) -> pa.Table:
    """Per-pair significance decisions under two metrics (Santu & Feng's "conflict cases").

    One row per system pair (data_schemas/meta_conflicts.md): ``system_a, system_b, pvalue_a,
    pvalue_b, decision_a, decision_b`` (+1 = system_a significantly better, -1 = worse,
    0 = not significant) and ``category``: ``both`` (same significant direction), ``a_only``,
    ``b_only``, ``opposite`` (significant in opposite directions) or ``neither``.
    A conflict is ``a_only``, ``b_only`` or ``opposite``.
    """
    _check_same_pairs(a, b)
    da, db = _decisions(a), _decisions(b)
    cat = np.where(
        (da != 0) & (db != 0),
        np.where(da == db, "both", "opposite"),
        np.where(da != 0, "a_only", np.where(db != 0, "b_only", "neither")),
    )
    return pa.table(
        {
            "system_a": a.pairs["system_a"],
            "system_b": a.pairs["system_b"],
            "pvalue_a": a.pairs["pvalue"],
            "pvalue_b": b.pairs["pvalue"],
            "decision_a": pa.array(da, pa.int8()),
            "decision_b": pa.array(db, pa.int8()),
            "category": pa.array(cat.tolist(), pa.string()),
        }
    )


def conflict_counts(a: DiscriminativePower, b: DiscriminativePower) -> dict[str, float]:
    """Counts of the :func:`conflicts` categories plus ``conflicts`` (a_only + b_only +
    opposite), ``n_pairs`` and ``kappa`` (Cohen's kappa of the three-way decisions)."""
    cat = np.asarray(conflicts(a, b)["category"].to_pylist())
    out: dict[str, float] = {k: int(np.sum(cat == k)) for k in ("both", "a_only", "b_only", "opposite", "neither")}
    out["conflicts"] = out["a_only"] + out["b_only"] + out["opposite"]
    out["n_pairs"] = int(cat.size)
    out["kappa"] = cohen_kappa(_decisions(a), _decisions(b))
    return out


def cohen_kappa(r1, r2) -> float:
    """Cohen's kappa between two raters' categorical decisions over the same items.

    kappa = (p_o - p_e) / (1 - p_e), p_o the observed agreement, p_e = sum_c p_1(c) p_2(c).
    When p_e = 1 (both raters use one single category) kappa := 1 (SPEC_math §6.14; sklearn
    returns NaN). Source: Cohen (1960).
    """
    x = np.asarray(r1).ravel()
    y = np.asarray(r2).ravel()
    if x.shape != y.shape or x.size == 0:
        raise InputError(f"`r1` and `r2` must be non-empty and equally long; got {x.size}, {y.size}")
    cats = np.union1d(x, y)
    p_o = float(np.mean(x == y))
    p_e = float(sum(np.mean(x == c) * np.mean(y == c) for c in cats))
    if 1.0 - p_e <= 1e-15:
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)
