"""Numba kernels of ROUGE on integer token ids: n-gram keys, clipped n-gram overlap, LCS
(bit-parallel) and rougeLsum's union LCS, each parallel over (candidate, reference) pairs.

Everything here returns integer counts (overlap O_n, LCS length, Lsum hits); the P/R/F floats are
formed in :mod:`uefast.text.rouge` with rouge-score's own float operations, so they are
bit-identical to it.
"""
from __future__ import annotations

import numba as nb
import numpy as np

_jit = nb.njit(cache=True, nogil=True)
_pjit = nb.njit(cache=True, nogil=True, parallel=True)

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


# ---------------------------------------------------------------------------------------------
# n-gram keys: one int64 per window, sorted within each text

@_pjit
def packed_ngram_keys(ids, offsets, n, base, key_offsets, out):
    """Window i of a text gets key sum_j ids[i+j] * base**(n-1-j) (exact when base**n < 2**63);
    the keys of each text are then sorted (so equal n-grams are adjacent)."""
    for t in nb.prange(len(offsets) - 1):
        s = offsets[t]
        o = key_offsets[t]
        e = key_offsets[t + 1]
        for i in range(e - o):
            k = np.int64(0)
            for j in range(n):
                k = k * base + ids[s + i + j]
            out[o + i] = k
        out[o:e].sort()


@_pjit
def sort_segments(keys, key_offsets):
    """Sort ``keys`` within each segment, in place."""
    for t in nb.prange(len(key_offsets) - 1):
        keys[key_offsets[t]:key_offsets[t + 1]].sort()


@_jit
def _clipped(a, b):
    """sum over distinct values g of min(#g in a, #g in b), for sorted a and b (a merge)."""
    i = 0
    j = 0
    na = a.size
    nb_ = b.size
    total = 0
    while i < na and j < nb_:
        x = a[i]
        y = b[j]
        if x < y:
            i += 1
        elif y < x:
            j += 1
        else:
            ca = 0
            while i < na and a[i] == x:
                ca += 1
                i += 1
            cb = 0
            while j < nb_ and b[j] == x:
                cb += 1
                j += 1
            total += min(ca, cb)
    return total


@_pjit
def clipped_overlap(keys_a, off_a, keys_b, off_b, ia, ib, out):
    """out[p] = clipped n-gram overlap of text ia[p] (keys_a) and text ib[p] (keys_b)."""
    for p in nb.prange(ia.size):
        a = ia[p]
        b = ib[p]
        out[p] = _clipped(keys_a[off_a[a]:off_a[a + 1]], keys_b[off_b[b]:off_b[b + 1]])


# ---------------------------------------------------------------------------------------------
# LCS, bit-parallel (Allison-Dix / Hyyro): U = V & PM[t]; V = (V + U) | (V - U); LCS = M - |V|

