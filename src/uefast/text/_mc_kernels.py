"""Numba kernels of the Monte Carlo REB (SPEC_text §2.4, §2.6): ROUGE-L / Lsum expected LCS and
the multi-reference maximum, for a random candidate of L tokens drawn i.i.d. from the source's
unigram model.

S candidates per source come from a counter-based generator (splitmix64 keyed by seed, source
hash and draw index), so the draws do not depend on threads or batch order and are shared by
every reference and length of a source (common random numbers): the length-L candidate is the
first L tokens of a draw. LCS by the bit-parallel recurrence (Allison-Dix / Hyyro). Every kernel
loops over groups in ``prange``.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.text._rouge_kernels import _clipped as _clipped_keys
from uefast.text._rouge_kernels import _ALL, _ONE, _ZERO, popcount64
from uefast.text._rouge_kernels import build_pm, lcs_length, lsum_hits, mask_rows
from uefast.text._mc_simd import LANES, draw_positions_x8, lcs_lengths_1w, lcs_lengths_2w

_jit = nb.njit(cache=True, nogil=True)
_pjit = nb.njit(cache=True, nogil=True, parallel=True)
_U0 = np.uint64(0)
_POS_LIMIT = 2**32  # the vector kernels draw positions by a 32 x 32-bit multiply


@_jit
def _splitmix(x):
    """One splitmix64 step: (next state, output)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@_jit
def _stream(seed, src_key, draw):
    """Start state of draw ``draw`` of a source (see :func:`draw_positions`)."""
    st, h = _splitmix(np.uint64(seed))
    st, h = _splitmix(h ^ np.uint64(src_key))
    st, h = _splitmix(h ^ np.uint64(draw))
    return h


@_jit
def _position(st, z, i, un):
    """(state, output, position in 0..n-1) of token i of a draw: each splitmix64 output serves
    two tokens, its high 32 bits (even i) then its low 32 bits (odd i), as h * n >> 32."""
    if i & 1 == 0:
        st, z = _splitmix(st)
        h = z >> np.uint64(32)
    else:
        h = z & np.uint64(0xFFFFFFFF)
    return st, z, np.int64((h * un) >> np.uint64(32))


@_jit
def draw_positions(n, seed, src_key, length, draw, out):
    """Fill out[:length] with positions drawn uniformly from 0..n-1 (tokens of a source of n
    tokens: its unigram model) from a splitmix64 stream keyed by (seed, src_key, draw): the
    candidate of length L is the first L positions of the draw, whatever L (common random
    numbers across lengths and references; n < 2**32, bias below n / 2**32)."""
    st = _stream(seed, src_key, draw)
    z = _U0
    un = np.uint64(n)
    for i in range(length):
        st, z, p = _position(st, z, i, un)
        out[i] = p


@_jit
def draw_candidate(src, seed, src_key, length, draw, pos, out):
    """out[:length] = the source tokens at :func:`draw_positions` (``pos``: scratch)."""
    draw_positions(src.size, seed, src_key, length, draw, pos)
    for i in range(length):
        out[i] = src[pos[i]]


