"""Sakai's measures built on the blended ratio (Numba): Q-measure and O-measure, plain and
tie-aware, with their exact REB.

The blended ratio at rank r (Sakai, "New performance metrics based on multigrade relevance",
NTCIR-4 2004; Sakai & Song, SIGIR 2011) is

    BR(r) = (C(r) + beta * cg(r)) / (r + beta * cg*(r)),

C(r) the relevant documents (label >= 1) in the top r, cg(r) their cumulative gain, cg*(r) the
cumulative gain of the ideal ranking (the judged labels sorted descending, ``ideal``). Gains are
:func:`~uefast.kernels.metrics.gain` (``gtype``; NTCIREVAL's default gain of level l is l, our
``gain=lin``). Routines read the labels in rank order ``lab[0:n]`` like those of
:mod:`uefast.kernels.metrics`, ``ideal[0:len(ideal)]`` (the ideal ranking; positions beyond it
have gain 0), and allocate nothing.

Tie-aware forms (McSherry & Najork's argument, SPEC_math §5, carried to the blended ratio): in a
tie group of t documents, r relevant, with gain sum G (only relevant documents have a gain) and
S = r + beta * G, the m-th position (m = 0, 1, ...) of the group has

    E[I(p) (C(p) + beta cg(p))] = (r/t)(R_<g + beta CG_<g) + S/t + m (r - 1) S / (t (t - 1))

(R_<g, CG_<g: the relevant documents and gain of the earlier groups; the last term is 0 for t = 1),
and the denominator r + beta cg*(r) depends on the position only. REB is the single group of all
judged documents: O(K) per query.
"""
from __future__ import annotations

import math

import numba as nb

from uefast.kernels.metrics import _cut, gain

__all__ = ["q_plain", "q_plain_pos", "q_tied", "q_reb", "ncu_plain", "ncu_tied", "o_plain", "o_tied", "pplus_plain", "pplus_tied"]

_jit = nb.njit(cache=True, nogil=True)
# the shared blended-ratio helpers are inlined at Numba IR level into their callers: as separate
# functions each compiled once per argument-type variant (read-only or writable arrays, slices),
# 8 signatures of _br_group alone, which made the cold first call ~20 % slower to compile
_inl = nb.njit(cache=True, nogil=True, inline="always")


@_inl
def _br_walk(lab, K, gtype, beta, ideal, stop, wgain, gamma):
    """The blended-ratio walk shared by Q, P+, NCU, NCUrb and the P-measure: (the sum of
    w(r) BR(r) over the relevant ranks r <= K, C at the last rank read, the last term w(r) BR(r)).
    w(r) = gamma^(C(r)-1) (NCUrb's rank-biased stop weights before their division by Z; gamma = 1
    for the others: a factor 1.0, exact) times the gain g(l_r) when ``wgain`` (NCU's
    graded-uniform stop weights, before their division by the judged gain sum), formed as
    ((gamma^(C-1) (C + beta cg)) / (r + beta cg*(r))) g(l_r), so that each measure keeps the
    bits of its own earlier loop. The walk stops after the first document of label ``stop``
    (a ``stop`` below 1 never stops). ``ideal`` is the ideal ranking (cg*(r) = its gain sum to
    r)."""
    ni = ideal.shape[0]
    s = 0.0
    cg = 0.0
    cgi = 0.0
    c = 0
    w = 1.0
    term = 0.0
    for i in range(K):
        if i < ni:
            cgi += gain(ideal[i], gtype)
        if lab[i] >= 1:
            c += 1
            g = gain(lab[i], gtype)
            cg += g
            term = w * (c + beta * cg) / (i + 1.0 + beta * cgi) * (g if wgain else 1.0)
            s += term
            w *= gamma
            if lab[i] == stop:
                return s, c, term
    return s, c, term


