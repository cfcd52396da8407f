"""TBG's cost beside nDCG@10 + AP on an MSLR-shaped table (one system), interleaved rounds,
CPU (process) time and wall time: ``python benchmarks/tbg_cost.py [n_queries]``.
``UEFAST_BENCH_SMALL=1``: 300 queries, 2 rounds (a smoke test). Results: RESULTS_tbg.md."""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

import uefast  # noqa: E402
from _data import SMALL, mslr_table  # noqa: E402

SETS = {"nDCG@10 AP": ["nDCG@10", "AP"], "TBG@10": ["TBG@10"], "TBG": ["TBG"],
        "TBG(lengths=doc)@10": ["TBG(lengths=doc)@10"], "TBG(lengths=doc)": ["TBG(lengths=doc)"],
        "nERR@10": ["nERR@10"]}


def main() -> None:
    nq = 300 if SMALL else int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rounds = 2 if SMALL else 5
    t = mslr_table(nq, 1)
    cols = [c for c in t.column_names if c not in ("qid", "docid", "label")][:1]
    t = t.select(["qid", "docid", "label", *cols])
    rng = np.random.default_rng(1)
    t = t.append_column("doc_len", pa.array(rng.integers(50, 5000, t.num_rows)))
    for ms in SETS.values():  # compile and warm
        uefast.evaluate(t, measures=ms)
    best = {k: [float("inf"), float("inf")] for k in SETS}
    for _ in range(rounds):
        for name, ms in SETS.items():
            c0, w0 = time.process_time(), time.perf_counter()
            uefast.evaluate(t, measures=ms)
            c1, w1 = time.process_time(), time.perf_counter()
            best[name][0] = min(best[name][0], c1 - c0)
            best[name][1] = min(best[name][1], w1 - w0)
    base = best["nDCG@10 AP"][0]
    print(f"{t.num_rows} rows, {nq} queries, best of {rounds} interleaved rounds; "
          f"load {os.getloadavg()}")
    for name, (cpu, wall) in best.items():
        print(f"{name:20s} cpu {cpu * 1e3:8.1f} ms  wall {wall * 1e3:8.1f} ms  "
              f"cpu ratio to nDCG@10+AP {cpu / base:5.2f}")


if __name__ == "__main__":
    main()
