"""all_pairs / tukey_hsd tables, corrections, effect sizes and the topics x systems matrix."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError
from uefast.stats import (adjust_pvalues, all_pairs, paired_test, sakai_effect_size_e,
                          topic_system_matrix, tukey_hsd)

COLUMNS = ["system_a", "system_b", "n_topics", "mean_a", "mean_b", "mean_difference",
           "effect_size", "effect_size_e", "statistic", "pvalue", "pvalue_adjusted",
           "significant", "ci_low", "ci_high"]


def long_table(values: dict, measure="AP", qids=None, drop=()):
    """values: system -> list of per-query values; rows in `drop` ((system, qid)) left out."""
    rows = {"system": [], "qid": [], "measure": [], "value": [], "ue_v2": []}
    for s, vals in values.items():
        for k, v in enumerate(vals):
            q = qids[k] if qids else f"q{k}"
            if (s, q) in drop:
                continue
            rows["system"].append(s)
            rows["qid"].append(q)
            rows["measure"].append(measure)
            rows["value"].append(float(v))
            rows["ue_v2"].append(float(v) - 0.5)
    return pa.table(rows)


@pytest.mark.parametrize("method", ["t", "wilcoxon", "sign"])
def test_all_pairs_matches_paired_test(method):
    x = np.random.default_rng(2).random((30, 4))
    table = all_pairs(x, method, systems=["a", "b", "c", "d"])
    assert table.column_names == COLUMNS
    assert table.num_rows == 6
    first = table.to_pylist()[0]
    assert (first["system_a"], first["system_b"]) == ("a", "b")
    ref = paired_test(x[:, 0], x[:, 1], method)
    assert first["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert first["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert first["effect_size"] == pytest.approx(ref.effect_size, rel=1e-12)
    meta = json.loads(table.schema.metadata[b"uefast.stats"])
    assert meta["method"] == method and meta["n_pairs"] == 6


def test_baseline_and_correction():
    x = np.random.default_rng(3).random((50, 4)) + np.array([0, 0.1, 0.2, 0.02])
    table = all_pairs(x, "t", systems=["base", "b", "c", "d"], baseline="base", correction="holm")
    rows = table.to_pylist()
    assert [(r["system_a"], r["system_b"]) for r in rows] == [("b", "base"), ("c", "base"),
                                                             ("d", "base")]
    p = np.array([r["pvalue"] for r in rows])
    assert np.allclose([r["pvalue_adjusted"] for r in rows], adjust_pvalues(p, "holm"))
    assert [r["significant"] for r in rows] == [r["pvalue_adjusted"] < 0.05 for r in rows]
    assert rows[1]["mean_difference"] == pytest.approx(x[:, 2].mean() - x[:, 0].mean())


def test_adjust_pvalues_oracles():
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.005])
    assert np.allclose(adjust_pvalues(p, "bonferroni"), np.minimum(1, 5 * p))
    assert np.allclose(adjust_pvalues(p, "bh"), scipy.stats.false_discovery_control(p))
    # Holm by hand: sorted 0.005 .01 .03 .04 .2 -> .025 .04 .09 .09 .2
    assert np.allclose(adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.2, 0.025])
    assert np.array_equal(adjust_pvalues(p, "none"), p)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.sampled_from(["holm", "bh",
                                                                            "bonferroni"]))
def test_adjusted_pvalues_bounded_and_monotone(p, method):
    p = np.array(p)
    adj = adjust_pvalues(p, method)
    assert (adj >= p - 1e-15).all() and (adj <= 1).all()
    order = np.argsort(p, kind="stable")
    assert (np.diff(adj[order]) >= -1e-15).all()


def test_effect_size_e():
    x = np.random.default_rng(0).random((20, 3))
    n, m = x.shape
    resid = x - x.mean(1, keepdims=True) - x.mean(0) + x.mean()
    assert sakai_effect_size_e(x) == pytest.approx(np.sqrt((resid ** 2).sum() / ((n - 1) * (m - 1))))


def test_topic_system_matrix_intersect_zero_error():
    vals = {"s1": [0.1, 0.2, 0.3, 0.4], "s2": [0.5, 0.6, 0.7, 0.8]}
    table = long_table(vals, drop={("s2", "q1")})
    res = topic_system_matrix(table, "AP")
    assert res.qids == ("q0", "q2", "q3") and res.dropped_qids == ("q1",)
    assert res.systems == ("s1", "s2")
    assert np.array_equal(res.matrix, [[0.1, 0.5], [0.3, 0.7], [0.4, 0.8]])
    filled = topic_system_matrix(table, "AP", missing="zero")
    assert filled.filled == (("s2", "q1"),) and filled.matrix[1, 1] == 0.0
    with pytest.raises(InputError, match=r"1 \(system, qid\) cells are missing.*'s2', 'q1'"):
        topic_system_matrix(table, "AP", missing="error")
    ue = topic_system_matrix(table, column="ue_v2", systems=["s2", "s1"])
    assert ue.systems == ("s2", "s1") and ue.matrix[0, 0] == pytest.approx(0.0)


def test_topic_system_matrix_polars_and_int_qids():
    table = long_table({"a": [1, 2, 3], "b": [3, 2, 1]}, qids=[30, 10, 20])
    res = topic_system_matrix(pl.from_arrow(table))
    assert res.qids == (30, 10, 20)
    assert np.array_equal(res.matrix[:, 1], [3, 2, 1])


def test_topic_system_matrix_errors():
    table = long_table({"a": [1, 2], "b": [3, 4]})
    two = pa.concat_tables([table, long_table({"a": [1, 2]}, measure="P@10")])
    with pytest.raises(InputError, match="holds 2 measures"):
        topic_system_matrix(two)
    with pytest.raises(InputError, match="`measure` 'nDCG' not in the table"):
        topic_system_matrix(table, "nDCG")
    with pytest.raises(InputError, match="duplicate rows for system 'a', qid 'q0'"):
        topic_system_matrix(pa.concat_tables([table, table]))
    nan = long_table({"a": [1, float("nan")], "b": [3, 4]})
    with pytest.raises(InputError, match="NaN for system 'a', qid 'q1'"):
        topic_system_matrix(nan)
    with pytest.raises(InputError, match="no `score` column"):
        topic_system_matrix(table, column="score")
    with pytest.raises(InputError, match="`missing` must be one of"):
        topic_system_matrix(table, missing="drop")


def test_all_pairs_from_long_table_reports_missing():
    vals = {"s1": np.linspace(0, 1, 12), "s2": np.linspace(0.1, 1, 12), "s3": np.ones(12) / 2}
    table = long_table(vals, drop={("s3", "q4")})
    with pytest.warns(UserWarning, match="dropped 1 queries"):
        res = all_pairs(table, "t", measure="AP")
    meta = json.loads(res.schema.metadata[b"uefast.stats"])
    assert meta["missing_report"]["dropped_qids"] == ["q4"]
    assert res["n_topics"][0].as_py() == 11
    assert res["system_a"].to_pylist() == ["s1", "s1", "s2"]
    with pytest.warns(UserWarning, match="filled 1 cells"):
        tk = tukey_hsd(table, measure="AP", missing="zero", n_resamples=100)
    assert tk["n_topics"][0].as_py() == 12


def test_difference_required_matches_naive():
    from uefast.stats import difference_required
    from uefast.stats.resampling import bootstrap_pairs

    x = np.random.default_rng(8).random((25, 3)) + np.array([0, 0.05, 0.1])
    res = difference_required(x, alpha=0.05, n_resamples=400, seed=2)
    pairs = [(0, 1), (0, 2), (1, 2)]
    _, _, means, t_all = bootstrap_pairs(x, pairs, n_resamples=400, seed=2,
                                         alternative="two-sided", keep_means=True, keep_t=True)
    expect = []
    for p, (i, j) in enumerate(pairs):
        ranked = sorted(range(400), key=lambda b: -abs(t_all[b, p]))
        b = ranked[19]  # the 20th largest |t*| (B * alpha = 20)
        expect.append(abs(means[b, p] - (x[:, i] - x[:, j]).mean()))
    assert np.allclose(res.per_pair, expect)
    assert res.difference == max(res.per_pair) and res.pairs == (("0", "1"), ("0", "2"), ("1", "2"))
    unshifted = difference_required(x, alpha=0.05, n_resamples=400, seed=2, shifted=False)
    assert unshifted.difference >= 0
    with pytest.raises(InputError, match="`shifted` must be True or False"):
        difference_required(x, shifted="yes")


def test_integer_system_names_baseline_and_systems():
    """An integer `baseline` was a column index even for a table whose systems are integers
    (baseline=2 paired against system 3), and systems=["1", "3"] was "not in the table"."""
    t = pa.table({"system": [1] * 5 + [2] * 5 + [3] * 5, "qid": list(range(5)) * 3,
                  "value": list(np.random.default_rng(0).random(15))})
    for baseline in (2, "2", np.int64(2)):
        rows = all_pairs(t, "t", baseline=baseline).select(["system_a", "system_b"]).to_pylist()
        assert rows == [{"system_a": "1", "system_b": "2"}, {"system_a": "3", "system_b": "2"}]
    tk = tukey_hsd(t, baseline=3, n_resamples=50)
    assert tk["system_b"].to_pylist() == ["3", "3"]
    with pytest.raises(InputError, match=r"`baseline` 0 is not one of the systems"):
        all_pairs(t, "t", baseline=0)
    sub = all_pairs(t, "t", systems=["1", "3"])
    assert sub.select(["system_a", "system_b"]).to_pylist() == [{"system_a": "1", "system_b": "3"}]
    assert topic_system_matrix(t, systems=["3", 1]).systems == (3, 1)
    with pytest.raises(InputError, match=r"`systems` names system 1 twice \(as 1\); got \['1', 1\]"):
        topic_system_matrix(t, systems=["1", 1])
    # a numpy matrix: an integer is a column index unless it names a system
    x = np.random.default_rng(1).random((6, 3))
    assert all_pairs(x, "t", systems=["a", "b", "c"], baseline=1)["system_b"][0].as_py() == "b"
    assert all_pairs(x, "t", systems=[10, 2, 0], baseline=2)["system_b"][0].as_py() == "2"


def test_effect_size_e_infinite_when_residual_variance_is_rounding():
    """V_E of an additive matrix is ~1e-17 by rounding: ES_E was ±1e15, not ±inf."""
    base = np.random.default_rng(0).random(20)
    x = np.column_stack([base, base + 0.1, base + 0.3])
    table = all_pairs(x, "t")
    assert table["effect_size_e"].to_pylist() == [-np.inf, -np.inf, -np.inf]
    assert table["effect_size"].to_pylist() == [-np.inf, -np.inf, -np.inf]
    same = all_pairs(np.column_stack([base, base, base + 0.3]), "t")
    assert same["effect_size_e"].to_pylist() == [0.0, -np.inf, -np.inf]


@pytest.mark.parametrize("method", ["t", "bootstrap", "randomization", "tukey_hsd"])
def test_huge_finite_scores_do_not_overflow(method):
    """Squares of |x| ~ 1e160 overflowed: t = 0 and p = 1, effect sizes NaN, the bootstrap's t
    NaN with p = 0. Scaling by a power of two is exact, so the results must be those of the
    unscaled data (intervals scaled)."""
    x = np.random.default_rng(4).random((12, 3)) + np.array([0.0, 0.1, 0.12])
    scale = 2.0 ** 530  # ~3.5e159
    small = all_pairs(x, method, n_resamples=300, seed=1)
    big = all_pairs(x * scale, method, n_resamples=300, seed=1)
    for col in ("effect_size", "effect_size_e", "pvalue"):
        assert big[col].to_pylist() == small[col].to_pylist()
    unit = 1.0 if method in ("t", "bootstrap") else scale  # t is scale-free, mean differences not
    for col, u in (("statistic", unit), ("ci_low", scale), ("ci_high", scale)):
        np.testing.assert_allclose(np.array(big[col].to_pylist()) / u, small[col].to_pylist(),
                                   rtol=1e-14)
    res = paired_test(x[:, 0] * scale, x[:, 1] * scale, "t")
    ref = paired_test(x[:, 0], x[:, 1], "t")
    assert (res.statistic, res.pvalue, res.effect_size) == (ref.statistic, ref.pvalue, ref.effect_size)
