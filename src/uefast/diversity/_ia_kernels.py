"""Numba kernels of the weighted intent-aware families (RBU, gERR-IA, RBP-IA, nDCG-IA, RR-IA,
AP-IA): value of every segment, IUB and exact REB of every topic, in one call over flat arrays.

The definitions are those of :mod:`uefast.diversity.families_ia` (the NumPy path, kept as the
reference the tests compare with); this module re-states them as loops over flat arrays:

* topics: judged documents ``toff`` (T+1), aspects ``aoff`` (T+1), grades ``G`` (flat, topic t's
  n_t x m_t row-major block at ``goff[t]``), weights ``W`` and relevant counts ``NR`` (per aspect,
  at ``aoff[t]``);
* segments: ``rows[soff[s]:soff[s+1]]`` (topic-local judged row, -1 unjudged) of topic
  ``seg_topic[s]``;
* measures: ``spec`` (M x 5 int64: family code, cutoff k or -1, java variant, gmax over the
  topic, and the index of an earlier cascade measure whose greedy ideal and E[S_c] it shares
  (same grade map and depth), or -1) and ``fpar`` (M x 2: p, e).

REB (SPEC_diversity §4; an IA measure is sum_t w_t M_t, so REB = sum_t w_t REB(M_t) by
linearity) is the mean over uniformly random orders of a *universe* of N documents of which the
documents ``urows`` may be relevant and the other N - |urows| are not: the topic's judged
documents (N = n), a run's own retrieved documents (``urows`` = its ranking, N = its length), or
a collection (N = collection size >= n). Per aspect:

* cascade (ERR-IA, RBU): E[r(pi_i) prod_{j<i}(1 - r(pi_j))] = E[S_{i-1}] - E[S_i],
  E[S_c] = e_c(y)/C(n, c) over the n = |urows| documents (y = 1 - r; the normalised
  elementary-symmetric recurrence of :func:`uefast.diversity.reb.cascade_survival`), and over
  N > n: E_N[S_m] = sum_c H(N, n, m, c) E_n[S_c] (c of the first m positions hold documents of
  ``urows``, hypergeometric; the others have y = 1);
* RBP-IA: (V_t/N)(1 - p^N); nDCG-IA: (V_t/N) sum_{i<=min(k,N)} D(i) / IDCG_t (V_t = sum of gains);
* RR-IA: sum_{i=1}^{N-r+1} C(N-i, r-1)/C(N, r)/i, r = relevant documents of t in the universe;
* AP-IA: (r/R_t) E_N[AP with r relevant] = (r/R_t)(r(N - H_N) + N(H_N - 1))/(N(N - 1))
  (SPEC_math AP row; R_t = the qrels' relevant count, AP's denominator).

IUB: RBP-IA and nDCG-IA by sorting on sum_t w_t gain/normaliser (exact, rearrangement); RBU and
gERR-IA by the cascade greedy, RR-IA by the weighted cover greedy, AP-IA by sum_t J w_t/R_t:
exact only with at most one aspect (``exact`` False otherwise: a lower bound on the maximum).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["RBU", "GERR", "RBP", "NDCG", "RR", "AP", "ia_batch"]

RBU, GERR, RBP, NDCG, RR, AP = range(6)
_jit = nb.njit(cache=True, nogil=True)


@_jit
def _amax(G, g0, n, m, out, H):
    """The largest grade of each aspect of a topic, and ``H[a, g]``: its documents of grade g
    (g < 64; grade 63 counts those above). Returns True where every grade is below 64."""
    for a in range(m):
        out[a] = 0
        for g in range(64):
            H[a, g] = 0
    for d in range(n):
        for a in range(m):
            g = G[g0 + d * m + a]
            out[a] = max(out[a], g)
            H[a, min(g, 63)] += 1
    small = True
    for a in range(m):
        small = small and out[a] < 64
    return small


@_jit
def _scales(code, amax, m, gtop, out):
    """Per aspect, the factor that turns a grade into r: 1/2^gmax (cascade: r = (2^g - 1)/2^gmax,
    the same double as the division) or 1/gmax (linear: g/gmax, within one ulp); gmax = the
    aspect's largest grade ``amax`` (``gtop``: the topic's), 1 where it is 0 (as
    :meth:`Topic.rel`)."""
    top = 0
    for a in range(m):
        top = max(top, amax[a])
    for a in range(m):
        gm = top if gtop else amax[a]
        if gm <= 0:
            gm = 1
        out[a] = 1.0 / 2.0 ** gm if (code == RBU or code == GERR) else 1.0 / gm


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
def _value(code, k, java, p, e, rows, lo, hi, G, g0, m, w, gm, nrel, idcg, S, C):
    """Value of the ranking rows[lo:hi] (S, C: scratch of length m)."""
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
                    r = _r(code, G[g0 + d * m + a], gm[a])  # branch-free: r = 0 adds 0
                    gain += w[a] * r * S[a]
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
                    gain += w[a] * _r(code, G[g0 + d * m + a], gm[a])
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
                D = _dlog(i + 1.0)
                for a in range(m):
                    S[a] += _r(code, G[g0 + d * m + a], gm[a]) * D
        for a in range(m):
            if idcg[a] > 0:
                tot += w[a] * (S[a] / idcg[a])
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
    for a in range(m):
        if code == RR:
            if C[a] > 0:
                tot += w[a] / C[a]
        elif nrel[a] > 0 and C[a] > 0:
            tot += w[a] * S[a] / nrel[a]
    return tot


@_jit
def _idcg(G, g0, n, m, k, gm, out, H, amax, small):
    """IDCG_t@k of every aspect (linear gain g/gmax, the top k gains of the judged documents),
    from a histogram of the grades (no sort; the topic's ``H`` where ``small``, all grades < 64;
    grades above 4096 fall back to sorting)."""
    for a in range(m):
        top = amax[a]
        s = 0.0
        i = 0
        K = min(k, n)
        if small:
            for g in range(top, 0, -1):
                for _ in range(H[a, g]):
                    if i >= K:
                        break
                    s += (g * gm[a]) * _dlog(i + 1.0)
                    i += 1
        elif top <= 4096:
            cnt = np.zeros(top + 1, np.int64)
            for d in range(n):
                cnt[G[g0 + d * m + a]] += 1
            for g in range(top, 0, -1):
                for _ in range(cnt[g]):
                    if i >= K:
                        break
                    s += (g * gm[a]) * _dlog(i + 1.0)
                    i += 1
        else:
            col = np.empty(n)
            for d in range(n):
                col[d] = -(G[g0 + d * m + a] * gm[a])
            col.sort()
            for i in range(K):
                s += -col[i] * _dlog(i + 1.0)
        out[a] = s


@_jit
def _gain(code, R, d, m, S, w):
    """The greedy's score of document d: sum_t r(d,t) S_t w_t (RR-IA: + 1e-9 x aspects of d)."""
    s = 0.0
    c = 0.0
    for a in range(m):  # RR-IA: r in {0, 1}, S = [aspect not yet covered]
        r = R[d * m + a]
        s += r * S[a] * w[a]
        c += r
    if code == RR:
        s += 1e-9 * c
    return s


