"""``uefast evaluate``: per-query or mean measures with IUB, REB and UE scores."""
from __future__ import annotations

import argparse
import io
import os
import sys

from uefast.cli._runs import (account_coverage, account_dropped, account_unevaluated, add_names_argument,
                              coverage_note_from_means, run_names)
from uefast.cli._tables import row_error_in_lines
from uefast.errors import RowError

NAME = "evaluate"
HELP = "evaluate runs (Parquet/Arrow/CSV LETOR tables, TREC runs + qrels, SVMlight) with IUB/REB/UE"
DESCRIPTION = """\
Evaluate one or more systems per query with ir_measures-style measure strings, and report each
measure's ideal upper bound (IUB), exact random expected baseline (REB) and UE scores V1/V2.

Inputs (one of):
  TABLE            a LETOR-style Parquet/CSV/Feather table (qid, label, score columns[, docid])
                   or, with --qrels, a TREC-style table (qid, docid, score[, system]);
                   in CSV/TSV, qid, docid and system are read as text (001 stays 001) and every
                   other numeric column but label as a score
  --run FILE...    TREC run files (several become several systems), needs --qrels
  --letor FILE     an SVMlight/LETOR file, scored by --scores FILE... (one score per line)
                   (LightGBM/XGBoost files without qid: take their queries from --group FILE)
  (nothing)        the package's embedded sample (60 queries, 4 systems)
"""
EPILOG = """\
examples:
  uefast evaluate                                   # embedded sample, per query and means
  uefast evaluate data.parquet -m nDCG@10 AP P@10 --format tsv > out.tsv
  uefast evaluate --run bm25.run dense.run --qrels qrels.txt -m nDCG@10 AP --per-query
  uefast evaluate --run ql.txt rm3.txt --names QL RM3 --qrels qrels.txt   # files sharing a runid
  uefast evaluate --letor test.txt --scores lgbm.txt rf.txt -m "nDCG(gain=exp)@10" "AP(norm=k)@10"
  uefast evaluate --letor rank.test --scores pred.txt      # LightGBM data: groups from rank.test.query
  uefast evaluate --list-measures

exit codes: 0 success; 2 bad usage or bad input (one line on stderr naming the problem)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", nargs="?", help="LETOR-style (or, with --qrels, TREC-style) table file")
    p.add_argument("--run", nargs="+", action="extend", metavar="FILE", help="TREC run file(s)")
    add_names_argument(p)
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels file (or a qid/docid/label table)")
    p.add_argument("--diversity-qrels", metavar="FILE",
                   help="subtopic qrels (topic subtopic docno grade, or EvALL): diversity measures "
                        "(default alpha-nDCG@20 ERR-IA@20 strec@20; see docs/diversity.md)")
    p.add_argument("--letor", metavar="FILE", help="SVMlight/LETOR file with labels")
    p.add_argument("--scores", nargs="+", action="extend", metavar="FILE", help="score files for --letor")
    p.add_argument("--group", metavar="FILE",
                   help="query group sizes for a --letor file without qid: fields (LightGBM "
                        ".query / XGBoost .group; default: the --letor file's name + .query or "
                        ".group, where it exists)")
    p.add_argument("-m", "--measures", nargs="+", action="extend", default=None,
                   help="measure strings (default: nDCG@10 AP); -m may be repeated")
    p.add_argument("--no-ue", dest="ue", action="store_false", help="skip UE V1/V2")
    p.add_argument("--ties", choices=["trec_eval", "input", "expected"], default="trec_eval")
    p.add_argument("--reb", choices=["exact", "paper"], default="exact")
    p.add_argument("--backend", choices=["cpu", "cuda", "auto"], default="cpu",
                   help="cuda: rank on an NVIDIA GPU (needs the gpu extra); same values; auto: "
                        "the GPU where CuPy, a GPU and a large input are present")
    p.add_argument("--degenerate", choices=["zero", "nan", "drop"], default="zero")
    p.add_argument("--rel-level", type=int, default=1, help="relevance threshold (label >= N)")
    p.add_argument("--mean", choices=["arithmetic", "geometric", "harmonic"], default="arithmetic",
                   help="mean over queries (geometric: trec_eval's gm_map floor 0.00001, so AP "
                        "gives GMAP; harmonic: a 0 makes it 0); UE columns are null unless "
                        "arithmetic")
    p.add_argument("--queries", choices=["intersect", "qrels"], default=None,
                   help="TREC style: queries in both run and qrels (default), or every qrels "
                        "query (-c)")
    p.add_argument("--score-columns", nargs="+", action="extend", metavar="COLUMN", default=None,
                   help="LETOR-style TABLE: the score columns, one system each (default: every "
                        "floating-point column -- in CSV/TSV every numeric one -- but qid, docid, "
                        "label, system)")
    p.add_argument("--common-queries", action="store_true",
                   help="keep only the queries every system was evaluated on (per measure), so "
                        "that the means are over one query set (without it, systems covering "
                        "different queries get a note on stderr)")
    p.add_argument("--per-query", action="store_true",
                   help="per-query rows (text: then the means; tsv/jsonl/parquet: the per-query "
                        "table only; a streamed TABLE, Parquet over the size threshold, writes "
                        "them with --format parquet --output FILE only)")
    p.add_argument("--format", choices=["text", "tsv", "jsonl", "parquet"], default="text")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--limit", type=int, default=None,
                   help="text format: show at most N per-query rows (default: all; 12 for the sample)")
    p.add_argument("--list-measures", action="store_true", help="list the measures and exit")


def _read_table(path: str, what: str):
    import pyarrow as pa
    import pyarrow.feather as pf

    from uefast.cli._tables import TEXT_COLUMNS, read_delimited

    from uefast.errors import InputError
    from uefast.inputs import float64_exact, read_parquet

    if not os.path.exists(path):
        raise InputError(f"{what}: file not found: {path!r}")
    low = path.lower()
    try:
        if low.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
            # ids are text (type inference made 0001 the integer 1, no longer the qrels' 0001);
            # a CSV writer drops ".0", so an integer column is a score column like a float one
            t = read_delimited(path, "\t" if low.endswith((".tsv", ".tsv.gz")) else ",", labels=True)
            for i, f in enumerate(t.schema):
                if pa.types.is_integer(f.type) and f.name not in (*TEXT_COLUMNS, "label"):
                    try:
                        t = t.set_column(i, f.name, float64_exact(t[f.name], f.name, path))
                    except RowError as exc:  # named by the file's line
                        raise row_error_in_lines(exc, {path: path}) from None
            return t
        if low.endswith((".feather", ".arrow", ".ipc")):
            return pf.read_table(path)
        return read_parquet(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"{what}: cannot read {path!r}: {exc}") from None


def _check_inputs(args) -> None:
    """One input, and only the options that go with it (nothing given is silently ignored)."""
    from uefast.errors import InputError

    given = [opt for opt, v in (("TABLE", args.table), ("--run", args.run), ("--letor", args.letor))
             if v is not None]  # an empty path is a path (file not found), not "no input"
    if len(given) > 1:
        raise InputError(f"give one input: {' or '.join(given)}, not both")
    if args.letor is None:
        for opt, v in (("--scores", args.scores), ("--group", args.group)):
            if v is not None:
                raise InputError(f"{opt} needs --letor")
    if args.letor is not None and args.qrels:
        raise InputError("--qrels goes with TABLE or --run, not with --letor (its labels are the judgments)")
    run_names(args)  # --names: only with --run, one per file
    if args.limit is not None and args.limit < 0:
        raise InputError(f"--limit must be >= 0, got {args.limit}")
    if args.limit is not None and args.format != "text":
        raise InputError(f"--limit applies to --format text (tsv, jsonl and parquet hold every "
                         f"row), not --format {args.format}")
    if args.mean != "arithmetic" and args.per_query and args.format != "text":
        raise InputError(f"--mean applies to the means; --per-query --format {args.format} "
                         "writes per-query rows only")
    trec = args.run is not None or (args.table is not None and args.qrels)
    if args.queries is not None and not trec:
        raise InputError("--queries applies to TREC-style input (TABLE or --run with --qrels)")
    if args.score_columns is not None and (args.table is None or args.qrels):
        raise InputError("--score-columns applies to a LETOR-style TABLE (without --qrels)")


_TABLE_SUFFIXES = (".parquet", ".pq", ".csv", ".csv.gz", ".tsv", ".tsv.gz", ".feather", ".arrow", ".ipc")


def _read_qrels_arg(path: str):
    """``--qrels``: a table file (by its suffix, or Parquet's magic bytes) or TREC qrels text."""
    from uefast.io import read_qrels

    low = path.lower()
    if low.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")) and not _has_header(path):
        return read_qrels(path)  # TREC qrels that happen to be tab-separated (MS MARCO's qrels.dev.tsv)
    if low.endswith(_TABLE_SUFFIXES) or os.path.isdir(path):
        return _read_table(path, "qrels")
    try:
        with open(path, "rb") as fh:
            if fh.read(4) == b"PAR1":
                return _read_table(path, "qrels")
    except OSError:
        pass  # read_qrels reports it
    return read_qrels(path)


def _has_header(path: str) -> bool:
    """A CSV/TSV table's first line names its columns (qid, docid, label); a TREC qrels line does not."""
    import gzip

    try:
        with (gzip.open if path.lower().endswith(".gz") else open)(path, "rb") as fh:
            first = fh.readline().decode("utf-8", errors="replace")
    except OSError:
        return True  # _read_table reports it
    first = first.lstrip("\ufeff")  # a UTF-8 byte-order mark (Excel's CSV)
    return "qid" in first.replace(",", " ").replace("\t", " ").replace('"', " ").split()


def _key_mismatches(run_schema, qrels):
    """``(name, run_is_int)`` for each of qid / docid held as integers on one side and as text on
    the other (a missing column is left to the evaluation, which names it)."""
    import pyarrow as pa

    for name in ("qid", "docid"):
        if name in run_schema.names and name in qrels.column_names:
            a_int = pa.types.is_integer(run_schema.field(name).type)
            if a_int != pa.types.is_integer(qrels.schema.field(name).type):
                yield name, a_int


def _cast_column(table, name, type_):
    return table.set_column(table.schema.get_field_index(name), name, table[name].cast(type_))


def _align_keys(run_schema, qrels, run=None):
    """qid / docid held as integers by one input and as text by the other (a Parquet run and a
    TREC qrels file): the qrels are read as the run's kind -- text as integers where every id is
    one and no two ids are the same integer (``001`` alone is then 1; ``1`` and ``01`` together
    are two topics, never merged), integers as text -- with a note on stderr. Where the qrels'
    text is not so, the in-memory ``run`` is read as text instead (a streamed run, ``run=None``,
    cannot be: an error). The same rule for both paths, so one input gives one result whatever
    its size. Returns ``(run, qrels)``."""
    import pyarrow as pa

    from uefast.errors import InputError

    import pyarrow.compute as pc

    for name, run_int in _key_mismatches(run_schema, qrels):
        target = pa.int64() if run_int else pa.string()
        try:
            cast = _cast_column(qrels, name, target)
            if run_int:  # text -> integer only where no two texts become one integer ("1" and
                # "01" are two TREC topics, which the cast would merge; "001" alone is topic 1)
                text = qrels[name].cast(pa.string())
                if len(pc.unique(cast[name])) != len(pc.unique(text)):
                    merged = pc.invert(pc.equal(cast[name].cast(pa.string()), text))
                    raise _NotCanonical(text.filter(merged)[0].as_py())
            qrels = cast
            print(f"uefast evaluate: note: qrels column {name!r} read as {target} to match the "
                  f"run", file=sys.stderr)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, _NotCanonical) as exc:
            why = (f"holds {exc.args[0]!r} and another id of the same integer (read as integers "
                   f"they would merge)" if isinstance(exc, _NotCanonical) else "holds text that is not all integers")
            if run is None:
                raise InputError(f"the streamed run's column {name!r} holds integers but the "
                                 f"qrels' {why}; write the run's {name} as text") from None
            run = _cast_column(run, name, pa.string())
            print(f"uefast evaluate: note: run column {name!r} holds integers, the qrels' {name} "
                  f"{why}: compared as decimal text", file=sys.stderr)
    return run, qrels


