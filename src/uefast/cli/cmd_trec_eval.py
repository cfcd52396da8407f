"""``uefast trec_eval``: a drop-in for NIST trec_eval (same arguments, byte-identical output).

Parses trec_eval's own (GNU getopt) argument syntax, e.g. ``-q -c -M1000 -m all_trec
-mndcg_cut.10,20 qrels run`` (long options may be cut to an unambiguous prefix, ``--query``, as
``getopt_long`` allows), plus uefast options:

* ``--trec-eval-version 10.0|9.0.8`` (default 10.0): 9.0.8 is what pytrec_eval users get; its
  measure table has no unj, rbp, rbp_resid, dcg or ideal_dcg (illegal measures there).
* ``--format text|tsv|jsonl|parquet`` and ``--output PATH`` (parquet needs ``--output``).
* ``-`` as results_file reads the run from standard input (as trec_eval 10.0; with either
  ``--trec-eval-version``).
* several results files (or directories, standing for their files, sorted by name) after the
  qrels: each printed exactly as a separate ``trec_eval qrels run`` would print it, in order, in
  one process (the qrels read once; a failing run is said on stderr and the others go on).
* ``--ue``: after each measure that uefast's engine also computes (map, P_k, ndcg_cut_k,
  recip_rank, Rprec, recall_k, map_cut_k, success_k) print four more lines in the same format:
  ``<name>_iub`` (ideal upper bound), ``<name>_reb`` (random expected baseline),
  ``<name>_ue_v1`` and ``<name>_ue_v2`` (see data_schemas/evaluate_output.md).

Unsupported trec_eval options (``-R`` other than qrels, ``-T`` other than trec_results, ``-Z``,
``-D``, ``-o``) and measures (prefs, qrels_jg families) stop with a message; nothing is silently
computed differently.
"""
from __future__ import annotations

import argparse
import sys

from uefast.errors import InputError, UefastError

NAME = "trec_eval"
HELP = "trec_eval drop-in: same arguments, byte-identical output (+ --ue, --format)"
DESCRIPTION = __doc__
USAGE = ("usage: uefast trec_eval [-h] [-q] [-n] [-c] [-J] [-l <num>] [-M <num>] [-N <num>] "
         "{-m measure[.params]}* [--trec-eval-version 10.0|9.0.8] [--ue] "
         "[--format text|tsv|jsonl|parquet] [--output PATH] rel_info_file results_file|- "
         "[results_file|directory ...]\n")

