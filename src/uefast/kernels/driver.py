"""The one parallel driver over query groups (chunks on several threads,
:func:`~uefast.kernels.threads.run_chunks`).

Two passes share one grouping (``offsets`` into rows, optionally through a permutation ``perm``):

* :func:`judged_pass` -- per query, over its **judged** documents: the ideal ranking (labels sorted
  descending by counting sort), and for every requested measure Np, IUB, REB (exact, or the paper's)
  and the nDCG normaliser IDCG. It does not depend on any system's scores.
* :func:`ranking_pass` -- per ranked segment (a query of one system): sort by score with the tie
  policy, then every requested measure's value, from the same sorted labels.

Work is split into contiguous chunks of segments, handed to threads a few at a time; each chunk
allocates its scratch buffers once, so nothing is allocated per query. Results are written to
fixed slots, so the output does not depend on the thread count. Each pass is a plain ``nogil``
kernel over a range of chunks (``_judged_chunks``, ``_ranking_chunks``) behind a Python function
of the same arguments; the kernels are built per set of measure families
(:func:`chunk_kernels`: a call compiles only the routines of the families it asks for).
"""
from __future__ import annotations

import functools
import os
import types

import numba as nb
import numpy as np

from uefast.kernels import dispatch, segment
from uefast.kernels.dispatch import family_set, measure_iub, measure_reb, paper_reb
from uefast.kernels.metrics import gain
from uefast.kernels.counting import (
    F32_MAX_N,
    counting_ties,
    rank_labels_by_counting,
    rank_labels_f32,
    rank_labels_f32_ties,
    tie_keys_f32,
    tie_order,
    top_positives,
)
from uefast.kernels.ordering import TIE_EXPECTED, heapsort_desc, rank_segment, tie_groups
from uefast.kernels.sortnet import (
    SORTNET_MAX_N,
    SORTNET_TIES_MAX_N,
    rank_labels_sortnet,
    rank_labels_sortnet_groups,
    rank_labels_sortnet_ties,
    sortnet_pays,
    sortnet_ties_pays,
)
from uefast.kernels.segment import segment_measures
from uefast.kernels.threads import run_chunks

__all__ = ["judged_pass", "judged_measure", "ranking_pass", "n_chunks", "chunk_kernels",
           "kernel_set"]

_HIST_MAX = 1 << 16
_PACKED_MAX = 8  # label ranges up to this many values are counted by _packed_counts



def n_chunks(n_segments: int) -> int:
    """How many chunks the driver splits ``n_segments`` into (>= 4 per thread, <= 1024)."""
    return max(1, min(n_segments, 1024, max(64, 8 * nb.get_num_threads())))


@nb.njit(cache=True, nogil=True, inline="always")
def _still_trying(ok, no, g):
    """A chunk's rule for a fast path that may decline: keep offering segments while it declines
    at most 2 more than it takes; past that, offer only every 16th segment (to notice a change)."""
    return no <= ok + 2 or g % 16 == 0


@nb.njit(cache=True, nogil=True)
def _max_len(offsets, s0, s1):
    m = 0
    for s in range(s0, s1):
        d = offsets[s + 1] - offsets[s]
        if d > m:
            m = d
    return m


@nb.njit(cache=True, nogil=True)
def _row(perm, has_perm, i):
    if has_perm:
        return perm[i]
    return i


@nb.njit(cache=True, nogil=True)
def _packed_add(label, lo, hi):
    """Add one label (clamped to >= 0, at most 7) to the 16-bit counter fields of ``lo``
    (values 0-3) and ``hi`` (values 4-7), branch-free."""
    v = max(np.int64(label), 0)
    w = np.int64(1) << (16 * (v & 3))
    m = v >> 2
    return lo + w * (1 - m), hi + w * m


@nb.njit(cache=True, nogil=True)
def _packed_counts(jlab, base, n):
    """Counts of label values 0..7 in ``jlab[base:base+n]`` (n < 65536), packed 4 x 16 bits."""
    lo = np.int64(0)
    hi = np.int64(0)
    seg = jlab[base:base + n]  # indexed from 0: no wraparound code, the loop vectorises
    for i in range(n):
        lo, hi = _packed_add(seg[i], lo, hi)
    return lo, hi


