"""Scalar per-query metric routines (Numba), one small function per metric and ranking model.

Every metric has two routines that read the labels of one ranked list (``lab[0:n]``, position i+1
holds ``lab[i]``; unjudged documents carry label 0):

* ``<metric>_plain`` -- the metric of that exact order (ties already broken by the caller);
* ``<metric>_tied``  -- the tie-aware value (McSherry & Najork, ECIR 2008; SPEC_math §5): the mean
  of the metric over every order consistent with the tie groups, where group g occupies positions
  ``gend[g-1]+1 .. gend[g]``.

IUB is ``<metric>_plain`` on the judged labels sorted descending (the ideal ranking), and REB is
``<metric>_tied`` on the judged labels as **one** tie group: REB is by definition the expected value
when all judged documents share one score (SPEC_math §0, §5), and with a single group each tied
formula reduces term by term to the closed forms of SPEC_math §1-§2 (e.g. E[DCG@k] = mean gain *
sum_{i<=K} d(i); E[SP@k] = bK + (a-b)H_K; E[RR@k] = sum_t C(Nn,t-1)/C(n,t-1) * Np/(n-t+1)/t).
The closed forms are checked against these routines and against brute-force enumeration in the tests.

Conventions (SPEC_math §0): ``k <= 0`` means no cutoff; K = min(k, n); P@k divides by k even when
n < k; binary relevance is ``label >= rel``; negative labels count as 0. The routines allocate
nothing (scratch space is passed in), so the same code can serve a GPU backend.

``tabs`` holds four precomputed rows (see :func:`uefast.engine.tables`): ``tabs[0, i]`` = d(i+1) =
1/log2(i+2), ``tabs[1, i]`` = sum_{j<i} d(j+1) (discount prefix sums), so a tie group's DCG
contribution costs O(1) instead of O(group size), ``tabs[2, i]`` = H_i (the harmonic numbers, for
the closed forms) and ``tabs[3, i]`` = 1/i (no division in the SP/AP loop).
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["gain", "measure_plain", "measure_tied", "measure_iub", "measure_reb", "paper_reb"]

K_DCG, K_NDCG, K_P, K_R, K_RPREC, K_SP, K_AP, K_RR, K_ERR, K_RBP, K_SUCCESS = range(11)
NORM_REL, NORM_K, NORM_MIN = 0, 1, 2

_jit = nb.njit(cache=True, nogil=True)


@_jit
def gain(label, gtype):
    """g(l) = l (``gtype`` 0, linear, trec_eval) or 2^l - 1 (``gtype`` 1, exponential); 0 for l <= 0."""
    if label <= 0:
        return 0.0
    if gtype == 0:
        return float(label)
    return 2.0 ** label - 1.0


@_jit
def _cut(k, n):
    """K = min(k, n), with k <= 0 meaning no cutoff."""
    if k <= 0 or k > n:
        return n
    return k


@_jit
def _theta(label, lmax):
    """ERR stopping probability theta(l) = (2^l - 1) / 2^lmax (Chapelle et al., CIKM 2009)."""
    if label <= 0:
        return 0.0
    return (2.0 ** label - 1.0) / 2.0 ** lmax


@_jit
def _none_relevant(n, nrel, j):
    """C(n - nrel, j) / C(n, j): the chance that j documents drawn at random from n, nrel of them
    relevant, are all non-relevant, as prod_{i<j} (n-nrel-i)/(n-i) (0 from i = n - nrel on)."""
    nn = n - nrel
    q = 1.0
    for i in range(min(j, nn + 1)):
        q *= max(nn - i, 0) / (n - i + 0.0)
    return q


@_jit
def _count_rel(lab, start, end, rel):
    """r_g: relevant documents (label >= rel) among positions start..end-1 (one tie group)."""
    r = 0
    for i in range(start, end):
        if lab[i] >= rel:
            r += 1
    return r


# --------------------------------------------------------------------------- DCG, rank-linear
@_jit
def dcg_plain(lab, n, k, gtype, tabs):
    """DCG@k = sum_{i<=K} g(l_i) / log2(i+1)."""
    K = _cut(k, n)
    s = 0.0
    for i in range(K):
        if lab[i] > 0:
            s += gain(lab[i], gtype) * tabs[0, i]
    return s


@_jit
def dcg_tied(lab, gend, ng, n, k, gtype, tabs):
    """Tie-aware DCG@k = sum_g mean_gain(T_g) * sum_{i in group g, i<=K} d(i)."""
    K = _cut(k, n)
    s = 0.0
    start = 0
    for g in range(ng):
        end = gend[g]
        if start >= K:
            break
        gs = 0.0
        for i in range(start, end):
            gs += gain(lab[i], gtype)
        if gs > 0.0:
            ds = tabs[1, min(end, K)] - tabs[1, start]
            s += gs / (end - start) * ds
        start = end
    return s


@_jit
def relcount_plain(lab, n, k, rel):
    """Number of relevant documents (label >= rel) in the top min(k, n)."""
    K = _cut(k, n)
    c = 0
    for i in range(K):
        if lab[i] >= rel:
            c += 1
    return float(c)


@_jit
def relcount_tied(lab, gend, ng, n, k, rel):
    """Expected number of relevant documents in the top K: sum_g r_g * |group g within K| / t_g."""
    K = _cut(k, n)
    s = 0.0
    start = 0
    for g in range(ng):
        end = gend[g]
        if start >= K:
            break
        r = _count_rel(lab, start, end, rel)
        s += r * (min(end, K) - start) / (end - start)
        start = end
    return s


@_jit
def rbp_plain(lab, n, k, rel, p):
    """Binary RBP = (1-p) sum_{i<=K} p^(i-1) [l_i >= rel] (Moffat & Zobel, TOIS 2008)."""
    K = _cut(k, n)
    s = 0.0
    w = 1.0
    for i in range(K):
        if lab[i] >= rel:
            s += w
        w *= p
    return (1.0 - p) * s


@_jit
def rbp_tied(lab, gend, ng, n, k, rel, p):
    """Tie-aware RBP = (1-p) sum_g (r_g/t_g) sum_{i in group g, i<=K} p^(i-1)."""
    K = _cut(k, n)
    s = 0.0
    start = 0
    w = 1.0  # p^start
    for g in range(ng):
        end = gend[g]
        if start >= K:
            break
        r = _count_rel(lab, start, end, rel)
        ws = 0.0
        for i in range(start, min(end, K)):
            ws += w
            w *= p
        for i in range(min(end, K), end):
            w *= p
        s += r / (end - start) * ws
        start = end
    return (1.0 - p) * s


# --------------------------------------------------------------------------- SP and AP
@_jit
def sp_plain(lab, n, k, rel, tabs, pos):
    """SP@k = sum_{i<=K} Prec(i) rel_i = sum over relevant i of (#relevant at or above i) / i.

    Two branch-free loops (relevant labels are about half of a judged list, so a branch on each
    label mispredicts half the time): the positions of the relevant documents are compacted into
    the scratch ``pos`` (length >= K), then summed in rank order (the same additions, in the same
    order, as the one-loop form)."""
    K = _cut(k, n)
    m = 0
    for i in range(K):
        pos[m] = i
        m += lab[i] >= rel
    s = 0.0
    for c in range(m):
        i = pos[c]
        s += (c + 1) * tabs[3, i + 1]  # (c+1) / (i+1) without a division
    return s


@_jit
def sp_tied(lab, gend, ng, n, k, rel, tabs):
    """Tie-aware SP@k (McSherry & Najork 2008; SPEC_math §5):
    sum_g sum_{m=1..t_g, i=c_{g-1}+m<=K} (1/i) [ (r_g/t_g)(R_<g + 1) + (m-1) r_g(r_g-1)/(t_g(t_g-1)) ].

    With a = (r/t)(R_<g + 1), b = r(r-1)/(t(t-1)) and the group starting after position s, the
    group's terms are (a + (m-1) b)/(s+m), m = 1..L (L: its positions within the cutoff), summed
    one by one: every term is >= 0, so nothing cancels. (The closed form
    b L + (a - (s+1)b)(H_{s+L} - H_s) subtracts nearly equal numbers for a group deep in a long
    ranking: relative error 1.8e-8 at depth 30,000.)"""
    K = _cut(k, n)
    s = 0.0
    start = 0
    before = 0  # R_<g
    for g in range(ng):
        end = gend[g]
        if start >= K:
            break
        t = end - start
        r = _count_rel(lab, start, end, rel)
        if r > 0:
            a = r / t * (before + 1.0)
            b = 0.0
            if t > 1:
                b = r * (r - 1.0) / (t * (t - 1.0))
            for m in range(min(end, K) - start):
                s += (a + m * b) * tabs[3, start + m + 1]
        before += r
        start = end
    return s


@_jit
def ap_denominator(norm, k, nrel):
    """AP's divisor: Np (trec_eval map / map_cut), k (the paper's AP@k = SP@k/k) or min(Np, k)."""
    if norm == NORM_REL:
        return float(nrel)
    if norm == NORM_K:
        return float(k)
    return float(min(nrel, k))


# --------------------------------------------------------------------------- RR and ERR
@_jit
def rr_plain(lab, n, k, rel):
    """RR@k = 1/rank of the first relevant document within the top K, 0 if none."""
    K = _cut(k, n)
    for i in range(K):
        if lab[i] >= rel:
            return 1.0 / (i + 1.0)
    return 0.0


@_jit
def rr_tied(lab, gend, ng, n, k, rel):
    """Tie-aware RR@k: in the first group holding r > 0 relevant of t documents, starting after
    position s, P(first relevant at s+m) = E_{m-1} - E_m with E_m = C(t-r, m)/C(t, m)."""
    K = _cut(k, n)
    start = 0
    for g in range(ng):
        end = gend[g]
        if start >= K:
            return 0.0
        t = end - start
        r = _count_rel(lab, start, end, rel)
        if r > 0:
            s = 0.0
            e_prev = 1.0
            for m in range(1, min(end, K) - start + 1):
                e_m = e_prev * (t - r - m + 1.0) / (t - m + 1.0)  # C(t-r,m)/C(t,m)
                if e_m < 0.0:
                    e_m = 0.0
                s += (e_prev - e_m) / (start + m)
                e_prev = e_m
            return s
        start = end
    return 0.0


# --------------------------------------------------------------------------- Success
@_jit
def success_plain(lab, n, k, rel):
    """Success@k = 1 if a relevant document is among the top K, else 0 (trec_eval success_k)."""
    K = _cut(k, n)
    for i in range(K):
        if lab[i] >= rel:
            return 1.0
    return 0.0


@_jit
def success_tied(lab, gend, ng, n, k, rel):
    """Tie-aware Success@k: 1 once a group wholly inside the top K holds a relevant document;
    for the group the cut splits (t documents, r relevant, j = K - s of them above the cut, s the
    group's start) the chance that one of the j is relevant, 1 - C(t-r, j)/C(t, j)."""
    K = _cut(k, n)
    start = 0
    for g in range(ng):
        if start >= K:
            return 0.0
        end = gend[g]
        r = _count_rel(lab, start, end, rel)
        if end <= K:
            if r > 0:
                return 1.0
        else:
            if r == 0:
                return 0.0
            return 1.0 - _none_relevant(end - start, r, K - start)
        start = end
    return 0.0


@_jit
def err_plain(lab, n, k, lmax):
    """ERR@k = sum_{r<=K} theta(l_r)/r * prod_{j<r} (1 - theta(l_j)) (Chapelle et al. 2009)."""
    K = _cut(k, n)
    s = 0.0
    stay = 1.0
    for i in range(K):
        th = _theta(lab[i], lmax)
        if th > 0.0:
            s += stay * th / (i + 1.0)
            stay *= 1.0 - th
    return s


@_jit
def err_tied(lab, gend, ng, n, k, lmax, f):
    """Tie-aware ERR@k (SPEC_math §2, §5): sum_g S_<g sum_{m: c_{g-1}+m<=K} (E^g_{m-1}-E^g_m)/i with
    E^g_m = e_m(y over T_g)/C(t_g, m), y = 1 - theta, by SPEC's normalised DP
    f(m) <- ((j-m)/j) f(m) + (m/j) y_j f(m-1), run on its complement q(m) = 1 - f(m):
    q(m) <- ((j-m)/j) q(m) + (m/j) (theta_j + y_j q(m-1)), q(0) = 0. Both are convex combinations
    (stable in float64), but q sums non-negative terms built from theta itself, so
    E_{m-1} - E_m = q(m) - q(m-1) keeps its precision when every theta is small (fine label
    scales: theta = 2^-60 gave REB 0 with f, two numbers near 1 subtracted).
    ``f`` is scratch of length >= min(K, max t_g) + 1."""
    K = _cut(k, n)
    s = 0.0
    stay = 1.0  # S_<g
    start = 0
    for g in range(ng):
        end = gend[g]
        if start >= K or stay == 0.0:
            break
        t = end - start
        kg = min(end, K) - start
        for m in range(kg + 1):
            f[m] = 1.0  # q(m) = 1 - f(m): f(0) = 1, f(m > 0) = 0
        f[0] = 0.0
        prod = 1.0
        for j in range(1, t + 1):
            th = _theta(lab[start + j - 1], lmax)
            y = 1.0 - th
            prod *= y
            for m in range(min(j, kg), 0, -1):
                f[m] = ((j - m) / j) * f[m] + (m / j) * (th + y * f[m - 1])
        part = 0.0
        for m in range(1, kg + 1):
            part += (f[m] - f[m - 1]) / (start + m)
        s += stay * part
        stay *= prod
        start = end
    return s


# --------------------------------------------------------------------------- dispatch
@_jit
def measure_plain(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs, pos):
    """The raw value of measure ``kind`` on one fully ordered list (nDCG: DCG, caller divides);
    ``pos`` is int64 scratch of length >= n."""
    if kind == K_DCG or kind == K_NDCG:
        return dcg_plain(lab, n, k, gtype, tabs)
    if nrel == 0 and kind != K_P and kind != K_RBP:
        return 0.0
    if kind == K_P:
        return relcount_plain(lab, n, k, rel) / k
    if kind == K_R:
        return relcount_plain(lab, n, k, rel) / nrel
    if kind == K_RPREC:
        return relcount_plain(lab, n, nrel, rel) / nrel
    if kind == K_SP:
        return sp_plain(lab, n, k, rel, tabs, pos)
    if kind == K_AP:
        return sp_plain(lab, n, k, rel, tabs, pos) / ap_denominator(norm, k, nrel)
    if kind == K_RR:
        return rr_plain(lab, n, k, rel)
    if kind == K_ERR:
        return err_plain(lab, n, k, fparam)
    if kind == K_RBP:
        return rbp_plain(lab, n, k, rel, fparam)
    if kind == K_SUCCESS:
        return success_plain(lab, n, k, rel)
    return np.nan


@_jit
def measure_tied(kind, lab, gend, ng, n, k, gtype, rel, fparam, norm, nrel, tabs, scratch):
    """The tie-aware (expected) raw value of measure ``kind`` given tie groups ``gend[0:ng]``."""
    if kind == K_DCG or kind == K_NDCG:
        return dcg_tied(lab, gend, ng, n, k, gtype, tabs)
    if nrel == 0 and kind != K_P and kind != K_RBP:
        return 0.0
    if kind == K_P:
        return relcount_tied(lab, gend, ng, n, k, rel) / k
    if kind == K_R:
        return relcount_tied(lab, gend, ng, n, k, rel) / nrel
    if kind == K_RPREC:
        return relcount_tied(lab, gend, ng, n, nrel, rel) / nrel
    if kind == K_SP:
        return sp_tied(lab, gend, ng, n, k, rel, tabs)
    if kind == K_AP:
        return sp_tied(lab, gend, ng, n, k, rel, tabs) / ap_denominator(norm, k, nrel)
    if kind == K_RR:
        return rr_tied(lab, gend, ng, n, k, rel)
    if kind == K_ERR:
        return err_tied(lab, gend, ng, n, k, fparam, scratch)
    if kind == K_RBP:
        return rbp_tied(lab, gend, ng, n, k, rel, fparam)
    if kind == K_SUCCESS:
        return success_tied(lab, gend, ng, n, k, rel)
    return np.nan


@_jit
def measure_iub(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs):
    """IUB from the judged labels ``lab[0:n]`` sorted descending (the ideal ranking). Binary
    measures in closed form (SPEC_math §2): P@k = min(Np,k)/k, R@k = min(Np,k)/Np, SP@k =
    min(Np,K), AP = SP/denominator, RR = R-prec = Success@k = 1; DCG, ERR and RBP by their plain
    routine on the ideal ranking (nDCG: the caller divides by IDCG)."""
    if kind == K_DCG or kind == K_NDCG:
        return dcg_plain(lab, n, k, gtype, tabs)
    if kind == K_ERR:
        return err_plain(lab, n, k, fparam)
    if kind == K_RBP:
        return rbp_plain(lab, n, k, rel, fparam)
    K = _cut(k, n)
    if kind == K_P:
        return min(nrel, K) / k
    if nrel == 0:
        return 0.0
    if kind == K_R:
        return min(nrel, K) / nrel
    if kind == K_SP:
        return float(min(nrel, K))
    if kind == K_AP:
        return min(nrel, K) / ap_denominator(norm, k, nrel)
    return 1.0  # RR, R-prec, Success


@_jit
def measure_reb(kind, lab, n, k, gtype, rel, fparam, norm, nrel, tabs, gsum, gend, scratch):
    """Exact REB, E[measure] over uniformly random orders of the n judged documents, in closed
    form (SPEC_math §1-§2). a = Np/n, b = Np(Np-1)/(n(n-1)), K = min(k, n), ``gsum`` = sum of the
    gains g(l) of the judged labels (for the measure's gain type):

    DCG@k: gsum/n * sum_{i<=K} d(i)        P@k: K Np/(n k)       R@k: K/n      R-prec: Np/n
    SP@k: bK + (a-b) H_K (AP: / its denominator)                RBP: a (1 - p^K)
    RR@k: sum_{t=1..min(K,Nn+1)} [C(Nn,t-1)/C(n,t-1)] Np/(n-t+1)/t
    Success@k: 1 - C(Nn,K)/C(n,K) (the chance that not all top K are non-relevant)
    ERR@k: sum_r (E_{r-1} - E_r)/r, E_m = e_m(y)/C(n,m), by the tie-aware routine's normalised DP
    with one tie group (``gend``/``scratch`` are its buffers)."""
    K = _cut(k, n)
    if kind == K_DCG or kind == K_NDCG:
        return gsum / n * tabs[1, K]
    if kind == K_ERR:
        gend[0] = n
        return err_tied(lab, gend, np.int64(1), n, k, fparam, scratch)  # int64: compiled once
    if kind == K_P:
        return K * nrel / (n * float(k))
    if nrel == 0:
        return 0.0
    a = nrel / n
    if kind == K_R:
        return K / float(n)
    if kind == K_RPREC:
        return a
    if kind == K_RBP:
        return a * (1.0 - fparam ** K)
    if kind == K_SP or kind == K_AP:
        b = nrel * (nrel - 1.0) / (n * (n - 1.0)) if n > 1 else 0.0
        sp = b * K + (a - b) * tabs[2, K]
        if kind == K_SP:
            return sp
        return sp / ap_denominator(norm, k, nrel)
    nn = n - nrel
    if kind == K_SUCCESS:
        return 1.0 - _none_relevant(n, nrel, K)
    # RR: q_t = C(Nn, t-1)/C(n, t-1) = P(the first t-1 documents are all non-relevant)
    s = 0.0
    q = 1.0
    for t in range(1, min(K, nn + 1) + 1):
        s += q * nrel / (n - t + 1.0) / t
        q *= (nn - t + 1.0) / (n - t + 1.0)
    return s


@_jit
def paper_reb(kind, n, k, norm, nrel, tabs, gsum, exact):
    """The paper's REB (Santu & Feng 2022) where it gives one, else ``exact``.

    DCG family: mean gain * sum_{i<=k} d(i) (summed to k even when k > n; caller divides for nDCG).
    SP / AP family: E[SP@k] = k p^2 (independence assumption; SPEC_math §3 shows it is too low),
    divided by the AP variant's denominator. ``gsum`` is the sum of the judged labels' gains.
    """
    kk = n if k <= 0 else k
    if kind == K_DCG or kind == K_NDCG:
        return gsum / n * tabs[1, kk]
    if kind == K_SP or kind == K_AP:
        if nrel == 0:
            return 0.0
        p = nrel / n
        sp = kk * p * p
        if kind == K_SP:
            return sp
        return sp / ap_denominator(norm, kk, nrel)
    return exact
