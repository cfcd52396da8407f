"""``uefast report``: a paper's results table (Markdown, LaTeX, HTML or CSV)."""
from __future__ import annotations

import sys

from uefast.cli._runs import account_unevaluated, add_names_argument, run_names
from uefast.errors import InputError

NAME = "report"
HELP = "results table for a paper: means ± 95% CI, significance markers, best in bold"
DESCRIPTION = """\
A results table for a paper: one row per system, one column per measure (and per UE score with
--ue); each cell the mean over topics ± the half-width of its 95% Student-t confidence interval,
a significance marker after multiple-comparison correction (against --baseline: † better,
‡ worse; otherwise superscript letters of the systems it beats), the best mean of a column in
bold. A legend under the table says what was tested and how.

INPUT is the per-query table of `uefast evaluate --per-query` (Parquet, CSV or TSV with columns
system, qid, measure, value, ...), or give TREC runs with --run FILE... --qrels FILE -m M..."""
EPILOG = """\
examples:
  uefast report --run runs/*.txt --qrels qrels.txt -m nDCG@10 AP P@10 --baseline bm25
  uefast report per_query.parquet --format latex --output table.tex --caption "Robust04 runs."
  uefast report per_query.parquet --ue --method randomization --correction bh
  uefast report --run a.run b.run c.run --qrels q.txt -m AP --format html -o table.html"""


# the choices of uefast.paper.table.COLUMNS and uefast.stats.pairs (checked equal by the tests):
# written out, so that building the parser (every command) imports no statistics
COLUMNS = ("value", "ue_v1", "ue_v2", "iub", "reb")
CORRECTIONS = ("none", "bonferroni", "holm", "bh")
PAIR_METHODS = ("t", "wilcoxon", "sign", "bootstrap", "randomization", "tukey_hsd")


def add_arguments(p) -> None:
    p.add_argument("input", nargs="?", help="per-query table (.parquet, .csv, .tsv)")
    p.add_argument("--run", nargs="+", action="extend", metavar="FILE",
                   help="TREC run files (one system each), evaluated first; needs --qrels")
    add_names_argument(p)
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels for --run")
    p.add_argument("-m", "--measures", nargs="+", action="extend", default=None,
                   help="measures, in column order (default: every measure of the table; "
                        "with --run: nDCG@10 AP)")
    p.add_argument("--baseline", help="mark significance against this system (default: all pairs)")
    p.add_argument("--method", default="t", choices=PAIR_METHODS, help="test (default: t)")
    p.add_argument("--correction", default="holm", choices=CORRECTIONS,
                   help="multiple-comparison correction within each column (default: holm)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--ue", action="store_true", help="add UE-V1 and UE-V2 columns")
    p.add_argument("--columns", nargs="+", choices=COLUMNS, default=None,
                   help="value columns per measure (default: value)")
    p.add_argument("--systems", help="comma-separated systems to keep, in this row order")
    p.add_argument("--missing", default="intersect", choices=("intersect", "zero", "error"),
                   help="topics missing for some system (default: intersect; said in the legend)")
    p.add_argument("--n-resamples", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--digits", type=int, default=4, help="decimals shown (default: 4)")
    p.add_argument("--percent", action="store_true", help="show means and CIs x100")
    p.add_argument("--no-ci", dest="ci", action="store_false", help="leave out the ± CI")
    p.add_argument("--no-bold", dest="bold", action="store_false", help="no bold best")
    p.add_argument("--format", choices=("markdown", "latex", "html", "csv"), default=None,
                   help="default: from --output's suffix, else markdown")
    p.add_argument("--caption", help="LaTeX caption text before the legend")
    p.add_argument("--label", help="LaTeX \\label")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def _results(args):
    names = run_names(args)
    if args.run and args.input:
        raise InputError("give a per-query table or --run, not both")
    if args.run:
        if not args.qrels:
            raise InputError("--run needs --qrels")
        import uefast
        from uefast.io import read_qrels, read_run

        measures = args.measures or ["nDCG@10", "AP"]
        res = uefast.evaluate(read_run(args.run, system=names, nan="error"),
                              read_qrels(args.qrels), measures, ue=bool(args.ue or args.columns))
        account_unevaluated(res)
        return res
    if args.qrels:
        raise InputError("--qrels goes with --run")
    if not args.input:
        raise InputError("give a per-query table (uefast evaluate --per-query --format parquet) "
                         "or --run FILE... --qrels FILE")
    from uefast.cli.cmd_compare import _load_long_table

    return _load_long_table(args.input)


def run(args) -> int:
    from uefast.paper._render import FORMATS, render
    from uefast.paper.table import report

    fmt = args.format
    if fmt is None:
        fmt = FORMATS.get("." + args.output.rsplit(".", 1)[-1].lower(), "markdown") \
            if args.output and "." in args.output else "markdown"
    systems = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems else None
    table = report(_results(args), measures=args.measures, baseline=args.baseline,
                   method=args.method, correction=args.correction, alpha=args.alpha,
                   confidence_level=args.confidence_level, columns=args.columns or ("value",),
                   ue=args.ue, systems=systems, missing=args.missing,
                   n_resamples=args.n_resamples, seed=args.seed, digits=args.digits,
                   ci=args.ci, bold=args.bold, percent=args.percent)
    if fmt == "latex":
        text = table.to_latex(caption=args.caption, label=args.label)
    else:
        text = render(table, fmt)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0
