"""Warm start-up of ``uefast`` commands: CPU (user + sys of the child) and wall time of repeated
runs, the compared trees interleaved run by run (a loaded host slows them alike).

    python benchmarks/startup.py [-n 7] [--tree LABEL=SRC_DIR:NUMBA_CACHE_DIR ...] [-- COMMAND...]

Without ``--tree``: this checkout's ``src`` with ``$NUMBA_CACHE_DIR``. Without a command: ``python
-c pass``, ``import numba``, ``uefast --version``, ``uefast trec_eval`` on one small TREC 2003
Robust run (``$UEFAST_SHARED_DATA``) and ``uefast evaluate`` (embedded sample). Run each command
once first (``-n`` counts the timed runs after it) so that the Numba cache is filled. Prints the
median and minimum per command and tree, and the load average. Figures:
``benchmarks/RESULTS_startup.md``.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("UEFAST_SHARED_DATA", ROOT.parent / "shared" / "data"))


def _commands():
    robust = DATA / "trec2003_robust"
    py = sys.executable
    cmds = {"python -c pass": [py, "-c", "pass"],
            "import numba": [py, "-c", "import numba"],
            "uefast --version": [py, "-m", "uefast", "--version"]}
    if robust.exists():
        cmds["uefast trec_eval (1 run)"] = [py, "-m", "uefast", "trec_eval", str(robust / "robust03_qrels.txt"),
                                            str(robust / "runs" / "input.NLPR03vb10.gz")]
    cmds["uefast evaluate (sample)"] = [py, "-m", "uefast", "evaluate"]
    return cmds


def _timed(cmd, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = os.times().elapsed
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = os.times().elapsed - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7, help="timed runs per command and tree")
    ap.add_argument("--tree", action="append", default=[],
                    help="LABEL=SRC_DIR:NUMBA_CACHE_DIR (repeatable); default: this checkout")
    ap.add_argument("command", nargs="*", help="one command to time instead of the default set")
    args = ap.parse_args(argv)
    trees = []
    for spec in args.tree or [f"this={ROOT / 'src'}:{os.environ.get('NUMBA_CACHE_DIR', '')}"]:
        label, _, rest = spec.partition("=")
        src, _, cache = rest.partition(":")
        env = dict(os.environ, PYTHONPATH=src)
        if cache:
            env["NUMBA_CACHE_DIR"] = cache
        trees.append((label, env))
    cmds = {" ".join(args.command): args.command} if args.command else _commands()
    times = {(c, t): [] for c in cmds for t, _ in trees}
    for name, cmd in cmds.items():
        for label, env in trees:
            _timed(cmd, env)  # fills the Numba cache, warms the file cache
    for _ in range(args.n):
        for name, cmd in cmds.items():
            for label, env in trees:
                times[name, label].append(_timed(cmd, env))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.n} runs each")
    for (name, label), ts in times.items():
        walls, cpus = [w for w, _ in ts], [c for _, c in ts]
        print(f"{name:28s} {label:8s} CPU median {statistics.median(cpus):.3f} s (min {min(cpus):.3f})  "
              f"wall median {statistics.median(walls):.3f} s (min {min(walls):.3f})")


if __name__ == "__main__":
    main()
