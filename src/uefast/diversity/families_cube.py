"""The original Cube Test (Luo, Wing, Yang & Hearst, "The water filling model and the cube test:
multidimensional evaluation for professional search", CIKM 2013), as ``CubeTest(gamma,
max_height)@k``; the simplified per-rank form of Amigó et al. is ``CT`` (:mod:`families_utility`).

The query is a cube whose base is split into the subtopics t with areas (weights) θ_t summing to
1 (the topic's aspect weights: uniform over the active aspects, or given). Each ranked document
pours water into the subtopics it is relevant to; the water column of t cannot rise above
``max_height`` (H). The document at rank j adds, to subtopic t, the height

    h(j,t) = gamma^{c(j,t)} r(d_j,t),       c(j,t) = #{i < j : r(d_i,t) > 0}

(novelty: each earlier relevant document of t discounts by gamma), capped by what is left of the
column, so that after K = min(k, |ranking|) documents t holds min(H, S_t(K)) with
S_t(K) = sum_{j<=K} h(j,t), and

    Gain@k = sum_t θ_t min(H, S_t(K)),      Time@k = K (one unit per document examined),
    CubeTest@k = Gain@k / Time@k            (0 for an empty ranking).

r(d,t) = g/gmax, gmax the largest grade of t in the topic (linear map, as ``CT``). Choices where
the paper leaves room, and the TREC Dynamic Domain jig's differences: ``docs/diversity.md``.

REB (uniformly random order of the n judged documents; Time = K = min(k, n) is then fixed): by
linearity over subtopics, E[Gain] = sum_t θ_t sum_M P(M) f_t(M), where M ~ Hypergeometric(n, R_t,
K) is the number of t's R_t relevant documents in the top K, independent of their relative
order, which is a uniform permutation π, and f_t(M) = E_π[min(H, sum_{q<M} gamma^q r_{π(q)})].
f_t is exact and polynomial when the column cannot fill (sum of t's r <= H: f = r̄ sum_{q<M}
gamma^q) or when t's relevant documents share one grade (f deterministic); otherwise it is the
exact mean over the orders of t's *grade levels*, walked prefix by prefix with identical states
merged and each state dropped once its outcome is order-free (:func:`_f_levels`); past a
budget of states, a seeded Monte Carlo over π with a 95 % CI (:func:`cube_reb`, reported with
``exact=False``; ``uefast.diversity.evaluate`` warns). Over a universe of N documents
(``reb_universe`` retrieved / collection) the documents outside the judged set add no water, so
the same sum holds with n = N and M ~ Hypergeometric(N, R_t, K), R_t = the universe's documents
relevant to t.

IUB: each rank takes the document that adds most water given those placed (greedy); exact
(``iub_exact``) with one subtopic (it sorts by r, optimal by rearrangement) or when gamma = 1
and K = n (every order fills the same), a lower bound otherwise.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from uefast.diversity.reb import log_comb
from uefast.diversity.registry import Family, register

__all__ = ["cube_gain", "cube_reb", "CubeReb"]

NODE_BUDGET = 50_000  # states of the exact walk per subtopic
MC_SAMPLES = 20_000


def _rel(topic) -> np.ndarray:
    """r = g/gmax per aspect (n x m)."""
    g = topic.grades.astype(np.float64)
    gm = g.max(axis=0) if topic.n else np.zeros(topic.m)
    return g / np.where(gm > 0, gm, 1.0)


def _check(m, text) -> None:
    from uefast.errors import MeasureParseError

    if not 0.0 < m["gamma"] <= 1.0:
        raise MeasureParseError(f"{text!r}: gamma must be in (0, 1], not {m['gamma']}")
    if not m["max_height"] > 0.0:
        raise MeasureParseError(f"{text!r}: max_height must be > 0, not {m['max_height']}")


def cube_gain(X: np.ndarray, w: np.ndarray, gamma: float, H: float) -> float:
    """Gain of a ranking whose relevance rows are ``X`` (K x m, r of the document at each rank):
    sum_t w_t min(H, sum_j gamma^{c(j,t)} X[j,t]), c = earlier documents with r > 0 on t."""
    if X.shape[0] == 0:
        return 0.0
    pos = X > 0
    c = np.cumsum(pos, axis=0) - pos
    S = (gamma ** c * X).sum(axis=0)
    return float(np.minimum(S, H) @ w)


def _value(batch, m):
    out = np.zeros(batch.seg_topic.size)
    for s, (topic, rows) in enumerate(batch.segments()):
        rows = rows[:m.k]
        if rows.size == 0:
            continue
        R = topic.cache.get("cube_rel")
        if R is None:
            R = topic.cache["cube_rel"] = _rel(topic)
        X = np.zeros((rows.size, topic.m))
        j = rows >= 0
        X[j] = R[rows[j]]
        out[s] = cube_gain(X, topic.weights, m["gamma"], m["max_height"]) / rows.size
    return out


# ------------------------------------------------------------------------------------- REB
def _hypergeom(n: int, R: int, K: int) -> np.ndarray:
    """P(M = j), j = 0..min(R, K): j of R marked among K drawn from n."""
    j = np.arange(min(R, K) + 1)
    ok = (K - j >= 0) & (K - j <= n - R)
    lp = log_comb(R, j) + log_comb(n - R, np.where(ok, K - j, 0)) - log_comb(n, K)
    return np.where(ok, np.exp(np.where(ok, lp, 0.0)), 0.0)


def _f_levels(levels: np.ndarray, counts: np.ndarray, J: int, gamma: float, H: float,
              budget: int):
    """f(M) = E[min(H, sum_{q<M} gamma^q r_{π(q)})] for M = 0..J, π a uniform order of the
    values (``counts[l]`` copies of ``levels[l]``), exact: breadth-first over the prefixes of the
    order, one state per (values left, partial sum) with its probability. Identical states are
    merged (same values left and bit-identical partial sum: same future, so merging is exact;
    with gamma = 1/2 and grades over a power-of-two gmax the sums are exact and merge often). A
    state leaves the walk where its outcome no longer depends on the order: the column is full
    (min = H from there on), or it cannot fill any more (partial sum + the largest level left x
    the remaining discounts <= H: min = the sum, whose mean is the partial sum + the mean of the
    values left x the discounts). None past ``budget`` states in all."""
    vals = [float(v) for v in levels]
    f = np.zeros(J + 1)
    geo = np.r_[0.0, np.cumsum(gamma ** np.arange(J))]  # sum_{q<M} gamma^q
    total = int(counts.sum())
    states = {(tuple(int(c) for c in counts), 0.0): 1.0}
    seen = 0
    for q in range(J + 1):
        seen += len(states)
        if seen > budget:
            return None
        nxt: dict = {}
        rest = total - q
        for (left, s), p in states.items():
            if s >= H:
                f[q:] += p * H
                continue
            vmax = max(v for v, c in zip(vals, left) if c) if rest else 0.0
            if q == J or s + vmax * (geo[J] - geo[q]) <= H:
                mean = sum(v * c for v, c in zip(vals, left)) / rest if rest else 0.0
                f[q:] += p * (s + mean * (geo[q:] - geo[q]))
                continue
            f[q] += p * s
            step = geo[q + 1] - geo[q]
            for lv, c in enumerate(left):
                if c:
                    key = (left[:lv] + (c - 1,) + left[lv + 1:], s + step * vals[lv])
                    nxt[key] = nxt.get(key, 0.0) + p * c / rest
        states = nxt
        if not states:
            break
    return f


@dataclass(frozen=True)
class CubeReb:
    """REB of ``CubeTest@k`` on one topic: ``value``; ``exact`` False when a subtopic needed the
    Monte Carlo estimate, then ``half_width`` is its 95 % CI half-width (normal approximation,
    ``samples`` draws, ``seed``)."""

    value: float
    exact: bool
    half_width: float = 0.0
    samples: int = 0
    seed: int | None = None


def cube_reb(topic, gamma: float, max_height: float, k: int, *, seed: int = 0,
             samples: int = MC_SAMPLES, budget: int = NODE_BUDGET, universe=None) -> CubeReb:
    """E[CubeTest@k] over uniformly random orders of the topic's n judged documents (module
    docstring): exact where the walk fits ``budget`` states per subtopic, else a seeded
    Monte Carlo over the order of that subtopic's relevant documents (the hypergeometric law of
    how many reach the top K kept exact: a Rao-Blackwellised estimate). ``universe`` = (N,
    rows): random orders of N documents instead, the judged rows ``rows`` and N - |rows| of
    grade 0 (``reb_universe`` retrieved / collection): n = N, R_t = the universe's documents
    relevant to t, the same f_t over their values (zero-grade documents add no water)."""
    n, rows = (topic.n, None) if universe is None else (int(universe[0]), universe[1])
    H = float(max_height)
    K = min(k, n)
    if topic.m == 0 or K == 0:
        return CubeReb(0.0, True)
    R = _rel(topic) if rows is None else _rel(topic)[rows]
    w = topic.weights
    exact_part = 0.0
    mc = []  # (weight, P(M), values) of subtopics left to Monte Carlo
    for t in range(topic.m):
        r = R[:, t][R[:, t] > 0]
        Rt = r.size
        if Rt == 0:  # a universe without a document relevant to t: no water
            continue
        pM = _hypergeom(n, Rt, K)
        J = pM.size - 1
        geo = np.r_[0.0, np.cumsum(gamma ** np.arange(J))]  # sum_{q<M} gamma^q
        levels, counts = np.unique(r, return_counts=True)
        if math.fsum(r) <= H:  # the column never fills: min(H, S) = S, linear
            f = r.mean() * geo
        elif levels.size == 1:
            f = np.minimum(H, levels[0] * geo)
        else:
            f = _f_levels(levels[::-1], counts[::-1], J, gamma, H, budget)
            if f is None:
                mc.append((w[t], pM, r))
                continue
        exact_part += w[t] * float(pM @ f)
    if not mc:
        return CubeReb(exact_part / K, True)
    rng = np.random.default_rng(seed)
    draws = np.zeros(samples)
    for wt, pM, r in mc:
        J = pM.size - 1
        gq = gamma ** np.arange(J)
        for lo in range(0, samples, 1024):  # 1024 random orders at a time
            hi = min(lo + 1024, samples)
            perm = rng.random((hi - lo, r.size)).argsort(axis=1)[:, :J]
            pre = np.hstack([np.zeros((hi - lo, 1)), np.cumsum(gq * r[perm], axis=1)])
            draws[lo:hi] += wt * (np.minimum(H, pre) @ pM)
    hw = 1.96 * float(draws.std(ddof=1)) / math.sqrt(samples) / K if samples > 1 else math.inf
    return CubeReb((exact_part + float(draws.mean())) / K, False, hw, samples, seed)


def _reb(topic, m, universe=None):
    res = cube_reb(topic, m["gamma"], m["max_height"], m.k, budget=NODE_BUDGET, universe=universe)
    if not res.exact:
        warnings.warn(f"CubeTest REB of topic {topic.qid!r}: Monte Carlo estimate {res.value:.6g} "
                      f"+- {res.half_width:.2g} (95% CI, {res.samples} draws, seed {res.seed}); "
                      f"the exact walk exceeded {NODE_BUDGET} states", stacklevel=2)
    return res.value


# ------------------------------------------------------------------------------------- IUB
def _iub(topic, m):
    """Greedy: each rank takes the document adding most water given the documents placed (ties
    to the lower row); returns (value of the first K ranks, exact?)."""
    n, gamma, H = topic.n, m["gamma"], m["max_height"]
    K = min(m.k, n)
    if topic.m == 0 or K == 0:
        return 0.0, True
    R = _rel(topic)
    w = topic.weights
    S = np.zeros(topic.m)
    c = np.zeros(topic.m)
    left = np.ones(n, bool)
    for _ in range(K):
        add = np.minimum(H, S + gamma ** c * R) - np.minimum(H, S)
        gain = np.where(left, add @ w, -np.inf)
        d = int(np.argmax(gain))
        left[d] = False
        S += gamma ** c * R[d]
        c += R[d] > 0
    exact = topic.m == 1 or (gamma == 1.0 and K == n)
    return float(np.minimum(S, H) @ w) / K, exact


register(Family(
    "CubeTest", {"gamma": 0.5, "max_height": 1.0}, "required", _value, _iub, _reb, "cube_test",
    "CubeTest@k = Gain/Time, Gain = sum_t theta_t min(H, sum_{j<=K} gamma^{c(j,t)} r(d_j,t)), "
    "Time = K = min(k, |ranking|), r = g/gmax, c = earlier documents relevant to t (the original "
    "Cube Test's water filling with MaxHeight H: Luo, Wing, Yang & Hearst, CIKM 2013)",
    aliases=("CT-orig",), check=_check))
