"""Ideal rankings of the intent-aware kernels (:mod:`uefast.diversity._ia_kernels`): IDCG per
aspect and the families' ideal (IUB) rankings and their values, on the topic's classes of equal
grade rows (:mod:`uefast.diversity._ia_classes`): the key orders of RBP-IA and nDCG-IA (an
insertion of the classes' distinct keys, nDCG-IA keeping the top k), AP-IA's counting sort over
relevance patterns, the cascade and cover greedies over classes."""
from __future__ import annotations

import numpy as np

from uefast.diversity._ia_common import AP, NDCG, RBP, RBU, RR, _jit, _r, _value


@_jit
def _idcg(G, g0, n, m, k, gm, out, H, amax, small, DISC):
    """IDCG_t@k of every aspect (linear gain g/gmax, the top k gains of the judged documents),
    from a histogram of the grades (no sort; the topic's ``H`` where ``small``, all grades < 64;
    grades above 4096 fall back to sorting). ``DISC[i]`` = 1/log2(i + 1)."""
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
                    s += (g * gm[a]) * DISC[i + 1]
                    i += 1
        elif top <= 4096:
            cnt = np.zeros(top + 1, np.int64)
            for d in range(n):
                cnt[G[g0 + d * m + a]] += 1
            for g in range(top, 0, -1):
                for _ in range(cnt[g]):
                    if i >= K:
                        break
                    s += (g * gm[a]) * DISC[i + 1]
                    i += 1
        else:
            col = np.empty(n)
            for d in range(n):
                col[d] = -(G[g0 + d * m + a] * gm[a])
            col.sort()
            for i in range(K):
                s += -col[i] * DISC[i + 1]
        out[a] = s


@_jit
def _iub_keyed(code, k, p, G, g0, n, m, w, gm, idcg, C, U, first, cnt, bk, bc, ckey, DISC):
    """RBP-IA's or nDCG-IA's ideal value: the documents by decreasing key sum_t r(d,t) c_t (c_t =
    w_t, or w_t/IDCG_t), exact by the rearrangement inequality. The value depends on the sorted
    keys only, so the classes' distinct positive keys are inserted, with their document counts,
    into ``bk``/``bc`` (descending; nDCG-IA keeps the top min(k, n)), then summed rank by rank.
    ``ckey[x]``: class x's key (RBP-IA: its documents' gain in the value)."""
    for a in range(m):
        C[a] = w[a] / idcg[a] if code == NDCG else w[a]
    cap = U if code == RBP else min(k, n)
    D = 0
    for x in range(U):
        d = first[x]
        s = 0.0
        for a in range(m):
            s += _r(code, G[g0 + d * m + a], gm[a]) * C[a]
        ckey[x] = s
        if s == 0.0:  # adds 0 at any rank
            continue
        y = D
        while y > 0 and bk[y - 1] < s:
            y -= 1
        if y > 0 and bk[y - 1] == s:
            bc[y - 1] += cnt[x]
            continue
        if y >= cap:
            continue
        z = min(D, cap - 1)
        while z > y:
            bk[z] = bk[z - 1]
            bc[z] = bc[z - 1]
            z -= 1
        bk[y] = s
        bc[y] = cnt[x]
        D = min(D + 1, cap)
    v = 0.0
    if code == RBP:
        pi = 1.0
        for y in range(D):
            s = bk[y]
            for _ in range(bc[y]):
                v += pi * s
                pi *= p
        return (1.0 - p) * v
    i = 0
    K = min(k, n)
    for y in range(D):
        for _ in range(bc[y]):
            if i >= K:
                break
            v += bk[y] * DISC[i + 1]
            i += 1
    return v