@_jit
def _iub(code, k, java, p, e, G, g0, n, m, w, gm, nrel, idcg, S, C, order, have_order, FS, IS,
         amax):
    """(value of the family's ideal ranking of the judged documents, exact?). ``order`` (n):
    the greedy ideal, written here, or read when ``have_order`` (the same cascade greedy of an
    earlier measure of the batch). ``FS`` (float, >= n(m+2)) and ``IS`` (int, >= 5n + 4098):
    scratch, reused across topics; ``amax``: the aspects' largest grades."""
    if code == RBP or code == NDCG:  # the value of the key-sorted order is linear in the keys
        key = FS[:n]
        for a in range(m):
            C[a] = w[a] / idcg[a] if code == NDCG else 0.0
        for d in range(n):
            s = 0.0
            for a in range(m):
                if code == RBP:
                    s += _r(code, G[g0 + d * m + a], gm[a]) * w[a]
                else:
                    s += _r(code, G[g0 + d * m + a], gm[a]) * C[a]
            key[d] = -s
        key.sort()
        v = 0.0
        if code == RBP:
            pi = 1.0
            for i in range(n):
                v -= pi * key[i]
                pi *= p
            return (1.0 - p) * v, True
        for i in range(min(k, n)):
            v -= key[i] * _dlog(i + 1.0)
        return v, True
    if code == AP:  # by sum_t J w_t/R_t, then more aspects, then row (np.lexsort's order)
        key = FS[:n]
        cnt = FS[n:2 * n]
        for a in range(m):
            C[a] = w[a] / max(nrel[a], 1)
        for d in range(n):
            s = 0.0
            c = 0.0
            for a in range(m):
                J = 1.0 if G[g0 + d * m + a] >= 1 else 0.0
                s += J * C[a]
                c += J
            key[d] = -s
            cnt[d] = -c
        if m <= 10:  # documents of one relevance pattern share (key, cnt): a counting sort
            _ap_order(G, g0, n, m, key, cnt, order, IS)
        else:
            order[:] = np.argsort(key, kind="mergesort")  # ties: row order
            i = 0
            while i < n:  # within a run of equal keys: more aspects first, stable (insertion)
                j = i + 1
                while j < n and key[order[j]] == key[order[i]]:
                    j += 1
                for x in range(i + 1, j):
                    o = order[x]
                    y = x
                    while y > i and cnt[order[y - 1]] > cnt[o]:
                        order[y] = order[y - 1]
                        y -= 1
                    order[y] = o
                i = j
        exact = m <= 1
    elif have_order:
        exact = m <= 1
    else:  # greedy: cascade (RBU, gERR-IA) or weighted cover (RR-IA); ties to the lower row
        for a in range(m):
            S[a] = 1.0
        R = FS[:n * m]
        left = IS[:n]
        for d in range(n):
            for a in range(m):
                R[d * m + a] = _r(code, G[g0 + d * m + a], gm[a])
            left[d] = 1
        U = _classes(G, g0, n, m, amax, IS, code != RR)  # RR-IA: few steps, not worth it
        nxt = IS[2 * n:3 * n]
        cur = IS[3 * n:4 * n]
        # only the first K ranks of the ideal reach the value (cutoff measures); once every
        # remaining gain is 0 the greedy takes the rest in row order (argmax of ties)
        K = n if (code == RR or (code == RBU and (java or k < 0))) else min(k, n)
        i0 = n
        for i in range(n):
            if i >= K:
                i0 = i
                break
            if code == RR:  # RR-IA reads only the first hit of each aspect of positive weight
                done = True
                for a in range(m):
                    if S[a] > 0.0 and w[a] > 0.0:
                        done = False
                if done:
                    i0 = i
                    break
            best = -np.inf
            bd = -1
            bx = -1
            for x in range(U):  # one document per class: its lowest row not yet taken
                d = cur[x]
                if d >= 0:
                    s = _gain(code, R, d, m, S, w)
                    if s > best or (s == best and d < bd):
                        best = s
                        bd = d
                        bx = x
            if best <= 0.0 and code != RR:
                i0 = i
                break
            order[i] = bd
            left[bd] = 0
            cur[bx] = nxt[bd]
            for a in range(m):
                S[a] *= 1.0 - R[bd * m + a]
        for d in range(n):
            if left[d]:
                order[i0] = d
                i0 += 1
        exact = m <= 1
    v = _value(code, k, java, p, e, order, 0, n, G, g0, m, w, gm, nrel, idcg, S, C)
    return v, exact


