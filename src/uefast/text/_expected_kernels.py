"""Numba kernels of the expected ROUGE overlap under the source's unigram model (SPEC_text §2):
a random candidate of L tokens drawn i.i.d. with p(w) = c_src(w)/N.

* ROUGE-1, closed form (§2.1): E[O_1] = sum_w E[min(X_w, r_w)], X_w ~ Bin(L, p_w).
* ROUGE-N, n >= 2, automaton DP (§2.3): for each distinct reference n-gram g a Markov chain
  over (KMP state j in 0..n) x (count c in 0..r_g, absorbed at r_g).
* ROUGE-L / Lsum, Monte Carlo (§2.4): S candidates per (source, L) from a counter-based
  generator (splitmix64 keyed by seed, source hash, L and draw index), so the draws do not depend
  on threads or batch order and are shared by every reference of a source (common random
  numbers); LCS by the bit-parallel recurrence.

A source is its token ids sorted, so that c_src(w) = (#ids <= w) - (#ids < w) by binary search.
Every kernel loops over groups (one (source, reference) pair with the sorted distinct candidate
lengths it is needed at) in ``prange``.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.text._rouge_kernels import _clipped as _clipped_keys
from uefast.text._rouge_kernels import _ALL, _ONE, _ZERO, popcount64
from uefast.text._rouge_kernels import build_pm, lcs_length, lsum_hits, mask_rows

_jit = nb.njit(cache=True, nogil=True)
_pjit = nb.njit(cache=True, nogil=True, parallel=True)
_U0 = np.uint64(0)


@_jit
def src_count(src_sorted, w):
    """c_src(w): occurrences of token w in the sorted source ids."""
    return np.searchsorted(src_sorted, w, side="right") - np.searchsorted(src_sorted, w)


@_jit
def expected_min_binomial(L, p, r):
    """E[min(X, r)] for X ~ Bin(L, p): r - sum_{k<r} (r-k) P(X=k), pmf in log space."""
    if p <= 0.0 or r <= 0 or L <= 0:
        return 0.0
    if r >= L:
        return L * p
    if p >= 1.0:
        return float(r)
    return _min_binomial_logs(L, p, r, math.log(p), math.log1p(-p))


@_jit
def _min_binomial_logs(L, p, r, lp, lq):
    """:func:`expected_min_binomial` with log p and log(1-p) given (0 < p < 1, 0 < r < L)."""
    lc = 0.0  # log C(L, k)
    acc = 0.0
    for k in range(r):
        acc += (r - k) * math.exp(lc + k * lp + (L - k) * lq)
        lc += math.log((L - k) / (k + 1.0))
    return r - acc


@_jit
def _distinct_runs(sorted_ids):
    """(values, counts) of a sorted array."""
    m = sorted_ids.size
    vals = np.empty(m, dtype=sorted_ids.dtype)
    cnts = np.zeros(m, dtype=np.int64)
    k = 0
    for i in range(m):
        if k == 0 or vals[k - 1] != sorted_ids[i]:
            vals[k] = sorted_ids[i]
            k += 1
        cnts[k - 1] += 1
    return vals[:k], cnts[:k]


@_pjit
def expected_overlap_1(ids, offs, src_sorted, src_off, g_src, g_ref, len_off, lengths, out):
    """out[x] = E[O_1] of group g at candidate length lengths[x], x in len_off[g]:len_off[g+1]."""
    for g in nb.prange(g_src.size):
        s = g_src[g]
        src = src_sorted[src_off[s]:src_off[s + 1]]
        n_src = src.size
        ref = np.sort(ids[offs[g_ref[g]]:offs[g_ref[g] + 1]])
        vals, cnts = _distinct_runs(ref)
        for x in range(len_off[g], len_off[g + 1]):
            out[x] = 0.0
        if n_src == 0:
            continue
        for t in range(vals.size):
            p = src_count(src, vals[t]) / n_src
            if p == 0.0:
                continue
            r = cnts[t]
            lp = math.log(p) if p < 1.0 else 0.0
            lq = math.log1p(-p) if p < 1.0 else 0.0
            for x in range(len_off[g], len_off[g + 1]):
                L = lengths[x]
                if L <= 0:
                    continue
                if r >= L:
                    out[x] += L * p
                elif p >= 1.0:
                    out[x] += float(r)
                else:
                    out[x] += _min_binomial_logs(L, p, r, lp, lq)


@_jit
def _kmp_delta(gram, alpha):
    """delta[j, a] for j in 0..n and a indexing the distinct tokens ``alpha`` of the n-gram:
    the length of the longest suffix of (prefix_j + alpha[a]) that is a prefix of ``gram``."""
    n = gram.size
    k = alpha.size
    fail = np.zeros(n + 1, dtype=np.int64)  # fail[j]: longest proper border of gram[:j]
    b = 0
    for j in range(1, n):
        while b > 0 and gram[j] != gram[b]:
            b = fail[b]
        if gram[j] == gram[b]:
            b += 1
        fail[j + 1] = b
    delta = np.zeros((n + 1, k), dtype=np.int64)
    for j in range(n + 1):
        for a in range(k):
            if j < n and gram[j] == alpha[a]:
                delta[j, a] = j + 1
            elif j == 0:
                delta[j, a] = 0
            else:
                delta[j, a] = delta[fail[j], a]
    return delta


@_jit
def expected_min_count(gram, r, probs_alpha, alpha, q, lengths, lo, hi, out):
    """Add E[min(Y_g, r)] after t tokens to out[x] for t = lengths[x] (sorted, x in lo:hi), Y_g the
    number of (overlapping) occurrences of n-gram ``gram`` in an i.i.d. sequence whose tokens
    alpha[a] have probability probs_alpha[a] and all others together probability q.

    States: (KMP state j, count c < r) and one absorbing state "count reached r", whose mass is
    all that is needed of it; E[min(Y, r)] = sum_{c<r} c P(c) + r P(absorbed)."""
    n = gram.size
    k = alpha.size
    delta = _kmp_delta(gram, alpha)
    cur = np.zeros((n + 1, r))
    nxt = np.zeros((n + 1, r))
    cur[0, 0] = 1.0
    done = 0.0
    x = lo
    while x < hi and lengths[x] <= 0:
        x += 1
    t = 0
    while x < hi:
        nxt[:, :] = 0.0
        for j in range(n + 1):
            for c in range(r):
                mass = cur[j, c]
                if mass == 0.0:
                    continue
                nxt[0, c] += mass * q
                for a in range(k):
                    j2 = delta[j, a]
                    if j2 == n:
                        if c + 1 == r:
                            done += mass * probs_alpha[a]
                        else:
                            nxt[j2, c + 1] += mass * probs_alpha[a]
                    else:
                        nxt[j2, c] += mass * probs_alpha[a]
        cur, nxt = nxt, cur
        t += 1
        while x < hi and lengths[x] == t:
            e = r * done
            for c in range(1, r):
                s = 0.0
                for j in range(n + 1):
                    s += cur[j, c]
                e += c * s
            out[x] += e
            x += 1


@_pjit
def expected_overlap_n(ids, offs, src_sorted, src_off, g_src, g_ref, len_off, lengths, n, out):
    """out[x] = E[O_n] of group g at candidate length lengths[x] by the automaton DP, summed over
    the distinct reference n-grams (an n-gram with a token absent from the source adds 0)."""
    for g in nb.prange(g_src.size):
        s = g_src[g]
        src = src_sorted[src_off[s]:src_off[s + 1]]
        n_src = src.size
        ref = ids[offs[g_ref[g]]:offs[g_ref[g] + 1]]
        lo = len_off[g]
        hi = len_off[g + 1]
        for x in range(lo, hi):
            out[x] = 0.0
        windows = ref.size - n + 1
        if n_src == 0 or windows <= 0:
            continue
        pa_ = np.empty(windows)  # the simple bigrams (a, b), a != b, once in the reference
        pb_ = np.empty(windows)
        n_simple = 0
        for i in range(windows):
            first = True  # count g once, at its first window
            for j in range(i):
                same = True
                for z in range(n):
                    if ref[j + z] != ref[i + z]:
                        same = False
                        break
                if same:
                    first = False
                    break
            if not first:
                continue
            r = 0
            for j in range(i, windows):
                same = True
                for z in range(n):
                    if ref[j + z] != ref[i + z]:
                        same = False
                        break
                if same:
                    r += 1
            if n == 2 and r == 1 and ref[i] != ref[i + 1]:
                ca = src_count(src, ref[i])
                cb = src_count(src, ref[i + 1])
                if ca > 0 and cb > 0:
                    pa_[n_simple] = ca / n_src
                    pb_[n_simple] = cb / n_src
                    n_simple += 1
                continue
            gram = ref[i:i + n].copy()
            alpha = np.unique(gram)
            probs = np.empty(alpha.size)
            in_g = 0
            zero = False
            for a in range(alpha.size):
                c = src_count(src, alpha[a])
                if c == 0:
                    zero = True
                    break
                in_g += c
                probs[a] = c / n_src
            if zero:
                continue
            q = (n_src - in_g) / n_src
            expected_min_count(gram, r, probs, alpha, q, lengths, lo, hi, out)
        if n_simple > 0:
            _simple_bigrams(pa_[:n_simple], pb_[:n_simple], lengths, lo, hi, out)


@_jit
def _simple_bigrams(pa, pb, lengths, lo, hi, out):
    """Add sum_g P(bigram g = (a, b), a != b, occurs in t tokens) to out[x] at t = lengths[x]
    (sorted, x in lo:hi): the automaton DP of :func:`expected_min_count` for r = 1 with its
    two live states (last token a or not) and the absorbed mass, all bigrams stepped together::

        s1' = (s0 + s1) p_a,  done' = done + s1 p_b,  s0' = s0 (1 - p_a) + s1 (1 - p_a - p_b)
    """
    k = pa.size
    s0 = np.ones(k)
    s1 = np.zeros(k)
    done = np.zeros(k)
    stay0 = 1.0 - pa
    stay1 = 1.0 - pa - pb
    x = lo
    while x < hi and lengths[x] <= 0:
        x += 1
    t = 0
    while x < hi:
        for g in range(k):
            a0 = s0[g]
            a1 = s1[g]
            s1[g] = (a0 + a1) * pa[g]
            done[g] += a1 * pb[g]
            s0[g] = a0 * stay0[g] + a1 * stay1[g]
        t += 1
        if lengths[x] == t:
            e = done.sum()
            while x < hi and lengths[x] == t:
                out[x] += e
                x += 1


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
def _lcs_prefixes_1w(row_of_pos, masks1, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """:func:`_lcs_prefixes` for a reference of at most 64 tokens (one state word), with the
    same draws: two tokens from each splitmix64 output (high half, then low half). A source
    token absent from the reference has row ``-1``, the last entry of ``masks1``, which is 0
    (the update is then the identity), so the loop has no branch on it."""
    top = _ALL if m == 64 else (_ONE << np.uint64(m)) - _ONE
    un = np.uint64(row_of_pos.size)
    lo32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for d in range(samples):
        st = _stream(seed, src_key, d)
        z = _U0
        v = top
        t = 0
        for x in range(lo, hi):
            L = lengths[x]
            while t < L:
                if t & 1 == 0:
                    st, z = _splitmix(st)
                    b = v & masks1[row_of_pos[np.int64(((z >> s32) * un) >> s32)]]
                    v = ((v + b) | (v & ~b)) & top
                    t += 1
                    if t == L:
                        break
                b = v & masks1[row_of_pos[np.int64(((z & lo32) * un) >> s32)]]
                v = ((v + b) | (v & ~b)) & top
                t += 1
            val = float(m - popcount64(v))
            tot[x] += val
            tot2[x] += val * val


@_jit
def _lcs_prefixes_2w(row_of_pos, m0, m1, m, seed, src_key, lengths, lo, hi, samples, tot, tot2):
    """:func:`_lcs_prefixes_1w` for a reference of 65..128 tokens: two state words, the add
    carried from the low word into the high one; same draws."""
    top = _ALL if m == 128 else (_ONE << np.uint64(m - 64)) - _ONE
    un = np.uint64(row_of_pos.size)
    lo32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for d in range(samples):
        st = _stream(seed, src_key, d)
        z = _U0
        v0 = _ALL
        v1 = top
        t = 0
        for x in range(lo, hi):
            L = lengths[x]
            while t < L:
                if t & 1 == 0:
                    st, z = _splitmix(st)
                    r = row_of_pos[np.int64(((z >> s32) * un) >> s32)]
                else:
                    r = row_of_pos[np.int64(((z & lo32) * un) >> s32)]
                t += 1
                b0 = v0 & m0[r]
                b1 = v1 & m1[r]
                a0 = v0 + b0
                carry = _ONE if a0 < v0 else _ZERO
                v1 = ((v1 + b1 + carry) | (v1 & ~b1)) & top
                v0 = a0 | (v0 & ~b0)
            val = float(m - popcount64(v0) - popcount64(v1))
            tot[x] += val
            tot2[x] += val * val


@_pjit
def mc_lcs(ids, offs, tok_off, line_off, src_ids, src_off, src_keys, g_src, g_ref, len_off,
           lengths, samples, seed, summary_level, mean, sd):
    """Monte Carlo E[LCS] (``summary_level``: Lsum hits with the random summary as one sentence)
    of group g = (source g_src[g], reference text g_ref[g]) at lengths[len_off[g]:len_off[g+1]]
    (sorted): mean and sample sd over ``samples`` draws, the length-L candidate of a draw being
    its first L tokens. A one-line reference (always for ROUGE-L) takes the incremental
    bit-parallel LCS; Lsum against several reference lines is scored per length."""
    for g in nb.prange(g_src.size):
        s = g_src[g]
        src = src_ids[src_off[s]:src_off[s + 1]]
        b = g_ref[g]
        ref = ids[offs[b]:offs[b + 1]]
        lo = len_off[g]
        hi = len_off[g + 1]
        tot = np.zeros(hi - lo)
        tot2 = np.zeros(hi - lo)
        if src.size > 0 and ref.size > 0:
            sent_r = tok_off[line_off[b]:line_off[b + 1] + 1] - tok_off[line_off[b]]
            if (not summary_level) or sent_r.size <= 2:
                # one reference line: union LCS against a one-sentence summary is the LCS
                u, k, masks = build_pm(ref)
                if ref.size <= 64:
                    masks1 = np.zeros(k + 1, dtype=np.uint64)  # masks1[-1] = 0: no match
                    masks1[:k] = masks[:k, 0]
                    _lcs_prefixes_1w(mask_rows(src, u, k), masks1, ref.size, seed,
                                     src_keys[s], lengths[lo:hi], 0, hi - lo, samples, tot,
                                     tot2)
                elif ref.size <= 128:
                    m0 = np.zeros(k + 1, dtype=np.uint64)  # last entry 0: no match
                    m1 = np.zeros(k + 1, dtype=np.uint64)
                    m0[:k] = masks[:k, 0]
                    m1[:k] = masks[:k, 1]
                    _lcs_prefixes_2w(mask_rows(src, u, k), m0, m1, ref.size, seed, src_keys[s],
                                     lengths[lo:hi], 0, hi - lo, samples, tot, tot2)
                else:
                    _lcs_prefixes(mask_rows(src, u, k), masks, ref.size, seed, src_keys[s],
                                  lengths[lo:hi], 0, hi - lo, samples, tot, tot2)
            else:
                lmax = lengths[hi - 1]
                pos = np.empty(max(lmax, 1), dtype=np.int64)
                cand = np.empty(max(lmax, 1), dtype=ids.dtype)
                for d in range(samples):
                    draw_candidate(src, seed, src_keys[s], lmax, d, pos, cand)
                    for x in range(hi - lo):
                        L = lengths[lo + x]
                        if L <= 0:
                            continue
                        sent_c = np.array([0, L], dtype=np.int64)
                        val = float(lsum_hits(ref, sent_r, cand[:L], sent_c))
                        tot[x] += val
                        tot2[x] += val * val
        for x in range(hi - lo):
            m = tot[x] / samples
            mean[lo + x] = m
            sd[lo + x] = (math.sqrt(max(tot2[x] - samples * m * m, 0.0) / (samples - 1))
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


@_jit
def _binom_pmf(k, p, out):
    """out[x] = C(k, x) p^x (1-p)^(k-x) for x = 0..k (log space; p = 0 and p = 1 exact)."""
    if p <= 0.0:
        out[:k + 1] = 0.0
        out[0] = 1.0
        return
    if p >= 1.0:
        out[:k + 1] = 0.0
        out[k] = 1.0
        return
    lp = math.log(p)
    lq = math.log1p(-p)
    lk = math.lgamma(k + 1.0)
    for x in range(k + 1):
        out[x] = math.exp(lk - math.lgamma(x + 1.0) - math.lgamma(k - x + 1.0) + x * lp
                          + (k - x) * lq)


@_jit
def overlap1_pmf(counts_src, n_src, r, L):
    """Exact pmf of O_1 (SPEC_text §2.2): the reference's in-source types have source counts
    counts_src[i] and reference counts r[i]; a random length-L candidate from the source
    unigram model. The multinomial is taken as sequential conditional binomials
    X_i | X_<i ~ Bin(L - s, c_i / (N - sum_{j<i} c_j)) over states (s tokens used, overlap o).
    Returns P(O_1 = o) for o = 0..min(L, sum r)."""
    omax = 0
    for i in range(r.size):
        omax += min(r[i], L)
    omax = min(omax, L)
    cur = np.zeros((L + 1, omax + 1))
    nxt = np.zeros((L + 1, omax + 1))
    cur[0, 0] = 1.0
    pmf = np.empty(L + 1)
    used = 0
    for i in range(r.size):
        rest = n_src - used
        p = counts_src[i] / rest if rest > 0 else 0.0
        used += counts_src[i]
        nxt[:, :] = 0.0
        for s in range(L + 1):
            k = L - s
            _binom_pmf(k, p, pmf)
            for o in range(omax + 1):
                mass = cur[s, o]
                if mass == 0.0:
                    continue
                for x in range(k + 1):
                    if pmf[x] == 0.0:
                        continue
                    o2 = min(o + min(x, r[i]), omax)
                    nxt[s + x, o2] += mass * pmf[x]
        cur, nxt = nxt, cur
    out = np.zeros(omax + 1)
    for s in range(L + 1):
        for o in range(omax + 1):
            out[o] += cur[s, o]
    return out
