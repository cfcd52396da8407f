"""REB of ndeval's measures (novelty and coverage: alpha-DCG, alpha-nDCG, ERR-IA, nERR-IA, NRBP,
nNRBP, MAP-IA, P-IA, strec) over the ``retrieved`` and ``collection`` universes.

These measures read binary J = [grade >= 1] only, so over random orders of a universe of N
documents of which r_t are relevant to aspect t (the others non-relevant), each exact REB of
SPEC_diversity §4 holds with (n, R_t) replaced by (N, r_t), aspect by aspect (linearity):

* novelty sums (alpha-DCG@k, ERR-IA@k, NRBP): sum_i disc(i) (r_t/N) sum_c (1-alpha)^c
  H(N-1, r_t-1, i-1, c) (:func:`uefast.diversity.reb.novelty_terms`), divided by ndeval's
  constant normaliser (ideal-ideal, or the greedy ideal's raw value from the qrels);
* MAP-IA: (1/|T|) sum_t (r_t/R_t) E_N[AP | r_t relevant], R_t = the qrels' relevant count (AP's
  denominator); P-IA@k: sum_t min(k, N) r_t/N / (k |T|); strec@k: (1/|T|) sum_t
  [1 - C(N - r_t, K)/C(N, K)].

``retrieved``: N = the run's ranking length, r_t = its documents relevant to t;
``collection``: N = collection size, r_t = R_t. NRBP and nNRBP sum over all N ranks (an
N x r_t table), so ``collection`` refuses them.
"""
from __future__ import annotations

import math

import numpy as np

from uefast.diversity.families_ndeval import (_dcg_disc, _depth, _err_disc, _ideal_ideal,
                                              _score_order, column_index, ideal_order)
from uefast.diversity.reb import coverage_reb, novelty_terms

__all__ = ["NDEVAL_UNIVERSE", "ndeval_universe_reb"]

NDEVAL_UNIVERSE = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "NRBP", "nNRBP", "MAP-IA",
                   "P-IA", "strec")
NO_COLLECTION = ("NRBP", "nNRBP")


def _harmonic(N: int) -> float:
    if N < 1_000_000:
        return math.fsum(1.0 / np.arange(1, N + 1))
    x = float(N)
    return math.log(x) + 0.5772156649015329 + 1 / (2 * x) - 1 / (12 * x * x) + 1 / (120 * x ** 4)


def _ap(N: int, r: int) -> float:
    """E[(1/r) sum of precisions at the r relevant ranks] over random orders of N documents."""
    if r <= 0:
        return 0.0
    if N == 1:
        return 1.0
    H = _harmonic(N)
    return (r * (N - H) + N * (H - 1.0)) / (N * (N - 1.0))


def _raw(m, N: int, r: np.ndarray, disc: np.ndarray) -> float:
    return float(sum(np.dot(disc[:min(disc.size, N)], novelty_terms(N, int(rt), disc.size, m["alpha"]))
                     for rt in r if rt > 0))


def _ideal_raw(topic, m, blk: str, disc: np.ndarray) -> float:
    """The greedy ideal's raw (unnormalised) value (the qrels' normaliser)."""
    ideal = _score_order(topic, ideal_order(topic, m["alpha"]), m)
    if blk == "NRBP":
        return float(ideal[6 * _depth(m)])
    return float(ideal[column_index(f"{blk}@{m.k}", _depth(m))]) * _ideal_ideal(topic, m, disc)


def ndeval_universe_reb(topic, m, N: int, r: np.ndarray) -> float:
    """E[value of ``m``] over random orders of N documents, ``r[t]`` relevant to aspect t."""
    name = m.fam.name
    T = topic.m
    if T == 0 or N <= 0:
        return 0.0
    if name == "P-IA":
        return float(sum(min(m.k, N) * int(rt) / N for rt in r) / (m.k * T))
    if name == "strec":
        return float(np.mean([coverage_reb(N, int(rt), m.k) for rt in r]))
    if name == "MAP-IA":
        R = topic.n_rel_pairs
        return float(np.mean([(int(rt) / int(Rt)) * _ap(N, int(rt)) if Rt else 0.0
                              for rt, Rt in zip(r, R)]))
    if name in ("NRBP", "nNRBP"):
        raw = _raw(m, N, r, m["beta"] ** np.arange(N)) * ((1 - (1 - m["alpha"]) * m["beta"]) / T)
        if name == "NRBP":
            return raw
        ideal = _ideal_raw(topic, m, "NRBP", None)
        return raw / ideal if ideal > 0 else 0.0
    dcg = name in ("alpha-DCG", "alpha-nDCG")
    disc = _dcg_disc(m.k) if dcg else _err_disc(m.k)
    raw = _raw(m, N, r, disc)
    if name in ("alpha-DCG", "ERR-IA"):
        return raw / _ideal_ideal(topic, m, disc)
    ideal = _ideal_raw(topic, m, "alpha-DCG" if dcg else "ERR-IA", disc)
    return raw / ideal if ideal > 0 else 0.0


def relevant_counts(topic, rows: np.ndarray) -> np.ndarray:
    """r_t: the documents of ``rows`` (judged rows, -1 unjudged) relevant to each aspect."""
    J = topic.grades >= 1
    rows = rows[rows >= 0]
    return J[rows].sum(axis=0) if rows.size else np.zeros(topic.m, np.int64)
