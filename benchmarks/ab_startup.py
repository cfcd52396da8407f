"""Cold (empty Numba cache) first call and warm engine time of several source trees, interleaved.

    python benchmarks/ab_startup.py cold  -n 3 SRC_A SRC_B ...   # first-ever call, each tree
    python benchmarks/ab_startup.py warm  -n 5 SRC_A SRC_B ...   # the core workload, warm cache
    python benchmarks/ab_startup.py warm  -n 5 SRC_A SRC_B --measures NCU Pmeasure  # others
    python benchmarks/ab_startup.py cold-trec -n 3 SRC_A SRC_B ...  # first-ever uefast trec_eval
    python benchmarks/ab_startup.py warm-trec -n 3 SRC_A SRC_B ...  # 17 Robust runs, warm cache

``SRC_*`` are ``src`` folders (put first on ``PYTHONPATH``). ``cold``: per round and tree, a new
empty ``NUMBA_CACHE_DIR`` (deleted after), then in a fresh process ``uefast evaluate`` (the embedded
sample) and ``uefast.evaluate`` of nDCG@10 + AP on a 50-query MSLR-shaped table; prints the
process's CPU time (user + system, children included) and wall time. ``warm``: one cache per tree
(filled by a first call), then per round and tree a fresh process that times the core
benchmark's one-system workload (benchmarks/test_bench_core.py, ``UEFAST_BENCH_SMALL=1`` size:
300 queries, or ``--queries``; nDCG@10 + AP, or the ``--measures``, with IUB/REB/UE), best of 20
calls for each tie policy of ``--ties``, CPU (``time.process_time``) and wall. ``cold-trec``: as
``cold``, the process running ``uefast trec_eval`` on the TREC 2003 Robust qrels and one run
(NLPR03vb10) from ``UEFAST_SHARED_DATA``. ``warm-trec``: ``evaluate_trec_files`` of the 17 Robust
runs (official measures, one worker), best of 5 CPU. The machine is shared: compare trees within a
round, give ratios.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

COLD = r"""
import sys
sys.path.insert(0, %r)
from _data import mslr_table
import uefast
from uefast.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main(["evaluate"])
t = mslr_table(50, 1).select(["qid", "docid", "label", "sys0"])
uefast.evaluate(t, measures=["nDCG@10", "AP"])
""" % str(HERE)

_DATA = Path(os.environ.get("UEFAST_SHARED_DATA", HERE.parent.parent / "shared" / "data"))
ROBUST = _DATA / "trec2003_robust"

COLD_TREC = r"""
import contextlib, io
from uefast.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["trec_eval", %r, %r])
if code:
    raise SystemExit(f"uefast trec_eval exited {code}")
""" % (str(ROBUST / "robust03_qrels.txt"), str(ROBUST / "runs" / "input.NLPR03vb10.gz"))

WARM_TREC = r"""
import glob, time
from uefast.trec_eval import evaluate_trec_files
runs = sorted(glob.glob(%r))
assert len(runs) == 17, runs
qrels = %r
evaluate_trec_files(qrels, runs, ["official"], workers=1)
cpu, wall = [], []
for _ in range(5):
    c0, w0 = time.process_time(), time.perf_counter()
    evaluate_trec_files(qrels, runs, ["official"], workers=1)
    cpu.append(time.process_time() - c0)
    wall.append(time.perf_counter() - w0)
print(min(cpu), min(wall))
""" % (str(ROBUST / "runs" / "*"), str(ROBUST / "robust03_qrels.txt"))

WARM = r"""
import sys, time
sys.path.insert(0, %r)
from _data import mslr_table
import uefast
t = mslr_table(NQ).select(["qid", "docid", "label", "sys0"])
for ties in TIES:
    uefast.evaluate(t, measures=MEASURES, ties=ties)
    cpu, wall = [], []
    for _ in range(20):
        c0, w0 = time.process_time(), time.perf_counter()
        uefast.evaluate(t, measures=MEASURES, ties=ties)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    print(min(cpu), min(wall))
""" % str(HERE)


def _child(code: str, src: str, cache: str) -> tuple[float, float, str]:
    env = dict(os.environ, PYTHONPATH=src, NUMBA_CACHE_DIR=cache, UEFAST_BENCH_SMALL="1")
    env.pop("UEFAST_KERNEL_FAMILIES", None)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True).stdout
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, wall, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["cold", "warm", "cold-trec", "warm-trec"])
    ap.add_argument("srcs", nargs="+")
    ap.add_argument("-n", type=int, default=3, help="rounds")
    ap.add_argument("--cache-root", default=None, help="where the temporary caches go")
    ap.add_argument("--ties", default="trec_eval",
                    help="warm: the workload's tie policies, comma-separated")
    ap.add_argument("--queries", type=int, default=300,
                    help="warm: queries of the table (300: the small mode's)")
    ap.add_argument("--measures", nargs="+", default=["nDCG@10", "AP"],
                    help="warm: the workload's measures (default nDCG@10 AP)")
    a = ap.parse_args(argv)
    print(f"load average {os.getloadavg()}", flush=True)
    ties = a.ties.split(",") if a.mode == "warm" else ["-"]
    warm = (WARM.replace("TIES", repr(ties)).replace("NQ", str(a.queries))
            .replace("MEASURES", repr(a.measures)))
    if a.mode == "warm-trec":
        warm = WARM_TREC
    cold = COLD_TREC if a.mode == "cold-trec" else COLD
    res = {(s, t): [] for s in a.srcs for t in ties}
    caches = {}
    if a.mode.startswith("warm"):
        for s in a.srcs:
            caches[s] = tempfile.mkdtemp(dir=a.cache_root)
            _child(warm.replace("range(20)", "range(1)"), s, caches[s])
    try:
        for r in range(a.n):
            for s in (a.srcs if r % 2 == 0 else a.srcs[::-1]):
                if a.mode.startswith("cold"):
                    cache = tempfile.mkdtemp(dir=a.cache_root)
                    try:
                        cpu, wall, _ = _child(cold, s, cache)
                    finally:
                        shutil.rmtree(cache, ignore_errors=True)
                    got = [(cpu, wall)]
                else:
                    _, _, out = _child(warm, s, caches[s])
                    got = [tuple(map(float, line.split())) for line in out.split("\n") if line]
                for t, (cpu, wall) in zip(ties, got):
                    res[s, t].append((cpu, wall))
                    print(f"round {r} {s} {t}: CPU {cpu:.4f} s, wall {wall:.4f} s", flush=True)
    finally:
        for c in caches.values():
            shutil.rmtree(c, ignore_errors=True)
    for t in ties:
        base = statistics.median(c for c, _ in res[a.srcs[0], t])
        for s in a.srcs:
            cpus = [c for c, _ in res[s, t]]
            walls = [w for _, w in res[s, t]]
            print(f"{s} {t}: CPU median {statistics.median(cpus):.4f} s (min {min(cpus):.4f}), "
                  f"wall median {statistics.median(walls):.4f} s; CPU ratio to the first "
                  f"{statistics.median(cpus) / base:.3f}")
    print(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