@_jit
def _classes(G, g0, n, m, amax, IS, group):
    """Documents with equal grade rows are exchangeable in the greedy (equal scores, ties to the
    lower row): group them by the mixed-radix code of the grade row (when the codes number at
    most 4096 and ``group``; else every document is its own class). Writes, in ``IS``:
    ``nxt`` = IS[2n:3n]
    (the next document of the same class in row order, -1), ``cur`` = IS[3n:4n] (each class's
    first document); uses IS[n:2n] (last document of a class), IS[4n:5n] (class -> code) and
    IS[5n:5n+4096] (code -> class; entries left by earlier topics are recognised as stale).
    Returns the number of classes."""
    last = IS[n:2 * n]
    nxt = IS[2 * n:3 * n]
    cur = IS[3 * n:4 * n]
    ccode = IS[4 * n:5 * n]
    head = IS[5 * n:5 * n + 4096]
    P = 1
    for a in range(m):
        P *= amax[a] + 1
        if P > 4096:
            break
    if P > 4096 or not group:
        for d in range(n):
            cur[d] = d
            nxt[d] = -1
        return n
    U = 0
    for d in range(n):
        c = 0
        for a in range(m):
            c = c * (amax[a] + 1) + G[g0 + d * m + a]
        x = head[c]
        if x < 0 or x >= U or ccode[x] != c:
            x = U
            head[c] = x
            ccode[x] = c
            cur[x] = d
            U += 1
        else:
            nxt[last[x]] = d
        last[x] = d
        nxt[d] = -1
    return U


