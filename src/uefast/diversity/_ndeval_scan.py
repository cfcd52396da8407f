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


@nb.njit(cache=True, nogil=True, inline="always")
def _split_line(buf, i, fs, fe):
    """The whitespace-separated fields of the line starting at ``buf[i]``: their bounds into
    ``fs``/``fe`` (the first ``fs.size``), returned as (index past the line's newline, field count);
    the count is -1 at a non-ASCII byte (the fast scanners leave such files to the general
    readers)."""
    n_buf = buf.size
    cap = fs.size
    k = 0
    while True:
        while i < n_buf and buf[i] != 10 and _space(buf[i]):
            i += 1
        if i >= n_buf or buf[i] == 10:
            break
        s = i
        while i < n_buf and not _space(buf[i]):
            if buf[i] >= 128:
                return i, -1
            i += 1
        if k < cap:
            fs[k] = s
            fe[k] = i
        k += 1
    return i + 1, k


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
    when a line is not taken or a docno repeats within a topic (the caller falls back to the
    general reader, which raises the error)."""
    n_buf = buf.size
    cap = n_buf // 12 + 2  # a line of six fields takes at least 12 bytes
    size = 1
    while size < 2 * cap:
        size *= 2
    seen = np.zeros(size, np.int64)  # (topic, docno) -> line + 1, for repeated docnos
    smask = nb.uint64(size - 1)
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
        i, k = _split_line(buf, i, fs, fe)  # one line: up to 6 fields kept
        if k < 0:
            return False, 0, topic, rank, dhash, ds, de, row, rid_s, rid_e
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
        key = _mix(h, t)
        p = key & smask
        while seen[p] != 0:
            q = seen[p] - 1
            if dhash[q] == key and topic[q] == t and de[q] - ds[q] == fe[2] - fs[2]:
                same = True
                for b in range(fe[2] - fs[2]):
                    if buf[ds[q] + b] != buf[fs[2] + b]:
                        same = False
                        break
                if same:
                    return False, 0, topic, rank, dhash, ds, de, row, rid_s, rid_e
            p = (p + nb.uint64(1)) & smask
        seen[p] = n + 1
        topic[n] = t
        rank[n] = r
        dhash[n] = key
        ds[n] = fs[2]
        de[n] = fe[2]
        row[n] = _lookup(tab, data, starts, ends, topics, buf, fs[2], fe[2], h, t)
        n += 1
    return True, n, topic, rank, dhash, ds, de, row, rid_s, rid_e


@nb.njit(cache=True, nogil=True)
def scan_qrels(buf):
    """ndeval qrels lines ``topic subtopic docno judgment`` (natural numbers; judgment > 1 -> 1):
    (ok, n, topic, sub, ds, de, judgment, hash of (topic, docno)); ``ok`` False for a line it
    does not take (the caller then uses the general reader, which raises the error)."""
    n_buf = buf.size
    cap = n_buf // 8 + 2  # a line of four fields takes at least 8 bytes
    topic = np.empty(cap, np.int64)
    sub = np.empty(cap, np.int64)
    ds = np.empty(cap, np.int64)
    de = np.empty(cap, np.int64)
    jd = np.empty(cap, np.int64)
    hh = np.empty(cap, np.uint64)
    fs = np.empty(4, np.int64)
    fe = np.empty(4, np.int64)
    n = 0
    i = 0
    while i < n_buf:
        i, k = _split_line(buf, i, fs, fe)
        if k < 0:
            return False, 0, topic, sub, ds, de, jd, hh
        if k == 0 or buf[fs[0]] == 35:
            continue
        if k != 4:
            return False, 0, topic, sub, ds, de, jd, hh
        t = _natural(buf, fs[0], fe[0])
        st = _natural(buf, fs[1], fe[1])
        j = _natural(buf, fs[3], fe[3])
        if t < 0 or st < 0 or j < 0:
            return False, 0, topic, sub, ds, de, jd, hh
        topic[n] = t
        sub[n] = st
        ds[n] = fs[2]
        de[n] = fe[2]
        jd[n] = 1 if j > 1 else j
        hh[n] = _mix(_fnv(buf, fs[2], fe[2]), t)
        n += 1
    return True, n, topic, sub, ds, de, jd, hh


@nb.njit(cache=True, nogil=True)
def _less(buf, t, s, e, a, b):
    """(topic, docno bytes) of line a before line b."""
    if t[a] != t[b]:
        return t[a] < t[b]
    la = e[a] - s[a]
    lb = e[b] - s[b]
    for i in range(min(la, lb)):
        x = buf[s[a] + i]
        y = buf[s[b] + i]
        if x != y:
            return x < y
    return la < lb


@nb.njit(cache=True, nogil=True)
def sort_docs(buf, t, s, e, idx):
    """``idx`` sorted by (topic, docno bytes): a bottom-up merge sort (stable)."""
    n = idx.size
    a = idx.copy()
    tmp = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _less(buf, t, s, e, a[j], a[i]):
                    tmp[k] = a[j]
                    j += 1
                else:
                    tmp[k] = a[i]
                    i += 1
                k += 1
            while i < mid:
                tmp[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                tmp[k] = a[j]
                j += 1
                k += 1
        a, tmp = tmp, a
        width *= 2
    return a


@nb.njit(cache=True, nogil=True)
def same_bytes(buf, s, e, a, b):
    if e[a] - s[a] != e[b] - s[b]:
        return False
    for i in range(e[a] - s[a]):
        if buf[s[a] + i] != buf[s[b] + i]:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def doc_groups(buf, t, s, e, hh, order):
    """Over lines sorted by (topic, docno hash): the document id of each line (equal (topic,
    docno) -> one id) in that order, or -1 everywhere on a hash collision of different docnos
    that are not adjacent (the caller falls back)."""
    n = order.size
    gid = np.empty(n, np.int64)
    g = -1
    for k in range(n):
        a = order[k]
        if k > 0:
            b = order[k - 1]
            if t[a] == t[b] and hh[a] == hh[b]:
                if same_bytes(buf, s, e, a, b):
                    gid[k] = g
                    continue
                gid[:] = -1
                return gid
        g += 1
        gid[k] = g
    return gid
