"""ndeval's measures as registry families (values: :mod:`uefast.diversity.ndeval`, bit-identical
to ndeval/pyndeval; binary J = [grade >= 1], uniform weights 1/|T| over active aspects).

IUB: P-IA@k (top k by sum_t J) and strec@k (min-cover DP over aspect subsets) are exact; the
others use ndeval's greedy ideal (``iub_exact`` False when the topic has two or more aspects: the
greedy value is a lower bound on the maximum, SPEC_diversity §2.3), exact with one aspect.
REB: exact (SPEC_diversity §4): novelty sums by hypergeometric terms, ndeval's normalisers are
constants (ideal-ideal) or the greedy ideal's raw value; MAP-IA by the AP formula per aspect.
"""
from __future__ import annotations

import numpy as np

from uefast.diversity.ndeval import (DEPTH, _ideal_rows, build_ndeval_qrels, column_index, discounts,
                                     ndeval_scores)
from uefast.diversity.reb import ap_reb, coverage_reb, novelty_terms
from uefast.diversity.registry import Family, register

_NDEVAL = {"alpha": 0.5, "beta": 0.5}


def _depth(m) -> int:
    return max(DEPTH, m.k or 0)


def _batch_scores(batch, m) -> np.ndarray:
    key = ("ndeval", m["alpha"], m["beta"], _depth(m))
    if key not in batch.cache:
        nq = build_ndeval_qrels({i: t for i, t in enumerate(batch.topics)}, m["alpha"], m["beta"],
                                _depth(m))
        batch.cache[key] = (nq, ndeval_scores(nq, batch.rows, batch.soff, batch.seg_topic))
    return batch.cache[key][1]


def _value(name):
    def value(batch, m):
        depth = _depth(m)
        return _batch_scores(batch, m)[:, column_index(name if m.k is None else f"{name}@{m.k}", depth)]
    return value


def _J(topic) -> np.ndarray:
    return np.ascontiguousarray(topic.grades >= 1, dtype=np.uint8)


def _score_order(topic, order, m) -> np.ndarray:
    """ndeval's values (one output row) of ``topic`` ranked by the judged rows ``order``."""
    key = ("nq", m["alpha"], m["beta"], _depth(m))
    if key not in topic.cache:
        topic.cache[key] = build_ndeval_qrels({0: topic}, m["alpha"], m["beta"], _depth(m))
    nq = topic.cache[key]
    order = np.asarray(order, np.int64)
    return ndeval_scores(nq, order, np.array([0, order.size], np.int64), np.zeros(1, np.int64))[0]


def ideal_order(topic, alpha: float) -> np.ndarray:
    """ndeval's greedy ideal ranking (relevant judged rows) of ``topic``."""
    key = ("ideal", alpha)
    if key not in topic.cache:
        topic.cache[key] = _ideal_rows(_J(topic), topic.m, float(alpha))
    return topic.cache[key]


def _iub_greedy(name):
    def iub(topic, m):
        if topic.m == 0:
            return 0.0, True
        v = _score_order(topic, ideal_order(topic, m["alpha"]), m)
        col = column_index(name if m.k is None else f"{name}@{m.k}", _depth(m))
        return float(v[col]), topic.m <= 1
    return iub


def _raw_reb(topic, m, disc: np.ndarray) -> float:
    """E[sum_{i<=K} disc[i-1] a(i)] (a(i) = ndeval's novelty gain) over random orders."""
    n = topic.n
    tot = 0.0
    for R in topic.n_rel_pairs:
        terms = novelty_terms(n, int(R), disc.size, m["alpha"])
        tot += float(np.dot(disc[:terms.size], terms))
    return tot


def _ideal_ideal(topic, m, disc: np.ndarray) -> float:
    """ndeval's constant normaliser at the cutoff (index 0 is not normalised)."""
    if m.k == 1:
        return 1.0
    g = topic.m * (1.0 - m["alpha"]) ** np.arange(m.k)
    return float(np.sum(g * disc[:m.k]))


