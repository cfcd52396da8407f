"""uefast.distributed.swap_rate: swap rates from mergeable subset sums. Identical for 1/4/16
partitions and any merge order; equal to a brute-force oracle on its own (keyed) subsets; in
agreement with uefast.meta.swap_rate to Monte Carlo error (different draws, same procedure); the
deterministic cases of uefast.meta's tests give the same numbers. No Dask/Spark needed."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import uefast
from uefast.distributed import swap_rate
from uefast.distributed._reduce import tree_merge
from uefast.distributed._swap import (merge_census, run_swap, subsets, swap_census, swap_plan,
                                      swap_setup)
from uefast.errors import InputError
from uefast.meta import swap_rate as meta_swap_rate

from _distributed_helpers import letor_run

METHODS = ["voorhees-buckley", "bootstrap"]


def _long(x: np.ndarray, qids=None, measure="AP") -> pa.Table:
    """The long per-query table of a topics x systems matrix (rows interleaved)."""
    n, m = x.shape
    qids = list(range(n)) if qids is None else list(qids)
    rows = [(f"s{j}", qids[q], float(x[q, j])) for j in range(m) for q in range(n)]
    return pa.table({"system": [r[0] for r in rows], "qid": [r[1] for r in rows],
                     "measure": [measure] * len(rows), "value": [r[2] for r in rows]})


def _split(table: pa.Table, k: int, seed: int = 0) -> list:
    """``table`` split into ``k`` parts by query (a random assignment of qids)."""
    q = table.column("qid").to_pylist()
    uq = sorted(set(q), key=str)
    part = dict(zip(uq, np.random.default_rng(seed).integers(0, k, len(uq))))
    sel = np.array([part[v] for v in q])
    return [table.filter(pa.array(sel == i)) for i in range(k)]


def _same(a, b) -> bool:
    same_dr = (a.difference_required == b.difference_required
               or (math.isnan(a.difference_required) and math.isnan(b.difference_required)))
    return (a.method == b.method and a.subset_size == b.subset_size
            and a.n_trials == b.n_trials and a.n_pairs == b.n_pairs
            and a.swap_rate == b.swap_rate and same_dr and a.bins.equals(b.bins))


@pytest.fixture(scope="module")
def per_query():
    t = letor_run(n_queries=60, seed=5, systems=("a", "b", "c", "d"))
    return uefast.evaluate(t, None, ["nDCG@10", "AP"])


@pytest.mark.parametrize("method", METHODS)
def test_identical_for_any_partitioning(per_query, method):
    kw = dict(method=method, n_trials=300, seed=9, measure="AP", subset_size=20)
    ref = swap_rate(per_query, **kw)
    plan = swap_plan(**kw)
    for k, seed in [(1, 0), (4, 1), (16, 2), (7, 3)]:
        parts = _split(per_query, k, seed)[::-1]  # merged in another order, too
        got = run_swap(lambda fn, merge: tree_merge([fn(p) for p in parts], merge), plan)
        assert _same(got, ref), (method, k)
    assert 0.0 < ref.swap_rate < 1.0  # the data swap: the test compares something


def _brute_force(x, q1s, q2s, c, tol, bin_width, n_bins, binning, ties):
    """Voorhees-Buckley / Sakai bins by definition (loops, math.fsum means)."""
    n, m = x.shape
    count, swaps = [0] * n_bins, [0] * n_bins
    for q1, q2 in zip(q1s, q2s):
        mu1 = [math.fsum(x[q, j] for q in q1) / c for j in range(m)]
        mu2 = [math.fsum(x[q, j] for q in q2) / c for j in range(m)]
        for i in range(m):
            for j in range(i + 1, m):
                d1, d2 = mu1[i] - mu1[j], mu2[i] - mu2[j]
                d1 = 0.0 if abs(d1) <= tol else d1
                d2 = 0.0 if abs(d2) <= tol else d2
                key = abs(d1) if binning == "d1" else (abs(d1) + abs(d2)) / 2
                b = min(int(math.floor(key / bin_width + 1e-9)), n_bins - 1)
                count[b] += 1
                swaps[b] += (d1 * d2 < 0) if ties == "strict" else (d1 * d2 <= 0)
    return count, swaps


@pytest.mark.parametrize("method,binning,ties", [("voorhees-buckley", "d1", "strict"),
                                                 ("bootstrap", "mean", "tie_is_swap"),
                                                 ("bootstrap", "d1", "strict"),
                                                 ("voorhees-buckley", "mean", "tie_is_swap")])
def test_equals_brute_force_on_its_subsets(method, binning, ties):
    """The subsets are what the docs say (disjoint c-halves / c draws with replacement) and the
    bins are those of the swap method's definition computed on them by loops."""
    rng = np.random.default_rng(3)
    x = np.round(rng.random((13, 4)) * 20) / 20 + np.array([0, 0.02, 0.05, 0.05])  # ties too
    qids = [f"t{i}" for i in rng.permutation(13)]
    t = _long(x, qids)
    kw = dict(method=method, n_trials=40, seed=2, binning=binning, ties=ties, bin_width=0.02)
    res = swap_rate(t, **kw)
    plan = swap_plan(**kw)
    census = swap_census(t, plan)
    setup = swap_setup(census, plan)
    q1s, q2s = subsets(setup, plan, census.qkeys)  # positions into the census order
    pos = {q: i for i, q in enumerate(census.qids[0].to_pylist())}
    xx = x[[qids.index(q) for q in sorted(pos, key=pos.get)]]  # census order
    c = res.subset_size
    assert c == (6 if method == "voorhees-buckley" else 13)
    for q1, q2 in zip(q1s, q2s):
        assert len(q1) == len(q2) == c
        if method == "voorhees-buckley":
            assert not set(q1) & set(q2) and len(set(q1)) == c
    assert sum(len(set(q)) < c for q in q1s) > 0 or method == "voorhees-buckley"  # repeats
    count, swaps = _brute_force(xx, q1s, q2s, c, setup.tol, 0.02, 21, binning, ties)
    assert res.bins["count"].to_pylist() == count
    assert res.bins["swaps"].to_pylist() == swaps


