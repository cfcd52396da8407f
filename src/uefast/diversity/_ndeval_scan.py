"""One Numba pass over an ndeval qrels or run file (``uefast ndeval``), without building strings.

Run lines (rank order, no score needed): the topic number (ndeval's parseTopic), the rank (a
natural number) and the docno, whose hash (64-bit, eight bytes per multiply, the topic mixed in)
does a single probe of the qrels' document table: the judged row, or -1 for a docno the qrels do
not hold for that topic. ndeval's duplicate-docno check uses a small table per topic block (a
stamp per slot marks the block, so nothing is cleared between topics; it stays in cache). A
topic that comes back after another topic's lines makes the scan report it, and the caller scans
again with one table over the whole file. Lines it does not take as is (a bad topic or rank,
fewer than six fields, a non-ASCII byte) make it give up, and the caller reads the file the
general way (:func:`uefast.io.read_run`), which raises the error naming the line.

Qrels lines ``topic subtopic docno judgment``: the same field scanner; each (topic, docno) gets
a document id from the same kind of table (which then serves the run scans)."""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast._intrinsics import _load_le64
from uefast.io._words import _fend, _plain

LARGE_ENOUGH = 100000

# byte classes: 0 field byte, 1 blank (space, \t, \v, \f, \r), 2 newline, 3 non-ASCII
_CLS = np.zeros(256, np.uint8)
_CLS[[9, 11, 12, 13, 32]] = 1
_CLS[10] = 2
_CLS[128:] = 3

_P1 = np.uint64(0x9E3779B97F4A7C15)
_P2 = np.uint64(0xBF58476D1CE4E5B9)
_P3 = np.uint64(0x94D049BB133111EB)
_K01 = np.uint64(0x0101010101010101)
_K10 = np.uint64(0x0A0A0A0A0A0A0A0A)
_K80 = np.uint64(0x8080808080808080)
OK, FAIL, RESCAN = 0, 1, 2


@nb.njit(cache=True, nogil=True, inline="always")
def _field(buf, i, n, plain):
    """From ``buf[i]``: skip blanks (not the newline), then one field: (start, end); start ==
    end when the line or the file ends first; end == -1 at a non-ASCII byte. ``plain`` (the
    file passed :func:`uefast.io._words._plain`: ASCII, the only bytes <= 32 are whitespace):
    the field's end found eight bytes at a time (SWAR), else byte by byte."""
    while i < n and _CLS[buf[i]] == 1:
        i += 1
    s = i
    if plain:
        return s, _fend(buf, i, n)
    while i < n and _CLS[buf[i]] == 0:
        i += 1
    if i < n and _CLS[buf[i]] == 3:
        return s, -1
    return s, i


@nb.njit(cache=True, nogil=True, inline="always")
def _eol(buf, i, n):
    """Index past the newline that ends the line holding ``buf[i]`` (n at the end of the file),
    -1 at a non-ASCII byte on the way. Eight bytes at a time while none is a newline or
    non-ASCII (SWAR zero-byte test on x ^ 0x0A..), then byte by byte."""
    while i + 8 <= n:
        x = _load_le64(buf, i)
        y = x ^ _K10
        if (((y - _K01) & ~y) | x) & _K80 != nb.uint64(0):
            break
        i += 8
    while i < n:
        c = _CLS[buf[i]]
        if c == 2:
            return i + 1
        if c == 3:
            return -1
        i += 1
    return n


@nb.njit(cache=True, nogil=True, inline="always")
def doc_hash(buf, s, e, topic):
    """64-bit hash of (topic, ``buf[s:e]``): eight bytes per multiply-xorshift step (unaligned
    little-endian loads; a name of 8 bytes or more ends with the word of its last eight bytes,
    which may overlap the previous one), then a splitmix64 finaliser."""
    L = e - s
    h = (nb.uint64(topic) * _P1) ^ nb.uint64(L)
    if L >= 8:
        i = s
        while i + 8 < e:
            h = (h ^ _load_le64(buf, i)) * _P2
            h ^= h >> nb.uint64(31)
            i += 8
        w = _load_le64(buf, e - 8)
    else:
        w = nb.uint64(0)
        for k in range(L):
            w |= nb.uint64(buf[s + k]) << nb.uint64(8 * k)
    h = (h ^ w) * _P2
    h ^= h >> nb.uint64(30)
    h *= _P3
    return h ^ (h >> nb.uint64(31))