@_jit
def _lcs_prefixes(row_of_pos, masks, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """For each draw, extend the bit-parallel LCS state one drawn token at a time up to the
    largest length and add LCS (and its square) at every length lengths[lo:hi] (sorted) to
    tot/tot2: one pass per draw serves all the lengths."""
    w = (m + 63) // 64
    rem = m & 63
    top = _ALL if rem == 0 else (_ONE << np.uint64(rem)) - _ONE
    un = np.uint64(row_of_pos.size)
    v = np.empty(w, dtype=np.uint64)
    for d in range(samples):
        st = _stream(seed, src_key, d)
        z = _U0
        for q in range(w):
            v[q] = _ALL
        v[w - 1] = top
        x = lo
        t = 0
        while x < hi:
            while x < hi and lengths[x] == t:
                ones = 0
                for q in range(w):
                    ones += popcount64(v[q])
                val = float(m - ones)
                tot[x] += val
                tot2[x] += val * val
                x += 1
            if x == hi:
                break
            st, z, pos = _position(st, z, t, un)
            t += 1
            r = row_of_pos[pos]
            if r < 0:
                continue
            if w == 1:
                a = v[0]
                b = a & masks[r, 0]
                v[0] = ((a + b) | (a & ~b)) & top
                continue
            carry = _ZERO
            for q in range(w):
                a = v[q]
                b = a & masks[r, q]
                c = a + b
                c1 = _ONE if c < a else _ZERO
                s2 = c + carry
                c2 = _ONE if s2 < c else _ZERO
                carry = c1 | c2
                v[q] = s2 | (a & ~b)
            v[w - 1] &= top


@_jit
def _gather_masks(pos_mask, pos, n, out):
    """out[i] = pos_mask[pos[i]] for i < n."""
    for i in range(n):
        out[i] = pos_mask[pos[i]]


@_jit
def _pos_masks(row_of_pos, masks):
    """The match mask of every source position (0 for a token absent from the reference)."""
    out = np.zeros(row_of_pos.size, dtype=np.uint64)
    for i in range(row_of_pos.size):
        if row_of_pos[i] >= 0:
            out[i] = masks[row_of_pos[i]]
    return out


@_jit
def _add_tallies(acc1, acc2, lo, hi, tot, tot2):
    """tot[x] += sum over lanes of acc1 (integer LCS sums: exact), tot2 likewise."""
    for x in range(lo, hi):
        s1 = 0
        s2 = 0
        for k in range(LANES):
            s1 += acc1[(x - lo) * LANES + k]
            s2 += acc2[(x - lo) * LANES + k]
        tot[x] += float(s1)
        tot2[x] += float(s2)


@_jit
def _lcs_prefixes_1w(row_of_pos, masks1, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """:func:`_lcs_draws_1w` with the masks given by row (``masks1[row_of_pos[i]]``, -1: none)."""
    _lcs_draws_1w(_pos_masks(row_of_pos, masks1), m, seed, src_key, lengths, lo, hi, samples,
                  tot, tot2)


@_jit
def _lcs_prefixes_2w(row_of_pos, m0, m1, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """:func:`_lcs_draws_2w` with the masks given by row."""
    _lcs_draws_2w(_pos_masks(row_of_pos, m0), _pos_masks(row_of_pos, m1), m, seed, src_key,
                  lengths, lo, hi, samples, tot, tot2)


@_jit
def _lcs_draws_1w(pos_mask, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """:func:`_lcs_prefixes` for a reference of at most 64 tokens (one state word), with the
    same draws, eight at a time in vector lanes (:mod:`uefast.text._mc_simd`): per block of
    eight draws, their positions up to the largest length, the match mask of each (a source
    token absent from the reference has mask 0, for which the update is the identity), then the
    LCS states with a tally at every length. The state is not masked to its m bits inside the
    loop: the masks have no bit at or above m and an addition carries only upwards, so bits
    past m never reach bits below m; they are masked off at the popcount. Needs a source of
    fewer than 2**32 tokens (as :func:`draw_positions`)."""
    top = _ALL if m == 64 else (_ONE << np.uint64(m)) - _ONE
    lmax = lengths[hi - 1] if hi > lo else 0
    npairs = (lmax + 1) // 2
    st = np.empty(LANES, dtype=np.uint64)
    v = np.full(LANES, top, dtype=np.uint64)
    pos = np.empty(max(npairs, 1) * 2 * LANES, dtype=np.uint64)
    mk = np.empty(max(npairs, 1) * 2 * LANES, dtype=np.uint64)
    acc1 = np.zeros((hi - lo) * LANES, dtype=np.int64)
    acc2 = np.zeros((hi - lo) * LANES, dtype=np.int64)
    un = np.uint64(pos_mask.size)
    for d0 in range(0, samples, LANES):
        for k in range(LANES):
            st[k] = _stream(seed, src_key, d0 + k)
        draw_positions_x8(st, npairs, un, pos)
        _gather_masks(pos_mask, pos, lmax * LANES, mk)
        lcs_lengths_1w(mk, lengths, lo, hi, v, top, m, min(LANES, samples - d0), acc1, acc2)
    _add_tallies(acc1, acc2, lo, hi, tot, tot2)


@_jit
def _lcs_draws_2w(p0, p1, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """:func:`_lcs_draws_1w` for a reference of 65..128 tokens (``p0``/``p1``: the low and high
    mask word of each source position): two state words, the add carried from the low word
    into the high one; same draws."""
    top = _ALL if m == 128 else (_ONE << np.uint64(m - 64)) - _ONE
    lmax = lengths[hi - 1] if hi > lo else 0
    npairs = (lmax + 1) // 2
    st = np.empty(LANES, dtype=np.uint64)
    v0 = np.full(LANES, _ALL, dtype=np.uint64)
    v1 = np.full(LANES, top, dtype=np.uint64)
    size = max(npairs, 1) * 2 * LANES
    pos = np.empty(size, dtype=np.uint64)
    mk0 = np.empty(size, dtype=np.uint64)
    mk1 = np.empty(size, dtype=np.uint64)
    acc1 = np.zeros((hi - lo) * LANES, dtype=np.int64)
    acc2 = np.zeros((hi - lo) * LANES, dtype=np.int64)
    un = np.uint64(p0.size)
    for d0 in range(0, samples, LANES):
        for k in range(LANES):
            st[k] = _stream(seed, src_key, d0 + k)
        draw_positions_x8(st, npairs, un, pos)
        _gather_masks(p0, pos, lmax * LANES, mk0)
        _gather_masks(p1, pos, lmax * LANES, mk1)
        lcs_lengths_2w(mk0, mk1, lengths, lo, hi, v0, v1, top, m, min(LANES, samples - d0),
                       acc1, acc2)
    _add_tallies(acc1, acc2, lo, hi, tot, tot2)


@_jit
def _mc_group(ids, offs, tok_off, line_off, src, src_key, b, lengths, samples, seed,
              summary_level, dm0, dm1, tot, tot2):
    """Sums of LCS (or Lsum hits) and their squares over the draws of one (source tokens
    ``src``, reference text b) group at ``lengths`` (sorted), into tot/tot2. ``dm0``/``dm1``:
    zeroed per-id scratch, left zeroed."""
    ref = ids[offs[b]:offs[b + 1]]
    m = ref.size
    if src.size == 0 or m == 0:
        return
    sent_r = tok_off[line_off[b]:line_off[b + 1] + 1] - tok_off[line_off[b]]
    hi = lengths.size
    if summary_level and sent_r.size > 2:  # Lsum against several reference lines, per length
        lmax = lengths[hi - 1]
        pos = np.empty(max(lmax, 1), dtype=np.int64)
        cand = np.empty(max(lmax, 1), dtype=ids.dtype)
        for d in range(samples):
            draw_candidate(src, seed, src_key, lmax, d, pos, cand)
            for x in range(hi):
                L = lengths[x]
                if L <= 0:
                    continue
                sent_c = np.array([0, L], dtype=np.int64)
                val = float(lsum_hits(ref, sent_r, cand[:L], sent_c))
                tot[x] += val
                tot2[x] += val * val
        return
    # one reference line: union LCS against a one-sentence summary is the LCS
    if m > 128 or src.size >= _POS_LIMIT:
        u, k, masks = build_pm(ref)
        _lcs_prefixes(mask_rows(src, u, k), masks, m, seed, src_key, lengths, 0, hi, samples,
                      tot, tot2)
        return
    for q in range(m):  # each id's match mask (bit q: reference position q), as build_pm's
        if q < 64:
            dm0[ref[q]] |= _ONE << np.uint64(q)
        else:
            dm1[ref[q]] |= _ONE << np.uint64(q - 64)
    p0 = np.empty(src.size, dtype=np.uint64)
    for i in range(src.size):
        p0[i] = dm0[src[i]]
    if m <= 64:
        _lcs_draws_1w(p0, m, seed, src_key, lengths, 0, hi, samples, tot, tot2)
    else:
        p1 = np.empty(src.size, dtype=np.uint64)
        for i in range(src.size):
            p1[i] = dm1[src[i]]
        _lcs_draws_2w(p0, p1, m, seed, src_key, lengths, 0, hi, samples, tot, tot2)
    for q in range(m):
        dm0[ref[q]] = _ZERO
        dm1[ref[q]] = _ZERO


@_pjit
def mc_lcs(ids, offs, tok_off, line_off, src_ids, src_off, src_keys, g_src, g_ref, len_off,
           lengths, samples, seed, summary_level, n_vocab, n_chunks, mean, sd):
    """Monte Carlo E[LCS] (``summary_level``: Lsum hits with the random summary as one sentence)
    of group g = (source g_src[g], reference text g_ref[g]) at lengths[len_off[g]:len_off[g+1]]
    (sorted): mean and sample sd over ``samples`` draws, the length-L candidate of a draw being
    its first L tokens. A one-line reference (always for ROUGE-L) takes the incremental
    bit-parallel LCS; Lsum against several reference lines is scored per length. Groups run in
    ``n_chunks`` contiguous chunks, each with its own id -> match mask maps (``n_vocab`` ids);
    the values do not depend on the chunking."""
    n_grp = g_src.size
    for ch in nb.prange(n_chunks):
        dm0 = np.zeros(n_vocab, dtype=np.uint64)
        dm1 = np.zeros(n_vocab, dtype=np.uint64)
        for g in range(ch * n_grp // n_chunks, (ch + 1) * n_grp // n_chunks):
            s = g_src[g]
            lo = len_off[g]
            hi = len_off[g + 1]
            tot = np.zeros(hi - lo)
            tot2 = np.zeros(hi - lo)
            _mc_group(ids, offs, tok_off, line_off, src_ids[src_off[s]:src_off[s + 1]],
                      src_keys[s], g_ref[g], lengths[lo:hi], samples, seed, summary_level,
                      dm0, dm1, tot, tot2)
            for x in range(hi - lo):
                mu = tot[x] / samples
                mean[lo + x] = mu
                sd[lo + x] = (math.sqrt(max(tot2[x] - samples * mu * mu, 0.0) / (samples - 1))
                              if samples > 1 else 0.0)


@_jit
def _prf_code(o, uc, ur, is_ngram, code):
    """(score ``code`` 0 P / 1 R / 2 F, F) from a count, rouge-score's float operations."""
    if is_ngram:
        p = o / max(uc, 1)
        r = o / max(ur, 1)
    elif uc == 0 or ur == 0:
        p = 0.0
        r = 0.0
    else:
        p = o / uc
        r = o / ur
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return (p if code == 0 else (r if code == 1 else f)), f


@_pjit
def mc_max(ids, offs, tok_off, line_off, ref_keys, key_off, src_ids, src_off, src_keys, row_src,
           row_off, pair_ref, row_len, kind, n, base, code, samples, seed, mean, sd):
    """Monte Carlo REB of the multi-reference maximum (rouge-score ``score_multi``: the score of
    the reference with the largest F, the first on ties) for each row: a random candidate of
    row_len[row] tokens against all of the row's references, ``samples`` draws. ``kind`` 0 n-grams
    (packed keys in base ``base``; references' sorted keys in ref_keys/key_off), 1 LCS, 2 Lsum."""
    for row in nb.prange(row_src.size):
        s = row_src[row]
        src = src_ids[src_off[s]:src_off[s + 1]]
        length = row_len[row]
        mean[row] = 0.0
        sd[row] = 0.0
        if src.size == 0 or length <= 0:
            continue
        cand = np.empty(length, dtype=ids.dtype)
        pos = np.empty(length, dtype=np.int64)
        nwin = max(length - n + 1, 0) if kind == 0 else length
        ckeys = np.empty(max(nwin, 1), dtype=np.int64)
        sent_c = np.array([0, length], dtype=np.int64)
        tot = 0.0
        tot2 = 0.0
        for d in range(samples):
            draw_candidate(src, seed, src_keys[s], length, d, pos, cand)
            if kind == 0:
                for i in range(nwin):
                    k = np.int64(0)
                    for j in range(n):
                        k = k * base + cand[i + j]
                    ckeys[i] = k
                ckeys[:nwin].sort()
            best_f = -1.0
            best = 0.0
            for j in range(row_off[row], row_off[row + 1]):
                b = pair_ref[j]
                ref = ids[offs[b]:offs[b + 1]]
                if kind == 0:
                    o = _clipped_keys(ckeys[:nwin], ref_keys[key_off[b]:key_off[b + 1]])
                    uc = nwin
                    ur = max(ref.size - n + 1, 0)
                elif kind == 1:
                    o = lcs_length(cand, ref)
                    uc = length
                    ur = ref.size
                else:
                    sent_r = tok_off[line_off[b]:line_off[b + 1] + 1] - tok_off[line_off[b]]
                    o = lsum_hits(ref, sent_r, cand, sent_c)
                    uc = length
                    ur = ref.size
                val, f = _prf_code(o, uc, ur, kind == 0, code)
                if f > best_f:
                    best_f = f
                    best = val
            tot += best
            tot2 += best * best
        m = tot / samples
        mean[row] = m
        if samples > 1:
            sd[row] = math.sqrt(max(tot2 - samples * m * m, 0.0) / (samples - 1))