def _dcg_disc(k):
    return discounts(max(k, 1))[:k]


def _err_disc(k):
    return 1.0 / np.arange(1, k + 1)


def _reb_cut(disc_fn, normalised: bool):
    def reb(topic, m):
        if topic.m == 0:
            return 0.0
        disc = disc_fn(m.k)
        raw = _raw_reb(topic, m, disc)
        if not normalised:
            return raw / _ideal_ideal(topic, m, disc)
        ideal = _score_order(topic, ideal_order(topic, m["alpha"]), m)
        # the ideal's raw value: its ideal-ideal-normalised value times the normaliser
        blk = "alpha-DCG" if disc_fn is _dcg_disc else "ERR-IA"
        iraw = ideal[column_index(f"{blk}@{m.k}", _depth(m))] * _ideal_ideal(topic, m, disc)
        return raw / iraw if iraw > 0 else 0.0
    return reb


def _nrbp_reb(normalised: bool):
    def reb(topic, m):
        if topic.m == 0:
            return 0.0
        disc = m["beta"] ** np.arange(topic.n)
        raw = _raw_reb(topic, m, disc) * ((1 - (1 - m["alpha"]) * m["beta"]) / topic.m)
        if not normalised:
            return raw
        ideal = _score_order(topic, ideal_order(topic, m["alpha"]), m)[6 * _depth(m)]
        return raw / ideal if ideal > 0 else 0.0
    return reb


def _map_reb(topic, m):
    if topic.m == 0:
        return 0.0
    return float(np.mean([ap_reb(topic.n, int(R)) for R in topic.n_rel_pairs]))


def _map_iub(topic, m):
    """Relevant documents first, by sum_t J(d,t)/R_t (each one's weight in the AP sum), ties to
    more aspects: exact for one aspect, a lower bound otherwise."""
    if topic.m == 0:
        return 0.0, True
    J = topic.grades >= 1
    w = (J / np.maximum(topic.n_rel_pairs, 1)).sum(axis=1)
    rel = np.flatnonzero(J.any(axis=1))
    order = rel[np.lexsort((-J[rel].sum(axis=1), -w[rel]))]
    return float(_score_order(topic, order, m)[6 * _depth(m) + 2]), topic.m <= 1


def _pia_iub(topic, m):
    if topic.m == 0:
        return 0.0, True
    cnt = (topic.grades >= 1).sum(axis=1)
    order = np.argsort(-cnt, kind="stable")[:m.k]
    return float(_score_order(topic, order, m)[column_index(f"P-IA@{m.k}", _depth(m))]), True


def _pia_reb(topic, m):
    if topic.m == 0:
        return 0.0
    K = min(m.k, topic.n)
    return float(sum(K * int(R) / topic.n for R in topic.n_rel_pairs) / (m.k * topic.m))


def min_cover(J: np.ndarray) -> np.ndarray:
    """f[S] = the least number of documents whose aspects cover the aspect set S (bitmask),
    by a DP over subsets (SPEC_diversity §4, S-Recall / S-RR IUB): O(2^m · distinct rows)."""
    m = J.shape[1]
    masks = np.unique((J.astype(np.int64) << np.arange(m)).sum(axis=1))
    masks = masks[masks > 0]
    full = 1 << m
    INF = 1 << 30
    f = np.full(full, INF, np.int64)
    f[0] = 0
    for S in range(1, full):  # f[S] = 1 + min over docs d hitting S of f[S minus mask(d)]
        best = INF
        for d in masks:
            if S & d:
                v = f[S & ~d]
                if v < best:
                    best = v
        f[S] = best + 1 if best < INF else INF
    return f


def coverage_iub(topic, K: int) -> float:
    """max over orders of the aspects covered by the top K, divided by |T| (exact)."""
    if topic.m == 0:
        return 0.0
    f = topic.cache.get("mincover")
    if f is None:
        f = topic.cache["mincover"] = min_cover(topic.grades >= 1)
    sizes = np.array([bin(S).count("1") for S in range(f.size)])
    return float(sizes[f <= K].max() / topic.m)


