"""Run the randomised Tukey HSD kernel (:mod:`uefast.gpu.tukey`) in numba's CUDA simulator and
print, as JSON, per shape ``m x n`` (systems x topics): whether the null sample equals the CPU
kernel's bit for bit, whether the device exceedance counts equal the CPU's, and whether
``tukey_hsd(..., backend="cuda")`` gives the CPU table's statistic, p-values and interval exactly.
Used by ``tests/test_gpu_tukey.py`` in a subprocess (the ``@njit`` random-stream routines run as
their Python source, ``.py_func``, which the simulator can call). 8 threads a block and 16
resamples a launch, so a run spans several blocks, a partial block and several launches. Then the
Tukey phase of ``benchmarks/gpu_phases.py`` runs once (its simulator timings mean nothing)."""
import json
import os
import sys
import warnings
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.pop("UEFAST_CUDA_EMULATE", None)

import numpy as np  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

try:
    from numba import cuda  # noqa: E402,F401
except Exception as e:
    print(f"no numba.cuda simulator: {e}", file=sys.stderr)
    sys.exit(3)

import uefast.stats as S  # noqa: E402
from uefast.stats import _kernels as K  # noqa: E402
from uefast.stats import resampling as R  # noqa: E402

SHAPES = [(2, 7), (3, 8), (4, 9), (5, 5), (6, 11), (9, 4)]
B = 37
COLS = ("statistic", "pvalue", "pvalue_adjusted", "ci_low", "ci_high", "significant")
rng = np.random.default_rng(27)
cases = []
for m, n in SHAPES:
    x = rng.normal(size=(n, m))
    x[:, 1] = x[:, 0]  # an exact tie: a pair whose p-value is 1
    if m > 2:
        x[:, -1] += 1.5  # a clearly better system: small p-values
    x = np.round(x, 1)  # ties between topics' values too
    q = np.empty(B)
    K.tukey_ranges(x, R._permutation_table(m), np.uint64(11), 3, 5, q)
    thr = np.array([0.0, float(np.median(q)), float(q.max()), float(q.max()) + 1.0])
    table = S.tukey_hsd(x, n_resamples=B, seed=11, correction="holm")
    cases.append((m, n, x, q, thr, table))

import uefast.gpu.tukey as T  # noqa: E402
import uefast.stats._kernels as KM  # noqa: E402
import uefast.stats._rng as RNG  # noqa: E402

for mod in (T, KM, RNG):
    for name, obj in list(vars(mod).items()):
        if isinstance(obj, CPUDispatcher):
            setattr(mod, name, obj.py_func)
warnings.simplefilter("ignore", RuntimeWarning)  # uint64 arithmetic wraps by design
T.THREADS = 8
T.LAUNCH_ROWS = 16
res = {}
for m, n, x, q_cpu, thr, table in cases:
    q = np.empty(B)
    counts = T.tukey_ranges_cuda(x, R._permutation_table(m), np.uint64(11), 3, 5, q, thr,
                                 emulate=False)
    gpu = S.tukey_hsd(x, n_resamples=B, seed=11, correction="holm", backend="cuda")
    meta = json.loads(gpu.schema.metadata[b"uefast.stats"])
    res[f"{m}x{n}"] = {
        "q_equal": bool(np.array_equal(q, q_cpu)),
        "counts_equal": [int(c) for c in counts] == [int((q_cpu >= t).sum()) for t in thr],
        "table_equal": all(gpu[c].equals(table[c]) for c in COLS),
        "backend": meta["backend"],
        "pvalues": gpu["pvalue"].to_pylist()}
# the device check script's Tukey phase (benchmarks/gpu_phases.py) runs: timings meaningless
sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import gpu_phases  # noqa: E402

res["phase"] = {k: v for k, v in gpu_phases.tukey_phase(cuda, 3, 9, 1)}
print(json.dumps(res))
