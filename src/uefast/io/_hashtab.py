"""Hashing and open-addressing tables for the TREC fast path: docnos of up to 16 bytes keyed
exactly by their packed bytes plus length, longer ones and qids compared byte by byte."""
from __future__ import annotations

import numba as nb
import numpy as np

_U = np.uint64
# Per-row helpers that allocate nothing are compiled without reference counting (``_nrt=False``):
# otherwise each call counts references on its array arguments (NRT_incref / NRT_decref, atomic
# operations), and they run once per run line.
_no_rc = nb.njit(cache=True, nogil=True, _nrt=False)

# --------------------------------------------------------------------------------------------
# Hashing and open-addressing tables


@_no_rc
def _fnv(data, s, e):
    """64-bit hash of data[s:e]: bytes packed 8 per word (short dependency chains), each word
    folded in with one multiply; the length goes into the final mix.  Not cryptographic: every
    hash match is verified byte by byte."""
    h = _U(14695981039346656037)
    w = _U(0)
    k = 0
    for b in range(s, e):
        w = (w << _U(8)) | _U(data[b])
        k += 1
        if k == 8:
            h = (h ^ w) * _U(0x9E3779B97F4A7C15)
            h = h ^ (h >> _U(29))
            w = _U(0)
            k = 0
    h = (h ^ w ^ (_U(e - s) << _U(56))) * _U(0x9E3779B97F4A7C15)
    return h ^ (h >> _U(32))


@nb.njit(cache=True, nogil=True)
def _mix(h):
    h = (h ^ (h >> _U(33))) * _U(0xFF51AFD7ED558CCD)
    h = (h ^ (h >> _U(33))) * _U(0xC4CEB9FE1A85EC53)
    return h ^ (h >> _U(33))


@nb.njit(cache=True, nogil=True)
def _key(code, dh):
    return _mix(dh ^ (_U(code + 1) * _U(0x9E3779B97F4A7C15)))


@_no_rc
def _eqb(a, as_, ae, b, bs, be):
    if ae - as_ != be - bs:
        return False
    for k in range(ae - as_):
        if a[as_ + k] != b[bs + k]:
            return False
    return True


_EMPTY = _U(0xFFFFFFFFFFFFFFFF)


@nb.njit(cache=True, nogil=True)
def _dkey(data, s, e):
    """(hash, w0, w1) of a docno: w0 / w1 pack its first / next 8 bytes, so that for docnos of
    at most 16 bytes (w0, w1, length) *is* the docno and hash-table matches need no byte
    comparison.  The hash folds every 8-byte word in with one multiply (the word-at-a-time run
    scanner computes the same key from whole words: :func:`uefast.io._words._docno_key`)."""
    h = _U(14695981039346656037)
    w = _U(0)
    w0 = _U(0)
    w1 = _U(0)
    k = 0
    c8 = 0
    for b in range(s, e):
        w = (w << _U(8)) | _U(data[b])
        k += 1
        if k == 8:
            if c8 == 0:
                w0 = w
            elif c8 == 1:
                w1 = w
            c8 += 1
            h = (h ^ w) * _U(0x9E3779B97F4A7C15)
            h = h ^ (h >> _U(29))
            w = _U(0)
            k = 0
    if k > 0:
        if c8 == 0:
            w0 = w
        elif c8 == 1:
            w1 = w
    h = (h ^ w ^ (_U(e - s) << _U(56))) * _U(0x9E3779B97F4A7C15)
    return h ^ (h >> _U(32)), w0, w1


@nb.njit(cache=True, nogil=True)
def dkey_rows(data, starts, ends):
    n = starts.size
    h = np.empty(n, np.uint64)
    w0 = np.empty(n, np.uint64)
    w1 = np.empty(n, np.uint64)
    for i in range(n):
        h[i], w0[i], w1[i] = _dkey(data, starts[i], ends[i])
    return h, w0, w1


