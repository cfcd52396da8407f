"""Smoke run of ``benchmarks/gpu_phases.py`` in numba's CUDA simulator on a 3-query table: every
phase of the device check script executes (events, pinned arrays, both CUDA paths, resampling),
so the script is known to run before it meets a GPU. Timings printed are the simulator's and mean
nothing. Used by ``tests/test_gpu_phases.py``; prints the script's output, exits with its status.
"""
import os
import sys
import warnings
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)


try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

import uefast.gpu.counting as counting  # noqa: E402
import uefast.gpu.ranking as ranking  # noqa: E402
import uefast.gpu.resample as resample  # noqa: E402
import uefast.gpu.tukey as tukey  # noqa: E402
import uefast.stats._kernels as skernels  # noqa: E402
import uefast.stats._rng as rng  # noqa: E402

# warm the CPU engine's own compiled functions before their modules' names become Python ones
sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import gpu_phases  # noqa: E402
import uefast  # noqa: E402
from _data import mslr_table  # noqa: E402

t = mslr_table(3)
uefast.evaluate(t, measures=gpu_phases.MEASURES)
import numpy as np  # noqa: E402

skernels.bootstrap_sums(np.ones((36, 3)), np.uint64(1), 1, 0, np.empty((4, 36)),
                        np.empty(0, np.uint16))
import uefast.gpu.device_input as device_input  # noqa: E402
import uefast.gpu.grouping as grouping  # noqa: E402
import uefast.gpu.judged as judged  # noqa: E402
import uefast.gpu.keys as gkeys  # noqa: E402
import uefast.gpu.output as output  # noqa: E402
import uefast.ue as ue  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_simulator_setup import python_routines  # noqa: E402

# gpu/keys.py's host steps too: compiled lazily after the measure modules' routines became Python
# functions, they could not type them (a cold cache failed so)
python_routines(ranking, counting, resample, tukey, rng, skernels, judged, grouping, device_input,
                output, ue, gkeys)

warnings.simplefilter("ignore", RuntimeWarning)
counting.WARP_THREADS = counting.BLOCK_THREADS = resample.THREADS = tukey.THREADS = \
    judged.BLOCK_THREADS = output._THREADS = 4
grouping.SCAN_THREADS, grouping.TILE = 8, 16
sys.exit(gpu_phases.main(["--queries", "3", "--rounds", "1", "--resamples", "8",
                           "--tukey-resamples", "9", "--crossover", "2", "3"]))
