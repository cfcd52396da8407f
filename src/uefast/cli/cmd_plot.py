"""``uefast plot``: the figures of a paper (PNG >= 150 dpi, SVG, PDF)."""
from __future__ import annotations

from uefast.cli._runs import account_unevaluated, add_names_argument, run_names
from uefast.errors import InputError

NAME = "plot"
HELP = "figures: precision-recall curves, per-topic differences, means with CIs, ASL curves"
DESCRIPTION = """\
Draw one figure (needs matplotlib: pip install "uefast[report]"):

  pr     interpolated precision-recall curves (trec_eval's iprec_at_recall, mean over topics);
         needs --run FILE... --qrels FILE
  diff   per-topic differences of --system against --baseline for one --measure, sorted
  means  system means with 95% Student-t confidence intervals, one panel per measure
  asl    ASL curves (sorted p-values of all system pairs) of several measures in one figure

diff, means and asl read the per-query table of `uefast evaluate --per-query` (INPUT), or
evaluate --run FILE... --qrels FILE with -m first."""
EPILOG = """\
examples:
  uefast plot pr --run runs/* --qrels qrels.txt -o pr.pdf
  uefast plot diff per_query.parquet -m AP --baseline bm25 --system dense -o diff.png
  uefast plot means --run runs/* --qrels qrels.txt -m nDCG@10 AP -o means.svg
  uefast plot asl per_query.parquet -m nDCG@10 AP P@10 --method bootstrap -o asl.png"""

KINDS = ("pr", "diff", "means", "asl")


def add_arguments(p) -> None:
    p.add_argument("kind", choices=KINDS, help="which figure")
    p.add_argument("input", nargs="?", help="per-query table (.parquet, .csv, .tsv)")
    p.add_argument("--run", nargs="+", action="extend", metavar="FILE", help="TREC run files")
    add_names_argument(p)
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels for --run")
    p.add_argument("-m", "--measures", nargs="+", action="extend", default=None,
                   help="measures (diff: exactly one; default: every measure of the table, "
                        "with --run nDCG@10 AP)")
    p.add_argument("--column", default="value", help="value column (default: value; ue_v2, ...)")
    p.add_argument("--baseline", help="diff: the baseline system")
    p.add_argument("--system", help="diff: the system compared with the baseline")
    p.add_argument("--method", default="bootstrap", help="asl: test (default: bootstrap)")
    p.add_argument("--n-resamples", type=int, default=1000, help="asl: resamples (default: 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--rel-level", type=int, default=1, help="pr: relevance threshold")
    p.add_argument("--dpi", type=int, default=200, help="PNG resolution (>= 150; default: 200)")
    p.add_argument("--title", help="figure title")
    p.add_argument("-o", "--output", metavar="FILE", required=True,
                   help="figure file: .png, .svg or .pdf")


def _results(args):
    if args.run and args.input:
        raise InputError("give a per-query table or --run, not both")
    if args.run:
        if not args.qrels:
            raise InputError("--run needs --qrels")
        import uefast
        from uefast.io import read_qrels, read_run

        res = uefast.evaluate(read_run(args.run, system=run_names(args), nan="error"),
                              read_qrels(args.qrels), args.measures or ["nDCG@10", "AP"],
                              ue=args.column in ("ue_v1", "ue_v2"))
        account_unevaluated(res)
        return res
    if not args.input:
        raise InputError("give a per-query table or --run FILE... --qrels FILE")
    from uefast.cli.cmd_compare import _load_long_table

    return _load_long_table(args.input)


def run(args) -> int:
    from uefast.paper import plots

    plots.require_matplotlib()  # before any evaluation: one line naming the extra
    plots._check_path(args.output, args.dpi)
    kw = dict(dpi=args.dpi, title=args.title)
    if args.kind == "pr":
        if not (args.run and args.qrels) or args.input:
            raise InputError("pr needs --run FILE... --qrels FILE")
        plots.plot_pr_curves(args.run, args.qrels, args.output, names=run_names(args),
                             relevance_level=args.rel_level, **kw)
        return 0
    results = _results(args)
    if args.kind == "diff":
        if not (args.baseline and args.system):
            raise InputError("diff needs --baseline SYSTEM and --system SYSTEM")
        if not args.measures or len(args.measures) != 1:
            raise InputError("diff needs one measure: -m MEASURE")
        from uefast.measures import parse_measure

        plots.plot_topic_differences(results, str(parse_measure(args.measures[0])), args.baseline,
                                     args.system, args.output, column=args.column, **kw)
    elif args.kind == "means":
        plots.plot_means(results, args.measures, args.output, column=args.column, **kw)
    else:
        plots.plot_asl_curves(results, args.measures, args.output, column=args.column,
                              method=args.method, alpha=args.alpha,
                              n_resamples=args.n_resamples, seed=args.seed, **kw)
    return 0
