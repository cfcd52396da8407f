"""trec_eval's ranking order (``form_res_rels.c``'s ``comp_sim_docno``): score descending, ties
by docno descending under ``strcmp`` (bytewise).  NumPy sorts by (topic, score); this Numba pass
re-sorts every run of tied scores by the docno bytes (bottom-up merge sort per tie group)."""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["rank_order"]


@nb.njit(cache=True, nogil=True)
def _cmp(off, data, i, j):
    a0, a1, b0, b1 = off[i], off[i + 1], off[j], off[j + 1]
    la, lb = a1 - a0, b1 - b0
    for k in range(min(la, lb)):
        x, y = data[a0 + k], data[b0 + k]
        if x != y:
            return 1 if x > y else -1
    if la == lb:
        return 0
    return 1 if la > lb else -1


@nb.njit(cache=True, nogil=True)
def _fix_ties(order, qc, score, off, data):
    n = order.size
    tmp = np.empty(n, np.int64)
    s = 0
    while s < n:
        e = s + 1
        while e < n and qc[order[e]] == qc[order[s]] and score[order[e]] == score[order[s]]:
            e += 1
        m = e - s
        if m > 1:
            width = 1
            src = order[s:e]
            dst = tmp[s:e]
            while width < m:
                lo = 0
                while lo < m:
                    mid = min(lo + width, m)
                    hi = min(lo + 2 * width, m)
                    a, b, k = lo, mid, lo
                    while a < mid and b < hi:
                        if _cmp(off, data, src[a], src[b]) >= 0:  # larger docno first
                            dst[k] = src[a]
                            a += 1
                        else:
                            dst[k] = src[b]
                            b += 1
                        k += 1
                    while a < mid:
                        dst[k] = src[a]
                        a += 1
                        k += 1
                    while b < hi:
                        dst[k] = src[b]
                        b += 1
                        k += 1
                    lo = hi
                for k in range(m):
                    src[k] = dst[k]
                width *= 2
        s = e
    return order


def rank_order(qc: np.ndarray, score: np.ndarray, doc_off: np.ndarray, doc_data: np.ndarray) -> np.ndarray:
    """Permutation sorting rows by topic code, score descending, docno descending (bytes)."""
    order = np.lexsort((-score, qc)).astype(np.int64)
    return _fix_ties(order, qc, score, doc_off, doc_data)
