"""Benchmark data: deterministic MSLR-WEB30K-shaped tables (see uefast.sample.mslr_like).

``UEFAST_BENCH_SMALL=1`` shrinks every size (a CI smoke test); ``UEFAST_BENCH_LARGE=1`` adds the
300,000-query variant.
"""
from __future__ import annotations

import functools
import os
import time

from uefast.sample import mslr_like

SMALL = os.environ.get("UEFAST_BENCH_SMALL") == "1"
LARGE = os.environ.get("UEFAST_BENCH_LARGE") == "1"
N_QUERIES = 300 if SMALL else 31_531
N_QUERIES_LARGE = 3_000 if SMALL else 300_000
N_SYSTEMS = 8


@functools.lru_cache(maxsize=2)
def mslr_table(n_queries: int = N_QUERIES, n_systems: int = N_SYSTEMS, seed: int = 42):
    """The benchmark table (cached per process)."""
    return mslr_like(n_queries, n_systems, seed=seed)


def best_time(fn, rounds: int) -> float:
    """Least wall time of ``rounds`` calls of ``fn`` (the least disturbed estimate on a shared
    machine)."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
