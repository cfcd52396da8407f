"""Ordering and per-topic tables for the TREC fast path: runs ordered by topic, score
descending and docno descending (bytes); qrels rows grouped by topic with one small
open-addressing table per topic, so a run grouped by topic too is joined inside the cache."""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.io._hashtab import (  # noqa: F401
    _EMPTY,
    _dkey,
    _eqb,
    _fnv,
    _key,
    _mix,
    _probe,
    _wfind,
    _wput,
)
from uefast.io._words import _docno_key
from uefast.kernels.grouping import counting_sort
from uefast.kernels.threads import run_chunks

_U = np.uint64

# --------------------------------------------------------------------------------------------
# Ordering: topic, score descending, docno descending (bytes)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _cmpb(data, s, e, i, j):
    a0, a1, b0, b1 = s[i], e[i], s[j], e[j]
    la, lb = a1 - a0, b1 - b0
    for k in range(min(la, lb)):
        x, y = data[a0 + k], data[b0 + k]
        if x != y:
            return 1 if x > y else -1
    if la == lb:
        return 0
    return 1 if la > lb else -1


@nb.njit(cache=True, nogil=True, _nrt=False)
def _lex(w0, w1, ln):
    """A docno's first 16 bytes as two big-endian words padded with zero bytes on the right (the
    words of :func:`uefast.io._hashtab._dkey` are right-aligned). Where two docnos' pairs
    differ, unsigned comparison of the pairs agrees with :func:`_cmpb`: the first differing byte
    decides, and a zero pad byte is never above a real byte (a longer docno with the shorter as
    prefix is greater in both)."""
    if ln >= 16:
        return w0, w1
    if ln > 8:
        return w0, w1 << _U(8 * (16 - ln))
    if ln == 8:
        return w0, _U(0)
    return w0 << _U(8 * (8 - ln)), _U(0)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _cmpw(data, s, e, w0, w1, i, j):
    """:func:`_cmpb` of rows i and j, decided by their packed words (:func:`_lex`) unless the
    first 16 bytes are equal; bytes only when no words are given (``w0`` empty)."""
    if w0.size == 0:
        return _cmpb(data, s, e, i, j)
    a0, a1 = _lex(w0[i], w1[i], e[i] - s[i])
    b0, b1 = _lex(w0[j], w1[j], e[j] - s[j])
    if a0 != b0:
        return 1 if a0 > b0 else -1
    if a1 != b1:
        return 1 if a1 > b1 else -1
    return _cmpb(data, s, e, i, j)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _merge_runs(src, dst, bnd, nr, data, s, e, w0, w1):
    """One pass of a natural merge sort: runs ``src[bnd[k]:bnd[k + 1]]`` (each in docno
    descending order) merged in pairs into ``dst``, stably (on equal docnos the left run's row
    first); ``bnd`` then holds the new runs. Returns their number."""
    k = 0
    j = 0
    while k < nr:
        lo = bnd[k]
        if k + 1 < nr:
            mid, hi = bnd[k + 1], bnd[k + 2]
            a, b, o = lo, mid, lo
            while a < mid and b < hi:
                if _cmpw(data, s, e, w0, w1, src[a], src[b]) >= 0:
                    dst[o] = src[a]
                    a += 1
                else:
                    dst[o] = src[b]
                    b += 1
                o += 1
            while a < mid:
                dst[o] = src[a]
                a += 1
                o += 1
            while b < hi:
                dst[o] = src[b]
                b += 1
                o += 1
            k += 2
        else:
            hi = bnd[k + 1]
            for o in range(lo, hi):
                dst[o] = src[o]
            k += 1
        bnd[j] = lo
        j += 1
    bnd[j] = bnd[nr]
    return j


