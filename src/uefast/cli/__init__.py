"""Command-line interface: ``uefast <command> ...``.

Each sub-command lives in its own module ``uefast.cli.cmd_<name>`` and defines

* ``NAME`` (the sub-command, e.g. ``"trec_eval"``), ``HELP`` (one line),
* ``add_arguments(parser)`` (argparse set-up; keep imports of heavy modules out of it),
* ``run(args) -> int`` (the exit code).

Modules are discovered at start-up, so adding a command never touches this file.
Exit codes: 0 success; 2 bad usage or bad input (one line on stderr naming the problem).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import sys

from uefast.errors import UefastError

__all__ = ["main", "build_parser"]

FIRST_USE_NOTICE = ("uefast: compiling the Numba kernels for first use (about 30-60 s, once; "
                    "later runs load them from the on-disk cache) ...")


@contextlib.contextmanager
def first_use_notice(stream=None):
    """On an interactive terminal, print :data:`FIRST_USE_NOTICE` once if Numba starts
    compiling (a cache miss: the first run after installing or upgrading), so that a silent
    half-minute is not taken for a hang. Scripts and pipes (not a TTY) see nothing. Uses Numba's
    event API (``numba:compile``)."""
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        yield
        return
    from numba.core import event

    class _Notice(event.Listener):
        said = False

        def on_start(self, ev):
            if not self.said:
                self.said = True
                print(FIRST_USE_NOTICE, file=stream, flush=True)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", _Notice()):
        yield


def _command_modules(only: str | None = None):
    """The command modules ``uefast.cli.cmd_*`` in name order; with ``only``, just the command
    of that name when it exists (so ``uefast evaluate ...`` imports one command module, not all;
    ``uefast --help`` and an unknown command still see every one)."""
    import uefast.cli as pkg

    names = sorted(i.name for i in pkgutil.iter_modules(pkg.__path__) if i.name.startswith("cmd_"))
    if only is not None and f"cmd_{only}" in names:
        names = [f"cmd_{only}"]
    for name in names:
        yield importlib.import_module(f"uefast.cli.{name}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``uefast`` argument parser; ``only``: the command given (``argv[0]``), whose
    sub-parser alone is built when it names a command (see :func:`_command_modules`)."""
    from uefast import __version__

    parser = argparse.ArgumentParser(
        prog="uefast",
        description="Fast, exact IR evaluation with IUB/REB and UE (upper & expected value) scores.",
    )
    parser.add_argument("--version", action="version", version=f"uefast {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules(only):
        p = sub.add_parser(
            mod.NAME,
            help=mod.HELP.replace("%", "%%"),  # argparse %-formats help strings ("95% CI")
            description=getattr(mod, "DESCRIPTION", mod.HELP),
            epilog=getattr(mod, "EPILOG", None),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``uefast ARGV...``; returns the exit code. Called without ``argv`` (the ``uefast``
    script, ``python -m uefast``), ``trec_eval`` and ``ndeval`` end the process themselves once
    their output is flushed (:func:`_exit_now`)."""
    as_process = argv is None
    argv = sys.argv[1:] if argv is None else argv
    # ``uefast trec_eval`` must accept trec_eval's own argument syntax (e.g. ``-mP.5``), so it
    # parses its own arguments.
    # ``uefast ndeval`` likewise takes ndeval's (``-alpha 0.5 -traditional qrels run``).
    if argv and argv[0] in ("trec_eval", "ndeval"):
        code = _self_parsing(argv)
        if as_process:
            _exit_now(code)
        return code
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    _defer_numba_blas_probe()
    try:
        with first_use_notice():
            return int(args._run(args) or 0)
    except UefastError as exc:
        print(f"uefast {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `uefast evaluate | head`
        return 0
    except OSError as exc:  # e.g. --output into a missing directory, --out naming a file
        print(f"uefast {args.command}: error: {_os_error(exc)}", file=sys.stderr)
        return 2


def _self_parsing(argv: list[str]) -> int:
    """``uefast trec_eval`` / ``uefast ndeval``: the command's own parser and its errors."""
    cmd = importlib.import_module(f"uefast.cli.cmd_{argv[0]}")
    _defer_numba_blas_probe()
    try:
        with first_use_notice():
            return cmd.main(argv[1:])
    except UefastError as exc:
        print(f"uefast {argv[0]}: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_status", 2)  # trec_eval's own status where it has one
    except BrokenPipeError:
        return 0
    except OSError as exc:  # e.g. --output into a missing directory
        print(f"uefast {argv[0]}: error: {_os_error(exc)}", file=sys.stderr)
        return 2


def _exit_now(code: int) -> None:
    """Flush stdout and stderr and end the process with ``code`` (``os._exit``), skipping the
    interpreter's teardown: freeing Numba's dispatchers and LLVM modules one by one took ~0.13 s
    of CPU, a fifth of a warm ``uefast trec_eval`` (benchmarks/RESULTS_startup.md). Only for
    commands that leave nothing to clean up: their files are closed when they return, they start
    no process, thread pool or temporary file that outlives them. A closed pipe on the flush
    (``| head``) is not an error, as in the commands themselves."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream
            pass
    os._exit(code)


def _defer_numba_blas_probe() -> None:
    """Before a command runs (not for ``--help`` or ``--version``, which import no Numba): no SciPy
    import on the first jitted call (:mod:`uefast.cli._startup`, ~0.15 s of start-up)."""
    from uefast.cli._startup import defer_numba_blas_probe

    defer_numba_blas_probe()


def _os_error(exc: OSError) -> str:
    """One line for a file-system error: what, and the path."""
    what = exc.strerror or str(exc)
    return f"{what}: {exc.filename!r}" if exc.filename else what


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
