"""The CUDA backend's rank-by-counting kernel (:mod:`uefast.gpu.counting`) against the CPU engine.

Oracles: the CPU engine's exact sort (:func:`uefast.kernels.segment.rank_by_sorting`) rank by rank
(ranked labels bit-identical; ``ties="expected"``: each tie group's labels as a multiset) and its
values (within 1e-12). Emulated (``UEFAST_CUDA_EMULATE=1``) everywhere; the kernel as written in
numba's CUDA simulator (subprocess); its PTX where numba-cuda and the CUDA toolkit exist; on a
real GPU (marked ``gpu``) where one exists.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uefast
import uefast.gpu.counting as counting
import uefast.gpu.ranking as gpu_ranking
from gpu_counting_ref import MEASURES, capture_calls, rank_mismatches, small_table
from uefast.gpu.keys import score_keys
from gpu_script_runner import script_json

TOL = 1e-12
TIES = ["trec_eval", "input", "expected"]
HERE = Path(__file__).parent


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def cuda_mode(request, monkeypatch):
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    else:
        monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
        reason = gpu_ranking._device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
    return request.param


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("docids", ["int", "string", "none"])
def test_ranks_and_values_match_cpu(cuda_mode, ties, docids):
    """Every segment's ranked labels equal the CPU sort's; every value the CPU engine's."""
    t = small_table(3, nq=40, max_docs=70, docids=docids)
    calls = capture_calls(t, ties)
    assert len(calls) == 3  # one per score column
    emulate = cuda_mode == "emulated"
    for args in calls:
        _, lab = counting.ranked_labels(*args, emulate=emulate)
        assert rank_mismatches(args, lab) == 0
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)
    b = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")
    for c in ("system", "qid", "measure", "iub", "reb"):
        assert a[c].equals(b[c]), c
    va, vb = a["value"].to_numpy(), b["value"].to_numpy()
    assert np.abs(va - vb).max() <= TOL


def test_a_wrong_rank_is_caught(cuda_mode):
    """The rank oracle can fail: one swapped pair of ranked labels is counted."""
    t = small_table(4, nq=5, max_docs=30)
    args = capture_calls(t, "input")[0]
    _, lab = counting.ranked_labels(*args, emulate=cuda_mode == "emulated")
    lab = lab.copy()
    i = int(np.flatnonzero(lab[:-1] != lab[1:])[0])
    lab[i], lab[i + 1] = lab[i + 1], lab[i]
    assert rank_mismatches(args, lab) == 2


@pytest.mark.parametrize("ties", TIES)
def test_costly_segments_go_to_the_sort_kernel(cuda_mode, monkeypatch, ties):
    """Segments whose counting work n x positives exceeds COUNT_MAX_WORK are ranked by the sort
    kernel in the same call; values still equal the CPU engine's."""
    monkeypatch.setattr(counting, "COUNT_MAX_WORK", 200)
    t = small_table(5, nq=30, max_docs=60)
    seen = []
    real = counting.split_segments

    def spy(offsets, npos):
        c, s = real(offsets, npos)
        seen.append((len(c), len(s)))
        return c, s

    monkeypatch.setattr(counting, "split_segments", spy)
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)["value"].to_numpy()
    b = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")["value"].to_numpy()
    assert all(c > 0 and s > 0 for c, s in seen), seen
    assert np.abs(a - b).max() <= TOL


def test_trec_style_string_docids(cuda_mode):
    """A run against qrels (byte-string docids, trec_eval's strcmp tie order, duplicate-free;
    unjudged and unretrieved documents), tied scores."""
    rng = np.random.default_rng(8)
    rows = [(s, f"q{q}", f"D{d}", float(np.round(rng.normal(), 1)))
            for s in ("a", "b") for q in range(12)
            for d in rng.choice(300, size=rng.integers(1, 60), replace=False)]
    run = pa.table({"system": [r[0] for r in rows], "qid": [r[1] for r in rows],
                    "docid": [r[2] for r in rows], "score": [r[3] for r in rows]})
    qd = [(f"q{q}", f"D{d}", int(rng.integers(0, 4))) for q in range(12)
          for d in rng.choice(300, size=40, replace=False)]
    qrels = pa.table({"qid": [x[0] for x in qd], "docid": [x[1] for x in qd],
                      "label": [x[2] for x in qd]})
    for ties in TIES:
        a = uefast.evaluate(run, qrels, measures=MEASURES, ties=ties)["value"].to_numpy()
        b = uefast.evaluate(run, qrels, measures=MEASURES, ties=ties,
                            backend="cuda")["value"].to_numpy()
        assert np.abs(a - b).max() <= TOL


def test_kernel_choice(monkeypatch):
    monkeypatch.delenv(gpu_ranking.KERNEL_ENV, raising=False)
    assert gpu_ranking.kernel_choice() == "sort"   # the kernels that ran on hardware
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "counting")
    assert gpu_ranking.kernel_choice() == "counting"
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "bitonic")
    with pytest.raises(ValueError, match="UEFAST_CUDA_KERNEL.*'bitonic'"):
        gpu_ranking.kernel_choice()


_floats = st.floats(allow_nan=False, width=64)


@settings(max_examples=300, deadline=None)
@given(st.lists(_floats, min_size=2, max_size=30), st.booleans())
def test_score_keys_preserve_order(xs, as32):
    """key order == float order and key equality == float equality (+0.0 == -0.0), for int32
    keys (every score a float32) and int64 keys."""
    s = np.array(xs)
    if as32:
        s = s.astype(np.float32).astype(np.float64)
    k = score_keys(s)
    assert k.dtype == (np.int32 if as32 or np.array_equal(s.astype(np.float32), s) else np.int64)
    i, j = np.meshgrid(np.arange(len(s)), np.arange(len(s)))
    assert np.array_equal(k[i] < k[j], s[i] < s[j])
    assert np.array_equal(k[i] == k[j], s[i] == s[j])


def test_score_keys_edges():
    s = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e300, 1.5])
    k = score_keys(s)
    assert k.dtype == np.int64 and k[0] == k[1]
    assert list(np.argsort(k, kind="stable")) == list(np.argsort(s, kind="stable"))
    assert score_keys(np.array([0.5, -0.0, 3.0])).dtype == np.int32


@pytest.mark.slow
@pytest.mark.parametrize("threads", [4, 32])
def test_kernel_in_cuda_simulator(threads):
    """The kernel as written (its barriers, thread striding, shared group count) run by numba's
    CUDA simulator, 4 threads a block (each thread several documents and measures) and 32: ranks
    bit-identical to the CPU sort, values within 1e-12, every docid kind and tie policy (~20 s)."""
    res = script_json("cuda_simulator_counting.py", 2, threads, timeout=900)
    assert len(res) == 9
    for k, v in res.items():
        assert v["calls"] == 3 and v["rank_mismatches"] == 0 and v["diff"] <= TOL, (k, v)


@pytest.mark.slow
def test_kernel_compiles_to_ptx():
    """PTX (sm_90) of every new kernel: counting (int32 / int64 keys), judged pass, grouping,
    device input, resampling, output assembly (numba-cuda + NVVM; skipped with the reason
    otherwise). ~70 s."""
    res = script_json("cuda_ptx.py", timeout=900)
    assert set(res) == {"counting int32", "counting int64", "counting int64, int64 tie-breaks",
                        "judged int8", "judged int64",
                        "bootstrap", "signflip", "tukey", "grouping init", "grouping hist",
                        "grouping scan", "grouping scatter", "grouping starts",
                        "device minmax", "device gather", "output flags", "output write"}
    assert min(res.values()) > 500
