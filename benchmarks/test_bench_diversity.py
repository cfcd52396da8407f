"""Benchmark: the ndeval suite (21 measures per topic, 50 topics) on the 8 official TREC 2012 Web
baseline runs x 2012 qrels-for-ndeval, end to end (file parsing included): ``uefast ndeval``'s
code path (qrels read once, each run read, evaluated and printed as ndeval's text) vs pyndeval
0.0.8 (qrels and runs read by a plain Python reader into its tuples, then its C ndeval).

Run:  ``python -m pytest benchmarks/test_bench_diversity.py --benchmark-only`` (pytest-benchmark),
or ``python benchmarks/test_bench_diversity.py`` for a one-shot table (best of N).
``UEFAST_BENCH_SMALL=1``: two runs, one repetition. Figures: ``benchmarks/RESULTS_diversity.md``.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

DATA = Path(os.environ.get("UEFAST_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
SMALL = os.environ.get("UEFAST_BENCH_SMALL") == "1"


def _files():
    q = DATA / "trec_web_diversity_2009_2014" / "2012" / "qrels-for-ndeval.txt"
    rdir = DATA / "trec_web2012_baseline_runs"
    if not q.exists():
        pytest.skip(f"TREC 2012 diversity data not found under {DATA}")
    runs = sorted(rdir.glob("*/*.txt"))
    return q, runs[:2] if SMALL else runs


def run_uefast(qrels_path, run_paths):
    """ndeval's complete text for each run (qrels parsed and compiled once)."""
    from uefast.diversity.ndeval_text import ndeval_text, read_ndeval_qrels

    nq = read_ndeval_qrels(qrels_path)
    return [ndeval_text(qrels_path, p, nq=nq) for p in run_paths]


def run_pyndeval(qrels_path, run_paths):
    """pyndeval's values for each run (its reader-less API: tuples from a Python line reader)."""
    import pyndeval

    qrels = []
    with open(qrels_path) as f:
        for line in f:
            t, s, d, g = line.split()
            qrels.append((t, s, d, int(g)))
    ev = pyndeval.RelevanceEvaluator(qrels)
    out = []
    for p in run_paths:
        run = []
        with open(p) as f:
            for line in f:
                t, _, d, _, s, _ = line.split()
                run.append((t, d, float(s)))
        out.append(ev.evaluate(run))
    return out


@pytest.mark.parametrize("impl", ["uefast", "pyndeval"])
def test_bench_ndeval_suite(benchmark, impl):
    pytest.importorskip("pytest_benchmark")
    if impl == "pyndeval":
        pytest.importorskip("pyndeval")
    q, runs = _files()
    fn = run_uefast if impl == "uefast" else run_pyndeval
    fn(q, runs[:1])  # warm: Numba's on-disk cache loaded, files in the page cache
    benchmark.pedantic(fn, args=(q, runs), rounds=1 if SMALL else 5, iterations=1)


def main(reps: int = 9) -> None:
    """Interleaved repetitions (uefast, pyndeval, uefast, ...) so that a shared host's load
    changes hit both; best and median of each, and the ratio of the bests."""
    import statistics

    q, runs = _files()
    impls = (("uefast ndeval", run_uefast), ("pyndeval", run_pyndeval))
    times = {name: [] for name, _ in impls}
    cpu = {name: [] for name, _ in impls}
    for _, fn in impls:
        fn(q, runs[:1])
    for _ in range(1 if SMALL else reps):
        for name, fn in impls:
            t0, c0 = time.perf_counter(), time.process_time()
            fn(q, runs)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)  # both are single-threaded here
    for k, v in times.items():
        print(f"{k:14s} wall best {min(v) * 1000:7.1f} ms  median {statistics.median(v) * 1000:7.1f} ms"
              f"  CPU best {min(cpu[k]) * 1000:7.1f} ms  ({len(runs)} runs)")
    u, p = times["uefast ndeval"], times["pyndeval"]
    print(f"speed-up: wall best/best {min(p) / min(u):.2f}x, median/median "
          f"{statistics.median(p) / statistics.median(u):.2f}x; CPU best/best "
          f"{min(cpu['pyndeval']) / min(cpu['uefast ndeval']):.2f}x")


if __name__ == "__main__":
    main()