class _NotCanonical(Exception):
    """Two qrels ids that are the same integer (``1`` and ``01``)."""


def _load(args):
    """Return (run, qrels, kwargs, label) for :func:`uefast.evaluate`."""
    from uefast.errors import InputError

    if args.letor is not None:
        from uefast.io import read_letor

        t = read_letor(args.letor, score_files=args.scores, group_file=args.group)
        return t, None, {}, args.letor
    names = run_names(args)  # (--scores / --group without --letor: refused by _check_inputs)
    if args.run:
        if not args.qrels:
            raise InputError("--run needs --qrels")
        from uefast.io import read_run

        run = read_run(args.run, system=names, nan="error")
        return (*_align_keys(run.schema, _read_qrels_arg(args.qrels), run), {}, " ".join(args.run))
    if args.table is not None:
        t = _read_table(args.table, "table")
        if args.qrels:
            t, qrels = _align_keys(t.schema, _read_qrels_arg(args.qrels), t)
            return t, qrels, {}, args.table
        return t, None, {"score_columns": args.score_columns}, args.table
    if args.qrels:
        raise InputError("--qrels needs a run (TABLE or --run FILE...)")
    from uefast.sample import letor_sample

    return letor_sample(), None, {}, None


def run(args) -> int:
    import uefast

    if args.list_measures:
        from uefast.measures import describe_measures

        print(describe_measures())
        return 0
    if args.diversity_qrels:
        from uefast.cli import _diversity

        return _diversity.run(args, _emit, _tsv_text, _jsonl_text, _text_table)
    args.measures = args.measures or ["nDCG@10", "AP"]
    _check_inputs(args)
    if args.table and _stream_path(args.table):  # (_check_inputs: the only input)
        return _run_streaming(args)
    table, qrels, kw, source = _load(args)
    try:
        res = uefast.evaluate(table, qrels, args.measures, ue=args.ue, ties=args.ties, reb=args.reb,
                              degenerate=args.degenerate, rel_level=args.rel_level,
                              queries=args.queries or "intersect", backend=args.backend, **kw)
    except RowError as exc:  # rows of a CSV/TSV file: named by its line numbers, as elsewhere
        lined = row_error_in_lines(exc, _delimited_inputs(args))
        if lined is None:
            raise
        raise lined from None
    account_unevaluated(res)
    account_dropped(res)
    res = account_coverage(res, args.common_queries)
    means = uefast.aggregate(res, mean=args.mean)
    if args.format == "parquet":
        import pyarrow.parquet as pq

        if not args.output:
            from uefast.errors import InputError

            raise InputError("--format parquet needs --output FILE")
        pq.write_table(res if args.per_query else means, args.output)
        return 0
    res, means = _without_ue(res, args), _without_ue(means, args)
    chosen = res if args.per_query else means
    if args.format in ("tsv", "jsonl"):
        _emit(args.output, _tsv_text(chosen) if args.format == "tsv" else _jsonl_text(chosen))
        return 0
    out = io.StringIO()
    limit = args.limit
    if source is None:
        print("uefast: no input given; evaluating the embedded sample "
              "(uefast.sample.letor_sample(): 60 synthetic queries, 4 systems)\n", file=out)
        if limit is None:
            limit = 12
    if args.per_query or source is None:
        print("per query:", file=out)
        print(_text_table(res, limit), file=out)
        print("", file=out)
    print("mean over queries:", file=out)
    print(_text_table(means, None), file=out)
    _emit(args.output, out.getvalue())
    return 0