@_inl
def _br_group(lab, start, end, K, gtype, beta, ideal, r_before, g_before, cgi, wgain):
    """One tie group's part of the tie-aware sum of w(p) BR(p), shared by Q, P+ and NCU (w as in
    :func:`_br_walk`). The group (positions start..end-1, t documents) holds r relevant ones of
    gain sum G; with v_j = 1 + beta g_j for its relevant documents (0 otherwise), W = sum w_j,
    V = r + beta G, D = sum w_j v_j and A = R_< + beta CG_<, its m-th position (m = 0, 1, ...)
    has E[w(p) (C(p) + beta cg(p))] = (A W + D)/t + m (W V - D)/(t (t - 1)) (McSherry & Najork's
    argument: the document at p is any of the t alike, the m before it a random m of the other
    t - 1; w = [relevant] gives the module docstring's formula). Its positions before K add that
    over i + 1 + beta cg*(i + 1), i = start + m. Returns (that sum, r, G, cg* at the last
    position read), ``cgi`` being cg* before the group."""
    t = end - start
    r = 0
    gs = 0.0
    w_sum = 0.0
    d_sum = 0.0
    for i in range(start, end):
        if lab[i] >= 1:
            r += 1
            g = gain(lab[i], gtype)
            gs += g
            w = g if wgain else 1.0
            w_sum += w
            d_sum += w * (1.0 + beta * g)
    a = (w_sum * (r_before + beta * g_before) + d_sum) / t
    b = (w_sum * (r + beta * gs) - d_sum) / (t * (t - 1.0)) if t > 1 else 0.0
    s, cgi = _br_positions(start, min(end, K), a, b, beta, ideal, gtype, cgi)
    return s, r, gs, cgi


@_inl
def _br_positions(start, stop, a, b, beta, ideal, gtype, cgi):
    """sum_{i=start}^{stop-1} (a + (i - start) b) / (i + 1 + beta cg*(i + 1)), the expected
    blended-ratio numerators of a tie group over their denominators; ``cgi`` is cg*(start) and
    (sum, cg*(stop)) is returned (0 terms skipped: a group without relevant documents only
    advances cg*)."""
    ni = ideal.shape[0]
    s = 0.0
    for i in range(start, stop):
        if i < ni:
            cgi += gain(ideal[i], gtype)
        if a != 0.0 or b != 0.0:
            s += (a + (i - start) * b) / (i + 1.0 + beta * cgi)
    return s, cgi


@_jit
def q_plain(lab, n, k, gtype, beta, nrel, ideal):
    """Q@k = (1 / min(R, k)) sum_{r<=K} I(r) BR(r) (R = Np; no cutoff: divided by R), 0 when
    R = 0 (Sakai 2004; NTCIREVAL's Q-measure)."""
    if nrel == 0:
        return 0.0
    s, _, _ = _br_walk(lab, _cut(k, n), gtype, beta, ideal, 0, False, 1.0)
    return s / (min(nrel, k) if k > 0 else nrel)


@_jit
def q_plain_pos(lab, n, k, gtype, beta, nrel, ideal, pos):
    """:func:`q_plain` for the ranking pass, the same sum in fewer and steadier steps. Ranks
    i < L, L = min(K, R*) (R*: the ideal ranking's relevant documents), are walked with cg*
    advanced at every rank and the blended ratio added at every rank times [l_i >= 1] (no branch
    on the label: adding 0 leaves the sum's bits as they were); from L on cg* is the judged gain
    sum, so only the relevant ranks are visited, compacted first into ``pos`` (int64 scratch of
    length >= K; a store per rank, no branch, as :func:`~uefast.kernels.metrics.sp_plain`). The
    same additions in the same order as :func:`q_plain`: the same bits."""
    if nrel == 0:
        return 0.0
    K = _cut(k, n)
    L = min(K, ideal.shape[0])
    s = 0.0
    cg = 0.0
    cgi = 0.0
    c = 0
    i = 0
    while i < L and ideal[i] >= 1:
        cgi += gain(ideal[i], gtype)
        r = lab[i] >= 1
        c += r
        cg += r * gain(max(lab[i], 1), gtype)
        s += r * ((c + beta * cg) / (i + 1.0 + beta * cgi))
        i += 1
    m = 0
    for j in range(i, K):
        pos[m] = j
        m += lab[j] >= 1
    bc = beta * cgi  # no gain below label 1: cg* stays
    for u in range(m):
        j = pos[u]
        c += 1
        cg += gain(lab[j], gtype)
        s += (c + beta * cg) / (j + 1.0 + bc)
    return s / (min(nrel, k) if k > 0 else nrel)