def test_subsets_are_uniform():
    """Every topic lands in Q1 with probability c/n (VB) and is drawn c/n times per sample on
    average (bootstrap): 4-sigma bounds over 2,000 trials."""
    t = _long(np.random.default_rng(0).random((10, 2)), qids=[f"q{i}" for i in range(10)])
    for method, c in (("voorhees-buckley", 3), ("bootstrap", 5)):
        plan = swap_plan(method=method, n_trials=2000, subset_size=c, seed=7)
        census = swap_census(t, plan)
        q1s, q2s = subsets(swap_setup(census, plan), plan, census.qkeys)
        for qs in (q1s, q2s):
            freq = np.bincount(np.concatenate(qs), minlength=10) / 2000
            p = c / 10
            sd = math.sqrt(p * (1 - p) / 2000) if method == "voorhees-buckley" else \
                math.sqrt(c * 0.1 * 0.9 / 2000)
            assert np.all(np.abs(freq - p) < 4 * sd), (method, freq)


@pytest.mark.parametrize("method", METHODS)
def test_agrees_with_meta_to_monte_carlo_error(method):
    """Same procedure, different draws: the pooled rate is within 4 sigma of meta's, sigma
    estimated from meta's spread over 12 seeds (the same T)."""
    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.2, (40, 5)) + np.linspace(0, 0.06, 5)
    T = 400
    metas = np.array([meta_swap_rate(x, method=method, n_trials=T, seed=s).swap_rate
                      for s in range(12)])
    sd = metas.std(ddof=1)
    ours = [swap_rate(_long(x), method=method, n_trials=T, seed=s).swap_rate for s in (1, 2)]
    assert sd > 0
    for r in ours:
        assert abs(r - metas.mean()) < 4 * sd * math.sqrt(1 + 1 / 12), (r, metas.mean(), sd)
    assert ours[0] != ours[1]  # the seed changes the draws