_SHORT_ARG = set("mlDNMRTZ")
_SHORT_FLAG = set("hvqcnJo")
_LONG = {  # long option -> (short key, takes argument)
    "help": ("h", False), "version": ("v", False), "query_eval_wanted": ("q", False),
    "measure": ("m", True), "complete_rel_info_wanted": ("c", False), "level_for_rel": ("l", True),
    "nosummary": ("n", False), "Debug_level": ("D", True), "Judged_docs_only": ("J", False),
    "Number_docs_in_coll": ("N", True), "Max_retrieved_per_topic": ("M", True),
    "Rel_info_format": ("R", True), "Results_format": ("T", True),
    "Output_old_results_format": ("o", False), "Zscore": ("Z", True),
    "trec-eval-version": ("version_compat", True), "ue": ("ue", False), "format": ("format", True),
    "output": ("output", True),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Discovery protocol: trec_eval parses its own arguments (see :func:`main`)."""
    parser.add_argument("args", nargs=argparse.REMAINDER, help="trec_eval arguments (see uefast trec_eval -h)")


def run(args: argparse.Namespace) -> int:
    """Discovery protocol entry: forwards to :func:`main`."""
    return main(list(args.args))


def _long_name(name: str) -> str:
    """The long option ``--name`` stands for: getopt_long takes an exact name or an unambiguous
    prefix of one (``--query`` for ``--query_eval_wanted``)."""
    if name in _LONG:
        return name
    found = [n for n in _LONG if name and n.startswith(name)]
    if len(found) == 1:
        return found[0]
    if found:
        raise InputError(f"option '--{name}' is ambiguous; possibilities: "
                         f"{' '.join(repr('--' + n) for n in found)}\n{USAGE}")
    raise InputError(f"unknown option '--{name}'\n{USAGE}")


def _parse(argv: list[str]):
    opts: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            pos.extend(argv[i:])
            break
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            name = _long_name(name)
            key, takes = _LONG[name]
            if eq and not takes:
                raise InputError(f"option '--{name}' doesn't allow an argument\n{USAGE}")
            if takes and not eq:
                if i >= len(argv):
                    raise InputError(f"option '--{name}' needs a value")
                val = argv[i]
                i += 1
            opts.append((key, val if takes else None))
        elif a.startswith("-") and a != "-":
            j = 1
            while j < len(a):
                c = a[j]
                j += 1
                if c in _SHORT_FLAG:
                    opts.append((c, None))
                elif c in _SHORT_ARG:
                    val = a[j:]
                    if not val:
                        if i >= len(argv):
                            raise InputError(f"option '-{c}' needs a value\n{USAGE}")
                        val = argv[i]
                        i += 1
                    opts.append((c, val))
                    break
                else:
                    raise InputError(f"invalid option '-{c}'\n{USAGE}")
        else:
            pos.append(a)
    return opts, pos


def _atol(s: str, opt: str) -> int:
    from uefast.trec_eval.registry import c_atol

    return c_atol(s)


def _read_inputs(qrels_path: str, run_path: str):
    """Qrels index and the run file's bytes, the two files read in parallel threads (both
    release the GIL); the run is scanned once the qrels are indexed (``ScannedRun.prepare``), and
    a qrels error is reported first, as when they are read one after the other."""
    from concurrent.futures import ThreadPoolExecutor

    from uefast.trec_eval.prepare import QrelsIndex, ScannedRun

    with ThreadPoolExecutor(2) as ex:
        fr = ex.submit(ScannedRun.read, run_path, extra_columns="ignore")
        fq = ex.submit(QrelsIndex.from_file, qrels_path)
        try:
            qi = fq.result()
        except BaseException:
            fr.cancel()
            raise
        return qi, fr.result()


def main(argv: list[str]) -> int:
    """Run ``uefast trec_eval`` with trec_eval's argument list; returns the exit code."""
    opts, pos = _parse(argv)
    q = complete = judged = False
    summary = True
    level, max_docs, n_coll = 1, None, 0
    measures: list[str] = []
    version, fmt, output, ue = "10.0", "text", None, False
    for key, val in opts:
        if key == "h":
            sys.stdout.write(USAGE + "\n" + (__doc__ or ""))
            return 0
        if key == "v":
            print("uefast trec_eval (trec_eval 10.0 / 9.0.8 compatible)", file=sys.stderr)
            return 0
        if key == "q":
            q = True
        elif key == "c":
            complete = True
        elif key == "J":
            judged = True
        elif key == "n":
            summary = False
        elif key == "m":
            measures.append(val)
        elif key == "l":
            level = _atol(val, "-l")
        elif key == "M":
            max_docs = _atol(val, "-M")
        elif key == "N":
            n_coll = _atol(val, "-N")
        elif key == "R":
            if val != "qrels":
                raise InputError(f"-R {val}: only the 'qrels' rel_info format is supported")
        elif key == "T":
            if val != "trec_results":
                raise InputError(f"-T {val}: only the 'trec_results' results format is supported")
        elif key == "Z":
            raise InputError("-Z (z-score output) is not supported by uefast trec_eval")
        elif key == "D":
            raise InputError("-D (debug output) is not supported by uefast trec_eval")
        elif key == "o":
            raise InputError("-o (old output format) is obsolete in trec_eval and not supported")
        elif key == "version_compat":
            version = val
        elif key == "ue":
            ue = True
        elif key == "format":
            if val not in ("text", "tsv", "jsonl", "parquet"):
                raise InputError(f"--format must be text, tsv, jsonl or parquet, got {val!r}")
            fmt = val
        elif key == "output":
            output = val
    if len(pos) < 2:
        raise InputError(f"expected rel_info_file and results_file, got {len(pos)} file argument(s)\n{USAGE}")
    runs = run_paths(pos[1:])
    if fmt == "parquet" and not output:
        raise InputError("--format parquet needs --output PATH")
    if fmt == "parquet" and len(runs) > 1:
        raise InputError(f"--format parquet writes one results_file; got {len(runs)}")
    if "-" in runs:  # trec_eval 10.0: results_file '-' is standard input
        if runs.count("-") > 1:
            raise InputError("results_file '-' (standard input) can be given once")
        from uefast.io._fast import MemoryFile

        runs[runs.index("-")] = MemoryFile(sys.stdin.buffer.read(), "-")
    if max_docs is not None and max_docs < 0:
        max_docs = 0
    opt = dict(version=version, relevance_level=level, complete=complete, max_docs=max_docs,
               judged_only=judged, num_docs_in_coll=n_coll)
    kw = dict(per_query=q, summary=summary)
    if len(runs) == 1:
        return _one(pos[0], None, runs[0], measures, ue, opt, kw, fmt, output)
    # several results files: the qrels read once, each run printed as `trec_eval qrels run` prints
    # it, in the order given; a failing run is said on stderr (naming it) and the others go on,
    # as in a shell loop, the exit code then 2
    qrels = _qrels_for(pos[0], ue)
    failed = 0
    sink = open(output, "w", encoding="utf-8", newline="") if output else sys.stdout
    try:
        for path in runs:
            try:  # (a closed pipe ends the loop: BrokenPipeError is not caught per run)
                rc = _one(pos[0], qrels, path, measures, ue, opt, kw, fmt, None, sink)
                sink.flush()
                failed += rc != 0
            except UefastError as exc:
                failed += 1
                sink.flush()
                msg = str(exc)
                print(f"uefast trec_eval: error: {msg if str(path) in msg else f'{path}: {msg}'}",
                      file=sys.stderr)
    except BrokenPipeError:
        return 0
    finally:
        if sink is not sys.stdout:
            sink.close()
    return 2 if failed else 0


