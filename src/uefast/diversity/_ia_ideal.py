"""Ideal rankings of the intent-aware kernels (:mod:`uefast.diversity._ia_kernels`): IDCG per
aspect and the families' ideal (IUB) rankings and their values, on the topic's classes of equal
grade rows (:mod:`uefast.diversity._ia_classes`): the key orders of RBP-IA and nDCG-IA (an
insertion of the classes' distinct keys, nDCG-IA keeping the top k), AP-IA's counting sort over
relevance patterns, the cascade and cover greedies over classes.

The per-aspect inputs are read from the kernel's flat arrays at the topic's first aspect ``a0``
(weights ``W``, relevant counts ``NR``, grade scales ``GM[., j]`` and IDCGs ``IDCG[., j]`` of
measure j) and the scratch and ranking arrays at offsets, never as slices: a view passed to a
function costs two atomic reference-count updates, a large share of this small per-topic work."""
from __future__ import annotations

import numpy as np

from uefast.diversity._ia_common import AP, NDCG, RBP, RBU, RR, _jit, _r, _value


@_jit
def _idcg(G, g0, n, m, k, GM, IDCG, a0, j, H, amax, small, DISC):
    """IDCG_t@k of every aspect (linear gain g/gmax, the top k gains of the judged documents),
    into ``IDCG[a0 + a, j]``, from a histogram of the grades (no sort; the topic's ``H`` where
    ``small``, all grades < 64; grades above 4096 fall back to sorting). ``DISC[i]`` =
    1/log2(i + 1)."""
    for a in range(m):
        top = amax[a]
        gm = GM[a0 + a, j]
        s = 0.0
        i = 0
        K = min(k, n)
        if small:
            for g in range(top, 0, -1):
                for _ in range(H[a, g]):
                    if i >= K:
                        break
                    s += (g * gm) * DISC[i + 1]
                    i += 1
        elif top <= 4096:
            cnt = np.zeros(top + 1, np.int64)
            for d in range(n):
                cnt[G[g0 + d * m + a]] += 1
            for g in range(top, 0, -1):
                for _ in range(cnt[g]):
                    if i >= K:
                        break
                    s += (g * gm) * DISC[i + 1]
                    i += 1
        else:
            col = np.empty(n)
            for d in range(n):
                col[d] = -(G[g0 + d * m + a] * gm)
            col.sort()
            for i in range(K):
                s += -col[i] * DISC[i + 1]
        IDCG[a0 + a, j] = s


