"""Shared pieces of the intent-aware kernels (:mod:`uefast.diversity._ia_kernels`): family
codes, grade maps r(d,t), the value of one ranking (from the grades, or from the documents'
RBP-IA gains and binary relevance patterns precomputed per topic)."""
from __future__ import annotations

import numba as nb
import numpy as np

RBU, GERR, RBP, NDCG, RR, AP = range(6)
_jit = nb.njit(cache=True, nogil=True)


@_jit
def _scales(code, amax, m, gtop, GM, a0, j):
    """Per aspect a, the factor ``GM[a0 + a, j]`` that turns a grade into r: 1/2^gmax (cascade:
    r = (2^g - 1)/2^gmax, the same double as the division) or 1/gmax (linear: g/gmax, within
    one ulp); gmax = the aspect's largest grade ``amax`` (``gtop``: the topic's), 1 where it is
    0 (as :meth:`Topic.rel`)."""
    top = 0
    for a in range(m):
        top = max(top, amax[a])
    for a in range(m):
        gm = top if gtop else amax[a]
        if gm <= 0:
            gm = 1
        GM[a0 + a, j] = 1.0 / 2.0 ** gm if (code == RBU or code == GERR) else 1.0 / gm


@_jit
def _r(code, g, sc):
    """r(d,t) of the family's grade map (``sc`` from :func:`_scales`): cascade, linear, binary."""
    if code == RBU or code == GERR:
        if g < 53:
            return float((1 << g) - 1) * sc
        return (2.0 ** g - 1.0) * sc
    if code == RBP or code == NDCG:
        return g * sc
    return 1.0 if g >= 1 else 0.0


@_jit
def _dlog(i):
    """1/log2(i + 1), i = 1, 2, ..."""
    return 1.0 / np.log2(i + 1.0)


@_jit
def _rr_ap_total(code, m, W, NR, a0, S, C):
    """The aspect-weighted total of RR-IA (sum_t w_t / first hit rank C_t) or AP-IA
    (sum_t w_t S_t / R_t) from the per-aspect accumulators of a ranking walk (``W[a0 + t]``,
    ``NR[a0 + t]``: the topic's weights and relevant counts)."""
    tot = 0.0
    for a in range(m):
        if code == RR:
            if C[a] > 0:
                tot += W[a0 + a] / C[a]
        elif NR[a0 + a] > 0 and C[a] > 0:
            tot += W[a0 + a] * S[a] / NR[a0 + a]
    return tot


@_jit
def _value(code, k, java, p, e, rows, lo, hi, G, g0, m, W, NR, a0, GM, IDCG, j, S, C, DISC):
    """Value of the ranking rows[lo:hi]. The topic's aspects are a0.. a0 + m - 1 of the flat
    per-aspect arrays: weights ``W``, relevant counts ``NR``, the grade scales ``GM[., j]`` and
    IDCGs ``IDCG[., j]`` of measure j (the arrays are indexed, not sliced: a view passed to a
    function costs two reference-count updates). S, C: scratch of length m; ``DISC[i]`` =
    1/log2(i + 1) where i < DISC.size."""
    L = hi - lo
    tot = 0.0
    if code == RBU or code == GERR:
        if code == GERR:
            K = min(k, L)
        elif java or k < 0:
            K = L
        else:
            K = min(k, L)
        for a in range(m):
            S[a] = 1.0
        pi = 1.0 if java else p  # p^i (java: p^(i-1)) at rank i
        for i in range(K):
            d = rows[lo + i]
            gain = 0.0
            if d >= 0:
                for a in range(m):
                    r = _r(code, G[g0 + d * m + a], GM[a0 + a, j])  # branch-free: r = 0 adds 0
                    gain += W[a0 + a] * r * S[a]
                    S[a] *= 1.0 - r
            if code == GERR:
                tot += gain / (i + 1.0)
            elif java:
                tot += (1.0 - p) * pi * (gain - e)
            else:
                tot += pi * (gain - e)
            pi *= p
        return tot
    if code == RBP:
        pi = 1.0
        for i in range(L):
            d = rows[lo + i]
            if d >= 0:
                gain = 0.0
                for a in range(m):
                    gain += W[a0 + a] * _r(code, G[g0 + d * m + a], GM[a0 + a, j])
                tot += pi * gain
            pi *= p
        return (1.0 - p) * tot
    if code == NDCG:
        K = min(k, L)
        for a in range(m):
            S[a] = 0.0
        for i in range(K):
            d = rows[lo + i]
            if d >= 0:
                D = DISC[i + 1] if i + 1 < DISC.size else _dlog(i + 1.0)
                for a in range(m):
                    S[a] += _r(code, G[g0 + d * m + a], GM[a0 + a, j]) * D
        for a in range(m):
            if IDCG[a0 + a, j] > 0:
                tot += W[a0 + a] * (S[a] / IDCG[a0 + a, j])
        return tot
    # RR-IA, AP-IA (binary)
    for a in range(m):
        S[a] = 0.0
        C[a] = 0.0
    for i in range(L):
        d = rows[lo + i]
        if d >= 0:
            ii = 1.0 / (i + 1.0)
            for a in range(m):
                J = 1.0 if G[g0 + d * m + a] >= 1 else 0.0
                if code == RR:
                    C[a] += (i + 1.0) if (J > 0.0 and C[a] == 0.0) else 0.0
                else:
                    C[a] += J
                    S[a] += J * C[a] * ii
    return _rr_ap_total(code, m, W, NR, a0, S, C)


@_jit
def _value_rbp(p, rows, lo, hi, DG, r, d0):
    """RBP-IA of rows[lo:hi] from the documents' gains ``DG[r, d0 + d]`` = sum_t w_t r(d,t)
    (summed over t in order, as :func:`_value` sums them)."""
    tot = 0.0
    pi = 1.0
    for i in range(hi - lo):
        d = rows[lo + i]
        if d >= 0:
            tot += pi * DG[r, d0 + d]
        pi *= p
    return (1.0 - p) * tot


@_jit
def _value_bin(code, rows, lo, hi, PAT, d0, m, W, NR, a0, S, C, RC):
    """RR-IA or AP-IA of rows[lo:hi] from the documents' binary patterns ``PAT[d0 + d]`` (bit t =
    J(d,t), m <= 62), with the arithmetic of :func:`_value` (1/i from the table ``RC``, the
    same doubles as the division); a document of no aspect adds nothing, and RR-IA stops once
    every aspect is found."""
    for a in range(m):
        S[a] = 0.0
        C[a] = 0.0
    full = (1 << m) - 1
    found = 0
    for i in range(hi - lo):
        d = rows[lo + i]
        b = PAT[d0 + d] if d >= 0 else 0
        if b == 0:
            continue
        if code == RR:
            new = b & ~found
            if new != 0:
                for a in range(m):
                    if (new >> a) & 1:
                        C[a] = i + 1.0
                found |= new
                if found == full:
                    break
        else:
            ii = RC[i + 1]
            for a in range(m):
                J = float((b >> a) & 1)
                C[a] += J
                S[a] += J * C[a] * ii
    return _rr_ap_total(code, m, W, NR, a0, S, C)
