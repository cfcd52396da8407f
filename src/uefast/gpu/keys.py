"""Host-side inputs of the rank-by-counting kernels (:mod:`uefast.gpu.counting`): order-preserving
integer keys for the scores and a tie-break key per row.

* :func:`score_keys` -- every score becomes an integer whose order is the float order, equal
  scores (``+0.0`` and ``-0.0`` included) equal keys: for an IEEE-754 bit pattern ``b`` read as a
  signed integer, ``key = b ^ ((b >> (w-1)) & (2^(w-1) - 1))`` (w = 32 or 64) leaves non-negative
  numbers as they are and reverses the order of negative ones (the standard radix-sort key
  transform, e.g. Terdiman, "Radix sort revisited", 2000; CUB's ``Traits<float>``), after
  ``x + 0.0`` has made ``-0.0`` into ``+0.0``. Where every score is a float32 exactly, the keys
  are int32 (half the bytes to copy); otherwise int64 from the float64 bits.
* :func:`tie_breaks` -- ``tb[p]`` for the row at position p of the segment order: smaller ranks
  first among equal scores. Input order (and trec_eval's order without docids): the position
  within the segment. trec_eval's order with docids: the rank of the row in its segment's
  docid order (descending by bytes, strcmp; a repeated docid by position), found by the CPU
  engine's own stable merge sort with every score equal
  (:func:`uefast.kernels.ordering.sort_segment`), so the order is the CPU's by construction.
  ``ties="expected"`` reads none.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.kernels.ordering import DOC_NONE, TIE_DOCID, sort_segment

__all__ = ["score_keys", "tie_breaks", "segment_rows"]


def score_keys(scores: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Order-preserving integer keys of ``scores[rows]`` (``rows`` None: every score): int32 when
    every one of them is exactly a float32, else int64. NaN scores must have been ruled out."""
    s = np.asarray(scores, np.float64)
    if rows is not None:
        s = s[rows]
    s = s + 0.0  # -0.0 -> +0.0 (IEEE 754: -0 + +0 = +0 in round-to-nearest)
    s32 = s.astype(np.float32)
    if np.array_equal(s32.astype(np.float64), s):
        b = s32.view(np.int32)
        return b ^ ((b >> 31) & np.int32(0x7FFFFFFF))
    b = s.view(np.int64)
    return b ^ ((b >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def segment_rows(offsets: np.ndarray, perm: np.ndarray, has_perm: bool) -> np.ndarray:
    """Input row of every position of the segment order (``perm`` or the identity)."""
    n = int(offsets[-1])
    return np.asarray(perm[:n], np.int64) if has_perm else np.arange(n, dtype=np.int64)


@nb.njit(cache=True, nogil=True)
def _docid_tie_breaks(offsets, rows, doc_mode, doc_int, doc_off, doc_data, tb):
    """``tb[base + idx[r]] = r`` where idx is segment g's positions sorted by docid descending
    (strcmp), equal docids by position: the order of :func:`rank_before` among equal scores."""
    nmax = 0
    for g in range(offsets.shape[0] - 1):
        nmax = max(nmax, offsets[g + 1] - offsets[g])
    keys = np.zeros(nmax, np.float64)
    tk = np.empty(nmax, np.float64)
    idx = np.empty(nmax, np.int64)
    ti = np.empty(nmax, np.int64)
    for g in range(offsets.shape[0] - 1):
        base = offsets[g]
        n = offsets[g + 1] - base
        for i in range(n):
            keys[i] = 0.0
            idx[i] = i
        seg_rows = rows[base:base + n]
        sort_segment(keys, idx, tk, ti, n, TIE_DOCID, seg_rows, doc_mode, doc_int, doc_off,
                     doc_data)
        for r in range(n):
            tb[base + idx[r]] = r


def tie_breaks(offsets: np.ndarray, rows: np.ndarray, tie_mode: int, doc_mode: int,
               doc_int: np.ndarray, doc_off: np.ndarray, doc_data: np.ndarray) -> np.ndarray:
    """int32 tie-break key per position of the segment order (smaller ranks first among equal
    scores): the docid order for ``ties="trec_eval"`` with docids, else the position in the
    segment. Both are below a segment's length, so int32 holds them."""
    offsets = np.asarray(offsets, np.int64)
    n = int(offsets[-1])
    if tie_mode == TIE_DOCID and doc_mode != DOC_NONE:
        tb = np.empty(n, np.int64)
        _docid_tie_breaks(offsets, rows, doc_mode, doc_int, doc_off, doc_data, tb)
        return tb.astype(np.int32)
    sizes = np.diff(offsets)
    return (np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], sizes)).astype(np.int32)
