"""``uefast reproduce``: Santu & Feng's meta-evaluation experiment as a report folder."""
from __future__ import annotations

import argparse
from pathlib import Path

from uefast.cli._runs import add_names_argument, run_names
from uefast.errors import InputError

NAME = "reproduce"
HELP = "run the UE paper's meta-evaluation protocol (exact and paper REB) and write a report"
DESCRIPTION = """\
Run the meta-evaluation protocol of Santu & Feng (arXiv 2209.05007) on several systems and write a
report folder (report.md, figures/*.png, tables/*.parquet and *.csv): nDCG@k, DCG-UE V1/V2, MAP@k
and MSP-UE V1/V2 at each k; Kendall's tau between metric rankings on all / uninformative / ideal
queries; conflicts; discriminative power; PAD; swap rates; REB histograms and the actual-vs-expected
scatter. Every table is computed with the exact REB and with the paper's REB formulas.
"""
EPILOG = """\
inputs (one of):
  TABLE                    LETOR-style Parquet/CSV: qid, label, one float score column per system
  --qrels FILE --run FILE...  TREC qrels and several TREC runs
  --letor FILE --scores FILE...  an SVMlight/LETOR file (labels) and one score file per system
                           (one score per line; LightGBM/XGBoost files without qid: --group FILE)
  (nothing)                the embedded sample (uefast.sample.letor_sample)

examples:
  uefast reproduce scores.parquet --out report/
  uefast reproduce --qrels qrels.txt --run runs/input.* --out report/ --test bootstrap
  uefast reproduce --letor test.txt --scores lambdamart.txt rf.txt --out report/
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", nargs="?", help="LETOR-style Parquet or CSV table with score columns")
    parser.add_argument("--qrels", help="TREC qrels file (with --run)")
    parser.add_argument("--run", nargs="+", action="extend", default=None, help="TREC run files (with --qrels)")
    add_names_argument(parser)
    parser.add_argument("--letor", metavar="FILE", help="SVMlight/LETOR file with labels (with --scores)")
    parser.add_argument("--scores", nargs="+", action="extend", metavar="FILE", default=None,
                        help="score files for --letor, one system each (one score per line)")
    parser.add_argument("--group", metavar="FILE", help="query group sizes for a --letor file without "
                        "qid: fields (default: the --letor file's name + .query or .group, where it exists)")
    parser.add_argument("--systems", nargs="+", action="extend", default=None, help="score columns to compare (LETOR table)")
    parser.add_argument("--out", default="uefast_reproduce", help="output folder (default: %(default)s)")
    parser.add_argument("--k", type=int, nargs="+", action="extend", default=None, help="cutoffs (default: 5 10 15 20 30)")
    parser.add_argument("--test", default="t", choices=["t", "wilcoxon", "sign", "bootstrap", "randomization", "tukey"],
                        help="significance test for discriminative power and conflicts (default: %(default)s)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default: %(default)s)")
    parser.add_argument("--n-resamples", type=int, default=None, help="resamples of bootstrap/randomization/tukey tests")
    parser.add_argument("--top-frac", type=float, default=0.2,
                        help="uninformative/ideal set size as a fraction of non-degenerate queries (default: %(default)s)")
    parser.add_argument("--top-n", type=int, default=None, help="uninformative/ideal set size (overrides --top-frac)")
    parser.add_argument("--splits", type=int, default=5, help="left/right document-split replicates, 0 to skip (default: %(default)s)")
    parser.add_argument("--swap-trials", type=int, default=50, help="Voorhees-Buckley trials, 0 to skip (default: %(default)s)")
    parser.add_argument("--bootstrap-swap", type=int, default=200, help="Sakai bootstrap-swap trials, 0 to skip (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="random seed, an integer in [0, 2**64) (default: %(default)s)")
    parser.add_argument("--ties", default="trec_eval", choices=["trec_eval", "input", "expected"],
                        help="tie handling of uefast.evaluate (default: %(default)s)")
    parser.add_argument("--formats", nargs="+", action="extend", default=None, choices=["parquet", "csv"],
                        help="table file formats (default: parquet csv)")
    parser.add_argument("--title", default=None, help="report title")
    parser.add_argument("--quiet", action="store_true", help="no progress messages")


def _read_table(path: str):
    from uefast.cli._tables import read_delimited
    from uefast.inputs import read_parquet

    p = Path(path)
    if not p.exists():
        raise InputError(f"table file not found: {path}")
    if p.suffix.lower() in (".parquet", ".pq"):
        return read_parquet(p)
    if p.suffix.lower() in (".csv", ".tsv"):
        return read_delimited(p, "\t" if p.suffix.lower() == ".tsv" else ",", labels=True)
    raise InputError(f"table must be .parquet, .csv or .tsv; got {path} (an SVMlight/LETOR file: "
                     f"--letor {path} --scores FILE...)")


def run(args: argparse.Namespace) -> int:
    from uefast.meta._plots import require_matplotlib
    from uefast.meta.report import reproduce

    require_matplotlib()  # one line naming the extra, before the inputs are read

    if (args.qrels is None) != (args.run is None):
        raise InputError("--qrels and --run go together")
    given = [o for o, v in (("TABLE", args.table), ("--qrels/--run", args.qrels or args.run),
                            ("--letor", args.letor)) if v is not None]
    if len(given) > 1:
        raise InputError(f"give one input: {' or '.join(given)}, not both")
    if args.letor is None and (args.scores is not None or args.group is not None):
        raise InputError("--scores and --group go with --letor")
    if args.letor is not None and not args.scores:
        raise InputError("--letor needs --scores FILE... (one score file per system, at least 2)")
    data = qrels = None
    names = run_names(args)
    if args.qrels is not None:
        from uefast.io import read_qrels, read_run

        if len(args.run) < 2:
            raise InputError(f"--run needs at least 2 run files; got {len(args.run)}")
        qrels = read_qrels(args.qrels)
        data = read_run(args.run, system=names, nan="error")
    elif args.table is not None:
        data = _read_table(args.table)
    elif args.letor is not None:
        from uefast.io import read_letor

        data = read_letor(args.letor, score_files=args.scores, group_file=args.group)
    # --k / --formats not given: reproduce()'s own defaults (the help text names them)
    given = {key: v for key, v in (("ks", args.k), ("formats", args.formats)) if v is not None}
    res = reproduce(
        data, qrels=qrels, systems=args.systems, out_dir=args.out, test=args.test,
        alpha=args.alpha, n_resamples=args.n_resamples, top_frac=args.top_frac, top_n=args.top_n,
        n_splits=args.splits, swap_trials=args.swap_trials, bootstrap_swap=args.bootstrap_swap,
        seed=args.seed, progress=not args.quiet, title=args.title, ties=args.ties, **given,
    )
    print(res.report)
    return 0
