"""GPU resampling (:mod:`uefast.gpu.resample`) against the CPU kernels of :mod:`uefast.stats`:
the same counter-based draws, so the resampled sums agree to rounding and the p-values of
``paired_test`` are identical on the same seed. Emulated (``UEFAST_CUDA_EMULATE=1`` steps on
the CPU), in numba's CUDA simulator (subprocess), and on a GPU where one exists (``gpu``)."""
from __future__ import annotations


import numpy as np
import pytest

import uefast.gpu.ranking as gpu_ranking
import uefast.stats as S
from uefast.gpu.resample import bootstrap_sums_cuda, signflip_sums_cuda
from uefast.stats import _kernels as K
from gpu_script_runner import script_json


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def emulate(request):
    if request.param == "device":
        reason = gpu_ranking._device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
        return False
    return True


@pytest.mark.parametrize("n", [1, 7, 64, 300])
def test_sums_match_cpu(emulate, n):
    rng = np.random.default_rng(n)
    vt = rng.normal(size=(8, n))
    for f, g, extra in ((K.bootstrap_sums, bootstrap_sums_cuda, (np.empty(0, np.uint16),)),
                        (K.signflip_sums, signflip_sums_cuda, ())):
        a, b = np.empty((12, 8)), np.empty((12, 8))
        f(vt, np.uint64(77), 1, 5, a, *extra)
        g(vt, np.uint64(77), 1, 5, b, *extra, emulate=emulate)
        assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max())


@pytest.mark.parametrize("method", ["bootstrap", "randomization"])
@pytest.mark.parametrize("seed", [0, 5, 2**63 + 1])
def test_pvalues_identical(emulate, monkeypatch, method, seed):
    """``paired_test`` with the GPU sums swapped in gives the CPU's p-value exactly (strong and
    null effects, several seeds)."""
    rng = np.random.default_rng(seed % 1000)
    x = rng.normal(size=150)
    for shift in (0.0, 0.15):
        y = x + rng.normal(shift, 1.0, size=150)
        cpu = S.paired_test(x, y, method, n_resamples=500, seed=seed).pvalue
        name = "bootstrap_sums" if method == "bootstrap" else "signflip_sums"
        g = bootstrap_sums_cuda if method == "bootstrap" else signflip_sums_cuda
        monkeypatch.setattr(K, name, lambda *a, g=g: g(*a, emulate=emulate))
        gpu = S.paired_test(x, y, method, n_resamples=500, seed=seed).pvalue
        monkeypatch.undo()
        assert gpu == cpu


def test_a_wrong_stream_is_caught():
    """The comparison can fail: another seed's draws give other sums."""
    vt = np.random.default_rng(1).normal(size=(4, 50))
    a, b = np.empty((4, 4)), np.empty((4, 4))
    K.bootstrap_sums(vt, np.uint64(1), 1, 0, a, np.empty(0, np.uint16))
    bootstrap_sums_cuda(vt, np.uint64(2), 1, 0, b, emulate=True)
    assert np.abs(a - b).max() > 1e-3


def test_kernels_in_cuda_simulator():
    """Both kernels as written (atomic count adds, barriers, 4 threads a block) in numba's CUDA
    simulator: sums within 1e-12 of the CPU's, p-values identical (~6 s)."""
    out = script_json("cuda_simulator_resample.py", timeout=600)
    for method, v in out.items():
        assert v["diff"] <= 1e-12 and v["p_equal"], (method, v)