@_jit
def _ap_order(G, g0, n, m, key, cnt, order, IS):
    """AP-IA's ideal order by (key, cnt, row), key and cnt functions of the document's binary
    pattern (m <= 10): the patterns present sorted by (key, cnt), then a stable counting sort of
    the documents by their pattern's class."""
    P = 1 << m
    first = IS[:P]  # first document of each pattern, -1 if absent
    cls = IS[P:2 * P]
    pat = IS[2 * P:2 * P + n]
    for x in range(P):
        first[x] = -1
    up = IS[2 * P + n:3 * P + n]  # the patterns present
    u = 0
    for d in range(n):
        b = 0
        for a in range(m):
            b |= (1 << a) if G[g0 + d * m + a] >= 1 else 0
        pat[d] = b
        if first[b] < 0:
            first[b] = d
            up[u] = b
            u += 1
    for x in range(1, u):  # insertion sort of the u <= 2^m patterns by (key, cnt)
        b = up[x]
        y = x
        while y > 0 and (key[first[up[y - 1]]] > key[first[b]] or (
                key[first[up[y - 1]]] == key[first[b]] and cnt[first[up[y - 1]]] > cnt[first[b]])):
            up[y] = up[y - 1]
            y -= 1
        up[y] = b
    c = -1
    for x in range(u):  # class = rank of (key, cnt); equal pairs share a class
        b = up[x]
        if x == 0 or key[first[b]] != key[first[up[x - 1]]] or cnt[first[b]] != cnt[first[up[x - 1]]]:
            c += 1
        cls[b] = c
    tally = IS[3 * P + n:4 * P + n + 1]
    for x in range(c + 2):
        tally[x] = 0
    for d in range(n):
        tally[cls[pat[d]] + 1] += 1
    for x in range(c + 1):
        tally[x + 1] += tally[x]
    for d in range(n):
        q = cls[pat[d]]
        order[tally[q]] = d
        tally[q] += 1


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
def _er_blocks(code, hist, top, sc, nr, Kr):
    """Er[c] = E[product of y over c of the nr documents with y < 1, drawn without replacement],
    c = 0..Kr, with the documents in blocks of equal grade (``hist[g]`` of grade g, y_g =
    1 - r(g)): e_c = [z^c] prod_g sum_j C(n_g, j) y_g^j z^j, Er[c] = e_c / C(nr, c) (used while
    C(nr, Kr) < e^600, so no overflow; all terms positive)."""
    Er = np.zeros(Kr + 1)
    Er[0] = 1.0
    deg = 0
    for g in range(1, top + 1):
        ng = hist[g]
        y = 1.0 - _r(code, g, sc)
        if ng == 0 or y >= 1.0:
            continue
        nd = min(deg + ng, Kr)
        for c in range(nd, -1, -1):  # in place, from the top: Er[c - j] not yet overwritten
            s = 0.0
            t = 1.0  # C(ng, j) y^j
            for j in range(min(ng, c) + 1):
                if c - j <= deg:
                    s += t * Er[c - j]
                t *= (ng - j) / (j + 1.0) * y
            Er[c] = s
        deg = nd
    b = 1.0  # C(nr, c)
    for c in range(Kr + 1):
        Er[c] /= b
        b *= (nr - c) / (c + 1.0)
    return Er


