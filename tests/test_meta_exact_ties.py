"""Exactly tied means are ties, not floating-point noise: swap rates and Kendall's tau.

Oracle: the same trials recomputed with exact rational arithmetic (``fractions.Fraction`` of the
decimal values k/20, k/7 the data stand for), a swap counted only where the exact differences of
means have opposite signs.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.meta import kendall_tau, ranking_swap_rate, swap_rate, tau_ap
from uefast.meta._matrix import pair_indices
from uefast.errors import InputError


def test_issue_example_has_no_swaps():
    """mean(0.1, 0.2) = mean(0.3, 0.0) = 0.15 exactly: no trial may count a swap (was 175)."""
    x = [[0.1, 0.3], [0.2, 0.0], [0.0, 0.5], [0.0, 0.5]]
    res = swap_rate(x, subset_size=2, n_trials=600, seed=0)
    assert res.swap_rate == 0.0 and sum(res.bins["swaps"].to_pylist()) == 0


def _exact_vb(frac, c, n_trials, seed, tie_is_swap=False):
    """swap_rate(method="voorhees-buckley", binning="d1") recomputed with Fractions: the same
    permutations (same generator calls, chunks of 128 trials), exact means."""
    n, m = len(frac), len(frac[0])
    rng = np.random.default_rng(seed)
    ii, jj = pair_indices(m)
    swaps = count = 0
    done = 0
    while done < n_trials:
        t = min(128, n_trials - done)
        perm = rng.permuted(np.tile(np.arange(n), (t, 1)), axis=1)
        for row in perm:
            q1, q2 = row[:c], row[c:2 * c]
            m1 = [sum(frac[q][s] for q in q1) / c for s in range(m)]
            m2 = [sum(frac[q][s] for q in q2) / c for s in range(m)]
            for i, j in zip(ii, jj):
                p = (m1[i] - m1[j]) * (m2[i] - m2[j])
                swaps += p < 0 or (tie_is_swap and p == 0)
                count += 1
        done += t
    return swaps, count


@settings(max_examples=40, deadline=None)
@given(st.integers(4, 9).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=n, max_size=n),
    st.sampled_from([20, 7, 10]), st.integers(0, 2 ** 32 - 1), st.booleans())))
def test_swap_rate_matches_exact_rational_arithmetic(case):
    ks, den, seed, tie_is_swap = case
    frac = [[Fraction(k, den) for k in row] for row in ks]
    x = np.array([[k / den for k in row] for row in ks])
    n = len(ks)
    c = n // 2
    res = swap_rate(x, subset_size=c, n_trials=30, seed=seed, ties="tie_is_swap" if tie_is_swap else "strict")
    swaps, count = _exact_vb(frac, c, 30, seed, tie_is_swap)
    assert sum(res.bins["count"].to_pylist()) == count
    assert sum(res.bins["swaps"].to_pylist()) == swaps


def test_kendall_tau_b_sees_exactly_tied_means():
    """a_0 = (0.1 + 0.2) / 2 and a_1 = 0.15 are the same mean: a tied pair, as in b. Then
    C - D = 2, T_a = T_b = 1, P = 3: tau_b = 2 / sqrt(2 * 2) = 1 (as floats: 2 / sqrt(3 * 2))."""
    a = [(0.1 + 0.2) / 2, 0.15, 0.3]
    b = [1.0, 1.0, 2.0]
    assert a[0] != a[1]
    assert kendall_tau(a, b, "b") == 1.0
    assert kendall_tau(a, b, "a") == pytest.approx(2 / 3)
    assert ranking_swap_rate(a, b, ties="half") == 0.0
    with pytest.raises(InputError, match="tied"):
        tau_ap(a, [1.0, 2.0, 3.0])


def test_kendall_tau_b_still_scipy_on_distinct_scores():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(1)
    a, b = rng.random(12), rng.random(12)
    b[3] = b[5]  # a real tie
    assert kendall_tau(a, b, "b") == pytest.approx(kendalltau(a, b).statistic, abs=1e-15)
