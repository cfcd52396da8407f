"""Markdown of the ``reproduce`` report and the exact-vs-paper difference tables."""
from __future__ import annotations

from typing import Any, Sequence

import polars as pl
import pyarrow as pa

__all__ = ["differences", "render"]

_KEYS = {
    "power": ["k", "family", "query_set", "metric", "test", "alpha"],
    "tau": ["k", "family", "query_set", "metric_a", "metric_b"],
    "conflicts": ["k", "family", "query_set", "metric_a", "metric_b"],
    "swap": ["k", "family", "query_set", "metric", "method"],
    "pad": ["k", "family", "query_set", "metric"],
    "split_consistency": ["k", "family", "metric"],
}
_VALUES = {
    "power": ["count", "n_queries"],
    "tau": ["tau_a", "tau_b", "tau_ap"],
    "conflicts": ["conflicts", "kappa", "n_pairs"],
    "swap": ["swap_rate", "difference_required"],
    "pad": ["mean_pad"],
    "split_consistency": ["swap", "tau_b"],
}
SETS = ("all", "uninformative", "ideal", "broad", "focused")


def differences(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """``diff_<name>``: each statistic under exact and paper REB side by side, with ``delta_*``
    = paper - exact (data_schemas/meta_report.md)."""
    out = {}
    for name, keys in _KEYS.items():
        if name not in tables or tables[name].num_rows == 0:
            continue
        df = pl.from_arrow(tables[name])
        vals = _VALUES[name]
        if name == "split_consistency":  # mean over replicates first
            df = df.group_by(["reb_mode", *keys], maintain_order=True).agg([pl.col(v).mean() for v in vals])
        ex = df.filter(pl.col("reb_mode") == "exact").select([*keys, *vals])
        pa_ = df.filter(pl.col("reb_mode") == "paper").select([*keys, *vals])
        j = ex.join(pa_, on=keys, how="inner", suffix="_paper", nulls_equal=True)
        j = j.rename({v: f"{v}_exact" for v in vals})
        j = j.with_columns([(pl.col(f"{v}_paper") - pl.col(f"{v}_exact")).alias(f"delta_{v}") for v in vals])
        t = j.to_arrow()
        out[f"diff_{name}"] = t.cast(pa.schema(
            [pa.field(f.name, pa.string() if pa.types.is_large_string(f.type) else f.type) for f in t.schema]))
    return out


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != v:
            return "nan"
        return f"{v:.{digits}f}"
    return str(v)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 3) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v, digits) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _df(tables: dict[str, pa.Table], name: str) -> pl.DataFrame:
    t = tables.get(name)
    return pl.from_arrow(t) if t is not None and t.num_rows else pl.DataFrame()


def _headline(tables: dict[str, pa.Table], s: dict) -> list[str]:
    alpha = s["alpha"]
    out = []
    reb = _df(tables, "reb_compare")
    for m in reb["measure"].unique(maintain_order=True).to_list():
        d = reb.filter((pl.col("measure") == m) & (pl.col("reb_exact") > 0))
        if d.height:
            differ = d.filter((pl.col("reb_paper") - pl.col("reb_exact")).abs() > 1e-9).height
            out.append(f"REB of `{m}`: paper/exact - 1 has mean {d['rel_diff'].mean():+.1%} "
                       f"(median {d['rel_diff'].median():+.1%}); the formulas differ on {differ} of {d.height} "
                       "queries with REB > 0.")
    dp = _df(tables, "diff_power")
    if dp.height:
        dpa = dp.filter(pl.col("alpha") == alpha)
        ch = dpa.filter(pl.col("delta_count") != 0)
        out.append(f"Discriminative power (p < {alpha}) changes with exact REB in {ch.height} of {dpa.height} "
                   f"(k, query set, metric) cells; largest change {_fmt(float(ch['delta_count'].abs().max() or 0), 0)} pairs."
                   if ch.height else f"Discriminative power (p < {alpha}) is identical under both REBs in all {dpa.height} cells.")
    dt = _df(tables, "diff_tau")
    if dt.height:
        # tau-b is NaN where every system ties (no ranking): such cells neither move nor count
        d = dt.filter(pl.col("delta_tau_b").is_not_nan() & pl.col("delta_tau_b").is_not_null())
        big = d.filter(pl.col("delta_tau_b").abs() >= 0.05)
        undefined = f"; {dt.height - d.height} cells undefined (all systems tied)" if d.height < dt.height else ""
        out.append(f"Kendall tau-b between metric rankings moves by >= 0.05 in {big.height} of {d.height} cells "
                   f"(max |delta| {_fmt(float(d['delta_tau_b'].abs().max() or 0))}{undefined}).")
    dc = _df(tables, "diff_conflicts")
    if dc.height:
        ch = dc.filter(pl.col("delta_conflicts") != 0)
        out.append(f"Conflict counts change in {ch.height} of {dc.height} cells.")
    ds = _df(tables, "diff_split_consistency")
    if ds.height:
        out.append(f"Left/right split swap rates: mean |delta| {_fmt(float(ds['delta_swap'].abs().mean()))} "
                   f"(max {_fmt(float(ds['delta_swap'].abs().max()))}).")
    return [f"- {line}" for line in out]