@_inl
def _br_tied(lab, gend, ng, K, gtype, beta, ideal, wgain):
    """The tie-aware sum of w(p) BR(p) over positions < K (w as in :func:`_br_walk`): the groups
    ``gend[0:ng]`` one after the other through :func:`_br_group`."""
    s = 0.0
    cgi = 0.0
    r_before = 0.0
    g_before = 0.0
    start = 0
    for g in range(ng):
        end = gend[g]
        if start >= K:
            break
        part, r, gs, cgi = _br_group(lab, start, end, K, gtype, beta, ideal, r_before, g_before,
                                     cgi, wgain)
        s += part
        r_before += r
        g_before += gs
        start = end
    return s


@_jit
def q_tied(lab, gend, ng, n, k, gtype, beta, nrel, ideal):
    """Tie-aware Q@k: the expectation of :func:`q_plain` over the orders consistent with the tie
    groups ``gend[0:ng]``, by the group formula of the module docstring (O(n))."""
    if nrel == 0:
        return 0.0
    s = _br_tied(lab, gend, ng, _cut(k, n), gtype, beta, ideal, False)
    return s / (min(nrel, k) if k > 0 else nrel)


#: :func:`_flat_tail` sums term by term below these: tails shorter than FLAT_MIN_LEN, first
#: denominators below FLAT_MIN_X (the asymptotic series of digamma needs x >= 30 for 1e-17), or
#: a cancellation between its two parts that would cost more than FLAT_MAX_COND times the
#: rounding of each
FLAT_MIN_LEN = 16
FLAT_MIN_X = 30.0
FLAT_MAX_COND = 32.0


@_inl
def _psi_tail(x):
    """digamma(x) - ln x for x >= 30: -1/(2x) - 1/(12x^2) + 1/(120x^4) - 1/(252x^6) + 1/(240x^8)
    (the Bernoulli series; the next term is below 1/(132 x^10) <= 1.3e-17)."""
    r = 1.0 / x
    r2 = r * r
    return -0.5 * r - r2 * (1.0 / 12.0 - r2 * (1.0 / 120.0 - r2 * (1.0 / 252.0 - r2 / 240.0)))


@_inl
def _flat_tail(a, b, bc, j0, K):
    """sum_{j=j0}^{K-1} (a + j b) / (j + 1 + bc): the blended-ratio terms of Q's REB once cg* is
    flat (a, b >= 0). With x = j0 + 1 + bc and L = K - j0 terms, each is b + c / (x + t),
    c = a + j0 b - b x, so the sum is b L + c (psi(x + L) - psi(x)) (psi: digamma), the
    difference taken as log1p(L / x) plus that of :func:`_psi_tail` (no subtraction of nearly
    equal logarithms). Used where x >= FLAT_MIN_X, L >= FLAT_MIN_LEN and the two parts cancel
    by less than FLAT_MAX_COND (relative error then <= ~1e-14; tests: 4e-15 against the terms
    summed); else the terms one by one."""
    L = K - j0
    x = j0 + 1.0 + bc
    if L >= FLAT_MIN_LEN and x >= FLAT_MIN_X:
        c = a + j0 * b - b * x
        dpsi = math.log1p(L / x) + (_psi_tail(x + L) - _psi_tail(x))
        p = b * L
        q = c * dpsi
        if p + q > 0.0 and abs(p) + abs(q) <= FLAT_MAX_COND * (p + q):
            return p + q
    s = 0.0
    for j in range(j0, K):
        s += (a + j * b) / (j + 1.0 + bc)
    return s