@nb.njit(cache=True, nogil=True)
def _packed_counts_perm(jlab, jperm, base, n):
    """:func:`_packed_counts` of the rows ``jperm[base:base+n]``."""
    lo = np.int64(0)
    hi = np.int64(0)
    rows = jperm[base:base + n]
    for i in range(n):
        lo, hi = _packed_add(jlab[np.uint64(rows[i])], lo, hi)
    return lo, hi


@nb.njit(cache=True, nogil=True)
def _gather(perm, has_perm, base, n, scores, labels, k32, lraw):
    """Row i of one segment: its float32 score ``k32[i]`` and its label clamped at 0
    ``lraw[i]``; returns (N+, number of NaN scores). No data-dependent store, so the loop
    vectorises (the list of positive documents the counting paths need is built only for the
    segments that reach them, :func:`_positives`). Two copies of the loop, with and without the
    permutation: a per-row ``if has_perm`` in one loop ran 2x slower (int8 labels)."""
    npos = 0
    nan = 0
    if has_perm:
        rows = perm[base:base + n]
        for i in range(n):
            r = np.uint64(rows[i])  # unsigned: no negative-index wraparound code in the loop
            kv = np.float32(scores[r])
            k32[i] = kv
            v = max(np.int64(labels[r]), 0)
            lraw[i] = v
            npos += v > 0
            nan += kv != kv
    else:
        # slices indexed by the loop counter: Numba knows i >= 0 and emits no wraparound
        # code, so the loop vectorises (indexing scores[base + i] ran ~6x slower)
        sc = scores[base:base + n]
        lb = labels[base:base + n]
        for i in range(n):
            kv = np.float32(sc[i])
            k32[i] = kv
            v = max(np.int64(lb[i]), 0)
            lraw[i] = v
            npos += v > 0
            nan += kv != kv
    return npos, nan


@nb.njit(cache=True, nogil=True)
def _positives(k32, lraw, n, pk, pidx):
    """The positions ``pidx[0:N+]`` of the documents with a positive label and their float32
    scores ``pk`` (branch-free: every slot written, kept only for a positive label)."""
    p = 0
    for i in range(n):
        pk[p] = k32[i]
        pidx[p] = i
        p += lraw[i] > 0
    return p


def judged_pass(joff, jperm, has_jperm, jlab, max_label, kinds, ks, gtypes, rels, fparams, norms,
                paper, normed, need, exp_gtype, keep_ideal, n_universe, tabs, nchunks, out_iub, out_reb,
                out_nrel, out_idcg, out_nj, out_ideal):
    """For each query q (judged rows ``joff[q]:joff[q+1]``) and measure m fill
    ``out_iub[q,m]``, ``out_reb[q,m]``, ``out_nrel[q,m]`` (Np at the measure's threshold) and
    ``out_idcg[q,m]`` (the raw IUB of a ``normed`` measure -- nDCG's IDCG, nERR's ERR* -- else
    1); ``out_nj[q]`` = number of judged documents; with ``keep_ideal`` the judged labels sorted
    descending in ``out_ideal[joff[q]:joff[q+1]]`` (the state of families that read the ideal
    ranking while ranking, e.g. Q-measure).

    IUB = the measure on the labels sorted descending; REB = its exact expectation under a
    uniformly random order (:func:`~uefast.kernels.dispatch.measure_reb`), or the paper's formula
    where ``paper`` is set and the paper has one. ``need``: how many ideal-ranking labels the
    routines read (-1: all); ``exp_gtype``: the exponential gain code of the plan (gain sums);
    ``n_universe`` > 0: REB over a collection of that many documents (the unjudged ones
    non-relevant; closed-form families only, :mod:`uefast.universe`), else over the judged ones.
    """
    run_chunks(chunk_kernels(kernel_set(kinds))[0], nchunks, joff, jperm, has_jperm, jlab,
               max_label, kinds, ks, gtypes,
               rels, fparams, norms, paper, normed, need, exp_gtype, keep_ideal, n_universe, tabs, nchunks,
               out_iub, out_reb, out_nrel, out_idcg, out_nj, out_ideal)