@_jit
def _survival(code, urows, G, g0, m, a, gm, K, N, E, RC, H, useH):
    """E[S_c], c = 0..K, over random orders of a universe of N documents (``urows`` plus
    N - |urows| with r = 0) for aspect a; writes E[0..K]. The normalised elementary symmetric
    recurrence runs over the nr documents with r > 0 only (Er[c] = E[prod of c of them]); the
    first c positions then hold j of them with the hypergeometric probability h(c, j), updated
    in c: E[S_c] = sum_j h(c, j) Er[j]."""
    top = 0
    if useH:  # the topic's grade histogram (judged documents, grades < 64)
        hist = H[a]
        for g in range(64):
            top = g if hist[g] > 0 else top
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
    if top < 64 and _lbinom(nr, min(K, nr)) < 600.0:
        Kr = min(K, nr)
        Er = _er_blocks(code, hist, top, gm[a], nr, Kr)
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
        Er[0] = 1.0
        for j in range(1, nr + 1):
            y = ys[j - 1]
            ij = RC[j]
            for c in range(min(j, Kr), 0, -1):
                Er[c] = ((j - c) * ij * Er[c] if c < j else 0.0) + c * ij * y * Er[c - 1]
    h = np.zeros(Kr + 1)
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
         useH):
    """E[value] over random orders of the universe (see the module docstring). Cascade
    families: ``Ec[a, :K+1]`` holds E[S_c] of aspect a, computed here or read when ``have_E``
    (an earlier measure of the batch with the same grade map and K). ``useH``: ``urows`` are the
    topic's judged documents, whose grade histogram is ``H`` (all grades < 64)."""
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
        disc = np.empty(K + 1)
        pi = 1.0
        ds = 0.0
        for i in range(1, K + 1):
            disc[i] = _recip(RC, i) if code == GERR else ((1.0 - p) * pi if java else pi * p)
            ds += disc[i]
            pi *= p
        for a in range(m):
            E = Ec[a]
            if not have_E:
                _survival(code, urows, G, g0, m, a, gm, K, N, E, RC, H, useH)
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
            for g in range(1, 64):
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
        s = 0.0
        for i in range(1, min(k, N) + 1):
            s += _dlog(float(i))
        tot *= s
    return tot


