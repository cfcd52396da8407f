"""The original Cube Test (``CubeTest(gamma,max_height)@k``, Luo et al. CIKM 2013): hand-computed
values, the REB's three exact routes and its Monte Carlo fallback against enumeration over all
orders, the IUB's exactness claims against the brute-force maximum. (The registry-driven tests
of tests/test_diversity_measures.py also cover it against tests/naive_diversity.cube_test.)"""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import naive_diversity as nd
from uefast.diversity import families_cube as fc
from uefast.diversity import parse_measure
from uefast.diversity.qrels import Topic
from uefast.diversity.registry import Batch
from uefast.errors import MeasureParseError


def _topic(G, w=None):
    G = np.asarray(G, np.int64)
    m = G.shape[1]
    w = np.full(m, 1.0 / m) if w is None else np.asarray(w, float)
    return Topic("q", np.array([f"d{i}" for i in range(G.shape[0])], object), G,
                 [str(t) for t in range(m)], w, (G >= 1).sum(axis=0))


def _value(s, topic, ranking):
    m = parse_measure(s)
    rows = np.asarray(ranking, np.int64)
    return float(m.fam.value(Batch([topic], np.zeros(1, np.int64), rows,
                                   np.array([0, rows.size], np.int64)), m)[0])


def _all_orders(s, topic):
    m = parse_measure(s)
    return [nd.cube_test(topic.grades.tolist(), topic.weights.tolist(), list(p), m.params, m.k)
            for p in itertools.permutations(range(topic.n))]


GOLD = _topic([[1, 0], [0, 2], [1, 1], [0, 0]], [0.6, 0.4])


@pytest.mark.parametrize("s, ranking, want", [
    # d2 fills aspect 0 (r = 1/1) and half of aspect 1 (r = 1/2); d1 adds 0.5 * (2/2) to aspect 1
    ("CubeTest@3", [2, 1, 0], (0.6 * 1 + 0.4 * 1.0) / 3),
    # H = 2: d0 adds 0.5 * 1 to aspect 0 (one earlier relevant document)
    ("CubeTest(max_height=2.0)@3", [2, 1, 0], (0.6 * 1.5 + 0.4 * 1.0) / 3),
    # time counts the documents examined: a shorter ranking divides by its length
    ("CubeTest@10", [2], (0.6 * 1 + 0.4 * 0.5) / 1),
    ("CubeTest@10", [-1, 3], 0.0),
    ("CubeTest@2", [], 0.0),
    # gamma = 1, no cap reached: plain weighted sum of r
    ("CubeTest(gamma=1.0,max_height=5.0)@4", [0, 1, 2, 3], (0.6 * 2 + 0.4 * 1.5) / 4),
])
def test_hand_computed_values(s, ranking, want):
    assert _value(s, GOLD, ranking) == pytest.approx(want, abs=1e-15)
    m = parse_measure(s)
    assert nd.cube_test(GOLD.grades.tolist(), [0.6, 0.4], ranking, m.params, m.k) == pytest.approx(want)


def test_strings_parse_back_and_refuse_bad_parameters():
    for s in ("CubeTest@10", "CubeTest(gamma=0.8)@5", "CubeTest(max_height=2.0)@20"):
        assert str(parse_measure(s)) == s
    assert str(parse_measure("CT-orig(gamma=0.5,max_height=1.0)@10")) == "CubeTest@10"
    for bad in ("CubeTest(gamma=0.0)@5", "CubeTest(max_height=-1.0)@5", "CubeTest"):
        with pytest.raises(MeasureParseError):
            parse_measure(bad)


def _levels_brute(r, J, gamma, H):
    perms = list(itertools.permutations(r))
    return [sum(min(H, sum(gamma ** q * p[q] for q in range(M))) for p in perms) / len(perms)
            for M in range(J + 1)]


