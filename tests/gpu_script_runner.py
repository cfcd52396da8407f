"""Run one of the GPU check scripts (``tests/cuda_simulator_*.py``, ``tests/cuda_ptx.py``) in a
subprocess, as the GPU tests do: without the CPU emulation switch (the simulator scripts turn
numba's CUDA simulator on themselves), skipping the test when the script exits with 3 (what it
needs is missing from this numba) and failing it, with the end of the script's stderr, on any
other non-zero exit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import uefast.gpu.ranking as gpu_ranking

HERE = Path(__file__).parent


def run_script(name: str, *argv, timeout: int = 1200, env_extra=None) -> str:
    """The stdout of ``tests/<name>`` run with ``argv``."""
    env = {k: v for k, v in os.environ.items() if k != gpu_ranking.EMULATE_ENV}
    env.update(env_extra or {})
    res = subprocess.run([sys.executable, str(HERE / name), *map(str, argv)], capture_output=True,
                         text=True, env=env, timeout=timeout)
    if res.returncode == 3:
        pytest.skip(res.stderr.strip()[-500:])
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def script_json(name: str, *argv, timeout: int = 1200, env_extra=None):
    """The JSON object on the last line of ``tests/<name>``'s stdout."""
    out = run_script(name, *argv, timeout=timeout, env_extra=env_extra)
    return json.loads(out.strip().splitlines()[-1])
