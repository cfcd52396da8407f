"""Distributed evaluation: what the Dask (:mod:`uefast.dask`) and Spark (:mod:`uefast.spark`)
adapters share, and its single-machine form.

* :func:`aggregate` -- means per (system, measure) from exact, mergeable sums;
* :func:`compare` -- paired t / randomisation / Poisson-bootstrap / sign / Wilcoxon tests
  between systems from mergeable sufficient statistics, resampling draws keyed by
  ``(seed, qid, resample)``; sign and Wilcoxon from merged counts, identical to
  :func:`uefast.stats.paired_test`;
* :func:`tukey_hsd` -- Carterette's randomised Tukey HSD from mergeable permuted column sums;
* :func:`swap_rate` -- :func:`uefast.meta.swap_rate` from mergeable subset sums, subsets drawn
  by the counter-based generator (``(seed, qid, trial)``).

Both take a per-query table (``uefast.evaluate``'s output) and give bit for bit what the adapters
give for any partitioning of it by query. Design and proofs: ``docs/distributed.md``.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from uefast.distributed._reduce import (AGG_COLUMNS, COMPARE_SCHEMA, METHODS, aggregate_partial,
                                        compare_plan, finish_aggregate, run_compare)

__all__ = ["aggregate", "compare", "tukey_hsd", "swap_rate", "METHODS", "AGG_COLUMNS",
           "COMPARE_SCHEMA"]


def aggregate(table: Any) -> pa.Table:
    """Mean over queries per (system, measure) of ``value``, ``iub``, ``reb``, ``ue_v1``, ``ue_v2``
    and ``n_queries`` (rows), NaN and null skipped, like :func:`uefast.aggregate`; rows sorted by
    (system, measure).

    Algorithm: each sum is an exact expansion (Shewchuk 1997) rounded once (as ``math.fsum``), so
    the means do not depend on how the rows are split or ordered; they equal
    ``uefast.aggregate``'s to its summation rounding (~1e-16 relative).
    """
    return finish_aggregate(aggregate_partial(table))


def compare(table: Any, method: str = "randomization", *, measure=None, column: str = "value",
            systems=None, baseline: str | None = None, alternative: str = "two-sided",
            n_resamples: int | None = None, seed: int = 0, epsilon: float = 0.0,
            exact: bool | None = None) -> pa.Table:
    """Paired test of every pair of systems (or every system against ``baseline``) per measure,
    over the queries both have, from mergeable sufficient statistics.

    ``method``: ``"t"`` (Student's paired t), ``"randomization"`` (sign-flip, Monte Carlo,
    ``n_resamples`` default 10,000, ``p = (count + 1)/(B + 1)``), ``"bootstrap"`` (Sakai's
    studentised shifted bootstrap with Poisson(1) weights, default B = 1,000, ASL = count / B).
    Draws are keyed by ``(seed, qid, resample)`` (:mod:`uefast.distributed._keyed`), sums are
    exact, so the p-values are identical for every partitioning and equal to those of
    :mod:`uefast.dask` / :mod:`uefast.spark` on the same table and seed. They are *not* the draws
    of :func:`uefast.stats.paired_test` (which keys a topic's draw by its position and resamples
    multinomially): the tests are the same for randomisation (i.i.d. fair signs), the t-test
    agrees to rounding, the bootstrap differs by the Poisson-vs-multinomial weights
    (``docs/distributed.md``).

    ``"sign"`` (Dixon & Mood 1946; ``epsilon``: differences within it are ties, with
    :func:`uefast.stats.paired_test`'s tolerance) and ``"wilcoxon"`` (Wilcoxon 1945; zeros
    dropped, average ranks, ``exact`` as in :func:`uefast.stats.paired_test`) are deterministic
    and give :func:`uefast.stats.paired_test`'s statistic and p-value exactly: the sign test from
    merged counts ``n+``, ``n-``; Wilcoxon from merged exact histograms of the nonzero ``|z|``
    (value -> counts of ``+v`` and ``-v``), from which the average ranks, ``W+``, ``W-`` and the
    tie groups follow without a global sort (:mod:`uefast.distributed._ranks`).

    Returns one row per (measure, system_a, system_b), sorted, ``z = x_a - x_b`` (with
    ``baseline``: system_b is the baseline); columns ``measure, system_a, system_b, method,
    alternative, n_topics, mean_difference, statistic, pvalue, n_resamples, seed``
    (``statistic``: t for t and bootstrap, mean difference for randomisation, ``n+`` for sign,
    ``min(W+, W-)`` two-sided / ``W+`` one-sided for Wilcoxon).
    """
    from uefast.distributed._reduce import as_arrow

    plan = compare_plan(method, measure=measure, column=column, systems=systems,
                        baseline=baseline, alternative=alternative, n_resamples=n_resamples,
                        seed=seed, epsilon=epsilon, exact=exact)
    t = as_arrow(table)
    return run_compare(lambda fn: fn(t), plan)


def tukey_hsd(table: Any, *, measure=None, column: str = "value", systems=None,
              n_resamples: int | None = None, seed: int = 0) -> pa.Table:
    """Carterette's randomised Tukey HSD test (TOIS 2012), family-wise over the systems, per
    measure (every measure of the table, or ``measure``), over the queries every system has, from
    mergeable per-resample column sums: the single-machine reference of
    :func:`uefast.dask.tukey_hsd` / :func:`uefast.spark.tukey_hsd`, bit for bit equal to them for
    every partitioning.

    For ``b = 1..B`` (default 10,000) each query's row of the queries x systems matrix is
    permuted across the ``m`` systems (Fisher-Yates, draws keyed by ``(seed, qid, b)``) and
    ``q*_b = max_j S*_bj - min_j S*_bj`` of the permuted column sums is recorded; ``p_ij =
    #{q*_b >= |S_i - S_j| - γ} / B``, ``γ = 1e-12·max(|S_i - S_j|, Σ_k two largest |x_kj|)``
    as in :func:`uefast.stats.tukey_hsd`. Sums are exact, so nothing depends on the
    partitioning. The draws are not :func:`uefast.stats.tukey_hsd`'s (it keys a row's permutation by the row's
    position): p-values agree with it to Monte Carlo error, the statistics to rounding
    (:mod:`uefast.distributed._tukey`).

    Returns one row per (measure, system_a, system_b), names sorted, with the columns of
    :func:`compare` (``method = "tukey_hsd"``, ``statistic = |mean_a - mean_b|``,
    ``mean_difference = mean_a - mean_b``).
    """
    from uefast.distributed._reduce import as_arrow
    from uefast.distributed._tukey import run_tukey, tukey_plan

    plan = tukey_plan(measure=measure, column=column, systems=systems, n_resamples=n_resamples,
                      seed=seed)
    t = as_arrow(table)
    return run_tukey(lambda fn: fn(t), plan)


def swap_rate(table: Any, *, method: str = "voorhees-buckley", subset_size: int | None = None,
              n_trials: int | None = None, bin_width: float = 0.01, n_bins: int = 21,
              binning: str = "d1", ties: str = "strict", alpha: float = 0.05, seed: int = 0,
              measure: str | None = None, column: str = "value", systems=None):
    """The swap rate of :func:`uefast.meta.swap_rate` (same settings, same
    :class:`~uefast.meta.SwapResult`) from mergeable per-partition subset sums: the
    single-machine reference of :func:`uefast.dask.swap_rate` / :func:`uefast.spark.swap_rate`,
    bit for bit equal to them for every partitioning.

    Each trial draws topic subsets ``Q1``, ``Q2`` (voorhees-buckley: disjoint halves of a random
    permutation, c <= n // 2, default T = 50; bootstrap: c topics drawn with replacement each,
    default c = n, T = 1000) over the topics every system has, and counts, per bin of ``|d1|``,
    the system pairs whose mean differences ``d1`` (on Q1) and ``d2`` (on Q2) have opposite signs
    (differences ``<= 2**-40 · max|X|`` are ties, as in ``uefast.meta``). The sums
    ``Σ_{q in Q_s(t)} X[q, j]`` are exact and the subsets a pure function of ``(seed, qid,
    trial)`` (voorhees-buckley: the rank of a keyed 64-bit word among the topics; bootstrap: keyed
    uniform draws over the topics in key order), so no partitioning changes the result. The
    subsets are not those of ``uefast.meta.swap_rate`` (numpy's generator over topic positions):
    the two agree to Monte Carlo error. Algorithm and proofs: :mod:`uefast.distributed._swap`,
    ``docs/distributed.md``. Source: Voorhees & Buckley, SIGIR 2002; Sakai, SIGIR 2006.
    """
    from uefast.distributed._reduce import as_arrow
    from uefast.distributed._swap import run_swap, swap_plan

    plan = swap_plan(method=method, subset_size=subset_size, n_trials=n_trials,
                     bin_width=bin_width, n_bins=n_bins, binning=binning, ties=ties, alpha=alpha,
                     seed=seed, measure=measure, column=column, systems=systems)
    t = as_arrow(table)
    return run_swap(lambda fn, merge: fn(t), plan)
