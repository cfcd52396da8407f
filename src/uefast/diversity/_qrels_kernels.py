"""Numba passes of :func:`uefast.diversity.compile_qrels` over the qrels rows: the stable sort
by (topic, docid rank), the duplicate check, and the scatter of the grades into one flat array of
per-topic grade matrices with the relevant counts of every active aspect."""
from __future__ import annotations

import numba as nb
import numpy as np

_jit = nb.njit(cache=True, nogil=True)


@_jit
def _counting_order(key, nkey, base):
    """Stable counting sort of the rows by ``key`` (0 <= key < nkey), applied on top of the
    order ``base`` (LSD radix step); returns the new order."""
    cnt = np.zeros(nkey + 1, np.int64)
    for i in range(base.size):
        cnt[key[base[i]] + 1] += 1
    for x in range(nkey):
        cnt[x + 1] += cnt[x]
    out = np.empty(base.size, np.int64)
    for i in range(base.size):
        r = base[i]
        out[cnt[key[r]]] = r
        cnt[key[r]] += 1
    return out


@_jit
def sort_topic_doc(qc, nq, dr, nd):
    """Rows ordered by (topic code ``qc``, docid byte rank ``dr``), ties in row order (two
    stable counting sorts: O(rows + topics + docids))."""
    o = _counting_order(dr, nd, np.arange(qc.size))
    return _counting_order(qc, nq, o)


@_jit
def first_duplicate_pair(doc_ix, sc_sorted, NS):
    """Position (in sorted order) of the second occurrence of the smallest duplicated
    (judged document, subtopic) key doc_ix x NS + subtopic, or -1; rows sorted by document."""
    stamp = np.full(NS, -1, np.int64)
    i = 0
    n = doc_ix.size
    while i < n:
        j = i
        best = -1
        while j < n and doc_ix[j] == doc_ix[i]:
            s = sc_sorted[j]
            if stamp[s] == i:
                best = s if best < 0 else min(best, s)
            stamp[s] = i
            j += 1
        if best >= 0:
            seen = 0
            for x in range(i, j):
                if sc_sorted[x] == best:
                    seen += 1
                    if seen == 2:
                        return x
        i = j
    return -1


@_jit
def scatter_grades(qs, ps, doc_ix, gs, ap, alo, jloc, tstart, m, goff, G, nrel):
    """G[goff[t] + (doc - tstart[t]) m_t + j] = grade and nrel[pos] += [grade >= 1] for every
    row whose (topic, subtopic) pair ``ps`` is active: ``ap`` the active pairs ascending (those
    of topic t at ap[alo[t]:alo[t+1]]), ``jloc`` their aspect index, ``pos`` = alo[t] + j."""
    for i in range(qs.size):
        t = qs[i]
        lo, hi = alo[t], alo[t + 1]
        p = ps[i]
        while lo < hi:  # binary search within the topic's few active pairs
            mid = (lo + hi) // 2
            if ap[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        if lo < alo[t + 1] and ap[lo] == p:
            j = jloc[lo]
            G[goff[t] + (doc_ix[i] - tstart[t]) * m[t] + j] = gs[i]
            if gs[i] >= 1:
                nrel[alo[t] + j] += 1
