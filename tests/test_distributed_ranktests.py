"""uefast.distributed: sign and Wilcoxon signed-rank tests from merged counts (identical to
uefast.stats.paired_test, any partitioning) and the randomised Tukey HSD test from merged
permuted column sums (identical for any partitioning; agrees with uefast.stats.tukey_hsd to
Monte Carlo error). Partitions are simulated by splitting the table by query; the Dask and Spark
adapters run the same reductions (tests/test_dask.py, tests/test_spark.py)."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import uefast
from uefast.distributed import compare, tukey_hsd
from uefast.distributed._ranks import RankStats
from uefast.distributed._reduce import compare_plan, run_compare, tree_merge
from uefast.distributed._tukey import keyed_permutation, run_tukey, tukey_plan
from uefast.errors import InputError
from uefast.stats import paired_test
from uefast.stats import tukey_hsd as stats_tukey

from _distributed_helpers import letor_run


@pytest.fixture(scope="module")
def per_query():
    t = letor_run(n_queries=70, systems=("a", "b", "c"))
    return uefast.evaluate(t, None, ["nDCG@10", "P@5", "AP"])


def _split(table, k, seed=0):
    """``table`` split into ``k`` parts by query (a random assignment of qids)."""
    q = table.column("qid").to_numpy()
    part = np.random.default_rng(seed).integers(0, k, q.max() + 1)[q]
    return [table.filter(pa.array(part == i)) for i in range(k)]


def _column(t, measure, system, qids=None):
    d = t.to_pandas()
    d = d[(d.measure == measure) & (d.system == system)].set_index("qid")["value"]
    return d if qids is None else d.loc[qids].to_numpy()


def _pair(t, row):
    a = _column(t, row["measure"], row["system_a"])
    b = _column(t, row["measure"], row["system_b"])
    common = sorted(set(a.index) & set(b.index))
    return a.loc[common].to_numpy(), b.loc[common].to_numpy()


CASES = [("sign", {}), ("sign", {"epsilon": 0.05}), ("sign", {"epsilon": 0.2}),
         ("wilcoxon", {}), ("wilcoxon", {"exact": True}), ("wilcoxon", {"exact": False})]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("method, kw", CASES)
def test_sign_and_wilcoxon_equal_paired_test(per_query, method, kw, alternative):
    """Every pair and measure (P@5: many ties and zero differences; AP: few) gives
    uefast.stats.paired_test's statistic and p-value exactly, for 1, 4 and 16 parts."""
    ref = compare(per_query, method, alternative=alternative, **kw)
    assert ref.num_rows == 9
    for row in ref.to_pylist():
        x, y = _pair(per_query, row)
        r = paired_test(x, y, method, alternative=alternative, **kw)
        assert (row["statistic"], row["pvalue"]) == (r.statistic, r.pvalue), row
        assert row["n_topics"] == len(x)
        assert math.isclose(row["mean_difference"], r.mean_difference, rel_tol=1e-12,
                            abs_tol=1e-15)
    plan = compare_plan(method, alternative=alternative, **kw)
    for k in (1, 4, 16):
        parts = _split(per_query, k, seed=k)
        got = run_compare(lambda fn: tree_merge([fn(p) for p in parts]), plan)
        assert got.equals(ref), (method, k)


def test_wilcoxon_exact_null_without_ties():
    """Continuous scores (no ties, no zeros, N <= 50): the exact subset-sum null is used by
    default, on ranks rebuilt from the merged histogram; missing pairs are left out."""
    rng = np.random.default_rng(5)
    n = 30
    rows = {"system": [], "qid": [], "measure": [], "value": []}
    for s, shift in (("x", 0.05), ("y", 0.0)):
        for q in range(n if s == "x" else n - 3):  # y misses queries 27..29
            rows["system"].append(s)
            rows["qid"].append(q)
            rows["measure"].append("AP")
            rows["value"].append(float(rng.random()) + shift)
    t = pa.table(rows)
    for alt in ("two-sided", "greater", "less"):
        ref = compare(t, "wilcoxon", alternative=alt)
        x, y = _pair(t, ref.to_pylist()[0])
        r = paired_test(x, y, "wilcoxon", alternative=alt)
        assert r.exact and len(x) == n - 3
        row = ref.to_pylist()[0]
        assert (row["statistic"], row["pvalue"]) == (r.statistic, r.pvalue)
        for k in (4, 16):
            parts = _split(t, k, seed=k)
            got = run_compare(lambda fn: tree_merge([fn(p) for p in parts]),
                              compare_plan("wilcoxon", alternative=alt))
            assert got.equals(ref)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.1, -0.1, 0.25, -0.25, 0.5, -0.5, 1e-300, -1e-300,
                                 0.3333, float("nan")]), min_size=1, max_size=80),
       st.lists(st.integers(0, 80), max_size=5))
