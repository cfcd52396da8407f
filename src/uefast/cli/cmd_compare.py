"""``uefast compare``: significance tests between systems from per-query results."""
from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

from uefast.cli._runs import account_unevaluated, add_names_argument, run_names
from uefast.errors import InputError

NAME = "compare"
HELP = "significance tests between systems (all pairs or vs a baseline) from per-query scores"
DESCRIPTION = """\
Compare systems on per-query scores with a paired significance test.

INPUT is the long per-query table written by `uefast evaluate` (Parquet, CSV or TSV with columns
system, qid, measure, value, ...) or a CSV/TSV with columns qid, system, value; or give TREC runs
(--run FILE... --qrels FILE, evaluated first) or trec_eval's per-topic output (--trec-eval FILE...,
one `trec_eval -q` output per system). Queries missing for some system are handled by --missing
and reported."""
EPILOG = """\
examples:
  uefast compare per_query.parquet --measure nDCG@10 --method bootstrap --correction holm
  uefast compare scores.tsv --method randomization --baseline bm25 --format tsv
  uefast compare per_query.parquet --measure AP --column ue_v2 --method tukey_hsd
  uefast compare --trec-eval bm25.eval dense.eval --measure ndcg_cut_10 --method randomization"""

_METHODS = ("t", "wilcoxon", "sign", "bootstrap", "randomization", "tukey_hsd")
_TEXT_COLUMNS = (
    ("system_a", "system A", "s"), ("system_b", "system B", "s"), ("mean_a", "mean A", ".4f"),
    ("mean_b", "mean B", ".4f"), ("mean_difference", "A-B", "+.4f"),
    ("effect_size", "d_z", "+.3f"), ("ci_low", "CI low", "+.4f"), ("ci_high", "CI high", "+.4f"),
    ("statistic", "statistic", ".4g"), ("pvalue", "p", ".4g"), ("pvalue_adjusted", "p adj", ".4g"),
    ("significant", "sig", "s"),
)


def add_arguments(parser) -> None:
    parser.add_argument("input", nargs="?",
                        help="per-query table (.parquet, .csv or .tsv, e.g. from "
                             "`uefast evaluate --per-query`); or use --run/--qrels")
    parser.add_argument("--run", nargs="+", action="extend", metavar="FILE",
                        help="TREC run files (one system each), evaluated first; needs --qrels")
    parser.add_argument("--trec-eval", nargs="+", action="extend", metavar="FILE",
                        help="per-topic output of `trec_eval -q` (or `uefast trec_eval -q`), one "
                             "file per system; --measure takes a trec_eval name (map, P_10, ...)")
    add_names_argument(parser)
    parser.add_argument("--qrels", metavar="FILE", help="TREC qrels for --run")
    parser.add_argument("--measure", help="measure to compare (needed if the table has several)")
    parser.add_argument("--column", default="value",
                        help="value column: value, ue_v1, ue_v2, iub, reb (default: value)")
    parser.add_argument("--method", default="t", choices=_METHODS, help="test (default: t)")
    parser.add_argument("--baseline", help="compare every system with this one (default: all pairs)")
    parser.add_argument("--systems", help="comma-separated systems to keep, in this order")
    parser.add_argument("--correction", default=None, choices=("none", "bonferroni", "holm", "bh"),
                        help="multiple-comparison correction (default: holm; none for tukey_hsd, "
                             "whose p-values are already adjusted for all pairs)")
    parser.add_argument("--alternative", default="two-sided", choices=("two-sided", "greater", "less"))
    parser.add_argument("--n-resamples", type=int, default=None,
                        help="resamples (defaults: bootstrap 1000, randomization 100000, tukey_hsd 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling tests (default: 0)")
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"),
                        help="where the resamples of bootstrap, randomization and tukey_hsd run: "
                             "cpu, cuda (NVIDIA GPU; same p-values) or auto (default: cpu)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    parser.add_argument("--confidence-level", type=float, default=0.95)
    parser.add_argument("--missing", default="intersect", choices=("intersect", "zero", "error"),
                        help="queries missing for some system (default: intersect)")
    parser.add_argument("--format", default="text", choices=("text", "tsv", "jsonl"))


def _input_table(args):
    """The per-query long table: read it, evaluate ``--run`` files against ``--qrels``, or read
    ``--trec-eval`` outputs."""
    names = run_names(args)
    given = [opt for opt, v in (("a per-query table", args.input), ("--run", args.run),
                                ("--trec-eval", args.trec_eval)) if v]
    if len(given) > 1:
        raise InputError(f"give one input: {' or '.join(given)}, not both")
    if args.trec_eval:
        from uefast.io import read_trec_eval_output

        if args.qrels:
            raise InputError("--qrels goes with --run, not with --trec-eval")
        if not args.measure:
            raise InputError("--trec-eval needs --measure (a trec_eval name, e.g. --measure map)")
        table = read_trec_eval_output(args.trec_eval, system=names)
        if args.measure not in set(table["measure"].unique().to_pylist()):
            from uefast.trec_eval.ue import trec_eval_name

            te = trec_eval_name(args.measure)
            if te is not None and te != args.measure:
                raise InputError(f"--measure {args.measure!r}: trec_eval prints it as {te!r}; "
                                 f"use --measure {te}")
        return table
    if args.run:
        if not args.qrels:
            raise InputError("--run needs --qrels")
        if not args.measure:
            raise InputError("--run needs --measure (e.g. --measure nDCG@10)")
        import uefast
        from uefast.io import read_qrels, read_run

        res = uefast.evaluate(read_run(args.run, system=names, nan="error"), read_qrels(args.qrels),
                              [args.measure])
        account_unevaluated(res)
        return res
    if not args.input:
        raise InputError("give a per-query table, --run FILE... --qrels FILE or --trec-eval FILE...")
    return _load_long_table(args.input)


