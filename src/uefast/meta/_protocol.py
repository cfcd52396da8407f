"""The computations of Santu & Feng's meta-evaluation protocol on evaluated long tables.

Internal to :mod:`uefast.meta.report`. Input: the long table of :func:`uefast.evaluate` for the
protocol's measures and one REB mode; output: Arrow tables (data_schemas/meta_report.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.meta.correlation import kendall_tau, ranking_swap_rate
from uefast.meta.pad import pad
from uefast.meta.partitions import query_types, uninformative_ideal_queries
from uefast.meta.power import conflict_counts, discriminative_power
from uefast.meta.swap import swap_rate

__all__ = ["Metric", "protocol_metrics", "Rows", "matrix_for", "analyse_query_set"]


@dataclass(frozen=True)
class Metric:
    """One metric of the protocol: a column of one measure of the evaluate table."""

    name: str  # e.g. "DCG-UE-V1@10"
    family: str  # "DCG" or "MSP"
    k: int
    measure: str  # the uefast measure string
    column: str  # value | ue_v1 | ue_v2
    original: bool


def protocol_metrics(ks: Sequence[int]) -> list[Metric]:
    """nDCG@k (exponential gain, as in the paper), DCG-UE V1/V2, the paper's MAP@k (AP@k =
    SP@k/k) and MSP-UE V1/V2, for each cutoff k."""
    out = []
    for k in ks:
        nd, ap = f"nDCG(gain=exp)@{k}", f"AP(norm=k)@{k}"
        out += [
            Metric(f"nDCG@{k}", "DCG", k, nd, "value", True),
            Metric(f"DCG-UE-V1@{k}", "DCG", k, nd, "ue_v1", False),
            Metric(f"DCG-UE-V2@{k}", "DCG", k, nd, "ue_v2", False),
            Metric(f"MAP@{k}", "MSP", k, ap, "value", True),
            Metric(f"MSP-UE-V1@{k}", "MSP", k, ap, "ue_v1", False),
            Metric(f"MSP-UE-V2@{k}", "MSP", k, ap, "ue_v2", False),
        ]
    return out


class Rows:
    """Column-wise accumulator for a result table."""

    def __init__(self) -> None:
        self.cols: dict[str, list] = {}

    def add(self, **row: Any) -> None:
        n = len(next(iter(self.cols.values()))) if self.cols else 0
        for k in row:
            self.cols.setdefault(k, [None] * n)
        for k, col in self.cols.items():
            col.append(row.get(k))

    def table(self) -> pa.Table:
        return pa.table(self.cols) if self.cols else pa.table({})


def matrix_for(by_measure: dict[str, pa.Table], metric: Metric, qids: Sequence[Any] | None,
               systems: Sequence[str]) -> np.ndarray:
    """topics x systems matrix of ``metric`` restricted to ``qids`` (all when None)."""
    t = by_measure[metric.measure]
    if qids is not None:
        t = t.filter(pc.is_in(t["qid"], value_set=pa.array(list(qids), t["qid"].type)))
    qs = list(dict.fromkeys(t["qid"].to_pylist()))
    qi = {q: i for i, q in enumerate(qs)}
    si = {s: j for j, s in enumerate(systems)}
    x = np.full((len(qs), len(systems)), np.nan)
    vals = t[metric.column].to_numpy(zero_copy_only=False).astype(np.float64)
    for s, q, v in zip(t["system"].to_pylist(), t["qid"].to_pylist(), vals):
        if s in si:
            x[qi[q], si[s]] = v
    return x[~np.isnan(x).any(axis=1)]


def split_by_measure(table: pa.Table) -> dict[str, pa.Table]:
    return {m: table.filter(pc.equal(table["measure"], m)) for m in pc.unique(table["measure"]).to_pylist()}


def query_sets(by_measure: dict[str, pa.Table], metrics: Sequence[Metric], top_frac: float,
               top_n: int | None, labels_groups: pa.Table | None) -> tuple[dict, pa.Table]:
    """{(family, k, set_name): qids or None} and the per-query partition table."""
    sets: dict[tuple[str, int, str], Any] = {}
    parts = []
    for met in metrics:
        if not met.original:
            continue
        t = by_measure[met.measure]
        n = _top_n(t, top_frac, top_n)
        if n < 1:
            raise InputError(
                f"{met.measure}: fewer than 2 queries where IUB > REB (queries on which a ranking "
                f"can beat a random one): no uninformative / ideal query sets can be formed. The "
                f"judged pools are small for this cutoff (with the paper's REB, REB can reach IUB); "
                f"use smaller cutoffs (--k) or more judged documents per query")
        u = uninformative_ideal_queries(t, top_n=n)
        ty = query_types(t)
        part = u.append_column("query_type", ty["query_type"])
        part = part.add_column(0, "measure", pa.array([met.measure] * part.num_rows, pa.string()))
        parts.append(part)
        labels = np.asarray(u["query_set"].to_pylist(), dtype=object)
        qid = u["qid"].to_pylist()
        sets[(met.family, met.k, "all")] = None
        for name in ("uninformative", "ideal"):
            sets[(met.family, met.k, name)] = [q for q, s in zip(qid, labels) if s == name]
        if labels_groups is not None:
            g = labels_groups["group"].to_pylist()
            gq = labels_groups["qid"].to_pylist()
            for name in ("broad", "focused"):
                sets[(met.family, met.k, name)] = [q for q, s in zip(gq, g) if s == name]
    return sets, pa.concat_tables(parts)


def _top_n(t: pa.Table, frac: float, top_n: int | None) -> int:
    iub, reb = t["iub"].to_numpy(), t["reb"].to_numpy()
    usable = len(set(q for q, a, b in zip(t["qid"].to_pylist(), iub, reb) if a - b > 1e-12 * max(1.0, abs(a))))
    if top_n is not None and int(top_n) > usable // 2:
        raise InputError(f"`top_n` {top_n} is more than half of the {usable} queries where IUB > REB "
                         f"(the uninformative and ideal sets take {top_n} each); use --top-n <= "
                         f"{usable // 2} or --top-frac")
    n = max(1, int(round(frac * usable))) if top_n is None else int(top_n)
    return min(n, usable // 2)


def analyse_query_set(
    x: dict[str, np.ndarray], fam: Sequence[Metric], systems: Sequence[str], key: dict[str, Any],
    out: dict[str, Rows], *, test: str, alpha: float, n_resamples: int | None, seed: int,
    pvalue_fn: Callable | None, swap_trials: int, bootstrap_swap: int,
) -> dict[str, Any]:
    """All per-query-set statistics of one metric family (original + V1 + V2) at one k; returns
    the :class:`~uefast.meta.power.DiscriminativePower` of each metric."""
    powers = {}
    for met in fam:
        mat = x[met.name]
        n = mat.shape[0]
        means = mat.mean(axis=0) if n else np.full(len(systems), np.nan)
        for s, v in zip(systems, means):
            out["means"].add(**key, metric=met.name, system=s, n_queries=n, mean=float(v))
        if n < 2:
            continue
        dp = discriminative_power(mat, method=test, alpha=alpha, n_resamples=n_resamples, seed=seed,
                                  pvalue_fn=pvalue_fn, systems=systems)
        powers[met.name] = dp
        for a in sorted({alpha, 0.05, 0.01}):
            c = dp.count_at(a)
            out["power"].add(**key, metric=met.name, test=dp.method, alpha=a, n_queries=n,
                             n_pairs=dp.n_pairs, count=c, fraction=c / dp.n_pairs)
        i, j = np.triu_indices(len(systems), 1)
        p = np.atleast_1d(pad(means[i], means[j]))
        out["pad"].add(**key, metric=met.name, n_queries=n, mean_pad=float(p.mean()),
                       median_pad=float(np.median(p)), max_pad=float(p.max()))
        for meth, trials in (("voorhees-buckley", swap_trials), ("bootstrap", bootstrap_swap)):
            if trials <= 0 or (meth == "voorhees-buckley" and n < 4):
                continue
            sw = swap_rate(mat, method=meth, n_trials=trials, seed=seed)
            out["swap"].add(**key, metric=met.name, method=meth, n_queries=n, subset_size=sw.subset_size,
                            n_trials=sw.n_trials, swap_rate=sw.swap_rate,
                            difference_required=sw.difference_required)
    names = [m.name for m in fam]
    for a_i in range(len(names)):
        for b_i in range(a_i + 1, len(names)):
            a, b = names[a_i], names[b_i]
            if a not in powers or b not in powers:
                continue
            ma, mb = x[a].mean(axis=0), x[b].mean(axis=0)
            try:
                tap = kendall_tau(mb, ma, "ap")
            except ValueError:  # ties in a ranking: tau_AP undefined
                tap = float("nan")
            out["tau"].add(**key, metric_a=a, metric_b=b, tau_a=kendall_tau(ma, mb, "a"),
                           tau_b=kendall_tau(ma, mb, "b"), tau_ap=tap,
                           swap=ranking_swap_rate(ma, mb))
            cc = conflict_counts(powers[a], powers[b])
            out["conflicts"].add(**key, metric_a=a, metric_b=b, **cc)
    return powers
