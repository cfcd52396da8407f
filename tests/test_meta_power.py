"""Oracles for uefast.meta.power: constructed matrices with known answers, Cohen's kappa, PAD."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import scipy.stats

from uefast.errors import InputError
from uefast.meta import (
    asl_curves,
    cohen_kappa,
    compare_discriminative_power,
    conflict_counts,
    conflicts,
    discriminative_power,
    pad,
    pad_table,
)


def t_pvalue(x, y):
    z = np.asarray(x) - np.asarray(y)
    if np.std(z) <= 1e-12 * max(1.0, float(np.abs(z).max())):
        return 1.0 if np.mean(z) == 0 else 0.0
    return float(scipy.stats.ttest_rel(x, y).pvalue)


def constructed_matrix(n=40, seed=3):
    """Systems 0, 1 identical; 2 = 0 + 0.3 (dominates by a wide margin); 3 = 0 + tiny noise.

    Significant pairs at alpha=0.05: every pair involving system 2 (3 pairs); (0,1) never;
    (0,3) and (1,3) have pure-noise differences -> not significant for this seed (checked below
    against scipy directly)."""
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    noise = rng.normal(0, 1e-3, n)
    return np.column_stack([base, base, base + 0.3 + rng.normal(0, 0.01, n), base + noise])


def test_discriminative_power_known_answer():
    x = constructed_matrix()
    assert scipy.stats.ttest_rel(x[:, 0], x[:, 3]).pvalue > 0.05
    res = discriminative_power(x, pvalue_fn=t_pvalue, alpha=0.05)
    assert res.n_pairs == 6
    assert res.count == 3
    assert res.fraction == pytest.approx(0.5)
    sig = {(a, b) for a, b, s in zip(res.pairs["system_a"].to_pylist(), res.pairs["system_b"].to_pylist(), res.pairs["significant"].to_pylist()) if s}
    assert sig == {("s0", "s2"), ("s1", "s2"), ("s2", "s3")}
    # identical systems never counted; curve sorted; count non-decreasing in alpha
    assert res.pairs["pvalue"][0].as_py() == 1.0
    assert np.all(np.diff(res.asl_curve) >= 0)
    counts = [res.count_at(a) for a in (0.001, 0.01, 0.05, 0.2, 0.9)]
    assert counts == sorted(counts)


def test_discriminative_power_long_table_input():
    x = constructed_matrix(n=10)
    rows = [(f"s{j}", q, "M", float(x[q, j])) for j in range(4) for q in range(10)]
    rows += [("s0", 99, "M", 0.5)]  # a query only one system has: dropped (intersection)
    t = pa.table({k: [r[i] for r in rows] for i, k in enumerate(("system", "qid", "measure", "value"))})
    a = discriminative_power(t, measure="M", pvalue_fn=t_pvalue)
    b = discriminative_power(x, pvalue_fn=t_pvalue)
    np.testing.assert_allclose(a.pvalues, b.pvalues)


def test_compare_and_curves_tables():
    x = constructed_matrix()
    r1 = discriminative_power(x, pvalue_fn=t_pvalue)
    r2 = discriminative_power(x[:, [0, 1, 3, 2]], pvalue_fn=t_pvalue)
    tab = compare_discriminative_power({"A": r1, "B": r2}, alphas=(0.05, 0.01))
    assert tab.num_rows == 4 and tab.column_names == ["metric", "method", "alpha", "n_pairs", "count", "fraction"]
    cur = asl_curves({"A": r1})
    assert cur["rank"].to_pylist() == list(range(1, 7))


def test_conflicts_categories_and_kappa():
    x = constructed_matrix()
    a = discriminative_power(x, pvalue_fn=t_pvalue)
    y = x.copy()
    y[:, 3] = y[:, 0] + 0.2  # now s3 beats s0, s1 significantly, and s2 still beats s3
    b = discriminative_power(y, pvalue_fn=t_pvalue)
    c = conflicts(a, b)
    cat = dict(zip(zip(c["system_a"].to_pylist(), c["system_b"].to_pylist()), c["category"].to_pylist()))
    assert cat[("s0", "s1")] == "neither"
    assert cat[("s0", "s2")] == "both"
    assert cat[("s0", "s3")] == "b_only"
    counts = conflict_counts(a, b)
    assert counts["conflicts"] == counts["a_only"] + counts["b_only"] + counts["opposite"] == 2
    assert conflict_counts(a, a)["kappa"] == 1.0


def test_cohen_kappa_textbook_and_properties():
    # 2x2 counts (20, 5; 10, 15) -> kappa = 0.4
    r1 = [1] * 25 + [0] * 25
    r2 = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(r1, r2) == pytest.approx(0.4)
    assert cohen_kappa(r2, r1) == pytest.approx(0.4)
    assert cohen_kappa([0, 1, 2], [0, 1, 2]) == 1.0
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0  # p_e = 1 -> 1 by choice


def test_pad_oracles():
    assert pad(0.5, 0.4) == pytest.approx(20.0)
    assert pad(0.0, 0.0) == 0.0
    assert pad(0.4, 0.5) == pad(0.5, 0.4)
    assert pad(-0.5, 0.25) == pytest.approx(150.0)
    t = pad_table(np.array([[0.5, 0.4], [0.5, 0.4]]))
    assert t["pad"].to_pylist() == pytest.approx([20.0])


def test_bad_input():
    x = constructed_matrix()
    with pytest.raises(InputError, match="`alpha`"):
        discriminative_power(x, alpha=1.5, pvalue_fn=t_pvalue)
    with pytest.raises(InputError, match="`method`"):
        discriminative_power(x, method="nope")
    with pytest.raises(InputError, match="2-D"):
        discriminative_power(np.ones(5), pvalue_fn=t_pvalue)


def test_stats_backend_matches_scipy_t():
    """The default p-values come from uefast.stats; the t-test agrees with scipy.ttest_rel."""
    x = np.random.default_rng(11).random((25, 4))
    res = discriminative_power(x, method="t")
    ref = discriminative_power(x, pvalue_fn=t_pvalue)
    np.testing.assert_allclose(res.pvalues, ref.pvalues, rtol=1e-10)
    assert res.method == "t"
    boot = discriminative_power(x, method="bootstrap", n_resamples=200, seed=3)
    again = discriminative_power(x, method="bootstrap", n_resamples=200, seed=3)
    np.testing.assert_array_equal(boot.pvalues, again.pvalues)


def test_long_tables_duplicates_refused_and_integer_system_names():
    """A repeated (system, qid) kept its last value silently; integer system names raised a raw
    KeyError in discriminative_power (all_pairs names them as strings)."""
    from uefast.meta import discriminative_power, pad

    dup = pa.table({"system": ["A", "A", "A", "B", "B", "B", "A"], "qid": ["q1", "q2", "q3", "q1", "q2", "q3", "q1"],
                    "value": [0.1, 0.5, 0.3, 0.2, 0.4, 0.9, 0.9]})
    with pytest.raises(InputError, match="duplicate rows for system 'A', qid 'q1'"):
        discriminative_power(dup)
    ints = pa.table({"system": [10, 10, 10, 20, 20, 20], "qid": [1, 2, 3, 1, 2, 3],
                     "value": [0.1, 0.5, 0.3, 0.2, 0.4, 0.9]})
    dp = discriminative_power(ints)
    assert dp.n_pairs == 1 and dp.pairs["system_a"].to_pylist() == ["10"]
    assert np.isnan(pad(float("nan"), 0.5))


def test_long_table_infinite_value_refused():
    """A long table with inf went through (as_matrix gave inf, pad_table a NaN PAD, swap_rate a raw
    ValueError from np.bincount); the matrix path refused it with an InputError."""
    from uefast.meta import as_matrix, swap_rate

    t = pa.table({"system": ["a"] * 4 + ["b"] * 4, "qid": [1, 2, 3, 4] * 2,
                  "value": [0.1, np.inf, 0.3, 0.2, 0.2, 0.3, 0.1, 0.4]})
    for fn in (as_matrix, pad_table, lambda t: swap_rate(t, n_trials=10)):
        with pytest.raises(InputError, match=r"column `value` is inf for system 'a', qid 2; "
                                             r"every value must be finite"):
            fn(t)
