"""Per-query kernels for trec_eval's single-valued measures (one Numba loop over queries each).

Input layout shared by all kernels (built by :mod:`uefast.trec_eval.prepare`):
``rel`` int64 flat array of relevance values in rank order (``-1`` = not in qrels,
``-2`` = in qrels with a negative label, i.e. pooled but unjudged), ``off`` the query offsets
(``E + 1``), ``num_rel`` the number of judged docs with label >= ``level`` per query and ``level``
trec_eval's ``-l`` relevance level.  Every formula mirrors the trec_eval 9/10 C source file named
in its docstring, including the order of floating-point operations, so that printed values are
identical.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["counts", "map_ap", "rprec", "bpref", "recip_rank", "infap", "bing", "set_measures",
           "utility", "rbp_resid", "MIN_GEO_MEAN", "INFAP_EPSILON"]

MIN_GEO_MEAN = 0.00001   # trec_eval.h
INFAP_EPSILON = 0.00001  # trec_eval.h


@nb.njit(cache=True, nogil=True, error_model="numpy")
def counts(rel, off, level):
    """num_ret, num_rel_ret, num_nonpool (-1), num_unjudged_in_pool (-2) per query
    (``form_res_rels.c``)."""
    e = off.size - 1
    out = np.zeros((e, 4), np.int64)
    for q in range(e):
        out[q, 0] = off[q + 1] - off[q]
        c1, c2, c3 = 0, 0, 0
        for i in range(off[q], off[q + 1]):  # branch-free counts (labels come in random order)
            r = rel[i]
            c2 += np.int64(r == -1)
            c3 += np.int64(r == -2)
            c1 += np.int64((r >= level) & (r >= 0))
        out[q, 1] = c1
        out[q, 2] = c2
        out[q, 3] = c3
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def map_ap(rel, off, num_rel, level):
    """AP (``m_map.c``): sum over relevant retrieved of rel_so_far/rank, divided by num_rel.
    Also returns gm_map's per-query value log(max(AP, MIN_GEO_MEAN)) (``m_gm_map.c``)."""
    e = off.size - 1
    ap = np.zeros(e)
    gm = np.zeros(e)
    for q in range(e):
        s = 0.0
        rsf = 0
        for i in range(off[q + 1] - off[q]):
            if rel[off[q] + i] >= level:
                rsf += 1
                s += rsf / (i + 1.0)
        if rsf:
            s = s / num_rel[q]
            ap[q] = s
        gm[q] = math.log(max(s, MIN_GEO_MEAN))
    return ap, gm


