"""Numba kernels of the expected ROUGE overlap under the source's unigram model (SPEC_text §2):
a random candidate of L tokens drawn i.i.d. with p(w) = c_src(w)/N.

* ROUGE-1, closed form (§2.1): E[O_1] = sum_w E[min(X_w, r_w)], X_w ~ Bin(L, p_w).
* ROUGE-N, n >= 2, automaton DP (§2.3): for each distinct reference n-gram g a Markov chain
  over (KMP state j in 0..n) x (count c in 0..r_g, absorbed at r_g).
* ROUGE-L / Lsum, Monte Carlo (§2.4): in :mod:`uefast.text._mc_kernels`.

A source is its token ids sorted, so that c_src(w) = (#ids <= w) - (#ids < w) by binary search.
Every kernel loops over groups (one (source, reference) pair with the sorted distinct candidate
lengths it is needed at) in ``prange``.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np


_jit = nb.njit(cache=True, nogil=True)
_pjit = nb.njit(cache=True, nogil=True, parallel=True)


@_jit
def src_count(src_sorted, w):
    """c_src(w): occurrences of token w in the sorted source ids (the first one by binary
    search, then a scan of the run)."""
    a = 0
    b = src_sorted.size
    while a < b:
        m = (a + b) >> 1
        if src_sorted[m] < w:
            a = m + 1
        else:
            b = m
    e = a
    while e < src_sorted.size and src_sorted[e] == w:
        e += 1
    return e - a


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
    acc = (r * math.exp(L * lq))  # k = 0
    for k in range(1, r):
        lc += math.log((L - k + 1) / float(k))
        acc += (r - k) * math.exp(lc + k * lp + (L - k) * lq)
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
def expected_overlap_1(ids, offs, src_sorted, src_off, g_src, g_ref, len_off, lengths, n_vocab,
                       n_chunks, out):
    """out[x] = E[O_1] of group g at candidate length lengths[x], x in len_off[g]:len_off[g+1]:
    sum over the reference's types w, in id order, of E[min(Bin(L, c_src(w)/N), r_w)]. A term
    depends on (c_src(w), r_w, L) only, and many types share (c_src, r) (most occur once in
    each text), so each distinct pair's terms are computed once per group and added for every
    type that has it, in the same order (the same sums, bit for bit). Groups run in
    ``n_chunks`` chunks, each with a dense count map of the group's source (``n_vocab`` ids)."""
    n_grp = g_src.size
    for ch in nb.prange(n_chunks):
        cmap = np.zeros(n_vocab, dtype=np.int64)
        for g in range(ch * n_grp // n_chunks, (ch + 1) * n_grp // n_chunks):
            src = src_sorted[src_off[g_src[g]]:src_off[g_src[g] + 1]]
            _fill(cmap, src, 1)
            _overlap_1_group(ids[offs[g_ref[g]]:offs[g_ref[g] + 1]], src.size, cmap, lengths,
                             len_off[g], len_off[g + 1], out)
            _fill(cmap, src, 0)


@_jit
def _fill(cmap, src, add):
    """cmap[w] = occurrences of w in src (add=1, from zero) or back to zero (add=0)."""
    for i in range(src.size):
        cmap[src[i]] = cmap[src[i]] + 1 if add else 0


@_jit
def _overlap_1_group(ref_ids, n_src, cmap, lengths, lo, hi, out):
    """:func:`expected_overlap_1` of one group (``cmap``: the source's counts)."""
    ref = np.sort(ref_ids)
    vals, cnts = _distinct_runs(ref)
    for x in range(lo, hi):
        out[x] = 0.0
    if n_src == 0:
        return
    # the (c_src, r) of each type; terms[u] the terms of the u-th distinct pair
    pair_c = np.empty(vals.size, dtype=np.int64)
    pair_r = np.empty(vals.size, dtype=np.int64)
    terms = np.empty((vals.size, hi - lo))
    n_pairs = 0
    for t in range(vals.size):
        c = cmap[vals[t]]
        if c == 0:
            continue
        r = cnts[t]
        u = 0
        while u < n_pairs and (pair_c[u] != c or pair_r[u] != r):
            u += 1
        if u == n_pairs:
            pair_c[u] = c
            pair_r[u] = r
            n_pairs += 1
            p = c / n_src
            lp = math.log(p) if p < 1.0 else 0.0
            lq = math.log1p(-p) if p < 1.0 else 0.0
            for x in range(lo, hi):
                L = lengths[x]
                if L <= 0:
                    terms[u, x - lo] = 0.0
                elif r >= L:
                    terms[u, x - lo] = L * p
                elif p >= 1.0:
                    terms[u, x - lo] = float(r)
                else:
                    terms[u, x - lo] = _min_binomial_logs(L, p, r, lp, lq)
        for x in range(lo, hi):
            if lengths[x] > 0:
                out[x] += terms[u, x - lo]


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


@_jit
def _window_heads(ref, n, windows):
    """(head, count): head[i] = the first window j <= i with the n-gram of window i; count[j] =
    the occurrences of the n-gram starting at its first window j (0 elsewhere). Bigrams of
    non-negative int32 ids are packed into one int64 and stably sorted (first window first
    in each run); longer n-grams are compared pairwise."""
    head = np.empty(windows, dtype=np.int64)
    count = np.zeros(windows, dtype=np.int64)
    if n == 2:
        keys = np.empty(windows, dtype=np.int64)
        for i in range(windows):
            keys[i] = (np.int64(ref[i]) << np.int64(32)) | np.int64(ref[i + 1])
        order = np.argsort(keys, kind="mergesort")
        j = 0
        while j < windows:
            h = order[j]
            k = j
            while k < windows and keys[order[k]] == keys[h]:
                head[order[k]] = h
                k += 1
            count[h] = k - j
            j = k
        return head, count
    for i in range(windows):
        head[i] = i
        for j in range(i):
            same = True
            for z in range(n):
                if ref[j + z] != ref[i + z]:
                    same = False
                    break
            if same:
                head[i] = head[j]
                break
        count[head[i]] += 1
    return head, count


@_pjit
def expected_overlap_n(ids, offs, src_sorted, src_off, g_src, g_ref, len_off, lengths, n, n_vocab,
                       n_chunks, out):
    """out[x] = E[O_n] of group g at candidate length lengths[x] by the automaton DP, summed over
    the distinct reference n-grams (an n-gram with a token absent from the source adds 0).
    Groups run in ``n_chunks`` chunks, each with a dense count map of the group's source."""
    n_grp = g_src.size
    for ch in nb.prange(n_chunks):
        cmap = np.zeros(n_vocab, dtype=np.int64)
        for g in range(ch * n_grp // n_chunks, (ch + 1) * n_grp // n_chunks):
            src = src_sorted[src_off[g_src[g]]:src_off[g_src[g] + 1]]
            _fill(cmap, src, 1)
            _overlap_n_group(ids[offs[g_ref[g]]:offs[g_ref[g] + 1]], src.size, cmap, lengths,
                             len_off[g], len_off[g + 1], n, out)
            _fill(cmap, src, 0)


@_jit
def _overlap_n_group(ref, n_src, cmap, lengths, lo, hi, n, out):
    """:func:`expected_overlap_n` of one group (``cmap``: the source's counts)."""
    for x in range(lo, hi):
        out[x] = 0.0
    windows = ref.size - n + 1
    if n_src == 0 or windows <= 0:
        return
    pa_ = np.empty(windows)  # the simple bigrams (a, b), a != b, once in the reference
    pb_ = np.empty(windows)
    n_simple = 0
    head, count = _window_heads(ref, n, windows)
    for i in range(windows):
        if head[i] != i:  # count g once, at its first window
            continue
        r = count[i]
        if n == 2 and r == 1 and ref[i] != ref[i + 1]:
            ca = cmap[ref[i]]
            cb = cmap[ref[i + 1]]
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
            c = cmap[alpha[a]]
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
