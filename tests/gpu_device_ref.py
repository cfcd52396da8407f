"""A minimal device-array stand-in for the device-input tests (``tests/test_gpu_device_input.py``
and ``tests/cuda_simulator_device_input.py``): an object exposing only
``__cuda_array_interface__`` (version 3) over a NumPy buffer. Where device memory is host memory
(emulation, numba's CUDA simulator) that is exactly what a CuPy array or cuDF column offers."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

MEASURES = ["nDCG@10", "nDCG", "AP", "P@5", "RR", "ERR@20", "Q@10", "RBP(p=0.8)", "Rprec"]


class FakeDeviceArray:
    """Exposes ``__cuda_array_interface__`` for a contiguous 1-d NumPy array (kept alive)."""

    def __init__(self, a: np.ndarray):
        self._a = np.ascontiguousarray(a)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self._a.shape, "typestr": self._a.dtype.str,
                "data": (self._a.ctypes.data, False), "version": 3, "strides": None}


def device_case(seed: int, nq: int = 12, max_docs: int = 40):
    """``(host pyarrow table, {name: FakeDeviceArray})``: unclustered rows (shuffled), qid codes
    0..nq-1 first appearing in increasing order, labels -1..4, three float64 score columns
    (distinct, tied, +-0)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_docs, nq)
    qid = np.repeat(np.arange(nq), lens)
    n = len(qid)
    order = np.argsort(rng.random(n) + qid * 0.3, kind="stable")  # shuffled, mostly rising
    qid = qid[order]
    first = np.unique(qid, return_index=True)[1]
    recode = np.empty(nq, np.int64)
    recode[np.argsort(first, kind="stable")] = np.arange(nq)
    qid = recode[qid]  # codes in order of first appearance (the CPU's group order)
    cols = {"qid": qid.astype(np.int64), "label": rng.integers(-1, 5, n).astype(np.int8),
            "s_distinct": rng.normal(size=n), "s_tied": np.round(rng.normal(size=n), 1),
            "s_zero": np.where(rng.random(n) < 0.5, 0.0, -0.0)}
    return pa.table(cols), {k: FakeDeviceArray(v) for k, v in cols.items()}


def compare(a: pa.Table, b: pa.Table) -> dict:
    """Key columns equal, and the largest value / IUB / REB difference (rows sorted alike)."""
    keys = [("system", "ascending"), ("qid", "ascending"), ("measure", "ascending")]
    a, b = a.sort_by(keys), b.sort_by(keys)
    out = {"keys_equal": all(a[c].cast(pa.string()).equals(b[c].cast(pa.string()))
                             for c in ("system", "qid", "measure")),
           "ints_equal": all(a[c].equals(b[c]) for c in ("n_docs", "n_judged", "n_rel"))}
    for c in ("value", "iub", "reb"):
        out[c] = float(np.abs(a[c].to_numpy() - b[c].to_numpy()).max())
    return out