@nb.njit(cache=True, nogil=True)
def judged_measure(m, lab, n, nrel, kinds, ks, gtypes, rels, fparams, norms, paper, normed,
                   n_universe, tabs, gsum_lin, gsum_exp, gend, scratch):
    """``(IUB, REB, normaliser)`` of measure m on one query's judged labels ``lab`` (sorted
    descending, n >= 1 of them, Np = ``nrel``; ``gsum_lin`` / ``gsum_exp``: their linear and
    exponential gain sums): IUB = the measure on the ideal ranking
    (:func:`~uefast.kernels.dispatch.measure_iub`), REB = its exact expectation under a uniformly
    random order (:func:`~uefast.kernels.dispatch.measure_reb`, over ``n_universe`` documents
    when > 0) or the paper's formula where ``paper[m]``; a ``normed`` measure's IUB becomes 1,
    its REB REB/IUB and its normaliser the raw IUB (0, 0 where IUB = 0). ``gend`` (n + 1) and
    ``scratch`` (n + 2): REB's scratch. The judged pass's per-measure step as the GPU pass
    (:mod:`uefast.gpu.judged`) calls it; the CPU pass (:func:`judged_pass`) runs the same lines
    inline (a call there cost it ~30%). IUB and REB themselves have one definition, the
    registry's routines behind :func:`~uefast.kernels.dispatch.measure_iub` /
    :func:`~uefast.kernels.dispatch.measure_reb`."""
    kind = kinds[m]
    rel = rels[m]
    iub = measure_iub(kind, lab, n, ks[m], gtypes[m], rel, fparams[m], norms[m], nrel, tabs)
    gsum = gsum_exp if gtypes[m] >= 1 else gsum_lin
    nu = n if n_universe <= 0 else n_universe
    reb = measure_reb(kind, lab, nu, ks[m], gtypes[m], rel, fparams[m], norms[m], nrel, tabs,
                      gsum, gend, scratch)
    if paper[m]:
        reb = paper_reb(kind, n, ks[m], norms[m], nrel, tabs, gsum, reb)
    idcg = 1.0
    if normed[m]:
        idcg = iub
        if idcg > 0.0:
            iub = 1.0
            reb = reb / idcg
        else:
            iub = 0.0
            reb = 0.0
    return iub, reb, idcg


def ranking_pass(offsets, perm, has_perm, labels, scores, score_bits, qref, tie_mode, doc_mode,
                 doc_int, doc_off, doc_data, kinds, ks, gtypes, rels, fparams, norms, nrel_q,
                 idcg_q, ioff, ideal, tabs, nchunks, counting_factor, use_f32, sortnet, topk,
                 doc_rising, out, nan_out):
    """For each segment g (rows ``offsets[g]:offsets[g+1]``, query ``qref[g]``) rank the rows by
    score (descending, ``tie_mode``) and write every measure's value into ``out[g, m]``.

    ``nrel_q[q, m]`` / ``idcg_q[q, m]`` come from :func:`judged_pass`, and so does the ideal
    ranking ``ideal[ioff[q]:ioff[q+1]]`` (empty unless a family's state needs it). Segments of length 0 get 0.
    With a plain tie policy a segment whose number N+ of positive labels is at most
    ``counting_factor * log2(n + 1)`` is ranked by counting instead of sorting; with ``use_f32``
    first by float32 counting (:func:`rank_labels_f32`), which declines segments whose scores it
    cannot separate, then by tie-aware float32 counting (:func:`rank_labels_f32_ties`: exact ties
    told from float32 collisions by a fingerprint of the float64 bits, ties broken by position
    or same-width integer docid), then in float64; all paths give the same result. A chunk stops
    trying plain float32 while it mostly declines (a tied system), retrying every 16th segment.
    With ``sortnet`` 1 (and no top-k ranking), a segment of at most
    :data:`~uefast.kernels.sortnet.SORTNET_MAX_N` (2,048) documents with enough
    positive labels (:func:`~uefast.kernels.sortnet.sortnet_pays`) is first offered to a bitonic
    sorting network on packed float32-score/label keys
    (:func:`~uefast.kernels.sortnet.rank_labels_sortnet`), which declines any segment it cannot
    order exactly (ties, near-ties, NaN, labels > 7); float32 counting follows. A segment it
    declines whose tie order runs with position (:func:`~uefast.kernels.counting.tie_order`) is
    offered to the int32 network on (float32 score bucket, position) keys
    (:func:`~uefast.kernels.sortnet.rank_labels_sortnet_groups`; a chunk stops trying while it
    mostly declines, retrying every 16th segment); then a tied segment of at most 512 documents
    goes to a network on int64 (float32 score, tie-break key, position) keys
    (:func:`~uefast.kernels.sortnet.rank_labels_sortnet_ties`) before tie-aware float32
    counting. ``sortnet`` 2 offers every segment (tests), 0 none.
    ``score_bits`` is ``scores`` viewed as int64. With ``topk`` > 0 (every measure has a cutoff
    <= topk) float32 counting ranks only the positive documents that can reach the top ``topk``
    (:func:`top_positives`); the other positions are left 0, and no measure reads them.
    ``doc_rising[g]`` (uint8, or empty) 1: segment g's integer docids rise strictly with position
    (known from the duplicate check; :func:`~uefast.kernels.counting.tie_order` skips its scan).
    ``nan_out[c]`` counts the NaN scores met by chunk c (the caller may skip its own check).
    """
    run_chunks(chunk_kernels(kernel_set(kinds))[1], nchunks, offsets, perm, has_perm, labels,
               scores, score_bits, qref,
               tie_mode, doc_mode, doc_int, doc_off, doc_data, kinds, ks, gtypes, rels, fparams,
               norms, nrel_q, idcg_q, ioff, ideal, tabs, nchunks, counting_factor, use_f32,
               sortnet, topk, doc_rising, out, nan_out)