@_jit
def q_reb(lab, n, k, gtype, beta, nrel, gsum):
    """E[Q@k] over uniformly random orders of the n judged labels ``lab`` (sorted descending, so
    also the ideal ranking), ``gsum`` their gain sum: :func:`q_tied` with one group of all n
    documents, whose relevant count R = ``nrel`` and gain sum are known, so
    sum_{m<K} (S/n + m (R-1) S/(n(n-1))) / (m+1 + beta cg*(m+1)) / min(R, k), S = R + beta gsum.
    O(K), one pass: :func:`_br_positions`' sum, term for term, with cg* advanced by each block
    of equal labels' gain (one gain per block); once the labels have no gain left cg* stays, and
    the rest is :func:`_flat_tail`'s (a closed form where it is well conditioned)."""
    if nrel == 0:
        return 0.0
    S = nrel + beta * gsum
    a = S / n
    b = (nrel - 1.0) * S / (n * (n - 1.0)) if n > 1 else 0.0
    K = _cut(k, n)
    s = 0.0
    cgi = 0.0
    i = 0
    while i < K and lab[i] >= 1:
        v = lab[i]
        gv = gain(v, gtype)
        while i < K and lab[i] == v:
            cgi += gv
            s += (a + i * b) / (i + 1.0 + beta * cgi)
            i += 1
    bc = beta * cgi  # no gain below label 1: cg* stays
    s += _flat_tail(a, b, bc, i, K)
    return s / (min(nrel, k) if k > 0 else nrel)


@_jit
def o_plain(lab, n, k, gtype, beta, nrel, ideal):
    """O-measure@k = BR(r1) = (1 + beta g(r1)) / (r1 + beta cg*(r1)), r1 the rank of the first
    relevant document within the top K, 0 if none (Sakai, IPSJ TOD 48(SIG9), 2007; NTCIREVAL's
    O-measure, whose cutoff is the truncation of the list)."""
    K = _cut(k, n)
    ni = ideal.shape[0]
    cgi = 0.0
    for i in range(K):
        if i < ni:
            cgi += gain(ideal[i], gtype)
        if lab[i] >= 1:
            return (1.0 + beta * gain(lab[i], gtype)) / (i + 1.0 + beta * cgi)
    return 0.0


@_jit
def o_tied(lab, gend, ng, n, k, gtype, beta, nrel, ideal):
    """Tie-aware O-measure@k: in the first group holding r > 0 relevant of t documents (gain sum
    G), starting after position s, the first relevant document is at s + m with probability
    E_{m-1} - E_m, E_m = C(t-r, m)/C(t, m), and it is any of the r relevant ones alike, so
    E[O] = sum_m (E_{m-1} - E_m) (1 + beta G / r) / (s + m + beta cg*(s + m))."""
    K = _cut(k, n)
    ni = ideal.shape[0]
    cgi = 0.0
    start = 0
    for g in range(ng):
        end = gend[g]
        if start >= K:
            return 0.0
        t = end - start
        r = 0
        gs = 0.0
        for i in range(start, end):
            if lab[i] >= 1:
                r += 1
                gs += gain(lab[i], gtype)
        if r == 0:
            for i in range(start, min(end, ni)):
                cgi += gain(ideal[i], gtype)
            start = end
            continue
        num = 1.0 + beta * gs / r
        s = 0.0
        e_prev = 1.0
        for m in range(1, min(end, K) - start + 1):
            i = start + m - 1
            if i < ni:
                cgi += gain(ideal[i], gtype)
            e_m = e_prev * (t - r - m + 1.0) / (t - m + 1.0)
            if e_m < 0.0:
                e_m = 0.0
            s += (e_prev - e_m) * num / (i + 1.0 + beta * cgi)
            e_prev = e_m
        return s
    return 0.0


