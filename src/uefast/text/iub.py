"""IUB: the ideal upper bound of ROUGE at the candidate's length L (SPEC_text §3).

Kinds (the overlap O* of the best length-L text; the metric value is then prf(O*, n_c, n_r)
with rouge-score's formulas, e.g. R-IUB = O*/max(n_r, 1)):

* ``len`` (default, exact): the best of **any** text of length L -- the reference truncated or
  padded to L. ROUGE-N: O* = min(n_c, n_r) = max(min(L, M) - n + 1, 0); ROUGE-L/Lsum:
  O* = min(L, M). So A <= IUB and V2 lies in [-1, 1].
* ``src``: the best text of length L whose tokens are in the source vocabulary (the random
  model's support). ROUGE-1 and ROUGE-L/Lsum: O* = min(L, M_src) with M_src the reference tokens
  whose type occurs in the source (exact). ROUGE-N, n >= 2: the upper end min(n_c, E_src) of the
  bracket, E_src the reference n-gram windows with every token in the source. The lower end
  (:func:`src_lower`: whole in-source segments of the reference, longest first) is attained;
  where the two differ the exact value needs a longest-trail search (SPEC_text §3, NP-hard in
  general), so it is not computed: :func:`uefast.text.evaluate` counts those pairs in the table
  metadata (the bracket closes on 91.6 % of SummEval pairs).
* ``one``: the range maximum 1 (ignores length).

Multi-reference mean: ROUGE-1 under ``len``/``src`` is exact by greedy on marginal gains (F4):
the k-th copy of word w gains sum_j w_j [k <= r_jw], with w_j = 1/(J max(M_j,1)) (R),
2/(J (L + M_j)) (F), 1/(J max(L,1)) (P); the L largest gains are taken (separable concave, so
greedy is optimal). For n >= 2 and L/Lsum the mean of the per-reference IUBs, a valid upper
bound that need not be attained.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.text._expected_kernels import src_count
from uefast.text.rouge import Variant

__all__ = ["IUB_KINDS", "iub_overlap", "src_windows", "src_lower", "greedy_mean_rouge1"]

IUB_KINDS = ("len", "src", "one")
SCORE_CODES = {"precision": 0, "recall": 1, "f1": 2}

_pjit = nb.njit(cache=True, nogil=True, parallel=True)


@_pjit
def _src_windows(ids, offs, src_sorted, src_off, p_src, p_ref, n, out):
    """out[p] = number of n-gram windows of reference text p_ref[p] whose tokens all occur in
    source p_src[p]."""
    for p in nb.prange(p_ref.size):
        s = p_src[p]
        src = src_sorted[src_off[s]:src_off[s + 1]]
        ref = ids[offs[p_ref[p]]:offs[p_ref[p] + 1]]
        run = 0  # length of the current run of in-source tokens
        cnt = 0
        for i in range(ref.size):
            if src_count(src, ref[i]) > 0:
                run += 1
                if run >= n:
                    cnt += 1
            else:
                run = 0
        out[p] = cnt


@_pjit
def _src_lower(ids, offs, src_sorted, src_off, p_src, p_ref, n, length, out):
    """out[p] = the lower end of the ``src`` bracket for n-grams: the reference's maximal
    in-source segments packed whole, longest first, into ``length[p]`` tokens, the last one
    truncated; a segment of k tokens gives max(k - n + 1, 0) reference windows (SPEC_text §3)."""
    for p in nb.prange(p_ref.size):
        s = p_src[p]
        src = src_sorted[src_off[s]:src_off[s + 1]]
        ref = ids[offs[p_ref[p]]:offs[p_ref[p] + 1]]
        seg = np.zeros(ref.size + 1, dtype=np.int64)
        k = 0
        run = 0
        for i in range(ref.size):
            if src_count(src, ref[i]) > 0:
                run += 1
            elif run > 0:
                seg[k] = run
                k += 1
                run = 0
        if run > 0:
            seg[k] = run
            k += 1
        segs = np.sort(seg[:k])[::-1]
        rem = length[p]
        low = 0
        for j in range(k):
            if rem <= 0:
                break
            take = min(segs[j], rem)
            low += max(take - n + 1, 0)
            rem -= take
        out[p] = low


def src_lower(tok, sources, p_src, p_ref, n: int, length) -> np.ndarray:
    """Lower end of the ``src`` bracket of the n-gram overlap per pair (:func:`_src_lower`):
    attained by a text of ``length`` source tokens, so the exact IUB lies in
    [src_lower, min(n_c, E_src)]."""
    out = np.empty(len(p_ref), dtype=np.int64)
    _src_lower(tok.ids, tok.text_offsets, sources.sorted_ids, sources.offsets,
               np.ascontiguousarray(p_src, np.int64), np.ascontiguousarray(p_ref, np.int64),
               np.int64(n), np.ascontiguousarray(length, np.int64), out)
    return out


def src_windows(tok, sources, p_src, p_ref, n: int) -> np.ndarray:
    """E_src^(n) per pair (M_src for n = 1): see :func:`_src_windows`."""
    out = np.empty(len(p_ref), dtype=np.int64)
    _src_windows(tok.ids, tok.text_offsets, sources.sorted_ids, sources.offsets,
                 np.ascontiguousarray(p_src, np.int64), np.ascontiguousarray(p_ref, np.int64),
                 np.int64(n), out)
    return out


def iub_overlap(variant: Variant, kind: str, length_c, length_r, e_src=None) -> np.ndarray:
    """O* per pair for ``kind`` ``len`` or ``src`` (``e_src`` from :func:`src_windows` with the
    variant's n, 1 for L/Lsum)."""
    lc = np.asarray(length_c, dtype=np.int64)
    lr = np.asarray(length_r, dtype=np.int64)
    n = variant.n if variant.kind == "N" else 1
    units_c = np.maximum(lc - n + 1, 0)
    best = np.minimum(units_c, np.maximum(lr - n + 1, 0))
    if kind == "src":
        best = np.minimum(units_c, np.asarray(e_src, dtype=np.int64))
    return best


@_pjit
def _greedy(ids, offs, row_off, pair_ref, src_sorted, src_off, row_src, lengths, score, use_src,
            out):
    for row in nb.prange(row_off.size - 1):
        j0 = row_off[row]
        j1 = row_off[row + 1]
        nref = j1 - j0
        L = lengths[row]
        out[row] = 0.0
        if nref == 0 or L <= 0:
            continue
        total = 0
        for j in range(j0, j1):
            total += offs[pair_ref[j] + 1] - offs[pair_ref[j]]
        allw = np.empty(total, dtype=ids.dtype)
        pos = 0
        for j in range(j0, j1):
            seg = ids[offs[pair_ref[j]]:offs[pair_ref[j] + 1]]
            allw[pos:pos + seg.size] = seg
            pos += seg.size
        words = np.unique(allw)
        src = src_sorted[src_off[row_src[row]]:src_off[row_src[row] + 1]]
        gains = np.zeros(total)
        ng = 0
        seg_off = np.zeros(nref + 1, dtype=np.int64)
        sorted_all = allw.copy()
        weights = np.zeros(nref)
        for j in range(nref):
            m = offs[pair_ref[j0 + j] + 1] - offs[pair_ref[j0 + j]]
            seg_off[j + 1] = seg_off[j] + m
            sorted_all[seg_off[j]:seg_off[j + 1]].sort()
            if score == 0:
                weights[j] = 1.0 / (nref * max(L, 1))
            elif score == 1:
                weights[j] = 1.0 / (nref * max(m, 1))
            else:
                weights[j] = 2.0 / (nref * (L + m)) if m > 0 else 0.0
        counts = np.zeros(nref, dtype=np.int64)
        for w in words:
            if use_src and src_count(src, w) == 0:
                continue
            top = 0
            for j in range(nref):
                seg = sorted_all[seg_off[j]:seg_off[j + 1]]
                counts[j] = np.searchsorted(seg, w, side="right") - np.searchsorted(seg, w)
                top = max(top, counts[j])
            for k in range(1, top + 1):
                g = 0.0
                for j in range(nref):
                    if k <= counts[j]:
                        g += weights[j]
                gains[ng] = g
                ng += 1
        g_sorted = np.sort(gains[:ng])[::-1]
        acc = 0.0
        for x in range(min(L, ng)):
            acc += g_sorted[x]
        out[row] = acc


def greedy_mean_rouge1(tok, sources, row_off, pair_ref, row_src, lengths, score: str,
                       kind: str) -> np.ndarray:
    """Exact IUB of the mean over references of ROUGE-1 ``score`` per row (F4)."""
    out = np.empty(len(row_off) - 1)
    _greedy(tok.ids, tok.text_offsets, np.ascontiguousarray(row_off, np.int64),
            np.ascontiguousarray(pair_ref, np.int64), sources.sorted_ids, sources.offsets,
            np.ascontiguousarray(row_src, np.int64), np.ascontiguousarray(lengths, np.int64),
            np.int64(SCORE_CODES[score]), kind == "src", out)
    return out