def kernel_set(kinds) -> int:
    """The family set :func:`chunk_kernels` is built for when a call asks for the kernel codes
    ``kinds``: those families (``UEFAST_KERNEL_FAMILIES=requested``, the default: the fastest
    first call, one more compilation per new family set), or every registered family
    (``UEFAST_KERNEL_FAMILIES=all``: one compilation, ~1.8x as long, whatever is asked later;
    the test suite's setting)."""
    how = os.environ.get("UEFAST_KERNEL_FAMILIES", "requested")
    if how == "all":
        return dispatch.ALL_FAMILIES
    if how != "requested":
        raise ValueError(f"UEFAST_KERNEL_FAMILIES={how!r}: expected 'requested' or 'all'")
    return family_set(kinds)


def _rebound(fn, names):
    """A copy of the Python function ``fn`` whose global names ``names`` (a dict) are rebound.
    Every global of ``fn`` that is a family-guarded function of :mod:`uefast.kernels.dispatch`
    must be among them: one left bound to the module's copy (``FAMS`` = every family) would make
    the kernel compile every registered family's routines (2026-11-27: 35 s instead of ~19 s for
    the first ``uefast evaluate``, after ``segment_measures`` started calling the dispatch itself)."""
    for name in fn.__code__.co_names:
        obj = fn.__globals__.get(name)
        if (name not in names and getattr(obj, "py_func", None) is not None
                and obj.py_func.__module__ == dispatch.__name__
                and "FAMS" in obj.py_func.__code__.co_names):
            raise RuntimeError(f"{fn.__qualname__} calls {name} of every family: rebind it")
    g = dict(fn.__globals__)
    g.update(names)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def _inlined(disp, names):
    """:func:`_rebound` of the ``inline="always"`` dispatcher ``disp``, as such a dispatcher that
    is never compiled on its own (nor cached: it is only inlined, at Numba IR level)."""
    return nb.njit(nogil=True, inline="always")(_rebound(disp.py_func, names))


