"""Weighted intent-aware, coverage, NTCIR and utility families (SPEC_diversity §2.1-§2.6).

Weights w(t) are the topic's (uniform 1/|T| over active aspects, or given); grade maps as in
SPEC_diversity §1: cascade R = (2^g - 1)/2^{gmax(aspect)}, linear g/gmax(aspect), binary [g >= 1],
raw grade. Unjudged documents have r = 0. Definitions (i = rank, L = run length, K = min(k, L)):

* ``gERR-IA@k`` = sum_t w_t sum_{i<=k} (1/i) R(d_i,t) prod_{j<i} (1 - R(d_j,t)) (Agrawal et al.
  WSDM'09 with Chapelle et al.'s ERR; textbook form, unlike ndeval's ERR-IA).
* ``RBU(p,e)@k`` = sum_{i<=K} p^i [sum_t w_t R(d_i,t) prod_{j<i}(1 - R(d_j,t)) - e] (Amigo, Spina
  & Carrillo-de-Albornoz SIGIR'18 Eq. 11); ``variant=java``: RBU.java's
  (1-p) sum_{i<=L} p^{i-1} [gain_i] - e (1-p) sum_{i<=L} p^{i-1}, no cutoff.
* ``RBP-IA(p)`` = (1-p) sum_i p^{i-1} sum_t w_t r_lin(d_i,t).
* ``nDCG-IA@k`` = sum_t w_t DCG_t@k / IDCG_t@k, gain g/gmax, discount 1/log2(i+1).
* ``RR-IA`` = sum_t w_t / (first rank with J(d_i,t) = 1) (0 if none).
* ``AP-IA`` = sum_t w_t AP_t (binary, R_t = relevant documents of t).
* ``S-RR`` (S-RR@100%) = 1 / (least i whose top i cover every active aspect), 0 if never.
* ``D-nDCG@k`` = sum_{i<=k} GG(d_i) D(i) / sum_{i<=k} GG(d*_i) D(i), GG = sum_t w_t g(d,t)
  (Sakai & Song SIGIR'11); ``D#-nDCG(gamma)@k`` = gamma I-rec@k + (1 - gamma) D-nDCG@k.
* ``EU(alpha,e)`` = sum_{i<=L} [sum_t w_t r_lin(d_i,t)(1-alpha)^{c(i,t)} - e] / (1 + ln i) (Yang &
  Lad ICTIR'09 as printed in Amigo et al.; the paper's simplified form, ln assumed).

IUB exact where SPEC_diversity §4 has a polynomial algorithm (RBP-IA, nDCG-IA, S-RR, D-nDCG);
otherwise a greedy ranking's value (``iub_exact`` False when the topic has two or more aspects).
REB exact by :mod:`uefast.diversity.reb`.
"""
from __future__ import annotations

import numpy as np

from uefast.diversity.families_ndeval import coverage_iub, min_cover
from uefast.diversity.reb import ap_reb, cascade_survival, coverage_reb, log_comb, novelty_terms
from uefast.diversity.registry import Family, register


def ranked(topic, rows, r: np.ndarray) -> np.ndarray:
    """The (L, m) relevance of a ranking: row i = r of the document at rank i+1 (0 unjudged)."""
    X = np.zeros((rows.size, r.shape[1]))
    j = rows >= 0
    X[j] = r[rows[j]]
    return X


def _per_segment(fn):
    def value(batch, m):
        return np.array([fn(t, rows, m) for t, rows in batch.segments()], float)
    return value


def _dlog(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2))


