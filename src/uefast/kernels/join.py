"""Left join of run rows to qrels rows on (topic code, integer docid): one open-addressing hash
table over the qrels rows, probed by every run row in parallel.

Used by TREC-style :func:`uefast.evaluate` when docids are integers (string docids go through the
per-topic tables of :mod:`uefast.io._topics`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.kernels.threads import run_chunks

__all__ = ["pair_table", "probe_pairs"]

_U = np.uint64


@nb.njit(cache=True, nogil=True, inline="always")
def _slot(code, doc, mask):
    """Start slot of the key (code, doc): a 64-bit mix (murmur3's finaliser) of both."""
    x = _U(doc) ^ (_U(code) * _U(0x9E3779B97F4A7C15))
    x ^= x >> _U(33)
    x *= _U(0xFF51AFD7ED558CCD)
    x ^= x >> _U(33)
    return x & mask


@nb.njit(cache=True, nogil=True)
def pair_table(codes, docs):
    """Slots (row of ``codes``/``docs``, or -1) of a table holding every row keyed by
    ``(codes[i], docs[i])``, at most half full. Rows with code < 0 are left out; a repeated key
    keeps its first row (callers refuse repeats before)."""
    cap = 16
    while cap < 2 * codes.size:
        cap *= 2
    slots = np.full(cap, -1, np.int64)
    mask = _U(cap - 1)
    for i in range(codes.size):
        c = codes[i]
        if c < 0:
            continue
        p = _slot(c, docs[i], mask)
        while True:
            r = slots[p]
            if r < 0:
                slots[p] = i
                break
            if codes[r] == c and docs[r] == docs[i]:
                break
            p = (p + _U(1)) & mask
    return slots


def probe_pairs(slots, t_codes, t_docs, codes, docs, nchunks):
    """For every row i (code >= 0): the row of the :func:`pair_table` ``slots`` over
    ``(t_codes, t_docs)`` with the same key, else -1 (``nchunks`` row ranges, on several
    threads: :func:`~uefast.kernels.threads.run_chunks`)."""
    out = np.full(codes.size, -1, np.int64)
    run_chunks(_probe_pairs_chunks, nchunks, slots, t_codes, t_docs, codes, docs, nchunks, out)
    return out


@nb.njit(cache=True, nogil=True)
def _probe_pairs_chunks(c0, c1, slots, t_codes, t_docs, codes, docs, nchunks, out):
    """:func:`probe_pairs` over the rows of chunks ``c0 .. c1 - 1``."""
    n = codes.size
    mask = _U(slots.size - 1)
    for i in range(n * c0 // nchunks, n * c1 // nchunks):
        q = codes[i]
        if q < 0:
            continue
        d = docs[i]
        p = _slot(q, d, mask)
        while True:
            r = slots[p]
            if r < 0:
                break
            if t_codes[r] == q and t_docs[r] == d:
                out[i] = r
                break
            p = (p + _U(1)) & mask
