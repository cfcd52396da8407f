"""Slow, plain-Python references of every diversity measure family (one function per family,
named by the family's ``naive`` field), written from the definitions (SPEC_diversity §2, ndeval.c's
conventions for the ndeval names) with loops and no NumPy, independently of uefast.diversity.

Each takes (G, w, ranking, p, k): G[d][t] grades of the judged documents (rows in ascending docid
order, columns the active aspects), w the aspect weights, ranking a list of row indices (-1 =
unjudged document), p the measure's parameters, k the cutoff (None = whole ranking).
"""
from __future__ import annotations

import math
from fractions import Fraction


def _J(G, d, t):
    return 1 if d >= 0 and G[d][t] >= 1 else 0


def _gmaxes(G, how="aspect"):
    m = len(G[0]) if G else 0
    per = [max([G[d][t] for d in range(len(G))] + [0]) or 1 for t in range(m)]
    return [max(per)] * m if how == "topic" and m else per


def _cascade(G, how="aspect"):
    gmax = _gmaxes(G, how)
    m = len(gmax)
    return [[(2 ** G[d][t] - 1) / 2 ** gmax[t] for t in range(m)] for d in range(len(G))]


def _linear(G, how="aspect"):
    gmax = _gmaxes(G, how)
    m = len(gmax)
    return [[G[d][t] / gmax[t] for t in range(m)] for d in range(len(G))]


def _r(R, d, t):
    return R[d][t] if d >= 0 else 0.0


# ------------------------------------------------------------------------------ ndeval names
def novelty_gains(G, ranking, alpha):
    m = len(G[0]) if G else 0
    seen = [0] * m
    out = []
    for d in ranking:
        s = 0.0
        for t in range(m):
            if _J(G, d, t):
                s += (1 - alpha) ** seen[t]
                seen[t] += 1
        out.append(s)
    return out


def greedy_ideal(G, alpha):
    """ndeval: each rank the largest gain, ties to the larger docid (= later row)."""
    m = len(G[0]) if G else 0
    seen = [0] * m
    left = list(range(len(G)))
    order = []
    while left:
        best, where = None, None
        for d in left:
            s = sum((1 - alpha) ** seen[t] for t in range(m) if G[d][t] >= 1)
            if best is None or s >= best:
                best, where = s, d
        order.append(where)
        left.remove(where)
        for t in range(m):
            if G[where][t] >= 1:
                seen[t] += 1
    return order


def _ideal_ideal(m, k, alpha, disc):
    if k == 1:
        return 1.0
    return sum(m * (1 - alpha) ** (i - 1) * disc(i) for i in range(1, k + 1))


def _cut(G, ranking, p, k, disc):
    m = len(G[0]) if G else 0
    if m == 0:
        return 0.0
    a = novelty_gains(G, ranking, p["alpha"])
    raw = sum(a[i - 1] * disc(i) for i in range(1, min(k, len(a)) + 1))
    return raw / _ideal_ideal(m, k, p["alpha"], disc)


def _dlog(i):
    return 1.0 / math.log2(i + 1)


def _inv(i):
    return 1.0 / i


def ndeval_err_ia(G, w, ranking, p, k):
    return _cut(G, ranking, p, k, _inv)


def ndeval_alpha_dcg(G, w, ranking, p, k):
    return _cut(G, ranking, p, k, _dlog)


def _normalised(G, ranking, p, k, disc):
    if _cut(G, ranking, p, k, _dlog) == 0:
        return 0.0
    return _cut(G, ranking, p, k, disc) / _cut(G, greedy_ideal(G, p["alpha"]), p, k, disc)


def ndeval_nerr_ia(G, w, ranking, p, k):
    return _normalised(G, ranking, p, k, _inv)


def ndeval_alpha_ndcg(G, w, ranking, p, k):
    return _normalised(G, ranking, p, k, _dlog)


def ndeval_nrbp(G, w, ranking, p, k):
    m = len(G[0]) if G else 0
    if m == 0:
        return 0.0
    a = novelty_gains(G, ranking, p["alpha"])
    return (1 - (1 - p["alpha"]) * p["beta"]) / m * sum(a[i] * p["beta"] ** i for i in range(len(a)))


def ndeval_nnrbp(G, w, ranking, p, k):
    value = ndeval_nrbp(G, w, ranking, p, k)
    if value == 0:  # no aspect, or no relevant document retrieved (the ideal may be 0 too)
        return 0.0
    return value / ndeval_nrbp(G, w, greedy_ideal(G, p["alpha"]), p, k)


def ndeval_map_ia(G, w, ranking, p, k):
    m = len(G[0]) if G else 0
    tot = 0.0
    for t in range(m):
        R = sum(1 for d in range(len(G)) if G[d][t] >= 1)
        c, s = 0, 0.0
        for i, d in enumerate(ranking, 1):
            if _J(G, d, t):
                c += 1
                s += c / i
        tot += s / R
    return tot / m if m else 0.0


def ndeval_p_ia(G, w, ranking, p, k):
    m = len(G[0]) if G else 0
    if m == 0:
        return 0.0
    return sum(_J(G, d, t) for d in ranking[:k] for t in range(m)) / (k * m)


def ndeval_strec(G, w, ranking, p, k):
    m = len(G[0]) if G else 0
    if m == 0:
        return 0.0
    return sum(1 for t in range(m) if any(_J(G, d, t) for d in ranking[:k])) / m


