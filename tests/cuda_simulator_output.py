"""Run the GPU output assembly (:mod:`uefast.gpu.output`) and ``evaluate_device`` in numba's CUDA
simulator and print, as JSON, the findings of ``tests/gpu_output_ref.py``'s checks (the same
bodies the emulated and GPU tests run). Device-to-host copies of the assembly are counted.
Used by ``tests/test_gpu_output.py``."""
import json
import os
import sys
import warnings

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)

try:
    from numba import cuda  # noqa: E402
except Exception as e:
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import uefast  # noqa: E402
import uefast.gpu.counting as counting  # noqa: E402
import uefast.gpu.device_input as device_input  # noqa: E402
import uefast.gpu.grouping as grouping  # noqa: E402
import uefast.gpu.judged as judged  # noqa: E402
import uefast.gpu.output as output  # noqa: E402
import uefast.ue as ue  # noqa: E402
from uefast.gpu.memory import DeviceMemory  # noqa: E402

import gpu_output_ref as ref  # noqa: E402
from cuda_simulator_setup import python_routines  # noqa: E402
from gpu_device_ref import device_case  # noqa: E402

# the CPU oracles compile before the routines become their Python sources
t, _ = device_case(7, nq=3, max_docs=5)
for pol in ref.POLICIES:
    uefast.evaluate(t, measures=ref.MEASURES, degenerate=pol)
for ties in ("input", "expected", "trec_eval"):
    uefast.evaluate(t, measures=ref.MEASURES, ties=ties)
ue.ue_scores(np.ones(2), np.ones(2), np.zeros(2))
python_routines(grouping, counting, judged, device_input, output, ue)
ref.ue_scores = lambda *a, _f=ue.ue_scores: _f(*a)  # the module's (compiled pass unchanged)
warnings.simplefilter("ignore", RuntimeWarning)  # the UE formula's discarded branch divides by 0
counting.WARP_THREADS = counting.BLOCK_THREADS = judged.BLOCK_THREADS = 4
output._THREADS = 4
grouping.SCAN_THREADS = 8
grouping.TILE = 7
copies = []
real = DeviceMemory.to_host
DeviceMemory.to_host = lambda self, d: copies.append(1) or real(self, d)
class SimColumn:
    """A column exposing only ``__cuda_array_interface__``, over a simulator device array
    (device memory is host memory in the simulator: the interface points at its buffer)."""

    def __init__(self, a):
        self._d = cuda.to_device(a)

    @property
    def __cuda_array_interface__(self):
        h = self._d._ary
        return {"shape": h.shape, "typestr": h.dtype.str, "data": (h.ctypes.data, False),
                "version": 3, "strides": None}


res = {"partitions": ref.check_partitions(SimColumn),
       "assembly": ref.check_assembly(False, cuda.to_device, lambda: len(copies)),
       "evaluate_device": ref.check_evaluate_device(
           lambda cols: {k: cuda.to_device(np.ascontiguousarray(v)) for k, v in cols.items()})}
print(json.dumps(res))