@nb.njit(cache=True, nogil=True, inline="always")
def _natural(buf, s, e):
    """ndeval's naturalNumber: digits only, -1 otherwise (or past LARGE_ENOUGH before a digit)."""
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


@nb.njit(cache=True, nogil=True, inline="always")
def _topic(buf, s, e):
    """ndeval's parseTopic: a natural number, or the one after the first '-' (``wt09-12``)."""
    if s < e and 48 <= buf[s] <= 57:
        return _natural(buf, s, e)
    while s < e and buf[s] != 45:  # '-'
        s += 1
    return _natural(buf, s + 1, e) if s < e else -1


@nb.njit(cache=True, nogil=True)
def new_table(cap, start=4096):
    """An empty open-addressing table with room for ``cap`` names, one array per field: per
    slot a stamp (0 empty), the key, the byte start and length of the name, a value and the
    topic. The arrays are allocated once at their largest size and used as a growing
    power-of-two prefix (the first ``start`` slots, stamps zeroed), so that the scanning loops
    never reassign them (Numba counts references on arrays reassigned in a loop, at every
    iteration) and untouched memory costs nothing."""
    size = 16
    while size < 2 * cap + 2:
        size *= 2
    st = np.empty(size, np.int64)
    st[:min(start, size)] = 0
    return (st, np.empty(size, np.uint64), np.empty(size, np.int64),
            np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64))


@nb.njit(cache=True, nogil=True)
def _rehash(st, ky, ss, ll, vv, tt, size, stamp, hi):
    """Move the entries of ``stamp`` in the prefix of ``size`` slots to their places in the
    prefix of 2 * ``size`` slots (other stamps are stale: free slots); ``hi``: the slots whose
    stamps are initialised (zeroed here up to 2 * ``size``). Returns the new ``hi``."""
    if hi < 2 * size:
        st[hi:2 * size] = 0
        hi = 2 * size
    idx = np.flatnonzero(st[:size] == stamp)
    k, s, l, v, t = ky[idx], ss[idx], ll[idx], vv[idx], tt[idx]
    st[idx] = 0
    mask = nb.uint64(2 * size - 1)
    for j in range(idx.size):
        q = k[j] & mask
        while st[q] == stamp:
            q = (q + nb.uint64(1)) & mask
        st[q], ky[q], ss[q], ll[q], vv[q], tt[q] = stamp, k[j], s[j], l[j], v[j], t[j]
    return hi


@nb.njit(cache=True, nogil=True, inline="always")
def _find(st, ky, ss, ll, tt, mask, stamp, key, names, buf, s, L, t):
    """Slot of (topic ``t``, ``buf[s:s+L]``) with hash ``key`` among the entries of ``stamp``
    (their names in ``names``) in the prefix ``mask + 1`` slots, or -(free slot) - 1."""
    p = key & mask
    while st[p] == stamp:
        if ky[p] == key and ll[p] == L and tt[p] == t:
            o = ss[p]
            same = True
            for b in range(L):
                if names[o + b] != buf[s + b]:
                    same = False
                    break
            if same:
                return nb.int64(p)
        p = (p + nb.uint64(1)) & mask
    return -nb.int64(p) - 1


@nb.njit(cache=True, nogil=True)
def build_table(data, starts, ends, topics):
    """The document table of a compiled qrels: (topic, docno ``data[starts[g]:ends[g]]``) ->
    g, for qrels read by the general reader (the fast reader builds its own while scanning)."""
    n = starts.size
    st, ky, ss, ll, vv, tt = new_table(n, 1 << 62)
    mask = nb.uint64(st.size - 1)
    for g in range(n):
        L = ends[g] - starts[g]
        key = doc_hash(data, starts[g], ends[g], topics[g])
        p = _find(st, ky, ss, ll, tt, mask, 1, key, data, data, starts[g], L, topics[g])
        if p < 0:
            p = -p - 1
            st[p], ky[p], ss[p], ll[p], vv[p], tt[p] = 1, key, starts[g], L, g, topics[g]
    return st, ky, ss, ll, vv, tt