@_jit
def _lchoose(a, b):
    return math.lgamma(a + 1.0) - math.lgamma(b + 1.0) - math.lgamma(a - b + 1.0)


@_jit
def pplus_plain(lab, n, gtype, beta, ideal):
    """P+ = (1/C(rp)) sum_{r<=rp} I(r) BR(r), rp the rank of the first document of the highest
    level present in the list, 0 if the list holds no relevant document (Sakai, IPSJ TOD
    48(SIG9), 2007; NTCIREVAL's P-plus)."""
    top = 0
    for i in range(n):
        top = max(top, lab[i])
    if top < 1:
        return 0.0
    # stops at rp (the top level is present)
    s, c, _ = _br_walk(lab, n, gtype, beta, ideal, top, False, 1.0)
    return s / c


@_jit
def pplus_tied(lab, gend, ng, n, gtype, beta, ideal):
    """Tie-aware P+ (the expectation over tie orders). Groups before g*, the first group holding
    a document of the top level L*, add A = sum of their E[I(p) (C(p) + beta cg(p))] / D(p), by
    the Q-measure group formula (D(i) = i + beta cg*(i)). In g* (t documents starting after
    position c, h of level L*, r' other relevant ones of mean gain g'), the first L* document is
    at c + m with probability C(t-m, h-1)/C(t, h); given m, the m-1 documents before it are a
    random subset of the t-h others, holding j relevant ones with hypergeometric probability, and
    given (m, j) the expected numerator sum B(m, j) over positions c+1..c+m is

        j/(m-1) (R_< + beta CG_< + 1 + beta g') W1(m) + j(j-1)/((m-1)(m-2)) (1 + beta g') W2(m)
        + (R_< + j + 1 + beta (CG_< + j g' + g(L*))) / D(c+m),

    W1(m) = sum_{p<m} 1/D(c+p), W2(m) = sum_{p<m} (p-1)/D(c+p); C(rp) = R_< + j + 1 is fixed by
    (m, j), so E[P+] = sum_m sum_j P(m) P(j | m) (A + B(m, j)) / (R_< + j + 1). Cost O(n) before
    g* and O(t * min(t, r')) in g*: REB (one group of all judged documents) is O(n^2) at worst."""
    top = 0
    for i in range(n):
        top = max(top, lab[i])
    if top < 1:
        return 0.0
    ni = ideal.shape[0]
    cgi = 0.0
    acc_a = 0.0
    r_before = 0.0
    g_before = 0.0
    start = 0
    for g in range(ng):
        end = gend[g]
        t = end - start
        h = 0
        for i in range(start, end):
            if lab[i] == top:
                h += 1
        if h == 0:  # a group before g*: the Q-measure group formula over all its positions
            part, r, gs, cgi = _br_group(lab, start, end, end, gtype, beta, ideal, r_before,
                                         g_before, cgi, False)
            acc_a += part
            r_before += r
            g_before += gs
            start = end
            continue
        r = 0
        gs = 0.0
        for i in range(start, end):
            if lab[i] >= 1:
                r += 1
                gs += gain(lab[i], gtype)
        gtop = gain(top, gtype)
        rp = r - h  # other relevant documents of the group
        gbar = (gs - h * gtop) / rp if rp > 0 else 0.0
        u = 1.0 + beta * gbar
        base1 = r_before + beta * g_before + u
        nn = t - h  # the group's documents below the top level
        w1 = 0.0
        w2 = 0.0
        pm = h / t  # P(first top document at m = 1)
        out = 0.0
        for m in range(1, nn + 2):
            i = start + m - 1
            if i < ni:
                cgi += gain(ideal[i], gtype)
            dm = i + 1.0 + beta * cgi
            d = m - 1  # documents before it in the group
            jlo = max(0, d - (nn - rp))
            jhi = min(d, rp)
            lden = _lchoose(nn, d)
            inner = 0.0
            for j in range(jlo, jhi + 1):
                hyp = math.exp(_lchoose(rp, j) + _lchoose(nn - rp, d - j) - lden)
                bm = (r_before + j + 1.0 + beta * (g_before + j * gbar + gtop)) / dm
                if d >= 1:
                    bm += j / d * base1 * w1
                if d >= 2:
                    bm += j * (j - 1.0) / (d * (d - 1.0)) * u * w2
                inner += hyp * (acc_a + bm) / (r_before + j + 1.0)
            out += pm * inner
            w1 += 1.0 / dm
            w2 += (m - 1.0) / dm
            if m <= nn:
                pm *= (t - m - h + 1.0) / (t - m)  # C(t-m-1, h-1)/C(t-m, h-1)
        return out
    return 0.0  # pragma: no cover


