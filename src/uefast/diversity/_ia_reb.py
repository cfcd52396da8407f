"""Exact REB of the intent-aware kernels (:mod:`uefast.diversity._ia_kernels`, whose docstring
gives the formulas): E[value] over random orders of a universe of documents.

* cascade families (gERR-IA, RBU): E[S_c] = e_c / C(N, c) over grade blocks, e_c by the linear
  recurrence of P'D = PQ where it is known exact (:func:`_survival_hist`), else by truncated
  products per block (:func:`_esym_blocks`) or document by document (:func:`_survival`);
* RR-IA: E[1/rank of the first of r relevant among N] = sum_{i<=N-r+1} C(N-i, r-1)/C(N, r)/i
  = r (H_N - H_{r-1}) / (N - r + 1) (the sum telescopes: tests/test_diversity_ia_kernel.py
  checks it against enumeration), H_N - H_{r-1} by :func:`_hdiff`;
* AP-IA, RBP-IA, nDCG-IA: closed forms in the relevant count / gain sum per aspect."""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.diversity._ia_common import GERR, NDCG, RBP, RBU, RR, _dlog, _jit, _r



@_jit
def _harmonic(N, RC):
    """H_N = sum_{i<=N} 1/i (the asymptotic series beyond 10^6 terms: error < 1e-25)."""
    if N < 1_000_000:
        s = 0.0
        for i in range(1, N + 1):
            s += RC[i] if i < RC.size else 1.0 / i
        return s
    x = float(N)
    return math.log(x) + 0.5772156649015329 + 1.0 / (2 * x) - 1.0 / (12 * x * x) + 1.0 / (120 * x ** 4)


@_jit
def _bitlen(N):
    """Bits of N >= 0 (ln N < 0.6932 bits)."""
    b = 0
    while N > 0:
        N >>= 1
        b += 1
    return b


@_jit
def _recip(RC, x):
    """1/x from the table (1/i, i < len(RC)) or by division."""
    return RC[x] if x < RC.size else 1.0 / x


@_jit
def _lbinom(n, k):
    """ln C(n, k)."""
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@_jit
def _hdiff(N, r, RC, HN):
    """H_N - H_{r-1} = sum_{i=r}^{N} 1/i, 1 <= r <= N: a direct sum when it has at most 16 terms;
    else HN - H_{r-1} (``HN`` = H_N) when r - 1 < 16 (H_{r-1} summed) or r - 1 < N - r + 1
    (H_{r-1} = ln(r-1) + gamma + f(r-1)); the difference is then > 0.66: no cancellation);
    else log1p((N-r+1)/(r-1)) + f(N) - f(r-1) (the log1p keeps the relative accuracy when r is
    close to N). f(x) = H_x - ln x - gamma = 1/(2x) - sum_k B_2k/(2k x^2k) (Euler-Maclaurin,
    truncated after x^-10: error < 1e-16 for x >= 16)."""
    lo = r - 1
    hi = N - lo
    if hi <= 16:
        s = 0.0
        for i in range(r, N + 1):
            s += _recip(RC, i)
        return s
    if lo < 16:
        s = 0.0
        for i in range(1, lo + 1):
            s += RC[i] if i < RC.size else 1.0 / i
        return HN - s
    if lo < hi:  # the difference is >= H_{2 lo + 1} - H_lo > ln 2 - 1/(2 lo): H_lo by its series
        return HN - (math.log(lo) + 0.5772156649015329 + _psi_tail(_recip(RC, lo)))
    return math.log1p(hi / lo) + _psi_tail(_recip(RC, N)) - _psi_tail(_recip(RC, lo))


@_jit
def _psi_tail(x):
    """H_n - ln n - gamma for x = 1/n: x/2 - x^2/12 + x^4/120 - x^6/252 + x^8/240 - x^10/132."""
    x2 = x * x
    return x * 0.5 - x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 * (1.0 / 252 - x2 * (1.0 / 240 - x2 / 132))))


@_jit
def _binom_terms(ng, y, J, RC, T):
    """T[j] = C(ng, j) y^j, j = 0..J (the ratio C(ng, j)/C(ng, j-1) = (ng - j + 1)/j by the
    reciprocal table: no division on the product chain)."""
    t = 1.0
    T[0] = 1.0
    for j in range(1, J + 1):
        t *= (ng - j + 1) * _recip(RC, j) * y
        T[j] = t