@nb.njit(cache=True, nogil=True)
def scan(buf, qtab, qnames, dlocal, per_block):
    """Returns (status, n, topic, rank, row, in_order, runid start, runid end): ``status`` OK,
    FAIL (a line not taken, or a docno twice in a topic: the caller uses the general reader,
    which raises the error) or RESCAN (``per_block`` and a topic's lines are not contiguous: scan
    again with ``per_block`` False). ``row`` = the topic-local judged row (``dlocal`` of the
    qrels document, -1 when not judged); ``in_order``: lines already in (topic, rank) order."""
    n_buf = buf.size
    cap = n_buf // 12 + 2  # a line of six fields takes at least 12 bytes
    topic = np.empty(cap, np.int64)
    rank = np.empty(cap, np.int64)
    row = np.empty(cap, np.int64)
    btop = np.empty(cap, np.int64)  # topic of each block of lines
    plain = _plain(buf)
    qst, qky, qss, qll, qvv, qtt = qtab
    qmask = nb.uint64(qst.size - 1)
    st, ky, ss, ll, vv, tt = new_table(cap)  # docnos seen (ndeval's duplicate check)
    size = hi = min(st.size, 4096)
    stamp = 0
    in_block = 0
    nb_ = 0
    rid_s = -1
    rid_e = -1
    in_order = True
    n = 0
    i = 0
    prev = -1
    while i < n_buf:
        s0, e0 = _field(buf, i, n_buf, plain)
        if e0 < 0:
            return FAIL, 0, topic, rank, row, in_order, rid_s, rid_e
        if s0 == e0:  # blank line or end of file
            i = s0 + 1
            continue
        if buf[s0] == 35:  # '#' line: read_run skips it too
            i = _eol(buf, e0, n_buf)
            if i < 0:
                return FAIL, 0, topic, rank, row, in_order, rid_s, rid_e
            continue
        s1, e1 = _field(buf, e0, n_buf, plain)
        s2, e2 = _field(buf, e1, n_buf, plain)
        s3, e3 = _field(buf, e2, n_buf, plain)
        s4, e4 = _field(buf, e3, n_buf, plain)
        s5, e5 = _field(buf, e4, n_buf, plain)
        if min(e1, e2, e3, e4, e5) < 0 or s5 == e5 or s4 == e4 or s3 == e3 or s2 == e2 or s1 == e1:
            return FAIL, 0, topic, rank, row, in_order, rid_s, rid_e
        i = _eol(buf, e5, n_buf)
        t = _topic(buf, s0, e0)
        r = _natural(buf, s3, e3)
        if i < 0 or t < 0 or r < 0:
            return FAIL, 0, topic, rank, row, in_order, rid_s, rid_e
        if rid_s < 0:
            rid_s = s5
            rid_e = e5
        if t != prev:
            if t < prev:
                in_order = False
            if per_block or stamp == 0:
                stamp += 1
                in_block = 0
            btop[nb_] = t
            nb_ += 1
            prev = t
        elif r <= rank[n - 1]:
            in_order = False
        L = e2 - s2
        key = doc_hash(buf, s2, e2, t)
        if 2 * (in_block + 1) > size:
            hi = _rehash(st, ky, ss, ll, vv, tt, size, stamp, hi)
            size *= 2
        p = _find(st, ky, ss, ll, tt, nb.uint64(size - 1), stamp, key, buf, buf, s2, L, t)
        if p >= 0:
            return FAIL, 0, topic, rank, row, in_order, rid_s, rid_e
        p = -p - 1
        st[p], ky[p], ss[p], ll[p], tt[p] = stamp, key, s2, L, t
        in_block += 1
        q = _find(qst, qky, qss, qll, qtt, qmask, 1, key, qnames, buf, s2, L, t)
        topic[n] = t
        rank[n] = r
        row[n] = dlocal[qvv[q]] if q >= 0 else -1
        n += 1
    if per_block and nb_ > 1:
        b = np.sort(btop[:nb_])
        for k in range(1, nb_):
            if b[k] == b[k - 1]:
                return RESCAN, 0, topic, rank, row, in_order, rid_s, rid_e
    return OK, n, topic, rank, row, in_order, rid_s, rid_e


