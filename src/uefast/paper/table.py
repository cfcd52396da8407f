"""``uefast.report``: the results table of a paper — systems x measures, means with confidence
intervals, significance markers after multiple-comparison correction, the best per column in bold.

The numbers come from :mod:`uefast.stats`: the topics x systems matrix of each (measure, column)
is :func:`uefast.stats.topic_system_matrix`, the tests are :func:`uefast.stats.all_pairs` (any of
its methods and corrections), so a cell's marker is exactly ``all_pairs(...)["significant"]``.
Rendering (Markdown, LaTeX, HTML, CSV) lives in :mod:`uefast.paper._render`.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.stats._validation import check_choice, check_probability

__all__ = ["report", "PaperTable", "Cell", "COLUMNS"]

COLUMNS = ("value", "ue_v1", "ue_v2", "iub", "reb")
_COLUMN_TITLES = {"value": "", "ue_v1": "UE-V1", "ue_v2": "UE-V2", "iub": "IUB", "reb": "REB"}
_METHOD_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
                 "sign": "sign test", "bootstrap": "paired bootstrap test (Sakai 2006)",
                 "randomization": "paired randomisation test",
                 "tukey_hsd": "randomised Tukey HSD (Carterette 2012)"}
_CORRECTION_NAMES = {"none": "no correction", "bonferroni": "Bonferroni correction",
                     "holm": "Holm correction", "bh": "Benjamini-Hochberg (FDR) correction"}


@dataclass(frozen=True)
class Cell:
    """One (system, column) cell: the mean over topics and its confidence interval.

    ``better_than`` / ``worse_than`` name the systems this one is significantly better / worse
    than (after correction); against a baseline they hold at most the baseline. ``n_better`` /
    ``n_worse`` count the topics on which the system beats / loses to the baseline (PyTerrier's
    ``+``/``-``; ``None`` without a baseline or for the baseline itself). ``pvalue_adjusted`` is the
    corrected p-value against the baseline (``None`` without one).
    """

    mean: float
    ci_low: float
    ci_high: float
    n_topics: int
    best: bool
    better_than: tuple = ()
    worse_than: tuple = ()
    pvalue_adjusted: float | None = None
    n_better: int | None = None
    n_worse: int | None = None


@dataclass
class PaperTable:
    """The result of :func:`report`: ``cells[(system, key)]`` for every system and column key.

    ``keys`` are ``(measure, column)`` pairs in display order; ``systems`` the row order;
    ``letters`` the superscript letter of each system (all-pairs mode); ``notes`` lines said under
    the table (missing topics, settings). Export: :meth:`to_markdown`, :meth:`to_latex`,
    :meth:`to_html`, :meth:`to_csv`, :meth:`to_arrow`, :meth:`save` (format from the suffix).
    """

    systems: list
    keys: list
    cells: dict
    baseline: str | None
    method: str
    correction: str
    alpha: float
    confidence_level: float
    letters: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    digits: int = 4
    show_ci: bool = True
    bold_best: bool = True
    percent: bool = False

    def header(self, key) -> str:
        """Column heading: the measure, with ``UE-V2`` etc. for a column other than ``value``."""
        measure, column = key
        title = _COLUMN_TITLES.get(column, column)
        return f"{measure} {title}".strip() if title else str(measure)

    def legend(self) -> str:
        """One paragraph saying what the numbers, markers and bold mean."""
        level = f"{100 * self.confidence_level:.12g}%"
        scale = " (×100)" if self.percent else ""
        parts = [f"Mean over topics{scale} ± half-width of the {level} Student-t confidence interval."
                 if self.show_ci else f"Mean over topics{scale}."]
        test = _METHOD_NAMES[self.method]
        corr = _CORRECTION_NAMES[self.correction]
        if self.method == "tukey_hsd" and self.correction == "none":
            corr = "family-wise over all pairs by construction"
        if self.baseline is not None:
            k = len(self.systems) - 1
            parts.append(f"† (‡): significantly better (worse) than {self.baseline} "
                         f"({test}, {corr} over the {k} comparison{'s' if k != 1 else ''} of "
                         f"each column, "
                         f"α = {self.alpha:g}).")
        else:
            k = len(self.systems) * (len(self.systems) - 1) // 2
            parts.append(f"Superscript letters: the systems (by letter) that a system is "
                         f"significantly better than ({test}, {corr} over the {k} "
                         f"pair{'s' if k != 1 else ''} of each column, α = {self.alpha:g}).")
        if self.bold_best:
            parts.append("Bold: the best mean of each column.")
        return " ".join(parts + list(self.notes))

    def to_arrow(self) -> pa.Table:
        """Long table, one row per (system, measure, column); schema: data_schemas/paper_table.md."""
        from uefast.paper._render import arrow_table

        return arrow_table(self)

    def to_polars(self):
        """:meth:`to_arrow` as a polars DataFrame."""
        import polars as pl

        return pl.from_arrow(self.to_arrow())

    def to_markdown(self) -> str:
        """GitHub Markdown table (``**bold**``, ``<sup>`` letters) followed by the legend."""
        from uefast.paper._render import markdown

        return markdown(self)

    def to_latex(self, caption: str | None = None, label: str | None = None) -> str:
        """A ``table`` environment with ``booktabs`` rules, ``\\textbf`` and ``$^{\\dagger}$``;
        the legend is appended to ``caption``."""
        from uefast.paper._render import latex

        return latex(self, caption=caption, label=label)

    def to_html(self) -> str:
        """An HTML ``<table>`` with a ``<caption>`` holding the legend."""
        from uefast.paper._render import html

        return html(self)

    def to_csv(self) -> str:
        """:meth:`to_arrow` as CSV text (full precision, no markup)."""
        from uefast.paper._render import csv_text

        return csv_text(self)

    def save(self, path, fmt: str | None = None) -> None:
        """Write the table; ``fmt`` (markdown, latex, html, csv) defaults from the suffix
        (.md, .tex, .html, .csv)."""
        from uefast.paper._render import save

        save(self, path, fmt)

    def __str__(self) -> str:
        return self.to_markdown()

    def _repr_markdown_(self) -> str:  # notebooks
        return self.to_markdown()


def _report_iv(method, correction, alpha, confidence_level, digits, columns, missing):
    from uefast.stats.matrix import MISSING_POLICIES
    from uefast.stats.pairs import CORRECTIONS, PAIR_METHODS

    method = check_choice("method", method, PAIR_METHODS)
    correction = check_choice("correction", correction, CORRECTIONS)
    alpha = check_probability("alpha", alpha)
    level = check_probability("confidence_level", confidence_level)
    missing = check_choice("missing", missing, MISSING_POLICIES)
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 12:
        raise InputError(f"`digits` must be an integer in [0, 12]; got {digits!r}")
    if isinstance(columns, str):
        columns = [columns]
    columns = list(columns)
    bad = [c for c in columns if c not in COLUMNS]
    if bad or not columns:
        raise InputError(f"`columns` must name some of {list(COLUMNS)}; got {columns!r}")
    return method, correction, alpha, level, missing, columns


def _long_table(results, qrels, measures, evaluate_kw):
    """The per-query long table: ``results`` as given, or evaluated first (a run)."""
    from uefast.stats.matrix import as_table

    if qrels is None:
        try:
            t = as_table(results)
        except InputError:
            t = None
        if t is not None and {"system", "qid", "measure", "value"} <= set(t.column_names):
            if evaluate_kw:
                raise InputError(f"{sorted(evaluate_kw)} apply when evaluating a run; `results` "
                                 "is already a per-query table")
            return t
    import uefast

    if measures is None:
        raise InputError("`measures` is needed to evaluate a run (e.g. ['nDCG@10', 'AP'])")
    return uefast.evaluate(results, qrels, measures, **evaluate_kw)


def _measure_order(table, measures):
    import pyarrow.compute as pc

    have = list(dict.fromkeys(pc.unique(table["measure"]).to_pylist()))
    if measures is None:
        return have
    from uefast.measures import parse_measures

    want = [str(m) for m in parse_measures(measures)]
    missing = [m for m in want if m not in have]
    if missing:
        raise InputError(f"`measures` not in the table: {missing!r}; it has {have!r}")
    return want


def report(results, qrels=None, measures=None, *, baseline=None, method="t", correction="holm",
           alpha=0.05, confidence_level=0.95, columns=("value",), ue=False, systems=None,
           missing="intersect", n_resamples=None, seed=0, digits=4, ci=True, bold=True,
           percent=False, **evaluate_kw) -> PaperTable:
    """Results table for a paper: systems x measures, means with confidence intervals and
    significance markers.

    ``results`` is the per-query long table of :func:`uefast.evaluate` (pyarrow, polars; columns
    ``system, qid, measure, value, ...``), or a run (then ``qrels`` and ``measures`` are passed to
    :func:`uefast.evaluate` with ``evaluate_kw``). For each measure and each of ``columns``
    (``value``; ``ue=True`` adds ``ue_v1`` and ``ue_v2``):

    * the topics x systems matrix ``X`` (:func:`uefast.stats.topic_system_matrix`, ``missing``
      policy, reported in the notes); mean ``x̄_j = X[:, j].mean()``;
    * the confidence interval of a system's mean: Student t, ``x̄ ± t_{n-1, (1+level)/2}·s/√n``;
    * significance: :func:`uefast.stats.all_pairs` with ``method`` and ``correction`` (family:
      the comparisons of one column) — against ``baseline`` (markers † better, ‡ worse) or between
      all pairs (each system gets a letter a, b, ...; a cell lists the letters of the systems it
      is significantly better than, as ranx does);
    * bold: the largest mean of the column (every system tied with it too).

    Display: ``digits`` decimals, ``percent=True`` shows means and intervals ×100 (as ranx's
    ``show_percentages``), ``ci=False`` leaves out the ± interval, ``bold=False`` the bold; the
    numbers of :meth:`PaperTable.to_arrow` / CSV are never scaled or rounded.

    The default is the paired t-test with Holm's correction (Holm 1979): the markers control the
    family-wise error rate of each column, where uncorrected markers (ranx's and PyTerrier's
    defaults) do not.
    """
    method, correction, alpha, level, missing, columns = _report_iv(
        method, correction, alpha, confidence_level, digits, columns, missing)
    if ue:
        columns += [c for c in ("ue_v1", "ue_v2") if c not in columns]
    table = _long_table(results, qrels, measures, evaluate_kw)
    mlist = _measure_order(table, measures)
    keys = [(m, c) for m in mlist for c in columns]
    bad = [c for c in columns if c not in table.column_names]
    if bad:
        raise InputError(f"`columns` {bad!r} not in the table; it has {table.column_names}")
    empty = [c for c in columns if table[c].null_count == table.num_rows]
    if empty:
        raise InputError(f"column(s) {empty!r} hold no values (evaluated with ue=False / "
                         f"--no-ue?); evaluate with UE scores or leave out ue / columns")
    out = PaperTable(systems=[], keys=keys, cells={}, baseline=None, method=method,
                     correction=correction, alpha=alpha, confidence_level=level, digits=digits,
                     show_ci=bool(ci), bold_best=bool(bold), percent=bool(percent))
    for key in keys:
        _fill_column(out, table, key, baseline=baseline, missing=missing, systems=systems,
                     n_resamples=n_resamples, seed=seed)
    if out.baseline is None:
        out.letters = {s: _letter(j) for j, s in enumerate(out.systems)}
    return out


def _letter(j: int) -> str:
    """a, b, ..., z, aa, ab, ... for system ``j``."""
    s = ""
    j += 1
    while j:
        j, r = divmod(j - 1, 26)
        s = chr(97 + r) + s
    return s


def _fill_column(out: PaperTable, table, key, *, baseline, missing, systems, n_resamples, seed):
    from uefast.stats import all_pairs, topic_system_matrix
    from uefast.stats.parametric import describe_differences
    from uefast.stats.results import t_interval

    measure, column = key
    tsm = topic_system_matrix(table, measure, column=column, missing=missing, systems=systems)
    x, names = tsm.matrix, [str(s) for s in tsm.systems]
    if len(names) < 2:
        raise InputError(f"a results table needs at least 2 systems; {measure!r} has {names!r}")
    if x.shape[0] < 2:
        raise InputError(f"{measure!r} ({column}): {x.shape[0]} topic(s) shared by every system; "
                         "a confidence interval needs at least 2")
    if not out.systems:
        out.systems = names
    elif names != out.systems:
        raise InputError(f"{measure!r} has systems {names!r}, other measures {out.systems!r}")
    if tsm.dropped_qids or tsm.filled:
        out.notes.append(f"{out.header(key)}: missing={tsm.missing} dropped "
                         f"{len(tsm.dropped_qids)} topic(s), filled {len(tsm.filled)} cell(s) "
                         f"with 0.")
    if baseline is not None:
        if str(baseline) not in names:
            raise InputError(f"`baseline` {baseline!r} is not one of the systems {names!r}")
        out.baseline = str(baseline)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pairs = all_pairs(x, out.method, systems=names, baseline=out.baseline,
                          correction=out.correction, alpha=out.alpha,
                          confidence_level=out.confidence_level, n_resamples=n_resamples,
                          seed=seed).to_pylist()
    better = {s: [] for s in names}
    worse = {s: [] for s in names}
    padj = {}
    for r in pairs:
        a, b = r["system_a"], r["system_b"]
        padj[a] = r["pvalue_adjusted"]
        if r["significant"] and r["mean_difference"] != 0:
            hi, lo = (a, b) if r["mean_difference"] > 0 else (b, a)
            better[hi].append(lo)
            worse[lo].append(hi)
    means = x.mean(axis=0)
    top = means.max()
    n = x.shape[0]
    for j, s in enumerate(names):
        _, sd = describe_differences(x[:, j])
        ci = t_interval(means[j], sd / math.sqrt(n), n - 1, out.confidence_level, "two-sided")
        nb = nw = None
        if out.baseline is not None and s != out.baseline:
            d = x[:, j] - x[:, names.index(out.baseline)]
            nb, nw = int((d > 0).sum()), int((d < 0).sum())
        out.cells[(s, key)] = Cell(
            mean=float(means[j]), ci_low=ci.low, ci_high=ci.high, n_topics=n,
            best=bool(means[j] == top), better_than=tuple(better[s]), worse_than=tuple(worse[s]),
            pvalue_adjusted=padj.get(s) if out.baseline is not None else None,
            n_better=nb, n_worse=nw)