@_jit
def _esym_blocks(code, hist, top, sc, z, Kr, out, T, tmp, RC):
    """out[c] = e_c = [x^c] (1 + x)^z prod_g (1 + y_g x)^hist[g], c = 0..Kr: the elementary
    symmetric sums of the y = 1 - r(g) of documents in blocks of equal grade (``hist[g]`` of grade
    g >= 1, the blocks with y_g = 1 joined to the ``z`` documents of y = 1). All terms are
    positive. The first block's terms are e_c at once; each further block is a truncated product
    (the sum over j ascending for each c, as the in-place recurrence). ``T``, ``tmp``: scratch of
    Kr + 1."""
    deg = -1  # degree so far (-1: no block yet)
    for g in range(top + 1):
        ng = z if g == 0 else hist[g]
        if ng == 0:
            continue
        y = 1.0
        if g > 0:
            y = 1.0 - _r(code, g, sc)
            if y >= 1.0:
                continue
        J = min(ng, Kr)
        if deg < 0:
            _binom_terms(ng, y, J, RC, out)
            deg = J
            continue
        _binom_terms(ng, y, J, RC, T)
        nd = min(deg + J, Kr)
        for c in range(nd + 1):
            tmp[c] = 0.0
        for j in range(J + 1):
            tj = T[j]
            for i in range(min(deg, nd - j) + 1):
                tmp[i + j] += tj * out[i]
        for c in range(nd + 1):
            out[c] = tmp[c]
        deg = nd
    if deg < 0:
        out[0] = 1.0
        deg = 0
    for c in range(deg + 1, Kr + 1):
        out[c] = 0.0


@_jit
def _inv_binoms(N, K, RC, ib):
    """ib[c] = 1/C(N, c), c = 0..K <= N (by the ratio (c + 1)/(N - c))."""
    b = 1.0
    ib[0] = 1.0
    for c in range(K):
        b *= (c + 1.0) * _recip(RC, N - c)
        ib[c + 1] = b


@_jit
def _rec_ok(q, d, c, K):
    """A = q - c d >= 0 and K q <= 2000 A (see :func:`_survival_hist`)."""
    A = q - c * d
    return A >= 0.0 and K * q <= 2000.0 * A


@_jit
def _survival_hist(code, H, amax, gm, m, N, K, RC, FR, Ec):
    """``Ec[a, c]`` = E[S_c] = e_c / C(N, c), c = 0..K, of every aspect over random orders of N
    documents whose grade histograms are ``H`` (grades < 64; the N - sum of the histogram others
    have r = 0), where C(N, K) < e^600 and ``FR[:K+1]`` = 1/C(N, c).

    e_c = [x^c] P(x), P = prod_b (1 + y_b x)^n_b over the B blocks b of equal y = 1 - r < 1
    (grades g, ``H[a, g]`` documents) and the block of the z documents with y = 1. With
    D = prod_b (1 + y_b x) = sum_k d_k x^k and Q = sum_b n_b y_b D/(1 + y_b x) = sum_k q_k x^k,
    P' D = P Q gives the recurrence (c + 1) e_{c+1} = sum_{i<B} A_i(c) e_{c-i},
    A_i(c) = q_i - (c - i) d_{i+1} (q_i: the sum over the (i+1)-sets S of blocks of y_S n_S):
    O(B) per coefficient, in registers, instead of one truncated product per block. d and q
    (``d1..d4`` = d_1..d_4, ``q1..q4`` = q_0..q_3) build up block by block (D *= 1 + y x,
    Q = Q (1 + y x) + n y D: positive terms). Used where B <= 4 and the recurrence is known exact
    to ~1e-13: every A_i(c) >= 0 (checked at c = K - 1, where it is smallest: all terms positive)
    and K max_i q_i/A_i(K - 1) <= 2000 (the cancellation in A_i: each step adds a relative error
    below ~(3 q_i/A_i + 2) eps). Else (few documents per block, or more than 4 blocks) the
    truncated products of :func:`_esym_blocks`."""
    k1 = K - 1.0
    for a in range(m):
        top = amax[a]
        sc = gm[a]
        nr = 0
        B = 0
        d1 = d2 = d3 = d4 = 0.0
        q1 = q2 = q3 = q4 = 0.0
        for g in range(1, top + 1):  # the grade blocks, then the z documents (y = 1)
            ng = H[a, g]
            y = 1.0 - _r(code, g, sc)
            if ng == 0 or y >= 1.0:
                continue
            nr += ng
            B += 1
            ny = ng * y
            q4 = q4 + y * q3 + ny * d3
            q3 = q3 + y * q2 + ny * d2
            q2 = q2 + y * q1 + ny * d1
            q1 = q1 + ny
            d4 = d4 + y * d3
            d3 = d3 + y * d2
            d2 = d2 + y * d1
            d1 = d1 + y
        z = N - nr
        if z > 0:
            B += 1
            ny = float(z)
            q4 = q4 + q3 + ny * d3
            q3 = q3 + q2 + ny * d2
            q2 = q2 + q1 + ny * d1
            q1 = q1 + ny
            d4 = d4 + d3
            d3 = d3 + d2
            d2 = d2 + d1
            d1 = d1 + 1.0
        ok = B <= 4 and _rec_ok(q1, d1, k1, K) and (B < 2 or _rec_ok(q2, d2, k1 - 1.0, K)) and \
            (B < 3 or _rec_ok(q3, d3, k1 - 2.0, K)) and (B < 4 or _rec_ok(q4, d4, k1 - 3.0, K))
        if not ok:
            E = Ec[a]
            _esym_blocks(code, H[a], top, sc, z, K, E, FR[K + 1:2 * K + 2], FR[2 * K + 2:3 * K + 3], RC)
            for c in range(K + 1):
                E[c] *= FR[c]
            continue
        e0 = 1.0  # e_c, e_{c-1}, e_{c-2}, e_{c-3} (0 before c = 0)
        e1 = e2 = e3 = 0.0
        Ec[a, 0] = 1.0
        for c in range(K):
            cf = float(c)
            s = (q4 - (cf - 3.0) * d4) * e3 + (q3 - (cf - 2.0) * d3) * e2
            s = s + (q2 - (cf - 1.0) * d2) * e1
            s = s + (q1 - cf * d1) * e0
            en = s * _recip(RC, c + 1)
            Ec[a, c + 1] = en * FR[c + 1]
            e3 = e2
            e2 = e1
            e1 = e0
            e0 = en