@_jit
def _ap_iub(G, g0, n, m, w, gm, nrel, idcg, S, C, order, FS, IS, U, cnt, cls, CP, HT):
    """AP-IA's ideal ranking (by sum_t J w_t/R_t, then more aspects, then row: np.lexsort's
    order) and its value. m <= 10: the key is a function of the binary pattern, so the <= 2^m
    patterns present are sorted (insertion) into classes of equal (key, aspects), each a block
    of consecutive ranks. A block of one pattern b adds, for each aspect t of b, with C_t
    relevant documents before its first rank i0 and c documents, sum_{j<=c} (C_t + j)/(i0 + j)
    = c + (C_t - i0)(H_{i0+c} - H_{i0}) (``HT``: harmonic numbers); a block of several
    patterns (tied keys) holds its documents in row order and is summed rank by rank. m > 10:
    a merge sort of the documents' keys."""
    for a in range(m):
        C[a] = w[a] / max(nrel[a], 1)
    if m <= 10:
        P = 1 << m
        pk = FS[:P]
        pc = FS[P:2 * P]
        seen = IS[:P]
        up = IS[P:2 * P]
        pcls = IS[2 * P:3 * P]
        pcount = IS[3 * P:4 * P]
        npat = IS[4 * P:5 * P]
        cntq = IS[5 * P:6 * P]
        start = IS[6 * P:7 * P + 1]
        qpat = IS[7 * P + 1:8 * P + 1]
        seq = IS[8 * P + 1:8 * P + 1 + n]
        for b in range(P):
            seen[b] = 0
        u = 0
        for x in range(U):
            b = CP[x]
            if seen[b] == 0:
                s = 0.0
                c = 0.0
                for a in range(m):
                    J = 1.0 if (b >> a) & 1 else 0.0
                    s += J * C[a]
                    c += J
                pk[b] = -s
                pc[b] = -c
                seen[b] = 1
                pcount[b] = 0
                up[u] = b
                u += 1
            pcount[b] += cnt[x]
        for x in range(1, u):  # insertion sort of the patterns by (key, cnt)
            b = up[x]
            y = x
            while y > 0 and (pk[up[y - 1]] > pk[b] or (pk[up[y - 1]] == pk[b] and pc[up[y - 1]] > pc[b])):
                up[y] = up[y - 1]
                y -= 1
            up[y] = b
        q = -1
        for x in range(u):  # class = rank of (key, cnt); equal pairs share a class
            b = up[x]
            if x == 0 or pk[b] != pk[up[x - 1]] or pc[b] != pc[up[x - 1]]:
                q += 1
                npat[q] = 0
                cntq[q] = 0
            pcls[b] = q
            npat[q] += 1
            cntq[q] += pcount[b]
            qpat[q] = b
        nq = q + 1
        multi = False
        start[0] = 0
        for q in range(nq):
            start[q + 1] = start[q] + cntq[q]
            multi = multi or npat[q] > 1
        if multi:  # the documents of the tied blocks, in row order
            pos = up  # reused: class -> next rank
            for q in range(nq):
                pos[q] = start[q]
            for d in range(n):
                b = CP[cls[d]]
                q = pcls[b]
                if npat[q] > 1:
                    seq[pos[q]] = b
                    pos[q] += 1
        for a in range(m):
            S[a] = 0.0
            C[a] = 0.0
        for q in range(nq):
            i0 = start[q]
            c = cntq[q]
            if npat[q] == 1:
                b = qpat[q]
                if b == 0:
                    continue
                dH = HT[i0 + c] - HT[i0]
                for a in range(m):
                    if (b >> a) & 1:
                        S[a] += c + (C[a] - i0) * dH
                        C[a] += c
            else:
                for i in range(i0, i0 + c):
                    b = seq[i]
                    ii = 1.0 / (i + 1.0)
                    for a in range(m):
                        J = float((b >> a) & 1)
                        C[a] += J
                        S[a] += J * C[a] * ii
        tot = 0.0
        for a in range(m):
            if nrel[a] > 0 and C[a] > 0:
                tot += w[a] * S[a] / nrel[a]
        return tot
    key = FS[:n]
    cnt = FS[n:2 * n]
    for d in range(n):
        s = 0.0
        c = 0.0
        for a in range(m):
            J = 1.0 if G[g0 + d * m + a] >= 1 else 0.0
            s += J * C[a]
            c += J
        key[d] = -s
        cnt[d] = -c
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
    return _value(AP, -1, False, 0.0, 0.0, order, 0, n, G, g0, m, w, gm, nrel, idcg, S, C, FS[:0])


