"""Columns already in GPU memory (:func:`uefast.gpu.device_input.evaluate_device`) against
``uefast.evaluate`` on the same data from the host: same keys, counts and values (within 1e-12),
every tie policy, unclustered rows. One test body per backend: emulated with a minimal object
exposing ``__cuda_array_interface__``; the kernels in numba's CUDA simulator (subprocess, slow);
a real GPU (marked ``gpu``) with numba device arrays, where one exists.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import uefast
import uefast.gpu.ranking as gpu_ranking
from gpu_device_ref import MEASURES, FakeDeviceArray, compare, device_case
from uefast.errors import InputError
from uefast.gpu.device_input import device_column, evaluate_device
from gpu_script_runner import script_json

HERE = Path(__file__).parent


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def to_device(request, monkeypatch):
    """How a test puts a NumPy column in 'device memory' for this backend."""
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
        return FakeDeviceArray
    monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
    reason = gpu_ranking._device_reason()
    if reason is not None:
        pytest.skip(f"no CUDA device: {reason}")
    from numba import cuda

    return cuda.to_device


def _device(cols: dict, to_device) -> dict:
    return {k: to_device(np.ascontiguousarray(v)) for k, v in cols.items()}


@pytest.mark.parametrize("ties", ["input", "expected", "trec_eval"])
@pytest.mark.parametrize("seed", [1, 2])
def test_device_columns_match_host_evaluate(to_device, ties, seed):
    t, _ = device_case(seed)
    cols = {c: t[c].to_numpy() for c in t.column_names}
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)
    b = evaluate_device(_device(cols, to_device), measures=MEASURES, ties=ties)
    r = compare(a, b)
    assert r["keys_equal"] and r["ints_equal"]
    for c in ("value", "iub", "reb"):
        assert r[c] <= 1e-12, c
    assert b.schema.metadata[b"uefast.settings"].find(b'"input": "device"') >= 0


def test_the_comparison_can_fail(to_device):
    """One changed label on the device side shows in the comparison."""
    t, _ = device_case(3)
    cols = {c: t[c].to_numpy().copy() for c in t.column_names}
    cols["label"][np.flatnonzero(cols["label"] > 0)[0]] = 0
    b = evaluate_device(_device(cols, to_device), measures=MEASURES)
    r = compare(uefast.evaluate(t, measures=MEASURES, ties="input"), b)
    assert not r["ints_equal"] or r["value"] > 1e-12


def test_host_memory_column_is_read_in_place():
    """Where device memory is host memory, the column is a view of the object's buffer."""
    fake = FakeDeviceArray(np.arange(10, dtype=np.int64))
    v = device_column(fake, "qid", True)
    assert np.shares_memory(v, fake._a) and np.array_equal(v, np.arange(10))


def _bad(cols: dict, to_device, match: str, **kw):
    with pytest.raises(InputError, match=match):
        evaluate_device(_device(cols, to_device), measures=["AP"], **kw)


def test_bad_device_input(to_device):
    t, _ = device_case(4, nq=5, max_docs=10)
    base = {c: t[c].to_numpy().copy() for c in t.column_names}
    neg = dict(base, qid=base["qid"] - 1)
    _bad(neg, to_device, "'qid'.*>= 0, got -1")
    sparse = dict(base, qid=base["qid"] * 10_000)
    _bad(sparse, to_device, "too sparse")
    f32 = dict(base, s_tied=base["s_tied"].astype(np.float32))
    _bad(f32, to_device, "'s_tied'.*float64", score_columns=["s_tied"])
    nan = dict(base, s_zero=base["s_zero"].copy())
    nan["s_zero"][3] = np.nan
    _bad(nan, to_device, "'s_zero'.*NaN score at row 3")
    _bad(dict(base, docid=np.arange(len(base["qid"]))), to_device, "docid", ties="trec_eval")
    lab = dict(base)
    _bad(lab, to_device, "negative label", negative_labels="error")
    with pytest.raises(InputError, match="not in GPU memory"):
        evaluate_device(dict(_device(base, to_device), s_tied=[0.5] * len(base["qid"])),
                        measures=["AP"])


@pytest.mark.slow
def test_device_input_in_cuda_simulator():
    """~30 s: the minmax, grouping, judged, gather and counting kernels in the simulator."""
    out = script_json("cuda_simulator_device_input.py")
    assert len(out) == 3
    for ties, r in out.items():
        assert r["keys_equal"] and r["ints_equal"], ties
        assert max(r["value"], r["iub"], r["reb"]) <= 1e-12, ties
