"""Swap rates (:func:`uefast.meta.swap_rate`) from mergeable per-partition subset sums.

A trial of the swap method compares, for every system pair, the difference of the pair's mean
over one topic subset with that over another (SPEC_math §6.8-§6.9). The means need only the
*sums* ``S[t, s, j] = Σ_{q in Q_s(t)} X[q, j]`` per trial ``t``, subset ``s`` (1 or 2) and system
``j``: sums that a partition computes over its own queries once it can tell which of them are in
``Q_1(t)`` / ``Q_2(t)``. Membership is a pure function of ``(seed, qid, t)`` and of a few numbers
the driver fixes from the whole topic set, so it does not depend on the partitioning; the sums are
exact expansions (:mod:`uefast.distributed._exact`), so the result is bit for bit the same for
every partitioning, merge order and worker count.

Three steps (two passes over the per-query table, which must hold every row of a query in one
part):

1. *census* (:func:`swap_census`): per part, the measures and systems present, and per query its
   64-bit key (:func:`uefast.distributed._keyed.qid_keys`), how many of the selected systems have
   a row, and ``max |x|``; merged by concatenation. The driver (:func:`swap_setup`) keeps the
   *complete* queries (every selected system has a row: the intersection, as
   :func:`uefast.meta.swap_rate` takes it), ``n`` of them, fixes ``c`` and ``T`` as
   ``uefast.meta.swap_rate`` does and the tie tolerance ``2**-40 · max|X|``
   (:mod:`uefast.meta._ties`).
2. *subset sums* (:func:`swap_partial`), the subsets drawn by the counter-based generator of
   :mod:`uefast.stats._rng`:

   * ``voorhees-buckley`` (disjoint halves of a random permutation): topic ``q``'s position in
     trial ``t``'s permutation is the rank of ``u_t(q) = mix64(k_t ^ key(q))`` among the ``n``
     complete topics (``k_t`` the splitmix64 key of trial ``t``; ``mix64`` is a bijection, so
     distinct keys never tie). The driver computes the ``c``-th and ``2c``-th smallest ``u_t``
     (``lo_t``, ``hi_t``); a part puts ``q`` in ``Q_1(t)`` when ``u_t(q) <= lo_t`` and in
     ``Q_2(t)`` when ``lo_t < u_t(q) <= hi_t``: a uniformly random pair of disjoint ``c``-subsets,
     keyed by ``(seed, qid, t)``.
   * ``bootstrap`` (two samples of ``c`` topics drawn with replacement): draw ``i`` of trial
     ``t`` (``i < c``: ``Q_1``, else ``Q_2``) is a uniform rank ``r`` in ``[0, n)`` (Lemire's
     unbiased method on word ``i // 2`` of trial ``t``'s stream, as ``uefast.stats`` draws
     bootstrap positions), and rank ``r`` is the ``r``-th complete topic in the order of the
     topic keys (the sorted keys come from the driver). The counts of a sample of exactly ``c``
     draws are dependent across topics, so they cannot be a function of each topic's own key;
     they are keyed by ``(seed, t, i)`` over the key order, which no partitioning changes.

3. *finish* (:func:`finish_swap`): means ``fl(S)/c`` (``fl``: the exact sum correctly rounded),
   then the comparisons, tie rule, binning and result of :func:`uefast.meta.swap_rate` (its
   :func:`~uefast.meta.swap.tally` and :func:`~uefast.meta.swap.swap_result`).

Relation to :func:`uefast.meta.swap_rate`: the same procedure (the same distribution of subsets,
the same means up to their summation rounding, the same tie rule and bins), but ``meta`` draws the
subsets with ``numpy.random.default_rng(seed)`` over topic *positions*, which needs the topics in
one place and in one order; so the two agree to Monte Carlo error, not draw for draw.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from uefast.distributed._exact import CAP, Ragged, compact, grow, raise_overflow
from uefast.distributed._keyed import qid_keys
from uefast.distributed._reduce import KeyStats, as_arrow, merge_partials
from uefast.errors import InputError
from uefast.meta._ties import RESOLUTION
from uefast.meta.swap import SwapResult, SwapSettings, check_settings, swap_result, tally
from uefast.stats._rng import below, high32, low32, mix64, resample_key, stream_base, word

__all__ = ["SwapPlan", "swap_plan", "swap_census", "merge_census", "swap_setup", "swap_partial",
           "finish_swap", "run_swap", "subsets"]

DOMAIN_SWAP_VB = 6
DOMAIN_SWAP_BOOTSTRAP = 7
_CELLS = 1 << 16  # expansions accumulated at once by a part (bounds memory: _CELLS * CAP doubles)
_U_BLOCK = 1 << 22  # u_t(q) values the driver holds at once
_KEY = ("swap",)


@dataclass(frozen=True)
class SwapPlan:
    """Validated settings of a distributed swap rate."""

    settings: SwapSettings
    measure: str | None
    column: str
    systems: tuple | None


def swap_plan(*, method="voorhees-buckley", subset_size=None, n_trials=None, bin_width=0.01,
              n_bins=21, binning="d1", ties="strict", alpha=0.05, seed=0, measure=None,
              column="value", systems=None) -> SwapPlan:
    """Validate the settings (those of :func:`uefast.meta.swap_rate`)."""
    st = check_settings(method=method, subset_size=subset_size, n_trials=n_trials,
                        bin_width=bin_width, n_bins=n_bins, binning=binning, ties=ties,
                        alpha=alpha, seed=seed)
    if systems is not None:
        systems = tuple(str(s) for s in systems)
        if len(set(systems)) != len(systems):
            raise InputError(f"`systems` names a system twice: {list(systems)}")
    return SwapPlan(st, None if measure is None else str(measure), str(column), systems)


# ----------------------------------------------------------------------------- pass 1: census
@dataclass
class Census:
    """What pass 1 learns about the queries of some parts (merged by concatenation)."""

    measures: set
    systems: set
    qkeys: np.ndarray  # uint64 key per query
    n_sys: np.ndarray  # selected systems with a row, per query
    top: np.ndarray  # max |x| of the query's finite values
    qids: list = field(default_factory=list)  # Arrow arrays of the qids (for error messages)
    bad: dict = field(default_factory=dict)  # key -> (qid, system, value) of a non-finite value

    def merge(self, o: "Census") -> "Census":
        return Census(self.measures | o.measures, self.systems | o.systems,
                      np.concatenate([self.qkeys, o.qkeys]), np.concatenate([self.n_sys, o.n_sys]),
                      np.concatenate([self.top, o.top]), self.qids + o.qids,
                      {**self.bad, **o.bad})


def merge_census(a: Any, b: Any) -> Any:
    """Merge two censuses; an empty partial (``{}``, an empty part) is the identity."""
    if not isinstance(a, Census):
        return b
    if not isinstance(b, Census):
        return a
    return a.merge(b)


def _select(part: Any, plan: SwapPlan):
    """The part's rows of the plan's measure and systems, plus the measures and systems seen."""
    t = as_arrow(part)
    for col in ("system", "qid", plan.column):
        if col not in t.column_names:
            raise InputError(f"the long table needs a `{col}` column; it has {t.column_names}")
    measures: set = set()
    if "measure" in t.column_names:
        mcol = t.column("measure").cast(pa.string())
        measures = set(pc.unique(mcol).to_pylist())
        if plan.measure is None:
            if len(measures) > 1:
                raise InputError(f"the table holds several measures {sorted(measures)}; pass "
                                 "`measure=`")
        else:
            t = t.filter(pc.equal(mcol, plan.measure))
    scol = t.column("system").cast(pa.string())
    systems = set(pc.unique(scol).to_pylist())
    if plan.systems is not None:
        t = t.filter(pc.is_in(scol, value_set=pa.array(plan.systems, pa.string())))
    return t, measures, systems


def _encode(t: pa.Table, plan: SwapPlan):
    """``(qid dictionary, qid codes, system names, system codes, values)``; duplicate
    (system, qid) rows refused."""
    q_enc = pc.dictionary_encode(t.column("qid")).combine_chunks()
    s_enc = pc.dictionary_encode(t.column("system").cast(pa.string())).combine_chunks()
    qi = q_enc.indices.to_numpy().astype(np.int64)
    si = s_enc.indices.to_numpy().astype(np.int64)
    ns = len(s_enc.dictionary)
    flat = qi * ns + si
    cnt = np.bincount(flat, minlength=len(q_enc.dictionary) * ns)
    if len(cnt) and cnt.max() > 1:
        r = int(np.flatnonzero(cnt[flat] > 1)[0])
        raise InputError(f"duplicate rows for system {s_enc.dictionary[si[r]].as_py()!r}, qid "
                         f"{q_enc.dictionary[qi[r]].as_py()!r}"
                         + (f" (measure {plan.measure!r})" if plan.measure is not None else ""))
    vals = t.column(plan.column).cast(pa.float64()).to_numpy(zero_copy_only=False)
    return q_enc.dictionary, qi, s_enc.dictionary.to_pylist(), si, vals


def swap_census(part: Any, plan: SwapPlan) -> Census:
    """Pass 1 over one part (every row of a query in it): see the module docstring."""
    t, measures, systems = _select(part, plan)
    empty = np.empty(0)
    if t.num_rows == 0:
        return Census(measures, systems, empty.astype(np.uint64), empty.astype(np.int64), empty)
    qdict, qi, snames, si, vals = _encode(t, plan)
    nq = len(qdict)
    n_sys = np.bincount(qi, minlength=nq).astype(np.int64)
    finite = np.isfinite(vals)
    top = np.zeros(nq)
    np.maximum.at(top, qi[finite], np.abs(vals[finite]))
    keys = qid_keys(qdict)
    bad = {}
    for r in np.flatnonzero(~finite):
        k = int(keys[qi[r]])
        if k not in bad:
            bad[k] = (qdict[qi[r]].as_py(), snames[si[r]], float(vals[r]))
    return Census(measures, systems, keys, n_sys, top, [qdict], bad)


@dataclass(frozen=True)
class SwapSetup:
    """What the driver fixes after pass 1 and sends to every part for pass 2."""

    systems: tuple  # selected systems, sorted (the result does not depend on their order)
    n: int  # complete topics
    c: int
    n_trials: int
    tol: float
    keys: np.ndarray  # sorted keys of the complete topics
    lo: np.ndarray  # voorhees-buckley: c-th smallest u_t per trial
    hi: np.ndarray  # 2c-th smallest


@njit(cache=True)
def _u_block(keys, seed, t0, nt, out):
    base = stream_base(seed, DOMAIN_SWAP_VB)
    for b in range(nt):
        kb = resample_key(base, t0 + b)
        for k in range(keys.shape[0]):
            out[b, k] = mix64(kb ^ keys[k])


def _thresholds(keys: np.ndarray, seed: int, c: int, n_trials: int):
    """``lo_t``, ``hi_t``: the ``c``-th and ``2c``-th smallest ``u_t(q)`` over ``keys``."""
    n = len(keys)
    lo, hi = np.empty(n_trials, np.uint64), np.empty(n_trials, np.uint64)
    step = max(1, _U_BLOCK // max(n, 1))
    for t0 in range(0, n_trials, step):
        nt = min(step, n_trials - t0)
        u = np.empty((nt, n), np.uint64)
        _u_block(keys, np.uint64(seed), t0, nt, u)
        u.partition([c - 1, 2 * c - 1], axis=1)
        lo[t0:t0 + nt], hi[t0:t0 + nt] = u[:, c - 1], u[:, 2 * c - 1]
    return lo, hi


def swap_setup(census: Any, plan: SwapPlan) -> SwapSetup:
    """Driver step after pass 1: the complete topics, ``c``, ``T``, the tie tolerance and the
    draws' shared numbers; the errors of :func:`uefast.meta.swap_rate` (several measures, an
    unknown measure or system, no complete topic, non-finite values, fewer than 2 systems) and a
    query found in two parts."""
    if not isinstance(census, Census):
        raise InputError("swap_rate: the table has no rows")
    if plan.measure is not None and census.measures and plan.measure not in census.measures:
        raise InputError(f"`measure` {plan.measure!r} is not in the table; it has "
                         f"{sorted(census.measures)}")
    if plan.measure is None and len(census.measures) > 1:
        raise InputError(f"the table holds several measures {sorted(census.measures)}; pass "
                         "`measure=`")
    if plan.systems is not None:
        missing = set(plan.systems) - census.systems
        if missing:
            raise InputError(f"`systems` names {sorted(missing)} are not in the table")
        systems = tuple(sorted(plan.systems))
    else:
        systems = tuple(sorted(census.systems))
    m = len(systems)
    st = plan.settings
    if m < 2:
        raise InputError(f"swap rates need at least 2 systems; got {m}")
    keys = census.qkeys
    order = np.argsort(keys, kind="stable")
    dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(dup):
        qids = pa.chunked_array([a.cast(census.qids[0].type) for a in census.qids])
        raise InputError(f"swap_rate: qid {qids[int(order[dup[0]])].as_py()!r} occurs in two "
                         "parts; every row of a query must be in one part (shuffle on qid, or "
                         "pass clustered=False)")
    complete = census.n_sys == m
    n = int(complete.sum())
    if n == 0:
        raise InputError("no query is evaluated for every system")
    for k in keys[complete]:
        if int(k) in census.bad:
            q, s, v = census.bad[int(k)]
            if np.isnan(v):
                raise InputError(f"column `{plan.column}` has null/NaN values for measure "
                                 f"{plan.measure!r} (system {s!r}, qid {q!r})")
            raise InputError(f"column `{plan.column}` is {v!r} for system {s!r}, qid {q!r}; every "
                             "value must be finite")
    c, n_trials = st.sizes(n, m)
    tol = RESOLUTION * float(census.top[complete].max())
    ks = np.sort(keys[complete])
    lo = hi = np.empty(0, np.uint64)
    if st.method == "voorhees-buckley":
        lo, hi = _thresholds(ks, st.seed, c, n_trials)
    return SwapSetup(systems, n, c, n_trials, tol, ks, lo, hi)


# ----------------------------------------------------------------------------- pass 2: sums
@njit(cache=True)
def _vb_sums(x, qkeys, seed, t0, nt, lo, hi, dense, lens):
    n, m = x.shape
    base = stream_base(seed, DOMAIN_SWAP_VB)
    for b in range(nt):
        kb = resample_key(base, t0 + b)
        for k in range(n):
            u = mix64(kb ^ qkeys[k])
            if u <= lo[t0 + b]:
                s = 0
            elif u <= hi[t0 + b]:
                s = 1
            else:
                continue
            for j in range(m):
                cell = (b * 2 + s) * m + j
                lens[cell] = grow(dense[cell], lens[cell], x[k, j])
                if lens[cell] < 0:
                    return cell
    return -1


@njit(cache=True)
def _bootstrap_sums(x, local, seed, t0, nt, c, dense, lens):
    m = x.shape[1]
    n = np.uint64(local.shape[0])
    base = stream_base(seed, DOMAIN_SWAP_BOOTSTRAP)
    for b in range(nt):
        kb = resample_key(base, t0 + b)
        for i in range(2 * c):
            w = word(kb, i >> 1)
            r = below(low32(w) if (i & 1) == 0 else high32(w), n, kb, i)
            k = local[r]
            if k < 0:
                continue
            s = 0 if i < c else 1
            for j in range(m):
                cell = (b * 2 + s) * m + j
                lens[cell] = grow(dense[cell], lens[cell], x[k, j])
                if lens[cell] < 0:
                    return cell
    return -1


@njit(cache=True)
def _bootstrap_ranks(keys, seed, t0, nt, c, out):
    """``out[b, i]``: the rank drawn by draw ``i`` of trial ``t0 + b`` (for tests/oracles)."""
    n = np.uint64(keys.shape[0])
    base = stream_base(seed, DOMAIN_SWAP_BOOTSTRAP)
    for b in range(nt):
        kb = resample_key(base, t0 + b)
        for i in range(2 * c):
            w = word(kb, i >> 1)
            out[b, i] = below(low32(w) if (i & 1) == 0 else high32(w), n, kb, i)


def _part_matrix(part: Any, plan: SwapPlan, setup: SwapSetup):
    """``(keys, X)``: the part's complete topics and their values, columns ``setup.systems``."""
    t, _, _ = _select(part, plan)
    m = len(setup.systems)
    if t.num_rows == 0:
        return np.empty(0, np.uint64), np.empty((0, m))
    t = t.filter(pc.is_in(t.column("system").cast(pa.string()),
                          value_set=pa.array(setup.systems, pa.string())))
    if t.num_rows == 0:
        return np.empty(0, np.uint64), np.empty((0, m))
    qdict, qi, snames, si, vals = _encode(t, plan)
    col = np.array([setup.systems.index(s) for s in snames], np.int64)
    nq = len(qdict)
    x = np.full((nq, m), np.nan)
    x[qi, col[si]] = vals
    full = np.bincount(qi, minlength=nq) == m
    return qid_keys(qdict)[full], np.ascontiguousarray(x[full])


