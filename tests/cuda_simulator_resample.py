"""Run the GPU resampling kernels (:mod:`uefast.gpu.resample`) in numba's CUDA simulator and print,
as JSON, per method: the largest difference of the resampled column sums from the CPU kernels',
and whether ``paired_test``'s p-value with the GPU sums equals the CPU's. Used by
``tests/test_gpu_resample.py`` in a subprocess (the ``@njit`` random-stream routines run as
their Python source, ``.py_func``, which the simulator can call)."""
import json
import os
import sys
import warnings

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

rng = np.random.default_rng(4)
x = rng.normal(size=23)
y = x + rng.normal(0.2, 1.0, size=23)
vt = np.ascontiguousarray(rng.normal(size=(4, 23)))
cpu = {}
for method, f, extra in (("bootstrap", K.bootstrap_sums, (np.empty(0, np.uint16),)),
                         ("randomization", K.signflip_sums, ())):
    out = np.empty((8, 4))
    f(vt, np.uint64(9), 1, 2, out, *extra)
    cpu[method] = (out, S.paired_test(x, y, method, n_resamples=40, seed=11).pvalue)

import uefast.gpu.resample as R  # noqa: E402
import uefast.stats._kernels as KM  # noqa: E402
import uefast.stats._rng as RNG  # noqa: E402

for mod in (R, KM, RNG):
    for name, obj in list(vars(mod).items()):
        if isinstance(obj, CPUDispatcher):
            setattr(mod, name, obj.py_func)
warnings.simplefilter("ignore", RuntimeWarning)  # uint64 arithmetic wraps by design
R.THREADS = 4
res = {}
for method, g, extra in (("bootstrap", R.bootstrap_sums_cuda, (None,)),
                         ("randomization", R.signflip_sums_cuda, ())):
    out = np.empty((8, 4))
    g(vt, np.uint64(9), 1, 2, out, *extra, emulate=False)
    name = "bootstrap_sums" if method == "bootstrap" else "signflip_sums"
    real = getattr(K, name)
    setattr(K, name, lambda *a, g=g: g(*a, emulate=False))
    p = S.paired_test(x, y, method, n_resamples=40, seed=11).pvalue
    setattr(K, name, real)
    res[method] = {"diff": float(np.abs(out - cpu[method][0]).max()),
                   "p_equal": bool(p == cpu[method][1]), "p": p}
print(json.dumps(res))