def test_rank_histogram_merges_to_the_whole(zs, cuts):
    """Merging the histograms of any split gives the histogram of the whole column, and the
    rank statistics built from it are scipy's (average ranks of |z|, zeros dropped)."""
    from scipy import stats as sst

    from uefast.distributed._ranks import finish_wilcoxon

    z = np.array(zs, np.float64)
    bounds = sorted({0, len(z), *[min(c, len(z)) for c in cuts]})
    parts = [RankStats.of(z[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    merged = parts[0]
    for p in parts[1:]:
        merged = p.merge(merged)
    whole = RankStats.of(z)
    assert np.array_equal(merged.values, whole.values)
    assert np.array_equal(merged.pos, whole.pos) and np.array_equal(merged.neg, whole.neg)
    zz = z[~np.isnan(z)]
    nz = zz[zz != 0]
    if len(nz):
        stat, _ = finish_wilcoxon(merged, len(zz), "greater", False)
        assert stat == float(sst.rankdata(np.abs(nz))[nz > 0].sum())
    # plus two zero differences (so n >= 2): paired_test on the whole column
    ref = paired_test(np.concatenate([zz, [0.0, 0.0]]), np.zeros(len(zz) + 2), "wilcoxon",
                      alternative="greater")
    assert finish_wilcoxon(merged, len(zz) + 2, "greater", None) == (ref.statistic, ref.pvalue)


def test_rank_test_options_are_checked(per_query):
    with pytest.raises(InputError, match="epsilon"):
        compare(per_query, "sign", epsilon=-1)
    with pytest.raises(InputError, match="exact"):
        compare(per_query, "wilcoxon", exact="yes")


# ----------------------------------------------------------------------------- Tukey HSD
@pytest.fixture(scope="module")
def four_systems():
    t = letor_run(n_queries=60, systems=("a", "b", "c", "d"), seed=2)
    return uefast.evaluate(t, None, ["nDCG@10", "AP"])


def test_tukey_identical_for_any_partitioning(four_systems):
    ref = tukey_hsd(four_systems, n_resamples=300, seed=7)
    assert ref.num_rows == 12 and set(ref.column("method").to_pylist()) == {"tukey_hsd"}
    plan = tukey_plan(n_resamples=300, seed=7)
    for k in (1, 4, 16):
        parts = _split(four_systems, k, seed=k)
        got = run_tukey(lambda fn: tree_merge([fn(p) for p in parts]), plan)
        assert got.equals(ref), k
    # rows in another order: the same (draws follow the qid, sums are exact)
    perm = np.random.default_rng(1).permutation(four_systems.num_rows)
    assert tukey_hsd(four_systems.take(pa.array(perm)), n_resamples=300, seed=7).equals(ref)


def test_tukey_agrees_with_uefast_stats(four_systems):
    """The same test as uefast.stats.tukey_hsd with other draws: statistics equal to rounding,
    p-values within Monte Carlo error (5 sigma of the difference of two estimates)."""
    B = 4000
    got = tukey_hsd(four_systems, n_resamples=B, seed=3).to_pylist()
    for m in ("AP", "nDCG@10"):
        ref = stats_tukey(four_systems, measure=m, n_resamples=B, seed=3).to_pylist()
        mine = [r for r in got if r["measure"] == m]
        assert [(r["system_a"], r["system_b"]) for r in mine] == \
            [(r["system_a"], r["system_b"]) for r in ref]
        for a, b in zip(mine, ref):
            assert a["n_topics"] == b["n_topics"]
            assert math.isclose(a["statistic"], b["statistic"], rel_tol=1e-12, abs_tol=1e-15)
            assert math.isclose(a["mean_difference"], b["mean_difference"], rel_tol=1e-12,
                                abs_tol=1e-15)
            p = b["pvalue"]
            sigma = math.sqrt(2 * max(p * (1 - p), 1 / B) / B)
            assert abs(a["pvalue"] - p) <= 5 * sigma, (a, b)


def test_tukey_intersects_topics_and_filters(four_systems):
    """Queries a system lacks are left out (as missing='intersect'); systems= and measure=
    select the family; the result is uefast.stats' on the same selection."""
    q = four_systems.column("qid").to_numpy()
    s = np.array(four_systems.column("system").to_pylist())
    t = four_systems.filter(pa.array(~((s == "d") & (q < 60))))
    got = tukey_hsd(t, measure="AP", systems=["a", "b", "d"], n_resamples=500, seed=1)
    with pytest.warns(UserWarning, match="dropped 9 queries"):
        ref = stats_tukey(t, measure="AP", systems=["a", "b", "d"], n_resamples=500, seed=1)
    assert got.column("n_topics").to_pylist() == ref.column("n_topics").to_pylist()
    assert got.num_rows == 3 and got.column("n_topics")[0].as_py() < 60
    with pytest.raises(InputError, match="not in the table"):
        tukey_hsd(t, measure="P@99")
    with pytest.raises(InputError, match="at least 2"):
        tukey_hsd(t, systems=["a"])


def test_keyed_permutations_are_uniform():
    """Each of the 3! permutations of a row is drawn with probability 1/6 (chi-square over
    60,000 keys), and a permutation is a function of its key alone."""
    from uefast.distributed._keyed import qid_keys

    m, n = 3, 60_000
    p = np.empty(m, np.int64)
    counts: dict = {}
    for key in qid_keys(pa.array(np.arange(n))):
        keyed_permutation(key, m, p)
        counts[tuple(p)] = counts.get(tuple(p), 0) + 1
    assert len(counts) == 6 and all(sorted(k) == [0, 1, 2] for k in counts)
    chi2 = sum((c - n / 6) ** 2 / (n / 6) for c in counts.values())
    assert chi2 < 25  # 5 df: P(chi2 > 25) < 2e-4
    a, b = np.empty(5, np.int64), np.empty(5, np.int64)
    keyed_permutation(np.uint64(12345), 5, a)
    keyed_permutation(np.uint64(12345), 5, b)
    assert (a == b).all() and sorted(a) == list(range(5))


def test_sign_and_wilcoxon_against_scipy(per_query):
    """An oracle outside uefast (both paths share uefast.stats' finishing functions): scipy's
    binomial test for the sign test; scipy's Wilcoxon (zeros dropped, average ranks, normal
    approximation with tie correction, no continuity correction) where uefast uses the normal
    approximation (ties present)."""
    from scipy import stats as sst

    for alt in ("two-sided", "greater", "less"):
        for row in compare(per_query, "sign", alternative=alt).to_pylist():
            x, y = _pair(per_query, row)
            n_pos, n_neg = int((x > y).sum()), int((x < y).sum())
            assert row["statistic"] == n_pos
            if n_pos + n_neg:
                ref = sst.binomtest(n_pos, n_pos + n_neg, 0.5, alternative=alt).pvalue
                assert math.isclose(row["pvalue"], min(1.0, ref), rel_tol=1e-9), row
        for row in compare(per_query, "wilcoxon", alternative=alt).to_pylist():
            x, y = _pair(per_query, row)
            if (x != y).sum() < 2:
                continue
            ref = sst.wilcoxon(x, y, zero_method="wilcox", correction=False,
                               alternative=alt, method="approx")
            assert math.isclose(row["pvalue"], ref.pvalue, rel_tol=1e-9, abs_tol=1e-15), row