def render(tables: dict[str, pa.Table], s: dict, title: str) -> str:
    """The Markdown report (k = ``s["k_ref"]`` in detail; every k in the Parquet/CSV tables)."""
    k, alpha = s["k_ref"], s["alpha"]
    top = s["top_n"] or f"{s['top_frac']:.0%}"
    md = [f"# {title}\n",
          f"Input: {s['input']}; {s['n_queries']} queries; systems: {', '.join(map(str, s['systems']))}.  ",
          f"Protocol of Santu & Feng (arXiv 2209.05007): cutoffs {s['ks']}, test `{s['test']}` (p < {alpha}), "
          f"uninformative/ideal = top {top} of non-degenerate queries by "
          f"|mean − REB|, {s['n_splits']} left/right document splits, V&B swap {s['swap_trials']} trials, "
          f"bootstrap swap {s['bootstrap_swap']} trials, seed {s['seed']}. {s['broad_focused']}. "
          f"Runtime {s['seconds']} s.\n",
          "Metrics: nDCG@k uses the paper's exponential gain 2^l − 1; MAP@k is the paper's AP@k = SP@k/k; "
          "DCG-UE and MSP-UE are UE V1/V2 of those (V1 = (A/IUB)·(A/(A+REB)), V2 = (A−REB)/(IUB−REB) or "
          "(A−REB)/REB). Every statistic is computed with the exact REB and with the paper's REB formulas; "
          "all tables for all k are in `tables/`.\n",
          "## Exact vs paper REB: what changes\n", *_headline(tables, s), "",
          "![expected values](figures/fig2_3_expected_hist.png)\n",
          "![actual vs expected](figures/fig1_actual_vs_expected.png)\n"]
    parts = _df(tables, "partitions")
    if parts.height:
        types = ["informative", "uninformative-hard", "uninformative-easy", "ideal", "degenerate"]
        c = parts.filter(pl.col("measure").str.ends_with(f"@{k}"))
        rows = [[r, m, *[c.filter((pl.col("reb_mode") == r) & (pl.col("measure") == m)
                                  & (pl.col("query_type") == t)).height for t in types]]
                for r in ("exact", "paper") for m in c["measure"].unique(maintain_order=True).to_list()]
        md += [f"## Query types at k={k} (queries per type; all k in `tables/partitions.*`)\n",
               "degenerate = IUB <= REB: no ordering beats the baseline (no relevant document; with the "
               "paper's DCG formula also short lists where its REB exceeds IUB).\n",
               _table(["REB", "measure", *types], rows)]
    means = _df(tables, "means")
    if means.height:
        m = means.filter((pl.col("k") == k) & (pl.col("query_set") == "all"))
        names = m["metric"].unique(maintain_order=True).to_list()
        cols = [(n, r) for n in names for r in (("exact",) if "UE" not in n else ("exact", "paper"))]
        rows = []
        for sys_ in s["systems"]:
            row = [sys_]
            for n, r in cols:
                v = m.filter((pl.col("system") == str(sys_)) & (pl.col("metric") == n) & (pl.col("reb_mode") == r))["mean"]
                row.append(float(v[0]) if v.len() else None)
            rows.append(row)
        md += [f"## System means at k={k} (all queries)\n",
               _table(["system", *[n if "UE" not in n else f"{n} ({r})" for n, r in cols]], rows)]
    tau = _df(tables, "tau")
    if tau.height:
        rows = []
        for (kk, a, b), g in tau.group_by(["k", "metric_a", "metric_b"], maintain_order=True):
            row = [kk, f"{a} vs {b}"]
            for qs in ("all", "uninformative", "ideal"):
                for r in ("exact", "paper"):
                    v = g.filter((pl.col("query_set") == qs) & (pl.col("reb_mode") == r))["tau_b"]
                    row.append(float(v[0]) if v.len() else None)
            rows.append(row)
        md += ["## Kendall's tau-b between metric-induced system rankings\n",
               "(tau-a and tau_AP in `tables/tau.*`.)\n",
               _table(["k", "rankings", *[f"{q} ({r})" for q in ("all", "uninf.", "ideal") for r in ("exact", "paper")]], rows)]
    conf = _df(tables, "conflicts")
    if conf.height:
        c = conf.filter(pl.col("k") == k)
        rows = []
        for (a, b), g in c.group_by(["metric_a", "metric_b"], maintain_order=True):
            row = [f"{a} vs {b}"]
            for qs in ("all", "uninformative", "ideal"):
                for r in ("exact", "paper"):
                    v = g.filter((pl.col("query_set") == qs) & (pl.col("reb_mode") == r))
                    row.append(f"{v['conflicts'][0]}/{v['n_pairs'][0]} (κ {v['kappa'][0]:.2f})" if v.height else None)
            rows.append(row)
        md += [f"## Conflicts at k={k}: pairs significant under one metric only (or in opposite directions)\n",
               _table(["metrics", *[f"{q} ({r})" for q in ("all", "uninf.", "ideal") for r in ("exact", "paper")]], rows)]
    pw = _df(tables, "power")
    if pw.height:
        p = pw.filter((pl.col("alpha") == alpha) & (pl.col("query_set") == "all"))
        ks = sorted(p["k"].unique().to_list())
        rows = []
        for fam in ("DCG", "MSP"):
            for base in [n.split("@")[0] for n in p.filter(pl.col("family") == fam)["metric"].unique(maintain_order=True).to_list()]:
                if any(r[0] == base for r in rows):
                    continue
                row = [base]
                for kk in ks:
                    e = p.filter((pl.col("metric") == f"{base}@{kk}") & (pl.col("reb_mode") == "exact"))
                    q = p.filter((pl.col("metric") == f"{base}@{kk}") & (pl.col("reb_mode") == "paper"))
                    row.append(f"{e['count'][0]} / {q['count'][0]}" if e.height and q.height else None)
                rows.append(row)
        n_pairs = int(p["n_pairs"][0])
        md += [f"## Discriminative power: significant pairs (of {n_pairs}), all queries, exact / paper REB\n",
               _table(["metric", *[f"k={kk}" for kk in ks]], rows),
               f"![ASL curves exact](figures/asl_k{k}_exact.png) ![ASL curves paper](figures/asl_k{k}_paper.png)\n"]
        ps = pw.filter((pl.col("alpha") == alpha) & (pl.col("k") == k))
        rows = []
        for met in ps["metric"].unique(maintain_order=True).to_list():
            row = [met]
            for qs in SETS:
                for r in ("exact", "paper"):
                    v = ps.filter((pl.col("metric") == met) & (pl.col("query_set") == qs) & (pl.col("reb_mode") == r))
                    row.append(f"{v['count'][0]} ({v['n_queries'][0]}q)" if v.height else None)
            rows.append(row)
        md += [f"### By query set at k={k}\n",
               _table(["metric", *[f"{q} ({r})" for q in SETS for r in ("ex", "pap")]], rows)]
    pad = _df(tables, "pad")
    if pad.height:
        c = pad.filter(pl.col("k") == k)
        rows = [[met, *[_one(c, met, qs, r, "mean_pad") for qs in SETS for r in ("exact", "paper")]]
                for met in c["metric"].unique(maintain_order=True).to_list()]
        md += [f"## PAD at k={k}: mean percentage absolute difference over system pairs\n",
               _table(["metric", *[f"{q} ({r})" for q in SETS for r in ("ex", "pap")]], rows, 1)]
    sw = _df(tables, "swap")
    if sw.height:
        c = sw.filter((pl.col("k") == k) & (pl.col("method") == "voorhees-buckley"))
        rows = [[met, *[_one(c, met, qs, r, "swap_rate") for qs in SETS for r in ("exact", "paper")]]
                for met in c["metric"].unique(maintain_order=True).to_list()]
        md += [f"## Swap rates at k={k} (Voorhees–Buckley, disjoint halves, pooled over bins)\n",
               _table(["metric", *[f"{q} ({r})" for q in SETS for r in ("ex", "pap")]], rows)]
        b = sw.filter((pl.col("k") == k) & (pl.col("method") == "bootstrap"))
        if b.height:
            rows = [[met, *[_one(b, met, "all", r, c_) for r in ("exact", "paper") for c_ in ("swap_rate", "difference_required")]]
                    for met in b["metric"].unique(maintain_order=True).to_list()]
            md += ["### Sakai's bootstrap swap (all queries)\n",
                   _table(["metric", "swap (exact)", "diff. required (exact)", "swap (paper)", "diff. required (paper)"], rows)]
    spl = _df(tables, "diff_split_consistency")
    if spl.height:
        c = spl.filter(pl.col("k") == k)
        md += [f"## Consistency across left/right document splits at k={k} (mean over replicates)\n",
               _table(["metric", "swap (exact)", "swap (paper)", "tau-b (exact)", "tau-b (paper)"],
                      c.select(["metric", "swap_exact", "swap_paper", "tau_b_exact", "tau_b_paper"]).rows())]
    return "\n".join(md)


def _one(df: pl.DataFrame, metric: str, qs: str, reb: str, col: str) -> Any:
    v = df.filter((pl.col("metric") == metric) & (pl.col("query_set") == qs) & (pl.col("reb_mode") == reb))[col]
    return float(v[0]) if v.len() and v[0] is not None else None
