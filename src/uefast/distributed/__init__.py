"""Distributed evaluation: what the Dask (:mod:`uefast.dask`) and Spark (:mod:`uefast.spark`)
adapters share, and its single-machine form.

* :func:`aggregate` -- means per (system, measure) from exact, mergeable sums;
* :func:`compare` -- paired t / randomisation / Poisson-bootstrap tests between systems from
  mergeable sufficient statistics, resampling draws keyed by ``(seed, qid, resample)``.

Both take a per-query table (``uefast.evaluate``'s output) and give bit for bit what the adapters
give for any partitioning of it by query. Design and proofs: ``docs/distributed.md``.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from uefast.distributed._reduce import (AGG_COLUMNS, COMPARE_SCHEMA, METHODS, aggregate_partial,
                                        compare_plan, finish_aggregate, run_compare)

__all__ = ["aggregate", "compare", "METHODS", "AGG_COLUMNS", "COMPARE_SCHEMA"]


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
            n_resamples: int | None = None, seed: int = 0) -> pa.Table:
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

    Returns one row per (measure, system_a, system_b), sorted, ``z = x_a - x_b`` (with
    ``baseline``: system_b is the baseline); columns ``measure, system_a, system_b, method,
    alternative, n_topics, mean_difference, statistic, pvalue, n_resamples, seed``
    (``statistic``: t for t and bootstrap, mean difference for randomisation).
    """
    from uefast.distributed._reduce import as_arrow

    plan = compare_plan(method, measure=measure, column=column, systems=systems,
                        baseline=baseline, alternative=alternative, n_resamples=n_resamples,
                        seed=seed)
    t = as_arrow(table)
    return run_compare(lambda fn: fn(t), plan)