@nb.njit(cache=True, nogil=True, error_model="numpy")
def rprec(rel, off, num_rel, level):
    """R-precision (``m_Rprec.c``): relevant in the top min(num_ret, R), divided by R."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        n = min(off[q + 1] - off[q], num_rel[q])
        if n == 0:
            continue
        c = 0
        for i in range(n):
            if rel[off[q] + i] >= level:
                c += 1
        out[q] = c / float(num_rel[q])
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def bpref(rel, off, num_rel, num_nonrel, level):
    """bpref (``m_bpref.c``, Buckley & Voorhees SIGIR 2004) and gm_bpref's per-query
    log(max(bpref, MIN_GEO_MEAN)) (``m_gm_bpref.c``).  ``num_nonrel`` counts judged docs with
    0 <= label < level."""
    e = off.size - 1
    out = np.zeros(e)
    gm = np.zeros(e)
    for q in range(e):
        nonrel = 0
        b = 0.0
        nr = num_rel[q]
        for i in range(off[q], off[q + 1]):
            r = rel[i]
            if r >= level and r >= 0:  # relevant: few, a well-predicted branch
                if nonrel > 0:
                    b += 1.0 - (float(min(nonrel, nr)) / float(min(num_nonrel[q], nr)))
                else:
                    b += 1.0
            # judged non-relevant (0 <= r < level) counted without a branch: such docs and
            # unjudged ones (r < 0) alternate unpredictably near the top of a ranking
            nonrel += np.int64((r >= 0) & (r < level))
        if nr:
            b /= nr
        out[q] = b
        gm[q] = math.log(max(b, MIN_GEO_MEAN))
    return out, gm


@nb.njit(cache=True, nogil=True, error_model="numpy")
def recip_rank(rel, off, level):
    """Reciprocal rank of the first relevant retrieved doc (``m_recip_rank.c``)."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        for i in range(off[q + 1] - off[q]):
            if rel[off[q] + i] >= level:
                out[q] = 1.0 / (i + 1.0)
                break
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def infap(rel, off, num_rel, level):
    """infAP (``m_infap.c``; Yilmaz & Aslam, CIKM 2006)."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        nonrel = 0
        rsf = 0
        unj = 0
        s = 0.0
        for j in range(off[q + 1] - off[q]):
            r = rel[off[q] + j]
            if r == -1:
                continue
            if r == -2:
                unj += 1
                continue
            if r >= 0 and r < level:
                nonrel += 1
            else:
                rsf += 1
                if j == 0:
                    s += 1.0
                else:
                    fj = float(j)
                    s += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rsf - 1 + nonrel + unj) / fj) * \
                        ((rsf - 1 + INFAP_EPSILON) / (rsf - 1 + nonrel + 2 * INFAP_EPSILON))
        if num_rel[q]:
            s /= num_rel[q]
        out[q] = s
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def bing(rel, off, num_rel, level):
    """binG (``m_binG.c``): mean over relevant docs of 1/log2(2 + nonrel retrieved before)."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        s = 0.0
        rsf = 0
        for i in range(off[q + 1] - off[q]):
            if rel[off[q] + i] >= level:
                rsf += 1
                s += 1.0 / math.log2(float(3 + i - rsf))
        if rsf:
            out[q] = s / float(num_rel[q])
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def set_measures(num_ret, num_rel, num_rel_ret, beta):
    """set_P, set_relative_P, set_recall, set_map, set_F(beta) (``m_set_*.c``)."""
    e = num_ret.size
    out = np.zeros((e, 5))
    for q in range(e):
        ret = num_ret[q]
        nr = num_rel[q]
        rr = num_rel_ret[q]
        if ret:
            out[q, 0] = rr / float(ret)
        if ret and nr:  # m_set_rel_P.c: 0 when nothing is retrieved or nothing is relevant
            out[q, 1] = rr / float(min(ret, nr))
        if nr:
            out[q, 2] = rr / float(nr)
        if ret and nr:
            out[q, 3] = (float(rr) * float(rr)) / (float(ret) * float(nr))
        if ret and nr and rr:  # m_set_F.c: 0 when nothing relevant is retrieved
            p = rr / float(ret)
            r = rr / float(nr)
            out[q, 4] = (beta + 1.0) * p * r / (beta * p + r)
    return out


def utility(num_ret, num_rel, num_rel_ret, params, num_docs_in_coll):
    """Set utility p1*a + p2*b + p3*c + p4*d over the contingency table (``m_utility.c``)."""
    a, b, c, d = (float(x) for x in params)
    ret = np.asarray(num_ret, np.int64)
    nr = np.asarray(num_rel, np.int64)
    rr = np.asarray(num_rel_ret, np.int64)
    return (a * rr + b * (ret - rr) + c * (nr - rr) + d * (int(num_docs_in_coll) + rr - ret - nr))


@nb.njit(cache=True, nogil=True, error_model="numpy")
def rbp_resid(rel, off, p):
    """RBP residual (``m_rbp_resid.c``): p^n + (1-p) * sum of p^i over unjudged ranks i
    (0 when the ranking has no unjudged doc)."""
    e = off.size - 1
    out = np.zeros(e)
    for q in range(e):
        s = 0.0
        cur = 1.0
        unj = 0
        for i in range(off[q], off[q + 1]):
            if rel[i] < 0:
                unj += 1
                s += cur
            cur = cur * p
        if unj:
            out[q] = cur + (1 - p) * s
    return out