@_jit
def _survival(code, urows, G, g0, m, a, gm, K, N, E, RC, H, useH, amax, FR, direct):
    """E[S_c], c = 0..K, over random orders of a universe of N documents (``urows`` plus
    N - |urows| with r = 0) for aspect a; writes E[0..K]. Usually (``direct``: C(N, K) <= N^K <
    e^600, and grades < 64) the grade blocks and one block of the N - nr documents with y = 1
    give E[S_c] = e_c / C(N, c) at once (``FR[:K+1]`` = 1/C(N, c) from :func:`_inv_binoms`,
    ``FR``: scratch >= 3(K + 1)). Otherwise the normalised elementary symmetric recurrence runs
    over the nr documents with r > 0 only (Er[c] = E[prod of c of them]: by grade blocks,
    normalised by 1/C(nr, c), while C(nr, Kr) < e^600; else document by document); the first c
    positions then hold j of them with the hypergeometric probability h(c, j), updated in c:
    E[S_c] = sum_j h(c, j) Er[j]. ``amax[a]``: the aspect's largest grade where ``useH``."""
    top = 0
    if useH:  # the topic's grade histogram (judged documents, grades < 64)
        hist = H[a]
        top = amax[a]
    else:
        hist = np.zeros(64, np.int64)  # documents of each grade (grades < 64)
        for j in range(urows.size):
            d = urows[j]
            if d >= 0:
                g = G[g0 + d * m + a]
                top = max(top, g)
                hist[min(g, 63)] += 1
    nr = 0
    for g in range(1, min(top, 63) + 1):
        nr += hist[g] if 1.0 - _r(code, g, gm[a]) < 1.0 else 0
    if top < 64 and direct:
        # the N - nr documents with y = 1 as one more block: E[S_c] = e_c / C(N, c) directly
        _esym_blocks(code, hist, top, gm[a], N - nr, K, E, FR[K + 1:2 * K + 2],
                     FR[2 * K + 2:3 * K + 3], RC)
        ib = FR[:K + 1]
        for c in range(K + 1):
            E[c] *= ib[c]
        return
    Kr = min(K, nr)
    Er = np.empty(Kr + 1)
    T = np.empty(Kr + 1)
    # C(nr, Kr) <= nr^Kr: the bound spares the lgammas in the usual case
    if top < 64 and (Kr * math.log(max(nr, 1)) < 600.0 or _lbinom(nr, Kr) < 600.0):
        _esym_blocks(code, hist, top, gm[a], 0, Kr, Er, T, np.empty(Kr + 1), RC)
        _inv_binoms(nr, Kr, RC, T)
        for c in range(Kr + 1):
            Er[c] *= T[c]
    else:
        ys = np.empty(urows.size)
        nr = 0
        for j in range(urows.size):  # branch-free compaction of y = 1 - r < 1
            d = urows[j]
            y = 1.0 - _r(code, G[g0 + max(d, 0) * m + a], gm[a]) if d >= 0 else 1.0
            ys[nr] = y
            nr += 1 if y < 1.0 else 0
        Kr = min(K, nr)
        Er = np.zeros(Kr + 1)
        T = np.empty(Kr + 1)
        Er[0] = 1.0
        for j in range(1, nr + 1):
            y = ys[j - 1]
            ij = RC[j]
            for c in range(min(j, Kr), 0, -1):
                Er[c] = ((j - c) * ij * Er[c] if c < j else 0.0) + c * ij * y * Er[c - 1]
    h = T
    h[:] = 0.0
    h[0] = 1.0
    E[0] = 1.0
    z = float(N - nr)  # documents with r = 0
    for c in range(K):  # position c+1 takes one of the N - c documents left
        inv = _recip(RC, N - c)
        for jr in range(min(c + 1, Kr), -1, -1):
            v = h[jr] * max(z - (c - jr), 0.0) * inv if jr <= c else 0.0
            if jr > 0:
                v += h[jr - 1] * (nr - (jr - 1)) * inv
            h[jr] = v
        s = 0.0
        for jr in range(min(c + 1, Kr) + 1):
            s += h[jr] * Er[jr]
        E[c + 1] = s


