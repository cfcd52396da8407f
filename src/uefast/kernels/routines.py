"""Each measure family's four per-query routines, in the one signature the dispatch
(:mod:`uefast.kernels.dispatch`) and the registry (:mod:`uefast.measures`) know:

* ``<f>_plain(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal)`` -- the raw value of one
  fully ordered list ``lab[0:n]`` (nDCG / nERR: the raw DCG / ERR; the driver divides);
* ``<f>_tied(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal)`` -- the
  tie-aware (expected) raw value over the tie groups ending at ``gend[0:ng]``;
* ``<f>_iub(lab, n, k, gtype, rel, fp, norm, nrel, tabs)`` -- IUB from the judged labels sorted
  descending;
* ``<f>_reb(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch)`` -- exact REB, the
  expectation over uniformly random orders of the n judged labels ``lab`` (sorted descending),
  ``gsum`` the sum of their gains (for ``gtype``); ``gend``/``scratch`` are buffers of length
  >= n + 1 / n + 2.

Arguments: k <= 0 means no cutoff; ``gtype`` the gain code (:func:`~uefast.kernels.metrics.gain`;
ERR: the grade scale of :func:`~uefast.kernels.err.theta`), ``rel`` the relevance threshold,
``fp`` the family's real parameter (RBP's p, ERR's lmax, Q's beta), ``norm`` AP's denominator
code, ``nrel`` Np at ``rel``, ``tabs`` :func:`uefast.engine.tables`, ``pos`` int64 scratch of
length >= n, ``ideal`` the query's judged labels sorted descending (filled only for families
whose state names ``"ideal"``; an empty array otherwise). The formulas are in SPEC_math §1-§5
and in each routine's primitive (:mod:`uefast.kernels.metrics`, :mod:`uefast.kernels.err`,
:mod:`uefast.kernels.sakai`).
"""
from __future__ import annotations

import numba as nb

from uefast.kernels.metrics import (
    _cut,
    gain,
    _none_relevant,
    ap_denominator,
    dcg_plain,
    dcg_tied,
    rbp_plain,
    rbp_tied,
    relcount_plain,
    relcount_tied,
    rr_plain,
    rr_tied,
    sp_plain,
    sp_tied,
    success_plain,
    success_tied,
)
from uefast.kernels.err import err_plain, err_reb, err_tied
from uefast.kernels.sakai import (bpref_plain, bpref_tied, o_plain, o_tied, pplus_plain,
                                  pplus_tied, q_plain_pos, q_reb, q_tied)

_jit = nb.njit(cache=True, nogil=True)
# the uniform wrappers are inlined into the dispatch at Numba IR level: the dispatch then calls
# the primitives directly, as the kernels did before the registry (an extra call level per
# measure and segment cost the core benchmark ~10% CPU time)
_wrap = nb.njit(cache=True, nogil=True, inline="always")


@_wrap
def _at(tabs, row, K):
    """``tabs[row, K]``, or the last column where K is beyond the table: the REB of a collection
    of N documents (``reb_universe="collection"``) needs the sums at K = N only, which the
    engine puts there (:func:`uefast.universe.collection_tables`) instead of N columns."""
    if K < tabs.shape[1]:
        return tabs[row, K]
    return tabs[row, tabs.shape[1] - 1]


# ------------------------------------------------------------------ DCG / nDCG (nDCG: DCG, then / IDCG)
@_wrap
def dcg_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return dcg_plain(lab, n, k, gtype, tabs)


@_wrap
def dcg_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return dcg_tied(lab, gend, ng, n, k, gtype, tabs)


@_wrap
def dcg_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """IDCG@k: DCG of the ideal ranking (the maximum, by the rearrangement inequality)."""
    return dcg_plain(lab, n, k, gtype, tabs)