# ------------------------------------------------------------------------------ weighted families
def _cascade_sum(G, w, ranking, disc, K, how="aspect"):
    R = _cascade(G, how)
    m = len(w)
    surv = [1.0] * m
    tot = 0.0
    for i, d in enumerate(ranking[:K], 1):
        g = 0.0
        for t in range(m):
            r = _r(R, d, t)
            g += w[t] * r * surv[t]
            surv[t] *= 1 - r
        tot += disc(i) * g
    return tot


def rbu(G, w, ranking, p, k):
    L = len(ranking)
    if p["variant"] == "java":
        gain = _cascade_sum(G, w, ranking, lambda i: (1 - p["p"]) * p["p"] ** (i - 1), L, p["gmax"])
        return gain - p["e"] * sum((1 - p["p"]) * p["p"] ** (i - 1) for i in range(1, L + 1))
    K = L if k is None else min(k, L)
    return (_cascade_sum(G, w, ranking, lambda i: p["p"] ** i, K, p["gmax"])
            - p["e"] * sum(p["p"] ** i for i in range(1, K + 1)))


def gerr_ia(G, w, ranking, p, k):
    return _cascade_sum(G, w, ranking, lambda i: 1.0 / i, k, p["gmax"])


def rbp_ia(G, w, ranking, p, k):
    R = _linear(G, p["gmax"])
    return (1 - p["p"]) * sum(p["p"] ** (i - 1) * sum(w[t] * _r(R, d, t) for t in range(len(w)))
                              for i, d in enumerate(ranking, 1))


def ndcg_ia(G, w, ranking, p, k):
    R = _linear(G, p["gmax"])
    tot = 0.0
    for t in range(len(w)):
        dcg = sum(_r(R, d, t) / math.log2(i + 1) for i, d in enumerate(ranking[:k], 1))
        best = sorted((R[d][t] for d in range(len(G))), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 1) for i, g in enumerate(best, 1))
        tot += w[t] * (dcg / idcg if idcg > 0 else 0.0)
    return tot


def rr_ia(G, w, ranking, p, k):
    tot = 0.0
    for t in range(len(w)):
        for i, d in enumerate(ranking, 1):
            if _J(G, d, t):
                tot += w[t] / i
                break
    return tot


def ap_ia(G, w, ranking, p, k):
    tot = 0.0
    for t in range(len(w)):
        R = sum(1 for d in range(len(G)) if G[d][t] >= 1)
        c, s = 0, 0.0
        for i, d in enumerate(ranking, 1):
            if _J(G, d, t):
                c += 1
                s += c / i
        tot += w[t] * s / R
    return tot


def s_rr(G, w, ranking, p, k):
    m = len(w)
    if m == 0:
        return 0.0
    cov = set()
    for i, d in enumerate(ranking, 1):
        cov |= {t for t in range(m) if _J(G, d, t)}
        if len(cov) == m:
            return 1.0 / i
    return 0.0


def _gg(G, w, d):
    return sum(w[t] * G[d][t] for t in range(len(w))) if d >= 0 else 0.0


def d_ndcg(G, w, ranking, p, k):
    dcg = sum(_gg(G, w, d) / math.log2(i + 1) for i, d in enumerate(ranking[:k], 1))
    best = sorted((_gg(G, w, d) for d in range(len(G))), reverse=True)[:k]
    ideal = sum(g / math.log2(i + 1) for i, g in enumerate(best, 1))
    return dcg / ideal if ideal > 0 else 0.0


def dsharp_ndcg(G, w, ranking, p, k):
    return p["gamma"] * ndeval_strec(G, w, ranking, p, k) + (1 - p["gamma"]) * d_ndcg(G, w, ranking, p, k)


def eu(G, w, ranking, p, k):
    R = _linear(G, p["gmax"])
    m = len(w)
    seen = [0] * m
    tot = 0.0
    for i, d in enumerate(ranking, 1):
        g = 0.0
        for t in range(m):
            r = _r(R, d, t)
            if r > 0:
                g += w[t] * r * (1 - p["alpha"]) ** seen[t]
                seen[t] += 1
        tot += (g - p["e"]) / (1 + math.log(i))
    return tot


def ct(G, w, ranking, p, k):
    """Cube Test (simplified): saturation summed in exact Fractions of r = g/gmax."""
    m = len(w)
    gmax = [max([G[d][t] for d in range(len(G))] + [0]) or 1 for t in range(m)]
    h = Fraction(str(p["h"]))
    seen = [0] * m
    filled = [Fraction(0)] * m
    tot = 0.0
    for i, d in enumerate(ranking[:k], 1):
        g = 0.0
        for t in range(m):
            gr = G[d][t] if d >= 0 else 0
            if gr > 0:
                if filled[t] < h:
                    g += w[t] * (gr / gmax[t]) * (1 - p["alpha"]) ** seen[t]
                seen[t] += 1
                filled[t] += Fraction(gr, gmax[t])
        tot += g / i
    return tot


def cube_test(G, w, ranking, p, k):
    """The original Cube Test (Luo et al. CIKM 2013), water filled document by document: each
    relevant document adds gamma^(earlier relevant documents of the subtopic) * g/gmax to the
    subtopic's column, capped at max_height; CT = sum_t w_t column_t / (documents examined)."""
    m = len(w)
    gmax = [max([G[d][t] for d in range(len(G))] + [0]) or 1 for t in range(m)]
    H = p["max_height"]
    seen = [0] * m
    col = [0.0] * m
    docs = ranking[:k]
    for d in docs:
        for t in range(m):
            gr = G[d][t] if d >= 0 else 0
            if gr > 0:
                col[t] += min(p["gamma"] ** seen[t] * gr / gmax[t], H - col[t]) if col[t] < H else 0.0
                seen[t] += 1
    return sum(w[t] * col[t] for t in range(m)) / len(docs) if docs else 0.0
