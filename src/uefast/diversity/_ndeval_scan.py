"""One Numba pass over a run file for ``uefast ndeval`` (rank order, no score needed): per line
the topic number (ndeval's parseTopic), the rank (a natural number), the docno's 64-bit FNV-1a
hash and its byte range, and the docno's judged row found in a hash table of the qrels'
(topic, docno) pairs, without building strings. Lines it does not take as is (a bad topic or
rank, fewer than six fields, non-ASCII bytes) make it give up, and the caller reads the file the
general way (:func:`uefast.io.read_run`), which raises the error naming the line."""
from __future__ import annotations

import numba as nb
import numpy as np

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
LARGE_ENOUGH = 100000


@nb.njit(cache=True, nogil=True, inline="always")
def _space(c):
    return c == 32 or (9 <= c <= 13)


@nb.njit(cache=True, nogil=True)
def _fnv(buf, s, e):
    h = FNV_OFFSET
    for i in range(s, e):
        h = (h ^ nb.uint64(buf[i])) * FNV_PRIME
    return h


@nb.njit(cache=True, nogil=True)
def _mix(h, topic):
    x = h ^ (nb.uint64(topic) * nb.uint64(0x9E3779B97F4A7C15))
    x ^= x >> nb.uint64(29)
    return x * nb.uint64(0xBF58476D1CE4E5B9)


@nb.njit(cache=True, nogil=True)
def _natural(buf, s, e):
    if s >= e:
        return -1
    v = 0
    for i in range(s, e):
        c = buf[i]
        if 48 <= c <= 57:
            if v > LARGE_ENOUGH:
                return -1
            v = 10 * v + (c - 48)
        else:
            return -1
    return v


@nb.njit(cache=True, nogil=True)
def _topic(buf, s, e):
    if s < e and 48 <= buf[s] <= 57:
        return _natural(buf, s, e)
    while s < e and buf[s] != 45:  # '-'
        s += 1
    return _natural(buf, s + 1, e) if s < e else -1


@nb.njit(cache=True, nogil=True)
def build_table(data, starts, ends, topics):
    """Open-addressing table of (topic, docno) -> row + 1 (0 empty), size a power of two."""
    n = starts.size
    size = 1
    while size < 2 * n + 2:
        size *= 2
    tab = np.zeros(size, np.int64)
    mask = nb.uint64(size - 1)
    for g in range(n):
        p = _mix(_fnv(data, starts[g], ends[g]), topics[g]) & mask
        while tab[p] != 0:
            p = (p + nb.uint64(1)) & mask
        tab[p] = g + 1
    return tab


@nb.njit(cache=True, nogil=True)
def _lookup(tab, data, starts, ends, topics, buf, s, e, h, topic):
    mask = nb.uint64(tab.size - 1)
    p = _mix(h, topic) & mask
    L = e - s
    while tab[p] != 0:
        g = tab[p] - 1
        if topics[g] == topic and ends[g] - starts[g] == L:
            same = True
            for i in range(L):
                if data[starts[g] + i] != buf[s + i]:
                    same = False
                    break
            if same:
                return g
        p = (p + nb.uint64(1)) & mask
    return -1


@nb.njit(cache=True, nogil=True)
def scan(buf, tab, data, starts, ends, topics):
    """Returns (ok, n, topic, rank, dhash, ds, de, row, runid start, runid end); ``ok`` False
    when a line is not taken (the caller falls back)."""
    n_buf = buf.size
    cap = n_buf // 12 + 2  # a line of six fields takes at least 12 bytes
    topic = np.empty(cap, np.int64)
    rank = np.empty(cap, np.int64)
    dhash = np.empty(cap, np.uint64)
    ds = np.empty(cap, np.int64)
    de = np.empty(cap, np.int64)
    row = np.empty(cap, np.int64)
    rid_s = -1
    rid_e = -1
    n = 0
    i = 0
    fs = np.empty(6, np.int64)
    fe = np.empty(6, np.int64)
    while i < n_buf:
        # one line: up to 6 fields
        k = 0
        while True:
            while i < n_buf and buf[i] != 10 and _space(buf[i]):
                i += 1
            if i >= n_buf or buf[i] == 10:
                break
            s = i
            while i < n_buf and not _space(buf[i]):
                if buf[i] >= 128:
                    return False, 0, topic, rank, dhash, ds, de, row, rid_s, rid_e
                i += 1
            if k < 6:
                fs[k] = s
                fe[k] = i
            k += 1
        i += 1  # past '\n'
        if k == 0 or buf[fs[0]] == 35:  # blank or '#' line: read_run skips it too
            continue
        if k < 6:
            return False, 0, topic, rank, dhash, ds, de, row, rid_s, rid_e
        t = _topic(buf, fs[0], fe[0])
        r = _natural(buf, fs[3], fe[3])
        if t < 0 or r < 0:
            return False, 0, topic, rank, dhash, ds, de, row, rid_s, rid_e
        if rid_s < 0:
            rid_s = fs[5]
            rid_e = fe[5]
        h = _fnv(buf, fs[2], fe[2])
        topic[n] = t
        rank[n] = r
        dhash[n] = _mix(h, t)  # (topic, docno) key: equal keys are checked bytewise
        ds[n] = fs[2]
        de[n] = fe[2]
        row[n] = _lookup(tab, data, starts, ends, topics, buf, fs[2], fe[2], h, t)
        n += 1
    return True, n, topic, rank, dhash, ds, de, row, rid_s, rid_e