# inlined into its two call sites: a call costs two reference-count updates per array argument
@nb.njit(cache=True, nogil=True, inline="always")
def _reb(code, k, java, p, e, urows, N, G, g0, m, w, gm, nrel, idcg, HN, RC, Ec, have_E, H,
         useH, amax, FR, CDL):
    """E[value] over random orders of the universe (see the module docstring). Cascade
    families: ``Ec[a, :K+1]`` holds E[S_c] of aspect a, computed here or read when ``have_E``
    (an earlier measure of the batch with the same grade map and K). ``useH``: ``urows`` are the
    topic's judged documents, whose grade histogram is ``H`` (all grades < 64; ``amax``: the
    aspects' largest grades). ``FR``: scratch (>= 3(K + 2)); ``CDL[i]`` = sum_{j<=i} 1/log2(j + 1)
    (nDCG-IA; summed here beyond its end)."""
    n = urows.size
    if N <= 0:
        return 0.0
    tot = 0.0
    if code == RBU or code == GERR:
        if code == GERR:
            K = min(k, N)
        elif java or k < 0:
            K = N
        else:
            K = min(k, N)
        # C(N, K) <= N^K < e^600 (the bit length bounds log2 N: no logarithm in the usual case)
        direct = K * _bitlen(N) < 865 or K * math.log(max(N, 1)) < 600.0
        if not have_E:
            if direct:
                _inv_binoms(N, K, RC, FR[:K + 1])
            if direct and useH:
                _survival_hist(code, H, amax, gm, m, N, K, RC, FR, Ec)
            else:
                for a in range(m):
                    _survival(code, urows, G, g0, m, a, gm, K, N, Ec[a], RC, H, useH, amax, FR,
                              direct)
        ds = 0.0
        pi = 1.0
        for i in range(1, K + 1):  # discount at rank i: 1/i (gERR-IA), p^i or (1-p)p^(i-1)
            if code == GERR:
                d = _recip(RC, i)
            else:
                d = (1.0 - p) * pi if java else pi * p
                pi *= p
                ds += d
            s = 0.0
            for a in range(m):  # sum_a w_a (E[S_{i-1}] - E[S_i]): the aspects' chains side by side
                s += w[a] * (Ec[a, i - 1] - Ec[a, i])
            tot += d * s
        if code == RBU:
            tot -= e * ds
        return tot
    for a in range(m):
        V = 0.0
        r = 0
        if useH:  # by grade blocks
            for g in range(1, amax[a] + 1):
                c = H[a, g]
                if c > 0:
                    V += c * _r(code, g, gm[a])
                    r += c
        else:
            for j in range(n):
                d = urows[j]
                if d >= 0:
                    g = G[g0 + d * m + a]
                    V += _r(code, g, gm[a])
                    r += 1 if g >= 1 else 0
        if code == RBP:
            tot += w[a] * (V / N)
        elif code == NDCG:
            if idcg[a] > 0:
                tot += w[a] * ((V / N) / idcg[a])
        elif r > 0:
            if code == RR:  # E[1/first hit] = r (H_N - H_{r-1}) / (N - r + 1)
                if r <= N:
                    tot += w[a] * (r * _hdiff(N, r, RC, HN) / (N - r + 1.0))
            elif N == 1:
                tot += w[a] * r / nrel[a]
            else:
                ap = (r * (N - HN) + N * (HN - 1.0)) / (N * (N - 1.0))
                tot += w[a] * (r / nrel[a]) * ap
    if code == RBP:
        tot *= 1.0 - p ** N
    elif code == NDCG:
        K = min(k, N)
        if K < CDL.size:
            s = CDL[K]
        else:
            s = 0.0
            for i in range(1, K + 1):
                s += _dlog(float(i))
        tot *= s
    return tot
