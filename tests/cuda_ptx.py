"""Compile the new CUDA kernels to PTX (no GPU needed) -- rank by counting for int32 and int64
score keys, the judged pass for int8 and int64 labels, the grouping radix sort, the device-input kernels, bootstrap and sign-flip resampling, the randomised Tukey HSD null, the output assembly (UE scores) -- and print the PTX sizes as JSON; exit 3 with a
reason on stderr where it cannot be tried here.

Needs numba-cuda (the ``gpu`` extra: numba's own deprecated ``numba.cuda`` cannot type ``min``
of two integers, which the shared measure routines use) and the CUDA toolkit's NVVM and NVRTC.
``UEFAST_NUMBA_CUDA_SITE``: an extra site directory holding numba-cuda (a ``pip install
--target`` outside the environment). numba-cuda asks the current device for its compute
capability when it compiles a device function called from a kernel, even for ``compile_ptx``;
with no GPU this script answers for it (sm_90, the H100).
"""
import json
import os
import site
import sys
import types

if os.environ.get("UEFAST_NUMBA_CUDA_SITE"):
    site.addsitedir(os.environ["UEFAST_NUMBA_CUDA_SITE"])
try:
    import numba_cuda  # noqa: F401
    from numba import cuda
    import numba.cuda.dispatcher as dispatcher
except Exception as e:
    print(f"numba-cuda is not importable here ({type(e).__name__}: {e}); "
          "install the gpu extra: pip install 'uefast[gpu]'", file=sys.stderr)
    sys.exit(3)

import numba as nb  # noqa: E402

import uefast.gpu.counting as counting  # noqa: E402
import uefast.gpu.device_input as device_input  # noqa: E402
import uefast.gpu.grouping as grouping  # noqa: E402
import uefast.gpu.judged as judged  # noqa: E402
import uefast.gpu.output as output  # noqa: E402
import uefast.gpu.resample as resample  # noqa: E402
import uefast.gpu.tukey as tukey  # noqa: E402

CC = (9, 0)
if not cuda.is_available():
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)
counting._kernel()  # binds the modules' `cuda`
judged._kernel()
grouping._kernels()
device_input._kernels()
resample._kernels()
tukey._kernels()
output._kernels()


def arr(dt, nd=1):
    return nb.types.Array(dt, nd, "C")


I64, F64 = nb.int64, nb.float64


def ptx(fn, sig):
    try:
        code, _ = cuda.compile_ptx(fn, sig, cc=CC)
    except Exception as e:
        msg = f"{type(e).__name__}: {e}"
        if any(s in msg for s in ("libnvvm", "NVVM", "libnvrtc", "NVRTC", "DynamicLibNotFound")):
            print(f"the CUDA toolkit's NVVM/NVRTC is not found here ({msg[:300]})", file=sys.stderr)
            sys.exit(3)
        raise
    assert ".entry" in code
    return len(code)


out = {}
for key in (nb.int32, nb.int64):
    sig = (arr(I64), arr(I64), arr(key), arr(nb.int32), arr(nb.int32), arr(I64), I64,
           arr(I64), arr(I64), arr(I64), arr(I64), arr(F64), arr(I64),
           arr(I64, 2), arr(F64, 2), arr(I64), arr(I64), arr(F64, 2), arr(I64),
           arr(I64), arr(nb.int8), arr(I64), arr(I64, 2), arr(F64, 2), arr(F64, 2))
    out[f"counting {key}"] = ptx(counting._count_kernel, sig)
# device input: int64 keys, the permutation (int64) as tie-break keys
sig = sig[:3] + (arr(I64),) + sig[4:]
out["counting int64, int64 tie-breaks"] = ptx(counting._count_kernel, sig)
for lab_t in (nb.int8, nb.int64):
    jsig = (arr(I64), arr(I64), nb.boolean, arr(lab_t), I64, I64, I64, arr(I64), arr(I64),
            arr(I64), arr(I64), arr(F64), arr(I64), arr(nb.boolean), arr(nb.boolean), I64,
            arr(F64, 2), arr(I64), arr(I64, 2), arr(F64, 2), arr(I64, 2), arr(F64, 2),
            arr(F64, 2), arr(I64, 2), arr(F64, 2), arr(I64))
    out[f"judged {lab_t}"] = ptx(judged._judged_kernel, jsig)
A = arr(I64)
for name, fn, sig in (
        ("grouping init", grouping._init_kernel, (arr(nb.int32), I64, I64, A, A)),
        ("grouping hist", grouping._hist_kernel, (A, I64, I64, I64, I64, A)),
        ("grouping scan", grouping._scan_kernel, (A, I64)),
        ("grouping scatter", grouping._scatter_kernel, (A, A, I64, I64, I64, I64, A, A, A)),
        ("grouping starts", grouping._starts_kernel, (A, I64, I64, A)),
        ("device minmax", device_input._minmax_kernel, (arr(nb.int8), I64, A)),
        ("device gather", device_input._gather_kernel,
         (A, I64, A, arr(F64), arr(nb.int8), A, arr(nb.int32), A))):
    out[name] = ptx(fn, sig)
rsig = (arr(F64, 2), nb.uint64, I64, I64, arr(F64, 2), arr(F64, 2))
out["bootstrap"] = ptx(resample._boot_kernel, rsig)
out["signflip"] = ptx(resample._flip_kernel, rsig)
out["tukey"] = ptx(tukey._tukey_kernel, (arr(F64, 2), arr(nb.uint64), nb.uint64, I64, I64, arr(F64),
                                         arr(F64, 2), arr(I64, 2), arr(F64), arr(I64)))
B = nb.boolean
out["output flags"] = ptx(output._flags_kernel, (I64, I64, I64, A, arr(F64, 2), arr(F64, 2), A))
out["output write"] = ptx(output._write_kernel,
                          (I64, B, A, I64, I64, A, arr(F64, 3), arr(F64, 2), arr(F64, 2),
                           arr(I64, 2), A, A, B, B, arr(F64), A))
print(json.dumps(out))
