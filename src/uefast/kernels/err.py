"""Expected reciprocal rank (ERR) kernels (Numba): the plain value, the tie-aware value and the
REB (the expectation over random orders), one routine each.

ERR (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009) is the expected reciprocal rank at which a
cascade user stops: with stop probability theta(l) of a document of label l (:func:`theta`),

    ERR@k = sum_{r<=K} theta(l_r)/r * prod_{j<r} (1 - theta(l_j)),   K = min(k, n),

theta(l) = (2^l - 1)/2^lmax (exponential grades, the paper) or l/(lmax + 1) (linear grades,
NTCIREVAL's ERR and nERR; Sakai & Song, SIGIR 2011). :func:`err_plain` computes it for one order.

Tie-aware ERR (McSherry & Najork, ECIR 2008; SPEC_math §2, §5) is the mean over every order
consistent with the tie groups: with S_<g the probability of passing the groups before g and
E^g_m = e_m(y over T_g)/C(t_g, m) (e_m the elementary symmetric polynomial, y = 1 - theta), the
mean product of y over m documents of group g drawn at random,

    ERR_tied@k = sum_g S_<g sum_{m: c_{g-1}+m<=K} (E^g_{m-1} - E^g_m)/(c_{g-1} + m),

by SPEC's normalised DP (:func:`err_tied`, run on its complement so that small theta keep their
precision), to the depth :func:`err_depth` beyond which the terms are below 2^-60 of a group's
contribution.

REB (SPEC_math §0) is ERR_tied with all n judged documents as one group (:func:`err_reb`). It is
computed over the blocks of equal grades rather than over the documents where that is cheaper:
by a hypergeometric merge of blocks, or, where the scaled coefficients stay finite, by generating
functions over the grade blocks (:func:`err_reb_gf`):

    E_{r-1} - E_r = (1/n) [x^{r-1}] A(x) B(x) / C(n-1, r-1),
    A = prod_v (1 + y_v x)^(c_v - 1),   B = sum_v c_v theta_v prod_{u != v} (1 + y_u x),

block v holding c_v documents of stop probability theta_v, so the cost is O(b M^2) for b grade
blocks and depth M, nothing per document. Every route sums non-negative terms; the tests check
them against exact rationals over every order and against each other.

Conventions as :mod:`uefast.kernels.metrics` (``k <= 0``: no cutoff; negative labels count as 0;
no allocation: scratch is passed in, so the GPU backend can share the code).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.kernels.metrics import _cut

__all__ = ["theta", "err_plain", "err_depth", "err_tied", "err_reb_gf", "err_reb", "ERR_TAIL",
           "ERR_GF_MAX_DEPTH", "ERR_GF_LOG2_MAX"]

_jit = nb.njit(cache=True, nogil=True)


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
