"""The CUDA backend (``evaluate(..., backend="cuda")``) against the CPU engine.

Every test runs twice: ``emulated`` (``UEFAST_CUDA_EMULATE=1``: the backend's host code and
per-segment routines, its network stages run slot after slot on the CPU -- runs everywhere) and
``device`` (a real NVIDIA GPU through numba-cuda; skipped without one). The CPU engine, itself
checked against the naive reference and pytrec_eval elsewhere, is the oracle.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import uefast
import uefast.gpu.ranking as gpu_ranking
from uefast.errors import InputError

MEASURES = ["nDCG@10", "nDCG", "DCG@5", "nDCG(gain=exp)@10", "AP", "AP@10", "P@5", "R@10",
            "Rprec", "RR", "RR@3", "ERR@20", "RBP(p=0.8)", "SP@10",
            "Success@5"]
TOL = 1e-12


def _device_reason():
    return gpu_ranking._device_reason()


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def cuda_mode(request, monkeypatch):
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    else:
        monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
        reason = _device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
    return request.param


def _table(seed, nq=120, max_docs=60, docids="string", rounding=1):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, max_docs, nq)
    lens[0] = 1
    qid = np.repeat(np.arange(nq), lens)
    n = len(qid)
    cols = {"qid": pa.array(np.char.add("q", qid.astype(str)))}
    if docids == "string":
        cols["docid"] = pa.array([f"d{rng.integers(0, 10**6)}-{i}" for i in range(n)])
    elif docids == "int":
        cols["docid"] = pa.array(rng.permutation(n).astype(np.int64) * 7 - 3 * n)
    cols["label"] = pa.array(rng.integers(-1, 5, n).astype(np.int8))
    cols["s_distinct"] = pa.array(rng.normal(size=n))
    cols["s_tied"] = pa.array(np.round(rng.normal(size=n), rounding))
    cols["s_const"] = pa.array(np.where(rng.random(n) < 0.5, 0.0, -0.0))
    return pa.table(cols)


def _check(a: pa.Table, b: pa.Table) -> None:
    assert a.num_rows == b.num_rows
    for c in ("system", "qid", "measure", "iub", "reb", "n_docs"):
        assert a[c].equals(b[c]), c
    va, vb = a["value"].to_numpy(), b["value"].to_numpy()
    assert np.allclose(va, vb, rtol=0, atol=TOL), float(np.abs(va - vb).max())
    for c in ("ue_v1", "ue_v2"):
        x = a[c].to_numpy(zero_copy_only=False)
        y = b[c].to_numpy(zero_copy_only=False)
        assert np.allclose(x, y, rtol=0, atol=1e-9, equal_nan=True), c


@pytest.mark.parametrize("ties", ["trec_eval", "input", "expected"])
@pytest.mark.parametrize("docids", ["string", "int", "none"])
@pytest.mark.parametrize("kernel,net_max", [("counting", None), ("sort", None), ("sort", 1024),
                                            ("sort", 8)])
def test_letor_matches_cpu(cuda_mode, monkeypatch, ties, docids, kernel, net_max):
    """Every kernel (the default rank-by-counting one; the sort kernels: a block's network up to
    ``net_max`` documents, one thread beyond, None: one thread for every segment), every measure,
    every tie policy, string / integer / no docids, tied and -0.0 / +0.0 scores."""
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, kernel)
    monkeypatch.setattr(gpu_ranking, "NET_MAX", net_max)
    monkeypatch.delenv(gpu_ranking.NET_MAX_ENV, raising=False)
    t = _table(7 + (net_max or 0), docids=docids)
    a = uefast.evaluate(t, measures=MEASURES, ties=ties)
    b = uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda")
    _check(a, b)
    assert b.schema.metadata[b"uefast.settings"].find(b'"backend": "cuda"') >= 0


def test_long_segments(cuda_mode, monkeypatch):
    """With the network on (``UEFAST_CUDA_NET_MAX=1024``) segments longer than its 1,024 slots go
    to the one-thread kernel; 2..1,024 use the network with padding."""
    monkeypatch.setenv(gpu_ranking.NET_MAX_ENV, "1024")
    monkeypatch.setenv(gpu_ranking.KERNEL_ENV, "sort")
    rng = np.random.default_rng(3)
    lens = np.array([1, 2, 3, 17, 1023, 1024, 1025, 2600])
    qid = np.repeat(np.arange(len(lens)), lens)
    n = len(qid)
    t = pa.table({"qid": qid, "docid": rng.permutation(n), "label": rng.integers(0, 5, n),
                  "s": np.round(rng.normal(size=n), 2)})
    for ties in ("trec_eval", "expected"):
        _check(uefast.evaluate(t, measures=MEASURES, ties=ties),
               uefast.evaluate(t, measures=MEASURES, ties=ties, backend="cuda"))


def test_trec_style_matches_cpu(cuda_mode):
    """A run with a system column against qrels: unjudged documents, unretrieved relevant ones,
    a system missing a query (``queries="qrels"``: an empty segment scores 0)."""
    rng = np.random.default_rng(11)
    rows = []
    for s in ("a", "b"):
        for q in range(30):
            if s == "b" and q == 4:
                continue
            docs = rng.choice(200, size=rng.integers(1, 80), replace=False)
            for d in docs:
                rows.append((s, f"q{q}", f"D{d}", float(np.round(rng.normal(), 1))))
    run = pa.table({"system": [r[0] for r in rows], "qid": [r[1] for r in rows],
                    "docid": [r[2] for r in rows], "score": [r[3] for r in rows]})
    qd = [(f"q{q}", f"D{d}", int(rng.integers(0, 4))) for q in range(30)
          for d in rng.choice(200, size=50, replace=False)]
    qrels = pa.table({"qid": [x[0] for x in qd], "docid": [x[1] for x in qd],
                      "label": [x[2] for x in qd]})
    for queries in ("intersect", "qrels"):
        _check(uefast.evaluate(run, qrels, measures=MEASURES, queries=queries),
               uefast.evaluate(run, qrels, measures=MEASURES, queries=queries, backend="cuda"))


def test_nan_score_is_reported(cuda_mode):
    t = _table(5, nq=20, docids="int")
    s = t["s_distinct"].to_numpy().copy()
    s[37] = np.nan
    t = t.set_column(t.schema.get_field_index("s_distinct"), "s_distinct", pa.array(s))
    with pytest.raises(InputError) as cpu:
        uefast.evaluate(t, measures=["AP"], score_columns=["s_distinct"])
    with pytest.raises(InputError) as gpu:
        uefast.evaluate(t, measures=["AP"], score_columns=["s_distinct"], backend="cuda")
    assert str(gpu.value) == str(cpu.value)
    assert "s_distinct" in str(gpu.value)


def test_unavailable_backend_names_the_reason(monkeypatch):
    monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
    if _device_reason() is None:
        pytest.skip("a CUDA device is present")
    with pytest.raises(InputError, match="backend.*cuda.*cannot run here"):
        uefast.evaluate(_table(1, nq=3), measures=["AP"], backend="cuda")


def test_bad_backend_and_streaming(monkeypatch):
    t = _table(2, nq=5)
    with pytest.raises(InputError, match="`backend` must be one of"):
        uefast.evaluate(t, backend="gpu")
    monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    with pytest.raises(InputError, match="streamed input"):
        uefast.evaluate(t.to_reader(), backend="cuda")


def test_net_max_setting(monkeypatch):
    monkeypatch.setenv(gpu_ranking.NET_MAX_ENV, "4096")
    assert gpu_ranking._net_max() == gpu_ranking.NET_SLOTS
    monkeypatch.delenv(gpu_ranking.NET_MAX_ENV)
    assert gpu_ranking._net_max() == 0
    monkeypatch.setenv(gpu_ranking.NET_MAX_ENV, "many")
    with pytest.raises(ValueError, match="UEFAST_CUDA_NET_MAX.*'many'"):
        gpu_ranking._net_max()


@pytest.mark.slow  # the CUDA simulator interprets the kernels in Python
def test_kernels_in_cuda_simulator():
    """Both sort kernels as written (``threads`` and the shared-memory ``network``, 8 threads a
    block), run by numba's CUDA simulator in a subprocess, equal the CPU engine for every tie
    policy (a mutation dropping the barrier between network stages failed here)."""
    from gpu_script_runner import script_json

    diffs = script_json("cuda_simulator_run.py", timeout=600)
    assert len(diffs) == 6
    assert all(d <= TOL for d in diffs.values()), diffs


def test_a_kernel_that_cannot_compile_is_a_reason(monkeypatch):
    """numba-cuda 0.30.4 with numpy 2.5 (seen on an H100 host): ``cuda.is_available()`` is True,
    but the first compile fails inside numba-cuda on ``np.row_stack``. The probe compile turns that
    into the backend's one-line reason instead of an AttributeError from the first launch."""
    numba_cuda = pytest.importorskip("numba.cuda")
    monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
    monkeypatch.setattr(numba_cuda, "is_available", lambda: True)

    def broken(cuda):
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    monkeypatch.setattr(gpu_ranking, "_probe_compile", broken)
    gpu_ranking._device_reason.cache_clear()
    try:
        with pytest.raises(InputError) as err:
            uefast.evaluate(_table(1, nq=3), measures=["AP"], backend="cuda")
    finally:
        gpu_ranking._device_reason.cache_clear()
    msg = str(err.value)
    assert "cannot run here" in msg and "cannot compile a kernel" in msg
    assert f"numpy {np.__version__}" in msg and "numpy<2.5" in msg
    assert "\n" not in msg
