"""``uefast ndeval``: a drop-in for TREC's ``ndeval`` v4.5 (same arguments, byte-identical output).

    uefast ndeval [-alpha a] [-beta b] [-traditional] [-M depth] [-c]
                  [-baseline RUN -riskAlpha a] qrels run

Options as ndeval parses them (each option is taken only while more than the two file names
remain): ``-alpha``/``-beta`` in [0, 1] (default 0.5), ``-traditional`` (rank by score then
docno instead of the rank column), ``-M depth`` (cut each topic's ranking), ``-c`` (average over
every qrels topic), ``-a`` (accepted, no effect, as in ndeval), ``-baseline`` / ``-riskAlpha``
(risk-sensitive output), ``-version``. Reading rules and the two deviations (duplicate judgments
are an error; blank and ``#`` lines are skipped) are in :mod:`uefast.diversity.ndeval_text`.
"""
from __future__ import annotations

import argparse
import sys

NAME = "ndeval"
HELP = "ndeval (TREC diversity) drop-in: same arguments, byte-identical output"
DESCRIPTION = __doc__
USAGE = "Usage: ndeval [options] qrels run   (-help for full usage information)\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Discovery protocol: ndeval parses its own arguments (see :func:`main`)."""
    parser.add_argument("args", nargs=argparse.REMAINDER, help="ndeval arguments")


def run(args: argparse.Namespace) -> int:
    """Discovery protocol entry: forwards to :func:`main`."""
    return main(list(args.args))


def _usage() -> int:
    sys.stderr.write(USAGE)
    return 1


def _c_double(s: str) -> float | None:
    """``sscanf("%lf")``: the longest leading number (None if there is none)."""
    import re

    m = re.match(r"\s*([+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan))", s, re.I)
    return float(m.group(1)) if m else None


def main(argv: list[str]) -> int:
    """Parse ndeval's options as ``ndeval.c``'s ``main`` does, print its output; exit codes 0,
    1 (usage, as ndeval) or 2 (bad input, one line on stderr)."""
    from uefast.diversity.ndeval_text import VERSION, ndeval_text

    opts = dict(alpha=0.5, beta=0.5, traditional=False, depth_m=0, complete=False, baseline=None,
                risk_alpha=0.0, risk_alpha_str="0")
    a = list(argv)
    while len(a) != 2:
        head = a[0] if a else ""
        if head == "-version":
            print(f"ndeval: {VERSION}")
            return 0
        if head in ("-help", "--help", "-h"):  # ndeval's -help; --help and -h as every command
            print(DESCRIPTION)
            return 0
        if len(a) >= 4 and head in ("-alpha", "-beta", "-M", "-baseline", "-riskAlpha"):
            val = a[1]
            if head in ("-alpha", "-beta"):
                x = _c_double(val)
                if x is None or not 0.0 <= x <= 1.0:
                    return _usage()
                opts[head[1:]] = x
            elif head == "-M":
                import re

                m = re.match(r"\s*([+-]?\d+)", val)
                if not m or int(m.group(1)) <= 0:
                    return _usage()
                opts["depth_m"] = int(m.group(1))
            elif head == "-baseline":
                opts["baseline"] = val
            else:
                x = _c_double(val)
                if x is None or x < 0.0:
                    return _usage()
                opts["risk_alpha"], opts["risk_alpha_str"] = x, val
            a = a[2:]
        elif len(a) >= 3 and head == "-traditional":
            opts["traditional"] = True
            a = a[1:]
        elif len(a) >= 3 and head.startswith("-") and len(head) > 1 and set(head[1:]) <= {"a", "c"}:
            if "c" in head:
                opts["complete"] = True
            a = a[1:]
        else:
            return _usage()
    sys.stdout.write(ndeval_text(a[0], a[1], **opts))
    sys.stdout.flush()
    return 0
