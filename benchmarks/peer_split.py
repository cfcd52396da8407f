"""Where pytrec_eval's time goes on the issue-2 workload: building its dicts from the Arrow table
vs its own evaluation (a measurement script, not a test).

    python benchmarks/peer_split.py [rounds]

Same table, measures and conversion as ``test_bench_core.py`` (one system, nDCG@10 + AP; uefast
with IUB, REB and UE V1/V2). Prints uefast's best time, pytrec_eval's conversion and evaluation
times (best of ``rounds`` each) and both ratios: the issue's end to end (conversion included) and
pytrec_eval's own work alone (dicts prebuilt). Record the figures with the date and machine.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import pytrec_eval  # noqa: E402

import uefast  # noqa: E402
from _data import best_time, mslr_table  # noqa: E402
from test_bench_core import MEASURES, _dicts  # noqa: E402


def main(rounds: int) -> None:
    t = mslr_table().select(["qid", "docid", "label", "sys0"])
    uefast.evaluate(t, measures=MEASURES)  # JIT load
    ours = best_time(lambda: uefast.evaluate(t, measures=MEASURES), 10)
    conv, ev = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        qrels, run = _dicts(t)
        t1 = time.perf_counter()
        pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"}).evaluate(run)
        conv.append(t1 - t0)
        ev.append(time.perf_counter() - t1)
    c, e = min(conv), min(ev)
    print(f"uefast {ours * 1e3:.1f} ms (best of 10); pytrec_eval: dicts {c:.3f} s + evaluation "
          f"{e:.3f} s (best of {rounds}); end to end {(c + e) / ours:.0f}x, evaluation alone "
          f"{e / ours:.0f}x; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
