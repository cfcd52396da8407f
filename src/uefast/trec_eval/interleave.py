"""trec_eval's per-topic lines (``-q``), assembled in one Numba pass per result.

The lines come topic by topic, measures in table order within each topic::

    <name padded to 22>\\t<qid>\\t<value>\\n

Real values are printed ``%6.4f`` (:func:`uefast.trec_eval.fixed4.put_fixed4`) and counts ``%ld``
inside the pass; text columns, and real columns holding a value that the pass does not take (NaN,
infinities, ``|x| >= 2**39``), come in as bytes formatted in Python. One call per result instead
of one per measure column and one f-string per line: 17 TREC 2003 Robust runs (~46,000 lines),
~10 -> ~3 ms. The reference (every line by an f-string) is in ``tests/test_trec_fixed4.py``.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.trec_eval.fixed4 import put_fixed4, put_uint

__all__ = ["FLOAT", "INT", "TEXT", "per_topic_lines", "pack"]


@nb.njit(cache=True, nogil=True, inline="always")
def _put_int(out, p, v, dig):
    """Write ``%ld`` of ``v`` to ``out[p:]``; returns the position after it."""
    if v < 0:
        out[p] = 45
        p += 1
    return put_uint(out, p, np.uint64(-v) if v < 0 else np.uint64(v), dig)


FLOAT, INT, TEXT = 0, 1, 2


@nb.njit(cache=True, nogil=True)
def per_topic_lines(qdata, qoff, pdata, poff, kind, row, fvals, ivals, tdata, toff):
    """For topic i (``qdata[qoff[i]:qoff[i + 1]]``) and column j in order: prefix j
    (``pdata[poff[j]:poff[j + 1]]``), the qid, a tab, the value, a newline. Column j's values are
    ``fvals[row[j], i]`` printed ``%6.4f`` (``kind[j] == FLOAT``), ``ivals[row[j], i]`` printed
    ``%ld`` (``INT``), or the bytes ``tdata[toff[row[j], i]:toff[row[j], i + 1]]`` (``TEXT``)."""
    nq = qoff.size - 1
    nc = poff.size - 1
    total = 0
    for j in range(nc):
        vb = nq * 20 if kind[j] != TEXT else toff[row[j], nq] - toff[row[j], 0]
        total += nq * (poff[j + 1] - poff[j] + 2) + vb
    total += nc * (qoff[nq] - qoff[0])
    out = np.empty(total, np.uint8)
    dig = np.empty(20, np.uint8)
    p = 0
    for i in range(nq):
        q0, q1 = qoff[i], qoff[i + 1]
        for j in range(nc):
            for k in range(poff[j], poff[j + 1]):
                out[p] = pdata[k]
                p += 1
            for k in range(q0, q1):
                out[p] = qdata[k]
                p += 1
            out[p] = 9
            p += 1
            r = row[j]
            if kind[j] == FLOAT:
                p = put_fixed4(out, p, fvals[r, i], dig)
            elif kind[j] == INT:
                p = _put_int(out, p, ivals[r, i], dig)
            else:
                for k in range(toff[r, i], toff[r, i + 1]):
                    out[p] = tdata[k]
                    p += 1
            out[p] = 10
            p += 1
    return out[:p]


def pack(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array and their start offsets (then the end)."""
    joined = "".join(texts)
    if joined.isascii():  # one byte per character
        off = np.zeros(len(texts) + 1, np.int64)
        np.cumsum([len(t) for t in texts], out=off[1:])
        return np.frombuffer(joined.encode(), np.uint8), off
    enc = [t.encode() for t in texts]
    off = np.zeros(len(enc) + 1, np.int64)
    np.cumsum([len(b) for b in enc], out=off[1:])
    return np.frombuffer(b"".join(enc), np.uint8), off
