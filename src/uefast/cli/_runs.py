"""``--run FILE... [--names NAME...]``: the TREC run files of a command, their system names, and
what became of the rows of an evaluation (skipped or dropped: said on stderr, never silent).

Toolkits often write one fixed runid on every line (Indri: ``indri``, Anserini: ``Anserini``), so
two of their runs cannot be told apart by it; ``--names`` gives each file its own name.
"""
from __future__ import annotations

import json
import sys

from uefast.errors import InputError

NAMES_HELP = ("system names for the --run files, one per file (default: each line's runid; "
              "needed when two files share a runid, e.g. 'indri')")


def add_names_argument(parser) -> None:
    """Add ``--names NAME...`` (see :func:`run_names`)."""
    parser.add_argument("--names", nargs="+", action="extend", metavar="NAME", help=NAMES_HELP)


def run_names(args) -> list[str] | None:
    """The ``--names`` given for the ``--run`` (or, ``uefast compare``, ``--trec-eval``) files,
    checked (one distinct name per file), or None: each file's runid names its system."""
    if args.names is None:
        return None
    files = args.run or getattr(args, "trec_eval", None)
    if not files:
        raise InputError("--names needs --run FILE..." + (
            " or --trec-eval FILE..." if hasattr(args, "trec_eval") else ""))
    if len(args.names) != len(files):
        kind = "run" if args.run else "trec_eval output"
        raise InputError(f"--names: {len(files)} {kind} files but {len(args.names)} names")
    if len(set(args.names)) != len(args.names):
        dup = next(n for n in args.names if args.names.count(n) > 1)
        raise InputError(f"--names: {dup!r} given twice")
    return list(args.names)


def _info(res) -> dict:
    """The row accounting an evaluation table carries (metadata ``uefast.info``)."""
    return json.loads((res.schema.metadata or {}).get(b"uefast.info", b"{}"))


def account_unevaluated(res) -> None:
    """TREC-style input: say on stderr which run rows were not evaluated (queries without any
    relevance judgment, skipped as trec_eval skips them), and fail, as trec_eval does, when no
    query is left (the run and the qrels are of different topic sets, or swapped)."""
    info = _info(res)
    rows = info.get("run_rows_query_not_in_qrels", 0)
    if not rows:
        return
    nq = info["run_queries_not_in_qrels"]
    rows_s = f"{rows:,} run row{'' if rows == 1 else 's'}"
    queries_s = f"{nq:,} quer{'y' if nq == 1 else 'ies'}"
    if res.num_rows == 0 and info.get("rows_evaluated") == 0:
        raise InputError(f"no query of the run is in the qrels ({rows_s} of {queries_s}, none "
                         f"judged): run and qrels swapped, or of different tracks?")
    print(f"uefast: note: {rows_s} of {queries_s} not in the qrels not evaluated (as in "
          f"trec_eval); the table metadata 'uefast.info' counts every row", file=sys.stderr)


def account_dropped(res) -> None:
    """``--degenerate drop``: say on stderr how many rows were left out (never silently)."""
    info = _info(res)
    n = info.get("dropped_degenerate_rows", 0)
    if n:
        total = n + info.get("output_rows", res.num_rows)
        print(f"uefast: note: {n:,} of {total:,} (system, query, measure) rows dropped "
              f"as degenerate (IUB = REB: every ranking of the query scores the same; "
              f"--degenerate drop); the table metadata 'uefast.dropped' lists them",
              file=sys.stderr)


def _systems_text(per_system: dict) -> str:
    items = list(per_system.items())
    shown = ", ".join(f"{s} {n}" for s, n in items[:4])
    return shown + (f", ... ({len(items)} systems)" if len(items) > 4 else "")


def account_coverage(res, common: bool):
    """Systems evaluated on different queries: a note on stderr (their means are over different
    query sets), or with ``common`` (``--common-queries``) the rows of the queries common to all
    systems (per measure; :func:`uefast.coverage.common_queries`), said on stderr too. Returns
    the table to aggregate."""
    from uefast.coverage import common_queries, query_coverage

    cov = [c for c in query_coverage(res) if c.differs]
    if not cov:
        return res
    c = cov[0]
    if not common:
        print(f"uefast: note: the systems were evaluated on different queries ({c.measure}: "
              f"{_systems_text(c.per_system)}; {c.n_common} common to all): each mean is over "
              f"its own system's queries; --common-queries averages over the common ones only",
              file=sys.stderr)
        return res
    kept = common_queries(res)
    if kept.num_rows == 0:
        raise InputError(f"--common-queries: no query is common to all systems ({c.measure}: "
                         f"{_systems_text(c.per_system)})")
    print(f"uefast: note: --common-queries: means over the {c.n_common} queries common to all "
          f"systems ({c.measure}: {_systems_text(c.per_system)}); {res.num_rows - kept.num_rows:,} "
          f"rows left out", file=sys.stderr)
    return kept


def coverage_note_from_means(means) -> None:
    """Streamed input gives means only: a note where a measure's ``n_queries`` differs between
    systems."""
    import pyarrow.compute as pc

    for m in dict.fromkeys(means["measure"].to_pylist()):
        t = means.filter(pc.equal(means["measure"], m))
        n = dict(zip(t["system"].to_pylist(), t["n_queries"].to_pylist()))
        if len(set(n.values())) > 1:
            print(f"uefast: note: the systems were evaluated on different numbers of queries "
                  f"({m}: {_systems_text(n)}): each mean is over its own system's queries",
                  file=sys.stderr)
            return