@_wrap
def dcg_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[DCG@k] = (gsum / n) sum_{i<=K} d(i) (SPEC_math §1)."""
    return gsum / n * _at(tabs, 1, _cut(k, n))


# ------------------------------------------------------------------ P, R, R-prec
@_wrap
def p_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return relcount_plain(lab, n, k, rel) / k


@_wrap
def p_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return relcount_tied(lab, gend, ng, n, k, rel) / k


@_wrap
def p_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """min(Np, K) / k."""
    return min(nrel, _cut(k, n)) / k


@_wrap
def p_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """K Np / (n k)."""
    return _cut(k, n) * nrel / (n * float(k))


@_wrap
def r_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if nrel == 0:
        return 0.0
    return relcount_plain(lab, n, k, rel) / nrel


@_wrap
def r_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if nrel == 0:
        return 0.0
    return relcount_tied(lab, gend, ng, n, k, rel) / nrel


@_wrap
def r_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """min(Np, K) / Np."""
    if nrel == 0:
        return 0.0
    return min(nrel, _cut(k, n)) / nrel


@_wrap
def r_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """K / n."""
    if nrel == 0:
        return 0.0
    return _cut(k, n) / float(n)


@_wrap
def rprec_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if nrel == 0:
        return 0.0
    return relcount_plain(lab, n, nrel, rel) / nrel


@_wrap
def rprec_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if nrel == 0:
        return 0.0
    return relcount_tied(lab, gend, ng, n, nrel, rel) / nrel


@_wrap
def one_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """1 when the query has a relevant document, else 0 (R-prec, RR, Success, Q, O, nERR...)."""
    return 1.0 if nrel > 0 else 0.0


@_wrap
def rprec_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """Np / n."""
    return nrel / float(n)


# ------------------------------------------------------------------ SP and AP
@_wrap
def _sp_reb(n, k, nrel, tabs):
    """E[SP@k] = bK + (a - b) H_K, a = Np/n, b = Np(Np-1)/(n(n-1)) (SPEC_math §2)."""
    if nrel == 0:
        return 0.0
    a = nrel / n
    b = nrel * (nrel - 1.0) / (n * (n - 1.0)) if n > 1 else 0.0
    K = _cut(k, n)
    return b * K + (a - b) * _at(tabs, 2, K)


@_wrap
def sp_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if nrel == 0:
        return 0.0
    return sp_plain(lab, n, k, rel, tabs, pos)


@_wrap
def sp_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if nrel == 0:
        return 0.0
    return sp_tied(lab, gend, ng, n, k, rel, tabs)


@_wrap
def sp_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """min(Np, K): every relevant document first, each adding 1."""
    return float(min(nrel, _cut(k, n)))


@_wrap
def sp_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    return _sp_reb(n, k, nrel, tabs)


@_wrap
def ap_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if nrel == 0:
        return 0.0
    return sp_plain(lab, n, k, rel, tabs, pos) / ap_denominator(norm, k, nrel)


@_wrap
def ap_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if nrel == 0:
        return 0.0
    return sp_tied(lab, gend, ng, n, k, rel, tabs) / ap_denominator(norm, k, nrel)


@_wrap
def ap_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """min(Np, K) / the AP variant's denominator."""
    if nrel == 0:
        return 0.0
    return min(nrel, _cut(k, n)) / ap_denominator(norm, k, nrel)


@_wrap
def ap_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    if nrel == 0:
        return 0.0
    return _sp_reb(n, k, nrel, tabs) / ap_denominator(norm, k, nrel)


# ------------------------------------------------------------------ RR and Success
@_wrap
def rr_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if nrel == 0:
        return 0.0
    return rr_plain(lab, n, k, rel)


@_wrap
def rr_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if nrel == 0:
        return 0.0
    return rr_tied(lab, gend, ng, n, k, rel)


@_wrap
def rr_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """sum_{t=1..min(K,Nn+1)} q_t Np/(n-t+1)/t, q_t = C(Nn,t-1)/C(n,t-1) (SPEC_math §1)."""
    if nrel == 0:
        return 0.0
    K = _cut(k, n)
    nn = n - nrel
    s = 0.0
    q = 1.0
    for t in range(1, min(K, nn + 1) + 1):
        s += q * nrel / (n - t + 1.0) / t
        q *= (nn - t + 1.0) / (n - t + 1.0)
    return s


@_wrap
def success_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if nrel == 0:
        return 0.0
    return success_plain(lab, n, k, rel)


@_wrap
def success_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if nrel == 0:
        return 0.0
    return success_tied(lab, gend, ng, n, k, rel)


@_wrap
def success_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """1 - C(Nn, K)/C(n, K): not all of the top K non-relevant."""
    if nrel == 0:
        return 0.0
    return 1.0 - _none_relevant(n, nrel, _cut(k, n))


# ------------------------------------------------------------------ ERR and nERR (nERR: ERR, then / ERR*)
@_wrap
def err_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return err_plain(lab, n, k, fp, gtype)


@_wrap
def err_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return err_tied(lab, gend, ng, n, k, fp, gtype, scratch)


