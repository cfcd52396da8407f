"""Means and paired tests from mergeable sufficient statistics of per-query tables.

A per-query table (the long table of :func:`uefast.evaluate`) split into parts *by query* (every
row of a query in one part) is reduced in two kinds of steps: ``*_partial(part)`` turns one part
into a :data:`Partial` (a dict ``key -> KeyStats``), :func:`merge_partials` merges two of them
(exactly: integer counts add, sums are exact expansions, maxima take the max), and ``finish_*``
turns the merged statistics into the result. Merging is associative and commutative and the
sums are exact, so the result is bit for bit the same for every partitioning, order of merging
and number of workers. The engine adapters (:mod:`uefast.dask`, :mod:`uefast.spark`) only map
parts and merge; :func:`uefast.distributed.compare` / :func:`uefast.distributed.aggregate` run
the same steps on one in-memory table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.distributed._exact import Ragged, merge_ragged
from uefast.distributed._keyed import plain_sums, poisson_sums, qid_keys, signflip_sums
from uefast.errors import InputError

AGG_COLUMNS = ("value", "iub", "reb", "ue_v1", "ue_v2")
METHODS = ("t", "bootstrap", "randomization", "sign", "wilcoxon")
_EPS = np.finfo(np.float64).eps


@dataclass
class KeyStats:
    """Statistics of one key: integer counts, exact sums, maxima."""

    ints: np.ndarray
    sums: Ragged
    maxes: np.ndarray

    def merge(self, o: "KeyStats") -> "KeyStats":
        return KeyStats(self.ints + o.ints, merge_ragged(self.sums, o.sums),
                        np.maximum(self.maxes, o.maxes))


Partial = dict  # key (tuple) -> KeyStats


def merge_partials(a: Partial, b: Partial) -> Partial:
    """Union of the keys; a key in both is merged (:meth:`KeyStats.merge`)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out[k].merge(v) if k in out else v
    return out


