"""Run the rank-by-counting kernel (:mod:`uefast.gpu.counting`) in numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, set before numba.cuda is imported) and print, as JSON, per (docid
kind, tie policy): the largest value difference from the CPU engine (``evaluate``) and the number
of rank mismatches against the CPU engine's sort. Used by ``tests/test_gpu_counting.py`` in a
subprocess; argv[1]: seed, argv[2]: threads per block (small, so that every simulated thread
handles several documents and measures).

The simulator runs each GPU thread as a Python thread (barriers and shared memory included); it
hands kernels array proxies that compiled CPU functions cannot take, so the per-thread ``@njit``
routines run as the Python functions they compile from (``.py_func``): the same source.
"""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)
os.environ["UEFAST_CUDA_KERNEL"] = "counting"

import numpy as np  # noqa: E402

try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:  # a numba without its CUDA target (and simulator)
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uefast  # noqa: E402
import gpu_counting_ref  # noqa: E402
from gpu_counting_ref import MEASURES, rank_mismatches, small_table  # noqa: E402

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
TIES = ("trec_eval", "input", "expected")
tables = {d: small_table(seed, nq=6, max_docs=24, docids=d) for d in ("int", "string", "none")}
cpu = {(d, ties): uefast.evaluate(t, measures=MEASURES, ties=ties)["value"].to_numpy()
       for d, t in tables.items() for ties in TIES}

import uefast.gpu.counting as counting  # noqa: E402
import uefast.gpu.ranking as ranking  # noqa: E402

# the host-side tie order (uefast.gpu.keys) stays compiled: it runs on the CPU in every mode
import uefast.gpu.judged as judged  # noqa: E402
from cuda_simulator_setup import python_routines  # noqa: E402

python_routines(counting, judged)
gpu_counting_ref.rank_by_sorting = gpu_counting_ref.rank_by_sorting.py_func  # the CPU's sort
assert ranking.cuda_unavailable_reason() is None
counting.WARP_THREADS = threads
counting.BLOCK_THREADS = judged.BLOCK_THREADS = threads
calls = []
out = {}
for d, t in tables.items():
    for ties in TIES:
        calls.clear()
        with gpu_counting_ref.spying(calls):
            got = uefast.evaluate(t, measures=MEASURES, ties=ties,
                                  backend="cuda")["value"].to_numpy()
        mism = 0
        for args in calls:
            _, lab = counting.ranked_labels(*args, emulate=False)
            mism += rank_mismatches(args, lab)
        out[f"{d} {ties}"] = {"diff": float(np.abs(got - cpu[(d, ties)]).max()),
                              "rank_mismatches": mism, "calls": len(calls)}
print(json.dumps(out))
