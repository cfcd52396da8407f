"""CT@k, the Cube Test in Amigó et al.'s simplified form (SPEC_diversity §2.5; Luo et al. CIKM'13):

    CT@k = sum_{i<=k} (1/i) sum_t w_t r(d_i,t) (1-alpha)^{c(i,t)} [sum_{j<i} r(d_j,t) < h]

r = g/gmax (linear, gmax per aspect), c(i,t) = earlier documents with r > 0 on t. The saturation
test is exact (integers: sum of earlier grades * den < num * gmax for h = num/den), as SPEC §2.5
requires. The TREC DD defaults were not verified; the original CT is Gain/Time, not this form.

REB (exact, SPEC §4): condition on the document at rank i (probability 1/n); the i-1 earlier ones
are a uniform (i-1)-subset of the other n-1. Grouping those by grade, the compositions (a_g) of
the earlier relevant documents with sum_g a_g g < h gmax have probability
prod_g C(N_g, a_g) C(n_0, i-1-A)/C(n-1, i-1), A = sum a_g, and weight (1-alpha)^A.
Over a universe of N documents (``reb_universe`` retrieved / collection: the universe's judged
documents plus N - u of grade 0) the same sum holds with n = N and n_0 = N - the universe's
documents relevant to t (:func:`ct_universe_reb`).
IUB: each rank takes the document of largest gain given those placed (a lower bound).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from uefast.diversity.families_ia import _per_segment, ranked
from uefast.diversity.reb import log_comb
from uefast.diversity.registry import Family, register


def _gmax(topic) -> np.ndarray:
    g = topic.grades.max(axis=0) if topic.n else np.zeros(topic.m, np.int64)
    return np.where(g > 0, g, 1).astype(np.int64)


def _h(m) -> Fraction:
    return Fraction(str(m["h"]))


def _ct_gains(G: np.ndarray, topic, m) -> np.ndarray:
    """Per-rank gain sum_t w_t r (1-alpha)^c [saturation] of ranked grades G (L x m)."""
    if G.shape[0] == 0:
        return np.zeros(0)
    gm = _gmax(topic)
    h = _h(m)
    before = np.vstack([np.zeros((1, G.shape[1]), np.int64), np.cumsum(G, axis=0)[:-1]])
    c = np.vstack([np.zeros((1, G.shape[1])), np.cumsum(G > 0, axis=0)[:-1]])
    open_ = before * h.denominator < h.numerator * gm  # exact: integers
    return ((G / gm) * (1.0 - m["alpha"]) ** c * open_) @ topic.weights


def _grades_ranked(topic, rows):
    return ranked(topic, rows, topic.grades.astype(np.float64)).astype(np.int64)


def _ct_value(topic, rows, m):
    G = _grades_ranked(topic, rows[:m.k])
    return float(np.dot(1.0 / np.arange(1, G.shape[0] + 1), _ct_gains(G, topic, m)))


def _compositions(levels, counts, limit, den):
    """Every (a_g) with a_g <= counts[g] and sum a_g g den < limit: (A, log multiplicity)."""
    out = []

    def rec(k, used, A, logc):
        if k == len(levels):
            out.append((A, logc))
            return
        a = 0
        while a <= counts[k] and used + a * levels[k] * den < limit:
            rec(k + 1, used + a * levels[k] * den, A + a, logc + float(log_comb(counts[k], a)))
            a += 1

    rec(0, 0, 0, 0.0)
    return out


def _ct_reb(topic, m):
    return ct_universe_reb(topic, m, topic.n, np.arange(topic.n))


def ct_universe_reb(topic, m, N: int, rows: np.ndarray) -> float:
    """E[CT@k] over uniformly random orders of a universe of N documents: the judged rows
    ``rows`` of ``topic`` and N - |rows| documents of grade 0 on every aspect (module
    docstring, with n = N and n_0 = N - the universe's documents relevant to t; gmax stays the
    topic's). ``rows`` = every judged row and N = n is the judged universe."""
    K = min(m.k, N)
    if topic.m == 0 or N == 0 or K == 0:
        return 0.0
    h = _h(m)
    i = np.arange(1, K + 1)
    gmax = _gmax(topic)
    tot = 0.0
    for t in range(topic.m):
        g = topic.grades[rows, t]
        gm = int(gmax[t])
        vals, cnt = np.unique(g[g > 0], return_counts=True)
        n0 = N - int(cnt.sum())
        for v, mv in zip(vals, cnt):
            others = cnt - (vals == v)
            acc = np.zeros(K)
            for A, logc in _compositions(list(vals), list(others), h.numerator * gm, h.denominator):
                rest = i - 1 - A
                ok = (rest >= 0) & (rest <= n0)
                lp = logc + log_comb(n0, np.where(ok, rest, 0)) - log_comb(N - 1, i - 1)
                acc += np.where(ok, np.exp(lp), 0.0) * (1.0 - m["alpha"]) ** A
            tot += topic.weights[t] * mv * (v / gm) / N * float(np.dot(1.0 / i, acc))
    return tot


def _ct_iub(topic, m):
    """Greedy: each rank takes the document of largest gain given the counts and (integer)
    filled amounts of the documents already placed; ties to the lower row."""
    gm = _gmax(topic)
    h = _h(m)
    G = topic.grades
    left = np.ones(topic.n, bool)
    cnt = np.zeros(topic.m)
    filled = np.zeros(topic.m, np.int64)
    order = []
    for _ in range(min(m.k, topic.n)):
        open_ = filled * h.denominator < h.numerator * gm
        gain = np.where(left, ((G / gm) * (1.0 - m["alpha"]) ** cnt * open_) @ topic.weights, -np.inf)
        d = int(np.argmax(gain))
        order.append(d)
        left[d] = False
        cnt += G[d] > 0
        filled += G[d]
    return _ct_value(topic, np.array(order, np.int64), m), topic.m == 0


register(Family("CT", {"alpha": 0.5, "h": 1.0}, "required", _per_segment(_ct_value), _ct_iub, _ct_reb,
                "ct", "CT@k = sum_{i<=k} (1/i) sum_t w_t r(d_i,t)(1-alpha)^{c(i,t)} [sum_{j<i} "
                "r(d_j,t) < h], r = g/gmax (Amigo et al. SIGIR'18's simplified Cube Test, Luo et al. "
                "CIKM'13)"))