def _without_ue(table, args):
    """``--no-ue``: the printed formats (text, tsv, jsonl) leave out the UE columns, which are
    null (Parquet keeps them: one schema)."""
    if args.ue:
        return table
    return table.drop_columns([c for c in ("ue_v1", "ue_v2") if c in table.column_names])


def _delimited_inputs(args) -> dict:
    """``{"run": path, "qrels": path}`` for the inputs read from CSV/TSV tables."""
    csv = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
    out = {}
    if args.table and args.table.lower().endswith(csv):
        out["run"] = args.table
    if args.qrels and args.qrels.lower().endswith(csv) and _has_header(args.qrels):
        out["qrels"] = args.qrels
    return out


def _emit(path, text: str) -> None:
    """Write the finished output to ``path`` or stdout (formatted first: an output that cannot
    be written, e.g. TSV with a tab in a value, leaves no empty file behind)."""
    if path:
        with open(path, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


def _stream_path(path: str) -> bool:
    from uefast.streaming import is_streaming_source

    low = path.lower()
    return (low.endswith(".parquet") or os.path.isdir(path)) and is_streaming_source(path)


def _run_streaming(args) -> int:
    """Large Parquet input: stream it (bounded memory), per-query rows to --output if given."""
    from uefast.errors import InputError
    from uefast.streaming import evaluate_stream

    if args.backend == "cuda":
        raise InputError(f"--backend {args.backend}: streamed input (Parquet over the size "
                         "threshold) is evaluated on the CPU only")
    import pyarrow as pa

    qrels = _read_qrels_arg(args.qrels) if args.qrels else None
    if qrels is not None:  # the run's key kinds from its schema (as the stream opens it,
        # hive partition columns included): align the qrels to them
        from uefast.inputs import parquet_dataset

        try:
            schema = parquet_dataset(args.table).schema
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"table: cannot read {args.table!r}: {exc}") from None
        _, qrels = _align_keys(schema, qrels)
    if args.mean != "arithmetic":
        raise InputError("--mean geometric/harmonic needs the per-query values in memory; "
                         "streaming input (Parquet over the size threshold) accumulates "
                         "arithmetic means: write --per-query Parquet and use uefast.aggregate")
    if args.common_queries:
        raise InputError("--common-queries needs the per-query rows in memory, not streamed input "
                         "(Parquet over the size threshold): run uefast.coverage.common_queries on "
                         "the --per-query --format parquet output, then uefast.aggregate")
    if args.per_query and not (args.output and args.format == "parquet"):
        raise InputError("streaming input (Parquet over the size threshold): per-query output needs "
                         "--format parquet --output FILE")
    out = args.output if args.per_query else None
    try:
        means = evaluate_stream(args.table, qrels, args.measures, out=out, aggregate=not args.per_query,
                                progress=sys.stderr.isatty(), ue=args.ue, ties=args.ties, reb=args.reb,
                                degenerate=args.degenerate, rel_level=args.rel_level,
                                queries=args.queries or "intersect",
                                score_columns=args.score_columns)
    except pa.ArrowInvalid as exc:  # e.g. not Parquet after all
        raise InputError(f"table: cannot read {args.table!r}: {exc}") from None
    account_unevaluated(means)
    account_dropped(means)
    if out is None:
        coverage_note_from_means(means)
        if args.format == "parquet":
            if not args.output:
                raise InputError("--format parquet needs --output FILE")
            import pyarrow.parquet as pq

            pq.write_table(means, args.output)
            return 0
        means = _without_ue(means, args)
        if args.format == "tsv":
            _emit(args.output, _tsv_text(means))
        elif args.format == "jsonl":
            _emit(args.output, _jsonl_text(means))
        else:
            _emit(args.output, "mean over queries:\n" + _text_table(means, None) + "\n")
    return 0


