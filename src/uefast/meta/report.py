"""``uefast reproduce``: Santu & Feng's meta-evaluation experiment (arXiv 2209.05007) on any data.

:func:`reproduce` evaluates several systems with the protocol's metrics, computes every table
twice (exact REB and the paper's REB formulas) and writes a report folder::

    OUT/report.md                 the Markdown report (tables at k = 10, differences called out)
    OUT/tables/<name>.parquet     every table, also as OUT/tables/<name>.csv
    OUT/figures/*.png             Fig. 1 (actual vs expected), Fig. 2-3 (REB histograms), ASL curves

Schemas: data_schemas/meta_report.md.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from uefast.errors import InputError
from uefast.meta import _protocol as proto
from uefast.meta.correlation import kendall_tau, ranking_swap_rate
from uefast.meta.partitions import apply_document_split, broad_focused_queries, random_document_splits
from uefast.meta.power import asl_curves
from uefast.stats._validation import check_n_resamples, check_seed

__all__ = ["reproduce", "ReproduceResult", "REB_MODES"]

REB_MODES = ("exact", "paper")
_NON_SCORE = {"qid", "docid", "label", "system", "score"}


@dataclass
class ReproduceResult:
    """What :func:`reproduce` wrote: the folder, the Markdown path and every table."""

    out_dir: Path
    report: Path
    tables: dict[str, pa.Table] = field(default_factory=dict)


@dataclass
class _Input:
    kind: str  # "letor" | "trec"
    data: pa.Table  # LETOR-style table, or the TREC run table (qid, docid, score, system)
    qrels: pa.Table | None
    systems: list[str]
    description: str
    ties: str = "trec_eval"


class _Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.i, self.t0, self.enabled = total, 0, time.perf_counter(), enabled

    def step(self, msg: str) -> None:
        self.i += 1
        if self.enabled:
            el = time.perf_counter() - self.t0
            print(f"[{self.i}/{self.total}] {msg} (t={el:.1f}s)", file=sys.stderr, flush=True)


def _prepare(data: Any, qrels: Any, systems: Sequence[str] | None) -> _Input:
    if data is None:
        from uefast.sample import letor_sample

        data = letor_sample()
        src = "the embedded sample (uefast.sample.letor_sample)"
    else:
        src = "the given table"
    t = data if isinstance(data, pa.Table) else pa.table(data)
    if qrels is not None:
        q = qrels if isinstance(qrels, pa.Table) else pa.table(qrels)
        for c in ("qid", "docid", "score", "system"):
            if c not in t.column_names:
                raise InputError(f"the run table needs a `{c}` column; it has {t.column_names}")
        names = list(dict.fromkeys(t["system"].to_pylist()))
        # the protocol compares systems query by query: a query some run did not answer would be
        # in a query set for the systems that did and out of the statistics (which need every
        # system): keep the queries every run answered, and say how many were left out
        per = t.group_by(["qid"], use_threads=False).aggregate([("system", "count_distinct")])
        full = per.filter(pc.equal(per["system_count_distinct"], len(names)))["qid"]
        left = per.num_rows - len(full)
        desc = f"TREC runs ({len(names)} systems) and qrels"
        if left:
            full = full.combine_chunks()
            t = t.filter(pc.is_in(t["qid"], value_set=full))
            if q.schema.field("qid").type == full.type:  # and from the qrels' query groups
                q = q.filter(pc.is_in(q["qid"], value_set=full))
            desc += f"; {left} run quer{'y' if left == 1 else 'ies'} not answered by every system left out"
        return _Input("trec", t, q, names, desc)
    for c in ("qid", "label"):
        if c not in t.column_names:
            raise InputError(f"the LETOR-style table needs a `{c}` column; it has {t.column_names}")
    if systems is None:
        systems = [f.name for f in t.schema if f.name not in _NON_SCORE
                   and pa.types.is_floating(f.type)]
    missing = [s for s in systems if s not in t.column_names]
    if missing:
        raise InputError(f"`systems` {missing} are not columns of the table {t.column_names}")
    if len(systems) < 2:
        raise InputError(f"reproduce needs at least 2 systems (score columns); got {list(systems)}")
    if "docid" not in t.column_names:  # a stable row id per query, for the document splits
        t = t.append_column("docid", pa.array([str(i) for i in range(t.num_rows)]))
    return _Input("letor", t, None, list(systems), f"a LETOR-style table from {src} ({len(systems)} systems)")


def _evaluate(inp: _Input, measures: list[str], reb: str, data: pa.Table | None = None,
              qrels: pa.Table | None = None) -> pa.Table:
    import uefast

    data = inp.data if data is None else data
    if inp.kind == "letor":
        return uefast.evaluate(data, measures=measures, ue=True, reb=reb, ties=inp.ties,
                               score_columns=inp.systems)
    return uefast.evaluate(data, inp.qrels if qrels is None else qrels, measures=measures, ue=True,
                           reb=reb, ties=inp.ties)


def _split_halves(inp: _Input, splits: pa.Table, r: int, half: str) -> tuple[pa.Table, pa.Table | None]:
    data = apply_document_split(inp.data, splits, replicate=r, half=half)
    q = None if inp.qrels is None else apply_document_split(inp.qrels, splits, replicate=r, half=half)
    return data, q


def _docs(inp: _Input) -> pa.Table:
    if inp.kind == "letor":
        return inp.data.select(["qid", "docid"])
    both = pa.concat_tables([inp.qrels.select(["qid", "docid"]),
                             inp.data.select(["qid", "docid"]).cast(inp.qrels.select(["qid", "docid"]).schema)])
    return both.group_by(["qid", "docid"], use_threads=False).aggregate([])


def _labels(inp: _Input) -> pa.Table:
    return (inp.data if inp.kind == "letor" else inp.qrels).select(["qid", "label"])


def _broad_focused(inp: _Input, seed: int) -> tuple[pa.Table, str]:
    labels = _labels(inp)
    g = broad_focused_queries(labels, min_label=2, threshold=0.5, balanced=True, seed=seed)
    if g["group"].to_pylist().count("broad") >= 5:
        return g, "broad: >= 50% of the query's documents have label >= 2 (balanced by subsampling)"
    g = broad_focused_queries(labels, min_label=1, threshold="median", balanced=True, seed=seed)
    return g, ("fewer than 5 queries have >= 50% documents with label >= 2, so broad/focused is a "
               "median split of the share of relevant (label >= 1) documents (balanced)")


def _reb_compare(ev: dict[str, pa.Table], measures: list[str]) -> pa.Table:
    rows = proto.Rows()
    for m in measures:
        tabs = {mode: ev[mode].filter(pc.equal(ev[mode]["measure"], m)) for mode in REB_MODES}
        first = {}
        for mode, t in tabs.items():
            first[mode] = {}
            for q, iub, reb, nj in zip(t["qid"].to_pylist(), t["iub"].to_pylist(), t["reb"].to_pylist(),
                                       t["n_judged"].to_pylist()):
                first[mode].setdefault(q, (iub, reb, nj))
        for q, (iub, reb_e, nj) in first["exact"].items():
            reb_p = first["paper"][q][1]
            rows.add(measure=m, qid=str(q), n_judged=nj, iub=iub, reb_exact=reb_e, reb_paper=reb_p,
                     rel_diff=(reb_p - reb_e) / reb_e if reb_e > 0 else 0.0)
    return rows.table()


def _split_consistency(inp: _Input, metrics: list[proto.Metric], measures: list[str], n_splits: int,
                       seed: int, prog: _Progress) -> pa.Table:
    rows = proto.Rows()
    splits = random_document_splits(_docs(inp), n_replicates=n_splits, seed=seed)
    for r in range(n_splits):
        halves = {h: _split_halves(inp, splits, r, h) for h in ("left", "right")}
        for reb in REB_MODES:
            means = {}
            for h, (d, q) in halves.items():
                by = proto.split_by_measure(_evaluate(inp, measures, reb, d, q))
                means[h] = {m.name: proto.matrix_for(by, m, None, inp.systems).mean(axis=0) for m in metrics}
            for m in metrics:
                a, b = means["left"][m.name], means["right"][m.name]
                rows.add(reb_mode=reb, k=m.k, family=m.family, metric=m.name, replicate=r,
                         swap=ranking_swap_rate(a, b), tau_b=kendall_tau(a, b, "b"))
        prog.step(f"left/right document split, replicate {r + 1}/{n_splits}")
    return rows.table()


def _write(tables: dict[str, pa.Table], folder: Path, formats: Sequence[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, t in tables.items():
        if "parquet" in formats:
            pq.write_table(t, folder / f"{name}.parquet", compression="zstd")
        if "csv" in formats:
            pacsv.write_csv(t, folder / f"{name}.csv")


def reproduce(
    data: Any = None,
    *,
    qrels: Any = None,
    systems: Sequence[str] | None = None,
    out_dir: str | Path = "uefast_reproduce",
    ks: Sequence[int] = (5, 10, 15, 20, 30),
    test: str = "t",
    alpha: float = 0.05,
    n_resamples: int | None = None,
    top_frac: float = 0.2,
    top_n: int | None = None,
    n_splits: int = 5,
    swap_trials: int = 50,
    bootstrap_swap: int = 200,
    seed: int = 0,
    progress: bool = True,
    title: str | None = None,
    pvalue_fn: Callable[[np.ndarray, np.ndarray], float] | None = None,
    ties: str = "trec_eval",
    formats: Sequence[str] = ("parquet", "csv"),
) -> ReproduceResult:
    """Run Santu & Feng's experiment protocol (arXiv 2209.05007, §5) and write a report.

    Input: a LETOR-style table (``qid``, ``label``, one score column per system; ``systems=``
    picks them, default every numeric column besides qid/docid/label), or a TREC run table
    (``qid, docid, score, system``) with ``qrels=`` (``qid, docid, label``), or nothing (the
    embedded sample). For each REB mode (exact, and the paper's formulas) and each k in ``ks``:

    * metrics nDCG@k (exponential gain 2^l - 1, as in the paper), DCG-UE V1/V2 (UE of nDCG@k),
      MAP@k (the paper's AP@k = SP@k/k) and MSP-UE V1/V2; V1 = (A/IUB)(A/(A+REB)),
      V2 = (A-REB)/(IUB-REB) or (A-REB)/REB (SPEC_math §4);
    * query sets: all; uninformative / ideal = the ``top_n`` (default ``top_frac`` of the
      non-degenerate queries) smallest / largest |mean over systems - REB|; broad / focused;
    * per query set: system means, discriminative power (``test``, p < ``alpha``), PAD, swap rates
      (Voorhees-Buckley with ``swap_trials`` trials; Sakai's bootstrap with ``bootstrap_swap``),
      Kendall tau-a / tau-b / tau_AP and conflicts between the original and the UE metrics;
    * left/right random document splits (``n_splits`` replicates): swap rate and tau-b between
      the system rankings on the two halves.

    ``n_splits``, ``swap_trials`` and ``bootstrap_swap`` are non-negative integers, 0 skipping
    that step; ``seed`` is an integer in [0, 2**64).

    ``ties`` is passed to :func:`uefast.evaluate`; ``formats`` picks the table files written
    (``parquet``, ``csv``). Progress goes to stderr when ``progress``. Returns the folder and all
    tables.  The figures need matplotlib (the ``report`` extra): without it
    :class:`~uefast.errors.MissingDependencyError` is raised before any work.
    """
    t0 = time.perf_counter()
    if not ks or any(int(k) < 1 for k in ks):
        raise InputError(f"`ks` must be positive cutoffs; got {list(ks)}")
    if len(set(int(k) for k in ks)) != len(ks):  # each table row is one (cutoff, ...) cell
        raise InputError(f"`ks` lists a cutoff twice; got {list(ks)}")
    if not 0.0 < top_frac <= 0.5:
        raise InputError(f"`top_frac` must be in (0, 0.5] (each of the two query sets takes that "
                         f"fraction); got {top_frac}")
    if top_n is not None and top_n < 1:
        raise InputError(f"`top_n` must be >= 1; got {top_n}")
    seed = check_seed(seed, allow_none=False)
    n_splits, swap_trials, bootstrap_swap = (
        check_n_resamples(v, name, allow_zero=True) for name, v in
        (("n_splits", n_splits), ("swap_trials", swap_trials), ("bootstrap_swap", bootstrap_swap)))
    bad = set(formats) - {"parquet", "csv"}
    if bad or not formats:
        raise InputError(f"`formats` must be a non-empty subset of {{'parquet', 'csv'}}; got {list(formats)}")
    from uefast.meta._plots import require_matplotlib

    require_matplotlib()  # before minutes of work that end in figures
    inp = _prepare(data, qrels, systems)
    inp.ties = ties
    out = Path(out_dir)
    metrics = proto.protocol_metrics([int(k) for k in ks])
    measures = list(dict.fromkeys(m.measure for m in metrics))
    n_steps = len(REB_MODES) * (1 + len(ks)) + n_splits + 2
    prog = _Progress(n_steps, progress)

    ev = {}
    for reb in REB_MODES:
        ev[reb] = _evaluate(inp, measures, reb)
        prog.step(f"evaluated {len(inp.systems)} systems x {len(measures)} measures (REB {reb})")
    groups, bf_rule = _broad_focused(inp, seed)
    rows = {name: proto.Rows() for name in ("means", "power", "pad", "swap", "tau", "conflicts")}
    parts, curves = {}, {}
    k_ref = 10 if 10 in ks else int(ks[0])
    for reb in REB_MODES:
        by = proto.split_by_measure(ev[reb])
        sets, parts[reb] = proto.query_sets(by, metrics, top_frac, top_n, groups)
        for k in ks:
            for fam in ("DCG", "MSP"):
                fam_metrics = [m for m in metrics if m.k == k and m.family == fam]
                for set_name in ("all", "uninformative", "ideal", "broad", "focused"):
                    qids = sets[(fam, k, set_name)]
                    x = {m.name: proto.matrix_for(by, m, qids, inp.systems) for m in fam_metrics}
                    key = dict(reb_mode=reb, k=int(k), family=fam, query_set=set_name)
                    powers = proto.analyse_query_set(
                        x, fam_metrics, inp.systems, key, rows, test=test, alpha=alpha,
                        n_resamples=n_resamples, seed=seed, pvalue_fn=pvalue_fn,
                        swap_trials=swap_trials, bootstrap_swap=bootstrap_swap if set_name == "all" else 0)
                    if k == k_ref and set_name == "all":
                        curves.update({(reb, n): p for n, p in powers.items()})
            prog.step(f"statistics for k={k} (REB {reb})")
    tables = {name: r.table() for name, r in rows.items()}
    tables["partitions"] = pa.concat_tables(
        [p.add_column(0, "reb_mode", pa.array([reb] * p.num_rows, pa.string()))
         .set_column(p.schema.get_field_index("qid") + 1, "qid", pc.cast(p["qid"], pa.string()))
         for reb, p in parts.items()])
    tables["reb_compare"] = _reb_compare(ev, measures)
    asl = {reb: asl_curves({n: p for (r, n), p in curves.items() if r == reb}) for reb in REB_MODES}
    tables["asl"] = pa.concat_tables(
        [t.add_column(0, "reb_mode", pa.array([r] * t.num_rows, pa.string())) for r, t in asl.items()])
    tables["broad_focused"] = groups.set_column(0, "qid", pc.cast(groups["qid"], pa.string()))
    if n_splits > 0:
        tables["split_consistency"] = _split_consistency(inp, metrics, measures, n_splits, seed, prog)
    else:
        prog.step("left/right document splits skipped")

    from uefast.meta import _markdown, _plots

    figs = out / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    nd, ap = f"nDCG(gain=exp)@{k_ref}", f"AP(norm=k)@{k_ref}"
    fig_measures = [(nd, f"nDCG@{k_ref}"), (ap, f"AP@{k_ref} (paper's SP/k)")]
    _plots.plot_expected_hist(tables["reb_compare"], fig_measures, figs / "fig2_3_expected_hist.png")
    parts_s = {r: tables["partitions"].filter(pc.equal(tables["partitions"]["reb_mode"], r)) for r in REB_MODES}
    _plots.plot_actual_vs_expected(parts_s, fig_measures, figs / "fig1_actual_vs_expected.png")
    for reb in REB_MODES:
        _plots.plot_asl_curves({n: p.asl_curve for (r, n), p in curves.items() if r == reb}, alpha,
                               figs / f"asl_k{k_ref}_{reb}.png", f"ASL curves, k={k_ref}, all queries, REB {reb}")
    tables.update(_markdown.differences(tables))
    _write(tables, out / "tables", formats)
    prog.step("tables and figures written")
    settings = dict(input=inp.description, systems=inp.systems, ks=list(ks), test=test, alpha=alpha,
                    n_resamples=n_resamples, top_frac=top_frac, top_n=top_n, n_splits=n_splits,
                    swap_trials=swap_trials, bootstrap_swap=bootstrap_swap, seed=seed,
                    broad_focused=bf_rule, k_ref=k_ref, seconds=round(time.perf_counter() - t0, 1),
                    n_queries=len(set(ev["exact"]["qid"].to_pylist())))
    md = _markdown.render(tables, settings, title or "uefast reproduce report")
    report = out / "report.md"
    report.write_text(md, encoding="utf-8")
    prog.step(f"report written to {report}")
    return ReproduceResult(out, report, tables)
