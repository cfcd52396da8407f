"""``--run FILE... [--names NAME...]``: the TREC run files of a command and their system names.

Toolkits often write one fixed runid on every line (Indri: ``indri``, Anserini: ``Anserini``), so
two of their runs cannot be told apart by it; ``--names`` gives each file its own name.
"""
from __future__ import annotations

from uefast.errors import InputError

NAMES_HELP = ("system names for the --run files, one per file (default: each line's runid; "
              "needed when two files share a runid, e.g. 'indri')")


def add_names_argument(parser) -> None:
    """Add ``--names NAME...`` (see :func:`run_names`)."""
    parser.add_argument("--names", nargs="+", metavar="NAME", help=NAMES_HELP)


def run_names(args) -> list[str] | None:
    """The ``--names`` given for the ``--run`` files, checked (one distinct name per file), or
    None: each line's runid names its system."""
    if args.names is None:
        return None
    if not args.run:
        raise InputError("--names needs --run FILE...")
    if len(args.names) != len(args.run):
        raise InputError(f"--names: {len(args.run)} run files but {len(args.names)} names")
    if len(set(args.names)) != len(args.names):
        dup = next(n for n in args.names if args.names.count(n) > 1)
        raise InputError(f"--names: {dup!r} given twice")
    return list(args.names)
