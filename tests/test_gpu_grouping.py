"""Grouping of unclustered rows on the GPU (:mod:`uefast.gpu.grouping`): the stable radix sort
against the CPU's counting sort (:func:`uefast.kernels.grouping.counting_sort`: offsets and
permutation identical, so rows of a group keep their input order), and ``evaluate`` end to end on
shuffled rows. One test body per backend: emulated (``UEFAST_CUDA_EMULATE=1``), the kernels in
numba's CUDA simulator (subprocess, slow), a real GPU (marked ``gpu``) where one exists.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uefast
import uefast.gpu.grouping as grouping
import uefast.gpu.ranking as gpu_ranking
from gpu_counting_ref import small_table
from uefast.kernels.grouping import counting_sort
from gpu_script_runner import script_json

HERE = Path(__file__).parent
MEASURES = ["nDCG@10", "AP", "P@5", "RR", "ERR@20", "Q@10"]


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def cuda_mode(request, monkeypatch):
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    else:
        monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
        reason = gpu_ranking._device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
    return request.param == "emulated"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 70_000), st.integers(0, 400), st.integers(1, 40), st.integers(0, 2**31))
def test_radix_sort_equals_counting_sort(ncodes, n, tile, seed):
    """Random codes (negative ones too), one to three radix passes, tiles of 1..40 rows
    (emulated: the kernels' per-thread steps)."""
    codes = np.random.default_rng(seed).integers(-1, ncodes, n)
    old = grouping.TILE
    grouping.TILE = tile
    try:
        o2, p2 = grouping.counting_sort_cuda(codes, ncodes, True)
    finally:
        grouping.TILE = old
    o1, p1 = counting_sort(codes, ncodes)
    assert np.array_equal(o1, o2) and np.array_equal(p1, p2)


@pytest.mark.parametrize("tile", [3, 1024])
def test_radix_sort_backends(cuda_mode, tile, monkeypatch):
    """Emulated or on the device: offsets and permutation equal the CPU's."""
    monkeypatch.setattr(grouping, "TILE", tile)
    rng = np.random.default_rng(tile)
    for ncodes in (1, 255, 256, 5000):
        codes = rng.integers(-1, ncodes, 3000).astype(np.int32)
        o2, p2 = grouping.counting_sort_cuda(codes, ncodes, cuda_mode)
        o1, p1 = counting_sort(codes, ncodes)
        assert np.array_equal(o1, o2) and np.array_equal(p1, p2), ncodes


def test_an_unstable_pass_is_caught(monkeypatch):
    """The oracle can fail: a scatter that fills each tile's slots in reverse row order breaks
    the input order within groups."""
    @grouping.nb.njit
    def reversed_scatter(t, keys, vals, n, shift, ntiles, tile, pos, keys_out, vals_out):
        for i in range(min(n, (t + 1) * tile) - 1, t * tile - 1, -1):
            j = ((keys[i] >> shift) & (grouping.RADIX - 1)) * ntiles + t
            p = pos[j]
            keys_out[p] = keys[i]
            vals_out[p] = vals[i]
            pos[j] = p + 1

    monkeypatch.setattr(grouping, "tile_scatter", reversed_scatter)
    monkeypatch.setattr(grouping, "_emulated", grouping.nb.njit(grouping._emulated.py_func))
    codes = np.random.default_rng(0).integers(0, 5, 200)
    _, p2 = grouping.counting_sort_cuda(codes, 5, True)
    assert not np.array_equal(counting_sort(codes, 5)[1], p2)


def _shuffled(seed: int, docids: str = "int") -> pa.Table:
    t = small_table(seed, nq=15, max_docs=30, docids=docids)
    return t.take(np.random.default_rng(seed).permutation(t.num_rows))


@pytest.mark.parametrize("ties", ["trec_eval", "input", "expected"])
def test_evaluate_unclustered_rows(cuda_mode, ties, monkeypatch):
    """Shuffled rows (every query's rows scattered): ``backend="cuda"`` groups them on the GPU
    and gives the CPU's values; ``ties="input"`` keeps the input order inside each query."""
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    seen = []
    real = grouping.counting_sort_cuda
    monkeypatch.setattr(grouping, "counting_sort_cuda",
                        lambda *a, **k: seen.append(1) or real(*a, **k))
    t = _shuffled(11)
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)
    b = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")
    assert seen
    for c in ("system", "qid", "measure", "iub", "reb", "n_docs"):
        assert a[c].equals(b[c]), c
    assert np.abs(a["value"].to_numpy() - b["value"].to_numpy()).max() <= 1e-12


def test_evaluate_long_format_and_trec(cuda_mode, monkeypatch):
    """The (system, qid) grouping of long-format runs and the TREC-style run/qrels grouping."""
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    rng = np.random.default_rng(3)
    n = 600
    run = pa.table({"system": rng.choice(["a", "b", "c"], n),
                    "qid": rng.integers(0, 9, n).astype(str),
                    "docid": [f"d{i}" for i in range(n)],
                    "score": np.round(rng.normal(size=n), 1)})
    qrels = pa.table({"qid": rng.integers(0, 9, 300).astype(str),
                      "docid": [f"d{i}" for i in rng.permutation(n)[:300]],
                      "label": rng.integers(0, 3, 300)})
    for kw in ({"run": run.append_column("label", pa.array(rng.integers(0, 3, n)))},
               {"run": run, "qrels": qrels}):
        a = uefast.evaluate(measures=MEASURES, ties="input", **kw)
        b = uefast.evaluate(measures=MEASURES, ties="input", backend="cuda", **kw)
        for c in ("system", "qid", "measure", "iub", "reb"):
            assert a[c].equals(b[c]), c
        assert np.abs(a["value"].to_numpy() - b["value"].to_numpy()).max() <= 1e-12


@pytest.mark.slow
def test_grouping_kernels_in_cuda_simulator():
    """~30 s: the five kernels as written in numba's CUDA simulator."""
    out = script_json("cuda_simulator_grouping.py")
    assert out["sort_cases"] == 6 and out["sort_mismatches"] == 0
    assert out["evaluate_diff"] <= 1e-12 and out["evaluate_equal"]
