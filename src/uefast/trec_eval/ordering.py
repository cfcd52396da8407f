"""trec_eval's ranking order (``form_res_rels.c``'s ``comp_sim_docno``): score descending, ties
by docno descending under ``strcmp`` (bytewise).  NumPy sorts by (topic, score); this Numba pass
re-sorts every run of tied scores by the docno bytes (the fast path's tie sort,
:func:`uefast.io._topics._sort_ties`)."""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.io._topics import _sort_ties

__all__ = ["rank_order"]


@nb.njit(cache=True, nogil=True)
def _fix_ties(order, qc, score, off, data):
    n = order.size
    tmp = np.empty(n, np.int64)
    no_words = np.zeros(0, np.uint64)
    starts, ends = off[:-1], off[1:]
    s = 0
    while s < n:
        e = s + 1
        while e < n and qc[order[e]] == qc[order[s]] and score[order[e]] == score[order[s]]:
            e += 1
        if e - s > 1:
            _sort_ties(order[s:e], tmp, data, starts, ends, no_words, no_words)  # docno descending (bytes)
        s = e
    return order


def rank_order(qc: np.ndarray, score: np.ndarray, doc_off: np.ndarray, doc_data: np.ndarray) -> np.ndarray:
    """Permutation sorting rows by topic code, score descending, docno descending (bytes)."""
    order = np.lexsort((-score, qc)).astype(np.int64)
    return _fix_ties(order, qc, score, doc_off, doc_data)