@nb.njit(cache=True, nogil=True, parallel=True)
def ia_batch(toff, aoff, goff, G, W, NR, seg_topic, soff, rows, spec, fpar, universe, ncoll,
             RC, val, iub, exact, reb):
    """Fill ``val`` (S x M), ``iub``/``exact`` (T x M) and ``reb`` (T x M for the judged and
    collection universes, S x M for ``universe`` 1 = retrieved). ``RC``: 1/i for i = 0.. at
    least the longest topic and segment (``RC[0]`` unused)."""
    T = toff.size - 1
    S = soff.size - 1
    M = spec.shape[0]
    A = aoff[T]
    IDCG = np.zeros((max(A, 1), M))
    GM = np.ones((max(A, 1), M))
    nmax, mmax = 1, 1
    for t in range(T):
        nmax = max(nmax, toff[t + 1] - toff[t])
        mmax = max(mmax, aoff[t + 1] - aoff[t])
    Kmax = 0
    for j in range(M):
        if spec[j, 0] == RBU or spec[j, 0] == GERR:
            NN = max(nmax, ncoll) if universe == 2 else nmax
            Kmax = max(Kmax, NN if (spec[j, 2] or spec[j, 1] < 0) else min(spec[j, 1], NN))
    nch = min(T, 256)  # chunks of topics, each with its own scratch
    for ch in nb.prange(nch):
        FS = np.empty(nmax * (mmax + 2))
        IS = np.full(5 * nmax + 4 * 1024 + 2, -1, np.int64)
        ORD_ = np.empty((M, nmax), np.int64)
        EC_ = np.empty((M, mmax, Kmax + 1))
        sc = np.empty(mmax)
        cc = np.empty(mmax)
        amax = np.empty(mmax, np.int64)
        HG = np.empty((mmax, 64), np.int64)
        allrows_ = np.arange(nmax)
        for t in range(ch * T // nch, (ch + 1) * T // nch):
            n = toff[t + 1] - toff[t]
            a0 = aoff[t]
            m = aoff[t + 1] - a0
            g0 = goff[t]
            w = W[a0:a0 + m]
            nrel = NR[a0:a0 + m]
            allrows = allrows_[:n]
            HN = _harmonic(ncoll, RC) if universe == 2 else _harmonic(n, RC)
            N = ncoll if universe == 2 else n
            small = _amax(G, g0, n, m, amax, HG)
            H = HG[:m]
            for j in range(M):
                code, k, java = spec[j, 0], spec[j, 1], spec[j, 2]
                p, e = fpar[j, 0], fpar[j, 1]
                gm = GM[a0:a0 + m, j]
                _scales(code, amax, m, spec[j, 3] != 0, gm)
                idcg = IDCG[a0:a0 + m, j]
                if code == NDCG:
                    _idcg(G, g0, n, m, k, gm, idcg, H, amax, small)
                sh = spec[j, 4]
                jj = sh if sh >= 0 else j
                v, ex = _iub(code, k, java, p, e, G, g0, n, m, w, gm, nrel, idcg, sc, cc,
                             ORD_[jj, :n], sh >= 0, FS, IS, amax)
                iub[t, j] = v
                exact[t, j] = ex
                if universe != 1:
                    reb[t, j] = _reb(code, k, java, p, e, allrows, N, G, g0, m, w, gm, nrel, idcg,
                                     HN, RC, EC_[jj, :m], sh >= 0, H, small)
    for s in nb.prange(S):
        t = seg_topic[s]
        a0 = aoff[t]
        m = aoff[t + 1] - a0
        g0 = goff[t]
        w = W[a0:a0 + m]
        nrel = NR[a0:a0 + m]
        sc = np.empty(m)
        cc = np.empty(m)
        lo, hi = soff[s], soff[s + 1]
        HN = _harmonic(hi - lo, RC) if universe == 1 else 0.0
        for j in range(M):
            gm = GM[a0:a0 + m, j]
            idcg = IDCG[a0:a0 + m, j]
            code, k, java = spec[j, 0], spec[j, 1], spec[j, 2]
            p, e = fpar[j, 0], fpar[j, 1]
            val[s, j] = _value(code, k, java, p, e, rows, lo, hi, G, g0, m, w, gm, nrel, idcg, sc, cc)
            if universe == 1:
                reb[s, j] = _reb(code, k, java, p, e, rows[lo:hi], hi - lo, G, g0, m, w, gm, nrel,
                                 idcg, HN, RC, np.empty((m, hi - lo + 1)), False,
                                 np.zeros((1, 64), np.int64), False)
