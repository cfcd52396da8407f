"""NTCIREVAL's cumulative-gain variants that no other family computes (Numba): the original
nDCG of Järvelin & Kekäläinen with a logarithm base b (NTCIREVAL's ``nDCG@l``), and normalised
cumulative utility with graded-uniform stops (NTCIREVAL's ``NCUgu,BR`` / ``NCUgu,P``), each in
the four routines of the registry's signature (:mod:`uefast.kernels.routines`).

Original DCG (Järvelin & Kekäläinen, TOIS 20(4) 2002; NTCIREVAL ``--logb``): the gain at rank r
is discounted by 1 / max(1, log_b r), i.e. not at all for r < b, so

    DCG_b@k = sum_{r<=K} g(l_r) d_b(r),   d_b(r) = 1 if r < b (and r = 1), else 1 / log_b(r),

and nDCG_b@k = DCG_b@k / DCG_b@k of the ideal ranking. It is rank-linear, so the tie-aware value
is sum over tie groups of the group's mean gain times its discounts (McSherry & Najork 2008,
SPEC_math §5) and REB = (gain sum / n) sum_{r<=K} d_b(r) (SPEC_math §1). MSnDCG (Burges et al.
2005, log2(r + 1)) is the family ``nDCG``; with b >= K + 1 no rank is discounted (nCG@K).

NCU (Sakai & Robertson, EVIA 2008): :func:`uefast.kernels.sakai.ncu_plain`.

P-measure (Sakai, IPSJ TOD 48(SIG9) 2007; NTCIREVAL's ``P-measure``): the blended ratio at rp,
the first rank holding the highest level present in the list (P+ averages BR over the relevant
ranks up to rp instead): :func:`pmeasure_plain`, :func:`pmeasure_tied`.

NCU with rank-biased stops (Sakai & Robertson, EVIA 2008; NTCIREVAL's ``NCUrb,BR`` /
``NCUrb,P``): the user stops at the c-th relevant document of the list with probability
gamma^(c-1) / Z, Z = sum_{i<R} gamma^i: :func:`ncurb_plain`, :func:`ncurb_tied`. Its two reals
reach the routines as the row ``fp`` = (beta, gamma) (the family's ``reals=2``;
docs/adding_a_measure.md section 4).

The plain P-measure and NCUrb walk the ranking with Q's blended-ratio loop
(:func:`uefast.kernels.sakai._br_walk`: P-measure its term at rp, NCUrb its sum with the weights
gamma^(C(r)-1)).

DCG_b shares MSnDCG's loops (:func:`uefast.kernels.metrics.dcg_b_plain`,
:func:`~uefast.kernels.metrics.dcg_b_tied`): the discount
:func:`~uefast.kernels.metrics.jk_discount` depends on the base ``fp``, so it is computed (one logarithm per rank) where MSnDCG reads the
log2 tables.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.kernels.metrics import _cut, dcg_b_plain, dcg_b_tied, discount_sum, gain
from uefast.kernels.sakai import _br_group, _br_walk, _lchoose, ncu_plain, ncu_tied

__all__ = ["jkdcg_plain", "jkdcg_tied", "jkdcg_plain_r", "jkdcg_tied_r", "jkdcg_iub_r",
           "jkdcg_reb_r", "ncu_plain_r", "ncu_tied_r", "ncu_iub_r", "ncu_reb_r", "pmeasure_plain",
           "pmeasure_tied", "pm_plain_r", "pm_tied_r", "pm_reb_r", "ncurb_plain", "ncurb_tied",
           "ncurb_plain_r", "ncurb_tied_r", "ncurb_iub_r", "ncurb_reb_r"]

_jit = nb.njit(cache=True, nogil=True)
_wrap = nb.njit(cache=True, nogil=True, inline="always")


@_jit
def jkdcg_plain(lab, n, k, gtype, tabs, base):
    """DCG_b@k of one ordered list (module docstring): :func:`uefast.kernels.metrics.dcg_b_plain`
    with the base b discount."""
    return dcg_b_plain(lab, n, k, gtype, tabs, base)


@_jit
def jkdcg_tied(lab, gend, ng, n, k, gtype, tabs, base):
    """Tie-aware DCG_b@k = sum_g mean_gain(T_g) sum_{r in group g, r<=K} d_b(r)
    (:func:`uefast.kernels.metrics.dcg_b_tied`, MSnDCG's tie-group loop, with the base b
    discount)."""
    return dcg_b_tied(lab, gend, ng, n, k, gtype, tabs, base)


# ------------------------------------------------------------------ routines (registry signature)
@_wrap
def jkdcg_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return jkdcg_plain(lab, n, k, gtype, tabs, fp)


@_wrap
def jkdcg_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return jkdcg_tied(lab, gend, ng, n, k, gtype, tabs, fp)


@_wrap
def jkdcg_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """DCG_b@k of the ideal ranking (the maximum: d_b is non-increasing, rearrangement
    inequality)."""
    return jkdcg_plain(lab, n, k, gtype, tabs, fp)


@_wrap
def jkdcg_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[DCG_b@k] = (gsum / n) sum_{r<=K} d_b(r)."""
    return gsum / n * discount_sum(tabs, fp, 0, _cut(k, n))