@pytest.mark.parametrize("seed", range(8))
def test_level_enumeration_equals_all_orders(seed):
    """f(M) by the depth-first walk over grade levels = the mean over every order of the values."""
    rng = np.random.default_rng(seed)
    r = rng.choice([0.25, 0.5, 1.0], size=int(rng.integers(2, 7)))
    gamma, H = float(rng.choice([0.5, 0.9, 1.0])), float(rng.choice([0.6, 1.0, 1.7]))
    levels, counts = np.unique(r, return_counts=True)
    J = int(rng.integers(1, r.size + 1))
    f = fc._f_levels(levels, counts, J, gamma, H, 10 ** 6)
    assert np.allclose(f, _levels_brute(list(r), J, gamma, H), rtol=0, atol=1e-13)
    assert fc._f_levels(levels, counts, J, gamma, H, 1) is None or r.size == 1


@pytest.mark.parametrize("seed", range(10))
def test_reb_and_iub_against_enumeration(seed):
    """Topics whose columns fill (several grades, small H) or never fill, n <= 7: the REB is
    exact and equals the mean over all n! orders; the IUB is <= the maximum, equal when flagged."""
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(1, 8)), int(rng.integers(1, 4))
    while True:
        G = rng.choice([0, 0, 1, 2, 3], size=(n, m))
        if (G >= 1).any(axis=0).all():
            break
    topic = _topic(G, rng.dirichlet(np.ones(m)))
    for s in ("CubeTest@3", "CubeTest(gamma=0.7,max_height=0.6)@5", "CubeTest(max_height=4.0)@2",
              "CubeTest(gamma=1.0,max_height=1.5)@10"):
        mm = parse_measure(s)
        vals = _all_orders(s, topic)
        res = fc.cube_reb(topic, mm["gamma"], mm["max_height"], mm.k)
        assert res.exact
        assert math.isclose(res.value, math.fsum(vals) / len(vals), rel_tol=1e-12, abs_tol=1e-14)
        iub, exact = mm.fam.iub(topic, mm)
        assert iub <= max(vals) + 1e-12
        if exact:
            assert math.isclose(iub, max(vals), rel_tol=1e-12)


def test_greedy_iub_flagged_when_not_optimal():
    """A topic where the greedy is beaten: the flag says lower bound, and the brute force agrees."""
    rng = np.random.default_rng(5)
    seen = False
    for _ in range(300):
        n, m = int(rng.integers(3, 7)), 2
        G = rng.choice([0, 1, 2, 3], size=(n, m))
        if not (G >= 1).any(axis=0).all():
            continue
        topic = _topic(G)
        mm = parse_measure("CubeTest(gamma=0.5,max_height=0.8)@2")
        iub, exact = mm.fam.iub(topic, mm)
        best = max(_all_orders(str(mm), topic))
        if iub < best - 1e-12:
            assert not exact
            seen = True
            break
    assert seen, "no greedy gap found: the test no longer shows the flag is needed"


def test_monte_carlo_fallback_is_seeded_labelled_and_covers_the_exact_value(monkeypatch):
    rng = np.random.default_rng(3)
    G = rng.choice([0, 1, 2, 3], size=(40, 2))
    topic = _topic(G)
    exact = fc.cube_reb(topic, 0.9, 1.2, 6)
    assert exact.exact
    a = fc.cube_reb(topic, 0.9, 1.2, 6, budget=0, seed=11, samples=4000)
    b = fc.cube_reb(topic, 0.9, 1.2, 6, budget=0, seed=11, samples=4000)
    assert not a.exact and a == b and a.half_width > 0
    assert abs(a.value - exact.value) <= 2 * a.half_width  # 95 % CI, doubled: fails ~1e-8 of seeds
    monkeypatch.setattr(fc, "NODE_BUDGET", 0)
    mm = parse_measure("CubeTest(gamma=0.9,max_height=1.2)@6")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        v = mm.fam.reb(topic, mm)
    assert any("Monte Carlo" in str(x.message) for x in w)
    assert abs(v - exact.value) <= 2 * fc.cube_reb(topic, 0.9, 1.2, 6, budget=0).half_width
