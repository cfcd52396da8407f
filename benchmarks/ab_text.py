"""ROUGE-1/2/L with REB, IUB and UE: rouge-score, another source tree and this one, interleaved in
one process (the issue 25 speed benchmark's workload, benchmarks/test_bench_text.py).

    UEFAST_SHARED_DATA=... python benchmarks/ab_text.py --other /work/main/src -n 3
    UEFAST_BENCH_SMALL=1 ... python benchmarks/ab_text.py --other /work/main/src -n 1   # smoke

The other tree's ``uefast`` package is copied to a temporary folder as ``uefast_other`` (every
``uefast`` name in its sources renamed), so both versions load side by side. Per round:
rouge-score on the first 2,000 pairs (values only), the other tree's ``evaluate`` and this
tree's on all pairs (S = 200 draws for ROUGE-L), each with CPU time (``time.process_time``, all
threads) and wall time, and the 1-minute load average. The outputs of the two trees are
compared (``value``, ``iub``, ``reb``, ``ue_v1``, ``ue_v2``, ``reb_se``: equal arrays).
Ratios are pairs/s against rouge-score's pairs/s of the same round.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

MEASURES = ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
COMPARED = ("value", "iub", "reb", "ue_v1", "ue_v2", "reb_se")


def load_other(src: Path, tmp: Path):
    """The package ``uefast`` of the tree ``src`` imported as ``uefast_other``."""
    dst = tmp / "uefast_other"
    shutil.copytree(src / "uefast", dst, ignore=shutil.ignore_patterns("__pycache__"))
    for f in dst.rglob("*.py"):
        f.write_text(re.sub(r"\buefast\b", "uefast_other", f.read_text()))
    sys.path.insert(0, str(tmp))
    return importlib.import_module("uefast_other.text")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--other", type=Path, required=True, help="src folder of the other tree")
    ap.add_argument("-n", "--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    import numpy as np
    from rouge_score import rouge_scorer

    import uefast.text as ours
    from test_bench_text import N_BASELINE, N_PAIRS, make_pairs

    table = make_pairs(N_PAIRS)
    refs = table["reference"].to_pylist()[:N_BASELINE]
    cands = table["candidate"].to_pylist()[:N_BASELINE]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])

    def rouge_score():
        for r, c in zip(refs, cands):
            scorer.score(r, c)

    with tempfile.TemporaryDirectory() as tmp:
        other = load_other(args.other, Path(tmp))
        impls = {"rouge-score": (rouge_score, N_BASELINE),
                 "other": (lambda: other.evaluate(table, MEASURES), N_PAIRS),
                 "this": (lambda: ours.evaluate(table, MEASURES), N_PAIRS)}
        a = other.evaluate(table, MEASURES)  # compiled, and the outputs compared
        b = ours.evaluate(table, MEASURES)
        same = all(np.array_equal(a[c].to_numpy(zero_copy_only=False),
                                  b[c].to_numpy(zero_copy_only=False), equal_nan=True)
                   for c in COMPARED)
        print(f"outputs of the two trees equal ({', '.join(COMPARED)}): {same}")
        best = {k: [9e9, 9e9] for k in impls}
        for i in range(args.rounds):
            line = [f"round {i}:"]
            for name, (fn, n) in impls.items():
                c0, w0 = time.process_time(), time.perf_counter()
                fn()
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                best[name] = [min(best[name][0], cpu), min(best[name][1], wall)]
                line.append(f"{name} cpu {cpu:.2f} s wall {wall:.2f} s;")
            line.append(f"load {os.getloadavg()[0]:.1f}")
            print(" ".join(line))
    rs_cpu, rs_wall = (N_BASELINE / t for t in best["rouge-score"])
    for name in ("other", "this"):
        cpu, wall = (N_PAIRS / t for t in best[name])
        print(f"best {name}: {wall:,.0f} pairs/s wall, {cpu:,.0f} pairs/s CPU; "
              f"x{wall / rs_wall:.1f} wall, x{cpu / rs_cpu:.1f} CPU against rouge-score "
              f"({rs_wall:,.0f} / {rs_cpu:,.0f} pairs/s)")


if __name__ == "__main__":
    main()