# A slot of a (w0, w1, meta) table: the docno's first two little-endian words, then
# meta = row << 24 | code << 16 | min(length, 0xFFFF). ``code`` is the row's relevance value as
# :func:`uefast.io._topics.rel_code` packs it (0 where the table holds no labels), read from the
# slot that the probe has just loaded (the label array, indexed by row, missed the cache: ~9% of
# the one-pass scan).
_ROW_SHIFT = _U(24)


@_no_rc
def _wfind(tab, base, mask, h, w0, w1, ln, r_data, r_s, r_e, data, s, e):
    """Find the docno in a (w0, w1, meta) table region: (row or -1, slot)."""
    lm = _U(min(ln, 0xFFFF))
    p = h & mask
    while True:
        j = 3 * (base + np.int64(p))
        m = tab[j + 2]
        if m == _EMPTY:
            return -1, p
        if tab[j] == w0 and tab[j + 1] == w1 and (m & _U(0xFFFF)) == lm:
            r = np.int64(m >> _ROW_SHIFT)
            if ln <= 16 or _eqb(r_data, r_s[r], r_e[r], data, s, e):
                return r, p
        p = (p + _U(1)) & mask


@_no_rc
def _wput(tab, base, p, w0, w1, ln, row, code):
    """Put a docno (words w0, w1, length ln) of row ``row`` (< 2**39) with relevance code
    ``code`` (0..255) in slot p."""
    j = 3 * (base + np.int64(p))
    tab[j] = w0
    tab[j + 1] = w1
    tab[j + 2] = (_U(row) << _ROW_SHIFT) | (_U(code) << _U(16)) | _U(min(ln, 0xFFFF))


@_no_rc
def _wcode(tab, base, p):
    """The relevance code kept in slot p (see ``_ROW_SHIFT``)."""
    return np.int64((tab[3 * (base + np.int64(p)) + 2] >> _U(16)) & _U(0xFF))


@nb.njit(cache=True, nogil=True)
def fnv_rows(data, starts, ends):
    n = starts.size
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _fnv(data, starts[i], ends[i])
    return out


def _cap(n):
    c = 16
    while c < 2 * n:
        c *= 2
    return c


@nb.njit(cache=True, nogil=True)
def build_table(code, dh, data, starts, ends, cap):
    """Table of rows keyed by (code, string); returns (slots, keys, dup_j) where dup_j is the
    first row whose key was already present (-1: none)."""
    slots = np.full(cap, -1, np.int64)
    keys = np.zeros(cap, np.uint64)
    mask = _U(cap - 1)
    for i in range(code.size):
        k = _key(code[i], dh[i])
        p = k & mask
        while True:
            r = slots[p]
            if r < 0:
                slots[p] = i
                keys[p] = k
                break
            if keys[p] == k and code[r] == code[i] and _eqb(data, starts[r], ends[r], data, starts[i], ends[i]):
                return slots, keys, i
            p = (p + _U(1)) & mask
    return slots, keys, -1


@_no_rc
def _probe(slots, keys, r_code, r_data, r_s, r_e, code, k, data, s, e):
    mask = _U(slots.size - 1)
    p = k & mask
    while True:
        r = slots[p]
        if r < 0:
            return -1
        if keys[p] == k and r_code[r] == code and _eqb(r_data, r_s[r], r_e[r], data, s, e):
            return r
        p = (p + _U(1)) & mask


@nb.njit(cache=True, nogil=True)
def topic_codes(data, starts, ends, t_data, t_s, t_e, t_slots, t_keys):
    """Topic code of each row (-1: not a topic of the table); consecutive equal qids hashed once."""
    n = starts.size
    out = np.empty(n, np.int64)
    zero = np.zeros(t_s.size, np.int64)
    ps, pe, pc = np.int64(-1), np.int64(-1), np.int64(-1)
    for i in range(n):
        s, e = starts[i], ends[i]
        if ps >= 0 and _eqb(data, ps, pe, data, s, e):
            out[i] = pc
            continue
        k = _key(np.int64(0), _fnv(data, s, e))  # int64: one compiled _key, not a literal too
        pc = _probe(t_slots, t_keys, zero, t_data, t_s, t_e, 0, k, data, s, e)
        ps, pe = s, e
        out[i] = pc
    return out