def run_paths(args: list[str]) -> list[str]:
    """The results files of ``uefast trec_eval qrels RUN...``: each argument a file, or a
    directory standing for its files (not hidden, not in sub-directories), sorted by name."""
    import os

    out = []
    for a in args:
        if os.path.isdir(a):
            names = sorted(n for n in os.listdir(a)
                           if not n.startswith(".") and os.path.isfile(os.path.join(a, n)))
            if not names:
                raise InputError(f"results directory {a!r} holds no files")
            out += [os.path.join(a, n) for n in names]
        else:
            out.append(a)
    return out


def _qrels_for(path: str, ue: bool):
    """The qrels, read once for several runs: a table for ``--ue``, else the index."""
    if ue:
        from uefast.io import read_qrels

        return read_qrels(path, duplicates="keep")
    from uefast.trec_eval.prepare import QrelsIndex

    return QrelsIndex.from_file(path)


def _one(qrels_path, qrels, run_path, measures, ue, opt, kw, fmt, output, sink=None) -> int:
    """Evaluate one results file and write it (``output`` path, ``sink`` open file, or stdout);
    ``qrels``: read already (:func:`_qrels_for`), or None to read ``qrels_path`` here."""
    from uefast.trec_eval import evaluate_trec, output as out_mod, unretrieved

    extra = None
    if ue:
        from uefast.trec_eval.prepare import ScannedRun
        from uefast.trec_eval.ue import ue_extra

        if qrels is None:
            qrels = _qrels_for(qrels_path, True)
        # repeats are judged by evaluate_trec, where trec_eval judges them (evaluated topics, -M);
        # the run as a table (read_run, what the scan falls back to), its errors naming lines
        scanned = ScannedRun(run_path, "ignore")._general()
        run_t = scanned.table
        res = evaluate_trec(scanned, qrels, measures, **opt)
        extra = ue_extra(res, run_t, qrels, relevance_level=opt["relevance_level"],
                         complete=opt["complete"], max_docs=opt["max_docs"],
                         judged_only=opt["judged_only"], version=opt["version"])
    else:
        if qrels is None:
            qi, scanned = _read_inputs(qrels_path, run_path)
        else:
            from uefast.trec_eval.prepare import ScannedRun

            qi, scanned = qrels, ScannedRun.read(run_path, extra_columns="ignore")
        res = evaluate_trec(scanned, qi, measures, **opt)
    kw = dict(kw, extra=extra)
    stop = unretrieved.stop_point(res, version=opt["version"], complete=opt["complete"])
    if stop is not None:  # trec_eval 10.0 prints the topics before it (text), then exits 4
        if fmt != "text":
            print(f"uefast trec_eval: error: {unretrieved.message(stop[0], run_path)}", file=sys.stderr)
            return unretrieved.EXIT_STATUS
        res, kw["extra"] = unretrieved.head(res, stop[1], extra)
        kw["summary"] = False
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(out_mod.to_table(res, **kw), output)
        return 0
    text = {"text": out_mod.format_text, "tsv": out_mod.format_tsv, "jsonl": out_mod.format_jsonl}[fmt](res, **kw)
    if sink is not None:
        sink.write(text)
    elif output:
        with open(output, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    else:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            return 0
    if stop is not None:
        print(f"uefast trec_eval: error: {unretrieved.message(stop[0], run_path)}", file=sys.stderr)
        return unretrieved.EXIT_STATUS
    return 0
