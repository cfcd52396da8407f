"""Run :func:`uefast.gpu.device_input.evaluate_device` in numba's CUDA simulator on columns given
as minimal ``__cuda_array_interface__`` objects and print, as JSON per tie policy, the comparison
with ``uefast.evaluate`` on the host table. Used by ``tests/test_gpu_device_input.py``."""
import json
import os
import sys

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)

try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uefast  # noqa: E402
import uefast.gpu.counting as counting  # noqa: E402
import uefast.gpu.device_input as device_input  # noqa: E402
import uefast.gpu.grouping as grouping  # noqa: E402
import uefast.gpu.judged as judged  # noqa: E402
import uefast.gpu.output as output  # noqa: E402
import uefast.ue as ue  # noqa: E402
from cuda_simulator_setup import python_routines  # noqa: E402
from gpu_device_ref import compare, device_case  # noqa: E402

MEASURES = ["nDCG@10", "AP", "RR", "Q@10"]
TIES = ("input", "expected", "trec_eval")
t, cols = device_case(5, nq=5, max_docs=12)
cpu = {ties: uefast.evaluate(t, measures=MEASURES, ties=ties) for ties in TIES}
python_routines(grouping, counting, judged, device_input, output, ue)
counting.WARP_THREADS = counting.BLOCK_THREADS = judged.BLOCK_THREADS = 4
output._THREADS = 4
grouping.SCAN_THREADS = 8
grouping.TILE = 7
print(json.dumps({ties: compare(cpu[ties], device_input.evaluate_device(cols, measures=MEASURES,
                                                                        ties=ties))
                  for ties in TIES}))
