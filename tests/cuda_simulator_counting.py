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
from numba.core.registry import CPUDispatcher  # noqa: E402

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
import uefast.kernels.dispatch as dispatch  # noqa: E402
import uefast.kernels.metrics as metrics  # noqa: E402
import uefast.kernels.routines as routines  # noqa: E402
import uefast.kernels.sakai as sakai  # noqa: E402
import uefast.kernels.tbg as tbg  # noqa: E402
import uefast.kernels.segment as segment  # noqa: E402

# the host-side tie order (uefast.gpu.keys) stays compiled: it runs on the CPU in every mode
for mod in (segment, metrics, routines, sakai, tbg, dispatch, counting):
    for name, obj in list(vars(mod).items()):
        if isinstance(obj, CPUDispatcher):
            setattr(mod, name, obj.py_func)
gpu_counting_ref.rank_by_sorting = gpu_counting_ref.rank_by_sorting.py_func  # the CPU's sort
assert ranking.cuda_unavailable_reason() is None
counting.WARP_THREADS = threads
counting.BLOCK_THREADS = threads
calls = []
real = counting.rank_values_counting


def spy(*args):
    calls.append(args[:17])
    return real(*args)


counting.rank_values_counting = spy
out = {}
for d, t in tables.items():
    for ties in TIES:
        calls.clear()
        got = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")["value"].to_numpy()
        mism = 0
        for args in calls:
            _, lab = counting.ranked_labels(*args, emulate=False)
            mism += rank_mismatches(args, lab)
        out[f"{d} {ties}"] = {"diff": float(np.abs(got - cpu[(d, ties)]).max()),
                              "rank_mismatches": mism, "calls": len(calls)}
print(json.dumps(out))
