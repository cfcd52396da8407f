"""Run the CUDA backend's two sort kernels in numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``,
set before numba.cuda is imported) and print, as JSON, the largest difference from the CPU engine
per (kernel, tie policy). Used by ``tests/test_gpu.py`` in a subprocess.

The simulator runs each GPU thread as a Python thread (barriers, shared memory and atomics
included), so the kernels' parallel structure -- thread striding, ``syncthreads`` placement, the
NaN counter -- is exercised as written. It hands kernels array proxies that compiled CPU
functions cannot take, so the per-segment ``@njit`` routines run here as the Python functions
they compile from (``.py_func``): the same source, interpreted.
"""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)
os.environ["UEFAST_CUDA_KERNEL"] = "sort"  # the counting kernel: tests/cuda_simulator_counting.py

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:  # a numba without its CUDA target (and simulator)
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

import uefast  # noqa: E402

rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
nq = 10
lens = rng.integers(0, 40, nq)
lens[0], lens[1] = 1, 33
qid = np.repeat(np.arange(nq), lens)
n = len(qid)
scores = rng.normal(size=n)
scores[:3] = [0.0, -0.0, 0.0]
t = pa.table({"qid": qid, "docid": rng.permutation(n) * 13 - 50, "label": rng.integers(-1, 5, n),
              "tied": np.round(rng.normal(size=n), 1), "distinct": scores})
measures = ["nDCG@10", "AP", "P@5", "RR", "ERR@20", "Rprec", "RBP(p=0.8)", "SP@10", "R@10", "nDCG",
            "Q@10", "nERR@10", "Pplus", "O"]
ties_all = ("trec_eval", "input", "expected")
cpu = {ties: uefast.evaluate(t, measures=measures, ties=ties)["value"].to_numpy()
       for ties in ties_all}

import uefast.gpu.ranking as ranking  # noqa: E402
import uefast.kernels.dispatch as dispatch  # noqa: E402
import uefast.kernels.metrics as metrics  # noqa: E402
import uefast.kernels.routines as routines  # noqa: E402
import uefast.kernels.sakai as sakai  # noqa: E402
import uefast.kernels.tbg as tbg  # noqa: E402
import uefast.kernels.ordering as ordering  # noqa: E402
import uefast.kernels.segment as segment  # noqa: E402

for mod in (segment, ordering, metrics, routines, sakai, tbg, dispatch, ranking):
    for name, obj in list(vars(mod).items()):
        if isinstance(obj, CPUDispatcher):
            setattr(mod, name, obj.py_func)
assert ranking.cuda_unavailable_reason() is None
ranking._NET_THREADS = 8  # 8 simulated threads per block: every thread handles several slots
out = {}
for kernel, net_max in (("threads", "0"), ("network", "64")):
    os.environ[ranking.NET_MAX_ENV] = net_max
    for ties in ties_all:
        got = uefast.evaluate(t, measures=measures, ties=ties, backend="cuda")["value"].to_numpy()
        out[f"{kernel} {ties}"] = float(np.abs(got - cpu[ties]).max())
print(json.dumps(out))
