"""Per-query kernels for trec_eval's measures evaluated at cutoffs.

Long cutoffs (sorted ascending, positive): P, recall, map_cut, success, relative_P, unj,
ndcg_cut.  Fractional cutoffs: iprec_at_recall, 11pt_avg (cutoffs of recall) and Rprec_mult
(multiples of R).  Same input layout as :mod:`uefast.trec_eval.kernels_basic`; each loop is the
one of the C file named in the docstring (``if (i == cutoffs[k])`` before counting doc ``i``,
then "cutoffs not achieved" after the loop).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["cut_family", "ndcg_cut", "iprec_at_recall", "rprec_mult", "CUT_P", "CUT_RECALL",
           "CUT_MAP", "CUT_SUCCESS", "CUT_RELATIVE_P", "CUT_UNJ"]

CUT_P, CUT_RECALL, CUT_MAP, CUT_SUCCESS, CUT_RELATIVE_P, CUT_UNJ = range(6)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _value(kind, i, rsf, s, unj, num_rel):
    if kind == 0:    # m_P.c
        return rsf / float(i)
    if kind == 1:    # m_recall.c
        return rsf / float(num_rel)
    if kind == 2:    # m_map_cut.c
        return s / float(num_rel)
    if kind == 3:    # m_success.c
        return 1.0 if rsf else 0.0
    if kind == 4:    # m_rel_P.c
        return rsf / float(num_rel if i > num_rel else i)
    return unj / float(i)  # m_unjudged.c


@nb.njit(cache=True, nogil=True, error_model="numpy")
def cut_family(rel, off, num_rel, level, cutoffs, kind):
    """P_k = rel@k / k; recall_k = rel@k / R; map_cut_k = sum_{rel i<=k} prec@i / R;
    success_k = [rel@k > 0]; relative_P_k = rel@k / min(k, R); unj_k = unjudged@k / k.
    recall, map_cut and relative_P are 0 for topics with R = 0, as in trec_eval (``m_rel_P.c``
    returns before dividing when ``num_rel == 0``)."""
    e = off.size - 1
    nc = cutoffs.size
    out = np.zeros((e, nc))
    for q in range(e):
        nr = num_rel[q]
        if (kind == 1 or kind == 2 or kind == 4) and nr == 0:
            continue
        ci = 0
        rsf = np.int64(0)  # int64, not the literal 0: _value is compiled once, not twice
        unj = np.int64(0)
        s = 0.0
        n = off[q + 1] - off[q]
        for i in range(n):
            if i == cutoffs[ci]:
                out[q, ci] = _value(kind, i, rsf, s, unj, nr)
                ci += 1
                if ci == nc:
                    break
            r = rel[off[q] + i]
            if r >= level:
                rsf += 1
                s += rsf / float(i + 1)
            unj += np.int64((r == -1) | (r == -2))  # no branch: -1 and 0 alternate unpredictably
        while ci < nc:
            out[q, ci] = _value(kind, cutoffs[ci], rsf, s, unj, nr)
            ci += 1
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def ndcg_cut(rel, off, rel_levels, nrl, cutoffs):
    """ndcg_cut_k (``m_ndcg_cut.c``): DCG with gain = qrels label and discount log2(rank+1),
    over the ideal DCG of the labels sorted descending; labels are used as gains whatever -l."""
    e = off.size - 1
    nc = cutoffs.size
    out = np.zeros((e, nc))
    for q in range(e):
        ci = 0
        s = 0.0
        n = off[q + 1] - off[q]
        for i in range(n):
            if i == cutoffs[ci]:
                out[q, ci] = s
                ci += 1
                if ci == nc:
                    break
            g = float(rel[off[q] + i])
            if g > 0:
                s += g / math.log2(float(i + 2))
        while ci < nc:
            out[q, ci] = s
            ci += 1
        ci = 0
        cur = nrl[q] - 1
        cnt = 0
        ideal = 0.0
        i = 0
        if cur > 0:
            while True:
                cnt += 1
                while cur > 0 and cnt > rel_levels[q, cur]:
                    cur -= 1
                    cnt = 1
                if cur == 0:
                    break
                if i == cutoffs[ci]:
                    if ideal > 0.0:
                        out[q, ci] /= ideal
                    ci += 1
                    if ci == nc:
                        break
                ideal += float(cur) / math.log2(float(i + 2))
                i += 1
        while ci < nc:
            if ideal > 0.0:
                out[q, ci] /= ideal
            ci += 1
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _lround(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


#: 0.0 / 0.0 in C on x86-64 (where trec_eval runs): the default NaN, sign bit set, printed "-nan"
#: (a global: Numba folds a literal ``-np.nan`` to a positive NaN)
_C_ZERO_BY_ZERO = -np.nan


@nb.njit(cache=True, nogil=True, error_model="numpy")
def iprec_at_recall(rel, off, num_rel, level, fractions, use_lround):
    """Interpolated precision at recall fractions (``m_iprec_at_recall.c``; ``m_11pt_avg.c``
    averages the same values).  The fraction's cutoff in relevant docs is ``lround(f * R)`` in
    trec_eval 10 and ``(long)(f * R + 0.9)`` in 9.x.  Int_Prec(X) = max Prec(Y) for Y >= X."""
    e = off.size - 1
    nc = fractions.size
    out = np.zeros((e, nc))
    cuts = np.zeros(nc, np.int64)
    for q in range(e):
        nr = num_rel[q]
        n = off[q + 1] - off[q]
        nrr = 0
        for i in range(off[q], off[q + 1]):
            nrr += np.int64(rel[i] >= level)
        for k in range(nc):
            if use_lround:
                cuts[k] = np.int64(_lround(fractions[k] * nr))
            else:
                cuts[k] = np.int64(fractions[k] * nr + 0.9)
        cc = nc - 1
        while cc >= 0 and cuts[cc] > nrr:
            cc -= 1
        precis = nrr / float(n) if n > 0 else _C_ZERO_BY_ZERO
        ip = precis
        rsf = nrr
        i = n
        # m_iprec_at_recall.c takes the running maximum of rsf / i at every rank i, going up;
        # between two relevant docs rsf is constant, so the largest of those values is the one
        # at the relevant doc's own rank (IEEE division is monotone in the divisor): the
        # maximum is taken there only -- the same values, one division per relevant doc
        while i > 0 and rsf > 0:
            if rel[off[q] + i - 1] >= level:
                precis = rsf / float(i)
                if ip < precis:
                    ip = precis
                while cc >= 0 and rsf == cuts[cc]:
                    out[q, cc] = ip
                    cc -= 1
                rsf -= 1
            i -= 1
        while cc >= 0:
            out[q, cc] = ip
            cc -= 1
    return out


@nb.njit(cache=True, nogil=True, error_model="numpy")
def rprec_mult(rel, off, num_rel, level, mults):
    """Precision at cutoff (long)(m * R + 0.9) for each multiple m of R (``m_Rprec_mult.c``);
    cutoffs past the end of the ranking give num_rel_ret / cutoff."""
    e = off.size - 1
    nc = mults.size
    out = np.zeros((e, nc))
    cuts = np.zeros(nc, np.int64)
    for q in range(e):
        nr = num_rel[q]
        n = off[q + 1] - off[q]
        nrr = 0
        for i in range(off[q], off[q + 1]):
            if rel[i] >= level:
                nrr += 1
        for k in range(nc):
            cuts[k] = np.int64(mults[k] * nr + 0.9)
        cc = nc - 1
        while cc >= 0 and cuts[cc] > n:
            out[q, cc] = nrr / float(cuts[cc])
            cc -= 1
        rsf = nrr
        i = n
        while i > 0 and rsf > 0:
            precis = rsf / float(i)
            while cc >= 0 and i == cuts[cc]:
                out[q, cc] = precis
                cc -= 1
            if rel[off[q] + i - 1] >= level:
                rsf -= 1
            i -= 1
    return out
