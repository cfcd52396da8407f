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

import math

import numba as nb
import numpy as np

__all__ = ["gain", "jk_discount", "discount_sum", "dcg_b_plain", "dcg_b_tied", "dcg_plain", "dcg_tied",
           "relcount_plain", "relcount_tied", "rbp_plain", "rbp_tied", "sp_plain", "sp_tied",
           "ap_denominator", "rr_plain", "rr_tied", "success_plain", "success_tied", "err_plain",
           "err_tied", "err_reb", "err_reb_gf", "err_depth", "theta"]

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
def theta(label, lmax, gtype):
    """ERR's stopping probability: (2^l - 1) / 2^lmax (``gtype`` >= 1, exponential grades;
    Chapelle et al., CIKM 2009) or l / (lmax + 1) (``gtype`` 0, linear grades g(l) = l, stop
    probability g(l) / (g(lmax) + 1) as NTCIREVAL's ERR and nERR; Sakai & Song, SIGIR 2011).
    Both are g(l) / (g(lmax) + 1) for their gain g."""
    if label <= 0:
        return 0.0
    if gtype == 0:
        return label / (lmax + 1.0)
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


@_jit
def err_plain(lab, n, k, lmax, gtype):
    """ERR@k = sum_{r<=K} theta(l_r)/r * prod_{j<r} (1 - theta(l_j)) (Chapelle et al. 2009),
    theta by :func:`theta`."""
    K = _cut(k, n)
    s = 0.0
    stay = 1.0
    for i in range(K):
        th = theta(lab[i], lmax, gtype)
        if th > 0.0:
            s += stay * th / (i + 1.0)
            stay *= 1.0 - th
    return s


#: ERR's tie-group DP stops at depth M once the rest of the group's terms are provably below
#: this fraction of the group's own contribution (:func:`err_depth`): below float64 resolution.
ERR_TAIL = 2.0 ** -60


@_jit
def err_depth(t, npos, theta_min, kg):
    """How many positions of a tie group the ERR DP needs: min(kg, M), M the least m with
    (1 - a)^m <= ERR_TAIL * a, a = (npos / t) * theta_min (0 when no document can stop the user).

    Why it is exact to float64 resolution: with y_j = 1 - theta_j <= 1 - theta_min [j relevant],
    E_m = E[prod of m random y] <= E[(1 - theta_min)^J], J ~ Hypergeometric(t, npos, m) <=
    (1 - a)^m (Hoeffding 1963, Thm 4: sampling without replacement is dominated in convex order
    by sampling with replacement). The terms after position M sum to at most
    S_<g E_M / (s + M + 1) <= ERR_TAIL * S_<g a / (s + 1), and the group's first term alone is
    S_<g E[theta] / (s + 1) >= S_<g a / (s + 1). So the DP costs O(t * min(kg, M)) instead of
    O(t * kg): M ~ ln(2^60 / a) / a, about 1,400 for a = 1/32, whatever the group's size."""
    if npos == 0:
        return 0
    a = npos / t * theta_min
    if a >= 1.0:
        return min(kg, 1)
    # math, not np: numba-cuda has no np.log1p / np.ceil, and the GPU kernels share this routine
    x = math.log(ERR_TAIL * a) / math.log1p(-a)
    if x <= kg - 1:  # M = ceil(x) < kg (x may be far beyond int64: compared as a float first)
        return max(np.int64(math.ceil(x)), 1)
    return kg