@nb.njit(cache=True, nogil=True)
def _sort_ties(seg, tmp, data, s, e, w0, w1):
    """Sort ``seg`` (row ids) by docno descending, stably, comparing the rows' packed words
    ``w0`` / ``w1`` (:func:`uefast.io._hashtab._dkey`) first where they are given (:func:`_cmpw`;
    the 17 Robust runs: 155 -> 152 ms for the one-pass scan).

    A natural merge sort: maximal runs already in order (non-increasing) are kept, strictly
    ascending runs reversed, then runs are merged in pairs. Systems list tied documents in some
    order of their own, most often ascending (7381 of MU03rob01's 7401 tied groups; rutcor03100's
    long groups are 2-5 ascending runs, one per collection), which this sorts in one or a few
    passes: the one-pass scan of the 17 runs 164 -> 156 ms (was a merge sort of every group of
    more than 16 rows, an insertion sort below)."""
    if seg.size >= 2:
        _sort_ties_into(seg, tmp, np.empty(seg.size + 1, np.int64), data, s, e, w0, w1)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _sort_ties_into(seg, tmp, bnd, data, s, e, w0, w1):
    """:func:`_sort_ties` with room for the run bounds given (``bnd``: m + 1). Allocates nothing,
    so it is compiled without reference counting (``_nrt=False``): the comparisons
    otherwise count references on their array arguments at every call (atomic operations)."""
    m = seg.size
    nr = 0
    a = 0
    while a < m:
        b = a + 1
        if b < m and _cmpw(data, s, e, w0, w1, seg[a], seg[b]) < 0:  # strictly ascending: reversed
            while b + 1 < m and _cmpw(data, s, e, w0, w1, seg[b], seg[b + 1]) < 0:
                b += 1
            b += 1
            for k in range((b - a) // 2):
                seg[a + k], seg[b - 1 - k] = seg[b - 1 - k], seg[a + k]
        else:
            while b < m and _cmpw(data, s, e, w0, w1, seg[b - 1], seg[b]) >= 0:
                b += 1
        bnd[nr] = a
        nr += 1
        a = b
    bnd[nr] = m
    dst = tmp[:m]
    in_tmp = False
    while nr > 1:
        # one call site (it was two copies when _merge_runs was inlined at IR level)
        src, out = (dst, seg) if in_tmp else (seg, dst)
        nr = _merge_runs(src, out, bnd, nr, data, s, e, w0, w1)
        in_tmp = not in_tmp
    if in_tmp:
        for k in range(m):
            seg[k] = dst[k]


@nb.njit(cache=True, nogil=True)
def rank_rows(seg, score, tmp, bnd, data, s, e, w0, w1):
    """Order ``seg`` (row ids of one topic, in file order) as trec_eval ranks them
    (``form_res_rels.c``): score descending, ties by docno descending (:func:`_sort_ties`). Runs
    are usually in score order already: that is checked, and then only runs of tied scores are
    sorted (:func:`_sort_tie_groups`); otherwise a stable sort by score comes first. ``tmp`` and
    ``bnd``: scratch of at least ``seg.size`` and ``seg.size + 1`` values."""
    m = seg.size
    srt = True
    for k in range(m - 1):
        if score[seg[k]] < score[seg[k + 1]]:
            srt = False
            break
    if not srt:
        _sort_by_score(seg, score, tmp)
    _sort_tie_groups(seg, score, tmp, bnd, data, s, e, w0, w1)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _sort_by_score(seg, score, tmp):
    """Sort ``seg`` (row ids) by ``score`` descending, stably (equal scores keep their order):
    a bottom-up merge sort through ``tmp`` (>= seg.size), taking the left run's row on equal
    scores. The same order as ``np.argsort(-score[seg], kind="mergesort")``, which compiled
    NumPy's merge sort into the first ``uefast trec_eval`` (~1 s of CPU)."""
    m = seg.size
    src, dst = seg, tmp[:m]
    in_tmp = False
    w = 1
    while w < m:
        for lo in range(0, m, 2 * w):
            mid, hi = min(lo + w, m), min(lo + 2 * w, m)
            a, b, o = lo, mid, lo
            while a < mid and b < hi:
                if score[src[a]] >= score[src[b]]:
                    dst[o] = src[a]
                    a += 1
                else:
                    dst[o] = src[b]
                    b += 1
                o += 1
            while a < mid:
                dst[o] = src[a]
                a += 1
                o += 1
            while b < hi:
                dst[o] = src[b]
                b += 1
                o += 1
        src, dst = dst, src
        in_tmp = not in_tmp
        w *= 2
    if in_tmp:
        for k in range(m):
            seg[k] = src[k]


@nb.njit(cache=True, nogil=True, _nrt=False)
def _sort_tie_groups(seg, score, tmp, bnd, data, s, e, w0, w1):
    """Sort every run of equal scores in ``seg`` (ordered by score) by docno descending
    (:func:`_sort_ties_into`). Allocates nothing: compiled without reference counting, so the
    view of each tied group costs no atomic count (those counts were ~4% of the one-pass scan,
    17 Robust runs: sum of per-file best of 21, 98 -> 93 ms)."""
    m = seg.size
    k = 0
    while k < m:
        k2 = k + 1
        while k2 < m and score[seg[k2]] == score[seg[k]]:
            k2 += 1
        if k2 - k > 1:
            _sort_ties_into(seg[k:k2], tmp, bnd, data, s, e, w0, w1)
        k = k2


@nb.njit(cache=True, nogil=True)
def intern_rows(data, starts, ends):
    """Codes of the strings ``data[starts[i]:ends[i]]`` in order of first appearance, and the
    first row of every distinct string (consecutive equal strings compared, not hashed)."""
    n = starts.size
    code = np.empty(n, np.int64)
    cap = 16
    slots = np.full(cap, -1, np.int64)
    keys = np.zeros(cap, np.uint64)
    first = np.empty(16, np.int64)
    nu = 0
    ps, pe, pc = np.int64(-1), np.int64(-1), np.int64(-1)
    for i in range(n):
        s, e = starts[i], ends[i]
        if ps >= 0 and _eqb(data, ps, pe, data, s, e):
            code[i] = pc
            continue
        k = _mix(_fnv(data, s, e))
        mask = _U(cap - 1)
        p = k & mask
        c = -1
        while True:
            r = slots[p]
            if r < 0:
                break
            f = first[r]
            if keys[p] == k and _eqb(data, starts[f], ends[f], data, s, e):
                c = r
                break
            p = (p + _U(1)) & mask
        if c < 0:
            c = nu
            if nu == first.size:
                nf = np.empty(2 * nu, np.int64)
                for u in range(nu):  # not a slice assignment (uefast.kernels docstring)
                    nf[u] = first[u]
                first = nf
            first[nu] = i
            nu += 1
            slots[p] = c
            keys[p] = k
            if 2 * nu > cap:  # grow and rehash
                cap *= 4
                slots = np.full(cap, -1, np.int64)
                keys = np.zeros(cap, np.uint64)
                mask = _U(cap - 1)
                for u in range(nu):
                    f = first[u]
                    ku = _mix(_fnv(data, starts[f], ends[f]))
                    pu = ku & mask
                    while slots[pu] >= 0:
                        pu = (pu + _U(1)) & mask
                    slots[pu] = u
                    keys[pu] = ku
        code[i] = c
        ps, pe, pc = s, e, c
    return code, first[:nu].copy()




# --------------------------------------------------------------------------------------------
# Per-topic tables: qrels rows grouped by topic, one small open-addressing table per topic, so
# that a run (grouped by topic too) is joined inside the cache.


@nb.njit(cache=True, nogil=True)
def _pow2(m):
    c = 4
    while c < m:
        c *= 2
    return c


@nb.njit(cache=True, nogil=True)
def group_rows(code, nq, data, starts, ends):
    """Rows grouped by code (stable): (perm, row_start per code, gathered bytes, new starts/ends)."""
    n = code.size
    cnt, perm = counting_sort(code, nq)
    total = 0
    for i in range(n):
        total += ends[i] - starts[i]
    out = np.empty(total, np.uint8)
    ns = np.empty(n, np.int64)
    ne = np.empty(n, np.int64)
    p = 0
    for k in range(n):
        i = perm[k]
        ns[k] = p
        for b in range(starts[i], ends[i]):
            out[p] = data[b]
            p += 1
        ne[k] = p
    return perm, cnt, out, ns, ne


@nb.njit(cache=True, nogil=True)
def build_topic_tables(row_start, data, starts, ends, labels):
    """One (w0, w1, meta) table per topic over rows row_start[t]:row_start[t+1], with each row's
    relevance code (:func:`rel_code` of ``labels``, in grouped row order).  Returns (tab,
    slot_start, dup_row): dup_row[t] is topic t's first row (grouped order) whose docno repeats
    within the topic, -1 if none (the table keeps the docno's first row)."""
    nq = row_start.size - 1
    soff = np.zeros(nq + 1, np.int64)
    for t in range(nq):
        m = row_start[t + 1] - row_start[t]
        soff[t + 1] = soff[t] + _pow2(m + (m + 1) // 2)  # load factor 1/3 .. 2/3
    tab = np.full(3 * soff[nq], _EMPTY, np.uint64)
    dup = np.full(nq, -1, np.int64)
    for t in range(nq):
        base = soff[t]
        mask = _U(soff[t + 1] - base - 1)
        for i in range(row_start[t], row_start[t + 1]):
            h, w0, w1 = _docno_key(data, starts[i], ends[i], data.size)  # = _dkey, by words
            ln = ends[i] - starts[i]
            r, p = _wfind(tab, base, mask, h, w0, w1, ln, data, starts, ends, data, starts[i], ends[i])
            if r >= 0:
                if dup[t] < 0:
                    dup[t] = i
            else:
                _wput(tab, base, p, w0, w1, ln, i, rel_code(labels[i]))
    return tab, soff, dup


@nb.njit(cache=True, nogil=True, inline="always")
def _probe_rows(code, data, starts, ends, tab, soff, r_data, r_s, r_e, out, lo, hi):
    for i in range(lo, hi):
        t = code[i]
        if t >= 0:
            h, w0, w1 = _docno_key(data, starts[i], ends[i], data.size)  # = _dkey, by words
            base = soff[t]
            out[i], _ = _wfind(tab, base, _U(soff[t + 1] - base - 1), h, w0, w1, ends[i] - starts[i],
                               r_data, r_s, r_e, data, starts[i], ends[i])


@nb.njit(cache=True, nogil=True)
def probe_topic_rows(code, data, starts, ends, tab, soff, r_data, r_s, r_e):
    """Per row with code >= 0: the qrels row (grouped order) judging the same docno, or -1."""
    out = np.full(code.size, -1, np.int64)
    _probe_rows(code, data, starts, ends, tab, soff, r_data, r_s, r_e, out, 0, code.size)
    return out


def probe_topic_rows_parallel(code, data, starts, ends, tab, soff, r_data, r_s, r_e, nchunks):
    """:func:`probe_topic_rows` over ``nchunks`` row ranges on several threads
    (:func:`~uefast.kernels.threads.run_chunks`)."""
    out = np.full(code.size, -1, np.int64)
    run_chunks(_probe_rows_chunks, nchunks, code, data, starts, ends, tab, soff, r_data, r_s, r_e,
               nchunks, out)
    return out


@nb.njit(cache=True, nogil=True)
def _probe_rows_chunks(c0, c1, code, data, starts, ends, tab, soff, r_data, r_s, r_e, nchunks,
                       out):
    """:func:`probe_topic_rows` for the rows of chunks ``c0 .. c1 - 1`` (of ``nchunks``)."""
    n = code.size
    _probe_rows(code, data, starts, ends, tab, soff, r_data, r_s, r_e, out, n * c0 // nchunks,
                n * c1 // nchunks)


@nb.njit(cache=True, nogil=True)
def run_group(buf, qs, qe, ds, de, dh, dw0, dw1):
    """Group a scanned run by qid (codes in order of first appearance) and detect a repeated
    (qid, docno).  Returns (ok, first row of every qid, group offsets, rows grouped); ok False:
    some docno repeats (the caller then goes through the general reader and its error)."""
    rcode, first = intern_rows(buf, qs, qe)
    nr = first.size
    cnt, byr = counting_sort(rcode, nr)
    maxb = 0
    for u in range(nr):
        maxb = max(maxb, cnt[u + 1] - cnt[u])
    dtab = np.empty(3 * _pow2(2 * maxb), np.uint64)
    zero = np.int64(0)
    for u in range(nr):
        a, b = cnt[u], cnt[u + 1]
        cap = _pow2(2 * (b - a))
        mask = _U(cap - 1)
        dtab[:3 * cap] = _EMPTY
        for k in range(a, b):
            i = byr[k]
            s, e = ds[i], de[i]
            r, p = _wfind(dtab, zero, mask, dh[i], dw0[i], dw1[i], e - s, buf, ds, de, buf, s, e)
            if r >= 0:
                return False, first, cnt, byr
            _wput(dtab, zero, p, dw0[i], dw1[i], e - s, i, 0)
    return True, first, cnt, byr


@nb.njit(cache=True, nogil=True)
def run_index(buf, qs, qe, ds, de, dh, dw0, dw1, first, cnt, byr, score, nq, t_data, t_s, t_e, t_slots,
              t_keys, tab, soff, r_data, r_s, r_e):
    """Join a grouped run (:func:`run_group`) to the qrels: the qrels row of every run row
    (-1: unjudged or topic without qrels) and the ranking (qrels topic order, score descending,
    docno descending by bytes).  Returns (order, counts per qrels topic, qrels row per row, and a
    checksum of the table prefetch, to be ignored)."""
    n = qs.size
    nr = first.size
    zero = np.zeros(t_s.size, np.int64)
    ubyt = np.full(nq, -1, np.int64)
    rr = np.full(n, -1, np.int64)
    maxb = 0
    warm = _U(0)
    for u in range(nr):
        f = first[u]
        t = _probe(t_slots, t_keys, zero, t_data, t_s, t_e, 0, _key(0, _fnv(buf, qs[f], qe[f])), buf, qs[f], qe[f])
        if t < 0:
            continue
        ubyt[t] = u
        maxb = max(maxb, cnt[u + 1] - cnt[u])
        tbase = soff[t]
        tmask = _U(soff[t + 1] - tbase - 1)
        # read the topic's table once in address order (hardware prefetch) before the random
        # probes: ~30% faster than taking a cache miss on the first touch of every line
        for j in range(3 * tbase, 3 * soff[t + 1], 8):
            warm ^= tab[j]
        for k in range(cnt[u], cnt[u + 1]):
            i = byr[k]
            rr[i], _ = _wfind(tab, tbase, tmask, dh[i], dw0[i], dw1[i], de[i] - ds[i], r_data, r_s, r_e,
                              buf, ds[i], de[i])
    counts = np.zeros(nq, np.int64)
    total = 0
    for t in range(nq):
        u = ubyt[t]
        if u >= 0:
            counts[t] = cnt[u + 1] - cnt[u]
            total += counts[t]
    order = np.empty(total, np.int64)
    tmp = np.empty(maxb, np.int64)
    bnd = np.empty(maxb + 1, np.int64)
    o = 0
    for t in range(nq):
        u = ubyt[t]
        if u < 0:
            continue
        a, b = cnt[u], cnt[u + 1]
        m = b - a
        seg = order[o:o + m]
        for k in range(m):  # not a slice assignment (uefast.kernels docstring)
            seg[k] = byr[a + k]
        o += m
        rank_rows(seg, score, tmp, bnd, buf, ds, de, dw0, dw1)
    return order, counts, rr, warm


@nb.njit(cache=True, nogil=True, inline="always")
def rel_code(label):
    """A qrels label packed in a table slot's byte (:mod:`uefast.io._hashtab`): 1 for a negative
    label (pooled but unjudged: relevance value -2), label + 2 for 0..252, 255 for a larger
    label (its value is then read from the label array)."""
    if label < 0:
        return np.int64(1)
    if label <= 252:
        return np.int64(label) + 2
    return np.int64(255)


@nb.njit(cache=True, nogil=True, inline="always")
def code_value(code, r, row_label):
    """The relevance value of qrels row ``r`` from its slot's code (:func:`rel_code`): the same
    as :func:`rel_value`, without reading ``row_label`` unless the label is above 252."""
    if code == 255:
        return np.int64(row_label[r])
    return code - 2 if code >= 2 else np.int64(-2)


@nb.njit(cache=True, nogil=True, inline="always")
def rel_value(r, row_label):
    """trec_eval's relevance value of a retrieved doc whose qrels row is ``r``: its label, -2
    where the label is negative (pooled but unjudged), -1 where ``r`` is -1 (not in the qrels)."""
    v = np.int64(-1)
    if r >= 0:
        v = np.int64(row_label[r])
        if v < 0:
            v = -2
    return v


@nb.njit(cache=True, nogil=True)
def ranked_rel(order, rr, row_label):
    """trec_eval's relevance value of every ranked row, in rank order: the qrels label of row
    ``rr[order[k]]`` (-2 where that label is negative: pooled but unjudged), -1 where ``rr`` is
    -1 (not in the qrels). One pass, one output array (no NumPy temporaries)."""
    n = order.size
    out = np.empty(n, np.int64)
    for k in range(n):
        out[k] = rel_value(rr[order[k]], row_label)
    return out