@_wrap
def err_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """ERR of the ideal ranking (the maximum: an adjacent exchange changes ERR by
    (theta_a - theta_b)(1/r - 1/(r+1)) >= 0; SPEC_math §0)."""
    return err_plain(lab, n, k, fp, gtype)


@_wrap
def err_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[ERR@k] = sum_r (E_{r-1} - E_r)/r, E_m = e_m(y)/C(n,m): the tie-aware routine on one
    group of all n judged documents, by blocks of equal labels where cheaper (:func:`err_reb`)."""
    return err_reb(lab, n, k, fp, gtype, gend, scratch)


# ------------------------------------------------------------------ RBP (binary or graded)
# norm 0: binary (label >= rel); norm 1: graded, gain g(l)/g(lmax) with gain code gtype and the
# top grade lmax passed in ``rel`` (NTCIREVAL's RBP grade g(l)/g_max)
@_jit
def _rbp_graded_plain(lab, n, k, gtype, lmax, p):
    K = _cut(k, n)
    top = gain(lmax, gtype)
    s = 0.0
    w = 1.0
    for i in range(K):
        if lab[i] > 0:
            s += w * gain(lab[i], gtype)
        w *= p
    return (1.0 - p) * s / top


@_wrap
def rbp_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if norm == 1:
        return _rbp_graded_plain(lab, n, k, gtype, rel, fp)
    return rbp_plain(lab, n, k, rel, fp)


@_wrap
def rbp_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if norm == 0:
        return rbp_tied(lab, gend, ng, n, k, rel, fp)
    # graded: (1-p) sum_g mean_gain(T_g) sum_{i in g, i<=K} p^(i-1), / g(lmax)
    K = _cut(k, n)
    s = 0.0
    start = 0
    w = 1.0
    for g in range(ng):
        end = gend[g]
        if start >= K:
            break
        gs = 0.0
        for i in range(start, end):
            gs += gain(lab[i], gtype)
        ws = 0.0
        for i in range(start, end):
            if i < K:
                ws += w
            w *= fp
        s += gs / (end - start) * ws
        start = end
    return (1.0 - fp) * s / gain(rel, gtype)


@_wrap
def rbp_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """The ideal ranking (the maximum, by the rearrangement inequality): binary
    (1 - p) sum_{i < min(Np, K)} p^i; graded (1 - p) sum_{i<K} p^i g(l_(i)) / g(lmax)."""
    return rbp_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, lab[0:0], lab[0:0])


@_wrap
def rbp_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """(Np / n)(1 - p^K) binary; (gsum / n)(1 - p^K) / g(lmax) graded."""
    if norm == 1:
        return gsum / n * (1.0 - fp ** _cut(k, n)) / gain(rel, gtype)
    if nrel == 0:
        return 0.0
    return nrel / n * (1.0 - fp ** _cut(k, n))


# ------------------------------------------------------------------ RBP's residual (judged flags)
# The routines read 1 for a judged document and 0 for an unjudged one (label_source="judged"):
# residual@k = (1-p) sum_{i<=K, unjudged} p^(i-1) + p^K = 1 - RBP of the judged flags to depth K.
@_wrap
def rbpres_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return 1.0 - rbp_plain(lab, n, k, 1, fp)


@_wrap
def rbpres_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return 1.0 - rbp_tied(lab, gend, ng, n, k, 1, fp)


@_wrap
def rbpres_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """The best (smallest) residual: the judged documents first (flags sorted descending)."""
    return 1.0 - rbp_plain(lab, n, k, 1, fp)


@_wrap
def rbpres_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """1 - (J / n)(1 - p^K), J the judged documents among the n."""
    return 1.0 - nrel / n * (1.0 - fp ** _cut(k, n))


# ------------------------------------------------------------------ F and E (van Rijsbergen)
@_jit
def _f_of(c, nrel, k, n, beta):
    """F_beta = (1 + beta^2) P R / (beta^2 P + R) = (1 + beta^2) c / (beta^2 Np + k), c the
    relevant documents among the top k (k: the whole ranked list without a cutoff), 0 if c = 0."""
    if c <= 0.0:
        return 0.0
    kk = k if k > 0 else n
    return (1.0 + beta * beta) * c / (beta * beta * nrel + kk)


@_wrap
def f_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return _f_of(relcount_plain(lab, n, k, rel), nrel, k, n, fp)


@_wrap
def f_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    """F is linear in c, so its tie-aware value is F of E[c]."""
    return _f_of(relcount_tied(lab, gend, ng, n, k, rel), nrel, k, n, fp)


@_wrap
def f_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """c = min(Np, K)."""
    return _f_of(float(min(nrel, _cut(k, n))), nrel, k, n, fp)


@_wrap
def f_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[c] = K Np / n (F is linear in c)."""
    return _f_of(_cut(k, n) * nrel / float(n), nrel, k, n, fp)


