"""Benchmarks of uefast.stats against scipy.stats and ranx on a topics x systems matrix.

Run:   pytest benchmarks/test_bench_stats.py --benchmark-json=out.json
Smoke: UEFAST_BENCH_SMALL=1 pytest benchmarks/test_bench_stats.py --benchmark-disable

The full size is MSLR-WEB30K-shaped (31,531 queries) with 8 systems (28 pairs). Peers run in the
same process on the same matrix; their times and the speed-up ratios go to ``extra_info``.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
import scipy.stats

from uefast.stats import all_pairs, paired_test, tukey_hsd

SMALL = os.environ.get("UEFAST_BENCH_SMALL") == "1"
N_TOPICS = 400 if SMALL else 31_531
N_SYSTEMS = 4 if SMALL else 8
B_BOOT = 200 if SMALL else 10_000
B_TUKEY = 200 if SMALL else 10_000
B_PERM = 100 if SMALL else 1_000
N_RANX = 400 if SMALL else 5_000  # ranx's Fisher test on all ordered pairs is slow: smaller n
ROUNDS = 1 if SMALL else 3


def make_matrix(n_topics: int, n_systems: int, seed: int = 20240601) -> np.ndarray:
    """Deterministic per-query scores: topic difficulty (Beta(2,5)) + small system effects +
    noise, clipped to [0, 1] and rounded to 4 decimals like metric values."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2.0, 5.0, (n_topics, 1))
    effects = np.linspace(0.0, 0.03, n_systems)
    noise = rng.normal(0.0, 0.12, (n_topics, n_systems))
    return np.round(np.clip(difficulty + effects + noise, 0.0, 1.0), 4)


@pytest.fixture(scope="module")
def matrix():
    x = make_matrix(N_TOPICS, N_SYSTEMS)
    all_pairs(x[:50], "bootstrap", n_resamples=8)  # compile outside the timings
    all_pairs(x[:50], "randomization", n_resamples=8, exact=False)
    tukey_hsd(x[:50], n_resamples=8)
    return x


def _clock(fn, repeat=1):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _cpu(fn):
    """CPU seconds (all threads) of one call: less sensitive than wall time to a shared machine."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _pairs(m):
    return [(i, j) for i in range(m) for j in range(i + 1, m)]


def _info(benchmark, **kw):
    benchmark.extra_info.update({"n_topics": N_TOPICS, "n_systems": N_SYSTEMS,
                                 "n_pairs": len(_pairs(N_SYSTEMS))} | kw)


def _ours(benchmark):
    stats = getattr(benchmark, "stats", None)
    return stats.stats.min if stats is not None else None


def test_bootstrap_all_pairs(benchmark, matrix):
    benchmark.group = "stats-bootstrap"
    res = benchmark.pedantic(all_pairs, args=(matrix, "bootstrap"),
                             kwargs={"n_resamples": B_BOOT, "seed": 1}, rounds=ROUNDS,
                             warmup_rounds=0)
    assert res.num_rows == len(_pairs(N_SYSTEMS))
    cpu = _cpu(lambda: all_pairs(matrix, "bootstrap", n_resamples=B_BOOT, seed=1))
    _info(benchmark, n_resamples=B_BOOT, cpu_s=cpu,
          resamples_x_pairs_per_s=None if _ours(benchmark) is None else
          B_BOOT * res.num_rows / _ours(benchmark))


def test_tukey_hsd(benchmark, matrix):
    benchmark.group = "stats-tukey"
    res = benchmark.pedantic(tukey_hsd, args=(matrix,), kwargs={"n_resamples": B_TUKEY, "seed": 1},
                             rounds=ROUNDS, warmup_rounds=0)
    assert res.num_rows == len(_pairs(N_SYSTEMS))
    cpu = _cpu(lambda: tukey_hsd(matrix, n_resamples=B_TUKEY, seed=1))
    _info(benchmark, n_resamples=B_TUKEY, cpu_s=cpu)


def test_randomization_vs_scipy_permutation_test(benchmark, matrix):
    """Our MC sign-flip test for all pairs vs scipy.stats.permutation_test at equal resamples.
    scipy is timed on one pair and scaled by the number of pairs (it tests pairs one by one)."""
    benchmark.group = "stats-randomization"
    res = benchmark.pedantic(all_pairs, args=(matrix, "randomization"),
                             kwargs={"n_resamples": B_PERM, "seed": 1, "exact": False},
                             rounds=ROUNDS, warmup_rounds=0)
    x, y = matrix[:, 0], matrix[:, -1]
    t_scipy = _clock(lambda: scipy.stats.permutation_test(
        (x, y), lambda a, b, axis: np.mean(a - b, axis=axis), permutation_type="samples",
        n_resamples=B_PERM, vectorized=True, random_state=0))
    t_one = _clock(lambda: paired_test(x, y, "randomization", n_resamples=B_PERM, exact=False),
                   repeat=3)
    n_pairs = res.num_rows
    ours = _ours(benchmark)
    _info(benchmark, n_resamples=B_PERM, scipy_one_pair_s=t_scipy,
          scipy_all_pairs_s_extrapolated=t_scipy * n_pairs, uefast_one_pair_s=t_one,
          speedup_one_pair=t_scipy / t_one,
          speedup_all_pairs=None if ours is None else t_scipy * n_pairs / ours)


def test_t_all_pairs_vs_scipy(benchmark, matrix):
    benchmark.group = "stats-t"
    benchmark.pedantic(all_pairs, args=(matrix, "t"), rounds=ROUNDS, warmup_rounds=0)
    t_scipy = _clock(lambda: [scipy.stats.ttest_rel(matrix[:, i], matrix[:, j])
                              for i, j in _pairs(N_SYSTEMS)], repeat=3)
    ours = _ours(benchmark)
    _info(benchmark, scipy_s=t_scipy, ratio_vs_scipy=None if ours is None else t_scipy / ours)


@pytest.mark.parametrize("stat_test", ["student", "fisher"])
def test_vs_ranx_compare(benchmark, stat_test):
    """ranx.compare() evaluates the runs, then calls compute_statistical_significance on the
    per-query scores; we time that statistics step on a smaller matrix (ordered pairs, as ranx
    does) against all_pairs on the same matrix."""
    ranx_st = pytest.importorskip("ranx.statistical_tests")
    x = make_matrix(N_RANX, N_SYSTEMS, seed=7)
    names = [f"s{j}" for j in range(N_SYSTEMS)]
    scores = {name: {"m": np.ascontiguousarray(x[:, j])} for j, name in enumerate(names)}
    ranx_st.compute_statistical_significance(names, scores, stat_test, 10)  # compile numba
    t_ranx = _clock(lambda: ranx_st.compute_statistical_significance(
        names, scores, stat_test=stat_test, n_permutations=B_PERM, random_seed=42))
    method = "t" if stat_test == "student" else "randomization"
    kw = {} if method == "t" else {"n_resamples": B_PERM, "exact": False}
    benchmark.group = f"stats-ranx-{stat_test}"
    benchmark.pedantic(all_pairs, args=(x, method), kwargs=kw, rounds=ROUNDS, warmup_rounds=0)
    ours = _ours(benchmark)
    benchmark.extra_info.update({"n_topics": N_RANX, "n_systems": N_SYSTEMS, "ranx_s": t_ranx,
                                 "n_resamples": B_PERM if method != "t" else None,
                                 "speedup_vs_ranx": None if ours is None else t_ranx / ours})
