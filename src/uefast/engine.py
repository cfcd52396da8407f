"""The engine-agnostic core: grouping by query and the two kernel passes on plain arrays.

This is the layer every adapter (``evaluate``, Polars, streaming Parquet, a GPU backend) calls:

1. :func:`group_keys` -- rows -> query groups (run-length detection, else an O(n) counting sort);
2. :func:`plan_measures` -- parsed measures -> the small parameter arrays the kernels read;
3. :func:`judged_stats` -- per query: IUB, REB, Np and IDCG for every measure (judged documents);
4. :func:`rank_values` -- per ranked segment: every measure's value under a tie policy.

Nothing here knows about input formats; nothing above it knows about Numba.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.inputs import (
    _EMPTY_B,
    _EMPTY_I,
    NO_DOCIDS,
    DocIds,
    first_nan,
    key_kind,
    numeric_array,
    numpy_view,
    string_buffers,
)
from uefast.inputs import kernel_array as _ro
from uefast.kernels.driver import judged_pass, n_chunks
from uefast.kernels.grouping import counting_sort, find_duplicate, run_starts_bytes, run_starts_int
from uefast.kernels.docrank import docid_byte_ranks
from uefast.kernels.ordering import DOC_BYTES, DOC_INT, DOC_NONE, TIE_DOCID, TIE_EXPECTED, TIE_INPUT
from uefast.measures import Measure, PlanContext
from uefast.measures._builtin import MAX_RAW_EXP_LABEL, PAPER_DCG_MAX_CUTOFF  # noqa: F401
from uefast.measures._family import REALS

__all__ = ["KERNEL_LOCK", "Grouping", "MeasurePlan", "JudgedStats", "group_keys", "group_codes",
           "plan_measures", "exp_gain_code", "top_k", "judged_stats", "rank_values", "rank_values_many", "duplicate_docid", "docid_ranks",
           "TIE_MODES",
           "tables"]

TIE_MODES = {"input": TIE_INPUT, "trec_eval": TIE_DOCID, "expected": TIE_EXPECTED}

#: Held around every entry into a multi-threaded kernel (``run_chunks`` kernels, Numba
#: ``parallel=True`` ones: the ``workqueue`` threading layer aborts when entered from several
#: threads at once; Polars and Dask call from worker threads). The kernels already use every
#: core, so serialising them costs only queueing. Re-entrant.
KERNEL_LOCK = threading.RLock()

# Rank a segment by counting (O(n * N+) vectorised comparisons) rather than sorting (O(n log n))
# when its number N+ of positive labels is <= COUNTING_FACTOR * log2(n + 1). Both give identical
# results; with float32 counting the ranking pass on the MSLR-shaped benchmark was fastest for
# factors 32-64 (16 was the break-even of float64 counting). Tests force each path (0 / inf).
COUNTING_FACTOR = 48.0
# Try float32 counting first (exact when it accepts a segment; see ranking_pass). Tests turn it off
# to exercise the float64 counting path on every segment.
COUNTING_F32 = True
# Offer segments of <= 512 documents with enough positive labels to the bitonic sorting networks
# first (kernels/sortnet.py; untied and tied segments; exact when they accept, else counting goes
# on). Tests turn them off (0), and force them onto every segment they can take (2), to compare
# the paths; 1: where they pay.
SORT_NETWORK = 1
# When every measure has a cutoff (nDCG@10, P@5, ...) rank only the documents that can reach the
# top k (those at or above a score threshold with >= k scores above it). Tests turn it off to
# compare.
TOP_K = True


@dataclass(frozen=True)
class Grouping:
    """Rows of group g are ``perm[offsets[g]:offsets[g+1]]`` (``perm`` unused if not ``has_perm``).

    ``keys`` holds each group's key (Arrow array), in order of first appearance in the input."""

    offsets: np.ndarray
    perm: np.ndarray
    has_perm: bool
    keys: pa.Array

    @property
    def n_groups(self) -> int:
        return len(self.offsets) - 1


_NO_PERM = np.zeros(1, np.int64)


