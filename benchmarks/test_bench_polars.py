"""Polars expression path vs the core path on the 31,531-query MSLR-shaped table (issue 6).

Workload: one system (``sys0``), nDCG@10 + AP with IUB, REB, UE V1/V2, trec_eval ties (docid).
* core:   ``uefast.evaluate(arrow_table)``;
* polars: ``df.group_by("qid").agg(uefast.polars.measures(...))`` (one kernel call for all groups);
* polars frame: ``uefast.polars.evaluate(df)`` (long table, same as core).
Target: polars / core <= 1.5. Run:

    python -m pytest benchmarks/test_bench_polars.py --benchmark-only -s
    UEFAST_BENCH_SMALL=1 python -m pytest benchmarks/test_bench_polars.py --benchmark-disable
"""
from __future__ import annotations


import polars as pl

import uefast
import uefast.polars as uep
from _data import N_QUERIES, best_time, mslr_table

MEASURES = ["nDCG@10", "AP"]
STATS = ("value", "iub", "reb", "ue_v1", "ue_v2")
TIMES: dict[str, float] = {}


def _data():
    t = mslr_table().select(["qid", "docid", "label", "sys0"])
    return t, pl.from_arrow(t)


def _timed(name, fn, rounds=5):
    fn()  # warm-up (JIT cache, allocator)
    TIMES[name] = best_time(fn, rounds)


def _bench(benchmark, name, fn, rows):
    benchmark.pedantic(lambda: _timed(name, fn), rounds=1, iterations=1)
    benchmark.extra_info["rows"] = rows
    if name in TIMES:
        benchmark.extra_info["rows_per_s"] = rows / TIMES[name]


def test_core(benchmark):
    t, _ = _data()
    _bench(benchmark, "core", lambda: uefast.evaluate(t, measures=MEASURES), t.num_rows)


def test_polars_group_by_agg(benchmark):
    t, df = _data()
    expr = uep.measures("label", "sys0", MEASURES, stats=STATS, docid="docid")
    _bench(benchmark, "polars agg", lambda: df.group_by("qid").agg(expr), t.num_rows)


def test_polars_over(benchmark):
    t, df = _data()
    expr = uep.ndcg("label", "sys0", k=10, docid="docid").over("qid")
    _bench(benchmark, "polars over", lambda: df.with_columns(expr), t.num_rows)


def test_polars_frame_evaluate(benchmark):
    t, df = _data()
    _bench(benchmark, "polars evaluate", lambda: uep.evaluate(df, measures=MEASURES,
                                                              score_columns=["sys0"]), t.num_rows)


def test_zz_report(benchmark):
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)  # runs under --benchmark-only too
    if "core" not in TIMES:
        return
    lines = [f"{N_QUERIES} queries, {mslr_table().num_rows} rows, 1 system, nDCG@10 + AP + IUB/REB/UE"]
    for k, v in TIMES.items():
        lines.append(f"{k:16s} {v:8.3f} s   ratio to core {v / TIMES['core']:.2f}")
    print("\n" + "\n".join(lines))
