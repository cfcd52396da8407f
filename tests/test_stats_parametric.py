"""t, sign and Wilcoxon tests of uefast.stats against scipy.stats (SPEC_math §6.1-6.3)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.stats import all_pairs, paired_test

ALTS = ["two-sided", "greater", "less"]


def _data(n, seed, ties=False):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = x + rng.normal(0.03, 0.1, n)
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
    return x, y


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("n", [2, 5, 30, 500])
def test_t_matches_scipy(n, alternative):
    x, y = _data(n, n)
    ref = scipy.stats.ttest_rel(x, y, alternative=alternative)
    res = paired_test(x, y, "t", alternative=alternative)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-15)
    assert res.df == n - 1
    ci = res.confidence_interval(0.9)
    ref_ci = ref.confidence_interval(0.9)
    assert (ci.low, ci.high) == pytest.approx((ref_ci.low, ref_ci.high), rel=1e-10)


def test_t_zero_variance():
    x = np.array([0.1, 0.5, 0.3])
    assert paired_test(x, x, "t").pvalue == 1.0
    res = paired_test(x + 0.2, x, "t")
    assert res.statistic == np.inf and res.pvalue == 0.0
    assert paired_test(x + 0.2, x, "t", alternative="less").pvalue == 1.0


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sign_matches_binomtest(seed, alternative):
    x, y = _data(40, seed, ties=True)
    z = x - y
    n_pos, n_neg = int((z > 0).sum()), int((z < 0).sum())
    ref = scipy.stats.binomtest(n_pos, n_pos + n_neg, 0.5, alternative=alternative).pvalue
    res = paired_test(x, y, "sign", alternative=alternative)
    assert res.pvalue == pytest.approx(ref, rel=1e-10)
    assert res.statistic == n_pos


def test_sign_epsilon_and_all_ties():
    x = np.array([0.5, 0.5, 0.6, 0.7])
    y = np.array([0.5, 0.49, 0.5, 0.5])
    assert paired_test(x, x, "sign").pvalue == 1.0
    assert paired_test(x, y, "sign", epsilon=0.05).statistic == 2  # 0.01 counts as a tie
    # differences of exactly epsilon are ties, whatever their rounding: 0.65 - 0.6 is
    # 0.05000000000000004 (was counted as > epsilon), 0.25 - 0.2 is 0.04999999999999999
    a, b = np.array([.65, .25, .9]), np.array([.6, .2, .3])
    res = paired_test(a, b, "sign", epsilon=0.05)
    assert res.statistic == 1.0 and res.pvalue == 1.0
    assert all_pairs(np.column_stack([a, b]), "sign", epsilon=0.05)["statistic"][0].as_py() == 1.0
    assert paired_test(a, b, "sign", epsilon=0.0499).statistic == 3.0


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("n", [3, 12, 50])
def test_wilcoxon_exact_matches_scipy(n, alternative):
    x, y = _data(n, 100 + n)
    ref = scipy.stats.wilcoxon(x, y, method="exact", alternative=alternative)
    res = paired_test(x, y, "wilcoxon", alternative=alternative)
    assert res.exact
    assert res.statistic == ref.statistic
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("n", [10, 60, 400])
def test_wilcoxon_asymptotic_with_ties_matches_scipy(n, alternative):
    x, y = _data(n, 7 * n, ties=True)
    ref = scipy.stats.wilcoxon(x, y, method="asymptotic", correction=False, zero_method="wilcox",
                               alternative=alternative)
    res = paired_test(x, y, "wilcoxon", alternative=alternative)
    assert not res.exact
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_wilcoxon_exact_with_ties_is_exact_conditional_null():
    """exact=True with ties enumerates the tied ranks: checked against brute force."""
    z = np.array([1.0, -1.0, 2.0, 2.0, 3.0, -0.5, 2.0])
    import itertools

    ranks = scipy.stats.rankdata(np.abs(z))
    w_obs = ranks[z > 0].sum()
    t_obs = min(w_obs, ranks.sum() - w_obs)
    sums = [sum(r for r, s in zip(ranks, signs) if s) for signs in
            itertools.product([0, 1], repeat=len(z))]
    ref = min(1.0, 2 * np.mean([s <= t_obs + 1e-9 for s in sums]))
    res = paired_test(z, np.zeros_like(z), "wilcoxon", exact=True)
    assert res.pvalue == pytest.approx(ref, rel=1e-12)


def test_identical_systems_give_p_one():
    x, _ = _data(25, 5)
    for method in ("t", "wilcoxon", "sign", "bootstrap", "randomization"):
        assert paired_test(x, x, method, n_resamples=200).pvalue == 1.0, method


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=40),
       st.sampled_from(["t", "wilcoxon", "sign"]))
def test_two_sided_symmetric_and_in_unit_interval(pairs, method):
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    p_xy = paired_test(x, y, method).pvalue
    p_yx = paired_test(y, x, method).pvalue
    assert 0.0 <= p_xy <= 1.0
    assert p_xy == pytest.approx(p_yx, rel=1e-12, abs=1e-15)