def _kernel_docs(docs: DocIds, ties: str) -> DocIds:
    """Docids as the ranking kernel takes them: none unless ``ties="trec_eval"`` (no other policy
    reads them), integer values or Arrow offsets as read-only int64, bytes read-only."""
    if ties != "trec_eval" or docs.mode == DOC_NONE:
        docs = NO_DOCIDS
    return DocIds(docs.mode, _ro(docs.ints, np.int64), _ro(docs.offsets, np.int64), _ro(docs.data))


def group_codes(codes: np.ndarray, n_codes: int, keys: pa.Array, backend: str = "cpu") -> Grouping:
    """Group rows by dense codes in [0, n_codes) (negative codes left out) by counting sort;
    ``backend="cuda"``: by a stable radix sort on the GPU
    (:func:`uefast.gpu.grouping.counting_sort_cuda`, the same offsets and permutation)."""
    if backend == "cuda":
        from uefast.gpu.grouping import counting_sort_cuda
        from uefast.gpu.ranking import _emulating

        offsets, perm = counting_sort_cuda(codes, n_codes, _emulating())
    else:
        offsets, perm = counting_sort(codes, n_codes)
    return Grouping(offsets, perm, True, keys)


def group_keys(arr: pa.Array, name: str = "qid", what: str = "input",
               backend: str = "cpu") -> Grouping:
    """Group the rows of a key column (integers or strings), keeping first-appearance order.

    Clustered input (each key in one contiguous run) needs no permutation and no hashing of rows:
    only the run heads are compared. Otherwise run heads are encoded (``np.unique`` for integers,
    Arrow's hash ``dictionary_encode`` for strings) and rows are counting-sorted by code (on the
    GPU with ``backend="cuda"``, :func:`group_codes`).
    """
    kind = key_kind(arr, name, what)
    dictionary = None
    if pa.types.is_dictionary(arr.type):
        if pc.count_distinct(arr.dictionary, mode="all").as_py() < len(arr.dictionary):
            arr = arr.dictionary_decode()  # a value listed twice: group by value, not by index
            kind = key_kind(arr, name, what)
        else:
            dictionary = arr.dictionary
            arr = arr.indices
            kind = "int"
    if kind == "int":
        values = numpy_view(arr)
        starts = run_starts_int(values)
        heads = values[starts[:-1]]
        uniq, first, inv = np.unique(heads, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        if len(uniq) == len(heads):
            key_vals = heads
            keys = (numeric_array(key_vals) if dictionary is None
                    else dictionary.take(numeric_array(key_vals)))
            return Grouping(starts, _NO_PERM, False, keys)
        rank = np.empty(len(uniq), np.int64)
        rank[order] = np.arange(len(uniq))
        run_codes = rank[inv]
        key_vals = uniq[order]
        keys = (numeric_array(key_vals) if dictionary is None
                else dictionary.take(numeric_array(key_vals)))
    else:
        offsets, data = string_buffers(arr)
        starts = run_starts_bytes(offsets, data)
        heads = arr.take(numeric_array(starts[:-1]))
        enc = pc.dictionary_encode(heads)
        if len(enc.dictionary) == len(heads):
            return Grouping(starts, _NO_PERM, False, heads)
        run_codes = numpy_view(enc.indices).astype(np.int64)
        keys = enc.dictionary
    row_codes = np.repeat(run_codes, np.diff(starts))
    return group_codes(row_codes, len(keys), keys, backend)


@dataclass(frozen=True)
class MeasurePlan:
    """Per-measure kernel parameters, aligned with ``measures``, from each family's
    ``kernel_params`` (:mod:`uefast.measures`): kernel code, cutoff, gain code, relevance
    threshold, real parameters (``fparams[i]``: the row of :data:`~uefast.measures._family.REALS`
    reals of measure i), AP norm, paper-REB flag, normalised flag (value / raw IUB).
    ``need``: how many ideal-ranking labels the judged pass must sort (-1: all);
    ``keep_ideal``: a family's state is the ideal ranking (kept for the ranking pass);
    ``exp_gtype``: the exponential gain's code (``1 + s``, gains scaled by 2^-s)."""

    measures: tuple[Measure, ...]
    kinds: np.ndarray
    ks: np.ndarray
    gtypes: np.ndarray
    rels: np.ndarray
    fparams: np.ndarray
    norms: np.ndarray
    paper: np.ndarray
    max_cutoff: int
    normed: np.ndarray = None
    need: int = 0
    keep_ideal: bool = False
    exp_gtype: int = 1


def exp_gain_code(max_label: int) -> int:
    """The gain code of the exponential gain for data whose largest label is ``max_label``: 1
    (2^l - 1) up to label 960, else 1 + s with s = max_label - 960, the gains scaled by 2^-s so
    that a sum of up to 2^63 of them stays finite (nDCG's ratios do not change)."""
    return 1 + max(0, int(max_label) - MAX_RAW_EXP_LABEL)


def plan_measures(measures: list[Measure], *, rel_level: int = 1, reb: str = "exact",
                  max_label: int = 1, doc_codes: bool = False) -> MeasurePlan:
    """Resolve every measure through its family (:class:`~uefast.measures.Family`):
    ``kernel_params`` gives the kernel's parameters (``rel`` from ``rel_level``, ERR's ``lmax``
    from ``max_label``) and refuses what the data cannot support, naming the measure.
    ``doc_codes``: the labels are TBG's per-document codes (:mod:`uefast.tbg_lengths`)."""
    m = len(measures)
    kinds = np.empty(m, np.int64)
    ks = np.zeros(m, np.int64)
    gtypes = np.zeros(m, np.int64)
    rels = np.ones(m, np.int64)
    fparams = np.zeros((m, REALS), np.float64)
    norms = np.zeros(m, np.int64)
    paper = np.zeros(m, np.bool_)
    normed = np.zeros(m, np.bool_)
    ctx = PlanContext(rel_level=rel_level, max_label=max_label, reb=reb,
                      exp_gtype=exp_gain_code(max_label), doc_codes=doc_codes)
    need = 0
    keep_ideal = False
    for i, meas in enumerate(measures):
        fam = meas.definition
        kinds[i] = fam.code
        ks[i] = meas.cutoff or 0
        kp = fam.kernel_params(meas, ctx)
        gtypes[i], rels[i], norms[i] = kp.gtype, kp.rel, kp.norm
        fparams[i] = kp.fparam, kp.fparam2, kp.fparam3
        paper[i] = reb == "paper" and fam.paper_reb is not None
        normed[i] = fam.normalised
        # how deep the judged pass sorts the labels: closed forms read none, measures that
        # read the ideal ranking (IUB by the plain routine, REB by the tied one) read their top
        # k, and all of it without a cutoff or when their state is the ideal ranking
        if "ideal" in fam.state:
            keep_ideal = True
        if "ideal" in fam.state or fam.sorted_labels == "all":
            need = -1
        elif fam.sorted_labels == "top_k" and need >= 0:
            need = -1 if ks[i] <= 0 else max(need, int(ks[i]))
    return MeasurePlan(tuple(measures), kinds, ks, gtypes, rels, fparams, norms, paper,
                       int(ks.max()) if m else 0, normed, need, keep_ideal, ctx.exp_gtype)


def top_k(plan: MeasurePlan) -> int:
    """The largest cutoff if every measure has one and reads no rank beyond it (its family is
    ``truncatable``; then the ranking pass may rank only the top documents), else 0."""
    if not len(plan.kinds) or np.any(plan.ks <= 0):
        return 0
    if not all(m.definition.truncatable for m in plan.measures):
        return 0
    return plan.max_cutoff


def tables(length: int) -> np.ndarray:
    """The kernels' lookup rows for positions up to ``length``: row 0 d(i) = 1/log2(i+1) at index
    i-1; row 1 the discount prefix sums sum_{j<i} d(j) at index i; row 2 the harmonic numbers H_i;
    row 3 the reciprocals 1/i at index i (0 at index 0)."""
    out = np.zeros((4, length + 1))
    d = 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))
    out[0, :length] = d
    np.cumsum(d, out=out[1, 1:])
    np.divide(1.0, np.arange(1, length + 1, dtype=np.float64), out=out[3, 1:])
    np.cumsum(out[3, 1:], out=out[2, 1:])
    return out