# ---------------------------------------------------------------- cascade family (ERR-IA, RBU)
def cascade_gains(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """sum_t w_t X[i,t] prod_{j<i} (1 - X[j,t]) at every rank."""
    if X.shape[0] == 0:
        return np.zeros(0)
    surv = np.vstack([np.ones((1, X.shape[1])), np.cumprod(1.0 - X, axis=0)[:-1]])
    return (X * surv) @ w


def _rbu_disc(m, L: int) -> np.ndarray:
    """Per-rank weights of the gain and the effort over a ranking of length L."""
    p = m["p"]
    if m["variant"] == "java":
        return (1 - p) * p ** np.arange(L)
    K = L if m.k is None else min(m.k, L)
    return p ** np.arange(1, K + 1)


def _rbu_value(topic, rows, m):
    X = ranked(topic, rows, topic.rel("cascade", m["gmax"]))
    d = _rbu_disc(m, rows.size)
    g = cascade_gains(X[:d.size], topic.weights)
    return float(np.dot(d, g - m["e"])) if d.size else 0.0


def _cascade_reb(topic, disc: np.ndarray, r: np.ndarray) -> float:
    tot = 0.0
    for t in range(topic.m):
        E = cascade_survival(1.0 - r[:, t], disc.size)
        tot += topic.weights[t] * float(np.dot(disc, E[:-1] - E[1:]))
    return tot


def _rbu_reb(topic, m):
    d = _rbu_disc(m, topic.n)
    return _cascade_reb(topic, d, topic.rel("cascade", m["gmax"])) - m["e"] * float(d.sum())


def cascade_greedy(r: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each rank takes the document of largest sum_t w_t r(d,t) S_t (S_t = prod of (1 - r) of the
    documents placed), ties to the lower row: every judged row, in that order. The score is summed
    over t in order, ((r S_t) w_t) term by term, as the Numba kernel sums it: equal scores stay
    equal ties (a BLAS dot product may round them apart and pick another document)."""
    n = r.shape[0]
    S = np.ones(r.shape[1])
    left = np.ones(n, bool)
    order = np.empty(n, np.int64)
    for i in range(n):
        score = np.zeros(n)
        for t in range(r.shape[1]):
            score += (r[:, t] * S[t]) * w[t]
        gain = np.where(left, score, -np.inf)
        d = int(np.argmax(gain))
        order[i] = d
        left[d] = False
        S = S * (1.0 - r[d])
    return order


def _rbu_iub(topic, m):
    order = cascade_greedy(topic.rel("cascade", m["gmax"]), topic.weights)
    return _rbu_value(topic, order, m), topic.m <= 1


def _rbu_min(topic, m):
    return -m["e"] * float(_rbu_disc(m, topic.n).sum())


def gmax_check(m, text):
    """``gmax`` (the grade map's maximum): ``aspect`` (per topic and aspect, RBU.java) or
    ``topic`` (the topic's largest grade, over all aspects)."""
    from uefast.errors import MeasureParseError

    if m["gmax"] not in ("aspect", "topic"):
        raise MeasureParseError(f"{text!r}: gmax must be aspect or topic")


def _rbu_check(m, text):
    from uefast.errors import MeasureParseError

    gmax_check(m, text)
    if m["variant"] not in ("paper", "java"):
        raise MeasureParseError(f"{text!r}: variant must be paper or java")
    if m["variant"] == "java" and m.k is not None:
        raise MeasureParseError(f"{text!r}: RBU.java has no cutoff")
    if not 0 < m["p"] < 1 or m["e"] < 0:
        raise MeasureParseError(f"{text!r}: needs 0 < p < 1 and e >= 0")


register(Family("RBU", {"p": 0.8, "e": 0.03, "variant": "paper", "gmax": "aspect"}, "optional",
                _per_segment(_rbu_value), _rbu_iub, _rbu_reb, "rbu",
                "RBU@k = sum_{i<=k} p^i [sum_t w_t R(d_i,t) prod_{j<i}(1-R(d_j,t)) - e], R cascade "
                "(Amigo, Spina & Carrillo-de-Albornoz SIGIR'18 Eq. 11; variant=java: RBU.java)",
                minimum=_rbu_min,
                check=_rbu_check))


def _gerr_value(topic, rows, m):
    X = ranked(topic, rows[:m.k], topic.rel("cascade", m["gmax"]))
    return float(np.dot(1.0 / np.arange(1, X.shape[0] + 1), cascade_gains(X, topic.weights)))


def _gerr_reb(topic, m):
    K = min(m.k, topic.n)
    return _cascade_reb(topic, 1.0 / np.arange(1, K + 1), topic.rel("cascade", m["gmax"]))


def _gerr_iub(topic, m):
    return _gerr_value(topic, cascade_greedy(topic.rel("cascade", m["gmax"]), topic.weights), m), topic.m <= 1


register(Family("gERR-IA", {"gmax": "aspect"}, "required", _per_segment(_gerr_value), _gerr_iub, _gerr_reb, "gerr_ia",
                "graded ERR-IA@k = sum_t w_t sum_{i<=k} (1/i) R(d_i,t) prod_{j<i}(1-R(d_j,t)), "
                "R = (2^g-1)/2^gmax (Agrawal et al. WSDM'09; Chapelle et al. CIKM'09)",
                check=gmax_check))


# ---------------------------------------------------------------- linear-in-position families
def _rbp_value(topic, rows, m):
    X = ranked(topic, rows, topic.rel("linear", m["gmax"]))
    return float((1 - m["p"]) * np.dot(m["p"] ** np.arange(rows.size), X @ topic.weights))


def _rbp_iub(topic, m):
    G = topic.rel("linear", m["gmax"]) @ topic.weights
    return _rbp_value(topic, np.argsort(-G, kind="stable"), m), True


def _rbp_reb(topic, m):
    if topic.n == 0:
        return 0.0
    gbar = topic.rel("linear", m["gmax"]).mean(axis=0)
    return float(np.dot(topic.weights, gbar) * (1 - m["p"] ** topic.n))


register(Family("RBP-IA", {"p": 0.8, "gmax": "aspect"}, "none", _per_segment(_rbp_value), _rbp_iub, _rbp_reb, "rbp_ia",
                "RBP-IA = (1-p) sum_i p^{i-1} sum_t w_t g(d_i,t)/gmax_t (Moffat & Zobel's RBP, "
                "intent-aware per Agrawal et al. WSDM'09)", check=gmax_check))


def _idcg(topic, k: int, gmax: str = "aspect") -> np.ndarray:
    r = topic.rel("linear", gmax)
    srt = -np.sort(-r, axis=0)[:k]
    return _dlog(k)[:srt.shape[0]] @ srt


def _ndcg_ia_value(topic, rows, m):
    if topic.m == 0:
        return 0.0
    X = ranked(topic, rows[:m.k], topic.rel("linear", m["gmax"]))
    dcg = _dlog(X.shape[0]) @ X if X.shape[0] else np.zeros(topic.m)
    idcg = _idcg(topic, m.k, m["gmax"])
    return float(np.dot(topic.weights, np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1), 0)))


def _ndcg_ia_iub(topic, m):
    if topic.m == 0:
        return 0.0, True
    G = topic.rel("linear", m["gmax"]) @ (topic.weights / _idcg(topic, m.k, m["gmax"]))
    return _ndcg_ia_value(topic, np.argsort(-G, kind="stable"), m), True


def _ndcg_ia_reb(topic, m):
    if topic.m == 0:
        return 0.0
    K = min(m.k, topic.n)
    gbar = topic.rel("linear", m["gmax"]).mean(axis=0)
    return float(np.dot(topic.weights, gbar / _idcg(topic, m.k, m["gmax"])) * _dlog(K).sum())


register(Family("nDCG-IA", {"gmax": "aspect"}, "required", _per_segment(_ndcg_ia_value), _ndcg_ia_iub, _ndcg_ia_reb,
                "ndcg_ia", "nDCG-IA@k = sum_t w_t DCG_t@k/IDCG_t@k, gain g/gmax_t, 1/log2(i+1) "
                "(Agrawal et al. WSDM'09)", check=gmax_check))


# ---------------------------------------------------------------- first-hit families
def _rr_value(topic, rows, m):
    X = ranked(topic, rows, topic.rel("binary"))
    tot = 0.0
    for t in range(topic.m):
        hit = np.flatnonzero(X[:, t] > 0)
        if hit.size:
            tot += topic.weights[t] / (hit[0] + 1)
    return tot


def _first_hit_reb(n: int, R: int) -> float:
    """E[1/rank of the first of R relevant among n in random order]."""
    if R <= 0:
        return 0.0
    i = np.arange(1, n - R + 2)
    return float(np.sum(np.exp(log_comb(n - i, R - 1) - log_comb(n, R)) / i))


def _rr_reb(topic, m):
    return float(sum(w * _first_hit_reb(topic.n, int(R)) for w, R in zip(topic.weights, topic.n_rel_pairs)))


def _cover_greedy(J: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each rank: the document covering the most weight of still uncovered aspects."""
    n = J.shape[0]
    unc = np.ones(J.shape[1], bool)
    left = np.ones(n, bool)
    order = []
    for _ in range(n):
        gain = np.where(left, (J & unc) @ w + 1e-9 * J.sum(axis=1), -np.inf)
        d = int(np.argmax(gain))
        order.append(d)
        left[d] = False
        unc &= ~J[d]
    return np.array(order, np.int64)


def _rr_iub(topic, m):
    return _rr_value(topic, _cover_greedy(topic.grades >= 1, topic.weights), m), topic.m <= 1


register(Family("RR-IA", {}, "none", _per_segment(_rr_value), _rr_iub, _rr_reb, "rr_ia",
                "RR-IA = sum_t w_t / (first rank relevant to t) (Agrawal et al. WSDM'09)"))


def _ap_value(topic, rows, m):
    X = ranked(topic, rows, topic.rel("binary"))
    tot = 0.0
    for t in range(topic.m):
        hit = np.flatnonzero(X[:, t] > 0)
        R = int(topic.n_rel_pairs[t])
        if R and hit.size:
            tot += topic.weights[t] * float(np.sum(np.arange(1, hit.size + 1) / (hit + 1))) / R
    return tot


def _ap_iub(topic, m):
    J = topic.grades >= 1
    w = (J * (topic.weights / np.maximum(topic.n_rel_pairs, 1))).sum(axis=1)
    order = np.lexsort((-J.sum(axis=1), -w))
    return _ap_value(topic, order, m), topic.m <= 1


def _ap_reb(topic, m):
    return float(sum(w * ap_reb(topic.n, int(R)) for w, R in zip(topic.weights, topic.n_rel_pairs)))


register(Family("AP-IA", {}, "none", _per_segment(_ap_value), _ap_iub, _ap_reb, "ap_ia",
                "AP-IA = sum_t w_t AP_t, AP_t = (1/R_t) sum over relevant ranks of precision_t "
                "(Agrawal et al. WSDM'09)"))


def _srr_value(topic, rows, m):
    if topic.m == 0:
        return 0.0
    X = ranked(topic, rows, topic.rel("binary")) > 0
    cov = np.logical_or.accumulate(X, axis=0).all(axis=1) if X.shape[0] else np.zeros(0, bool)
    hit = np.flatnonzero(cov)
    return 1.0 / (hit[0] + 1) if hit.size else 0.0


def _srr_iub(topic, m):
    if topic.m == 0:
        return 0.0, True
    f = topic.cache.get("mincover")
    if f is None:
        f = topic.cache["mincover"] = min_cover(topic.grades >= 1)
    return 1.0 / float(f[-1]), True


def _srr_reb(topic, m):
    """sum_i (F(i) - F(i-1))/i, F(i) = P(top i cover T) by inclusion-exclusion over aspect sets."""
    if topic.m == 0:
        return 0.0
    J = topic.grades >= 1
    n, mm = topic.n, topic.m
    i = np.arange(0, n + 1)
    F = np.zeros(n + 1)
    for S in range(1 << mm):
        sel = [t for t in range(mm) if S >> t & 1]
        U = int(J[:, sel].any(axis=1).sum()) if sel else 0
        with np.errstate(invalid="ignore"):
            term = np.where(i <= n - U, np.exp(log_comb(n - U, np.minimum(i, n - U)) - log_comb(n, i)), 0.0)
        F += (-1) ** len(sel) * term
    return float(np.sum(np.diff(F) / np.arange(1, n + 1)))


register(Family("S-RR", {}, "optional", _per_segment(_srr_value), _srr_iub, _srr_reb, "s_rr",
                "S-RR@100% = 1 / (least i whose top i cover every active aspect) (Zhai, Cohen & "
                "Lafferty SIGIR'03, unnormalised as in Amigo et al. SIGIR'18)",
                check=lambda m, text: _only_100(m, text)))


def _only_100(m, text):
    from uefast.errors import MeasureParseError

    if m.k is not None:
        raise MeasureParseError(f"{text!r}: S-RR takes @100% only")


# ---------------------------------------------------------------- NTCIR D-measures
def _gg(topic) -> np.ndarray:
    return topic.rel("grade") @ topic.weights if topic.m else np.zeros(topic.n)


def _dndcg_value(topic, rows, m):
    gg = _gg(topic)
    k = m.k
    x = np.where(rows[:k] >= 0, gg[np.maximum(rows[:k], 0)], 0.0) if topic.n else np.zeros(min(k, rows.size))
    ideal = np.dot(_dlog(k)[:min(k, topic.n)], -np.sort(-gg)[:k])
    return float(np.dot(_dlog(x.size), x) / ideal) if ideal > 0 else 0.0


def _dndcg_reb(topic, m):
    gg = _gg(topic)
    ideal = np.dot(_dlog(m.k)[:min(m.k, topic.n)], -np.sort(-gg)[:m.k])
    return float(gg.mean() * _dlog(min(m.k, topic.n)).sum() / ideal) if ideal > 0 else 0.0


register(Family("D-nDCG", {}, "required", _per_segment(_dndcg_value),
                lambda t, m: (1.0 if _gg(t).any() else 0.0, True), _dndcg_reb, "d_ndcg",
                "D-nDCG@k: global gain GG = sum_t w_t grade(d,t), DCG@k over the GG-sorted ideal's "
                "(Sakai & Song SIGIR'11)"))


def _irec(topic, rows, k):
    if topic.m == 0:
        return 0.0
    X = ranked(topic, rows[:k], topic.rel("binary")) > 0
    return float(X.any(axis=0).sum() / topic.m)


def _dsharp_value(topic, rows, m):
    g = m["gamma"]
    return g * _irec(topic, rows, m.k) + (1 - g) * _dndcg_value(topic, rows, m)


def _dsharp_iub(topic, m):
    cands = [np.argsort(-_gg(topic), kind="stable"), _cover_greedy(topic.grades >= 1, topic.weights)]
    best = max(_dsharp_value(topic, c, m) for c in cands)
    exact = best >= m["gamma"] * coverage_iub(topic, m.k) + (1 - m["gamma"]) - 1e-12
    return best, bool(exact)


def _dsharp_reb(topic, m):
    g = m["gamma"]
    irec = float(np.mean([coverage_reb(topic.n, int(R), m.k) for R in topic.n_rel_pairs])) if topic.m else 0.0
    return g * irec + (1 - g) * _dndcg_reb(topic, m)


register(Family("D#-nDCG", {"gamma": 0.5}, "required", _per_segment(_dsharp_value), _dsharp_iub,
                _dsharp_reb, "dsharp_ndcg",
                "D#-nDCG@k = gamma I-rec@k + (1-gamma) D-nDCG@k (Sakai & Song SIGIR'11; NTCIR "
                "INTENT, gamma = 0.5)"))


# ---------------------------------------------------------------- EU
def _eu_disc(L: int) -> np.ndarray:
    return 1.0 / (1.0 + np.log(np.arange(1, L + 1)))


def novelty_gains(X: np.ndarray, w: np.ndarray, alpha: float) -> np.ndarray:
    """sum_t w_t X[i,t] (1-alpha)^{c(i,t)}, c = earlier documents with X > 0 on t."""
    if X.shape[0] == 0:
        return np.zeros(0)
    c = np.vstack([np.zeros((1, X.shape[1])), np.cumsum(X > 0, axis=0)[:-1]])
    return (X * (1.0 - alpha) ** c) @ w


def _eu_value(topic, rows, m):
    X = ranked(topic, rows, topic.rel("linear", m["gmax"]))
    return float(np.dot(_eu_disc(rows.size), novelty_gains(X, topic.weights, m["alpha"]) - m["e"]))


def _eu_reb(topic, m):
    n = topic.n
    r = topic.rel("linear", m["gmax"])
    d = _eu_disc(n)
    tot = 0.0
    for t in range(topic.m):
        R = int((r[:, t] > 0).sum())
        terms = novelty_terms(n, R, n, m["alpha"], scale=float(r[:, t].sum()) / n)
        tot += topic.weights[t] * float(np.dot(d, terms))
    return tot - m["e"] * float(d.sum())


def _eu_iub(topic, m):
    r = topic.rel("linear", m["gmax"])
    w = topic.weights
    left = np.ones(topic.n, bool)
    cnt = np.zeros(topic.m)
    order = []
    for _ in range(topic.n):
        gain = np.where(left, (r * (1.0 - m["alpha"]) ** cnt) @ w, -np.inf)
        d = int(np.argmax(gain))
        order.append(d)
        left[d] = False
        cnt += r[d] > 0
    return _eu_value(topic, np.array(order, np.int64), m), topic.m == 0


register(Family("EU", {"alpha": 0.5, "e": 0.05, "gmax": "aspect"}, "none", _per_segment(_eu_value), _eu_iub, _eu_reb, "eu",
                "EU = sum_i [sum_t w_t r(d_i,t)(1-alpha)^{c(i,t)} - e]/(1 + ln i) (Yang & Lad "
                "ICTIR'09 as printed in Amigo et al. SIGIR'18; simplified form)",
                minimum=lambda t, m: -m["e"] * float(_eu_disc(t.n).sum()), check=gmax_check))
