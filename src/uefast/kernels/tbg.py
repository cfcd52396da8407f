"""Time-biased gain (Smucker & Clarke, SIGIR 2012): value, tie-aware value, IUB and exact REB
with a constant document length, in the registry's uniform routine signatures
(:mod:`uefast.kernels.routines`).

Definition (Smucker & Clarke 2012, eq. 3-6). A user reads the ranked summaries top down; a
summary costs ``T_s`` seconds, and the user clicks through to the document with probability
``P(C=1|R=r)`` and reads it in ``alpha * l + beta`` seconds (``l`` its length in words). The time
to reach rank k and the gain are

    T(k) = sum_{i<k} t(d_i),   t(d) = T_s + P(C=1|R=r_d) (alpha l_d + beta),
    TBG@K = sum_{k<=K} g [l_k >= rel] D(T(k)),   D(t) = exp(-t ln 2 / h),
    g = P(C=1|R=1) P(S=1|R=1).

Since D(T(k)) = prod_{i<k} delta(d_i), delta(d) = exp(-t(d) ln 2 / h), TBG has ERR's cascade
shape. With a constant length l, delta takes two values: delta_1 for a relevant document,
delta_0 for a non-relevant one. The family's three reals (``reals=3``) reach the routines as the
row ``fp`` = (g, delta_1, delta_0).

* value: O(K);
* IUB: the relevant documents first, g sum_{j<min(R,K)} delta_1^j. It is the maximum over all
  orders: the j-th relevant document within the top K has j - 1 relevant documents and some
  non-relevant ones before it, so its weight is at most delta_1^(j-1) (every delta <= 1), and at
  most min(R, K) relevant documents are in the top K;
* exact REB and the tie-aware value: :func:`group_sum`.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.kernels.metrics import _cut

__all__ = ["tbg_plain", "group_sum", "tbg_tied", "TBG_TAIL", "REL_BIT",
           "code_delta", "doc_plain", "doc_group", "doc_tied", "tbg_plain_r", "tbg_tied_r",
           "tbg_iub_r", "tbg_reb_r"]

_jit = nb.njit(cache=True, nogil=True)
_wrap = nb.njit(cache=True, nogil=True, inline="always")

#: the tie-group DP stops once the rest of a group's terms are provably below this fraction of
#: the group's own contribution (:func:`group_depth`)
TBG_TAIL = 2.0 ** -60
#: decay factors below 2^-MIN_EXP are refused when planning (``t / h`` above ~900)
MIN_EXP = 960
_MANT = 1 << 52


@_jit
def tbg_plain(lab, n, k, rel, g, d1, d0):
    """TBG@k of one ordered list: sum_{i<K} g [lab_i >= rel] prod_{j<i} delta(lab_j)."""
    K = _cut(k, n)
    s = 0.0
    w = 1.0
    for i in range(K):
        if lab[i] >= rel:
            s += w
            w *= d1
        else:
            w *= d0
    return g * s


@_jit
def group_depth(d1, d0, kg):
    """How many positions of a tie group :func:`group_sum` needs: min(kg, M), M the least m with
    dmax^m / (1 - dmax) <= TBG_TAIL, dmax = max(delta_1, delta_0). G_p <= dmax^p, so the terms
    from M on sum to at most TBG_TAIL times the group's first term (G_0 = 1). With dmax = 1 (no
    time passes: T_s = 0 and a zero click or reading time) there is no decay: M = kg."""
    dm = max(d1, d0)
    if dm >= 1.0:
        return kg
    m = math.ceil(math.log(TBG_TAIL * (1.0 - dm)) / math.log(dm))
    if m < kg:
        return max(np.int64(m), 1)
    return kg


@_jit
def group_sum(t, r, kg, d1, d0, f):
    """E[sum_{p<kg} [doc at p relevant] prod_{i<p} delta(doc at i)] over the uniformly random
    orders of a group of t documents, r of them relevant, = (r/t) sum_{p<kg} G_p with
    G_p = e_p(delta of the t - 1 other documents) / C(t - 1, p) (given the document at p, the p
    before it are a uniform p-subset of the others), e_p the elementary symmetric polynomial.
    The others hold A = r - 1 relevant and B = t - r non-relevant documents, so
    G_p = sum_j u_p(j), u_p(j) = P(J_p = j) delta_1^j delta_0^(p-j), J_p hypergeometric, and

        u_{p+1}(j) = [u_p(j) delta_0 (B - p + j) + u_p(j-1) delta_1 (A - j + 1)] / (t - 1 - p)

    (the next document drawn is non-relevant or relevant): non-negative terms only, stable in
    float64. Cost O(M min(M, r)), M = :func:`group_depth` (about 3,000 at most with the paper's
    T_s = 4.4 s and h = 224 s), whatever t. ``f``: scratch of length >= min(r, kg) + 1."""
    if r <= 0 or kg <= 0:
        return 0.0
    M = group_depth(d1, d0, min(kg, t))
    A = r - 1
    B = t - r
    jm = min(A, M)
    for j in range(jm + 1):
        f[j] = 0.0
    f[0] = 1.0
    total = 1.0  # G_0
    for p in range(M - 1):
        inv = 1.0 / (t - 1.0 - p)
        top = min(p + 1, A)
        gp = 0.0
        for j in range(top, 0, -1):
            left0 = B - p + j  # non-relevant documents left after j relevant, p - j non-relevant
            v = f[j - 1] * d1 * (A - j + 1.0) * inv
            if left0 > 0:
                v += f[j] * d0 * left0 * inv
            f[j] = v
            gp += v
        f[0] = f[0] * d0 * max(B - p, 0) * inv
        gp += f[0]
        total += gp
    return r / t * total


@_jit
def tbg_tied(lab, gend, ng, n, k, rel, g, d1, d0, f):
    """Tie-aware TBG@k (McSherry & Najork's expectation over the orders within each tie group):
    sum_g W_<g g :func:`group_sum` (t_g, r_g, K - c_{g-1}), W_<g = prod of delta over the
    documents of the groups before g (order-free), c_{g-1} the positions they fill."""
    K = _cut(k, n)
    s = 0.0
    w = 1.0
    start = 0
    for gi in range(ng):
        end = gend[gi]
        if start >= K or w == 0.0:
            break
        r = 0
        for i in range(start, end):
            if lab[i] >= rel:
                r += 1
        t = end - start
        if r > 0:
            s += w * group_sum(t, r, min(end, K) - start, d1, d0, f)
        w *= d1 ** r * d0 ** (t - r)
        start = end
    return g * s


# ------------------------------------------------------------------ per-document lengths
# Each document's label is a code [label >= rel] 2^62 + the IEEE-754 bits of its own decay factor
# delta_d (in [2^-960, 1]: the bits are below 2^62 and rise with delta), the kernel's ``rel`` is
# 2^62 and ``norm`` < 0 marks the mode (uefast.tbg_lengths builds the codes).
#: the relevance bit of a per-document code
REL_BIT = 1 << 62
_LOW = (1 << 62) - 1
_FRAC = (1 << 52) - 1


@_jit
def code_delta(c):
    """delta_d from a per-document code: the float64 of bit pattern ``c mod 2^62`` (a normal
    number: (2^52 + fraction) 2^(exponent - 1075)), decoded with integer arithmetic only."""
    b = c & _LOW
    e = b >> 52
    return float((b & _FRAC) + _MANT) * 2.0 ** (e - 1075)


@_jit
def doc_plain(lab, n, k, rel, g):
    """TBG@k with per-document decay factors: sum_{i<K} g [lab_i >= rel] prod_{j<i} delta_j."""
    K = _cut(k, n)
    s = 0.0
    w = 1.0
    for i in range(K):
        if lab[i] >= rel:
            s += w
        w *= code_delta(lab[i])
    return g * s


@_jit
def doc_group(lab, start, end, kg, rel, f):
    """E[sum_{p<kg} [doc at p relevant] prod_{i<p} delta(doc at i)] over the random orders of the
    documents ``lab[start:end]``, each with its own delta: sum_{p<D} F_t(p), with
    F_j(m) = (1/j) sum_{d relevant among the first j} e_m(delta of the other j-1) / C(j-1, m).
    One row of scratch suffices: the relevant documents go in first, as
    E_{j+1}(m) = [(j+1-m) E_j(m) + m x E_j(m-1)] / (j+1), E_j(m) = e_m / C(j, m); after the
    R relevant ones F_R(m) = E_R(m) for m < R (every document is relevant; row R, which should
    read F_R(R) = 0, still holds E_R(R), but the first non-relevant document multiplies it by
    j - m = 0, and without one it is never summed, as D <= t = R); then each non-relevant one:
    F_{j+1}(m) = [(j-m) F_j(m) + m x F_j(m-1)] / (j+1). Convex
    combinations only; O(t D), D = min(kg, t, M) with M = :func:`group_depth` of the group's
    largest delta (the terms beyond it are below 2^-60 of the first, R/t). ``f``: length >= D+1.
    tests/test_tbg.py checks the recurrence against enumeration."""
    t = end - start
    dm = 0.0
    r = 0
    for i in range(start, end):
        dm = max(dm, code_delta(lab[i]))
        if lab[i] >= rel:
            r += 1
    if r == 0 or kg <= 0:
        return 0.0
    D = group_depth(dm, dm, min(kg, t))
    for m in range(D + 1):
        f[m] = 0.0
    f[0] = 1.0
    j = 0
    for i in range(start, end):
        if lab[i] >= rel:
            x = code_delta(lab[i])
            for m in range(min(j + 1, D), 0, -1):
                f[m] = ((j + 1.0 - m) * f[m] + m * x * f[m - 1]) / (j + 1.0)
            j += 1
    for i in range(start, end):
        if lab[i] < rel:
            x = code_delta(lab[i])
            for m in range(min(j, D), 0, -1):
                f[m] = ((j - m) * f[m] + m * x * f[m - 1]) / (j + 1.0)
            f[0] = j * f[0] / (j + 1.0)
            j += 1
    s = 0.0
    for m in range(D):
        s += f[m]
    return s


@_jit
def doc_tied(lab, gend, ng, n, k, rel, g, f):
    """Tie-aware TBG@k with per-document decay factors: sum_g W_<g g :func:`doc_group`."""
    K = _cut(k, n)
    s = 0.0
    w = 1.0
    start = 0
    for gi in range(ng):
        end = gend[gi]
        if start >= K or w == 0.0:
            break
        s += w * doc_group(lab, start, end, min(end, K) - start, rel, f)
        for i in range(start, end):
            w *= code_delta(lab[i])
        start = end
    return g * s


# ------------------------------------------------------------------ the uniform routines
# constant length: fp = (g, delta_1, delta_0), norm = 0 (module docstring); per-document lengths:
# fp[0] = g, rel = REL_BIT, norm = -1, the labels are per-document codes
@_wrap
def tbg_plain_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, pos, ideal):
    if norm < 0:
        return doc_plain(lab, n, k, rel, fp[0])
    return tbg_plain(lab, n, k, rel, fp[0], fp[1], fp[2])


@_wrap
def tbg_tied_r(lab, gend, ng, n, k, gtype, rel, fp, norm, nrel, tabs, scratch, ideal):
    if norm < 0:
        return doc_tied(lab, gend, ng, n, k, rel, fp[0], scratch)
    return tbg_tied(lab, gend, ng, n, k, rel, fp[0], fp[1], fp[2], scratch)


@_wrap
def tbg_iub_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs):
    """The relevant documents first: g sum_{j<min(R,K)} delta_1^j (the maximum; module
    docstring). Per-document lengths: the judged codes sorted descending, i.e. the relevant
    documents first, the largest delta (shortest) first (the maximum: docs/tbg.md)."""
    if norm < 0:
        return doc_plain(lab, n, k, rel, fp[0])
    d1 = fp[1]
    s = 0.0
    w = 1.0
    for _ in range(min(nrel, _cut(k, n))):
        s += w
        w *= d1
    return fp[0] * s


@_wrap
def tbg_reb_r(lab, n, k, gtype, rel, fp, norm, nrel, tabs, gsum, gend, scratch):
    """E[TBG@k] over uniformly random orders of n documents, R = ``nrel`` of them relevant:
    g (R/n) sum_{p<K} G_p (:func:`group_sum`), O(M min(M, R)); reads n, R and K only, so it also
    serves ``reb_universe="collection"`` (n = the collection's size). Per-document lengths:
    g :func:`doc_group` over the n judged codes, O(n min(K, M))."""
    if norm < 0:
        return fp[0] * doc_group(lab, 0, n, _cut(k, n), rel, scratch)
    return fp[0] * group_sum(n, nrel, _cut(k, n), fp[1], fp[2], scratch)
