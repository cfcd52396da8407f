"""Benchmark: the intent-aware families (AP-IA, nDCG-IA@10, gERR-IA@10, RBP-IA, RR-IA, RBU@10)
with IUB and exact REB, on a synthetic MSLR-shaped table with 5 aspects per query: the Numba pass
(:func:`uefast.diversity.ia_fast.ia_scores`) vs the NumPy reference path (each family's
``value``/``iub``/``reb``, segment by segment and topic by topic, as ``evaluate`` ran them before),
interleaved in one process, wall and CPU time; and ``uefast.diversity.evaluate`` end to end.

Data: :func:`uefast.sample.mslr_like` (query sizes lognormal around 120 documents, string ids),
1 or 8 systems (the ``sysK`` scores); every document judged on 5 aspects with grades 0-2 (P = .6/.3/.1,
seeded), so every run row is judged. Rows = run rows.

Run: ``python benchmarks/test_bench_diversity_ia.py [n_queries [n_systems]]`` (default 3,000
queries and 1 system; the reference path on the first 300 segments only, scaled per row); ``UEFAST_BENCH_SMALL=1``: 200 queries, one
repetition. ``pytest benchmarks/test_bench_diversity_ia.py --benchmark-only`` for
pytest-benchmark. Figures: ``benchmarks/RESULTS_diversity.md``.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np
import pyarrow as pa
import pytest

SMALL = os.environ.get("UEFAST_BENCH_SMALL") == "1"
MEASURES = ["AP-IA", "nDCG-IA@10", "gERR-IA@10", "RBP-IA", "RR-IA", "RBU@10"]
ASPECTS = 5


def make_data(n_queries: int, n_systems: int = 1, seed: int = 7):
    """(run table, qrels table): MSLR-shaped run of ``n_systems`` systems (the score columns
    ``sys0..``), every document judged on ``ASPECTS`` aspects."""
    from uefast.sample import mslr_like

    t = mslr_like(n_queries, n_systems, seed=seed, string_ids=True)
    n = t.num_rows
    rng = np.random.default_rng(seed)
    g = rng.choice(3, size=(n, ASPECTS), p=[0.6, 0.3, 0.1])
    run = pa.concat_tables([
        pa.table({"qid": t["qid"], "docid": t["docid"], "score": t[f"sys{s}"],
                  "system": pa.array(np.full(n, f"sys{s}"))}) for s in range(n_systems)])
    rep = np.repeat(np.arange(n), ASPECTS)
    qrels = pa.table({"qid": t["qid"].take(pa.array(rep)), "docid": t["docid"].take(pa.array(rep)),
                      "subtopic": pa.array(np.tile(np.arange(ASPECTS), n).astype(str)),
                      "label": pa.array(g.reshape(-1).astype(np.int64))})
    return run, qrels


def prepare(run, qrels):
    from uefast.diversity import compile_qrels, parse_measures
    from uefast.diversity.evaluation import rank_run

    topics = compile_qrels(qrels)
    _, _, batch, _ = rank_run(run, topics)
    return batch, parse_measures(MEASURES)


def reference(batch, mlist):
    """The NumPy path: values per segment, IUB and REB per topic."""
    out = []
    for m in mlist:
        v = m.fam.value(batch, m)
        per = {t: (m.fam.iub(batch.topics[t], m), m.fam.reb(batch.topics[t], m))
               for t in np.unique(batch.seg_topic)}
        out.append((v, per))
    return out


def kernel(batch, mlist):
    from uefast.diversity.ia_fast import ia_scores

    batch.cache.clear()  # no result kept from an earlier call (the flat topics are compile_qrels')
    return ia_scores(batch, mlist)


def _timed(fn, *a):
    t0, c0 = time.perf_counter(), time.process_time()
    fn(*a)
    return time.perf_counter() - t0, time.process_time() - c0


def main(n_queries: int = 3000, n_systems: int = 1, reps: int = 5) -> None:
    from uefast.diversity import evaluate
    from uefast.diversity.registry import Batch

    run, qrels = make_data(n_queries, n_systems)
    rows = run.num_rows
    batch, mlist = prepare(run, qrels)
    nref = min(300, batch.seg_topic.size)  # the reference path on the first topics only
    sub = Batch(batch.topics[:nref], batch.seg_topic[:nref], batch.rows[:batch.soff[nref]],
                batch.soff[:nref + 1])
    sub_rows = int(batch.soff[nref])
    kernel(batch, mlist)  # compile / load the cache
    evaluate(run, qrels, MEASURES)
    res = {"kernel": [], "reference": [], "evaluate": []}
    for _ in range(1 if SMALL else reps):
        res["kernel"].append(_timed(kernel, batch, mlist) + (rows,))
        res["reference"].append(_timed(reference, sub, mlist) + (sub_rows,))
        res["evaluate"].append(_timed(evaluate, run, qrels, MEASURES) + (rows,))
    print(f"{rows:,} run rows, {n_queries:,} queries x {n_systems} systems, {ASPECTS} aspects, "
          f"{len(MEASURES)} measures ({', '.join(MEASURES)}); load {os.getloadavg()[0]:.1f}")
    best = {}
    for name, v in res.items():
        w = [r / t for t, _, r in v]
        c = [r / c for _, c, r in v]
        best[name] = (max(w), max(c))
        print(f"{name:10s} rows/s wall best {max(w) / 1e6:8.3f} M median {statistics.median(w) / 1e6:8.3f} M"
              f"   CPU best {max(c) / 1e6:8.3f} M")
    print(f"kernel / reference: wall {best['kernel'][0] / best['reference'][0]:.0f}x, "
          f"CPU {best['kernel'][1] / best['reference'][1]:.0f}x")


@pytest.mark.parametrize("impl", ["kernel", "reference"])
def test_bench_ia_family(benchmark, impl):
    pytest.importorskip("pytest_benchmark")
    run, qrels = make_data(200 if SMALL else 1000)
    batch, mlist = prepare(run, qrels)
    fn = kernel if impl == "kernel" else reference
    fn(batch, mlist)
    benchmark.pedantic(fn, args=(batch, mlist), rounds=1 if SMALL else 3, iterations=1)


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:3]]
    main(200 if SMALL else args[0] if args else 3000, args[1] if len(args) > 1 else 1)
