"""CPU time to compile the first command's two chunk kernels, without the rest of a cold start.

    python benchmarks/kernel_compile_time.py            # with SRC first on PYTHONPATH

Runs the first command's work (``uefast evaluate`` of the embedded sample, then nDCG@10 + AP on a
50-query MSLR-shaped table, as ``ab_startup.py cold``), so that every routine the kernels call is
compiled, then compiles fresh copies of the judged-pass and ranking-pass chunk kernels
(:func:`uefast.kernels.driver.chunk_kernels`, the family set with the most families that the
work used) four times with Numba's disk cache off for them, and prints the least and median CPU
time (``time.process_time``) of each. The chunk kernels are about half of a cold first command's
compile time and inline the dispatch and the routines, so a change to the code they inline shows
here with far less noise than in the whole cold start (one process, the same callees). Compare
trees by running it in turn with each on ``PYTHONPATH`` (a fresh ``NUMBA_CACHE_DIR`` each).
"""
from __future__ import annotations

import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from numba.core.caching import NullCache  # noqa: E402

import uefast  # noqa: E402
from _data import mslr_table  # noqa: E402
from uefast.cli import main  # noqa: E402
from uefast.kernels import driver  # noqa: E402


def measure(repeats: int = 4) -> dict[str, list[float]]:
    """kernel name -> CPU seconds of each of ``repeats`` compilations."""
    seen = {}
    orig = driver.chunk_kernels

    def recording(fams):
        seen[fams] = orig(fams)
        return seen[fams]

    driver.chunk_kernels = recording
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            main(["evaluate"])
        t = mslr_table(50, 1).select(["qid", "docid", "label", "sys0"])
        uefast.evaluate(t, measures=["nDCG@10", "AP"])
    finally:
        driver.chunk_kernels = orig
    fams, kernels = max(seen.items(), key=lambda kv: bin(kv[0]).count("1"))
    sigs = [k.signatures[0] for k in kernels]
    out: dict[str, list[float]] = {"judged": [], "ranking": []}
    for _ in range(repeats):
        orig.cache_clear()
        for name, k, sig in zip(out, orig(fams), sigs):
            k._cache = NullCache()  # compile anew, neither loaded from nor written to disk
            c0 = time.process_time()
            k.compile(sig)
            out[name].append(time.process_time() - c0)
    return out


if __name__ == "__main__":
    res = measure()
    print(" ".join(f"{k}: min {min(v):.3f} s, median {statistics.median(v):.3f} s"
                   for k, v in res.items()))