def tree_merge(parts: list, merge: Callable = merge_partials) -> Partial:
    """Pairwise merge of a list of partials with ``merge`` (the in-process reduction)."""
    parts = list(parts) or [{}]
    while len(parts) > 1:
        parts = [merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def as_arrow(part: Any) -> pa.Table:
    """A part as a pyarrow Table (pandas parts from Dask, record batches from Spark)."""
    if isinstance(part, pa.Table):
        return part
    if isinstance(part, pa.RecordBatch):
        return pa.Table.from_batches([part])
    return pa.Table.from_pandas(part, preserve_index=False)


# ----------------------------------------------------------------------------- aggregate
def aggregate_partial(part: Any) -> Partial:
    """Per (system, measure): ``ints`` = [rows, non-NaN count of each column], ``sums`` = exact
    sums of :data:`AGG_COLUMNS` (NaN and null skipped, as :func:`uefast.aggregate`)."""
    from uefast.distributed._meta import META_KEY, MetaStats

    t = as_arrow(part)
    meta = MetaStats.of(part, t.num_rows)
    if t.num_rows == 0:
        return {} if meta is None else {META_KEY: meta}
    sys_enc = pc.dictionary_encode(t.column("system").cast(pa.string())).combine_chunks()
    mea_enc = pc.dictionary_encode(t.column("measure").cast(pa.string())).combine_chunks()
    s_codes = sys_enc.indices.to_numpy()
    m_codes = mea_enc.indices.to_numpy()
    n_m = len(mea_enc.dictionary)
    n_keys = len(sys_enc.dictionary) * n_m
    key = s_codes.astype(np.int64) * n_m + m_codes
    rows = np.bincount(key, minlength=n_keys)
    nc = len(AGG_COLUMNS)
    cells = np.concatenate([key * nc + c for c in range(nc)])
    vals = np.concatenate([t.column(c).cast(pa.float64()).to_numpy(zero_copy_only=False)
                           for c in AGG_COLUMNS])  # nulls -> NaN, skipped like NaN
    sums, counts = plain_sums(cells, vals, n_keys * nc)
    sysn, mean = sys_enc.dictionary.to_pylist(), mea_enc.dictionary.to_pylist()
    out = {} if meta is None else {META_KEY: meta}
    for k in np.flatnonzero(rows):
        ints = np.concatenate([[rows[k]], counts[k * nc:(k + 1) * nc]])
        out[(sysn[k // n_m], mean[k % n_m])] = KeyStats(
            ints, sums.take(np.arange(k * nc, (k + 1) * nc)), np.zeros(0))
    return out


def finish_aggregate(stats: Partial) -> pa.Table:
    """Rows sorted by (system, measure); means = correctly rounded exact sum / count (null where
    the count is 0, as ``uefast.aggregate``'s mean of nothing); the table metadata merged from
    the parts' (:mod:`uefast.distributed._meta`)."""
    from uefast.distributed._meta import META_KEY

    stats = dict(stats)
    meta = stats.pop(META_KEY, None)
    keys = sorted(stats)
    cols: dict[str, Any] = {"system": [k[0] for k in keys], "measure": [k[1] for k in keys],
                            "n_queries": [int(stats[k].ints[0]) for k in keys]}
    sums = [stats[k].sums.rounded() for k in keys]
    for i, c in enumerate(AGG_COLUMNS):
        cols[c] = [float(s[i]) / int(stats[k].ints[1 + i]) if stats[k].ints[1 + i] else None
                   for s, k in zip(sums, keys)]
    schema = pa.schema([pa.field("system", pa.string()), pa.field("measure", pa.string()),
                        pa.field("n_queries", pa.int64())] +
                       [pa.field(c, pa.float64()) for c in AGG_COLUMNS])
    return pa.table(cols, schema=schema).replace_schema_metadata(
        None if meta is None else meta.metadata())


# ----------------------------------------------------------------------------- compare
@dataclass(frozen=True)
class ComparePlan:
    """Settings of a comparison (validated by :func:`compare_plan`)."""

    method: str
    column: str
    measures: tuple | None
    systems: tuple | None
    baseline: str | None
    alternative: str
    n_resamples: int
    seed: int
    epsilon: float = 0.0  # sign test
    exact: bool | None = None  # Wilcoxon


def compare_plan(method="randomization", *, measure=None, column="value", systems=None,
                 baseline=None, alternative="two-sided", n_resamples=None, seed=0,
                 epsilon=0.0, exact=None) -> ComparePlan:
    """Validate the settings of :func:`uefast.distributed.compare`."""
    from uefast.stats._validation import ALTERNATIVES, check_choice, check_n_resamples, check_seed

    method = check_choice("method", method, METHODS)
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    column = check_choice("column", column, AGG_COLUMNS)
    from uefast.stats._validation import check_nonnegative

    epsilon = check_nonnegative("epsilon", epsilon)
    if exact is not None and not isinstance(exact, bool):
        raise InputError(f"`exact` must be None, True or False; got {exact!r}")
    if n_resamples is None or method in ("t", "sign", "wilcoxon"):
        n_resamples = {"bootstrap": 1000, "randomization": 10_000}.get(method, 0)
    else:
        n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed, allow_none=False)
    measures = None if measure is None else tuple(
        [str(measure)] if isinstance(measure, str) else [str(m) for m in measure])
    systems = None if systems is None else tuple(str(s) for s in systems)
    if baseline is not None:
        baseline = str(baseline)
        if systems is not None and baseline not in systems:
            raise InputError(f"`baseline`={baseline!r} is not one of `systems`={list(systems)}")
    return ComparePlan(method, column, measures, systems, baseline, alternative,
                       int(n_resamples), int(seed), float(epsilon), exact)


def _pair_matrix(part: Any, plan: ComparePlan, with_xmax: bool = False):
    """``(qkeys, keys, Z)``: the part's queries, the (measure, system_a, system_b) keys present
    and ``Z[q, key] = x_a - x_b`` (NaN where either system has no row for the query); with
    ``with_xmax`` also ``max(|x_a|, |x_b|)`` per key over the queries both have (-inf: none)."""
    t = as_arrow(part)
    empty = (np.empty(0, np.uint64), [], np.empty((0, 0)))
    if t.num_rows == 0:
        return empty + ((np.empty(0),) if with_xmax else ())
    mcol = t.column("measure").cast(pa.string())
    scol = t.column("system").cast(pa.string())
    keep = None
    if plan.measures is not None:
        keep = pc.is_in(mcol, value_set=pa.array(plan.measures, pa.string()))
    if plan.systems is not None:
        ks = pc.is_in(scol, value_set=pa.array(plan.systems, pa.string()))
        keep = ks if keep is None else pc.and_(keep, ks)
    if keep is not None:
        t = t.filter(keep)
        mcol, scol = t.column("measure").cast(pa.string()), t.column("system").cast(pa.string())
    if t.num_rows == 0:
        return empty + ((np.empty(0),) if with_xmax else ())
    q_enc = pc.dictionary_encode(t.column("qid")).combine_chunks()
    m_enc = pc.dictionary_encode(mcol).combine_chunks()
    s_enc = pc.dictionary_encode(scol).combine_chunks()
    qi, mi, si = (e.indices.to_numpy().astype(np.int64) for e in (q_enc, m_enc, s_enc))
    nq, nm, ns = len(q_enc.dictionary), len(m_enc.dictionary), len(s_enc.dictionary)
    vals = t.column(plan.column).cast(pa.float64()).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(~np.isfinite(vals))
    if len(bad):
        r = int(bad[0])
        raise InputError(f"compare: column {plan.column!r} has a non-finite or null value "
                         f"({vals[r]!r}) for system {scol[r].as_py()!r}, qid "
                         f"{t.column('qid')[r].as_py()!r}, measure {mcol[r].as_py()!r}; paired "
                         "tests need a number for every (system, query)")
    flat = (qi * nm + mi) * ns + si
    cnt = np.bincount(flat, minlength=nq * nm * ns)
    if cnt.max() > 1:
        r = int(np.flatnonzero(cnt[flat] > 1)[0])
        raise InputError(f"compare: system {scol[r].as_py()!r}, qid {t.column('qid')[r].as_py()!r}"
                         f", measure {mcol[r].as_py()!r} has more than one row")
    x = np.full(nq * nm * ns, np.nan)
    x[flat] = vals
    x = x.reshape(nq, nm, ns)
    sysn = s_enc.dictionary.to_pylist()
    order = sorted(range(ns), key=lambda i: sysn[i])
    keys, cols, xmax = [], [], []
    for m, mname in enumerate(m_enc.dictionary.to_pylist()):
        for a_pos, a in enumerate(order):
            for b in order[a_pos + 1:]:
                sa, sb = sysn[a], sysn[b]
                if plan.baseline is not None:
                    if plan.baseline not in (sa, sb):
                        continue
                    if sa == plan.baseline:  # baseline second: z = other - baseline
                        a, b, sa, sb = b, a, sb, sa
                keys.append((mname, sa, sb))
                cols.append(x[:, m, a] - x[:, m, b])
                if with_xmax:
                    both = np.abs(x[:, m, [a, b]])[~np.isnan(cols[-1])]
                    xmax.append(float(both.max()) if both.size else -np.inf)
    z = np.column_stack(cols) if cols else np.empty((nq, 0))
    if with_xmax:
        return qid_keys(q_enc.dictionary), keys, z, np.array(xmax)
    return qid_keys(q_enc.dictionary), keys, z


def compare_stage1(part: Any, plan: ComparePlan) -> Partial:
    """Per pair key: ``ints`` = [n], ``sums`` = [Σz, Σ|z|] exact, ``maxes`` = [max|z|,
    max(|x_a|, |x_b|)]."""
    _, keys, z, xmax = _pair_matrix(part, plan, with_xmax=True)
    if not keys:
        return {}
    n_q, K = z.shape
    cells = np.concatenate([np.tile(np.arange(K), n_q), K + np.tile(np.arange(K), n_q)])
    sums, counts = plain_sums(cells, np.concatenate([z.ravel(), np.abs(z).ravel()]), 2 * K)
    absz = np.abs(z)
    out = {}
    for p, key in enumerate(keys):
        if counts[p] == 0:
            continue
        mx = float(np.max(absz[:, p][~np.isnan(absz[:, p])]))
        out[key] = KeyStats(np.array([counts[p]]), sums.take(np.array([p, K + p])),
                            np.array([mx, xmax[p]]))
    return out


def _means(stage1: Partial) -> dict:
    return {k: float(v.sums.rounded()[0]) / int(v.ints[0]) for k, v in stage1.items()}


def compare_stage2(part: Any, plan: ComparePlan, zbar: dict, cut: dict | None = None
                   ) -> Partial:
    """Per pair key, with ``w = z - z̄`` (``z̄`` from stage 1): ``t``: Σ fl(w²);
    ``randomization``: Σ_k s_bk z_k per resample; ``bootstrap``: Σ fl(w²), then per resample
    Σ c_bk w_k, Σ c_bk fl(w_k²) and N*_b = Σ c_bk (:mod:`uefast.distributed._keyed`)."""
    qkeys, keys, z = _pair_matrix(part, plan)
    keys_in = [p for p, k in enumerate(keys) if k in zbar]
    if not keys_in:
        return {}
    z = z[:, keys_in]
    keys = [keys[p] for p in keys_in]
    n_q, K = z.shape
    B = plan.n_resamples
    out = {}
    if plan.method in ("sign", "wilcoxon"):
        from uefast.distributed._ranks import rank_partial

        return rank_partial(z, keys, plan.method, cut or {})
    if plan.method == "randomization":
        sums = signflip_sums(z, qkeys, plan.seed, B)
        for p, key in enumerate(keys):
            out[key] = KeyStats(np.zeros(0, np.int64), sums.take(np.arange(B) * K + p),
                                np.zeros(0))
        return out
    w = z - np.array([zbar[k] for k in keys])
    ww, _ = plain_sums(np.tile(np.arange(K), n_q), (w * w).ravel(), K)
    if plan.method == "t":
        for p, key in enumerate(keys):
            out[key] = KeyStats(np.zeros(0, np.int64), ww.take([p]), np.zeros(0))
        return out
    sums, nstar = poisson_sums(w, qkeys, plan.seed, B)
    for p, key in enumerate(keys):
        c0 = 2 * (np.arange(B) * K + p)
        cells = np.concatenate([[0], 1 + c0, 2 + c0])
        both = Ragged(np.concatenate([ww.lens[p:p + 1], sums.lens]),
                      np.concatenate([ww.take([p]).flat, sums.flat]))
        out[key] = KeyStats(nstar[:, p].copy(), both.take(cells), np.zeros(0))
    return out


COMPARE_SCHEMA = pa.schema([
    pa.field("measure", pa.string()), pa.field("system_a", pa.string()),
    pa.field("system_b", pa.string()), pa.field("method", pa.string()),
    pa.field("alternative", pa.string()), pa.field("n_topics", pa.int64()),
    pa.field("mean_difference", pa.float64()), pa.field("statistic", pa.float64()),
    pa.field("pvalue", pa.float64()), pa.field("n_resamples", pa.int64()),
    pa.field("seed", pa.uint64())])


def _t_pvalue(t: float, n: int, alternative: str) -> float:
    from uefast.stats.parametric import _pvalue_from_t

    if math.isinf(t):
        return {"two-sided": 0.0, "greater": float(t < 0), "less": float(t > 0)}[alternative]
    if t == 0.0:
        return 1.0 if alternative == "two-sided" else _pvalue_from_t(0.0, n - 1, alternative)
    return _pvalue_from_t(t, n - 1, alternative)


def finish_compare(plan: ComparePlan, stage1: Partial, stage2: Partial) -> pa.Table:
    """One row per (measure, system_a, system_b), sorted; ``z = x_a - x_b``.

    * ``t``: ``t = z̄ / (sd/√n)``, ``sd² = Σ(z - z̄)²/(n - 1)``, Student's t with ``n - 1`` df.
    * ``randomization``: ``T = Σz``; ``p = (#{b: |T*_b| >= |T| - γ} + 1)/(B + 1)`` (two-sided;
      one-sided analogues), ``T*_b = Σ s_bk z_k``, ``γ`` = 1e-12·max(|T|, Σ|z|).
    * ``bootstrap``: the studentised, shifted Poisson bootstrap: ``t*_b`` of ``w = z - z̄`` under
      weights ``c_bk`` (mean ``Σcw/N*``, variance ``(Σcw² - N*·mean²)/(N* - 1)``), ASL =
      ``#{b: |t*_b| >= |t| - γ}/B`` (Sakai 2006 with Poisson weights).
    """
    from uefast.stats.parametric import REL_TOL, studentized
    from uefast.stats.resampling import _count_extreme

    rows: dict[str, list] = {f.name: [] for f in COMPARE_SCHEMA}
    for key in sorted(stage1):
        s1 = stage1[key]
        n = int(s1.ints[0])
        if n < 2:
            raise InputError(f"compare: measure {key[0]!r}, systems {key[1]!r} and {key[2]!r} "
                             f"share {n} query; paired tests need at least 2")
        sz, sabs = s1.sums.rounded()
        zbar = sz / n
        tol = REL_TOL * max(1.0, float(s1.maxes[0]))
        s2 = stage2[key]
        B = plan.n_resamples
        if plan.method == "sign":
            from uefast.distributed._ranks import finish_sign

            statistic, p = finish_sign(s2, plan.alternative)
        elif plan.method == "wilcoxon":
            from uefast.distributed._ranks import finish_wilcoxon

            statistic, p = finish_wilcoxon(s2, n, plan.alternative, plan.exact)
        elif plan.method == "randomization":
            stat = s2.sums.rounded()
            obs = sz
            count = _count_extreme(stat, obs, plan.alternative, float(sabs))
            statistic, p = zbar, (count + 1) / (B + 1.0)
        else:
            r = s2.sums.rounded()
            sd = math.sqrt(max(float(r[0]), 0.0) / (n - 1))
            t_obs = studentized(zbar, sd, n, tol)
            statistic = t_obs
            if plan.method == "t":
                p = _t_pvalue(t_obs, n, plan.alternative)
            else:
                s1b, s2b = r[1:1 + B], r[1 + B:]
                nstar = s2.ints.astype(np.float64)
                with np.errstate(divide="ignore", invalid="ignore"):
                    mean_star = s1b / nstar
                    var_num = s2b - s1b * mean_star
                    sd_star = np.sqrt(np.maximum(var_num, 0.0) / (nstar - 1))
                    t_star = mean_star / (sd_star / np.sqrt(nstar))
                    degenerate = (var_num <= 64 * _EPS * s2b) | (sd_star <= tol) | (nstar < 2)
                    t_star = np.where(degenerate, np.copysign(np.inf, mean_star), t_star)
                    t_star = np.where((np.abs(mean_star) <= tol) | (nstar == 0), 0.0, t_star)
                p = _count_extreme(t_star, t_obs, plan.alternative) / float(B)
        for name, v in zip(COMPARE_SCHEMA.names,
                           (key[0], key[1], key[2], plan.method, plan.alternative, n, zbar,
                            float(statistic), float(min(1.0, max(0.0, p))),
                            0 if plan.method == "t" else B, plan.seed)):
            rows[name].append(v)
    return pa.table(rows, schema=COMPARE_SCHEMA)


def run_compare(reduce: Callable[[Callable[[Any], Partial]], Partial], plan: ComparePlan
                ) -> pa.Table:
    """The two passes of a comparison over an engine: ``reduce(fn)`` applies ``fn`` to every part
    (query-complete) and merges the partials."""
    stage1 = reduce(lambda part: compare_stage1(part, plan))
    if not stage1:
        raise InputError("compare: no pair of systems shares a query (after the measure/systems "
                         "filters)")
    zbar = _means(stage1)
    cut = {}
    if plan.method == "sign" and plan.epsilon > 0:  # uefast.stats' tolerance, from pass 1
        from uefast.stats.parametric import REL_TOL

        cut = {k: plan.epsilon + REL_TOL * max(1.0, float(v.maxes[1]))
               for k, v in stage1.items()}
    stage2 = reduce(lambda part: compare_stage2(part, plan, zbar, cut))
    return finish_compare(plan, stage1, stage2)
