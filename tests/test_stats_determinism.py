"""Same seed -> same p-values for NUMBA_NUM_THREADS=1 and 2 (DESIGN §7); one subprocess each."""
from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import json
import numpy as np
from uefast.stats import all_pairs, paired_test, tukey_hsd
x = np.random.default_rng(1).random((101, 5)) + np.linspace(0, 0.08, 5)
out = {
    "boot": all_pairs(x, "bootstrap", n_resamples=999, seed=5)["pvalue"].to_pylist(),
    "boot_ci": all_pairs(x, "bootstrap", n_resamples=999, seed=5)["ci_low"].to_pylist(),
    "rand": all_pairs(x, "randomization", n_resamples=2001, seed=5)["pvalue"].to_pylist(),
    "tukey": tukey_hsd(x, n_resamples=1001, seed=5)["pvalue"].to_pylist(),
    "pair": paired_test(x[:, 0], x[:, 4], "bootstrap", n_resamples=777, seed=1).pvalue,
}
print(json.dumps(out))
"""


def _run(threads: int) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_pvalues_identical_for_1_and_2_threads():
    one, two = _run(1), _run(2)
    assert one == two
    assert min(one["tukey"]) < 1.0 and len(one["boot"]) == 10