def _load_long_table(path):
    """Read the per-query long table (Parquet, CSV or TSV) into a ``pyarrow.Table``.

    The one place that knows input formats (TREC runs via ``uefast.evaluate`` can be added here).
    """
    import pyarrow as pa

    from uefast.cli._tables import read_delimited
    from uefast.inputs import read_parquet

    p = Path(path)
    if not p.is_file():
        raise InputError(f"input file not found: {str(path)!r}")
    suffix = p.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            table = read_parquet(p)
        elif suffix in (".csv", ".tsv", ".txt"):
            # only an empty cell is missing: "nan" is NaN, an error as in a Parquet input;
            # qid and system are text (001 and 1, 1.1 and 1.10 are different topics)
            table = read_delimited(p, "," if suffix == ".csv" else "\t", empty_is_null=True)
        else:
            raise InputError(f"cannot tell the format of {str(path)!r}: use .parquet, .csv or .tsv")
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"cannot read {str(path)!r}: {exc}") from None
    if "system" not in table.column_names and "runid" in table.column_names:
        # `uefast trec_eval --format tsv|parquet` output: runid, measure, qid, value; its
        # summary rows (qid "all") are not topics
        table = table.rename_columns(["system" if c == "runid" else c for c in table.column_names])
        if "qid" in table.column_names:
            import pyarrow.compute as pc

            from uefast.inputs import text_array

            qid = table["qid"].cast(pa.string())
            table = table.filter(pc.invert(pc.equal(qid, text_array(["all"])[0])))
    for name in ("system", "qid"):
        if name not in table.column_names:
            raise InputError(f"{str(path)!r} has no `{name}` column; columns are {table.column_names}")
    idx = table.column_names.index("system")
    if not pa.types.is_string(table.schema.field("system").type):
        table = table.set_column(idx, "system", table["system"].cast(pa.string()))
    return table


def _text(table) -> str:
    rows = table.to_pylist()
    cells = [[head for _, head, _ in _TEXT_COLUMNS]]
    for r in rows:
        line = []
        for key, _, fmt in _TEXT_COLUMNS:
            v = r[key]
            line.append(("*" if v else "") if key == "significant" else format(v, fmt))
        cells.append(line)
    widths = [max(len(c[i]) for c in cells) for i in range(len(_TEXT_COLUMNS))]
    out = []
    for k, c in enumerate(cells):
        out.append("  ".join(v.ljust(w) if i < 2 else v.rjust(w)
                             for i, (v, w) in enumerate(zip(c, widths))).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    meta = json.loads(table.schema.metadata[b"uefast.stats"])
    n = rows[0]["n_topics"] if rows else 0
    note = [f"method={meta['method']}", f"alternative={meta['alternative']}", f"topics={n}",
            f"pairs={meta['n_pairs']}", f"correction={meta['correction']}", f"alpha={meta['alpha']}",
            f"CI={100 * meta['confidence_level']:.12g}% {meta['ci_method']}"]  # 0.999: 99.9%, not 100%
    if "n_resamples" in meta and not meta.get("exact"):
        note += [f"B={meta['n_resamples']}", f"seed={meta['seed']}"]
    if meta.get("exact"):
        note.append("exact enumeration")
    out.append("")
    out.append("# " + ", ".join(note))
    rep = meta.get("missing_report")
    if rep and (rep["dropped_qids"] or rep["filled"]):
        out.append(f"# missing={rep['missing']}: dropped {len(rep['dropped_qids'])} queries, "
                   f"filled {len(rep['filled'])} cells with 0")
    return "\n".join(out)


def run(args) -> int:
    from uefast.stats import all_pairs

    table = _input_table(args)
    column = args.column
    if column not in table.column_names:
        raise InputError(f"`--column` {column!r} not in the input; columns are {table.column_names}")
    systems = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems else None
    correction = args.correction or ("none" if args.method == "tukey_hsd" else "holm")
    if args.method == "tukey_hsd" and correction != "none":
        print(f"uefast compare: note: --correction {correction} on top of tukey_hsd, whose "
              f"p-values already hold for all pairs (a second correction is conservative)",
              file=sys.stderr)
    with warnings.catch_warnings():  # the missing-query report is printed below instead
        warnings.simplefilter("ignore", UserWarning)
        result = all_pairs(table, args.method, measure=args.measure, column=column,
                           missing=args.missing, systems=systems, baseline=args.baseline,
                           alternative=args.alternative, correction=correction,
                           alpha=args.alpha, confidence_level=args.confidence_level,
                           n_resamples=args.n_resamples, seed=args.seed,
                           backend=args.backend)
    if args.format == "text":
        sys.stdout.write(_text(result) + "\n")
    else:  # stdout stays a clean table: the missing-query report goes to stderr
        rep = json.loads(result.schema.metadata[b"uefast.stats"]).get("missing_report")
        if rep and (rep["dropped_qids"] or rep["filled"]):
            print(f"uefast compare: note: missing={rep['missing']}: dropped "
                  f"{len(rep['dropped_qids'])} queries, filled {len(rep['filled'])} cells with 0",
                  file=sys.stderr)
    if args.format == "tsv":
        names = result.column_names
        sys.stdout.write("\t".join(names) + "\n")
        for r in result.to_pylist():
            sys.stdout.write("\t".join(str(r[c]) for c in names) + "\n")
    elif args.format == "jsonl":
        for r in result.to_pylist():  # JSON has no NaN/Infinity: null, as Polars writes them
            r = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in r.items()}
            sys.stdout.write(json.dumps(r) + "\n")
    return 0
