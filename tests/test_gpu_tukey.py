"""Randomised Tukey HSD on the GPU (:mod:`uefast.gpu.tukey`) against the CPU kernel of
:mod:`uefast.stats`: the same counter-based draws and the same order of additions, so the null
sample is bit-identical, the exceedance counts equal, and ``tukey_hsd(..., backend="cuda")``
gives the CPU's statistic, p-values (per pair) and interval exactly on the same seed. Emulated
(``UEFAST_CUDA_EMULATE=1`` steps on the CPU), in numba's CUDA simulator (subprocess), and on a
GPU where one exists (``gpu``)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uefast.gpu.ranking as gpu_ranking
import uefast.gpu.tukey as T
import uefast.stats as S
from uefast.errors import InputError
from uefast.stats import _kernels as K
from uefast.stats import resampling as R
from uefast.stats._rng import DOMAIN_RANDOMIZATION, DOMAIN_TUKEY
from gpu_script_runner import script_json

TABLE_COLS = ("statistic", "pvalue", "pvalue_adjusted", "ci_low", "ci_high", "significant")


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def emulate(request):
    if request.param == "device":
        reason = gpu_ranking._device_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
        return False
    return True


def _matrix(n, m, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, m)) + np.linspace(0.0, 2.0, m)  # graded systems: p from ~0 to ~1
    x[:, 0] = np.round(x[:, 0], 1)
    return x


def _cpu(x, seed, b0, rows, domain=DOMAIN_TUKEY):
    q = np.empty(rows)
    K.tukey_ranges(x, R._permutation_table(x.shape[1]), np.uint64(seed), domain, b0, q)
    return q


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6, 7, 8, 9])
@pytest.mark.parametrize("n", [1, 7, 50, 131])
def test_null_sample_bit_identical(emulate, m, n):
    """q*_b for b = 3 .. 3 + 40 and the counts of q* >= each threshold, both exactly the CPU's
    (m <= 8: permutation-table draws, every unrolled accumulator; m = 9: Fisher-Yates)."""
    x = _matrix(n, m, 100 * m + n)
    cpu = _cpu(x, 77, 3, 41)
    thr = np.array([-1.0, 0.0, *np.quantile(cpu, [0.1, 0.5, 0.9]), cpu.max(), np.inf])
    q = np.empty(41)
    counts = T.tukey_ranges_cuda(x, R._permutation_table(m), np.uint64(77), DOMAIN_TUKEY, 3, q,
                                 thr, emulate=emulate)
    assert np.array_equal(q, cpu)
    assert counts.tolist() == [int(np.count_nonzero(cpu >= t)) for t in thr]


@pytest.mark.parametrize("m,n", [(2, 9), (3, 31), (4, 20), (5, 15), (6, 63), (10, 12)])
@pytest.mark.parametrize("seed", [0, 2**63 + 1])
def test_tukey_hsd_identical(emulate, monkeypatch, m, n, seed):
    """``tukey_hsd`` on the GPU: statistic, per-pair p-values (raw and Holm), significance and the
    simultaneous interval equal the CPU's exactly; a pair with equal columns has p = 1."""
    x = _matrix(n, m, m * n)
    x[:, 1] = x[:, 0]
    cpu = S.tukey_hsd(x, n_resamples=300, seed=seed, correction="holm")
    if emulate:
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    gpu = S.tukey_hsd(x, n_resamples=300, seed=seed, correction="holm", backend="cuda")
    assert json.loads(gpu.schema.metadata[b"uefast.stats"])["backend"] == "cuda"
    for c in TABLE_COLS:
        assert gpu[c].equals(cpu[c]), c
    assert gpu["pvalue"][0].as_py() == 1.0
    if m > 2:  # graded systems: some pair is significant
        assert min(gpu["pvalue"].to_pylist()) < 0.05


def test_all_pairs_passes_backend(monkeypatch):
    x = _matrix(25, 4, 5)
    cpu = S.all_pairs(x, "tukey_hsd", n_resamples=200, seed=4)
    monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    gpu = S.all_pairs(x, "tukey_hsd", n_resamples=200, seed=4, backend="cuda")
    assert gpu["pvalue"].equals(cpu["pvalue"])


@pytest.mark.parametrize("change", ["seed", "domain", "offset", "resample index"])
def test_a_wrong_stream_key_is_caught(change):
    """Each part of the stream key -- seed, domain, resample index -- changes the null sample, so
    a kernel keyed otherwise than the CPU fails the identity tests above: the GPU run with the
    key changed differs from the CPU's in most resamples."""
    x = _matrix(40, 5, 1)
    cpu = _cpu(x, 9, 0, 64)
    seed, domain, b0, out = 9, DOMAIN_TUKEY, 0, np.empty(64)
    if change == "seed":
        seed = 10
    elif change == "domain":
        domain = DOMAIN_RANDOMIZATION
    elif change == "offset":
        b0 = 1
    T.tukey_ranges_cuda(x, R._permutation_table(5), np.uint64(seed), domain, b0, out,
                        emulate=True)
    if change == "resample index":  # the right draws, assigned to the wrong resamples
        out = out[::-1]
    assert np.count_nonzero(out != cpu) > 32


