"""The judged pass on the GPU (:mod:`uefast.gpu.judged`) against the CPU pass.

Oracles: the CPU engine's judged pass (IUB, REB, normaliser within 1e-12 relative; Np, judged
counts and sorted labels exactly), ``np.sort`` for the ideal ranking, ``np.bincount`` for the
label histograms, and ``evaluate`` end to end (``backend="cuda"`` equal to ``cpu``). One test body
per backend: emulated (``UEFAST_CUDA_EMULATE=1``) everywhere, the kernel as written in numba's
CUDA simulator (subprocess, slow), on a real GPU (marked ``gpu``) where one exists.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import uefast
import uefast.gpu.ranking as gpu_ranking
from gpu_counting_ref import small_table
from gpu_judged_ref import MEASURES, cases, compare
from gpu_script_runner import script_json

TOL = 1e-12
HERE = Path(__file__).parent


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def cuda_mode(request, monkeypatch):
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    else:
        monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
        reason = gpu_ranking._device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
    return request.param


@pytest.mark.parametrize("i", range(8))
def test_judged_pass_matches_cpu(cuda_mode, i):
    """Every case (label ranges, permutation, paper REB, REB over a collection)."""
    res = compare(cases(5)[i])
    assert res["int_mismatches"] == 0
    for f in ("iub", "reb", "idcg"):
        assert res[f] <= TOL, f
    assert res["hist_checked"] == ("wide" not in cases(5)[i][0])


def test_a_wrong_histogram_is_caught(cuda_mode, monkeypatch):
    """The oracle can fail: a kernel step that drops one label count shows up as mismatches."""
    import uefast.gpu.judged as judged

    if cuda_mode != "emulated":
        pytest.skip("the patched step runs only in the emulated pass")
    real = judged.hist_prefix

    @judged.nb.njit
    def off_by_one(hist, nhist, exp_gtype, geq):
        hist[nhist - 1] += 1
        return real(hist, nhist, exp_gtype, geq)

    monkeypatch.setattr(judged, "hist_prefix", off_by_one)
    monkeypatch.setattr(judged, "_emulated", judged.nb.njit(judged._emulated.py_func))
    assert compare(cases(5)[0])["int_mismatches"] > 0


@pytest.mark.parametrize("ties", ["trec_eval", "input", "expected"])
def test_evaluate_cuda_judged_equals_cpu(cuda_mode, ties, monkeypatch):
    """End to end: iub, reb, value of ``backend="cuda"`` (GPU judged pass and ranking) equal the
    CPU's; the GPU judged pass is the one that ran."""
    import uefast.gpu.judged as judged

    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    seen = []
    real = judged.judged_pass_cuda
    monkeypatch.setattr(judged, "judged_pass_cuda", lambda *a, **k: seen.append(1) or real(*a, **k))
    t = small_table(7, nq=20, max_docs=40)
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)
    b = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")
    assert seen
    for c in ("system", "qid", "measure", "n_judged", "n_rel"):
        assert a[c].equals(b[c]), c
    for c in ("iub", "reb", "value"):
        assert np.abs(a[c].to_numpy() - b[c].to_numpy()).max() <= TOL, c


@pytest.mark.slow
def test_judged_kernel_in_cuda_simulator():
    """~1 min: the kernel as written in numba's CUDA simulator (4 threads a block, so every
    thread handles several rows and measures), every case."""
    out = script_json("cuda_simulator_judged.py", 5, 4)
    assert len(out) == 8
    for name, r in out.items():
        assert r["int_mismatches"] == 0, name
        for f in ("iub", "reb", "idcg"):
            assert r[f] <= TOL, (name, f)
