"""Benchmark: TREC 2003 Robust (17 runs, 100 topics, 1.51 M run lines), trec_eval's default
("official") measure set, end to end (file parsing included), uefast vs pytrec_eval vs ir_measures.

Run:  ``python -m pytest benchmarks/test_bench_trec.py --benchmark-only``  (pytest-benchmark), or
``python benchmarks/test_bench_trec.py`` for a one-shot table.  Data: ``$UEFAST_SHARED_DATA``
(default ``<repo>/../shared/data``).  Figures: ``benchmarks/RESULTS_trec.md``.
"""
from __future__ import annotations

import gzip
import io
import os
import time
from pathlib import Path

import pytest

DATA = Path(os.environ.get("UEFAST_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
ROBUST = DATA / "trec2003_robust"
OFFICIAL_PYTREC = {"map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "num_ret",
                   "num_rel", "num_rel_ret"}


def _files():
    if not ROBUST.exists():
        pytest.skip(f"TREC 2003 Robust data not found under {ROBUST}")
    return ROBUST / "robust03_qrels.txt", sorted((ROBUST / "runs").glob("input.*.gz"))


def run_uefast(qrels_path, run_paths, version="10.0"):
    """Parse qrels + each run (fused scan, files in parallel threads), evaluate the official
    measures, format trec_eval's per-topic text output."""
    from uefast.trec_eval import evaluate_trec_files, format_text

    return [format_text(res, per_query=True)
            for res in evaluate_trec_files(qrels_path, run_paths, ["official"], version=version)]


def run_uefast_zlib(qrels_path, run_paths, version="10.0"):
    """:func:`run_uefast` with the standard-library zlib even where ``isal`` is installed."""
    import zlib

    from uefast.io import _fast

    saved, _fast._zlib = _fast._zlib, zlib
    try:
        return run_uefast(qrels_path, run_paths, version)
    finally:
        _fast._zlib = saved


def run_uefast_arrow(qrels_path, run_paths, version="10.0"):
    """The Arrow-table API: ``read_qrels`` / ``read_run`` tables, then :func:`evaluate_trec`."""
    from uefast.io import read_qrels, read_run
    from uefast.trec_eval import QrelsIndex, evaluate_trec, format_text

    qi = QrelsIndex.build(read_qrels(qrels_path))
    return [format_text(evaluate_trec(read_run(p), qi, ["official"], version=version), per_query=True)
            for p in run_paths]


def run_pytrec_eval(qrels_path, run_paths):
    """pytrec_eval: its own dict parsers (parse_qrel / parse_run), RelevanceEvaluator per run."""
    import pytrec_eval

    with open(qrels_path) as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    ev = pytrec_eval.RelevanceEvaluator(qrels, OFFICIAL_PYTREC)
    out = []
    for p in run_paths:
        with io.TextIOWrapper(gzip.open(p)) as fh:
            run = pytrec_eval.parse_run(fh)
        out.append(ev.evaluate(run))
    return out


def run_ir_measures(qrels_path, run_paths):
    """ir_measures: read_trec_qrels / read_trec_run, calc_aggregate with the official set."""
    import ir_measures
    from ir_measures import AP, IPrec, NumRel, NumRelRet, NumRet, P, Rprec, RR, Bpref

    measures = [AP, Rprec, Bpref, RR, NumRet, NumRel, NumRelRet]
    measures += [P @ k for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    measures += [IPrec @ (i / 10) for i in range(11)]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    out = []
    for p in run_paths:
        with io.TextIOWrapper(gzip.open(p)) as fh:
            run = list(ir_measures.read_trec_run(fh.read()))
        out.append(ir_measures.calc_aggregate(measures, qrels, run))
    return out


def test_bench_uefast(benchmark):
    q, r = _files()
    run_uefast(q, r[:1])  # JIT warm-up (cached on disk after the first run)
    benchmark.group = "robust03-official"
    benchmark.pedantic(run_uefast, args=(q, r), rounds=3, iterations=1)


def test_bench_uefast_arrow_api(benchmark):
    q, r = _files()
    run_uefast_arrow(q, r[:1])
    benchmark.group = "robust03-official"
    benchmark.pedantic(run_uefast_arrow, args=(q, r), rounds=1, iterations=1)


def test_bench_pytrec_eval(benchmark):
    pytest.importorskip("pytrec_eval")
    q, r = _files()
    benchmark.group = "robust03-official"
    benchmark.pedantic(run_pytrec_eval, args=(q, r), rounds=1, iterations=1)


def test_bench_ir_measures(benchmark):
    pytest.importorskip("ir_measures")
    q, r = _files()
    benchmark.group = "robust03-official"
    benchmark.pedantic(run_ir_measures, args=(q, r), rounds=1, iterations=1)


if __name__ == "__main__":  # table: best of N rounds, tools interleaved within each round
    import sys

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    q, r = _files()
    run_uefast(q, r[:1])
    run_uefast_arrow(q, r[:1])
    tools = [("uefast (files, fused scan)", run_uefast), ("uefast, stdlib zlib", run_uefast_zlib),
             ("uefast (Arrow tables API)", run_uefast_arrow), ("pytrec_eval", run_pytrec_eval),
             ("ir_measures", run_ir_measures)]
    best = {name: float("inf") for name, _ in tools}
    for _ in range(rounds):
        for name, fn in tools:
            t0 = time.perf_counter()
            fn(q, r)
            best[name] = min(best[name], time.perf_counter() - t0)
    print(f"load average: {os.getloadavg()}")
    for name, _ in tools:
        print(f"{name:28s} {best[name]:8.3f} s  {best[name] / best[tools[0][0]]:6.1f}x")