@_jit
def err_tied(lab, gend, ng, n, k, lmax, gtype, f):
    """Tie-aware ERR@k (SPEC_math §2, §5): sum_g S_<g sum_{m: c_{g-1}+m<=K} (E^g_{m-1}-E^g_m)/i with
    E^g_m = e_m(y over T_g)/C(t_g, m), y = 1 - theta, by SPEC's normalised DP
    f(m) <- ((j-m)/j) f(m) + (m/j) y_j f(m-1), run on its complement q(m) = 1 - f(m):
    q(m) <- ((j-m)/j) q(m) + (m/j) (theta_j + y_j q(m-1)), q(0) = 0. Both are convex combinations
    (stable in float64), but q sums non-negative terms built from theta itself, so
    E_{m-1} - E_m = q(m) - q(m-1) keeps its precision when every theta is small (fine label
    scales: theta = 2^-60 gave REB 0 with f, two numbers near 1 subtracted).
    A group with no document that can stop the user adds nothing and costs O(t); the DP of the
    others runs to depth :func:`err_depth` (terms beyond it are below 2^-60 of the group's
    contribution), so full-depth ERR and its REB cost O(t * M), not O(t^2).
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
        prod = 1.0
        npos = 0
        tmin = 1.0
        for j in range(start, end):
            th = theta(lab[j], lmax, gtype)
            if th > 0.0:
                npos += 1
                tmin = min(tmin, th)
                prod *= 1.0 - th
        if npos == 0:
            start = end
            continue
        kg = err_depth(t, npos, tmin, min(end, K) - start)
        for m in range(kg + 1):
            f[m] = 1.0  # q(m) = 1 - f(m): f(0) = 1, f(m > 0) = 0
        f[0] = 0.0
        for j in range(1, t + 1):
            th = theta(lab[start + j - 1], lmax, gtype)
            y = 1.0 - th
            inv = 1.0 / j  # one division per document, not two per (document, depth)
            for m in range(min(j, kg), 0, -1):
                w = m * inv
                f[m] = (1.0 - w) * f[m] + w * (th + y * f[m - 1])
        part = 0.0
        for m in range(1, kg + 1):
            part += (f[m] - f[m - 1]) / (start + m)
        s += stay * part
        stay *= prod
        start = end
    return s


#: 1/i for i < ERR_GF_MAX_DEPTH (index 0 unused): the reciprocals :func:`err_reb_gf` multiplies
#: by, a constant of the compiled code rather than divisions per query
ERR_GF_MAX_DEPTH = 64
_RECIP = np.array([0.0] + [1.0 / i for i in range(1, ERR_GF_MAX_DEPTH)])
#: :func:`err_reb` by generating functions only while N^kg (N = n - 1) stays below 2^900: its
#: scaled coefficients and their rescaling factors are then finite (float64 ends at 2^1024)
ERR_GF_LOG2_MAX = 900.0


@_jit
def err_reb_gf(lab, n, kg, lmax, gtype, starts, nblocks, f):
    """E[ERR@kg] over uniformly random orders of the n >= 2 judged labels ``lab`` (sorted
    descending; its ``nblocks`` runs of equal labels start at ``starts[0:nblocks]``, and
    ``starts[nblocks]`` = n), by generating functions over those blocks.

    The term at rank r is E[theta(d_r) prod_{j<r} y(d_j)], y = 1 - theta: d_r is any of the n
    documents alike and the r - 1 above it a random subset of the N = n - 1 others, so

        E_{r-1} - E_r = (1/n) sum_d theta_d e_{r-1}(y without d) / C(N, r-1),

    e_m the elementary symmetric polynomial, the coefficient of x^m in prod (1 + y_j x). With
    blocks v of c_v documents of stop probability theta_v (y_v = 1 - theta_v),

        sum_d theta_d prod_{j != d} (1 + y_j x) = A(x) B(x),
        A = prod_v (1 + y_v x)^(c_v - 1),   B = sum_v c_v theta_v prod_{u != v} (1 + y_u x):

    every coefficient a sum of non-negative terms (no cancellation whatever the size of theta;
    E_{r-1} - E_r is never taken as a difference). B is built block by block (B <- B (1 + y x) +
    c theta P, P <- P (1 + y x)); x is scaled by 1/N, so the m-th coefficients stay <= n/m!, and
    the m-th is multiplied back by N^m / C(N, m) = prod_{i<m} (i+1) N / (N - i). ERR@kg =
    sum_{r<=kg} (E_{r-1} - E_r)/r. Cost O(b kg^2) for b blocks, nothing per document.
    ``f``: scratch of length >= 2 kg + 2 min(nblocks, kg); kg < :data:`ERR_GF_MAX_DEPTH`, and the
    caller keeps N^kg below 2^:data:`ERR_GF_LOG2_MAX` (the scaled coefficients and factors
    finite)."""
    J = kg  # the coefficients 0 .. kg-1 of A B
    D = min(nblocks, J)  # B and P: degree < D
    N = n - 1.0
    w = 1.0 / N
    inv = _RECIP
    # f holds A and the next A (at offsets oa, ob: swapped, not sliced, so no reference counting
    # per block), then P at 2J and B at 2J + D
    oa = 0
    ob = J
    op = 2 * J
    obb = 2 * J + D
    for j in range(J):
        f[j] = 0.0
    for j in range(2 * D):
        f[op + j] = 0.0
    f[0] = 1.0
    f[op] = 1.0
    deg = 0  # the degree of P (B's is one less), capped at D - 1
    for v in range(nblocks):
        c = starts[v + 1] - starts[v]
        th = theta(lab[starts[v]], lmax, gtype)
        yh = (1.0 - th) * w
        # A <- A (1 + yh x)^(c-1) into the other buffer, row i of the product adding the
        # factor's coefficient C(c-1, i) yh^i times A shifted by i (the coefficient's chain of
        # multiplications runs beside the row's independent multiply-adds)
        top = min(c - 1, J - 1)
        if top > 0:
            for j in range(J):
                f[ob + j] = f[oa + j]
            fi = 1.0
            for i in range(1, top + 1):
                fi *= (c - i) * yh * inv[i]
                for j in range(i, J):
                    f[ob + j] += fi * f[oa + j - i]
            oa, ob = ob, oa
        # B <- B (1 + yh x) + c theta P, then P <- P (1 + yh x) (descending: old values read)
        wt = c * th
        deg = min(deg + 1, D - 1)
        for j in range(deg, 0, -1):
            f[obb + j] = f[obb + j] + yh * f[obb + j - 1] + wt * f[op + j]
            f[op + j] = f[op + j] + yh * f[op + j - 1]
        f[obb] += wt * f[op]
    part = 0.0
    rho = 1.0 / n  # N^j / C(N, j) / n
    for j in range(J):
        s = 0.0
        for i in range(min(j, D - 1) + 1):
            s += f[obb + i] * f[oa + j - i]
        part += s * rho * inv[j + 1]
        if j + 1 < J:
            rho *= (j + 1.0) * N / (N - j)
    return part


@_jit
def err_reb(lab, n, k, lmax, gtype, gend, f):
    """E[ERR@k] over uniformly random orders of the n judged labels ``lab`` (sorted descending):
    :func:`err_tied` with one group, but run over the blocks of equal labels (at most one per
    grade) instead of over the documents when that is cheaper: merging an urn A of a documents
    (complements q_A(i) = 1 - E^A_i, E^A_i the mean product of y = 1 - theta over i of them
    drawn at random) with a block of c documents of one y gives

        q(m) = sum_i H(i; a + c, c, m) [q_A(m - i) + (1 - q_A(m - i)) (1 - y^i)],

    H the hypergeometric probability of drawing i of the block's documents among m (a sum of
    non-negative terms, as the DP's complement form; 1 - y^i = sum_{j<i} y^j theta). A block costs
    O(M^2), M = :func:`err_depth`, instead of O(c M): with b blocks, O(b M^2) against O(n M).
    Where it applies, :func:`err_reb_gf` costs less still (O(b M^2) without the hypergeometric
    rows). ``gend`` is scratch of length >= n + 1, ``f`` of length >= n + 2."""
    if n <= 0:
        return 0.0
    K = _cut(k, n)
    # theta > 0 exactly for labels > 0, and the smallest is the last positive's; the blocks of
    # equal labels start at gend[0:nb] (branch-free: a store per label, kept at a new block)
    npos = np.int64(lab[0] > 0)
    nb = 1
    gend[0] = 0
    for j in range(1, n):
        gend[nb] = j
        nb += lab[j] != lab[j - 1]
        npos += lab[j] > 0
    gend[nb] = n
    if npos == 0:
        return 0.0
    kg = err_depth(n, npos, theta(lab[npos - 1], lmax, gtype), K)
    if (n >= 2 and kg < ERR_GF_MAX_DEPTH and 2 * (kg + min(nb, kg)) <= n + 2
            and nb * kg <= 2 * n
            and ((kg <= 16 and n <= 1 << 56) or kg * math.log2(n - 1.0) <= ERR_GF_LOG2_MAX)):
        return err_reb_gf(lab, n, kg, lmax, gtype, gend, nb, f)  # the cheapest where it applies
    # the choice depends on the query only (n, its grades, M), never on the scratch's length, so
    # that a query's REB is bit-identical whatever the chunk or row layout
    if nb * kg > n or 3 * (kg + 1) > n + 2:
        gend[0] = n  # the per-document DP is cheaper (or the scratch may be short)
        return err_tied(lab, gend, np.int64(1), n, k, lmax, gtype, f)  # int64: compiled once
    qa = f[0:kg + 1]
    qb = f[kg + 1:2 * kg + 2]
    h = f[2 * kg + 2:3 * kg + 3]
    qa[0] = 0.0
    a = 0
    i0 = 0
    while i0 < n:
        i1 = i0 + 1
        while i1 < n and lab[i1] == lab[i0]:
            i1 += 1
        c = i1 - i0
        th = theta(lab[i0], lmax, gtype)
        y = 1.0 - th
        an = a + c
        top = min(an, kg)
        h[0] = 1.0
        for m in range(top + 1):
            if m > 0:  # the row H(. ; an, c, m) from the row at m - 1
                inv = 1.0 / (an - m + 1.0)
                hi = min(m, c)
                if hi == m:
                    h[hi] = 0.0
                for i in range(hi, 0, -1):
                    h[i] = (h[i] * (a - m + 1.0 + i) + h[i - 1] * (c - i + 1.0)) * inv
                h[0] = h[0] * (a - m + 1.0) * inv
            s = 0.0
            omy = 0.0  # 1 - y^i
            yi = 1.0
            for i in range(min(m, c) + 1):
                if m - i <= a:
                    qv = qa[m - i]
                    s += h[i] * (qv + (1.0 - qv) * omy)
                omy += yi * th
                yi *= y
            qb[m] = s
        for m in range(top + 1):
            qa[m] = qb[m]
        a = an
        i0 = i1
    part = 0.0
    for m in range(1, kg + 1):
        part += (qa[m] - qa[m - 1]) / m
    return part