def test_deterministic_cases_match_meta():
    """Where the swap method's outcome does not depend on the draws, meta and distributed agree
    bin for bin (the cases of tests/test_meta_swap.py)."""
    two = np.array([[0.6, 0.5], [0.2, 0.5]])  # c = 1: +0.1 against -0.3 in every trial
    a, b = swap_rate(_long(two), n_trials=10, seed=3), meta_swap_rate(two, n_trials=10, seed=3)
    assert a.swap_rate == b.swap_rate == 1.0
    counts = np.asarray(a.bins["count"].to_pylist())
    assert counts[10] + counts[20] == 10 and counts[:10].sum() == 0
    same = np.tile([[0.3, 0.3]], (6, 1))
    for ties, want in (("strict", 0.0), ("tie_is_swap", 1.0)):
        assert swap_rate(_long(same), n_trials=5, ties=ties).swap_rate == want
        assert _same(swap_rate(_long(same), n_trials=5, ties=ties),
                     meta_swap_rate(same, n_trials=5, ties=ties))
    # rational ties: mean(0.1, 0.2) and mean(0.3, 0.0) differ as doubles; the tie rule of
    # uefast.meta (|d| <= 2**-40 max|X|) makes them equal, so no trial swaps or counts a gap
    tie = np.array([[0.1, 0.3], [0.2, 0.0], [0.1, 0.3], [0.2, 0.0]])
    r = swap_rate(_long(tie, qids=[0, 1, 2, 3]), method="bootstrap", subset_size=4, n_trials=50)
    dominated = np.column_stack([np.linspace(0.5, 0.9, 20), np.linspace(0.1, 0.4, 20)])
    for method in METHODS:
        assert swap_rate(_long(dominated), method=method, n_trials=40).swap_rate == 0.0
    assert 0.0 <= r.swap_rate <= 1.0 and r.n_trials == 50


def test_intersection_and_selection(per_query):
    """Topics some system lacks are dropped; `systems` selects columns; the measure filters."""
    t = per_query.filter(pa.compute.equal(per_query.column("measure"), "AP"))
    drop = t.filter(pa.compute.invert(pa.compute.and_(
        pa.compute.equal(t.column("system"), "a"), pa.compute.less(t.column("qid"), 100))))
    n_full = len(set(drop.column("qid").to_pylist()))
    n_kept = len(set(t.filter(pa.compute.greater_equal(t.column("qid"), 100))
                     .column("qid").to_pylist()))
    assert swap_rate(drop, n_trials=3).subset_size == n_kept // 2 < n_full // 2
    sel = swap_rate(drop, n_trials=20, systems=["b", "c"], seed=1)
    assert sel.subset_size == n_full // 2 and sel.n_pairs == 1
    assert _same(sel, swap_rate(t.filter(pa.compute.is_in(
        t.column("system"), value_set=pa.array(["b", "c"]))), n_trials=20, seed=1))
    assert _same(swap_rate(per_query, measure="AP", n_trials=20, seed=1),
                 swap_rate(t, n_trials=20, seed=1))


def test_errors(per_query):
    with pytest.raises(InputError, match="several measures"):
        swap_rate(per_query)
    with pytest.raises(InputError, match="not in the table"):
        swap_rate(per_query, measure="P@5")
    with pytest.raises(InputError, match="not in the table"):
        swap_rate(per_query, measure="AP", systems=["a", "zz"])
    with pytest.raises(InputError, match="subset_size"):
        swap_rate(per_query, measure="AP", subset_size=31)
    with pytest.raises(InputError, match="at least 2 systems"):
        swap_rate(per_query, measure="AP", systems=["a"])
    with pytest.raises(InputError, match="method"):
        swap_rate(per_query, measure="AP", method="x")
    t = _long(np.array([[0.1, 0.2], [np.nan, 0.3], [0.5, 0.5]]))
    with pytest.raises(InputError, match="NaN.*qid 1"):
        swap_rate(t)
    dup = pa.concat_tables([t.slice(0, 1), t])
    with pytest.raises(InputError, match="duplicate rows for system 's0', qid 0"):
        swap_rate(dup)
    ok = _long(np.array([[0.1, 0.2], [0.4, 0.3], [0.5, 0.5], [0.2, 0.9]]))
    parts = [ok.slice(0, 5), ok.slice(5)]  # qid 1's rows in both parts
    plan = swap_plan()
    with pytest.raises(InputError, match="occurs in two parts"):
        run_swap(lambda fn, merge: tree_merge([fn(p) for p in parts], merge), plan)
    assert merge_census({}, {}) == {}