@_jit
def _greedy(code, k, java, G, g0, n, m, w, gm, S, order, U, first, nxt, CR, sc, cc, cur):
    """The cascade greedy (RBU, gERR-IA) or the weighted cover greedy (RR-IA): each rank takes
    the document of largest sum_t r(d,t) S_t w_t (RR-IA: + 1e-9 x its aspects; S_t = prod of
    (1 - r) of the documents placed), ties to the lower row. Documents of one class score alike,
    so each rank scores one candidate per class (its lowest row not yet taken), aspect by aspect
    over the classes (``CR``: r of class x and aspect a at a*U + x). Only the first K ranks are
    written (K = the depth the value reads); once every score is 0 (cascade) the rest add 0 to
    the value and are written as -1, as RR-IA's once every aspect of positive weight is covered.
    Returns the number of documents placed."""
    for a in range(m):
        S[a] = 1.0
        for x in range(U):
            CR[a * U + x] = _r(code, G[g0 + first[x] * m + a], gm[a])
    for x in range(U):
        cur[x] = first[x]
        c = 0.0
        for a in range(m):
            c += CR[a * U + x]
        cc[x] = 1e-9 * c
    K = n if (code == RR or (code == RBU and (java or k < 0))) else min(k, n)
    i0 = K
    for i in range(K):
        if code == RR:  # RR-IA reads only the first hit of each aspect of positive weight
            done = True
            for a in range(m):
                if S[a] > 0.0 and w[a] > 0.0:
                    done = False
            if done:
                i0 = i
                break
        for x in range(U):
            sc[x] = 0.0
        for a in range(m):
            f = S[a]
            wa = w[a]
            base = a * U
            for x in range(U):
                sc[x] += CR[base + x] * f * wa
        best = -np.inf
        bd = -1
        bx = -1
        for x in range(U):
            d = cur[x]
            if d >= 0:
                s = sc[x] + cc[x] if code == RR else sc[x]
                if s > best or (s == best and d < bd):
                    best = s
                    bd = d
                    bx = x
        if bd < 0 or (best <= 0.0 and code != RR):
            i0 = i
            break
        order[i] = bd
        cur[bx] = nxt[bd]
        for a in range(m):
            S[a] *= 1.0 - CR[a * U + bx]
    for i in range(i0, K):
        order[i] = -1
    return i0


@_jit
def _iub(code, k, java, p, e, G, g0, n, m, w, gm, nrel, idcg, S, C, order, have_order, FS, IS,
         U, first, cnt, cls, nxt, CP, DISC, HT):
    """(value of the family's ideal ranking of the judged documents, exact?). ``order`` (n):
    the greedy ideal, written here, or read when ``have_order`` (the same cascade greedy of an
    earlier measure of the batch); RBP-IA and nDCG-IA leave their classes' keys in FS[U:2U].
    ``FS`` (float, >= max(U(m + 3), 2^11)) and ``IS`` (int, >= U + 8 x 2^10 + n + 1): scratch;
    ``DISC``, ``HT``: 1/log2(i + 1) and H_i by i; ``U, first, cnt, cls, nxt, CP``: the topic's
    classes (:func:`uefast.diversity._ia_classes._topic_classes`)."""
    if code == RBP or code == NDCG:
        return _iub_keyed(code, k, p, G, g0, n, m, w, gm, idcg, C, U, first, cnt, FS[:U],
                          IS[:U], FS[U:2 * U], DISC), True
    if code == AP:
        return _ap_iub(G, g0, n, m, w, gm, nrel, idcg, S, C, order, FS, IS, U, cnt, cls, CP,
                       HT), m <= 1
    L = n
    if not have_order:
        L = _greedy(code, k, java, G, g0, n, m, w, gm, S, order, U, first, nxt, FS[:U * m],
                    FS[U * m:U * (m + 1)], FS[U * (m + 1):U * (m + 2)], IS[:U])
        L = L if code == RR else n
    return _value(code, k, java, p, e, order, 0, L, G, g0, m, w, gm, nrel, idcg, S, C, DISC), m <= 1
