"""``uefast text``: text-generation evaluation (ROUGE, BERTScore) with IUB/REB/UE, and the
SummEval study."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

NAME = "text"
HELP = "evaluate generated text (ROUGE, BERTScore) with IUB/REB/UE; reproduce the SummEval study"
DESCRIPTION = """\
uefast text evaluate DATA -m ROUGE-1 ROUGE-2 ROUGE-L ...
    DATA: Parquet / Arrow / JSONL with columns doc_id, system, candidate, reference (text or
    list of texts), source (data_schemas/text_input.md). Prints the means per (system, measure),
    or with --per-query the long table (data_schemas/text_output.md).
uefast text pyramid SUMMARIES PYRAMIDS -m Pyramid "Pyramid(variant=modified)" ...
    The Pyramid score with IUB/REB/UE: SUMMARIES holds the content units each summary expresses
    (system, doc_id, scu), PYRAMIDS the SCU weights (doc_id, scu, weight[, n_refs]); CSV, TSV,
    Parquet or Arrow (data_schemas/pyramid.md).
uefast text reproduce [SUMMEVAL] --out DIR
    The SummEval study (SPEC_text §7): validation against published correlations and the raw-vs-UE
    correlation tables, as report.md, tables/ and figures/.
"""
EPILOG = """\
examples:
  uefast text evaluate summaries.jsonl -m ROUGE-1 ROUGE-2 "ROUGE-L(score=recall)" --stem
  uefast text evaluate summaries.parquet -m ROUGE-1 --iub src --per-query --format tsv
  uefast text pyramid scus.csv pyramids.csv -m Pyramid "Pyramid(variant=modified)" --n-refs 4
  uefast text reproduce shared/data/summeval_bartscore --out summeval_report/
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="text_command", metavar="{evaluate,pyramid,reproduce}")
    e = sub.add_parser("evaluate", help="ROUGE/BERTScore with IUB, REB and UE per document")
    e.add_argument("data", help="Parquet / Arrow / JSONL file (doc_id, system, candidate, "
                                "reference, source)")
    e.add_argument("-m", "--measures", nargs="+", action="extend", default=None,
                   help="e.g. ROUGE-1 ROUGE-2 ROUGE-L ROUGE-Lsum 'ROUGE-1(score=recall)' BERTScore "
                        "(default: ROUGE-1 ROUGE-2 ROUGE-L)")
    e.add_argument("--stem", action="store_true", help="Porter stemming (needs uefast[text])")
    e.add_argument("--iub", choices=["len", "src", "one"], default="len")
    e.add_argument("--multi-ref", choices=["mean", "max"], default="mean")
    e.add_argument("--length", choices=["candidate", "reference"], default="candidate",
                   help="L at which REB and IUB are taken (SPEC_text §2.5)")
    e.add_argument("--samples", type=int, default=200, help="Monte Carlo draws (ROUGE-L, max)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--empty", choices=["error", "score"], default="error",
                   help="blank texts: an error naming the row, or scored as rouge-score does")
    _output_arguments(e)
    y = sub.add_parser("pyramid", help="the Pyramid score with IUB, REB and UE per document")
    y.add_argument("summaries", help="CSV/TSV/Parquet/Arrow: system, doc_id, scu (one row per "
                                     "content unit; an empty scu matches no SCU)")
    y.add_argument("pyramids", help="CSV/TSV/Parquet/Arrow: doc_id, scu, weight[, n_refs]")
    y.add_argument("-m", "--measures", nargs="+", action="extend", default=None,
                   help="Pyramid, 'Pyramid(variant=modified)', "
                        "'Pyramid(variant=modified,x=exact)' (default: Pyramid)")
    y.add_argument("--n-refs", type=int, default=None,
                   help="reference summaries per pyramid when the table has no n_refs column "
                        "(needed by variant=modified)")
    _output_arguments(y)
    r = sub.add_parser("reproduce", help="the SummEval study of SPEC_text §7")
    r.add_argument("data", nargs="?", default=None,
                   help="BARTScore's SummEval data.json or its folder (default: "
                        "$UEFAST_SHARED_DATA/summeval_bartscore)")
    r.add_argument("--out", default="uefast_text_reproduce", help="output folder")
    r.add_argument("--no-stem", dest="stem", action="store_false",
                   help="no Porter stemming (the published numbers need it)")
    r.add_argument("--samples", type=int, default=200)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--no-bertscore", dest="bertscore", action="store_false")


def _output_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--per-query", action="store_true", help="one row per (system, doc, measure)")
    p.add_argument("--format", choices=["text", "tsv", "jsonl", "parquet"], default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def _evaluate(args) -> int:
    from uefast.text import evaluate

    res = evaluate(args.data, args.measures or ["ROUGE-1", "ROUGE-2", "ROUGE-L"], stem=args.stem,
                   iub=args.iub, multi_ref=args.multi_ref, length=args.length,
                   samples=args.samples, seed=args.seed, empty=args.empty)
    return _write(args, res)


def _pyramid(args) -> int:
    from uefast.text.pyramid import pyramid

    res = pyramid(args.summaries, args.pyramids, args.measures or ["Pyramid"],
                  n_refs=args.n_refs)
    return _write(args, res)


def _write(args, res) -> int:
    """The long table (--per-query) or the means per (system, measure), in --format."""
    import uefast
    from uefast.cli.cmd_evaluate import _emit, _jsonl_text, _text_table, _tsv_text
    from uefast.errors import InputError

    chosen = res if args.per_query else uefast.aggregate(res)
    if args.format == "parquet":
        import pyarrow.parquet as pq

        if not args.output:
            raise InputError("--format parquet needs --output FILE")
        pq.write_table(chosen, args.output)
    elif args.format == "tsv":
        _emit(args.output, _tsv_text(chosen))
    elif args.format == "jsonl":
        _emit(args.output, _jsonl_text(chosen))
    else:
        head = "per document:\n" if args.per_query else "mean over documents:\n"
        _emit(args.output, head + _text_table(chosen, None) + "\n")
    return 0


def _reproduce(args) -> int:
    from uefast.errors import InputError
    from uefast.text.reproduce import reproduce

    data = args.data
    if data is None:
        shared = os.environ.get("UEFAST_SHARED_DATA")
        if not shared:
            raise InputError("give the SummEval data (BARTScore's data.json or its folder), or set "
                             "UEFAST_SHARED_DATA")
        data = Path(shared) / "summeval_bartscore"
    out = reproduce(data, args.out, stem=args.stem, samples=args.samples, seed=args.seed,
                    bertscore=args.bertscore)
    print(f"wrote {out / 'report.md'}", file=sys.stderr)
    return 0


def run(args) -> int:
    if args.text_command == "evaluate":
        return _evaluate(args)
    if args.text_command == "pyramid":
        return _pyramid(args)
    if args.text_command == "reproduce":
        return _reproduce(args)
    print("usage: uefast text {evaluate,pyramid,reproduce} ... (uefast text -h)", file=sys.stderr)
    return 2