@functools.lru_cache(maxsize=None)
def chunk_kernels(fams: int):
    """The two chunk kernels ``(judged, ranking)`` of :func:`judged_pass` / :func:`ranking_pass`
    for the measure families in the set ``fams`` (bit ``code`` per family,
    :func:`~uefast.kernels.dispatch.family_set`).

    The dispatch functions (:mod:`uefast.kernels.dispatch`) guard each family's line with
    ``FAMS & F_<family>``; here they are copied with ``FAMS`` = ``fams`` and inlined (with
    :func:`~uefast.kernels.segment.segment_measures`) into the kernels, so Numba's dead-branch
    pruning drops every other family's line before it inlines and types the routines: a call
    compiles only the routines of the families it asks for (the whole registry cost the
    first-ever ``uefast evaluate`` about a third of its compile time; benchmarks/RESULTS_startup.md).
    ``fams`` is also a closure constant of the kernels, which puts it in Numba's cache key: each
    family set is compiled once and cached on disk.
    """
    fset = {"FAMS": fams}
    plain = _inlined(dispatch.measure_plain, fset)
    tied = _inlined(dispatch.measure_tied, fset)  # a call in the full dispatch; inlined here
    # segment_measures calls the two dispatch functions itself (segment_measure's body written
    # out): they are what must be rebound, or the ranking kernel compiles every family
    names = {"measure_iub": _inlined(dispatch.measure_iub, fset),
             "measure_reb": _inlined(dispatch.measure_reb, fset),
             "paper_reb": _inlined(dispatch.paper_reb, fset),
             "segment_measures": _inlined(segment.segment_measures,
                                          {"measure_plain": plain, "measure_tied": tied})}

    def _judged_chunks(c0, c1, joff, jperm, has_jperm, jlab, max_label, kinds, ks, gtypes, rels,
                       fparams, norms, paper, normed, need, exp_gtype, keep_ideal, n_universe,
                       tabs, nchunks, out_iub, out_reb, out_nrel, out_idcg, out_nj, out_ideal):
        """:func:`judged_pass` over chunks ``c0 .. c1 - 1`` (of ``nchunks``)."""
        fams  # noqa: B018 -- a closure constant: Numba's cache key holds the family set
        nq = joff.shape[0] - 1
        nm = kinds.shape[0]
        nhist = max_label + 2 if max_label < _HIST_MAX else 1
        for c in range(c0, c1):
            q0 = nq * c // nchunks
            q1 = nq * (c + 1) // nchunks
            maxn = _max_len(joff, q0, q1)
            lab = np.empty(maxn + 1, np.int64)
            gend = np.empty(maxn + 1, np.int64)
            scratch = np.empty(maxn + 2, np.float64)
            hist = np.zeros((4, nhist), np.int64)
            geq = np.zeros(nhist, np.int64)  # geq[v] = number of judged labels >= v
            glin = np.empty(nhist)  # gains of each label value (no pow() per query)
            gexp = np.empty(nhist)
            for v in range(nhist):
                glin[v] = gain(v, np.int64(0))  # not a literal 0: one signature
                gexp[v] = gain(v, exp_gtype)
            for q in range(q0, q1):
                base = joff[q]
                n = joff[q + 1] - base
                out_nj[q] = n
                # judged labels sorted descending (counting sort over the label range) and the sums
                # of their linear and exponential gains; labels <= 0 count as 0
                gsum_lin = 0.0
                gsum_exp = 0.0
                fill = n if need < 0 else min(n, need)
                packed = 1 < nhist <= _PACKED_MAX and n < 65536
                if packed:
                    # at most 8 label values: count all of them in one pass into 16-bit fields of
                    # two int64 accumulators (no per-value passes, no branches)
                    if has_jperm:
                        lo, hi = _packed_counts_perm(jlab, jperm, base, n)
                    else:
                        lo, hi = _packed_counts(jlab, base, n)
                    for v in range(nhist):
                        w = lo if v < 4 else hi
                        hist[0, v] = (w >> (16 * (v & 3))) & 0xFFFF
                else:
                    # a local int64 copy first: counting straight from a narrow (int8) column
                    # through a permutation ran 2x slower
                    if has_jperm:
                        rows = jperm[base:base + n]
                        for i in range(n):
                            v = np.int64(jlab[np.uint64(rows[i])])
                            gend[i] = v if v > 0 else 0
                    else:
                        seg = jlab[base:base + n]
                        for i in range(n):
                            v = np.int64(seg[i])
                            gend[i] = v if v > 0 else 0
                if nhist > 1:
                    if not packed:
                        # four interleaved histograms so that runs of equal labels do not
                        # serialise on one counter
                        n4 = n - n % 4
                        for i in range(0, n4, 4):
                            hist[0, gend[i]] += 1
                            hist[1, gend[i + 1]] += 1
                            hist[2, gend[i + 2]] += 1
                            hist[3, gend[i + 3]] += 1
                        for i in range(n4, n):
                            hist[0, gend[i]] += 1
                    o = 0
                    for v in range(nhist - 1, -1, -1):
                        cnt = hist[0, v] + hist[1, v] + hist[2, v] + hist[3, v]
                        if cnt > 0:
                            gsum_lin += cnt * glin[v]
                            gsum_exp += cnt * gexp[v]
                        if o < fill:
                            lab[o:min(o + cnt, fill)] = v
                        o += cnt
                        geq[v] = o
                        for u in range(4):
                            hist[u, v] = 0
                else:
                    for i in range(n):
                        lab[i] = gend[i]
                        gsum_lin += gain(lab[i], np.int64(0))
                        gsum_exp += gain(lab[i], exp_gtype)
                    heapsort_desc(lab, n)
                if keep_ideal:
                    for i in range(n):  # not a slice assignment (uefast.kernels docstring)
                        out_ideal[base + i] = lab[i]
                for m in range(nm):
                    kind = kinds[m]
                    rel = rels[m]
                    if nhist > 1:
                        nrel = geq[rel] if rel < nhist else 0
                    else:
                        nrel = 0
                        while nrel < n and lab[nrel] >= rel:
                            nrel += 1
                    out_nrel[q, m] = nrel
                    if n == 0:
                        out_iub[q, m] = 0.0
                        out_reb[q, m] = 0.0
                        out_idcg[q, m] = 1.0
                        continue
                    # judged_measure's steps, written out: a call per (query, measure), even
                    # inlined, cost this pass ~30% (2026-11-27); tests/test_gpu_judged.py holds
                    # the two equal on every family
                    iub = measure_iub(kind, lab, n, ks[m], gtypes[m], rel, fparams[m], norms[m],
                                      nrel, tabs)
                    gsum = gsum_exp if gtypes[m] >= 1 else gsum_lin
                    nu = n if n_universe <= 0 else n_universe
                    reb = measure_reb(kind, lab, nu, ks[m], gtypes[m], rel, fparams[m], norms[m],
                                      nrel, tabs, gsum, gend, scratch)
                    if paper[m]:
                        reb = paper_reb(kind, n, ks[m], norms[m], nrel, tabs, gsum, reb)
                    idcg = 1.0
                    if normed[m]:
                        idcg = iub
                        if idcg > 0.0:
                            iub = 1.0
                            reb = reb / idcg
                        else:
                            iub = 0.0
                            reb = 0.0
                    out_iub[q, m] = iub
                    out_reb[q, m] = reb
                    out_idcg[q, m] = idcg

    def _ranking_chunks(c0, c1, offsets, perm, has_perm, labels, scores, score_bits, qref,
                        tie_mode, doc_mode, doc_int, doc_off, doc_data, kinds, ks, gtypes, rels,
                        fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, nchunks,
                        counting_factor, use_f32, sortnet, topk, doc_rising, out, nan_out):
        """:func:`ranking_pass` over chunks ``c0 .. c1 - 1`` (of ``nchunks``)."""
        fams  # noqa: B018 -- a closure constant: Numba's cache key holds the family set
        nseg = offsets.shape[0] - 1
        for c in range(c0, c1):
            s0 = nseg * c // nchunks
            s1 = nseg * (c + 1) // nchunks
            maxn = _max_len(offsets, s0, s1)
            keys = np.empty(maxn + 1, np.float64)
            idx = np.empty(maxn + 1, np.int64)
            tk = np.empty(maxn + 1, np.float64)
            ti = np.empty(maxn + 1, np.int64)
            rows = np.empty(maxn + 1, np.int64)
            lab = np.empty(maxn + 1, np.int64)
            lraw = np.empty(maxn + 1, np.int64)
            dkey = np.empty(maxn + 1, np.int64)
            gend = np.empty(maxn + 1, np.int64)
            scratch = np.empty(maxn + 2, np.float64)
            stack = np.empty(128, np.int64)
            k32 = np.empty(maxn + 1, np.float32)
            pk = np.empty(maxn + 8, np.float32)
            pidx = np.empty(maxn + 1, np.int64)
            acc = np.empty(maxn + 8, np.int32)
            fp = np.empty(maxn + 1, np.int32)
            tb = np.empty(maxn + 1, np.int32)
            pf = np.empty(maxn + 8, np.int32)
            pt = np.empty(maxn + 8, np.int32)
            tidx = np.empty(maxn + 1, np.int64)
            tpk = np.empty(maxn + 8, np.float32)
            skeys = np.empty(SORTNET_MAX_N, np.int32)
            stmp = np.empty(SORTNET_MAX_N, np.int32)
            skey64 = np.empty(SORTNET_TIES_MAX_N, np.int64)
            stmp64 = np.empty(SORTNET_TIES_MAX_N, np.int64)
            f32_ok = 0
            f32_no = 0
            grp_ok = 0
            grp_no = 0
            for g in range(s0, s1):
                base = offsets[g]
                n = offsets[g + 1] - base
                q = qref[g]
                npos, nan = _gather(perm, has_perm, base, n, scores, labels, k32, lraw)
                listed = False  # pidx / pk filled (_positives)
                nan_out[c] += nan
                counted = False
                # rank by counting (float32 first) or, failing that, by sorting
                countable = tie_mode != TIE_EXPECTED and npos <= counting_factor * np.log2(n + 1.0)
                f32 = use_f32 and n <= F32_MAX_N
                if countable:
                    if f32 and _still_trying(f32_ok, f32_no, g):
                        if 0 < topk < n:
                            if not listed:
                                _positives(k32, lraw, n, pk, pidx)
                                listed = True
                            nt = top_positives(k32, n, pidx, npos, topk, tidx, tpk)
                            counted = rank_labels_f32(k32, lraw, tidx, tpk, acc, n, nt, lab)
                        else:
                            if sortnet == 2 or (sortnet == 1 and sortnet_pays(n, npos)):
                                counted = rank_labels_sortnet(k32, lraw, n, skeys, stmp, lab)
                            if not counted:
                                if not listed:
                                    _positives(k32, lraw, n, pk, pidx)
                                    listed = True
                                counted = rank_labels_f32(k32, lraw, pidx, pk, acc, n, npos, lab)
                        if counted:
                            f32_ok += 1
                        else:
                            f32_no += 1
                if not counted and countable and f32 and (sortnet == 2 or (
                        sortnet == 1 and sortnet_pays(n, npos)
                        and _still_trying(grp_ok, grp_no, g))):
                    # tied scores through the int32 network, tie groups kept in position order
                    known = doc_rising.size > 0 and doc_rising[g] != 0
                    order = tie_order(tie_mode, doc_mode, doc_int, perm, has_perm, base, n, known)
                    if order != 0:
                        # the scores copied in both cases: one (writable) signature of the
                        # network compiled, not a second for the read-only input slice
                        if has_perm:
                            rws = perm[base:base + n]
                            for i in range(n):
                                keys[i] = scores[np.uint64(rws[i])]
                        else:
                            for i in range(n):  # not a slice assignment (uefast.kernels)
                                keys[i] = scores[base + i]
                        counted = rank_labels_sortnet_groups(k32, keys, order, lraw, n, skeys,
                                                             stmp, lab, tk)
                    if counted:
                        grp_ok += 1
                    else:
                        grp_no += 1
                if not counted:
                    for i in range(n):
                        r = _row(perm, has_perm, base + i)
                        rows[i] = r
                        keys[i] = scores[r]
                        idx[i] = i
                    if countable:
                        if f32:
                            tie_by = counting_ties(tie_mode, doc_mode, doc_int, rows, n, dkey)
                            if tie_keys_f32(keys, score_bits, rows, n, tie_by, dkey, k32, fp, tb):
                                if sortnet == 2 or (sortnet == 1 and sortnet_ties_pays(n, npos)):
                                    counted = rank_labels_sortnet_ties(k32, fp, tb, lraw, n, skey64,
                                                                       stmp64, lab)
                                if not counted:
                                    if not listed:
                                        _positives(k32, lraw, n, pk, pidx)
                                        listed = True
                                    counted = rank_labels_f32_ties(k32, fp, tb, lraw, pidx, pk, pf,
                                                                   pt, acc, n, npos, lab)
                        if not counted:
                            counted = rank_labels_by_counting(keys, lraw, n, lab, tie_mode,
                                                              doc_mode, doc_int, rows, dkey)
                if not counted:
                    rank_segment(keys, idx, tk, ti, stack, n, tie_mode, rows, doc_mode, doc_int,
                                 doc_off, doc_data)
                    for i in range(n):
                        lab[i] = lraw[idx[i]]
                ng = 0
                if tie_mode == TIE_EXPECTED:
                    ng = tie_groups(keys, n, gend)
                segment_measures(g, q, lab, gend, ng, n, tie_mode, kinds, ks, gtypes, rels,
                                 fparams, norms, nrel_q, idcg_q, ioff, ideal, tabs, pidx, scratch,
                                 out)

    def kernel(fn):
        assert fn.__code__.co_freevars == ("fams",)  # the cache key holds the family set
        return nb.njit(cache=True, nogil=True)(_rebound(fn, names))

    return kernel(_judged_chunks), kernel(_ranking_chunks)
