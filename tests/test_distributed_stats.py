"""uefast.distributed: exact mergeable sums, keyed draws, aggregate/compare from sufficient
statistics (no Dask/Spark needed: partitions are simulated by splitting the table by query)."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import uefast
from uefast.distributed import aggregate, compare
from uefast.distributed._exact import Ragged, merge_ragged
from uefast.distributed._keyed import (_CDF, poisson_draws, qid_keys, sign_draws, plain_sums)
from uefast.distributed._reduce import (aggregate_partial, compare_plan, finish_aggregate,
                                        run_compare, tree_merge)
from uefast.errors import InputError
from uefast.stats import paired_test
from uefast.stats.resampling import randomization_pairs

from _distributed_helpers import letor_run

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


def _sum(xs):
    r, _ = plain_sums(np.zeros(len(xs), np.int64), np.asarray(xs, np.float64), 1)
    return r


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, max_size=60), st.lists(st.integers(0, 60), max_size=4))
def test_exact_sum_is_fsum_for_any_split(xs, cuts):
    """The rounded expansion equals math.fsum (correctly rounded) whatever the split/merge."""
    bounds = sorted({0, len(xs), *[min(c, len(xs)) for c in cuts]})
    parts = [_sum(xs[a:b]) for a, b in zip(bounds[:-1], bounds[1:])] or [_sum([])]
    merged = parts[0]
    for p in parts[1:]:
        merged = merge_ragged(p, merged)  # any order
    assert merged.rounded()[0] == math.fsum(xs)
    assert _sum(xs).rounded()[0] == math.fsum(xs)


def test_exact_sum_beats_naive_cancellation():
    xs = [1e16, 1.0, -1e16, 1.0]
    assert _sum(xs).rounded()[0] == 2.0 and sum(xs) != 2.0


def test_ragged_take_keeps_cells():
    r, _ = plain_sums(np.array([0, 1, 2, 1]), np.array([1.0, 1e-30, 3.0, 1e30]), 3)
    assert list(r.take([2, 0]).rounded()) == [3.0, 1.0]
    assert list(Ragged.zeros(2).rounded()) == [0.0, 0.0]


def test_keyed_draws_follow_the_qid_not_the_position():
    keys = qid_keys(pa.array([5, 9, 2, 77, 1000]))
    perm = np.array([3, 0, 4, 2, 1])
    a, b = np.empty((50, 5), np.int8), np.empty((50, 5), np.int8)
    sign_draws(keys, np.uint64(3), 0, 50, a)
    sign_draws(keys[perm], np.uint64(3), 0, 50, b)
    assert (a[:, perm] == b).all()
    c, d = np.empty((50, 5), np.int64), np.empty((50, 5), np.int64)
    poisson_draws(keys, np.uint64(3), 0, 50, _CDF, c)
    poisson_draws(keys[perm], np.uint64(3), 0, 50, _CDF, d)
    assert (c[:, perm] == d).all()
    # resample b's draws do not depend on the block of resamples computed with it
    e = np.empty((10, 5), np.int8)
    sign_draws(keys, np.uint64(3), 20, 10, e)
    assert (e == a[20:30]).all()


def test_keyed_draws_distribution():
    """Signs are fair coins, weights Poisson(1) (mean 1, variance 1, P(0) = e^-1)."""
    keys = qid_keys(pa.array([f"q{i}" for i in range(400)]))
    s = np.empty((500, 400), np.int8)
    sign_draws(keys, np.uint64(11), 0, 500, s)
    assert abs(s.mean()) < 4 / math.sqrt(s.size)
    c = np.empty((500, 400), np.int64)
    poisson_draws(keys, np.uint64(11), 0, 500, _CDF, c)
    sd = 4 / math.sqrt(c.size)
    assert abs(c.mean() - 1) < 4 * sd and abs(c.var() - 1) < 10 * sd
    assert abs((c == 0).mean() - math.exp(-1)) < 4 * 0.5 / math.sqrt(c.size)
    # an integer qid and its decimal string are different queries
    assert qid_keys(pa.array([1]))[0] != qid_keys(pa.array(["1"]))[0]


@pytest.fixture(scope="module")
def per_query():
    t = letor_run(n_queries=60, seed=5, systems=("a", "b", "c"))
    return uefast.evaluate(t, None, ["nDCG@10", "AP"])


def _split(table, k, seed=0):
    """``table`` split into ``k`` parts by query (a random assignment of qids)."""
    q = table.column("qid").to_numpy()
    part = np.random.default_rng(seed).integers(0, k, q.max() + 1)[q]
    return [table.filter(pa.array(part == i)) for i in range(k)]


@pytest.mark.parametrize("method", ["t", "randomization", "bootstrap"])
def test_compare_identical_for_any_partitioning(per_query, method):
    ref = compare(per_query, method, n_resamples=300, seed=9)
    plan = compare_plan(method, n_resamples=300, seed=9)
    for k, seed in [(1, 0), (4, 1), (16, 2), (7, 3)]:
        parts = _split(per_query, k, seed)[::-1]  # merged in another order, too
        got = run_compare(lambda fn: tree_merge([fn(p) for p in parts]), plan)
        assert got.equals(ref), (method, k)


def test_compare_t_equals_paired_test(per_query):
    ref = compare(per_query, "t", baseline="a")
    for row in ref.to_pylist():
        x = _column(per_query, row["measure"], row["system_a"])
        y = _column(per_query, row["measure"], row["system_b"])
        pt = paired_test(x, y, "t")
        assert row["system_b"] == "a"
        assert math.isclose(row["statistic"], pt.statistic, rel_tol=1e-12)
        assert math.isclose(row["pvalue"], pt.pvalue, rel_tol=1e-10)
        assert math.isclose(row["mean_difference"], pt.mean_difference, rel_tol=1e-12)


def _column(table, measure, system):
    import polars as pl

    d = pl.from_arrow(table).filter((pl.col("measure") == measure) & (pl.col("system") == system))
    return d.sort("qid")["value"].to_numpy()


def test_keyed_randomization_matches_exact_enumeration():
    """The same test as uefast.stats' randomisation: on 14 queries the keyed Monte Carlo p-value
    is within binomial error of the exact p over all 2^14 sign vectors."""
    rng = np.random.default_rng(2)
    x, y = rng.random(14), rng.random(14) * 0.8
    qid = np.arange(14)
    t = pa.table({"system": ["x"] * 14 + ["y"] * 14, "qid": np.concatenate([qid, qid]),
                  "measure": ["AP"] * 28, "value": np.concatenate([x, y])})
    B = 20000
    got = compare(t, "randomization", n_resamples=B, seed=1).column("pvalue")[0].as_py()
    exact = randomization_pairs(np.column_stack([x, y]), [(0, 1)], n_resamples=1, seed=0,
                                alternative="two-sided", exact=True, plus_one=False)[0][0]
    assert 0.001 < exact < 0.999
    assert abs(got - exact) < 4 * math.sqrt(exact * (1 - exact) / B) + 1 / B


def test_poisson_bootstrap_close_to_sakai(per_query):
    """Poisson weights vs Sakai's multinomial resamples: the same ASL up to Monte Carlo error
    (and the Poisson/multinomial difference, small at n = 60)."""
    got = compare(per_query, "bootstrap", n_resamples=4000, seed=3)
    for row in got.to_pylist():
        x = _column(per_query, row["measure"], row["system_a"])
        y = _column(per_query, row["measure"], row["system_b"])
        ref = paired_test(x, y, "bootstrap", n_resamples=4000, seed=3).pvalue
        assert abs(row["pvalue"] - ref) < 0.05, (row, ref)


def test_aggregate_partition_free_and_close_to_uefast(per_query):
    ref = aggregate(per_query)
    for k in (1, 4, 16):
        parts = _split(per_query, k, k)
        assert finish_aggregate(tree_merge([aggregate_partial(p) for p in parts])).equals(ref)
    u = uefast.aggregate(per_query).sort_by([("system", "ascending"), ("measure", "ascending")])
    assert ref.column("n_queries").equals(u.column("n_queries"))
    for c in ("value", "iub", "reb", "ue_v1", "ue_v2"):
        np.testing.assert_allclose(ref.column(c).to_numpy(), u.column(c).to_numpy(), rtol=1e-13)


def test_aggregate_skips_nan_and_null():
    t = pa.table({"system": ["s"] * 3, "qid": [1, 2, 3], "measure": ["AP"] * 3,
                  "value": [0.5, float("nan"), 0.25], "iub": [1.0] * 3, "reb": [0.1] * 3,
                  "ue_v1": pa.nulls(3, pa.float64()), "ue_v2": [0.1, 0.2, 0.3]})
    r = aggregate(t).to_pylist()[0]
    assert r["n_queries"] == 3 and r["value"] == 0.375 and r["ue_v1"] is None


def test_compare_errors(per_query):
    vals = [float("nan")] + [0.5] * (per_query.num_rows - 1)
    bad = per_query.set_column(3, "value", pa.array(vals))
    with pytest.raises(InputError, match="non-finite"):
        compare(bad, "t")
    dup = pa.concat_tables([per_query, per_query.slice(0, 1)])
    with pytest.raises(InputError, match="more than one row"):
        compare(dup, "t")
    with pytest.raises(InputError, match="method"):
        compare(per_query, "tukey")  # tukey_hsd is its own function
    with pytest.raises(InputError, match="baseline"):
        compare(per_query, "t", systems=["a", "b"], baseline="c")


def test_merge_is_blockwise_and_exact(monkeypatch):
    """Merging more cells than one dense block holds gives the same exact sums (math.fsum)."""
    import uefast.distributed._exact as ex

    monkeypatch.setattr(ex, "_BLOCK", 7)
    rng = np.random.default_rng(0)
    C = 7 * 3 + 2
    x = rng.normal(size=(3, C)) * 10.0 ** rng.integers(-20, 20, (3, C))
    parts = [plain_sums(np.arange(C), x[i], C)[0] for i in range(3)]
    got = ex.merge_ragged(ex.merge_ragged(parts[0], parts[1]), parts[2]).rounded()
    assert list(got) == [math.fsum(x[:, c]) for c in range(C)]
