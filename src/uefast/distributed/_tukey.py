"""Carterette's randomised Tukey HSD test from mergeable per-resample column sums.

:func:`uefast.stats.tukey_hsd` (TOIS 2012; SPEC §6.6) permutes every topic's row of the topics x
systems matrix independently across the ``m`` systems, ``B`` times, and records the range
``q*_b = max_j S*_bj - min_j S*_bj`` of the permuted column sums; ``p_ij = #{q*_b >= |S_i - S_j|
- γ} / B``. Everything it needs is a sum over topics, so a part of whole queries sends, per
measure: the number ``n`` of its topics that every system has (the intersection, as
``missing="intersect"``), the exact column sums ``S_j``, the exact sum of the two largest
``|x_kj|`` of each row (γ's scale) and the ``B x m`` exact permuted column sums ``S*_bj``. Sums
are Shewchuk expansions (:mod:`uefast.distributed._exact`), so the merged statistics, and the
p-values, are bit for bit the same for every partitioning, order of merging and worker count.

Permutations are keyed by ``(seed, qid, resample)``: row ``q`` in resample ``b`` is shuffled by
Fisher-Yates with draws from the words ``w_0 = mix64(k_b ^ key(q))``, ``w_{i+1} = mix64(w_i +
φ)`` (``k_b``: the splitmix64 resample key of domain 6, :mod:`uefast.distributed._keyed`), each
a uniform integer by Lemire's method with rejection (exactly unbiased). ``uefast.stats`` keys a
row's permutation by its *position* in the matrix and sums the rows sequentially in that order,
which needs the global order of the topics and one sequential pass; so the p-values agree with
:func:`uefast.stats.tukey_hsd` to Monte Carlo error (the same test, other draws), not bit for bit,
while the observed statistics ``|mean_i - mean_j|`` agree to rounding (exact sums here).

Two passes: (1) the systems of each measure (a set union), so that a part knows which of its
queries every system has; (2) the sums above.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from uefast.distributed._exact import CAP, grow
from uefast.errors import InputError
from uefast.stats._rng import mix64, resample_key, stream_base

__all__ = ["TukeyPlan", "tukey_plan", "run_tukey", "DOMAIN_KEYED_TUKEY"]

DOMAIN_KEYED_TUKEY = 6
_PHI = np.uint64(0x9E3779B97F4A7C15)
_SYS = "\x00systems"  # census keys: (_SYS, measure)


@dataclass(frozen=True)
class TukeyPlan:
    """Settings of :func:`uefast.distributed.tukey_hsd` (validated by :func:`tukey_plan`)."""

    column: str
    measures: tuple | None
    systems: tuple | None
    n_resamples: int
    seed: int


def tukey_plan(*, measure=None, column="value", systems=None, n_resamples=None,
               seed=0) -> TukeyPlan:
    from uefast.distributed._reduce import AGG_COLUMNS
    from uefast.stats._validation import check_choice, check_n_resamples, check_seed

    column = check_choice("column", column, AGG_COLUMNS)
    b = 10_000 if n_resamples is None else check_n_resamples(n_resamples)
    seed = check_seed(seed, allow_none=False)
    measures = None if measure is None else tuple(
        [str(measure)] if isinstance(measure, str) else [str(m) for m in measure])
    systems = None if systems is None else tuple(str(s) for s in systems)
    if systems is not None and len(set(systems)) != len(systems):
        raise InputError(f"`systems` names a system twice: {list(systems)}")
    return TukeyPlan(column, measures, systems, int(b), int(seed))


class SystemSet:
    """Mergeable set of system names (pass 1)."""

    __slots__ = ("names",)

    def __init__(self, names) -> None:
        self.names = frozenset(names)

    def merge(self, o: "SystemSet") -> "SystemSet":
        return SystemSet(self.names | o.names)


def _rows(part: Any, plan: TukeyPlan) -> pa.Table:
    from uefast.distributed._reduce import as_arrow

    t = as_arrow(part)
    if t.num_rows == 0:
        return t
    t = t.set_column(t.schema.get_field_index("measure"), "measure",
                     t.column("measure").cast(pa.string()))
    t = t.set_column(t.schema.get_field_index("system"), "system",
                     t.column("system").cast(pa.string()))
    keep = None
    if plan.measures is not None:
        keep = pc.is_in(t.column("measure"), value_set=pa.array(plan.measures, pa.string()))
    if plan.systems is not None:
        ks = pc.is_in(t.column("system"), value_set=pa.array(plan.systems, pa.string()))
        keep = ks if keep is None else pc.and_(keep, ks)
    return t if keep is None else t.filter(keep)


def tukey_census(part: Any, plan: TukeyPlan) -> dict:
    """Pass 1: ``{(_SYS, measure): SystemSet}`` of the part."""
    t = _rows(part, plan)
    if t.num_rows == 0:
        return {}
    pairs = pc.unique(pc.binary_join_element_wise(t.column("measure"), t.column("system"),
                                                  "\x00")).to_pylist()
    out: dict = {}
    for ms in pairs:
        m, s = ms.split("\x00", 1)
        out.setdefault((_SYS, m), set()).add(s)
    return {k: SystemSet(v) for k, v in out.items()}


def _matrix(t: pa.Table, systems: list, column: str):
    """``(qkeys, X)``: the queries of ``t`` (one measure) that every one of ``systems`` has, and
    their ``n x m`` matrix (columns in the order of ``systems``)."""
    from uefast.distributed._keyed import qid_keys

    q_enc = pc.dictionary_encode(t.column("qid")).combine_chunks()
    qi = q_enc.indices.to_numpy().astype(np.int64)
    pos = {s: j for j, s in enumerate(systems)}
    sysl = t.column("system").to_pylist()
    si = np.array([pos[s] for s in sysl], np.int64)
    vals = t.column(column).cast(pa.float64()).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(~np.isfinite(vals))
    if len(bad):
        r = int(bad[0])
        raise InputError(f"tukey_hsd: column {column!r} has a non-finite or null value "
                         f"({vals[r]!r}) for system {sysl[r]!r}, qid {t.column('qid')[r].as_py()!r}"
                         f", measure {t.column('measure')[r].as_py()!r}")
    nq, m = len(q_enc.dictionary), len(systems)
    flat = qi * m + si
    cnt = np.bincount(flat, minlength=nq * m)
    if cnt.max() > 1:
        r = int(np.flatnonzero(cnt[flat] > 1)[0])
        raise InputError(f"tukey_hsd: system {sysl[r]!r}, qid {t.column('qid')[r].as_py()!r}, "
                         f"measure {t.column('measure')[r].as_py()!r} has more than one row")
    x = np.full(nq * m, np.nan)
    x[flat] = vals
    x = x.reshape(nq, m)
    full = ~np.isnan(x).any(axis=1)
    return qid_keys(q_enc.dictionary)[full], np.ascontiguousarray(x[full])


@njit(cache=True)
def _below(w, n):
    """``(v, w')``: a uniform integer ``v`` in ``[0, n)`` from the high 32 bits of ``w`` by
    Lemire's method, rejected draws replaced by the next words; ``w'`` the next word."""
    n64 = np.uint64(n)
    mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    prod = (w >> s32) * n64
    if (prod & mask) < n64:
        t = (np.uint64(0x100000000) - n64) % n64
        while (prod & mask) < t:
            w = mix64(w + _PHI)
            prod = (w >> s32) * n64
    return prod >> s32, mix64(w + _PHI)


@njit(cache=True)
def keyed_permutation(key, m, p):
    """``p`` := the Fisher-Yates permutation of ``range(m)`` drawn from the word ``key``."""
    for j in range(m):
        p[j] = j
    w = key
    for i in range(m - 1, 0, -1):
        v, w = _below(w, i + 1)
        t = p[i]
        p[i] = p[v]
        p[v] = t


@njit(cache=True)
def _permuted_sums(x, qkeys, seed, n_b, dense, lens):
    n, m = x.shape
    base = stream_base(seed, np.uint64(DOMAIN_KEYED_TUKEY))
    p = np.empty(m, np.int64)
    for b in range(n_b):
        kb = resample_key(base, b)
        for k in range(n):
            keyed_permutation(mix64(kb ^ qkeys[k]), m, p)
            for j in range(m):
                c = b * m + j
                lens[c] = grow(dense[c], lens[c], x[k, p[j]])
                if lens[c] < 0:
                    return c
    return -1


def permuted_sums(x: np.ndarray, qkeys: np.ndarray, seed: int, n_resamples: int):
    """Exact ``S*_bj = Σ_k x[k, p_bk[j]]`` (cells ``b * m + j``), ``p_bk`` keyed by
    ``(seed, qkeys[k], b)``."""
    from uefast.distributed._keyed import _finish

    cells = n_resamples * x.shape[1]
    dense, lens = np.empty((cells, CAP)), np.zeros(cells, np.int64)
    bad = _permuted_sums(np.ascontiguousarray(x, np.float64), qkeys, np.uint64(seed),
                         n_resamples, dense, lens)
    return _finish(bad, dense, lens)


def tukey_partial(part: Any, plan: TukeyPlan, systems: dict) -> dict:
    """Pass 2: per measure ``KeyStats(ints=[n], sums=[S_1..S_m, scale, S*_bj...])``."""
    from uefast.distributed._exact import Ragged
    from uefast.distributed._keyed import plain_sums
    from uefast.distributed._reduce import KeyStats

    t = _rows(part, plan)
    out: dict = {}
    if t.num_rows == 0:
        return out
    for mname, names in systems.items():
        tm = t.filter(pc.equal(t.column("measure"), mname))
        if tm.num_rows == 0:
            continue
        qkeys, x = _matrix(tm, names, plan.column)
        n, m = x.shape
        if n == 0:
            continue
        two = np.sort(np.abs(x), axis=1)[:, -2:].sum(axis=1)  # two summands: exact enough
        cells = np.concatenate([np.tile(np.arange(m), n), np.full(n, m)])
        obs, _ = plain_sums(cells, np.concatenate([x.ravel(), two]), m + 1)
        perm = permuted_sums(x, qkeys, plan.seed, plan.n_resamples)
        both = Ragged(np.concatenate([obs.lens, perm.lens]), np.concatenate([obs.flat,
                                                                              perm.flat]))
        out[(mname,)] = KeyStats(np.array([n], np.int64), both, np.zeros(0))
    return out


def finish_tukey(plan: TukeyPlan, systems: dict, stats: dict) -> pa.Table:
    """One row per (measure, system_a, system_b) (names sorted, a < b): ``mean_difference =
    (S_a - S_b)/n``, ``statistic = |S_a - S_b|/n``, ``pvalue = #{q*_b >= |S_a - S_b| - γ}/B``
    with ``γ = 1e-12·max(|S_a - S_b|, scale)`` (:func:`uefast.stats.resampling.tie_tolerance`),
    schema :data:`uefast.distributed.COMPARE_SCHEMA` (method ``tukey_hsd``)."""
    from uefast.distributed._reduce import COMPARE_SCHEMA
    from uefast.stats.resampling import tie_tolerance

    rows: dict[str, list] = {f.name: [] for f in COMPARE_SCHEMA}
    B = plan.n_resamples
    for mname in sorted(systems):
        names = systems[mname]
        st = stats.get((mname,))
        n = 0 if st is None else int(st.ints[0])
        if n < 2:
            raise InputError(f"tukey_hsd: measure {mname!r}: {n} queries have a value for every "
                             f"system of {names}; the test needs at least 2")
        m = len(names)
        r = st.sums.rounded()
        s, scale = r[:m], float(r[m])
        star = r[m + 1:].reshape(B, m)
        q = np.sort(star.max(axis=1) - star.min(axis=1))
        for i in range(m):
            for j in range(i + 1, m):
                d = abs(float(s[i]) - float(s[j]))
                count = B - int(np.searchsorted(q, d - float(tie_tolerance(d, scale)),
                                                side="left"))
                for name, v in zip(COMPARE_SCHEMA.names,
                                   (mname, names[i], names[j], "tukey_hsd", "two-sided", n,
                                    (float(s[i]) - float(s[j])) / n, d / n, count / B, B,
                                    plan.seed)):
                    rows[name].append(v)
    return pa.table(rows, schema=COMPARE_SCHEMA)


def run_tukey(reduce: Callable, plan: TukeyPlan) -> pa.Table:
    """The two passes over an engine: ``reduce(fn)`` applies ``fn`` to every query-complete
    part and merges the partials (:func:`uefast.distributed._reduce.merge_partials`)."""
    census = reduce(lambda part: tukey_census(part, plan))
    systems = {k[1]: sorted(v.names) for k, v in census.items()}
    if plan.measures is not None:
        missing = [m for m in plan.measures if m not in systems]
        if missing:
            raise InputError(f"tukey_hsd: measure(s) {missing} not in the table")
    if not systems:
        raise InputError("tukey_hsd: no rows (after the measure/systems filters)")
    for mname, names in systems.items():
        if plan.systems is not None and len(names) < len(plan.systems):
            absent = sorted(set(plan.systems) - set(names))
            raise InputError(f"tukey_hsd: measure {mname!r} has no rows of system(s) {absent}")
        if len(names) < 2:
            raise InputError(f"tukey_hsd: measure {mname!r} has {len(names)} system; the test "
                             "compares at least 2")
    stats = reduce(lambda part: tukey_partial(part, plan, systems))
    return finish_tukey(plan, systems, stats)