@_jit
def _bpref_term(x, nrel, nnon):
    """A relevant document with x judged non-relevant documents above it adds
    1 - min(x, R)/min(R, N) (1 when x = 0)."""
    d = min(nrel, nnon)
    if x <= 0 or d <= 0:  # d = 0: no judged non-relevant document, so x = 0 on condensed lists
        return 1.0
    return 1.0 - min(x, nrel) / d


@_jit
def bpref_plain(lab, n, rel, nrel, nnon):
    """bpref = (1/R) sum over relevant retrieved r of (1 - min(#judged non-relevant above r, R)
    / min(R, N)), on the condensed list (judged documents only; Buckley & Voorhees, SIGIR 2004;
    trec_eval's bpref). N: the judged non-relevant documents of the query."""
    if nrel == 0:
        return 0.0
    s = 0.0
    x = 0
    for i in range(n):
        if lab[i] >= rel:
            s += _bpref_term(x, nrel, nnon)
        else:
            x += 1
    return s / nrel


@_jit
def bpref_tied(lab, gend, ng, n, rel, nrel, nnon):
    """Tie-aware bpref: a relevant document of a tie group with m non-relevant documents has a
    number of them above it uniform on 0..m (its place among itself and those m), after the N_<
    of the earlier groups: it adds the mean of the term over x = N_< .. N_< + m. O(n)."""
    if nrel == 0:
        return 0.0
    s = 0.0
    before = 0
    start = 0
    for g in range(ng):
        end = gend[g]
        r = 0
        for i in range(start, end):
            if lab[i] >= rel:
                r += 1
        m = end - start - r
        if r > 0:
            e = 0.0
            for u in range(m + 1):
                e += _bpref_term(before + u, nrel, nnon)
            s += r * e / (m + 1.0)
        before += m
        start = end
    return s / nrel


@_inl
def _gain_total(ideal, gtype):
    g = 0.0
    for i in range(ideal.shape[0]):
        g += gain(ideal[i], gtype)
    return g


@_jit
def ncu_plain(lab, n, k, gtype, beta, ideal):
    """NCU@k with graded-uniform stop probabilities (stop values = gain values, NTCIREVAL's
    default): sum_{r<=K} I(r) (g(l_r) / G) NU(r), G the gain sum of the judged documents, NU the
    blended ratio BR(r) (``NCUgu,BR``) or, with beta = 0, precision (``NCUgu,P``); 0 when G = 0
    (Sakai & Robertson, EVIA 2008; NTCIREVAL's NCU). Q-measure is the same sum with uniform stops."""
    total = _gain_total(ideal, gtype)
    if total <= 0.0:
        return 0.0
    s, _, _ = _br_walk(lab, _cut(k, n), gtype, beta, ideal, 0, True, 1.0)
    return s / total


@_jit
def ncu_tied(lab, gend, ng, n, k, gtype, beta, ideal):
    """Tie-aware NCU@k: the expectation of :func:`ncu_plain` over the orders consistent with the
    tie groups, by :func:`_br_group` with gain weights (O(n))."""
    total = _gain_total(ideal, gtype)
    if total <= 0.0:
        return 0.0
    return _br_tied(lab, gend, ng, _cut(k, n), gtype, beta, ideal, True) / total