@nb.njit(cache=True, nogil=True)
def scan_qrels(buf):
    """ndeval qrels lines ``topic subtopic docno judgment`` (natural numbers; judgment > 1 -> 1):
    (ok, n, topic, sub, judgment, doc id per line, G documents, their topic, start and end, the
    document table); ``ok`` False for a line it does not take (the caller then uses the general
    reader, which raises the error). Document ids number the distinct (topic, docno) pairs in
    order of first appearance."""
    n_buf = buf.size
    cap = n_buf // 8 + 2  # a line of four fields takes at least 8 bytes
    topic = np.empty(cap, np.int64)
    sub = np.empty(cap, np.int64)
    jd = np.empty(cap, np.int64)
    gid = np.empty(cap, np.int64)
    dtop = np.empty(cap, np.int64)
    dst = np.empty(cap, np.int64)
    den = np.empty(cap, np.int64)
    st, ky, ss, ll, vv, tt = new_table(cap)
    size = hi = min(st.size, 4096)
    plain = _plain(buf)
    G = 0
    n = 0
    i = 0
    ok = True
    while i < n_buf:
        s0, e0 = _field(buf, i, n_buf, plain)
        if e0 < 0:
            ok = False
            break
        if s0 == e0:
            i = s0 + 1
            continue
        if buf[s0] == 35:
            i = _eol(buf, e0, n_buf)
            if i < 0:
                ok = False
                break
            continue
        s1, e1 = _field(buf, e0, n_buf, plain)
        s2, e2 = _field(buf, e1, n_buf, plain)
        s3, e3 = _field(buf, e2, n_buf, plain)
        s4, e4 = _field(buf, e3, n_buf, plain)
        if min(e1, e2, e3, e4) < 0 or s4 != e4 or s3 == e3 or s2 == e2 or s1 == e1:
            ok = False
            break
        i = s4 + 1
        t = _natural(buf, s0, e0)
        sb = _natural(buf, s1, e1)
        j = _natural(buf, s3, e3)
        if t < 0 or sb < 0 or j < 0:
            ok = False
            break
        L = e2 - s2
        key = doc_hash(buf, s2, e2, t)
        if 2 * (G + 1) > size:
            hi = _rehash(st, ky, ss, ll, vv, tt, size, 1, hi)
            size *= 2
        p = _find(st, ky, ss, ll, tt, nb.uint64(size - 1), 1, key, buf, buf, s2, L, t)
        if p >= 0:
            g = vv[p]
        else:
            g = G
            p = -p - 1
            st[p], ky[p], ss[p], ll[p], vv[p], tt[p] = 1, key, s2, L, g, t
            dtop[g] = t
            dst[g] = s2
            den[g] = e2
            G += 1
        topic[n] = t
        sub[n] = sb
        jd[n] = 1 if j > 1 else j
        gid[n] = g
        n += 1
    if not ok:
        n = G = size = 0
    return (ok, n, topic, sub, jd, gid, G, dtop, dst, den,
            (st[:size], ky[:size], ss[:size], ll[:size], vv[:size], tt[:size]))


@nb.njit(cache=True, nogil=True)
def name_words(buf, s, e):
    """Each name ``buf[s[g]:e[g]]`` as big-endian 64-bit words (zero padded), shape (W, G): with
    the length as the last key, lexicographic order of the words = byte order of the names."""
    G = s.size
    mx = 0
    for g in range(G):
        mx = max(mx, e[g] - s[g])
    W = max((mx + 7) // 8, 1)
    out = np.zeros((W, G), np.uint64)
    for g in range(G):
        for b in range(e[g] - s[g]):
            w = b // 8
            out[w, g] |= nb.uint64(buf[s[g] + b]) << nb.uint64(8 * (7 - b % 8))
    return out
