"""``benchmarks/gpu_phases.py`` (the device check script of issue 27): a clear exit where no GPU
exists, and every phase executed in numba's CUDA simulator (so the script runs when it meets a
GPU; its simulator timings mean nothing and are not checked)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import uefast.gpu.ranking as gpu_ranking
from gpu_script_runner import run_script

ROOT = Path(__file__).parents[1]


def _env():
    return {k: v for k, v in os.environ.items()
            if k not in (gpu_ranking.EMULATE_ENV, "NUMBA_ENABLE_CUDASIM")}


def test_no_gpu_exits_with_the_reason():
    if gpu_ranking._device_reason() is None:
        pytest.skip("a CUDA device is present")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_phases.py"), "--small"],
                         capture_output=True, text=True, env=_env(), timeout=300)
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.startswith("gpu_phases: no usable NVIDIA GPU here, nothing was timed: ")
    assert res.stderr.count("\n") == 1


@pytest.mark.parametrize("threshold", [1, 50, 51, 777, 10_000, 31_531, 31_532, 10**9])
def test_crossover_bisection(threshold):
    """The ``backend="auto"`` crossover search against a known threshold (the GPU wins from
    ``threshold`` queries): the answer is a size where the GPU won, within 15% (or one query)
    above the threshold; None when the GPU never wins in the range; few probes."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_phases import bisect_crossover

    probes = []

    def probe(nq):
        probes.append(nq)
        return nq >= threshold, 120 * nq

    r = bisect_crossover(probe, 50, 31_531)
    if threshold > 31_531:
        assert r is None and probes == [31_531]
        return
    rows, q = r
    assert rows == 120 * q and q >= threshold
    assert q == max(threshold, 50) or q <= max(1.15 * threshold, threshold + 1)
    assert len(probes) <= 2 + 7
    assert all((p >= threshold) == (p >= q) for p in probes)  # consistent with the answer


@pytest.mark.slow
def test_every_phase_runs_in_the_simulator():
    """~60 s: both systems' tables, both CUDA paths, every phase (the issue-27 pairs: grouping,
    judged pass, pipelined systems, device input, UE + output on the device), the crossover
    search, the resampling comparison."""
    out = run_script("cuda_simulator_phases.py", timeout=900)
    for line in ("device: numba CUDA simulator", "== 1 system ==", "== 8 systems ==",
                 "end to end, CUDA old (sort)", "end to end, CUDA new (counting)",
                 "H2D pageable", "H2D pinned (numba)", "device allocation",
                 "judged pass (GPU, in evaluate)", "rank+measures kernel", "D2H values",
                 "Arrow output", "host prep", "bootstrap 8 resamples x 36 columns, GPU",
                 "grouping CPU (counting sort, shuffled rows)",
                 "grouping GPU (radix sort, incl. H2D codes + D2H)",
                 "grouping GPU kernels only (codes resident, events)", "judged pass CPU",
                 "judged pass GPU (incl. transfers)", "8 systems, one counting call each",
                 "8 systems pipelined (copy s+1 || kernel s)",
                 "evaluate CPU engine, host Arrow (ties=input)",
                 "evaluate GPU from host Arrow (ties=input)",
                 "evaluate_device, columns already on the GPU",
                 "tukey B=9 x 8 systems x 3 topics, GPU kernel (events, inputs resident)",
                 "tukey B=9 x 8 systems x 3 topics, tukey_hsd end to end, GPU",
                 "UE + output on the host (",
                 "UE + output on the GPU (kernels, one D2H, Arrow)",
                 "UE + output GPU kernels + the D2H alone (events)",
                 "== backend='auto' crossover (MSLR-shaped, 2..3 queries, bisection) ==",
                 "crossover, 1 system(s): ", "crossover, 8 system(s): ",
                 "AUTO_MIN_ROWS to commit: ",
                 "== tukey_hsd backend='auto' crossover (1..9 resamples, bisection) ==",
                 "tukey_hsd 8 systems x 3 topics, B =      9: CPU",
                 "AUTO_MIN_WORK to commit: "):
        assert line in out, line
    assert out.count(" True\n") >= 2 and " False\n" not in out
    # every kernel-level phase of the counting path appears for both tables
    assert out.count("rank+measures kernel") == 2 and out.count("old/new") == 9
    # the GPU table of the output phase equals the host's, for both tables
    assert out.count("UE + output: GPU table equal to the host's") == 2
    # the crossover search timed both backends at each size it tried (the simulator: CPU wins)
    assert out.count(" queries, ") >= 2 and "-> GPU" not in out
