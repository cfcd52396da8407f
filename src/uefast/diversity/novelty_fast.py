"""IUB and exact REB of ndeval's measures (novelty: alpha-DCG@k, alpha-nDCG@k, ERR-IA@k,
nERR-IA@k, NRBP, nNRBP; coverage and precision: strec@k, P-IA@k, MAP-IA) for every topic of a
batch at once: the greedy ideals' values come from
the compiled ndeval qrels (:func:`uefast.diversity.ndeval.build_ndeval_qrels`, already built for
the values), the REB from one Numba pass over the topics. Same numbers as the per-topic
functions of :mod:`uefast.diversity.families_ndeval` (the reference the tests compare with).

REB (SPEC_diversity §4): a(i) = sum_t J(d_i,t)(1-alpha)^{c(i,t)}, so for an aspect with R of the
n judged documents relevant, E[J(d_i,t)(1-alpha)^{c(i,t)}] = (R/n) E[(1-alpha)^C], C the number
of the other R-1 relevant documents among the i-1 earlier ranks: hypergeometric (draws i-1 from
n-1 documents, R-1 of them relevant). Its distribution h_i(c) is updated in i,
h_{i+1}(c) = h_i(c)(n-1-(R-1)-(i-1-c))/(n-1-(i-1)) + h_i(c-1)(R-1-(c-1))/(n-1-(i-1)), so
the sum over ranks i <= K costs O(K min(K, R)) per aspect (NRBP: K = n). Raw REB =
sum_t sum_{i<=K} disc(i) (R_t/n) sum_c h_i(c)(1-alpha)^c, divided by ndeval's normaliser:
the ideal-ideal constant (alpha-DCG, ERR-IA; k = 1 not normalised), the greedy ideal's raw value
(alpha-nDCG, nERR-IA, nNRBP) or (1-(1-alpha)beta)/|T| (NRBP).

Coverage and precision (:func:`_coverage_batch`, the algorithms of families_ndeval): P-IA@k,
IUB = the top k documents by number of aspects (exact), REB = sum_t min(k,n) R_t/n / (k|T|);
strec@k, IUB = the most aspects k documents can cover (exact: least cover of each aspect subset
by a DP over subsets), REB = mean_t 1 - C(n-R_t, k)/C(n, k); MAP-IA, IUB = the relevant
documents by sum_t J/R_t, ties to more aspects (greedy: exact with one aspect), REB = mean_t of
the AP formula (R_t(n - H_n) + n(H_n - 1))/(n(n-1)).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.diversity.ndeval import DEPTH, discounts

__all__ = ["NOVELTY", "novelty_scores"]

NOVELTY = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "NRBP", "nNRBP", "P-IA", "strec",
           "MAP-IA")
_COVERAGE = {"P-IA": 0, "strec": 1, "MAP-IA": 2}


@nb.njit(cache=True, nogil=True)
def _lcomb(a, b):
    return math.lgamma(a + 1.0) - math.lgamma(b + 1.0) - math.lgamma(a - b + 1.0)


@nb.njit(cache=True, nogil=True, parallel=True)
def _coverage_batch(J, roff, m, nrel, code, k, iub, exact, reb):
    """P-IA@k (code 0), strec@k (1), MAP-IA (2): IUB, exact flag, REB of every topic."""
    for t in nb.prange(m.size):
        n = roff[t + 1] - roff[t]
        mt = m[t]
        iub[t] = 0.0
        reb[t] = 0.0
        exact[t] = True
        if mt == 0:
            continue
        Jt = J[roff[t]:roff[t + 1]]
        K = min(k, n)
        if code == 0:
            cnt = np.zeros(n, np.int64)
            for d in range(n):
                for a in range(mt):
                    cnt[d] += Jt[d, a]
            srt = np.sort(cnt)
            pairs = 0
            for i in range(K):
                pairs += srt[n - 1 - i]
            iub[t] = float(pairs) / float(k * mt)
            s = 0.0
            for a in range(mt):
                s += K * nrel[t, a] / n
            reb[t] = s / (k * mt)
        elif code == 1:
            full = 1 << mt
            masks = np.zeros(n, np.int64)
            for d in range(n):
                for a in range(mt):
                    if Jt[d, a]:
                        masks[d] |= 1 << a
            masks = np.unique(masks)
            INF = 1 << 30
            f = np.full(full, INF, np.int64)
            f[0] = 0
            best_size = 0
            for S in range(1, full):
                best = INF
                for d in masks:
                    if d > 0 and S & d:
                        v = f[S & ~d]
                        if v < best:
                            best = v
                f[S] = best + 1 if best < INF else INF
                if f[S] <= K:
                    size = 0
                    x = S
                    while x:
                        size += x & 1
                        x >>= 1
                    best_size = max(best_size, size)
            iub[t] = best_size / mt
            s = 0.0
            for a in range(mt):
                R = nrel[t, a]
                if R <= 0:
                    v = 0.0
                elif n - R < K:
                    v = 1.0
                else:
                    v = 1.0 - math.exp(_lcomb(n - R, K) - _lcomb(n, K))
                s += v
            reb[t] = s / mt
        else:
            key = np.empty(n)
            cnt = np.empty(n)
            nr = 0
            for d in range(n):
                w = 0.0
                c = 0.0
                for a in range(mt):
                    if Jt[d, a]:
                        w += 1.0 / max(nrel[t, a], 1)
                        c += 1.0
                key[d] = -w
                cnt[d] = -c
                nr += 1 if c > 0 else 0
            rel = np.empty(nr, np.int64)
            j = 0
            for d in range(n):
                if cnt[d] < 0:
                    rel[j] = d
                    j += 1
            kr = np.empty(nr)
            for j in range(nr):
                kr[j] = cnt[rel[j]]
            o1 = rel[np.argsort(kr, kind="mergesort")]
            for j in range(nr):
                kr[j] = key[o1[j]]
            order = o1[np.argsort(kr, kind="mergesort")]
            hits = np.zeros(mt, np.int64)
            tot = np.zeros(mt)
            for i in range(nr):
                for a in range(mt):
                    if Jt[order[i], a]:
                        hits[a] += 1
                        tot[a] += hits[a] / float(i + 1)
            v = 0.0
            for a in range(mt):
                if nrel[t, a]:
                    v += tot[a] / float(nrel[t, a])
            iub[t] = v / mt
            exact[t] = mt <= 1
            H = 0.0
            for i in range(1, n + 1):
                H += 1.0 / i
            s = 0.0
            for a in range(mt):
                R = nrel[t, a]
                if R <= 0:
                    s += 0.0
                elif n == 1:
                    s += 1.0
                else:
                    s += (R * (n - H) + n * (H - 1.0)) / (n * (n - 1.0))
            reb[t] = s / mt


@nb.njit(cache=True, nogil=True, parallel=True)
def _raw_reb(roff, m, nrel, alpha, disc, nrbp, beta, out):
    """out[t] = E[sum_{i<=K} disc[i-1] a(i)] over random orders of topic t's judged documents
    (``nrbp``: disc = beta^{i-1} over all n ranks instead of ``disc``)."""
    y = 1.0 - alpha
    for t in nb.prange(m.size):
        n = roff[t + 1] - roff[t]
        K = n if nrbp else min(disc.size, n)
        tot = 0.0
        for a in range(m[t]):
            R = nrel[t, a]
            if R <= 0:
                continue
            Rm = R - 1
            z = float(n - 1 - Rm)  # the other documents that are not relevant to a
            h = np.zeros(min(K, Rm) + 1)
            h[0] = 1.0
            s = 0.0
            w = 1.0  # beta^{i-1}
            for i in range(K):  # rank i+1: i earlier documents, drawn from the n-1 others
                e = 0.0
                yc = 1.0
                for c in range(min(i, Rm) + 1):
                    e += h[c] * yc
                    yc *= y
                s += (w if nrbp else disc[i]) * e
                w *= beta
                if i + 1 < K:
                    inv = 1.0 / (n - 1 - i)
                    for c in range(min(i + 1, Rm), -1, -1):
                        v = h[c] * max(z - (i - c), 0.0) * inv if c <= i else 0.0
                        if c > 0:
                            v += h[c - 1] * (Rm - (c - 1)) * inv
                        h[c] = v
            tot += s * (R / n)
        out[t] = tot


def _ideal_ideal(mt: int, k: int, alpha: float, disc: np.ndarray) -> float:
    if k == 1:
        return 1.0
    return float(np.sum(mt * (1.0 - alpha) ** np.arange(k) * disc[:k]))


def novelty_scores(batch, m):
    """(iub, exact, reb) per topic of ``batch`` (``batch.topics`` order) for the ndeval novelty
    measure ``m``; needs ``m.fam.value(batch, m)`` to have run (it compiles the ndeval qrels into
    ``batch.cache``)."""
    depth = max(DEPTH, m.k or 0)
    nq = batch.cache[("ndeval", m["alpha"], m["beta"], depth)][0]
    name = m.fam.name
    T = len(nq.qids)
    mt = nq.m
    if name in _COVERAGE:
        iub, exact, reb = np.zeros(T), np.ones(T, np.bool_), np.zeros(T)
        _coverage_batch(nq.J, nq.roff, mt, nq.nrel, _COVERAGE[name], m.k or 0, iub, exact, reb)
        return iub, exact, reb
    exact = mt <= 1
    nrbp = name in ("NRBP", "nNRBP")
    if nrbp:
        disc = np.ones(1)
    elif name in ("alpha-DCG", "alpha-nDCG"):
        disc = discounts(max(m.k, 1))[:m.k]
    else:
        disc = 1.0 / np.arange(1, m.k + 1)
    raw = np.zeros(T)
    _raw_reb(nq.roff, mt, nq.nrel, float(m["alpha"]), np.ascontiguousarray(disc), nrbp,
             float(m["beta"]), raw)
    has = mt > 0
    if nrbp:
        ideal = nq.inrbp
        raw = np.where(has, raw * (1 - (1 - m["alpha"]) * m["beta"]) / np.maximum(mt, 1), 0.0)
        if name == "NRBP":
            return np.where(has, ideal, 0.0), exact, raw
        with np.errstate(invalid="ignore", divide="ignore"):
            reb = np.where(ideal > 0, raw / np.where(ideal > 0, ideal, 1.0), 0.0)
        return has.astype(float), exact, reb
    blk = nq.idcg if name in ("alpha-DCG", "alpha-nDCG") else nq.ierr
    ivalue = np.where(has, blk[:, m.k - 1], 0.0)
    norm = np.array([_ideal_ideal(int(x), m.k, m["alpha"], disc) for x in mt])
    with np.errstate(invalid="ignore", divide="ignore"):
        if name in ("alpha-DCG", "ERR-IA"):
            return ivalue, exact, np.where(has & (norm > 0), raw / norm, 0.0)
        iraw = ivalue * norm
        reb = np.where(has & (iraw > 0), raw / np.where(iraw > 0, iraw, 1.0), 0.0)
    return has.astype(float), exact, reb
