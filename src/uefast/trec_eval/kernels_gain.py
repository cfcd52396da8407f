"""Per-query kernels for trec_eval's gain-based measures: ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg,
G and rbp (``m_ndcg.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``, ``m_G.c``, ``m_rbp.c``, ``gain_init.c``).

Gains: by default a doc's gain is its qrels label; ``-m ndcg.1=3,2=9`` overrides per label.
trec_eval builds, per topic, a gain table with one entry per ``level=gain`` parameter plus one per
label 0..max_label_of_topic not given, sorts it with ``qsort`` and the comparator
``(int)(g1 - g2)`` (glibc's stable merge sort), and walks it from the largest gain down to build
the ideal ranking.  The table depends on the topic only through its number of label levels, so
:func:`gain_tables` builds it once per distinct level count, in Python; the kernels look it up.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from uefast.trec_eval.registry import c_atol, c_trunc

__all__ = ["gain_tables", "ndcg", "ndcg_rel", "rndcg", "g_measure", "rbp"]


def _valid_int(s: str) -> bool:
    t = s[1:] if s[:1] in "+-" else s
    return bool(t) and t.isdigit()


def _msort(items, cmp):
    """glibc ``msort_with_tmp``: top-down, stable merge sort (n1 = n/2)."""
    n = len(items)
    if n <= 1:
        return list(items)
    n1 = n // 2
    a, b = _msort(items[:n1], cmp), _msort(items[n1:], cmp)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if cmp(a[i], b[j]) <= 0:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def gain_tables(pairs: list[tuple[str, float]], nrl_values: np.ndarray):
    """Sorted gain tables for each number of label levels ``k`` in ``nrl_values``.

    Returns ``(level, gain, counted, size)`` arrays of shape ``(K, M)``/``(K,)`` indexed by ``k``
    (``K = max(nrl_values) + 1``); ``counted`` marks the entry that receives the topic's count of
    docs at that level (``num_at_level``), all others count 0.
    """
    kmax = int(nrl_values.max()) if nrl_values.size else 0
    m = len(pairs) + kmax + 1
    lev = np.zeros((kmax + 1, m), np.int64)
    gain = np.zeros((kmax + 1, m))
    counted = np.zeros((kmax + 1, m), np.bool_)
    size = np.zeros(kmax + 1, np.int64)
    for k in sorted(set(int(x) for x in nrl_values)):
        items = [[c_atol(name), float(val), False] for name, val in pairs if _valid_int(name)]
        for i in range(k):
            for it in items:
                if it[0] == i:
                    it[2] = True
                    break
            else:
                items.append([i, float(i), True])
        items = _msort(items, lambda x, y: c_trunc(x[1] - y[1], 32))
        for j, (lv, g, c) in enumerate(items):
            lev[k, j], gain[k, j], counted[k, j] = lv, g, c
        size[k] = len(items)
    return lev, gain, counted, size


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _setup(q, nrl, rel_levels, t_lev, t_gain, t_cnt, t_size):
    k = nrl[q]
    ng = t_size[k]
    gains = t_gain[k, :ng].copy()
    levels = t_lev[k, :ng]
    num_at = np.zeros(ng, np.int64)
    for j in range(ng):
        if t_cnt[k, j]:
            num_at[j] = rel_levels[q, levels[j]]
    return levels, gains, num_at, ng


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _get_gain(r, levels, gains, ng):
    for j in range(ng):
        if levels[j] == r:
            return gains[j]
    return 0.0


@nb.njit(cache=True, nogil=True)
def _advance_ideal(nat, cur, num_at, gains):
    """Step the ideal ranking one position: ``nat`` counts positions used at gain level ``cur``
    (of ``num_at[cur]`` documents); returns the new (nat, cur, gain at the position)."""
    nat += 1
    while cur >= 0 and nat > num_at[cur]:
        nat = 1
        cur -= 1
    return nat, cur, (gains[cur] if cur >= 0 else 0.0)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def ndcg(rel, off, rel_levels, nrl, t_lev, t_gain, t_cnt, t_size):
    """Per query ``(dcg, ideal_dcg)`` with discount log2(rank + 1) (``m_ndcg.c``); ndcg is
    dcg / ideal_dcg when ideal_dcg > 0, else 0."""
    e = off.size - 1
    out = np.zeros((e, 2))
    for q in range(e):
        levels, gains, num_at, ng = _setup(q, nrl, rel_levels, t_lev, t_gain, t_cnt, t_size)
        n = off[q + 1] - off[q]
        rd = 0.0
        idl = 0.0
        cur = ng - 1
        ig = gains[cur] if cur >= 0 else 0.0
        nat = 0
        i = 0
        while i < n and ig > 0.0:
            rg = _get_gain(rel[off[q] + i], levels, gains, ng)
            if rg != 0:
                rd += rg / math.log2(float(i + 2))
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if ig > 0.0:
                idl += ig / math.log2(float(i + 2))
            i += 1
        while i < n:
            rg = _get_gain(rel[off[q] + i], levels, gains, ng)
            if rg != 0:
                rd += rg / math.log2(float(i + 2))
            i += 1
        while ig > 0.0:
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if ig > 0.0:
                idl += ig / math.log2(float(i + 2))
            i += 1
        out[q, 0] = rd
        out[q, 1] = idl
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def ndcg_rel(rel, off, rel_levels, nrl, t_lev, t_gain, t_cnt, t_size):
    """ndcg_rel (``m_ndcg_rel.c``): ndcg averaged over the ranks of relevant (gain > 0) docs,
    unretrieved relevant docs contributing final dcg / ideal dcg."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        levels, gains, num_at, ng = _setup(q, nrl, rel_levels, t_lev, t_gain, t_cnt, t_size)
        n = off[q + 1] - off[q]
        rd = 0.0
        idl = 0.0
        s = 0.0
        nrr = 0
        nr = 0
        cur = ng - 1
        ig = gains[cur] if cur >= 0 else 0.0
        nat = 0
        i = 0
        while i < n and ig > 0.0:
            rg = _get_gain(rel[off[q] + i], levels, gains, ng)
            if rg != 0:
                rd += rg / math.log2(float(i + 2))
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if ig > 0.0:
                nr += 1
                idl += ig / math.log2(float(i + 2))
            if rg > 0:
                s += rd / idl
                nrr += 1
            i += 1
        while i < n:
            rg = _get_gain(rel[off[q] + i], levels, gains, ng)
            if rg != 0:
                rd += rg / math.log2(float(i + 2))
            if rg > 0:
                s += rd / idl
                nrr += 1
            i += 1
        while ig > 0.0:
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if ig > 0.0:
                nr += 1
                idl += ig / math.log2(float(i + 2))
            i += 1
        s += float(nr - nrr) * rd / idl
        if s > 0.0:
            out[q] = s / nr
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def rndcg(rel, off, rel_levels, nrl, num_rel, t_lev, t_gain, t_cnt, t_size):
    """Rndcg (``m_Rndcg.c``): ndcg averaged at the rank boundaries where the ideal gain changes
    (and at num_ret); 0 for topics without relevant docs."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        if num_rel[q] == 0:
            continue
        levels, gains, num_at, ng = _setup(q, nrl, rel_levels, t_lev, t_gain, t_cnt, t_size)
        n = off[q + 1] - off[q]
        rd = 0.0
        idl = 0.0
        s = 0.0
        nch = 0
        cur = ng - 1
        ig = gains[cur] if cur >= 0 else 0.0
        old = ig
        nat = 0
        i = 0
        while i < n and ig > 0.0:
            rg = _get_gain(rel[off[q] + i], levels, gains, ng)
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if old != ig:
                if idl > 0.0:
                    s += rd / idl
                    nch += 1
                old = ig
            if rg != 0:
                rd += rg / math.log2(float(i + 2))
            if ig > 0.0:
                idl += ig / math.log2(float(i + 2))
            i += 1
        if i < n:
            while i < n:
                rg = _get_gain(rel[off[q] + i], levels, gains, ng)
                if rg != 0:
                    rd += rg / math.log2(float(i + 2))
                i += 1
            if idl > 0.0:
                s += rd / idl
                nch += 1
        while ig > 0.0:
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if old != ig:
                if idl > 0.0:
                    s += rd / idl
                    nch += 1
                old = ig
            if ig > 0.0:
                idl += ig / math.log2(float(i + 2))
            i += 1
        out[q] = s / nch
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def g_measure(rel, off, rel_levels, nrl, t_lev, t_gain, t_cnt, t_size):
    """G (``m_G.c``): sum of gain(doc) / log2(2 + ideal cost so far - gain so far), over the
    total ideal gain."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        levels, gains, num_at, ng = _setup(q, nrl, rel_levels, t_lev, t_gain, t_cnt, t_size)
        n = off[q + 1] - off[q]
        rg_sum = 0.0
        sr = 0.0
        si = 0.0
        sc = 0.0
        min_cost = 1.0
        cur = ng - 1
        ig = gains[cur] if cur >= 0 else 0.0
        nat = 0
        i = 0
        while i < n and ig > 0.0:
            rgn = _get_gain(rel[off[q] + i], levels, gains, ng)
            sr += rgn
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if ig > 0.0:
                si += ig
            if ig >= min_cost:
                sc += ig
            else:
                sc += min_cost
            if rgn != 0:
                rg_sum += rgn / math.log2(2 + sc - sr)
            i += 1
        while i < n:
            rgn = _get_gain(rel[off[q] + i], levels, gains, ng)
            sr += rgn
            sc += min_cost
            if rgn != 0:
                rg_sum += rgn / math.log2(2 + sc - sr)
            i += 1
        while ig > 0.0:
            nat, cur, ig = _advance_ideal(nat, cur, num_at, gains)
            if ig > 0.0:
                si += ig
            i += 1
        if si > 0.0:
            out[q] = rg_sum / si
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def rbp(rel, off, rel_levels, nrl, p, t_lev, t_gain, t_cnt, t_size):
    """Rank-biased precision (1 - p) * sum_i gain(i) * p^(i-1) (``m_rbp.c``; Moffat & Zobel,
    TOIS 2008); gains outside [0, 1] are min-max normalised to [0, 1] per topic."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        levels, gains, num_at, ng = _setup(q, nrl, rel_levels, t_lev, t_gain, t_cnt, t_size)
        mn = 0.0
        mx = 0.0
        for j in range(ng):
            if gains[j] < mn:
                mn = gains[j]
            if gains[j] > mx:
                mx = gains[j]
        if mn < 0 or mx > 1:
            for j in range(ng):
                gains[j] = (gains[j] - mn) / (mx - mn)
        s = 0.0
        cur = 1.0
        for i in range(off[q], off[q + 1]):
            g = _get_gain(rel[i], levels, gains, ng)
            if g != 0:
                s += g * cur
            cur = cur * p
        out[q] = (1.0 - p) * s
    return out