def test_backend_choice(monkeypatch):
    x = _matrix(10, 3, 0)
    with pytest.raises(InputError, match="backend"):
        S.tukey_hsd(x, n_resamples=10, backend="gpu")
    monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
    if gpu_ranking._device_reason() is not None:
        with pytest.raises(InputError, match="backend='cuda' cannot run here"):
            S.tukey_hsd(x, n_resamples=10, backend="cuda")
    # auto: a small problem stays on the CPU, whatever the machine
    t = S.tukey_hsd(x, n_resamples=10, backend="auto")
    assert json.loads(t.schema.metadata[b"uefast.stats"])["backend"] == "cpu"
    assert T.resolve_backend("auto", T.AUTO_MIN_WORK - 1) == "cpu"


def test_kernel_in_cuda_simulator():
    """The kernel as written (one thread per resample, local/global scratch, atomic counts,
    8 threads a block, several launches) in numba's CUDA simulator, m = 2..6 and 9 systems,
    odd and even topic counts: null sample bit-identical to the CPU's, device counts equal,
    ``tukey_hsd(backend="cuda")`` table equal; the device check script's Tukey phase runs and
    finds the GPU's null sample and p-values equal to the CPU's (~5 s)."""
    out = script_json("cuda_simulator_tukey.py", timeout=600)
    phase = out.pop("phase")  # benchmarks/gpu_phases.py's Tukey phase ran; it found equality
    assert len(phase) == 8 and [k for k, v in phase.items() if v is True] == [
        k for k in phase if k.endswith("identical")] and len(phase) - 2 == sum(
        isinstance(v, float) for v in phase.values())
    assert set(out) == {"2x7", "3x8", "4x9", "5x5", "6x11", "9x4"}
    for shape, v in out.items():
        assert v["q_equal"] and v["counts_equal"] and v["table_equal"], (shape, v)
        assert v["backend"] == "cuda" and v["pvalues"][0] == 1.0, (shape, v)
    assert min(min(v["pvalues"]) for v in out.values()) < 0.1


@pytest.mark.parametrize("method", ["bootstrap", "randomization"])
def test_all_pairs_other_resampling_tests_on_the_gpu(monkeypatch, method):
    """``all_pairs(..., backend="cuda")`` runs the bootstrap and randomisation resamples through
    :mod:`uefast.gpu.resample` (emulated here) with the CPU's p-values."""
    import uefast.gpu.resample as GR

    x = _matrix(40, 4, 8)
    cpu = S.all_pairs(x, method, n_resamples=400, seed=6, exact=False)
    monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    calls = []
    name = "bootstrap_sums_cuda" if method == "bootstrap" else "signflip_sums_cuda"
    real = getattr(GR, name)
    monkeypatch.setattr(GR, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    gpu = S.all_pairs(x, method, n_resamples=400, seed=6, exact=False, backend="cuda")
    assert calls
    assert gpu["pvalue"].equals(cpu["pvalue"])
    with pytest.raises(InputError, match="backend"):
        S.all_pairs(x, "t", backend="tpu")


def test_cli_compare_backend(tmp_path, capsys, monkeypatch):
    """``uefast compare --method tukey_hsd --backend cuda`` prints the CPU's rows (emulated)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from uefast.cli import main

    x = _matrix(12, 3, 2)
    rows = [(f"q{k}", f"s{j}", float(x[k, j])) for k in range(12) for j in range(3)]
    path = tmp_path / "per_query.parquet"
    pq.write_table(pa.table({"qid": [r[0] for r in rows], "system": [r[1] for r in rows],
                             "measure": ["AP"] * len(rows), "value": [r[2] for r in rows]}), path)
    out = {}
    for backend in ("cpu", "cuda"):
        if backend == "cuda":
            monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
        assert main(["compare", str(path), "--method", "tukey_hsd", "--n-resamples", "300",
                     "--format", "jsonl", "--backend", backend]) == 0
        out[backend] = [json.loads(r) for r in capsys.readouterr().out.splitlines()]
    assert out["cpu"] == out["cuda"] and len(out["cpu"]) == 3


@settings(max_examples=40, deadline=None)
@given(m=st.integers(2, 10), n=st.integers(1, 40), rows=st.integers(1, 20),
       b0=st.integers(0, 2**40), seed=st.integers(0, 2**64 - 1), data=st.data())
def test_null_sample_property(m, n, rows, b0, seed, data):
    """Any shape, seed and first resample: the emulated GPU steps give the CPU's null sample bit
    for bit (values drawn with ties and large/small magnitudes), and counts against thresholds
    taken from the sample itself."""
    vals = st.sampled_from([0.0, 1.0, -1.0, 0.5, 1e-9, 1e6, 0.1, 0.3])
    x = np.array(data.draw(st.lists(vals, min_size=n * m, max_size=n * m))).reshape(n, m)
    cpu = _cpu(x, seed, b0, rows)
    q = np.empty(rows)
    counts = T.tukey_ranges_cuda(x, R._permutation_table(m), np.uint64(seed), DOMAIN_TUKEY, b0,
                                 q, cpu, emulate=True)
    assert np.array_equal(q, cpu)
    assert counts.tolist() == [int(np.count_nonzero(cpu >= t)) for t in cpu]
