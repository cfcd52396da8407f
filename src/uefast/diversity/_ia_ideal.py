"""Ideal rankings of the intent-aware kernels (:mod:`uefast.diversity._ia_kernels`): IDCG per
aspect, the families' ideal (IUB) rankings and their values: key sorts (RBP-IA, nDCG-IA), AP-IA's
counting sort over relevance patterns, the cascade and cover greedies over classes of equal
grade rows."""
from __future__ import annotations

import numpy as np

from uefast.diversity._ia_common import AP, NDCG, RBP, RBU, RR, _dlog, _jit, _r, _value


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