@_jit
def popcount64(x):
    """Number of set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@_jit
def build_pm(r):
    """Match masks of sequence r: (sorted distinct tokens u, their count k, masks[k, W])."""
    m = r.size
    w = (m + 63) // 64
    order = np.argsort(r, kind="mergesort")
    u = np.empty(max(m, 1), dtype=r.dtype)
    masks = np.zeros((max(m, 1), max(w, 1)), dtype=np.uint64)
    k = 0
    for q in range(m):
        pos = order[q]
        tok = r[pos]
        if k == 0 or u[k - 1] != tok:
            u[k] = tok
            k += 1
        masks[k - 1, pos >> 6] |= _ONE << np.uint64(pos & 63)
    return u, k, masks


@_jit
def lcs_from_rows(rows, m, masks, v):
    """LCS length of a sequence given as rows of ``masks`` (-1: a token absent from the other
    sequence) against the length-m sequence the masks describe; ``v``: ceil(m/64) scratch words.
    U = V & PM; V = (V + U) | (V & ~U) (V - U clears U's bits: U is a subset of V)."""
    if m == 0 or rows.size == 0:
        return 0
    w = (m + 63) // 64
    for x in range(w):
        v[x] = _ALL
    rem = m & 63
    top = _ALL if rem == 0 else (_ONE << np.uint64(rem)) - _ONE
    v[w - 1] = top
    for i in range(rows.size):
        idx = rows[i]
        if idx < 0:
            continue
        carry = _ZERO
        for x in range(w):
            a = v[x]
            b = a & masks[idx, x]
            t = a + b
            c1 = _ONE if t < a else _ZERO
            s = t + carry
            c2 = _ONE if s < t else _ZERO
            carry = c1 | c2
            v[x] = s | (a & ~b)
        v[w - 1] &= top
    ones = 0
    for x in range(w):
        ones += popcount64(v[x])
    return m - ones


@_jit
def mask_rows(c, u, k):
    """Row of the match masks (u, k) of each token of c, -1 where the token has none."""
    rows = np.empty(c.size, dtype=np.int64)
    uk = u[:k]
    for i in range(c.size):
        idx = np.searchsorted(uk, c[i])
        rows[i] = idx if (idx < k and uk[idx] == c[i]) else -1
    return rows


@_jit
def lcs_with_pm(c, m, u, k, masks, v):
    """LCS length of c against the sequence whose match masks are (u, k, masks), length m."""
    return lcs_from_rows(mask_rows(c, u, k), m, masks, v)


@_jit
def lcs_length(c, r):
    """LCS length of sequences c and r (bit-parallel)."""
    if c.size == 0 or r.size == 0:
        return 0
    u, k, masks = build_pm(r)
    v = np.empty((r.size + 63) // 64, dtype=np.uint64)
    return lcs_with_pm(c, r.size, u, k, masks, v)


# ---------------------------------------------------------------------------------------------
# rougeLsum: summary-level union LCS with rouge-score's backtracking and double-count guard

@_jit
def _lcs_marks(ref, can, table, mark):
    """rouge-score ``lcs_ind``: fill the LCS table of (ref, can), backtrack exactly as its
    ``_backtrack_norec`` (match -> diagonal; t[i][j-1] > t[i-1][j] -> left; else up) and set
    mark[i] for every reference index on the path."""
    rows = ref.size
    cols = can.size
    for i in range(rows + 1):
        table[i, 0] = 0
    for j in range(cols + 1):
        table[0, j] = 0
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            if ref[i - 1] == can[j - 1]:
                table[i, j] = table[i - 1, j - 1] + 1
            else:
                table[i, j] = max(table[i - 1, j], table[i, j - 1])
    i = rows
    j = cols
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            mark[i - 1] = True
            i -= 1
            j -= 1
        elif table[i, j - 1] > table[i - 1, j]:
            j -= 1
        else:
            i -= 1


@_jit
def lsum_hits(ids_r, sent_r, ids_c, sent_c):
    """rouge-score ``_summary_level_lcs`` hit count: reference sentences are token ranges
    ``sent_r`` (offsets into ids_r), candidate sentences ``sent_c``."""
    m = ids_r.size
    n = ids_c.size
    if m == 0 or n == 0:
        return 0
    both = np.concatenate((ids_r, ids_c))
    uniq = np.unique(both)
    cnt_r = np.zeros(uniq.size, dtype=np.int64)
    cnt_c = np.zeros(uniq.size, dtype=np.int64)
    for x in range(m):
        cnt_r[np.searchsorted(uniq, ids_r[x])] += 1
    for x in range(n):
        cnt_c[np.searchsorted(uniq, ids_c[x])] += 1
    longest_c = 0
    for s in range(sent_c.size - 1):
        longest_c = max(longest_c, sent_c[s + 1] - sent_c[s])
    longest_r = 0
    for s in range(sent_r.size - 1):
        longest_r = max(longest_r, sent_r[s + 1] - sent_r[s])
    table = np.empty((longest_r + 1, longest_c + 1), dtype=np.int32)
    mark = np.zeros(longest_r, dtype=np.bool_)
    hits = 0
    for s in range(sent_r.size - 1):
        ref = ids_r[sent_r[s]:sent_r[s + 1]]
        mark[:ref.size] = False
        for q in range(sent_c.size - 1):
            _lcs_marks(ref, ids_c[sent_c[q]:sent_c[q + 1]], table, mark)
        for x in range(ref.size):
            if mark[x]:
                g = np.searchsorted(uniq, ref[x])
                if cnt_c[g] > 0 and cnt_r[g] > 0:
                    hits += 1
                    cnt_c[g] -= 1
                    cnt_r[g] -= 1
    return hits


@_pjit
def lsum_pairs(ids_a, tok_a, line_a, ids_b, tok_b, line_b, ia, ib, out):
    """out[p] = Lsum hits of candidate text ia[p] against reference text ib[p] (two-level
    offsets: lines of a text, tokens of a line)."""
    for p in nb.prange(ia.size):
        a = ia[p]
        b = ib[p]
        sa = tok_a[line_a[a]:line_a[a + 1] + 1]
        sb = tok_b[line_b[b]:line_b[b + 1] + 1]
        ca = ids_a[sa[0]:sa[-1]]
        cb = ids_b[sb[0]:sb[-1]]
        out[p] = lsum_hits(cb, sb - sb[0], ca, sa - sa[0])


# ---------------------------------------------------------------------------------------------
# the same counts with the pairs grouped by reference: the reference's table is built once and
# every candidate against it is one pass over its tokens (no sorting of candidate n-grams)

_GOLD = np.uint64(0x9E3779B97F4A7C15)


@_jit
def _slot(key, mask):
    """Start slot of an int64 key in a power-of-two open-addressing table (Fibonacci hash)."""
    return np.int64((np.uint64(key) * _GOLD) >> np.uint64(40)) & mask


@_jit
def _gram_key(ids, i, n, base):
    k = np.int64(0)
    for j in range(n):
        k = k * base + ids[i + j]
    return k


@_pjit
def clipped_overlap_by_ref(ids, offs, cand, ref, order, grp_off, n, base, out):
    """out[p] = clipped n-gram overlap of text cand[p] against text ref[p] (n-grams packed in base
    ``base``, exact when base**n < 2**63). Pairs order[grp_off[g]:grp_off[g+1]] share a reference:
    its n-grams go once into an open-addressing table (key, count); a candidate's n-gram hits
    when its key is there with uses left (count clipped, rouge-score's min(c_g, r_g)). A
    1,024-bit filter of the reference's token ids (id mod 1,024) skips the probe of an n-gram
    with a token surely absent from the reference."""
    for g in nb.prange(grp_off.size - 1):
        b = ref[order[grp_off[g]]]
        _clipped_hashed(ids, offs, cand, ids[offs[b]:offs[b + 1]], order, grp_off[g],
                        grp_off[g + 1], n, base, out)


@_jit
def _clipped_hashed(ids, offs, cand, r, order, x0, x1, n, base, out):
    """The pairs order[x0:x1], all against reference tokens r: :func:`clipped_overlap_by_ref`."""
    nr = max(r.size - n + 1, 0)
    size = 16
    while size < 2 * nr:
        size *= 2
    mask = size - 1
    keys = np.empty(size, dtype=np.int64)
    cnt = np.zeros(size, dtype=np.int64)
    used = np.zeros(size, dtype=np.int64)
    bloom = np.zeros(16, dtype=np.uint64)  # 1,024-bit filter of the reference's token ids
    for i in range(r.size):
        t = r[i]
        bloom[(t >> 6) & 15] |= np.uint64(1) << np.uint64(t & 63)
    for i in range(nr):
        k = _gram_key(r, i, n, base)
        s = _slot(k, mask)
        while cnt[s] > 0 and keys[s] != k:
            s = (s + 1) & mask
        keys[s] = k
        cnt[s] += 1
    hit = np.empty(16, dtype=np.int64)  # slots this candidate used
    for x in range(x0, x1):
        p = order[x]
        a = cand[p]
        c0 = offs[a]
        nc = max(offs[a + 1] - c0 - n + 1, 0)
        o = 0
        if nr > 0:
            if hit.size < nc:
                hit = np.empty(2 * nc, dtype=np.int64)
            for i in range(nc):
                absent = False  # a token not in the reference: no hit, skip the probe
                for j in range(n):
                    t = ids[c0 + i + j]
                    if (bloom[(t >> 6) & 15] >> np.uint64(t & 63)) & np.uint64(1) == 0:
                        absent = True
                        break
                if absent:
                    continue
                k = _gram_key(ids, c0 + i, n, base)
                s = _slot(k, mask)
                while cnt[s] > 0 and keys[s] != k:
                    s = (s + 1) & mask
                if cnt[s] > used[s]:
                    used[s] += 1
                    hit[o] = s
                    o += 1
            for i in range(o):  # reset the uses this candidate made
                used[hit[i]] = 0
        out[p] = o

@_pjit
def lcs_by_ref(ids, offs, cand, ref, order, grp_off, n_vocab, n_chunks, out):
    """out[p] = LCS of text cand[p] and text ref[p], pairs grouped by reference as in
    :func:`clipped_overlap_by_ref`. Groups run in ``n_chunks`` contiguous chunks, each with its
    own dense per-id maps (reset after every group). A reference of at most 128 tokens keeps
    each id's match mask in one or two dense words per id (0 for an id absent from the
    reference: the update is then the identity), so a candidate token costs one lookup and the
    one- or two-word update; a longer one builds its masks once and maps ids to mask rows."""
    n_grp = grp_off.size - 1
    for ch in nb.prange(n_chunks):
        row = np.full(n_vocab, -1, dtype=np.int64)
        dm0 = np.zeros(n_vocab, dtype=np.uint64)
        dm1 = np.zeros(n_vocab, dtype=np.uint64)
        rows = np.empty(16, dtype=np.int64)
        for g in range(ch * n_grp // n_chunks, (ch + 1) * n_grp // n_chunks):
            b = ref[order[grp_off[g]]]
            r = ids[offs[b]:offs[b + 1]]
            m = r.size
            x0 = grp_off[g]
            x1 = grp_off[g + 1]
            if 0 < m <= 128:
                _lcs_group_short(ids, offs, cand, r, order, x0, x1, dm0, dm1, out)
                continue
            u, k, masks = build_pm(r)
            for q in range(k):
                row[u[q]] = q
            v = np.empty(max((m + 63) // 64, 1), dtype=np.uint64)
            for x in range(x0, x1):
                p = order[x]
                a = cand[p]
                c = ids[offs[a]:offs[a + 1]]
                if rows.size < c.size:
                    rows = np.empty(2 * c.size, dtype=np.int64)
                for i in range(c.size):
                    rows[i] = row[c[i]]
                out[p] = lcs_from_rows(rows[:c.size], m, masks, v)
            for q in range(k):
                row[u[q]] = -1


@_jit
def _lcs_group_short(ids, offs, cand, r, order, x0, x1, dm0, dm1, out):
    """LCS of the candidates order[x0:x1] against reference tokens r (1..128 of them) by the
    one- or two-word recurrence of :func:`lcs_from_rows` (bits past m, set by a carry out of
    bit m - 1, never reach lower bits: masked once, at the popcount); dm0/dm1 are zero on entry
    and on exit."""
    m = r.size
    for q in range(m):  # each id's match mask (bit q: reference position q)
        if q < 64:
            dm0[r[q]] |= _ONE << np.uint64(q)
        else:
            dm1[r[q]] |= _ONE << np.uint64(q - 64)
    if m <= 64:
        top = _ALL if m == 64 else (_ONE << np.uint64(m)) - _ONE
        for x in range(x0, x1):
            p = order[x]
            a = cand[p]
            v = top
            for i in range(offs[a], offs[a + 1]):
                b = v & dm0[ids[i]]
                v = (v + b) | (v & ~b)
            out[p] = m - popcount64(v & top) if offs[a + 1] > offs[a] else 0
    else:
        top = _ALL if m == 128 else (_ONE << np.uint64(m - 64)) - _ONE
        for x in range(x0, x1):
            p = order[x]
            a = cand[p]
            v0 = _ALL
            v1 = top
            for i in range(offs[a], offs[a + 1]):
                w = ids[i]
                b0 = v0 & dm0[w]
                b1 = v1 & dm1[w]
                a0 = v0 + b0
                carry = _ONE if a0 < v0 else _ZERO
                v1 = (v1 + b1 + carry) | (v1 & ~b1)
                v0 = a0 | (v0 & ~b0)
            out[p] = (m - popcount64(v0) - popcount64(v1 & top)
                      if offs[a + 1] > offs[a] else 0)
    for q in range(m):
        dm0[r[q]] = _ZERO
        dm1[r[q]] = _ZERO


@_pjit
def clipped1_by_ref(ids, offs, cand, ref, order, grp_off, n_vocab, n_chunks, out):
    """:func:`clipped_overlap_by_ref` for unigrams with dense per-chunk count arrays indexed by
    token id (the reference's counts; a candidate's uses, reset after each candidate)."""
    n_grp = grp_off.size - 1
    for ch in nb.prange(n_chunks):
        cnt = np.zeros(n_vocab, dtype=np.int32)
        used = np.zeros(n_vocab, dtype=np.int32)
        for g in range(ch * n_grp // n_chunks, (ch + 1) * n_grp // n_chunks):
            b = ref[order[grp_off[g]]]
            r = ids[offs[b]:offs[b + 1]]
            for i in range(r.size):
                cnt[r[i]] += 1
            for x in range(grp_off[g], grp_off[g + 1]):
                p = order[x]
                a = cand[p]
                c = ids[offs[a]:offs[a + 1]]
                o = 0
                for i in range(c.size):  # branch-free: a hit is unpredictable
                    w = c[i]
                    h = np.int32(used[w] < cnt[w])
                    used[w] += h
                    o += h
                for i in range(c.size):
                    used[c[i]] = 0
                out[p] = o
            for i in range(r.size):
                cnt[r[i]] = 0


@_pjit
def clipped2_by_ref(ids, offs, cand, ref, order, grp_off, n_vocab, n_chunks, out):
    """:func:`clipped_overlap_by_ref` for bigrams without hashing: a dense per-chunk id -> row
    map numbers the reference's distinct tokens 0..k-1, so a bigram (a, b) of tokens both in
    the reference is the cell row(a) * k + row(b) of a dense count table (the reference's
    counts; a candidate's uses, reset after each candidate). A reference with k * k above the
    table takes :func:`clipped_overlap_by_ref`'s hash table (``_clipped_hashed``)."""
    n_grp = grp_off.size - 1
    cap = 1 << 14
    for ch in nb.prange(n_chunks):
        row = np.full(n_vocab, -1, dtype=np.int64)
        cnt = np.zeros(cap, dtype=np.int64)
        used = np.zeros(cap, dtype=np.int64)
        hit = np.empty(16, dtype=np.int64)
        for g in range(ch * n_grp // n_chunks, (ch + 1) * n_grp // n_chunks):
            b = ref[order[grp_off[g]]]
            r = ids[offs[b]:offs[b + 1]]
            k = 0
            for i in range(r.size):
                if row[r[i]] < 0:
                    row[r[i]] = k
                    k += 1
            if k * k > cap:
                for i in range(r.size):
                    row[r[i]] = -1
                _clipped_hashed(ids, offs, cand, r, order, grp_off[g], grp_off[g + 1], 2,
                                n_vocab, out)
                continue
            for i in range(r.size - 1):
                cnt[row[r[i]] * k + row[r[i + 1]]] += 1
            for x in range(grp_off[g], grp_off[g + 1]):
                p = order[x]
                a = cand[p]
                c = ids[offs[a]:offs[a + 1]]
                if hit.size < c.size:
                    hit = np.empty(2 * c.size, dtype=np.int64)
                o = 0
                prev = -1
                for i in range(c.size):
                    cur = row[c[i]]
                    if prev >= 0 and cur >= 0:
                        cell = prev * k + cur
                        if cnt[cell] > used[cell]:
                            used[cell] += 1
                            hit[o] = cell
                            o += 1
                    prev = cur
                for i in range(o):
                    used[hit[i]] = 0
                out[p] = o
            for i in range(r.size - 1):
                cnt[row[r[i]] * k + row[r[i + 1]]] = 0
            for i in range(r.size):
                row[r[i]] = -1


@_jit
def prf_arrays(o, uc, ur, is_ngram, out):
    """out[0], out[1], out[2] = P, R, F of each count with rouge-score's float operations:
    n-grams P = O/max(n_c, 1), R = O/max(n_r, 1); LCS P = O/n_c, R = O/n_r, both 0 if n_c or
    n_r is 0; F = 2*P*R/(P+R), 0 where P + R = 0 (evaluated left to right, as in Python)."""
    for i in range(o.size):
        if not is_ngram and (uc[i] == 0 or ur[i] == 0):
            p = 0.0
            r = 0.0
        else:
            p = o[i] / max(uc[i], 1)
            r = o[i] / max(ur[i], 1)
        s = p + r
        out[0, i] = p
        out[1, i] = r
        out[2, i] = 2 * p * r / s if s > 0 else 0.0