def swap_partial(part: Any, plan: SwapPlan, setup: SwapSetup) -> dict:
    """Pass 2 over one part: the exact sums ``S[t, s, j]`` over its complete topics in
    ``Q_s(t)``, cells ``(t * 2 + s) * m + j``, as a partial (merged by
    :func:`uefast.distributed._reduce.merge_partials`)."""
    keys, x = _part_matrix(part, plan, setup)
    if len(keys) == 0:
        return {}
    st, m, T = plan.settings, len(setup.systems), setup.n_trials
    local = None
    if st.method == "bootstrap":
        ranks = np.searchsorted(setup.keys, keys)
        if (ranks >= setup.n).any() or (setup.keys[np.minimum(ranks, setup.n - 1)] != keys).any():
            raise InputError("swap_rate: the table changed between the two passes")
        local = np.full(setup.n, -1, np.int64)
        local[ranks] = np.arange(len(keys))
    step = max(1, _CELLS // (2 * m))
    lens_all, flat_all = [], []
    for t0 in range(0, T, step):
        nt = min(step, T - t0)
        dense, lens = np.empty((nt * 2 * m, CAP)), np.zeros(nt * 2 * m, np.int64)
        if local is None:
            bad = _vb_sums(x, keys, np.uint64(st.seed), t0, nt, setup.lo, setup.hi, dense, lens)
        else:
            bad = _bootstrap_sums(x, local, np.uint64(st.seed), t0, nt, setup.c, dense, lens)
        if bad >= 0:
            raise_overflow()
        r = compact(dense, lens)
        lens_all.append(r.lens)
        flat_all.append(r.flat)
    sums = Ragged(np.concatenate(lens_all), np.concatenate(flat_all))
    return {_KEY: KeyStats(np.zeros(0, np.int64), sums, np.zeros(0))}


def finish_swap(plan: SwapPlan, setup: SwapSetup, sums: dict) -> SwapResult:
    """Means ``fl(S)/c``, then :func:`uefast.meta.swap.tally` and
    :func:`uefast.meta.swap.swap_result` (the formulas of :func:`uefast.meta.swap_rate`)."""
    st, m, T, c = plan.settings, len(setup.systems), setup.n_trials, setup.c
    s = sums[_KEY].sums.rounded() if _KEY in sums else np.zeros(T * 2 * m)
    means = (s / c).reshape(T, 2, m)
    ii, jj = np.triu_indices(m, k=1)
    count = np.zeros(st.n_bins, np.int64)
    swaps = np.zeros(st.n_bins, np.int64)
    step = max(1, (1 << 20) // max(len(ii), 1))
    for t0 in range(0, T, step):
        blk = means[t0:t0 + step]
        tally(blk[:, 0], blk[:, 1], ii, jj, setup.tol, st, count, swaps)
    return swap_result(st, c, T, int(len(ii)), count, swaps)


def run_swap(reduce: Callable, plan: SwapPlan) -> SwapResult:
    """The two passes of a swap rate over an engine: ``reduce(fn, merge)`` applies ``fn`` to
    every part (query-complete) and merges the results with ``merge``."""
    census = reduce(lambda part: swap_census(part, plan), merge_census)
    setup = swap_setup(census, plan)
    sums = reduce(lambda part: swap_partial(part, plan, setup), merge_partials)
    return finish_swap(plan, setup, sums)


def subsets(setup: SwapSetup, plan: SwapPlan, keys: np.ndarray) -> tuple[list, list]:
    """The topic subsets of every trial as positions into ``keys`` (the complete topics' keys in
    any order): ``(Q1, Q2)``, lists of ``n_trials`` integer arrays (bootstrap: with repeats).
    For oracles and tests; the adapters never materialise the subsets."""
    st = plan.settings
    pos = {int(k): i for i, k in enumerate(keys)}
    q1, q2 = [], []
    if st.method == "voorhees-buckley":
        u = np.empty((setup.n_trials, len(keys)), np.uint64)
        _u_block(np.ascontiguousarray(keys, np.uint64), np.uint64(st.seed), 0, setup.n_trials, u)
        for t in range(setup.n_trials):
            q1.append(np.flatnonzero(u[t] <= setup.lo[t]))
            q2.append(np.flatnonzero((u[t] > setup.lo[t]) & (u[t] <= setup.hi[t])))
        return q1, q2
    ranks = np.empty((setup.n_trials, 2 * setup.c), np.int64)
    _bootstrap_ranks(setup.keys, np.uint64(st.seed), 0, setup.n_trials, setup.c, ranks)
    to_pos = np.array([pos[int(k)] for k in setup.keys], np.int64)
    for t in range(setup.n_trials):
        q1.append(to_pos[ranks[t, :setup.c]])
        q2.append(to_pos[ranks[t, setup.c:]])
    return q1, q2