def _strec_iub(topic, m):
    return coverage_iub(topic, m.k), True


def _strec_reb(topic, m):
    if topic.m == 0:
        return 0.0
    return float(np.mean([coverage_reb(topic.n, int(R), m.k) for R in topic.n_rel_pairs]))


def _one(name, v):
    def iub(topic, m):
        return (1.0 if topic.m else 0.0), topic.m <= 1
    return iub


_DOC_SRC = "ndeval.c v4.5 (TREC Web 2010-2014); SPEC_diversity §2.1, §2.3"

for _name, _iub, _reb, _naive, _doc in [
    ("ERR-IA", _iub_greedy("ERR-IA"), _reb_cut(_err_disc, False), "ndeval_err_ia",
     "ndeval ERR-IA@k: sum_{i<=k} a(i)/i over |T| sum_{i<=k} (1-alpha)^{i-1}/i, "
     "a(i) = sum_t J(d_i,t)(1-alpha)^{c(i,t)} (alpha is the satisfaction probability)"),
    ("nERR-IA", _one("nERR-IA", 1.0), _reb_cut(_err_disc, True), "ndeval_nerr_ia",
     "ndeval nERR-IA@k: ERR-IA@k over the greedy ideal's (0 when alpha-DCG@k is 0)"),
    ("alpha-DCG", _iub_greedy("alpha-DCG"), _reb_cut(_dcg_disc, False), "ndeval_alpha_dcg",
     "ndeval alpha-DCG@k: sum_{i<=k} a(i)/log2(i+1) over the ideal-ideal |T| sum (1-alpha)^{i-1}/log2(i+1) (Clarke et al. SIGIR'08)"),
    ("alpha-nDCG", _one("alpha-nDCG", 1.0), _reb_cut(_dcg_disc, True), "ndeval_alpha_ndcg",
     "ndeval alpha-nDCG@k: alpha-DCG@k over the greedy ideal's (Clarke et al. SIGIR'08)"),
]:
    register(Family(_name, dict(_NDEVAL), "required", _value(_name), _iub, _reb, _naive,
                    _doc + "; " + _DOC_SRC))

register(Family("NRBP", dict(_NDEVAL), "none", _value("NRBP"), _iub_greedy("NRBP"), _nrbp_reb(False),
                "ndeval_nrbp", "ndeval NRBP = (1-(1-alpha)beta)/|T| sum_i beta^{i-1} a(i), whole "
                "run (Clarke, Kolla & Vechtomova ICTIR'09); " + _DOC_SRC))
register(Family("nNRBP", dict(_NDEVAL), "none", _value("nNRBP"), _one("nNRBP", 1.0), _nrbp_reb(True),
                "ndeval_nnrbp", "ndeval nNRBP = NRBP over the greedy ideal's; " + _DOC_SRC))
register(Family("MAP-IA", dict(_NDEVAL), "none", _value("MAP-IA"), _map_iub, _map_reb, "ndeval_map_ia",
                "ndeval MAP-IA = (1/|T|) sum_t AP_t, R_t = relevant judgments of t, whole run "
                "(Agrawal et al. WSDM'09); " + _DOC_SRC))
register(Family("P-IA", dict(_NDEVAL), "required", _value("P-IA"), _pia_iub, _pia_reb, "ndeval_p_ia",
                "ndeval P-IA@k = sum_{i<=k} sum_t J(d_i,t) / (k |T|) (Agrawal et al. WSDM'09); " + _DOC_SRC))
register(Family("strec", dict(_NDEVAL), "required", _value("strec"), _strec_iub, _strec_reb,
                "ndeval_strec", "ndeval strec@k (S-Recall, I-rec) = |aspects covered by the top k| / "
                "|T| (Zhai, Cohen & Lafferty SIGIR'03); " + _DOC_SRC, aliases=("S-Recall", "I-rec")))
