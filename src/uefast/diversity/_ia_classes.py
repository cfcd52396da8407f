"""Per-topic summary shared by every measure of the intent-aware kernels
(:mod:`uefast.diversity._ia_kernels`), built in two passes over the topic's grades: the largest
grade of each aspect, the classes of documents with equal grade rows (the IUB rankings and the
greedies work on classes, documents of one class being exchangeable), each class's binary
relevance pattern and the per-aspect grade histograms (from the classes)."""
from __future__ import annotations

from uefast.diversity._ia_common import _jit

_GOLD = -7046029254386353131  # 0x9E3779B97F4A7C15 (Fibonacci hashing), as int64
_LIM = 1 << 62


@_jit
def _topic_classes(G, g0, n, m, amax, H, first, cnt, cls, nxt, last, CP, CG, hkey, hval, hstamp,
                   stamp):
    """Classes of the topic's n documents (grades ``G[g0 + d*m + a]``) by equal grade row.

    Writes ``amax[a]`` (largest grade of aspect a), ``H[a, g]`` (documents of grade g in aspect a,
    for g <= min(amax[a], 63); grade 63 counts those above), and per class x < U (numbered by
    their lowest row): ``first[x]`` (its lowest row), ``cnt[x]``, ``CP[x]`` (binary pattern, bit a
    = [grade >= 1], where m <= 62), ``CG[a, x]`` (its grade in aspect a: the routines over the
    classes read aspect by aspect, contiguously); per document: ``cls[d]`` and ``nxt[d]`` (the
    next row of its class, -1); ``last``: scratch (n). A class is found through the code of
    the row in radix R = (the topic's largest grade) + 1: by direct index when the codes fit
    the table ``hkey``/``hval``/``hstamp`` (a power of two in size; slots whose ``hstamp``
    differs from ``stamp`` are empty, so nothing is cleared), else by Fibonacci hashing with
    linear probing; with codes beyond 2^62 every document is its own class. The aspects'
    maxima come from the classes. Returns (U, small): small = every grade below 64."""
    Gt = G[g0:g0 + n * m]  # one contiguous block: its maximum in vector loads
    top = 0
    for i in range(Gt.size):
        top = max(top, Gt[i])
    R = top + 1
    P = 1
    ok = True
    small = top < 64
    for a in range(m):
        if R > _LIM // P:
            ok = False
        else:
            P *= R
    mask = hkey.size - 1
    direct = P <= hkey.size
    U = 0
    if not ok:
        for d in range(n):
            cls[d] = d
        U = n
    elif direct:  # branch-free: a new class is x = U
        for d in range(n):
            c = 0
            for a in range(m):
                c = c * R + G[g0 + d * m + a]
            isnew = hstamp[c] != stamp
            x = U if isnew else hval[c]
            hval[c] = x
            hstamp[c] = stamp
            cls[d] = x
            U += 1 if isnew else 0
    else:
        for d in range(n):
            c = 0
            for a in range(m):
                c = c * R + G[g0 + d * m + a]
            slot = ((c * _GOLD) >> 40) & mask
            while True:
                if hstamp[slot] != stamp:
                    hstamp[slot] = stamp
                    hkey[slot] = c
                    x = U
                    hval[slot] = x
                    U += 1
                    break
                if hkey[slot] == c:
                    x = hval[slot]
                    break
                slot = (slot + 1) & mask
            cls[d] = x
    # the documents of each class, linked in row order, from the last row back (``last`` ends
    # as each class's lowest row): a second pass keeps the first one's dependency chain short
    for x in range(U):
        cnt[x] = 0
        last[x] = -1
    for d in range(n - 1, -1, -1):
        x = cls[d]
        nxt[d] = last[x]
        last[x] = d
        cnt[x] += 1
    for x in range(U):
        first[x] = last[x]
    for a in range(m):
        for g in range(min(top, 63) + 1):
            H[a, g] = 0
    for x in range(U):
        d = first[x]
        b = 0
        for a in range(m):
            g = G[g0 + d * m + a]
            CG[a, x] = g
            H[a, min(g, 63)] += cnt[x]
            b |= (1 << a) if g >= 1 else 0
        CP[x] = b if m <= 62 else 0
    for a in range(m):
        mx = 0
        for x in range(U):
            mx = max(mx, CG[a, x])
        amax[a] = mx
    return U, small
