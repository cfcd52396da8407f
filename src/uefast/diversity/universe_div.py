"""REB over the ``retrieved`` and ``collection`` universes of the coverage, NTCIR, utility and
cube families (S-RR, D-nDCG, D#-nDCG, EU, CT, CubeTest), and the one entry point
:func:`universe_reb` that ``uefast.diversity.evaluate`` calls for every measure outside the
Numba IA pass (ndeval's names: :mod:`uefast.diversity.universe_ndeval`).

A universe is N documents in a uniformly random order: its judged rows (``retrieved``: the
run's own ranked documents; ``collection``: every judged document) and N - u more of grade 0 on
every aspect (unjudged = non-relevant). Normalisers, grade maps (gmax), weights and the active
aspects stay the qrels' (the measure is the same function of the ranking; only the random
baseline changes). The exact forms, each the judged-universe REB of SPEC_diversity §4 with the
padding's zeros counted (proved against the mean over every order of padded tiny universes in
``tests/test_diversity_ia_kernel.py``):

* **S-RR@100%** = E[1/X_T], X_T = the first rank whose top X_T cover every aspect (0 if never).
  Inclusion-exclusion over aspect sets S: P(top i cover T) = sum_S (-1)^|S| P(top i miss U_S),
  U_S = the universe's documents relevant to an aspect of S, and sum_i (P(miss, i) - P(miss,
  i-1))/i = -E[1/X_S], X_S the first rank hitting U_S, so
  REB = sum_{S != {}} (-1)^{|S|+1} E[1/X_S]. For u marked of N (continuous embedding: the first
  marked document's time is Beta(1, u), the unmarked ones before it Binomial(N - u, tau), and
  E[1/(1 + Bin(M, tau))] = (1 - (1-tau)^{M+1})/((M+1) tau)):

      E[1/X] = u (H_N - H_{u-1}) / (N - u + 1)          (:func:`first_hit_rr`)

  O(2^|T|) closed-form terms (the U_S by a subset-sum over the documents' aspect masks), so the
  collection universe costs the same as the retrieved one. An aspect the universe cannot cover
  gives REB 0 (every X_T is infinite).
* **D-nDCG@k** = DCG of the global gains GG over the qrels' ideal: E[GG(d_i)] = sum_U GG / N at
  every rank, REB = (sum_U GG / N) sum_{i<=min(k,N)} 1/log2(i+1) / ideal.
* **D#-nDCG@k** = gamma I-rec@k + (1-gamma) D-nDCG@k: linear, so gamma mean_t P(t covered in the
  top K) + (1-gamma) REB[D-nDCG], P = 1 - C(N - r_t, K)/C(N, K) (r_t = the universe's
  documents relevant to t; :func:`uefast.diversity.reb.coverage_reb`).
* **EU** (no cutoff): sum_{i<=N} [sum_t w_t E[r(d_i,t)(1-alpha)^{c(i,t)}] - e]/(1 + ln i), the
  novelty terms of :func:`uefast.diversity.reb.novelty_terms` with (N, R_t^U, V_t^U).
  ``retrieved`` only: over a collection the sum runs over all N ranks (10^8 - 10^9 terms times
  R_t, no closed form for the 1/(1 + ln i) discount), and the baseline would be a ranking of the
  whole collection charged e per document against a run of L documents: refused by name.
* **CT@k** (simplified Cube Test): the composition sum of
  :func:`uefast.diversity.families_utility.ct_universe_reb` with n = N, n_0 = N - r_t.
* **CubeTest@k**: :func:`uefast.diversity.families_cube.cube_reb` with M ~ Hypergeometric(N,
  R_t^U, K); exact where its walk fits the state budget, else the same seeded Monte Carlo
  (``evaluate`` warns) as over the judged documents.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import digamma

from uefast.errors import InputError

__all__ = [
    "NO_COLLECTION_OTHER",
    "UNIVERSE_OTHER",
    "check_universe",
    "first_hit_rr",
    "harmonic_diff",
    "srr_universe_reb",
    "universe_reb",
]

UNIVERSE_OTHER = ("S-RR", "D-nDCG", "D#-nDCG", "EU", "CT", "CubeTest")
NO_COLLECTION_OTHER = ("EU",)


def check_universe(reb_universe: str, collection_size, mlist) -> int:
    """Validate ``reb_universe``/``collection_size`` for ``mlist`` (every registered family has
    a retrieved and a collection REB except those refused by name:
    :func:`uefast.diversity.ia_fast.check_universe` for the IA and ndeval ones, EU over a
    collection here); returns N (0 unless ``"collection"``)."""
    from uefast.diversity.ia_fast import check_universe as check_ia

    N = check_ia(reb_universe, collection_size,
                 [m for m in mlist if m.fam.name not in UNIVERSE_OTHER])
    if reb_universe == "collection":
        for m in mlist:
            if m.fam.name in NO_COLLECTION_OTHER:
                raise InputError(f"measure {str(m)!r}: its REB over a collection sums over all N "
                                 "ranks (no cutoff); use reb_universe='judged' or 'retrieved'")
    return N


def harmonic_diff(N: int, a: int) -> float:
    """H_N - H_a = sum_{j=a+1}^{N} 1/j (0 <= a <= N): a direct sum when short, else by the
    asymptotic series of the digamma function (psi(x) = ln x - 1/(2x) - 1/(12x^2) + ...; the
    log difference as log1p) when a >= 10^4, else psi(N+1) - psi(a+1)."""
    if N - a <= 256:
        return math.fsum(1.0 / np.arange(a + 1, N + 1, dtype=np.float64))
    if a >= 10_000:
        def c(x):
            x2 = 1.0 / (x * x)
            return -0.5 / x - x2 * (1 / 12 - x2 * (1 / 120 - x2 / 252))
        return math.log1p((N - a) / (a + 1.0)) + (c(N + 1.0) - c(a + 1.0))
    return float(digamma(N + 1.0) - digamma(a + 1.0))


def first_hit_rr(N: int, u: int) -> float:
    """E[1/X], X = the first rank holding one of u marked documents in a uniformly random order
    of N: u (H_N - H_{u-1})/(N - u + 1) (module docstring); 0 when u = 0."""
    if u <= 0:
        return 0.0
    return u * harmonic_diff(N, u - 1) / (N - u + 1)


def srr_universe_reb(J: np.ndarray, N: int) -> float:
    """E[S-RR@100%] over random orders of N documents of which the rows of ``J`` (u x m, binary
    relevance to the m active aspects) are the relevant-or-judged ones, the others relevant to
    none (module docstring: inclusion-exclusion over aspect sets)."""
    m = J.shape[1]
    if m == 0 or N == 0:
        return 0.0
    if not J.any(axis=0).all():
        return 0.0
    masks = (J.astype(np.int64) << np.arange(m)).sum(axis=1)
    full = 1 << m
    within = np.bincount(masks, minlength=full).astype(np.int64)  # docs with exactly this mask
    for t in range(m):  # within[A] = documents whose mask is a subset of A (zeta transform)
        bit = 1 << t
        idx = np.flatnonzero(np.arange(full) & bit)
        within[idx] += within[idx ^ bit]
    u_rel = J.shape[0]  # documents outside J relevant to none: U_S = u - within[~S]
    tot = []
    for S in range(1, full):
        U = u_rel - int(within[(full - 1) & ~S])
        tot.append((1.0 if S.bit_count() % 2 else -1.0) * first_hit_rr(N, U))
    return math.fsum(tot)


def _gg_reb(topic, m, N: int, rows: np.ndarray) -> float:
    from uefast.diversity.families_ia import _dlog, _gg

    gg = _gg(topic)
    ideal = np.dot(_dlog(m.k)[:min(m.k, topic.n)], -np.sort(-gg)[:m.k])
    if ideal <= 0 or N == 0:
        return 0.0
    return float(gg[rows].sum() / N * _dlog(min(m.k, N)).sum() / ideal)


def _eu_reb(topic, m, N: int, rows: np.ndarray) -> float:
    from uefast.diversity.families_ia import _eu_disc
    from uefast.diversity.reb import novelty_terms

    if N == 0:
        return 0.0
    r = topic.rel("linear", m["gmax"])[rows]
    d = _eu_disc(N)
    tot = 0.0
    for t in range(topic.m):
        R = int((r[:, t] > 0).sum())
        terms = novelty_terms(N, R, N, m["alpha"], scale=float(r[:, t].sum()) / N)
        tot += topic.weights[t] * float(np.dot(d[:terms.size], terms))
    return tot - m["e"] * float(d.sum())


def universe_reb(topic, m, N: int, rows: np.ndarray) -> float:
    """E[value of ``m``] over random orders of a universe of N documents: the judged rows of
    ``rows`` (-1 entries, unjudged documents, are part of N only) and N - u of grade 0.
    ndeval's names go to :func:`uefast.diversity.universe_ndeval.ndeval_universe_reb`."""
    from uefast.diversity.universe_ndeval import NDEVAL_UNIVERSE, ndeval_universe_reb

    rows = np.asarray(rows, np.int64)
    rows = rows[rows >= 0]
    name = m.fam.name
    if name in NDEVAL_UNIVERSE:
        J = topic.grades[rows] >= 1
        return ndeval_universe_reb(topic, m, N, J.sum(axis=0) if rows.size else np.zeros(topic.m, np.int64))
    if name == "S-RR":
        return srr_universe_reb(topic.grades[rows] >= 1, N)
    if name == "D-nDCG":
        return _gg_reb(topic, m, N, rows)
    if name == "D#-nDCG":
        from uefast.diversity.reb import coverage_reb

        g = m["gamma"]
        r = (topic.grades[rows] >= 1).sum(axis=0)
        irec = float(np.mean([coverage_reb(N, int(x), m.k) for x in r])) if topic.m else 0.0
        return g * irec + (1 - g) * _gg_reb(topic, m, N, rows)
    if name == "EU":
        return _eu_reb(topic, m, N, rows)
    if name == "CT":
        from uefast.diversity.families_utility import ct_universe_reb

        return ct_universe_reb(topic, m, N, rows)
    if name == "CubeTest":
        from uefast.diversity.families_cube import _reb

        return _reb(topic, m, universe=(N, rows))
    raise InputError(f"measure {str(m)!r}: no REB over a retrieved or collection universe")