@dataclass(frozen=True)
class JudgedStats:
    """Per query (rows) and measure (columns): IUB, REB, Np and the normaliser (IDCG for nDCG,
    the raw IUB of every normalised family, else 1); ``n_judged`` per query; the state of
    families that read the ideal ranking: ``ideal[ioff[q]:ioff[q+1]]`` (empty when none does)."""

    iub: np.ndarray
    reb: np.ndarray
    nrel: np.ndarray
    idcg: np.ndarray
    n_judged: np.ndarray
    ioff: np.ndarray = None
    ideal: np.ndarray = None


def _max_group(offsets: np.ndarray) -> int:
    return int(np.diff(offsets).max()) if len(offsets) > 1 else 0


def judged_tables(joff: np.ndarray, plan: MeasurePlan, collection_size: int = 0) -> np.ndarray:
    """The judged pass's lookup tables (:func:`tables`) for the judged groups ``joff``."""
    # positions beyond a group's length are never read (K = min(k, n)), except by the paper's
    # DCG REB, which sums the discounts to k
    if collection_size > 0:
        from uefast.universe import collection_tables

        return collection_tables(plan, _max_group(joff), collection_size)
    paper_k = [int(k) for meas, k, p in zip(plan.measures, plan.ks, plan.paper)
               if p and meas.name in ("DCG", "nDCG")]
    return tables(max(_max_group(joff), *paper_k, 1))


