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
ERR's routines (plain, tie-aware, REB) are in :mod:`uefast.kernels.err`.

Conventions (SPEC_math §0): ``k <= 0`` means no cutoff; K = min(k, n); P@k divides by k even when
n < k; binary relevance is ``label >= rel``; negative labels count as 0. The routines allocate
nothing (scratch space is passed in), so the same code can serve a GPU backend.

``tabs`` holds four precomputed rows (see :func:`uefast.engine.tables`): ``tabs[0, i]`` = d(i+1) =
1/log2(i+2), ``tabs[1, i]`` = sum_{j<i} d(j+1) (discount prefix sums), so a tie group's DCG
contribution costs O(1) instead of O(group size), ``tabs[2, i]`` = H_i (the harmonic numbers, for
the closed forms) and ``tabs[3, i]`` = 1/i (no division in the SP/AP loop).
"""
from __future__ import annotations

import math

import numba as nb

__all__ = ["gain", "jk_discount", "discount_sum", "dcg_b_plain", "dcg_b_tied", "dcg_plain", "dcg_tied",
           "relcount_plain", "relcount_tied", "rbp_plain", "rbp_tied", "sp_plain", "sp_tied",
           "ap_denominator", "rr_plain", "rr_tied", "success_plain", "success_tied"]

NORM_REL, NORM_K, NORM_MIN = 0, 1, 2

_jit = nb.njit(cache=True, nogil=True)
# the DCG loops shared by MSnDCG and J&K's DCG_b, inlined at Numba IR level into each caller so
# that the caller's constant discount base folds the branch on it
_inl = nb.njit(cache=True, nogil=True, inline="always")


@_jit
def gain(label, gtype):
    """g(l) = l (``gtype`` 0, linear, trec_eval) or the exponential gain 2^l - 1 scaled by 2^-s
    (``gtype`` = 1 + s): (2^l - 1) / 2^s = 2^(l-s) - 2^-s, 0 for l <= 0. ``s`` > 0 keeps the sums of
    gains of labels near 1023 finite (2^1023 * 3 overflows float64); a ratio of two such sums
    (nDCG, Q) is the same ratio for every s, so normalised measures are exact at any scale."""
    if label <= 0:
        return 0.0
    if gtype == 0:
        return float(label)
    if gtype == 1:
        return 2.0 ** label - 1.0
    s = gtype - 1
    return 2.0 ** (label - s) - 2.0 ** (-s)


@_jit
def _cut(k, n):
    """K = min(k, n), with k <= 0 meaning no cutoff."""
    if k <= 0 or k > n:
        return n
    return k


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
def jk_discount(r, base):
    """Järvelin & Kekäläinen's discount of rank r with logarithm base b (TOIS 20(4) 2002;
    NTCIREVAL's ``_orig_dcglog``): d_b(r) = 1 for r = 1 or r < b, else
    1 / log_b(r) = ln b / ln r."""
    if r == 1 or r < base:
        return 1.0
    return math.log(base) / math.log(r)


@_inl
def _discount(tabs, base, i):
    """d(i+1), the discount of position i: MSnDCG's 1/log2(i+2) read from ``tabs`` (``base`` 0)
    or :func:`jk_discount` (``base`` b > 1). MSnDCG's callers pass a literal 0.0, a constant
    once this is inlined into them (the core benchmark shows no cost: RESULTS_core.md)."""
    if base == 0.0:
        return tabs[0, i]
    return jk_discount(i + 1.0, base)


@_inl
def discount_sum(tabs, base, lo, hi):
    """sum_{i=lo}^{hi-1} d(i+1) (``base`` as in :func:`_discount`): a difference of the
    prefix sums ``tabs[1]`` (O(1)) for base 0, the discounts added up in rank order for b > 1."""
    if base == 0.0:
        return tabs[1, hi] - tabs[1, lo]
    s = 0.0
    for i in range(lo, hi):
        s += jk_discount(i + 1.0, base)
    return s


@_inl
def dcg_b_plain(lab, n, k, gtype, tabs, base):
    """DCG@k = sum_{i<=K} g(l_i) d(i), d the discount of :func:`_discount`: MSnDCG (base 0) and
    J&K's DCG_b (base b) share this loop."""
    K = _cut(k, n)
    s = 0.0
    for i in range(K):
        if lab[i] > 0:
            s += gain(lab[i], gtype) * _discount(tabs, base, i)
    return s


@_inl
def dcg_b_tied(lab, gend, ng, n, k, gtype, tabs, base):
    """Tie-aware DCG@k = sum_g mean_gain(T_g) * sum_{i in group g, i<=K} d(i) (McSherry & Najork
    2008; SPEC_math §5), d as in :func:`_discount`, the group's discounts by
    :func:`discount_sum`: MSnDCG (base 0) and J&K's DCG_b (base b) share this loop."""
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
            ds = discount_sum(tabs, base, start, min(end, K))
            s += gs / (end - start) * ds
        start = end
    return s


@_jit
def dcg_plain(lab, n, k, gtype, tabs):
    """DCG@k = sum_{i<=K} g(l_i) / log2(i+1) (:func:`dcg_b_plain` with the log2 tables)."""
    return dcg_b_plain(lab, n, k, gtype, tabs, 0.0)


@_jit
def dcg_tied(lab, gend, ng, n, k, gtype, tabs):
    """Tie-aware DCG@k = sum_g mean_gain(T_g) * sum_{i in group g, i<=K} d(i), d(i) = 1/log2(i+1)
    (:func:`dcg_b_tied` with the log2 tables: a group's discounts cost O(1))."""
    return dcg_b_tied(lab, gend, ng, n, k, gtype, tabs, 0.0)


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