@_jit
def _iub_keyed(code, k, p, n, m, W, a0, GM, IDCG, j, C, U, CG, cnt, bk, bc, ckey, DISC):
    """RBP-IA's or nDCG-IA's ideal value: the documents by decreasing key sum_t r(d,t) c_t (c_t =
    w_t, or w_t/IDCG_t), exact by the rearrangement inequality. The value depends on the sorted
    keys only, so the classes' distinct positive keys are inserted, with their document counts,
    into ``bk[:D]``/``bc[:D]`` (descending; nDCG-IA keeps the top min(k, n)), then summed rank
    by rank. ``ckey[x]``: class x's key (RBP-IA: its documents' gain in the value); ``CG[a, x]``:
    the class's grades (:func:`uefast.diversity._ia_classes._topic_classes`)."""
    for a in range(m):
        C[a] = W[a0 + a] / IDCG[a0 + a, j] if code == NDCG else W[a0 + a]
    cap = U if code == RBP else min(k, n)
    for x in range(U):  # the keys, aspect by aspect over the classes (each summed in aspect order)
        ckey[x] = 0.0
    for a in range(m):
        ga = GM[a0 + a, j]
        ca = C[a]
        for x in range(U):
            ckey[x] += (CG[a, x] * ga) * ca  # _r's linear map g * (1/gmax)
    D = 0
    for x in range(U):
        s = ckey[x]
        if s == 0.0:  # adds 0 at any rank
            continue
        y = 0  # keys above s, counted without a data-dependent exit (few distinct keys)
        for z in range(D):
            y += 1 if bk[z] > s else 0
        if y < D and bk[y] == s:
            bc[y] += cnt[x]
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
def _ap_iub(G, g0, n, m, W, NR, a0, GM, IDCG, j, S, C, ORD, o0, FS, IS, U, cnt, cls, CP, HT):
    """AP-IA's ideal ranking (by sum_t J w_t/R_t, then more aspects, then row: np.lexsort's
    order) and its value. m <= 10: the key is a function of the binary pattern, so the <= 2^m
    patterns present are sorted (insertion) into classes of equal (key, aspects), each a block
    of consecutive ranks. A block of one pattern b adds, for each aspect t of b, with C_t
    relevant documents before its first rank i0 and c documents, sum_{j<=c} (C_t + j)/(i0 + j)
    = c + (C_t - i0)(H_{i0+c} - H_{i0}) (``HT``: harmonic numbers); a block of several
    patterns (tied keys) holds its documents in row order and is summed rank by rank. m > 10:
    a merge sort of the documents' keys (the ranking in ``ORD[o0:o0 + n]``).

    Scratch, P = 2^m: ``FS[b]``, ``FS[P + b]`` the key and -aspects of pattern b; in ``IS``:
    seen (b), the patterns present in order (P + x), class of a pattern (2P + b), documents of
    a pattern (3P + b), patterns of a class (4P + q), documents of a class (5P + q), first rank
    of a class (6P + q, P + 1 of them), one pattern of a class (7P + 1 + q), the patterns of
    the tied blocks by rank (8P + 1 + i)."""
    for a in range(m):
        C[a] = W[a0 + a] / max(NR[a0 + a], 1)
    if m <= 10:
        P = 1 << m
        SEEN, UP, PCLS, PCOUNT, NPAT, CNTQ, START, QPAT, SEQ = (
            0, P, 2 * P, 3 * P, 4 * P, 5 * P, 6 * P, 7 * P + 1, 8 * P + 1)
        for b in range(P):
            IS[SEEN + b] = 0
        u = 0
        for x in range(U):
            b = CP[x]
            if IS[SEEN + b] == 0:
                s = 0.0
                c = 0.0
                for a in range(m):
                    J = 1.0 if (b >> a) & 1 else 0.0
                    s += J * C[a]
                    c += J
                FS[b] = -s
                FS[P + b] = -c
                IS[SEEN + b] = 1
                IS[PCOUNT + b] = 0
                IS[UP + u] = b
                u += 1
            IS[PCOUNT + b] += cnt[x]
        for x in range(1, u):  # insertion sort of the patterns by (key, -aspects)
            b = IS[UP + x]
            y = x
            while y > 0:
                c = IS[UP + y - 1]
                if FS[c] > FS[b] or (FS[c] == FS[b] and FS[P + c] > FS[P + b]):
                    IS[UP + y] = c
                    y -= 1
                else:
                    break
            IS[UP + y] = b
        q = -1
        for x in range(u):  # class = rank of (key, -aspects); equal pairs share a class
            b = IS[UP + x]
            if x == 0 or FS[b] != FS[IS[UP + x - 1]] or FS[P + b] != FS[P + IS[UP + x - 1]]:
                q += 1
                IS[NPAT + q] = 0
                IS[CNTQ + q] = 0
            IS[PCLS + b] = q
            IS[NPAT + q] += 1
            IS[CNTQ + q] += IS[PCOUNT + b]
            IS[QPAT + q] = b
        nq = q + 1
        multi = False
        IS[START] = 0
        for q in range(nq):
            IS[START + q + 1] = IS[START + q] + IS[CNTQ + q]
            multi = multi or IS[NPAT + q] > 1
        if multi:  # the documents of the tied blocks, in row order
            for q in range(nq):  # UP reused: class -> next rank
                IS[UP + q] = IS[START + q]
            for d in range(n):
                b = CP[cls[d]]
                q = IS[PCLS + b]
                if IS[NPAT + q] > 1:
                    IS[SEQ + IS[UP + q]] = b
                    IS[UP + q] += 1
        for a in range(m):
            S[a] = 0.0
            C[a] = 0.0
        for q in range(nq):
            i0 = IS[START + q]
            c = IS[CNTQ + q]
            if IS[NPAT + q] == 1:
                b = IS[QPAT + q]
                if b == 0:
                    continue
                dH = HT[i0 + c] - HT[i0]
                for a in range(m):
                    if (b >> a) & 1:
                        S[a] += c + (C[a] - i0) * dH
                        C[a] += c
            else:
                for i in range(i0, i0 + c):
                    b = IS[SEQ + i]
                    ii = 1.0 / (i + 1.0)
                    for a in range(m):
                        J = float((b >> a) & 1)
                        C[a] += J
                        S[a] += J * C[a] * ii
        tot = 0.0
        for a in range(m):
            if NR[a0 + a] > 0 and C[a] > 0:
                tot += W[a0 + a] * S[a] / NR[a0 + a]
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
    order = ORD[o0:o0 + n]
    order[:] = np.argsort(key, kind="mergesort")  # ties: row order
    i = 0
    while i < n:  # within a run of equal keys: more aspects first, stable (insertion)
        j2 = i + 1
        while j2 < n and key[order[j2]] == key[order[i]]:
            j2 += 1
        for x in range(i + 1, j2):
            o = order[x]
            y = x
            while y > i and cnt[order[y - 1]] > cnt[o]:
                order[y] = order[y - 1]
                y -= 1
            order[y] = o
        i = j2
    return _value(AP, -1, False, 0.0, 0.0, ORD, o0, o0 + n, G, g0, m, W, NR, a0, GM, IDCG, j, S, C,
                  FS[:0])


