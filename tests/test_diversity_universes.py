"""REB over the ``retrieved`` and ``collection`` universes of the families outside the IA kernel
and ndeval's names (uefast.diversity.universe_div: S-RR, D-nDCG, D#-nDCG, EU, CT, CubeTest):
the closed forms against exact rational sums and against the mean of the plain-Python reference
(tests/naive_diversity.py) over every order of padded tiny universes (Hypothesis seeds; the
evaluate() path is in test_diversity_ia_kernel.py), the judged universe as the special case,
and the accuracy at a collection's size (10^9 documents) where log-gamma differences fail."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import naive_diversity as nd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_diversity_ia_kernel import OTHER, _qrels

from uefast.diversity import parse_measure
from uefast.diversity.reb import coverage_reb, log_comb
from uefast.diversity.universe_div import first_hit_rr, harmonic_diff, universe_reb

MEASURES = OTHER + ["D#-nDCG@5", "EU", "CT(alpha=0.3,h=0.5)@10", "CubeTest@2",
                    "CT-orig(gamma=1.0,max_height=2.5)@10"]


def _naive(m, topic, ranking):
    return getattr(nd, m.fam.naive)(topic.grades.tolist(), topic.weights.tolist(), list(ranking),
                                    m.params, m.k)


def _close(a, b, tol=1e-11):
    return abs(a - b) <= tol * max(1.0, abs(b))


def _mean_over_orders(m, topic, universe):
    vals = [_naive(m, topic, p) for p in set(itertools.permutations(universe))]
    return math.fsum(vals) / len(vals)


def test_first_hit_closed_form_is_the_exact_sum():
    """E[1/X] = u (H_N - H_{u-1})/(N - u + 1) against sum_i P(X = i)/i in rationals."""
    for N in range(1, 13):
        for u in range(N + 1):
            ex = sum((Fraction(math.comb(N - i, u - 1), math.comb(N, u)) / i
                      for i in range(1, N - u + 2)), Fraction(0)) if u else Fraction(0)
            assert abs(first_hit_rr(N, u) - float(ex)) <= 1e-15, (N, u)


@pytest.mark.parametrize("N,a", [(10**6, 0), (10**6, 5), (10**6, 20_000), (10**6, 999_800),
                                 (10**6, 999_999), (300, 10), (5000, 4000)])
def test_harmonic_difference_every_branch(N, a):
    want = math.fsum(1.0 / np.arange(a + 1, N + 1, dtype=np.float64))
    assert abs(harmonic_diff(N, a) - want) <= 1e-13 * max(want, 1e-300)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(MEASURES))
def test_universes_against_enumeration(seed, s):
    """Random topics (n <= 4, up to 4 aspects, some grades 0): REB over a random retrieved list
    (unjudged documents included, shorter or longer than the judged set) and over the judged
    documents plus up to 3 non-relevant ones = the mean over every order; N = n with every
    judged document = the family's own judged REB."""
    m = parse_measure(s)
    rng = np.random.default_rng(seed)
    for top in _qrels(rng, 2, max_n=4).values():
        rows = [int(x) for x in rng.permutation(np.r_[np.arange(top.n), -np.ones(2)])]
        rows = rows[: int(rng.integers(0, len(rows) + 1))]
        want = _mean_over_orders(m, top, rows) if rows else 0.0
        got = universe_reb(top, m, len(rows), np.array(rows, np.int64))
        assert _close(got, want), (s, rows, got, want)
        assert _close(universe_reb(top, m, top.n, np.arange(top.n)), m.fam.reb(top, m)), s
        if m.fam.name == "EU":
            continue
        N = top.n + int(rng.integers(1, 4))
        want = _mean_over_orders(m, top, list(range(top.n)) + [-1] * (N - top.n))
        got = universe_reb(top, m, N, np.arange(top.n))
        assert _close(got, want), (s, top.n, N, got, want)


def test_coverage_at_a_collections_size():
    """P(covered in the top K) = 1 - C(N-R,K)/C(N,K) in rationals, N up to 10^9 (1 - exp of a
    log-gamma difference gave 0 for 3e-8 here)."""
    for N, R, K in [(10**9, 3, 10), (52_000_000, 10, 20), (10**9, 200, 1000), (25_000_000, 1, 1),
                    (1000, 900, 50), (7, 3, 2)]:
        want = 1 - Fraction(math.comb(N - R, K), math.comb(N, K))
        assert abs(coverage_reb(N, R, K) / float(want) - 1) <= 1e-13, (N, R, K)


def test_log_comb_large_a():
    for a, b in [(10**9, 5), (10**6, 1000), (2000, 3), (2000, 1000), (5000, 4990), (10**7, 10**7)]:
        assert abs(float(log_comb(a, np.array([b]))[0]) - math.log(math.comb(a, b))) <= 1e-12 * max(
            1.0, math.log(math.comb(a, b))), (a, b)


def _topic(seed=5):
    return next(t for t in _qrels(np.random.default_rng(seed), 6, max_n=6).values() if t.m >= 2)


@pytest.mark.parametrize("s", ["CT@10", "CT(h=2.0)@20", "CubeTest@10", "D-nDCG@10", "D#-nDCG@10",
                               "S-RR@100%"])
def test_collection_of_a_billion_is_smooth_in_n(s):
    """N = 10^9: the REB is finite, positive, and N * REB moves by O(1/N) from N to N + 1
    (log-gamma differences, whose rounding at 10^9 is ~4e-6, made it jump by ~1e-6)."""
    m = parse_measure(s)
    top = _topic()
    N = 10**9
    a = N * universe_reb(top, m, N, np.arange(top.n))
    b = (N + 1) * universe_reb(top, m, N + 1, np.arange(top.n))
    assert np.isfinite(a) and a > 0
    assert abs(a - b) <= 1e-10 * a, (s, a, b)