def judged_stats(joff: np.ndarray, jperm: np.ndarray, has_jperm: bool, jlab: np.ndarray,
                 plan: MeasurePlan, max_label: int, collection_size: int = 0,
                 backend: str = "cpu") -> JudgedStats:
    """Run :func:`~uefast.kernels.driver.judged_pass` over the judged groups. With
    ``collection_size`` N > 0, REB is over a collection of N documents, the unjudged ones
    non-relevant (:mod:`uefast.universe`; every measure's family has a closed-form REB).
    ``backend="cuda"``: the same pass by one GPU kernel (:func:`uefast.gpu.judged.judged_pass_cuda`,
    the same per-measure routine)."""
    nq, nm = len(joff) - 1, len(plan.measures)
    out = [np.zeros((nq, nm)) for _ in range(2)]
    nrel = np.zeros((nq, nm), np.int64)
    idcg = np.ones((nq, nm))
    nj = np.zeros(nq, np.int64)
    tabs = judged_tables(joff, plan, collection_size)
    joff = _ro(joff, np.int64)
    # every query writes its slice ideal[joff[q]:joff[q+1]]: no zeroing needed
    ideal = np.empty(int(joff[-1]) if plan.keep_ideal and len(joff) else 0, np.int64)
    normed = plan.normed if plan.normed is not None else np.zeros(nm, np.bool_)
    if backend == "cuda":
        return _judged_stats_cuda(joff, jperm, has_jperm, jlab, plan, max_label, collection_size,
                                  tabs, normed, len(ideal))
    with KERNEL_LOCK:
        judged_pass(joff, _ro(jperm, np.int64), has_jperm, _ro(jlab),
                    int(max(max_label, 0)), plan.kinds, plan.ks,
                    plan.gtypes, plan.rels, plan.fparams, plan.norms, plan.paper, normed,
                    int(plan.need), int(plan.exp_gtype), bool(plan.keep_ideal),
                    int(collection_size), tabs,
                    n_chunks(nq), out[0], out[1], nrel, idcg, nj, ideal)
    return JudgedStats(out[0], out[1], nrel, idcg, nj, joff, ideal)


