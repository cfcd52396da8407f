"""Exact REB of the intent-aware kernels (:mod:`uefast.diversity._ia_kernels`, whose docstring
gives the formulas): E[value] over random orders of a universe of documents, the cascade
families' E[S_c] over grade blocks."""
from __future__ import annotations

import math

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
def _recip(RC, x):
    """1/x from the table (1/i, i < len(RC)) or by division."""
    return RC[x] if x < RC.size else 1.0 / x


@_jit
def _lbinom(n, k):
    """ln C(n, k)."""
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@_jit
def _er_blocks(code, hist, top, sc, nr, Kr, Er, T, z):
    """Er[c] = E[product of y over c of the nr documents with y < 1, drawn without replacement],
    c = 0..Kr, with the documents in blocks of equal grade (``hist[g]`` of grade g, y_g =
    1 - r(g)): e_c = [z^c] prod_g sum_j C(n_g, j) y_g^j z^j, Er[c] = e_c / C(nr, c) (used while
    C(nr, Kr) < e^600, so no overflow; all terms positive). ``T``: scratch (Kr + 1) for a
    block's C(n_g, j) y_g^j. ``z`` > 0: a block of z documents with y = 1 besides (then nr
    counts them too, and Er[c] is E[S_c] over all nr documents)."""
    for c in range(Kr + 1):
        Er[c] = 0.0
    Er[0] = 1.0
    deg = 0
    for g in range(top + 1):
        ng = z if g == 0 else hist[g]
        y = 1.0 if g == 0 else 1.0 - _r(code, g, sc)
        if ng == 0 or (y >= 1.0 and g > 0):
            continue
        t = 1.0  # C(ng, j) y^j
        for j in range(min(ng, Kr) + 1):
            T[j] = t
            t *= (ng - j) / (j + 1.0) * y
        nd = min(deg + ng, Kr)
        for c in range(nd, -1, -1):  # in place, from the top: Er[c - j] not yet overwritten
            s = 0.0
            for j in range(max(c - deg, 0), min(ng, c) + 1):
                s += T[j] * Er[c - j]
            Er[c] = s
        deg = nd
    b = 1.0  # C(nr, c)
    for c in range(Kr + 1):
        Er[c] /= b
        b *= (nr - c) / (c + 1.0)


@_jit
def _survival(code, urows, G, g0, m, a, gm, K, N, E, RC, H, useH, amax, FR):
    """E[S_c], c = 0..K, over random orders of a universe of N documents (``urows`` plus
    N - |urows| with r = 0) for aspect a; writes E[0..K]. The normalised elementary symmetric
    recurrence runs over the nr documents with r > 0 only (Er[c] = E[prod of c of them]); the
    first c positions then hold j of them with the hypergeometric probability h(c, j), updated
    in c: E[S_c] = sum_j h(c, j) Er[j]. Usually (grades < 64, C(N, K) < e^600) the grade blocks
    and one block of the N - nr documents with y = 1 give E[S_c] = e_c / C(N, c) at once. ``FR``: scratch (>= 3(K + 1)); ``amax[a]``: the
    aspect's largest grade where ``useH``."""
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
    if top < 64 and K * math.log(max(N, 1)) < 600.0:  # C(N, K) <= N^K < e^600
        # the N - nr documents with y = 1 as one more block: E[S_c] = e_c / C(N, c) directly
        _er_blocks(code, hist, top, gm[a], N, K, E, FR[:K + 1], N - nr)
        return
    Kr = min(K, nr)
    # C(nr, Kr) <= nr^Kr: the bound spares the lgammas in the usual case
    if top < 64 and (Kr * math.log(max(nr, 1)) < 600.0 or _lbinom(nr, Kr) < 600.0):
        Er = FR[:Kr + 1]
        _er_blocks(code, hist, top, gm[a], nr, Kr, Er, FR[Kr + 1:2 * Kr + 2], 0)
    else:
        ys = np.empty(urows.size)
        nr = 0
        for j in range(urows.size):  # branch-free compaction of y = 1 - r < 1
            d = urows[j]
            y = 1.0 - _r(code, G[g0 + max(d, 0) * m + a], gm[a]) if d >= 0 else 1.0
            ys[nr] = y
            nr += 1 if y < 1.0 else 0
        Kr = min(K, nr)
        Er = FR[:Kr + 1]
        Er[:] = 0.0
        Er[0] = 1.0
        for j in range(1, nr + 1):
            y = ys[j - 1]
            ij = RC[j]
            for c in range(min(j, Kr), 0, -1):
                Er[c] = ((j - c) * ij * Er[c] if c < j else 0.0) + c * ij * y * Er[c - 1]
    h = FR[Kr + 1:2 * Kr + 2]
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


@_jit
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
        disc = FR[2 * K + 2:3 * K + 3]
        pi = 1.0
        ds = 0.0
        for i in range(1, K + 1):
            disc[i] = _recip(RC, i) if code == GERR else ((1.0 - p) * pi if java else pi * p)
            ds += disc[i]
            pi *= p
        for a in range(m):
            E = Ec[a]
            if not have_E:
                _survival(code, urows, G, g0, m, a, gm, K, N, E, RC, H, useH, amax, FR)
            s = 0.0
            for i in range(1, K + 1):
                s += disc[i] * (E[i - 1] - E[i])
            tot += w[a] * s
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
            if code == RR:  # P(first hit at i) = C(N-i, r-1)/C(N, r), by its ratio in i
                s = 0.0
                q = r / N
                for i in range(1, N - r + 2):
                    s += q * _recip(RC, i)
                    q *= (N - i - r + 1.0) * _recip(RC, N - i) if N > i else 0.0
                tot += w[a] * s
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
