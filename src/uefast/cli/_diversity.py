"""``uefast evaluate --run FILE... --diversity-qrels FILE``: diversity measures
(:func:`uefast.diversity.evaluate`) with the command's output formats."""
from __future__ import annotations

import io

from uefast.errors import InputError

DEFAULT_MEASURES = ["alpha-nDCG@20", "ERR-IA@20", "strec@20"]
TIES = {"trec_eval": "trec_eval", "input": "rank"}


def run(args, emit, tsv_text, jsonl_text, text_table) -> int:
    """Evaluate the --run files (or a TREC-style TABLE) against diversity qrels; ``--ties
    input`` ranks by the run files' rank column (ndeval's order)."""
    import uefast
    from uefast.cli._runs import run_names
    from uefast.diversity import evaluate
    from uefast.io import read_run

    if args.qrels:
        raise InputError("give --qrels or --diversity-qrels, not both")
    if args.ties not in TIES:
        raise InputError("--diversity-qrels takes --ties trec_eval or input (the rank column)")
    if args.run:
        runs = read_run(args.run, system=run_names(args))
    elif args.table:
        from uefast.cli.cmd_evaluate import _read_table

        runs = _read_table(args.table, "run")
    else:
        raise InputError("--diversity-qrels needs --run FILE... or a TREC-style TABLE")
    measures = args.measures or DEFAULT_MEASURES
    res = evaluate(runs, args.diversity_qrels, measures, ue=args.ue, ties=TIES[args.ties],
                   degenerate=args.degenerate, queries=args.queries or "intersect")
    means = uefast.aggregate(res.drop_columns(["iub_exact"]))
    chosen = res if args.per_query else means
    if args.format == "parquet":
        import pyarrow.parquet as pq

        if not args.output:
            raise InputError("--format parquet needs --output FILE")
        pq.write_table(chosen, args.output)
        return 0
    if args.format in ("tsv", "jsonl"):
        emit(args.output, tsv_text(chosen) if args.format == "tsv" else jsonl_text(chosen))
        return 0
    out = io.StringIO()
    if args.per_query:
        print("per query:", file=out)
        print(text_table(res, args.limit), file=out)
        print("", file=out)
    print("mean over queries:", file=out)
    print(text_table(means, None), file=out)
    emit(args.output, out.getvalue())
    return 0