@_jit
def _greedy(code, k, java, n, m, W, a0, GM, j, S, ORD, o0, U, first, nxt, cls, CG, CR, SC, SCI, CC,
            cur):
    """The cascade greedy (RBU, gERR-IA) or the weighted cover greedy (RR-IA): each rank takes
    the document of largest sum_t r(d,t) S_t w_t (RR-IA: + 1e-9 x its aspects; S_t = prod of
    (1 - r) of the documents placed), ties to the lower row. Documents of one class score alike,
    so each rank scores one candidate per class (its lowest row not yet taken, ``cur[x]``;
    ``cls``: the class of a row), aspect by aspect over the classes (``CG[a, x]``: the class's
    grade in aspect a, ``CR[a, x]`` its r; scores in ``SC``, whose bits ``SCI`` views as int64;
    ``CC``: the aspect counts). Only the first K ranks are written, to ``ORD[o0 + i]`` (K = the
    depth the value reads); once every score is 0 (cascade) the rest add 0 to the value and are
    written as -1, as RR-IA's once every aspect of positive weight is covered. Returns the
    number of documents placed. The scratch arrays are whole arrays indexed from 0 (no
    offsets), so the loops over the classes compile to contiguous vector loads."""
    for a in range(m):
        S[a] = 1.0
        ga = GM[a0 + a, j]
        for x in range(U):
            CR[a, x] = _r(code, CG[a, x], ga)
    for x in range(U):
        cur[x] = first[x]
    if code == RR:  # the tie-breaker by number of aspects
        for x in range(U):
            c = 0.0
            for a in range(m):
                c += CR[a, x]
            CC[x] = 1e-9 * c
    K = n if (code == RR or (code == RBU and (java or k < 0))) else min(k, n)
    i0 = K
    for i in range(K):
        if code == RR:  # RR-IA reads only the first hit of each aspect of positive weight
            done = True
            for a in range(m):
                if S[a] > 0.0 and W[a0 + a] > 0.0:
                    done = False
            if done:
                i0 = i
                break
        for x in range(U):
            SC[x] = 0.0
        for a in range(m):
            f = S[a]
            wa = W[a0 + a]
            for x in range(U):
                SC[x] += CR[a, x] * f * wa
        # the best score, then the lowest row among the classes that reach it, as two
        # reductions without a chain of compare-and-select through the classes: the scores
        # are >= 0, so their bit patterns order as int64 as they do as doubles; a class with no
        # document left scores -1.0 (a negative int64)
        for x in range(U):
            v = SC[x] + CC[x] if code == RR else SC[x]
            SC[x] = v if cur[x] >= 0 else -1.0
        bits = SCI[0]
        for x in range(1, U):
            bits = max(bits, SCI[x])
        bd = n
        for x in range(U):
            bd = min(bd, cur[x] if SCI[x] == bits else n)
        if bits < 0 or (bits == 0 and code != RR):
            i0 = i
            break
        bx = cls[bd]
        ORD[o0 + i] = bd
        cur[bx] = nxt[bd]
        for a in range(m):
            S[a] *= 1.0 - CR[a, bx]
    for i in range(i0, K):
        ORD[o0 + i] = -1
    return i0
