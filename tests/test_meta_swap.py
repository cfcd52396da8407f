"""Oracles for uefast.meta.swap (Voorhees-Buckley and Sakai's bootstrap swap)."""
from __future__ import annotations

import numpy as np
import pytest

from uefast.errors import InputError
from uefast.meta import swap_rate


def test_dominating_and_identical_systems_never_swap():
    rng = np.random.default_rng(0)
    base = rng.random(30)
    x = np.column_stack([base, base, base + 0.05 + rng.random(30) * 0.1])
    for method in ("voorhees-buckley", "bootstrap"):
        res = swap_rate(x, method=method, n_trials=40, seed=1)
        assert res.swap_rate == 0.0
        counts = np.asarray(res.bins["count"].to_pylist())
        assert counts.sum() == res.n_trials * res.n_pairs == 40 * 3
        # the identical pair (s0, s1) always lands in bin 0
        assert counts[0] >= 40


def test_known_swap_rate_two_topics_hand_worked():
    # 2 topics, c = 1: Q1, Q2 = the two topics in some order; d on topic 0 is +0.1, on topic 1 -0.3
    x = np.array([[0.6, 0.5], [0.2, 0.5]])
    res = swap_rate(x, n_trials=10, seed=3)
    assert res.swap_rate == 1.0  # every trial compares +0.1 with -0.3
    counts = np.asarray(res.bins["count"].to_pylist())
    # binned on |d1|: 0.1 -> bin 10, 0.3 -> bin 20 (>= .20)
    assert counts[10] + counts[20] == 10 and counts[:10].sum() == 0
    rates = res.bins["swap_rate"].to_pylist()
    assert rates[0] is None  # empty bin: undefined
    assert np.isnan(res.difference_required)


def test_tie_rule_and_mean_binning():
    x = np.tile([[0.3, 0.3]], (6, 1))
    assert swap_rate(x, n_trials=5).swap_rate == 0.0
    assert swap_rate(x, n_trials=5, ties="tie_is_swap").swap_rate == 1.0
    res = swap_rate(x, n_trials=5, binning="mean")
    assert res.bins["count"][0].as_py() == 5


def test_difference_required():
    rng = np.random.default_rng(5)
    # system gaps 0.0 .. 0.3 with noise: large gaps never swap, tiny gaps often do
    base = rng.random((50, 1))
    x = base + np.array([0.0, 0.002, 0.1, 0.3]) + rng.normal(0, 0.05, (50, 4))
    res = swap_rate(x, method="bootstrap", n_trials=300, seed=2)
    rates = np.asarray(res.bins["swap_rate"].to_pylist(), dtype=float)
    d = res.difference_required
    assert 0 < d < 0.2
    k = int(round(d / 0.01))
    assert np.all(np.nan_to_num(rates[k:]) <= 0.05)
    assert rates[k - 1] > 0.05 or np.isnan(rates[k - 1])


def test_reproducible_and_seed_dependent():
    x = np.random.default_rng(9).random((20, 5))
    a = swap_rate(x, seed=4)
    b = swap_rate(x, seed=4)
    assert a.bins.equals(b.bins)
    assert a.subset_size == 10 and a.n_trials == 50
    assert swap_rate(x, method="bootstrap", n_trials=10).subset_size == 20


def test_bad_input():
    x = np.zeros((6, 3))
    with pytest.raises(InputError, match="`subset_size`"):
        swap_rate(x, subset_size=4)
    with pytest.raises(InputError, match="`method`"):
        swap_rate(x, method="x")
    with pytest.raises(InputError, match="at least 2"):
        swap_rate(np.zeros((6, 1)))


def test_difference_required_nan_when_no_nonempty_bin_qualifies():
    """Every non-empty bin above alpha: NaN (meta_swap.md), not the edge of an empty bin above."""
    r = swap_rate([[.5, .503], [.5, .497]], subset_size=1, n_trials=10)
    assert r.swap_rate == 1.0 and np.isnan(r.difference_required)


@pytest.mark.parametrize("kw,match", [({"alpha": 5}, "`alpha` must be in"),
                                      ({"n_trials": 2.7}, "`n_trials` must be a positive integer"),
                                      ({"subset_size": 2.7}, "`subset_size` must be a positive integer"),
                                      ({"n_bins": 2.5}, "`n_bins` must be a positive integer"),
                                      ({"seed": -1}, "`seed` must be an integer"),
                                      ({"bin_width": np.inf}, "`bin_width` must be a finite positive number; got inf"),
                                      ({"bin_width": "0.01"}, "`bin_width` must be a finite positive number; got '0.01'"),
                                      ({"bin_width": 0}, "`bin_width` must be a finite positive number; got 0")])
def test_swap_rate_parameters_checked(kw, match):
    """alpha=5 was accepted, float counts truncated (2.7 -> 2), n_bins=2.5 a TypeError;
    bin_width=inf gave NaN bin edges, bin_width='0.01' a raw TypeError."""
    x = np.random.default_rng(0).random((20, 3))
    with pytest.raises(InputError, match=match):
        swap_rate(x, **kw)


def test_huge_differences_land_in_the_last_bin():
    """|d| / w beyond 2**63 was cast to a negative int64 before the clip: np.bincount raised."""
    x = np.array([[0, 1e17], [0, 2e17], [0, 1e17], [0, 3e17]])
    res = swap_rate(x, n_trials=5)
    assert res.bins["count"].to_pylist()[-1] == 5 and res.swap_rate == 0.0
