"""UE scores and the output table's numeric columns assembled on the GPU
(:mod:`uefast.gpu.output`, used by ``evaluate_device``): bitwise the CPU's UE formula
(:func:`uefast.ue.ue_scores`) and the CPU engine's rows, every degenerate policy, with and
without UE, one device-to-host copy. One test body per backend (``tests/gpu_output_ref.py``):
emulated (the kernels' per-row steps on the CPU), numba's CUDA simulator (subprocess, slow),
and a GPU where one exists (marked ``gpu``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import uefast.gpu.ranking as gpu_ranking
from gpu_device_ref import FakeDeviceArray
from gpu_output_ref import (assert_assembly, assert_evaluate_device, assert_partitions,
                            check_assembly, check_evaluate_device, check_partitions)
from gpu_script_runner import script_json

HERE = Path(__file__).parent


@pytest.fixture(params=["emulated", pytest.param("device", marks=pytest.mark.gpu)])
def backend(request, monkeypatch):
    if request.param == "emulated":
        monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
        return "emulated"
    monkeypatch.delenv(gpu_ranking.EMULATE_ENV, raising=False)
    reason = gpu_ranking._device_reason()
    if reason is not None:
        pytest.skip(f"no CUDA device: {reason}")
    return "device"


def test_assembly_against_numpy(backend):
    """Every column of every row (value, IUB, REB, V1, V2, counts, row index), the dropped
    rows, for the three degenerate policies, against NumPy and ``ue_scores``: bitwise."""
    if backend == "emulated":
        assert_assembly(check_assembly(True))
    else:
        from numba import cuda

        assert_assembly(check_assembly(False, cuda.to_device))


def test_evaluate_device_matches_the_cpu_engine(backend):
    """``evaluate_device`` (UE and assembly on the device) = ``uefast.evaluate`` on the host."""
    if backend == "emulated":
        to_device = FakeDeviceArray
    else:
        from numba import cuda

        to_device = cuda.to_device
    assert_evaluate_device(check_evaluate_device(
        lambda cols: {k: to_device(np.ascontiguousarray(v)) for k, v in cols.items()}),
        exact=backend == "emulated")


def test_a_wrong_ue_is_caught(monkeypatch):
    """The oracle can fail: V1 and V2 swapped in the expected columns fail the comparison."""
    import gpu_output_ref as ref

    real = ref.ue_scores
    monkeypatch.setattr(ref, "ue_scores", lambda *a: real(*a)[::-1])
    res = check_assembly(True)
    assert not any(v["columns_equal"] for k, v in res.items() if k.endswith("/ue"))


@pytest.mark.slow
def test_output_kernels_in_cuda_simulator():
    """~60 s: the flag, scan and write kernels in numba's CUDA simulator (4 threads a block,
    a scan of 8 threads): the assembly bitwise equal to NumPy with exactly one device-to-host
    copy, and ``evaluate_device`` equal to the CPU engine, every policy."""
    out = script_json("cuda_simulator_output.py")
    assert_assembly(out["assembly"], want_copies=1)
    assert_evaluate_device(out["evaluate_device"])
    assert_partitions(out["partitions"])


def test_partitioned_frame(backend):
    """A Dask-cuDF-like frame (stand-in: ``dask.delayed`` partitions of device-array stand-ins):
    its partitions' columns joined on the device, the table bit for bit the CPU engine's on
    the whole host table; partitions with other columns or dtypes refused with their index."""
    if backend == "emulated":
        to_device = FakeDeviceArray
    else:
        from numba import cuda

        to_device = cuda.to_device
    assert_partitions(check_partitions(to_device))


@pytest.mark.gpu
def test_dask_cudf_frame():
    """A real Dask-cuDF DataFrame (3 partitions) = ``uefast.evaluate`` on the host table; needs
    a GPU, cuDF and dask-cudf (RAPIDS), skipped with the reason otherwise."""
    reason = gpu_ranking._device_reason()
    if reason is not None:
        pytest.skip(f"no CUDA device: {reason}")
    cudf = pytest.importorskip("cudf", reason="cuDF (RAPIDS) is not installed")
    dask_cudf = pytest.importorskip("dask_cudf", reason="dask-cudf (RAPIDS) is not installed")
    import uefast
    from gpu_device_ref import compare, device_case
    from uefast.gpu import evaluate_device

    t, _ = device_case(12)
    frame = dask_cudf.from_cudf(cudf.DataFrame.from_arrow(t), npartitions=3)
    r = compare(uefast.evaluate(t, measures=["nDCG@10", "AP"]),
                evaluate_device(frame, measures=["nDCG@10", "AP"]))
    assert r["keys_equal"] and r["ints_equal"] and max(r["value"], r["iub"], r["reb"]) <= 1e-12