@_wrap
def ncu_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return ncu_plain(lab, n, k, gtype, fp, ideal)


@_wrap
def ncu_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return ncu_tied(lab, gend, ng, n, k, gtype, fp, ideal)


@_wrap
def ncu_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """NCU@k of the ideal ranking, sum of the top K gains / G (1 without a cutoff): BR <= 1 and
    the weights of the relevant ranks <= K sum to at most that, and the ideal ranking has BR = 1
    at every relevant rank."""
    return ncu_plain(lab, n, k, gtype, fp, lab[:n])


@_wrap
def ncu_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[NCU@k] over random orders of the n judged labels (sorted descending, so also the ideal
    ranking): the tie-aware routine with one group. O(n)."""
    gend[0] = n
    return ncu_tied(lab, gend, np.int64(1), n, k, gtype, fp, lab[:n])  # int64: compiled once


@_jit
def _list_top(lab, n):
    top = 0
    for i in range(n):
        top = max(top, lab[i])
    return top


@_jit
def pmeasure_plain(lab, n, gtype, beta, ideal):
    """P-measure = BR(rp) = (C(rp) + beta cg(rp)) / (rp + beta cg*(rp)), rp the rank of the first
    document of the highest level present in the list; 0 if the list holds no relevant document
    (Sakai, IPSJ TOD 48(SIG9), 2007; pyNTCIREVAL's PMeasure)."""
    top = _list_top(lab, n)
    if top < 1:
        return 0.0
    # the walk's last term, at rp (the top level is present), is BR(rp)
    _, _, br = _br_walk(lab, n, gtype, beta, ideal, top, False, 1.0)
    return br


@_jit
def pmeasure_tied(lab, gend, ng, n, gtype, beta, ideal):
    """Tie-aware P-measure (the expectation over the orders consistent with the tie groups).
    The groups before g*, the first group holding a document of the top level L*, only add their
    relevant count R_< and gain CG_< (totals over the positions before g*, whatever their
    groups). In g* (starting after position c; t documents, h of level
    L*, the nn = t - h others holding r' relevant documents of gain sum G'), the first L* document
    is at c + m with probability C(t-m, h-1)/C(t, h), and the m - 1 documents before it are a
    random subset of the nn others, so by linearity

        E[P] = sum_{m=1}^{nn+1} P(m) (R_< + 1 + (m-1) r'/nn
                                      + beta (CG_< + g(L*) + (m-1) G'/nn)) / (c + m + beta cg*(c + m)).

    O(n); REB (one group of all judged documents) is O(n) too."""
    top = _list_top(lab, n)
    if top < 1:
        return 0.0
    ni = ideal.shape[0]
    p = 0
    while lab[p] != top:  # the first document of level L* (there is one) ...
        p += 1
    g = 0
    while gend[g] <= p:  # ... and its group g*, positions start..end-1
        g += 1
    start = gend[g - 1] if g > 0 else 0
    end = gend[g]
    # R_<, CG_< and cg*(c) are totals over positions 0..c-1 (c = start), whatever the groups
    # there, and r, G those of g*: the blended-ratio group walk of Q, P+ and NCU gives both (its
    # sum of BR is theirs, not used here); it advances cg* over the positions it reads, all of
    # 0..c-1 and none of g* (K = start), which the loop below walks
    r_before = 0
    g_before = 0.0
    cgi = 0.0
    if start > 0:
        _, r_before, g_before, cgi = _br_group(lab, 0, start, start, gtype, beta, ideal, 0.0, 0.0,
                                               0.0, False)
    _, r, gs, _ = _br_group(lab, start, end, start, gtype, beta, ideal, 0.0, 0.0, 0.0, False)
    t = end - start
    h = 0
    for i in range(start, end):
        if lab[i] == top:
            h += 1
    gtop = gain(top, gtype)
    nn = t - h
    rrate = (r - h) / nn if nn > 0 else 0.0
    grate = (gs - h * gtop) / nn if nn > 0 else 0.0
    pm = h / t
    out = 0.0
    for m in range(1, nn + 2):
        i = start + m - 1
        if i < ni:
            cgi += gain(ideal[i], gtype)
        num = r_before + 1.0 + (m - 1) * rrate + beta * (g_before + gtop + (m - 1) * grate)
        out += pm * num / (i + 1.0 + beta * cgi)
        if m <= nn:
            pm *= (t - m - h + 1.0) / (t - m)  # C(t-m-1, h-1)/C(t-m, h-1)
    return out


@_wrap
def pm_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return pmeasure_plain(lab, n, gtype, fp, ideal)


@_wrap
def pm_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return pmeasure_tied(lab, gend, ng, n, gtype, fp, ideal)


@_wrap
def pm_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[P-measure] over random orders of the judged documents: the tie-aware form with one
    group (``lab``, sorted descending, is also the ideal ranking). O(n)."""
    gend[0] = n
    return pmeasure_tied(lab, gend, np.int64(1), n, gtype, fp, lab[:n])


@_jit
def _rb_norm(gamma, nrel):
    """Z = sum_{i<R} gamma^i, the rank-biased stop probabilities' normaliser."""
    z = 0.0
    w = 1.0
    for _ in range(nrel):
        z += w
        w *= gamma
    return z


@_jit
def ncurb_plain(lab, n, k, gtype, beta, gamma, nrel, ideal):
    """NCUrb@k = (1/Z) sum_{r<=K} I(r) gamma^(C(r)-1) NU(r), Z = sum_{i<R} gamma^i (R the judged
    relevant documents), NU = BR(r) (``NCUrb,BR``) or, with beta = 0, precision C(r)/r
    (``NCUrb,P``); 0 when R = 0 (Sakai & Robertson, EVIA 2008; pyNTCIREVAL's p_rb)."""
    if nrel == 0:
        return 0.0
    s, _, _ = _br_walk(lab, _cut(k, n), gtype, beta, ideal, 0, False, gamma)
    return s / _rb_norm(gamma, nrel)


@_jit
def _rb_hyper(m, pop, succ, gamma, a, b):
    """E[gamma^J (a + b J)] for J hypergeometric (m draws from ``pop`` documents, ``succ`` of
    them successes). P(j) starts at the mode (the exp of log binomials, so it does not underflow)
    and follows P(j+1)/P(j) = (succ - j)(m - j) / ((j + 1)(pop - succ - m + j + 1)) up and down:
    O(min(m, succ)) multiplications and one exp."""
    jlo = max(0, m - (pop - succ))
    jhi = min(m, succ)
    mode = ((m + 1) * (succ + 1)) // (pop + 2)
    mode = min(max(mode, jlo), jhi)
    pmode = math.exp(_lchoose(float(succ), float(mode)) + _lchoose(float(pop - succ),
                     float(m - mode)) - _lchoose(float(pop), float(m)))
    gmode = gamma ** mode
    out = 0.0
    p = pmode
    w = gmode
    for j in range(mode, jhi + 1):
        out += p * w * (a + j * b)
        p *= (succ - j) * (m - j) / ((j + 1.0) * (pop - succ - m + j + 1.0))
        w *= gamma
    p = pmode
    for j in range(mode - 1, jlo - 1, -1):
        p *= (j + 1.0) * (pop - succ - m + j + 1.0) / ((succ - j) * (m - j + 0.0))
        out += p * gamma ** j * (a + j * b)
    return out


@_jit
def ncurb_tied(lab, gend, ng, n, k, gtype, beta, gamma, nrel, ideal):
    """Tie-aware NCUrb@k. In a tie group of t documents (r relevant, gain sum G) after groups
    holding R_< relevant documents of gain CG_<, the document at the group's m-th position
    (m = 0, 1, ...) is relevant with probability r/t; given that, the number j of relevant
    documents among the m before it is hypergeometric (m drawn from the t - 1 others, r - 1 of
    them relevant), and that document with those j is a random (j+1)-subset of the group's
    relevant ones (expected gain (j+1) G/r), so

        E[term] = (r/t) sum_j P(j) gamma^(R_< + j) (R_< + j + 1 + beta (CG_< + (j+1) G/r))
                  / (p + beta cg*(p)),   p = the rank.

    (:func:`_rb_hyper`). O(t min(t, r)) a group, without a logarithm in the inner loop; REB (one
    group of all judged documents) O(n R)."""
    if nrel == 0:
        return 0.0
    ni = ideal.shape[0]
    K = _cut(k, n)
    cgi = 0.0
    r_before = 0
    g_before = 0.0
    s = 0.0
    start = 0
    for g in range(ng):
        if start >= K:
            break
        end = gend[g]
        t = end - start
        r = 0
        gs = 0.0
        for i in range(start, end):
            if lab[i] >= 1:
                r += 1
                gs += gain(lab[i], gtype)
        gbar = gs / r if r > 0 else 0.0
        wbase = gamma ** r_before
        for i in range(start, min(end, K)):
            if i < ni:
                cgi += gain(ideal[i], gtype)
            if r == 0:
                continue
            inner = _rb_hyper(i - start, t - 1, r - 1, gamma,
                              r_before + 1.0 + beta * (g_before + gbar), 1.0 + beta * gbar)
            s += r / t * wbase * inner / (i + 1.0 + beta * cgi)
        r_before += r
        g_before += gs
        start = end
    return s / _rb_norm(gamma, nrel)


@_wrap
def ncurb_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return ncurb_plain(lab, n, k, gtype, fp[0], fp[1], nrel, ideal)


@_wrap
def ncurb_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return ncurb_tied(lab, gend, ng, n, k, gtype, fp[0], fp[1], nrel, ideal)


@_wrap
def ncurb_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """NCUrb@k of the ideal ranking, sum_{c<min(R,K)} gamma^c / Z (1 without a cutoff): BR <= 1,
    the relevant ranks <= K take at most the min(R, K) largest weights, and the ideal ranking
    has BR = 1 at each of them."""
    return ncurb_plain(lab, n, k, gtype, fp[0], fp[1], nrel, lab[:n])


@_wrap
def ncurb_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[NCUrb@k] over random orders of the n judged labels (sorted descending, so also the ideal
    ranking): the tie-aware routine with one group. O(n R)."""
    gend[0] = n
    return ncurb_tied(lab, gend, np.int64(1), n, k, gtype, fp[0], fp[1], nrel, lab[:n])
