"""Backend choice (``backend="auto"``) and the host side of :mod:`uefast.gpu.memory`, without a GPU:
CuPy's presence and the device are faked where the logic needs them."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

import uefast
import uefast.gpu.memory as memory
import uefast.gpu.ranking as gpu_ranking


class _Fake:
    """A device array as CuPy / numba expose it."""
    __cuda_array_interface__ = {"shape": (1,), "typestr": "<f8", "data": (0, False), "version": 3}


class _DL:
    def __init__(self, dev):
        self.dev = dev

    def __dlpack_device__(self):
        return (self.dev, 0)


def test_is_device_array():
    assert memory.is_device_array(_Fake())
    assert memory.is_device_array(_DL(2))
    assert not memory.is_device_array(_DL(1))  # kDLCPU
    assert not memory.is_device_array(np.zeros(3))  # NumPy has DLPack on the CPU
    assert not memory.is_device_array([1.0])


@pytest.fixture
def fake_gpu(monkeypatch):
    """CuPy "present" and the numba-cuda backend able to run."""
    monkeypatch.setattr(memory, "cupy_or_none", lambda: object())
    monkeypatch.setattr(gpu_ranking, "_device_reason", lambda: None)


def test_choose_backend_forced_and_small(fake_gpu):
    assert memory.choose_backend("cpu", 10**9) == "cpu"
    assert memory.choose_backend("cuda", 1) == "cuda"
    assert memory.choose_backend("auto", memory.AUTO_MIN_ROWS - 1) == "cpu"
    assert memory.choose_backend("auto", memory.AUTO_MIN_ROWS) == "cuda"


def test_choose_backend_without_cupy_or_device(monkeypatch):
    monkeypatch.setattr(memory, "cupy_or_none", lambda: None)
    assert memory.choose_backend("auto", 10**9) == "cpu"
    monkeypatch.setattr(memory, "cupy_or_none", lambda: object())
    monkeypatch.setattr(gpu_ranking, "_device_reason", lambda: "no GPU")
    assert memory.choose_backend("auto", 10**9) == "cpu"


def _table():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(20), 15)
    n = len(qid)
    return pa.table({"qid": qid, "docid": np.arange(n), "label": rng.integers(0, 3, n),
                     "s": np.round(rng.normal(size=n), 1)})


def _backend(t):
    return json.loads(t.schema.metadata[b"uefast.settings"])["backend"]


def test_evaluate_auto(monkeypatch, fake_gpu):
    """``backend="auto"`` records the backend it chose; a large enough input takes the GPU path
    (emulated here), a small one the CPU; values equal."""
    t = _table()
    cpu = uefast.evaluate(t, measures=["AP", "nDCG@10"])
    small = uefast.evaluate(t, measures=["AP", "nDCG@10"], backend="auto")
    assert _backend(small) == "cpu"
    monkeypatch.setattr(memory, "AUTO_MIN_ROWS", 10)
    monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    big = uefast.evaluate(t, measures=["AP", "nDCG@10"], backend="auto")
    assert _backend(big) == "cuda"
    assert np.abs(big["value"].to_numpy() - cpu["value"].to_numpy()).max() <= 1e-12


def test_auto_streamed_is_cpu(monkeypatch, fake_gpu):
    monkeypatch.setattr(memory, "AUTO_MIN_ROWS", 1)
    t = _table()
    out = uefast.evaluate(t.to_reader(), measures=["AP"], backend="auto")
    assert _backend(out) == "cpu"


def test_bad_backend_lists_auto():
    with pytest.raises(uefast.errors.InputError, match="auto"):
        uefast.evaluate(_table(), backend="gpu")
