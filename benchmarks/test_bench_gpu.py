"""CUDA backend vs the CPU engine on the same MSLR-shaped Arrow table, in the same process.

Skipped without an NVIDIA GPU and numba-cuda. Workload as in ``test_bench_core.py`` (nDCG@10 + AP
with IUB, REB and UE V1/V2, end to end from an in-memory table), one system and all 8, for the
default kernel (rank by counting), the old one-thread sort kernel (``UEFAST_CUDA_KERNEL=sort``)
and, with ``UEFAST_CUDA_NET_MAX=1024``, the old shared-memory network kernel. Phase by phase:
``benchmarks/gpu_phases.py``. Run:

    python -m pytest benchmarks/test_bench_gpu.py -s

The ratios (CPU time / GPU time, "cpu/gpu": above 1 means the GPU is faster; same machine, same run)
are printed by ``test_zz_report``.
"""
from __future__ import annotations

import pytest

import uefast
from _data import SMALL, best_time, mslr_table
from uefast.gpu import cuda_unavailable_reason

MEASURES = ["nDCG@10", "AP"]
ROUNDS = 3 if SMALL else 10
TIMES: dict[str, float] = {}

pytestmark = pytest.mark.skipif(cuda_unavailable_reason() is not None,
                                reason=f"no CUDA device: {cuda_unavailable_reason()}")


def _tables():
    t = mslr_table()
    return {"1 system": t.select(["qid", "docid", "label", "sys0"]), "8 systems": t}


@pytest.mark.parametrize("which", ["1 system", "8 systems"])
@pytest.mark.parametrize("backend", ["cpu", "cuda", "cuda-sort", "cuda-network"])
def test_gpu_vs_cpu(benchmark, monkeypatch, which, backend):
    t = _tables()[which]
    name = "cuda" if backend.startswith("cuda") else "cpu"
    if backend in ("cuda-sort", "cuda-network"):
        monkeypatch.setenv("UEFAST_CUDA_KERNEL", "sort")
    if backend == "cuda-network":
        monkeypatch.setenv("UEFAST_CUDA_NET_MAX", "1024")
    fn = lambda: uefast.evaluate(t, measures=MEASURES, backend=name)  # noqa: E731
    fn()  # compile
    TIMES[f"{which} {backend}"] = best_time(fn, ROUNDS)
    benchmark.pedantic(fn, rounds=1, iterations=1)


def test_zz_report():
    if not TIMES:
        pytest.skip("nothing timed")
    for which in ("1 system", "8 systems"):
        cpu = TIMES.get(f"{which} cpu")
        for b in ("cuda", "cuda-sort", "cuda-network"):
            g = TIMES.get(f"{which} {b}")
            if cpu and g:
                print(f"{which}: cpu {cpu * 1e3:.1f} ms, {b} {g * 1e3:.1f} ms, "
                      f"cpu/gpu = {cpu / g:.2f}x")