def _judged_stats_cuda(joff, jperm, has_jperm, jlab, plan, max_label, collection_size, tabs,
                       normed, n_ideal) -> JudgedStats:
    from uefast.gpu import cuda_unavailable_reason
    from uefast.gpu.judged import judged_pass_cuda
    from uefast.gpu.ranking import _emulating

    reason = cuda_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"backend='cuda' cannot run: {reason}")
    r = judged_pass_cuda(joff, jperm, has_jperm, jlab, int(max(max_label, 0)), plan.kinds,
                         plan.ks, plan.gtypes, plan.rels, plan.fparams, plan.norms, plan.paper,
                         normed, int(plan.need), int(plan.exp_gtype), int(collection_size), tabs,
                         _emulating())
    ideal = r.ideal[:n_ideal].astype(np.int64) if n_ideal else np.zeros(0, np.int64)
    return JudgedStats(r.iub, r.reb, r.nrel, r.idcg, r.n_judged, joff, ideal)


def rank_values(offsets: np.ndarray, perm: np.ndarray, has_perm: bool, labels: np.ndarray,
                scores: np.ndarray, qref: np.ndarray, ties: str, docs: DocIds,
                plan: MeasurePlan, judged: JudgedStats,
                nan_error: Callable[[int], Exception] | None = None,
                doc_rising: np.ndarray | None = None, backend: str = "cpu") -> np.ndarray:
    """Values ``[n_segments, n_measures]`` of every measure on every ranked segment.

    ``doc_rising``: per segment, 1 where its integer docids are known to rise strictly with
    position (from :func:`duplicate_docid` on the same grouping); spares the ranking a second
    read of the docids to find the order of tied scores. None: found where needed.
    The kernel counts NaN scores as it reads them (NaN has no rank): with ``nan_error`` given,
    ``nan_error(first NaN row)`` is raised when there is one (callers that evaluate every row
    skip their own pass over the scores); without it the caller must have checked.
    ``backend``: the ranking backend (:mod:`uefast.backends`: ``"cpu"``, or ``"cuda"`` on an
    NVIDIA GPU through :mod:`uefast.gpu`, same values)."""
    from uefast.backends import get_backend

    tabs = tables(max(_max_group(offsets), 1))  # ranks beyond a segment's length: never read
    scores = _ro(scores, np.float64)
    kd = _kernel_docs(docs, ties)
    ioff, ideal = _ideal_state(judged)
    knobs = {"counting_factor": float(COUNTING_FACTOR), "f32": bool(COUNTING_F32),
             "sortnet": int(SORT_NETWORK), "top_k": top_k(plan) if TOP_K else 0}
    out, nan = get_backend(backend).rank(
        _ro(offsets, np.int64), _ro(perm, np.int64), has_perm, _ro(labels), scores,
        _ro(qref, np.int64), TIE_MODES[ties], kd, plan, judged, ioff, ideal, tabs,
        _NO_RISING if doc_rising is None else _ro(doc_rising, np.uint8), knobs)
    if nan_error is not None and nan.any():
        raise nan_error(first_nan(scores))
    return out


def rank_values_many(offsets: np.ndarray, perm: np.ndarray, has_perm: bool, labels: np.ndarray,
                     scores_list: list[np.ndarray], qref: np.ndarray, ties: str, docs: DocIds,
                     plan: MeasurePlan, judged: JudgedStats,
                     nan_errors: list[Callable[[int], Exception]] | None = None,
                     doc_rising: np.ndarray | None = None, backend: str = "cpu") -> list[np.ndarray]:
    """:func:`rank_values` of every score array of ``scores_list`` (several systems ranked on
    one grouping), through the backend's ``rank_many`` (``cuda``: one upload of what the systems
    share, each system's copy overlapped with the previous system's kernel). ``nan_errors[s]``
    as ``nan_error`` of :func:`rank_values` for system s."""
    from uefast.backends import get_backend

    tabs = tables(max(_max_group(offsets), 1))
    kd = _kernel_docs(docs, ties)
    ioff, ideal = _ideal_state(judged)
    knobs = {"counting_factor": float(COUNTING_FACTOR), "f32": bool(COUNTING_F32),
             "sortnet": int(SORT_NETWORK), "top_k": top_k(plan) if TOP_K else 0}
    scores_list = [_ro(s, np.float64) for s in scores_list]
    res = get_backend(backend).rank_many(
        _ro(offsets, np.int64), _ro(perm, np.int64), has_perm, _ro(labels), scores_list,
        _ro(qref, np.int64), TIE_MODES[ties], kd, plan, judged, ioff, ideal, tabs,
        _NO_RISING if doc_rising is None else _ro(doc_rising, np.uint8), knobs)
    for s, (_, nan) in enumerate(res):
        if nan_errors is not None and nan.any():
            raise nan_errors[s](first_nan(scores_list[s]))
    return [out for out, _ in res]


