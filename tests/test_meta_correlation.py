"""Oracles for uefast.meta.correlation: scipy, hand-worked cases, exact enumeration."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError
from uefast.meta import kendall_tau, ranking_swap_rate, tau_ap

small_int_vectors = st.integers(2, 9).flatmap(
    lambda m: st.tuples(
        st.lists(st.integers(0, 4), min_size=m, max_size=m),
        st.lists(st.integers(0, 4), min_size=m, max_size=m),
    )
)


@settings(max_examples=60, deadline=None)
@given(small_int_vectors)
def test_tau_b_matches_scipy_with_ties(ab):
    a, b = ab
    ours = kendall_tau(a, b, variant="b")
    ref = scipy.stats.kendalltau(a, b).statistic
    if np.isnan(ref):
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(ref, abs=1e-12)


def test_tau_a_hand_worked_and_equals_tau_b_without_ties():
    a = [1, 2, 3, 4]
    b = [1, 3, 2, 4]  # one discordant pair out of 6: (4 - 1... ) C=5, D=1
    assert kendall_tau(a, b, "a") == pytest.approx(4 / 6)
    assert kendall_tau(a, b, "b") == pytest.approx(4 / 6)
    # with ties tau_a keeps P in the denominator: a=(1,1,2) b=(1,2,3): C=2, D=0, P=3
    assert kendall_tau([1, 1, 2], [1, 2, 3], "a") == pytest.approx(2 / 3)
    assert kendall_tau([1, 1, 2], [1, 2, 3], "b") == pytest.approx(2 / np.sqrt(2 * 3))


def test_ranking_swap_rate_oracles():
    rng = np.random.default_rng(1)
    a = rng.random(12)
    assert ranking_swap_rate(a, a) == 0.0
    assert ranking_swap_rate(a, -a) == 1.0
    b = rng.random(12)
    assert ranking_swap_rate(a, b) == pytest.approx((1 - kendall_tau(a, b, "a")) / 2)
    # ties: a pair tied in one ranking is not a swap; "half" counts 0.5
    assert ranking_swap_rate([1, 1, 2], [2, 1, 3]) == 0.0
    assert ranking_swap_rate([1, 1, 2], [2, 1, 3], ties="half") == pytest.approx(0.5 / 3)


def test_tau_ap_oracles():
    g = np.arange(6, 0, -1.0)
    assert tau_ap(g, g) == pytest.approx(1.0)
    assert tau_ap(-g, g) == pytest.approx(-1.0)
    # N = 2: tau_AP = tau
    assert tau_ap([1, 2], [2, 1]) == pytest.approx(kendall_tau([1, 2], [2, 1], "a"))
    # top-heavy: swapping the top two costs more than swapping the bottom two; tau is equal
    top = g.copy()
    top[[0, 1]] = top[[1, 0]]
    bottom = g.copy()
    bottom[[4, 5]] = bottom[[5, 4]]
    assert kendall_tau(top, g, "a") == kendall_tau(bottom, g, "a")
    assert tau_ap(top, g) < tau_ap(bottom, g)
    # hand-worked: E = (B, A, C), G = (A, B, C): C(2)=0, C(3)=2 -> 2/2 * (0/1 + 2/2) - 1 = 0
    assert tau_ap([2, 3, 1], [3, 2, 1]) == pytest.approx(0.0)


def test_tau_ap_mean_over_all_orderings_is_zero_n6():
    ref = np.arange(6, dtype=float)
    vals = [tau_ap(np.array(p, dtype=float), ref) for p in itertools.permutations(range(6))]
    assert np.mean(vals) == pytest.approx(0.0, abs=1e-12)


def test_tau_ap_asymmetric_and_symmetric_variant():
    a = [5, 4, 3, 2, 1, 0]
    b = [4, 5, 3, 2, 0, 1]
    c = [3, 5, 4, 2, 1, 0]  # hand-worked: tau_AP(a|c) = 2/5 * (0 + 1/2 + 1 + 1 + 1) - 1 = 0.4
    assert tau_ap(a, c) == pytest.approx(0.4)
    assert tau_ap(c, a) == pytest.approx(0.6)
    assert kendall_tau(a, c, "ap_sym") == pytest.approx((tau_ap(a, c) + tau_ap(c, a)) / 2)
    assert kendall_tau(a, b, "ap") == tau_ap(a, b)


def test_bad_input_messages():
    with pytest.raises(InputError, match="ties"):
        tau_ap([1, 1, 2], [1, 2, 3])
    with pytest.raises(InputError, match="same length"):
        kendall_tau([1, 2], [1, 2, 3])
    with pytest.raises(InputError, match="`variant`"):
        kendall_tau([1, 2], [1, 2], variant="c")
    with pytest.raises(InputError, match="at least 2"):
        kendall_tau([1], [1])
