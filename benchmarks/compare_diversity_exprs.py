"""Before/after benchmark of the diversity Polars expressions (``uefast.diversity.exprs``): the
base commit's expressions (each group scored by its own Python call) against the working tree's
(all groups through ``evaluation.score_batch``: the Numba IA pass and the batch ndeval pass), as
``group_by("qid").agg(...)`` over an MSLR-shaped frame (``benchmarks/test_bench_diversity_ia.py``'s
table: 5 aspects per document, grades 0/1/2) with one expression per (measure, stat), and the new
``dx.measures`` struct (one pass for all). Interleaved in one process (old, new, struct, old,
...), CPU (``time.process_time``, all threads) and wall time; checks that old and new give the
same numbers (largest absolute difference printed).

Run: ``python benchmarks/compare_diversity_exprs.py BASE_COMMIT [n_queries [reps]]`` (default 500
queries, 3 repetitions; ``UEFAST_BENCH_SMALL=1``: 60 queries, 1 repetition). Figures:
``benchmarks/RESULTS_diversity.md``.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import numpy as np
import polars as pl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_diversity_ia import _load
from test_bench_diversity_ia import ASPECTS, SMALL, make_data

MEASURES = ["alpha-nDCG@20", "ERR-IA@20", "nDCG-IA@10", "RBU@10"]
STATS = ("value", "ue_v2")


def frame(n_queries: int) -> pl.DataFrame:
    """qid, docid, score and the list of the 5 aspect grades of every document."""
    run, qrels = make_data(n_queries)
    g = np.asarray(qrels["label"]).reshape(-1, ASPECTS)  # qrels rows: document-major, aspects inner
    return pl.DataFrame({"qid": run["qid"].to_pylist(), "docid": run["docid"].to_pylist(),
                         "score": np.asarray(run["score"]), "grades": g.tolist()})


def _t(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def main(rev: str, nq: int, reps: int) -> None:
    from uefast.diversity import exprs as new

    old = _load(rev, "src/uefast/diversity/exprs.py", "old_div_exprs", tempfile.mkdtemp())
    df = frame(nq)

    def agg(mod):
        return lambda: df.group_by("qid", maintain_order=True).agg(
            [mod.measure(s, "grades", "score", docid="docid", stat=st) for s in MEASURES for st in STATS])

    def struct():
        return df.group_by("qid", maintain_order=True).agg(
            new.measures(MEASURES, "grades", "score", docid="docid", stats=STATS)).unnest("measures")

    agg(new)()  # compile / warm
    res = {"old": [], "new": [], "struct": []}
    outs = {}
    for _ in range(reps):
        for name, fn in (("old", agg(old)), ("new", agg(new)), ("struct", struct)):
            w, c, outs[name] = _t(fn)
            res[name].append((w, c))
    cols = [c for c in outs["old"].columns if c != "qid"]
    diff = max(float(np.nanmax(np.abs(outs["old"][c].to_numpy() - outs["new"][c].to_numpy()))) for c in cols)
    sdiff = max(float(np.nanmax(np.abs(outs["new"][c].to_numpy()
                                       - outs["struct"][c if ":" in c else f"{c}:value"].to_numpy())))
                for c in cols)
    print(f"{df.height:,} rows, {nq:,} queries, {ASPECTS} aspects, {len(MEASURES)} measures x "
          f"{len(STATS)} stats = {len(cols)} expressions ({', '.join(MEASURES)}; {', '.join(STATS)}); "
          f"load {os.getloadavg()[0]:.1f}; max |old - new| {diff:.2e}, |new - struct| {sdiff:.2e}")
    for name, v in res.items():
        print(f"{name:7s} wall best {min(w for w, _ in v):7.3f} s median {statistics.median(w for w, _ in v):7.3f} s"
              f"   CPU best {min(c for _, c in v):7.3f} s median {statistics.median(c for _, c in v):7.3f} s")
    ow = min(w for w, _ in res["old"])
    oc = min(c for _, c in res["old"])
    for name in ("new", "struct"):
        print(f"{name}: {ow / min(w for w, _ in res[name]):.1f}x wall, "
              f"{oc / min(c for _, c in res[name]):.1f}x CPU against old (best of {reps})")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    small = SMALL
    main(args[0], int(args[1]) if len(args) > 1 else (60 if small else 500),
         int(args[2]) if len(args) > 2 else (1 if small else 3))
