"""Run the GPU grouping kernels (:mod:`uefast.gpu.grouping`) in numba's CUDA simulator and print,
as JSON, the mismatches against the CPU's counting sort and an end-to-end ``evaluate`` on
shuffled rows (``ties="input"``). Used by ``tests/test_gpu_grouping.py`` in a subprocess."""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)
os.environ["UEFAST_CUDA_KERNEL"] = "counting"

try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uefast  # noqa: E402
import uefast.gpu.counting as counting  # noqa: E402
import uefast.gpu.grouping as grouping  # noqa: E402
import uefast.gpu.judged as judged  # noqa: E402
from cuda_simulator_setup import python_routines  # noqa: E402
from gpu_counting_ref import small_table  # noqa: E402
from uefast.kernels.grouping import counting_sort  # noqa: E402

MEASURES = ["nDCG@10", "AP", "RR"]
rng = np.random.default_rng(2)
t = small_table(4, nq=6, max_docs=12)
t = t.take(rng.permutation(t.num_rows))
cpu = uefast.evaluate(t, measures=MEASURES, ties="input")
cases = [(ncodes, n, tile) for ncodes in (3, 300) for n, tile in ((0, 4), (40, 3), (90, 1024))]
python_routines(grouping, counting, judged)
counting.WARP_THREADS = counting.BLOCK_THREADS = judged.BLOCK_THREADS = 4
grouping.SCAN_THREADS = 8  # fewer scan threads than histogram slots: chunks of several
mism = 0
rng2 = np.random.default_rng(99)
for (ncodes, n, tile) in cases:
    codes = rng2.integers(-1, ncodes, n)
    grouping.TILE = tile
    o2, p2 = grouping.counting_sort_cuda(codes, ncodes, False)
    o1, p1 = counting_sort.py_func(codes, ncodes)
    mism += int(not (np.array_equal(o1, o2) and np.array_equal(p1, p2)))
grouping.TILE = 5
got = uefast.evaluate(t, measures=MEASURES, ties="input", backend="cuda")
eq = all(cpu[c].equals(got[c]) for c in ("system", "qid", "measure", "iub", "reb"))
print(json.dumps({"sort_cases": len(cases), "sort_mismatches": mism,
                  "evaluate_diff": float(np.abs(cpu["value"].to_numpy()
                                                - got["value"].to_numpy()).max()),
                  "evaluate_equal": eq}))
