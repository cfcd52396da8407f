"""Run the judged-pass kernel (:mod:`uefast.gpu.judged`) in numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, set before numba.cuda is imported) and print, as JSON, per case of
``tests/gpu_judged_ref.py``: the largest differences from the CPU judged pass and the integer
mismatches. Used by ``tests/test_gpu_judged.py`` in a subprocess; argv[1]: seed, argv[2]: threads
per block (small, so that every simulated thread handles several rows and measures).

The simulator runs each GPU thread as a Python thread; compiled CPU functions cannot take its
array proxies, so the ``@njit`` routines the kernel calls run as their Python source
(``.py_func``).
"""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)

try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:  # a numba without its CUDA target (and simulator)
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_simulator_setup import python_routines  # noqa: E402

import uefast.gpu.judged as judged  # noqa: E402
import uefast.gpu.ranking as ranking  # noqa: E402
from gpu_judged_ref import cases, compare, cpu_side  # noqa: E402

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 5
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
cpu = {c[0]: cpu_side(c) for c in cases(seed)}  # the CPU oracle, compiled
python_routines(judged)
assert ranking.cuda_unavailable_reason() is None
judged.BLOCK_THREADS = threads
print(json.dumps({c[0]: compare(c, cpu[c[0]]) for c in cases(seed)}))