@_wrap
def e_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return 1.0 - f_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal)


@_wrap
def e_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return 1.0 - f_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal)


@_wrap
def e_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """E of the ideal ranking, 1 - F's maximum (E is lower-is-better: this is its minimum)."""
    return 1.0 - f_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs)


@_wrap
def e_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    return 1.0 - f_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch)


# ------------------------------------------------------------------ Q-measure and O-measure
@_wrap
def q_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return q_plain_pos(lab, n, k, gtype, fp, nrel, ideal, pos)


@_wrap
def q_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return q_tied(lab, gend, ng, n, k, gtype, fp, nrel, ideal)


@_wrap
def q_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[Q@k]: the tie-aware form with one group of all n judged documents (``lab`` is also
    the ideal ranking): sum_{m<K} (S/n + m (R-1) S/(n(n-1))) / (m+1 + beta cg*(m+1)) / min(R, k),
    S = R + beta * gsum. O(K)."""
    return q_reb(lab, n, k, gtype, fp, nrel, gsum)


@_wrap
def o_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return o_plain(lab, n, k, gtype, fp, nrel, ideal)


@_wrap
def o_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return o_tied(lab, gend, ng, n, k, gtype, fp, nrel, ideal)


@_wrap
def o_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[O@k]: sum_{m<=K} (E_{m-1} - E_m)(1 + beta gsum/R)/(m + beta cg*(m)), E_m =
    C(n-R, m)/C(n, m): the tie-aware form with one group. O(K)."""
    gend[0] = n
    return o_tied(lab, gend, 1, n, k, gtype, fp, nrel, lab[:n])


@_wrap
def pplus_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return pplus_plain(lab, n, gtype, fp, ideal)


@_wrap
def pplus_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return pplus_tied(lab, gend, ng, n, gtype, fp, ideal)


@_wrap
def pplus_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[P+] over random orders of the judged documents: the tie-aware form with one group
    (``lab`` is also the ideal ranking). O(n^2) at worst (:func:`pplus_tied`)."""
    gend[0] = n
    return pplus_tied(lab, gend, 1, n, gtype, fp, lab[:n])


# ------------------------------------------------------------------ bpref (condensed list)
# N, the judged non-relevant documents, is the length of the ideal ranking (state "ideal") - Np
@_wrap
def bpref_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    return bpref_plain(lab, n, rel, nrel, ideal.shape[0] - nrel)


@_wrap
def bpref_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    return bpref_tied(lab, gend, ng, n, rel, nrel, ideal.shape[0] - nrel)


@_wrap
def bpref_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[bpref] over random orders of the n judged documents: the tie-aware form with one group,
    (1/(N+1)) sum_{x=0..N} (1 - min(x, R)/min(R, N)), N = n - R. O(n)."""
    gend[0] = n
    return bpref_tied(lab, gend, 1, n, rel, nrel, n - nrel)


# ------------------------------------------------------------------ the paper's REB (Santu & Feng 2022)
# signature: (n, k, norm, nrel, tabs, gsum) -> REB as the paper computes it
@_wrap
def dcg_paper_r(n, k, norm, nrel, tabs, gsum):
    """Mean gain * sum_{i<=k} d(i), summed to k even when k > n (the caller divides for nDCG)."""
    kk = n if k <= 0 else k
    return gsum / n * tabs[1, kk]


@_wrap
def sp_paper_r(n, k, norm, nrel, tabs, gsum):
    """E[SP@k] = k p^2 (the paper's independence assumption; SPEC_math §3: too low)."""
    if nrel == 0:
        return 0.0
    kk = n if k <= 0 else k
    p = nrel / n
    return kk * p * p


@_wrap
def ap_paper_r(n, k, norm, nrel, tabs, gsum):
    """The paper's E[SP@k] = k p^2 divided by the AP variant's denominator."""
    if nrel == 0:
        return 0.0
    kk = n if k <= 0 else k
    return sp_paper_r(n, k, norm, nrel, tabs, gsum) / ap_denominator(norm, kk, nrel)
