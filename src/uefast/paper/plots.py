"""The figures of a paper: interpolated precision-recall curves, per-topic differences against a
baseline, system means with confidence intervals, ASL curves of several measures.

Each ``plot_*`` function returns a matplotlib ``Figure`` and, given ``path``, writes it (PNG at
``dpi`` >= 150, default 200; SVG or PDF by the suffix) and closes it in pyplot. The numbers are uefast's own:
:func:`pr_curves` is trec_eval's ``iprec_at_recall`` (via :func:`uefast.trec_eval.evaluate_trec`),
means and intervals are :func:`uefast.report`'s, p-values :func:`uefast.stats.all_pairs`'.
matplotlib is optional (``pip install "uefast[report]"``); :func:`require_matplotlib` says so in
one line before any work starts.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from uefast.errors import InputError

__all__ = ["require_matplotlib", "pr_curves", "plot_pr_curves", "plot_topic_differences",
           "plot_means", "plot_asl_curves", "save_figure", "FIGURE_SUFFIXES"]

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
MIN_DPI = 150
RECALL_LEVELS = tuple(round(0.1 * i, 1) for i in range(11))


def require_matplotlib():
    """``matplotlib.pyplot`` (on the Agg backend unless the caller imported pyplot already), or
    an :class:`InputError` of one line naming the extra to install. Call it first: before any evaluation is spent on a figure that cannot be
    drawn."""
    import sys

    try:
        import matplotlib
    except ImportError:
        raise InputError('plots need matplotlib: pip install "uefast[report]"') from None
    if "matplotlib.pyplot" not in sys.modules:  # the caller's own pyplot keeps its backend
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _check_path(path, dpi):
    if path is None:
        return None
    p = Path(path)
    if p.suffix.lower() not in FIGURE_SUFFIXES:
        raise InputError(f"figure {str(path)!r}: the suffix must be one of {list(FIGURE_SUFFIXES)}")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or dpi < MIN_DPI:
        raise InputError(f"`dpi` must be a number >= {MIN_DPI}; got {dpi!r}")
    return p


def save_figure(fig, path, dpi=200) -> Path:
    """Write ``fig`` to ``path`` (.png at ``dpi``, .svg, .pdf); returns the path."""
    p = _check_path(path, dpi)
    fig.savefig(p, dpi=dpi, bbox_inches="tight")
    return p


def _finish(fig, path, dpi):
    """Save to ``path`` if given, then release the figure from pyplot's registry (a script
    drawing many figures is not warned about open figures); the Figure stays usable."""
    if path is not None:
        save_figure(fig, path, dpi)
        require_matplotlib().close(fig)
    return fig


def pr_curves(runs, qrels, *, names=None, relevance_level=1, version="10.0") -> pa.Table:
    """Interpolated precision at the 11 standard recall levels, averaged over topics, per run.

    ``P_interp(r) = max_{r' >= r} P(r')`` per topic, then the mean over the run's topics: trec_eval's
    ``iprec_at_recall`` (its summary values, computed by :func:`uefast.trec_eval.evaluate_trec`
    with the rules of trec_eval ``version``: the recall level r of a topic with R relevant
    documents is reached at ``lround(r·R)`` relevant documents in 10.0, ``(long)(r·R + 0.9)`` in
    9.0.8, whose values pytrec_eval gives). ``runs`` are TREC run file paths (or one-system run tables);
    ``names`` default to each run's runid. Returns ``system, recall, precision`` (long form).
    """
    from uefast.trec_eval.evaluator import evaluate_trec, evaluate_trec_files

    runs = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    if not runs:
        raise InputError("pr_curves needs at least one run")
    if names is not None and len(names) != len(runs):
        raise InputError(f"`names`: {len(runs)} runs but {len(names)} names")
    measures = ["iprec_at_recall"]
    kw = dict(relevance_level=relevance_level, version=version)
    if all(isinstance(r, (str, os.PathLike)) for r in runs):
        results = evaluate_trec_files(qrels, runs, measures, **kw)
    else:
        results = [evaluate_trec(r, qrels, measures, **kw) for r in runs]
    system, recall, precision = [], [], []
    for i, res in enumerate(results):
        slots = [s for s in res.slots if s.name.startswith("iprec_at_recall_")]
        for s in slots:
            system.append(names[i] if names is not None else res.runid)
            recall.append(float(s.name.rsplit("_", 1)[1]))
            precision.append(float(s.summary))
    return pa.table({"system": pa.array(system, pa.string()),
                     "recall": pa.array(recall, pa.float64()),
                     "precision": pa.array(precision, pa.float64())})


def plot_pr_curves(runs, qrels, path=None, *, names=None, relevance_level=1, dpi=200, title=None):
    """Interpolated precision-recall curves (:func:`pr_curves`), one line per run."""
    plt = require_matplotlib()
    _check_path(path, dpi)
    t = pr_curves(runs, qrels, names=names, relevance_level=relevance_level)
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    systems = list(dict.fromkeys(t["system"].to_pylist()))
    sys_col = np.array(t["system"].to_pylist(), dtype=object)
    rec, prec = np.asarray(t["recall"]), np.asarray(t["precision"])
    for k, s in enumerate(systems):
        sel = sys_col == s
        ax.plot(rec[sel], prec[sel], marker="os^vD<>ph*"[k % 10], ms=4, lw=1.3, label=s)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(1e-9, float(prec.max(initial=0))) * 1.05)
    ax.grid(alpha=0.3)
    ax.set_title(title or "Interpolated precision-recall (mean over topics)", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return _finish(fig, path, dpi)


def _matrix(results, measure, column, missing, systems):
    from uefast.stats import topic_system_matrix

    return topic_system_matrix(results, measure, column=column, missing=missing, systems=systems)


def plot_topic_differences(results, measure, baseline, system, path=None, *, column="value",
                           missing="intersect", dpi=200, title=None):
    """Per-topic differences ``x_system(q) - x_baseline(q)`` as bars, sorted from the largest
    gain to the largest loss; the title counts wins / ties / losses and gives the mean
    difference. ``results`` is the per-query table of :func:`uefast.evaluate`."""
    plt = require_matplotlib()
    _check_path(path, dpi)
    tsm = _matrix(results, measure, column, missing, [baseline, system])
    d = tsm.matrix[:, 1] - tsm.matrix[:, 0]
    order = np.argsort(-d, kind="stable")
    d = d[order]
    fig, ax = plt.subplots(figsize=(max(5.0, min(12.0, 0.08 * d.size + 3)), 3.6))
    colours = np.where(d > 0, "tab:blue", np.where(d < 0, "tab:red", "grey"))
    ax.bar(np.arange(d.size), d, width=0.85, color=colours)
    ax.axhline(0, color="black", lw=0.7)
    ax.set_xlim(-0.6, d.size - 0.4)
    ax.set_xticks([])
    ax.set_xlabel(f"topics ({d.size}), sorted by difference")
    label = measure if column == "value" else f"{measure} {column}"
    ax.set_ylabel(f"Δ {label}")
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    ax.set_title(title or f"{system} − {baseline}: {wins} better, {d.size - wins - losses} tied, "
                          f"{losses} worse; mean Δ = {d.mean():+.4f}", fontsize=9)
    fig.tight_layout()
    return _finish(fig, path, dpi)


def plot_means(results, measures=None, path=None, *, column="value", confidence_level=0.95,
               systems=None, missing="intersect", dpi=200, title=None):
    """System means with their Student-t confidence intervals, one panel per measure (the
    numbers of :func:`uefast.report`)."""
    plt = require_matplotlib()
    _check_path(path, dpi)
    from uefast.paper.table import report

    rep = report(results, measures=measures, columns=[column], systems=systems, missing=missing,
                 confidence_level=confidence_level, correction="none")
    keys = rep.keys
    fig, axes = plt.subplots(1, len(keys), figsize=(0.45 * len(rep.systems) * len(keys) + 2.5
                                                    * len(keys), 3.8), squeeze=False)
    y = np.arange(len(rep.systems))
    for ax, key in zip(axes[0], keys):
        cells = [rep.cells[(s, key)] for s in rep.systems]
        m = np.array([c.mean for c in cells])
        lo = m - np.array([c.ci_low for c in cells])
        hi = np.array([c.ci_high for c in cells]) - m
        ax.errorbar(m, y, xerr=[lo, hi], fmt="o", ms=4, capsize=3, lw=1.1)
        ax.set_yticks(y)
        ax.set_yticklabels(rep.systems if ax is axes[0][0] else [""] * len(y), fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(rep.header(key))
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title or f"Means over {cells[0].n_topics} topics with "
                          f"{100 * confidence_level:.12g}% confidence intervals", fontsize=9)
    fig.tight_layout()
    return _finish(fig, path, dpi)


def plot_asl_curves(results, measures=None, path=None, *, column="value", method="bootstrap",
                    alpha=0.05, n_resamples=1000, seed=0, missing="intersect", dpi=200,
                    title=None):
    """ASL curves (Sakai 2006): for each measure the p-values of every system pair
    (:func:`uefast.stats.all_pairs`, ``method``, uncorrected as in Sakai's discriminative
    power), sorted ascending, against the pair's rank; a horizontal line at ``alpha``. The legend
    gives each measure's discriminative power (share of pairs with p < alpha)."""
    plt = require_matplotlib()
    _check_path(path, dpi)
    from uefast.paper.table import _long_table, _measure_order
    from uefast.stats import all_pairs

    table = _long_table(results, None, None, {})
    names = _measure_order(table, measures)
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    kw = dict(n_resamples=n_resamples, seed=seed) if method in ("bootstrap", "randomization",
                                                               "tukey_hsd") else {}
    for k, m in enumerate(names):
        tsm = _matrix(table, m, column, missing, None)
        p = np.sort(all_pairs(tsm.matrix, method, systems=[str(s) for s in tsm.systems],
                              **kw)["pvalue"].to_numpy())
        power = float((p < alpha).mean())
        ax.plot(np.arange(1, p.size + 1), p, ["-", "--", ":", "-."][k % 4], lw=1.5,
                label=f"{m} ({100 * power:.0f}% < {alpha:g})")
    ax.axhline(alpha, color="grey", lw=0.8)
    ax.set_xlabel("system pair, sorted by p-value")
    ax.set_ylabel("ASL (p-value)")
    ax.set_ylim(0, None)
    ax.grid(alpha=0.3)
    ax.set_title(title or f"ASL curves ({method})", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _finish(fig, path, dpi)