def _fmt(v) -> str:
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.4f}"
    return "" if v is None else str(v)


def _jsonl_text(t) -> str:
    """One JSON object per row (Polars' NDJSON writer: floats at full precision). JSON has no
    NaN: a NaN (``--degenerate nan``) is written as null."""
    import polars as pl

    return pl.from_arrow(t).write_ndjson()


def _tsv_text(t) -> str:
    """The table as tab-separated text with a header line. Floats are written at full precision
    (the shortest text that reads back to the same double; ``nan``, ``inf``): the text format
    rounds to 4 decimals for reading, but TSV is read back, e.g. by ``uefast compare``. Nulls are
    empty cells. A text value holding a tab, a line break or a double quote (which Arrow's
    unquoted writer refuses) is refused, naming it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    from uefast.errors import InputError

    for name in t.column_names:
        col = t[name]
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            bad = pc.match_substring_regex(col, '[\t\n\r"]')
            if pc.any(bad).as_py():
                value = col.filter(bad)[0].as_py()
                raise InputError(f"--format tsv: column {name!r} holds {value!r}, with a tab, a "
                                 f"line break or a double quote; use --format parquet or jsonl")
    buf = io.BytesIO()
    try:
        pacsv.write_csv(t, buf, write_options=pacsv.WriteOptions(
            include_header=False, delimiter="\t", quoting_style="none"))
    except pa.ArrowInvalid as exc:  # any other value the unquoted writer refuses
        raise InputError(f"--format tsv: {exc}; use --format parquet or jsonl") from None
    return "\t".join(t.column_names) + "\n" + buf.getvalue().decode()


def _text_table(t, limit) -> str:
    rows = t.to_pylist()
    shown = rows if limit is None else rows[:limit]
    cells = [t.column_names] + [[_fmt(r[c]) for c in t.column_names] for r in shown]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    if limit is not None and len(rows) > limit:
        lines.append(f"... {len(rows) - limit} more rows (--per-query --limit N to see more)")
    return "\n".join(lines)