def _ideal_state(judged: JudgedStats) -> tuple[np.ndarray, np.ndarray]:
    """``(ioff, ideal)`` for the ranking pass: the judged pass's ideal rankings, or an empty
    array (sliced empty for every query) where no family keeps them."""
    if judged.ideal is None or judged.ioff is None:
        return np.zeros(len(judged.n_judged) + 1, np.int64), _NO_IDEAL
    return _ro(judged.ioff, np.int64), _ro(judged.ideal, np.int64)


_NO_IDEAL = np.zeros(0, np.int64)
_NO_IDEAL.flags.writeable = False
_NO_RISING = np.zeros(0, np.uint8)
_NO_RISING.flags.writeable = False
_NO_RISING_OUT = np.zeros(0, np.uint8)  # "do not record" for the kernels that write it


def docid_ranks(g: Grouping, docs: DocIds, rising: np.ndarray | None = None
                ) -> tuple[DocIds, int, int]:
    """String docids -> ``(rank_docids, row, earlier_row)``: integer docids that are the ranks of
    the docids in byte order within each group (offset to one width, see
    :mod:`uefast.kernels.docrank`), so that trec_eval's tie order (docid descending by bytes) is
    the integer tie order the fast ranking paths know; sorted once, shared by every system ranked
    on ``g``. ``row >= 0``: the first docid repeated within a group, as :func:`duplicate_docid`
    reports it (the ranks are then incomplete). Other docid kinds are returned unchanged, with
    :func:`duplicate_docid`'s answer. ``rising`` as in :func:`duplicate_docid` (string docids:
    rising in byte order)."""
    if docs.mode != DOC_BYTES:
        return (docs, *duplicate_docid(g, docs, rising))
    ranks = np.zeros(len(docs.offsets) - 1, np.int64)
    with KERNEL_LOCK:
        r, o = docid_byte_ranks(_ro(g.offsets, np.int64), _ro(g.perm, np.int64), g.has_perm,
                                _ro(docs.offsets), _ro(docs.data),
                                n_chunks(g.n_groups), ranks,
                                _NO_RISING_OUT if rising is None else rising)
    return DocIds(DOC_INT, ranks, _EMPTY_I, _EMPTY_B), int(r), int(o)


def duplicate_docid(g: Grouping, docs: DocIds, rising: np.ndarray | None = None) -> tuple[int, int]:
    """``(row, earlier_row)`` of the first docid repeated within a group (the first group that
    has one, the first position in it whose docid appeared earlier, that earlier row), or
    ``(-1, -1)``. Integer docids: a hash set per group (:func:`find_duplicate`); string docids:
    equal neighbours of the byte-order sort of :func:`docid_ranks` (measured faster than hashing
    the bytes: 49 vs 87 ms single-thread for 3.8 M docids). With ``rising`` (uint8, zeroed, one
    entry per group) the groups whose docids strictly rise with position are marked 1 on the way
    (pass it to :func:`rank_values`)."""
    if docs is NO_DOCIDS or docs.mode == DOC_NONE:
        return -1, -1
    if docs.mode == DOC_BYTES:
        return docid_ranks(g, docs, rising)[1:]
    with KERNEL_LOCK:
        r, o = find_duplicate(_ro(g.offsets, np.int64), _ro(g.perm, np.int64), g.has_perm,
                              _ro(docs.ints, np.int64), n_chunks(g.n_groups),
                              _NO_RISING_OUT if rising is None else rising)
    return int(r), int(o)
