"""Byte-level hashing of Arrow string columns (Numba): duplicate detection and key joins
without building Python strings or Arrow dictionaries.

Hash: 64-bit FNV-1a over the bytes of each key part, parts separated by a 0xff byte (which never
occurs in UTF-8), seeded by an integer code.  Equal hashes are always verified byte by byte, so a
collision can cost time but never a wrong answer.
"""
from __future__ import annotations

import numba as nb
import numpy as np
import pyarrow as pa

from uefast.io._hashtab import _eqb

__all__ = ["str_buffers", "hash_keys", "first_duplicate", "lookup"]

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


def str_buffers(arr) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets int64[n+1], data uint8)`` of an Arrow string / large_string array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.string())
    bufs = arr.buffers()
    odt = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    off = np.frombuffer(bufs[1], dtype=odt)[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return off, data


@nb.njit(cache=True, nogil=True)
def _fnv(h, data, s, e):
    for b in range(s, e):
        h = (h ^ np.uint64(data[b])) * np.uint64(1099511628211)
    return (h ^ np.uint64(255)) * np.uint64(1099511628211)


@nb.njit(cache=True, nogil=True)
def hash_keys(code, off1, data1, off2, data2):
    """Hash of (code[i], string1[i], string2[i]) per row."""
    n = off1.size - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        h = np.uint64(14695981039346656037) ^ np.uint64(code[i])
        h = h * np.uint64(1099511628211)
        h = _fnv(h, data1, off1[i], off1[i + 1])
        h = _fnv(h, data2, off2[i], off2[i + 1])
        out[i] = h
    return out


@nb.njit(cache=True, nogil=True)
def _eq(off, data, i, j):
    """Strings i and j of one (offsets, data) column are equal (bytewise)."""
    return _eqb(data, off[i], off[i + 1], data, off[j], off[j + 1])


@nb.njit(cache=True, nogil=True)
def _scan_dups(order, hs, code, off1, data1, off2, data2):
    best_i, best_j = -1, -1
    n = hs.size
    s = 0
    while s < n:
        e = s + 1
        while e < n and hs[e] == hs[s]:
            e += 1
        if e - s > 1:
            for a in range(s, e):
                for b in range(a + 1, e):
                    i, j = order[a], order[b]
                    if code[i] == code[j] and _eq(off1, data1, i, j) and _eq(off2, data2, i, j):
                        lo, hi = min(i, j), max(i, j)
                        if best_j < 0 or hi < best_j:
                            best_i, best_j = lo, hi
        s = e
    return best_i, best_j


def first_duplicate(h, code, off1, data1, off2, data2):
    """First pair (i, j), i < j in input order, of rows with equal (code, string1, string2);
    (-1, -1) if none.  ``j`` is the later row of the earliest-ending duplicate."""
    hs = np.sort(h)
    if hs.size < 2 or not (hs[1:] == hs[:-1]).any():
        return -1, -1
    order = np.argsort(h, kind="stable")
    return _scan_dups(order, h[order], code, off1, data1, off2, data2)


@nb.njit(cache=True, nogil=True)
def _eq2(offa, dataa, i, offb, datab, j):
    a0, a1, b0, b1 = offa[i], offa[i + 1], offb[j], offb[j + 1]
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):
        if dataa[a0 + k] != datab[b0 + k]:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def _verify(pos, h, code, off, data, ref_h_sorted, ref_order, ref_code, ref_off, ref_data):
    n = h.size
    out = np.full(n, -1, np.int64)
    m = ref_h_sorted.size
    for i in range(n):
        p = pos[i]
        while p < m and ref_h_sorted[p] == h[i]:
            r = ref_order[p]
            if ref_code[r] == code[i] and _eq2(off, data, i, ref_off, ref_data, r):
                out[i] = r
                break
            p += 1
    return out


def lookup(h, code, off, data, ref_h_sorted, ref_order, ref_code, ref_off, ref_data):
    """For each row, the index (into the reference rows) with the same (code, string), or -1.
    ``ref_h_sorted = ref_hash[ref_order]``."""
    pos = np.searchsorted(ref_h_sorted, h)
    return _verify(pos, h, code, off, data, ref_h_sorted, ref_order, ref_code, ref_off, ref_data)
