"""The thread driver of the chunked kernels (uefast.kernels.threads.run_chunks): every chunk runs
once, errors surface, results do not depend on the thread count, and a forked child still works."""
from __future__ import annotations

import multiprocessing
import threading

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import uefast
from uefast.errors import InputError
from uefast.kernels.threads import run_chunks
from uefast.sample import mslr_like


@numba.njit(nogil=True)
def _count_chunks(c0, c1, hits, owner, tag):
    for c in range(c0, c1):
        hits[c] += 1
        owner[c] = tag[0]


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    saved = numba.get_num_threads()
    numba.set_num_threads(min(request.param, numba.config.NUMBA_NUM_THREADS))
    yield numba.get_num_threads()
    numba.set_num_threads(saved)


@pytest.mark.parametrize("nchunks", [1, 2, 3, 7, 64, 1000])
def test_every_chunk_runs_exactly_once(threads, nchunks):
    hits = np.zeros(nchunks, np.int64)
    owner = np.zeros(nchunks, np.int64)
    run_chunks(_count_chunks, nchunks, hits, owner, np.array([1]))
    assert hits.tolist() == [1] * nchunks


def test_chunks_spread_over_threads():
    """With two threads the helper thread takes part (some batch runs outside the caller)."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs NUMBA_NUM_THREADS >= 2")
    seen = set()

    def kernel(c0, c1):
        seen.add(threading.get_ident())
        threading.Event().wait(0.001)  # give the other thread time to take a batch

    saved = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        run_chunks(kernel, 64)
    finally:
        numba.set_num_threads(saved)
    assert len(seen) == 2


def test_kernel_error_propagates(threads):
    def kernel(c0, c1):
        if c0 <= 5 < c1:
            raise ValueError("chunk 5 failed")

    with pytest.raises(ValueError, match="chunk 5 failed"):
        run_chunks(kernel, 16)


def _key(tab):
    return [tab.column(c).to_pylist() for c in tab.column_names]


def test_evaluate_identical_for_any_thread_count():
    """Bitwise-identical output tables with 1 and 2 threads (tied scores, string docids, every
    ranking path the measures reach), and the same duplicate reported."""
    t = mslr_like(300, 3, seed=11, string_ids=True)
    tied = t.set_column(t.column_names.index("sys1"), "sys1",
                        pc.round(t["sys1"], 1))
    ms = ["nDCG@10", "AP", "ERR@20", "RR", "P@5", "Rprec"]
    dup = t.set_column(t.column_names.index("docid"), "docid",
                       pa.array(t["docid"].to_pylist()[:-1] + [t["docid"][-2].as_py()]))
    results = {}
    saved = numba.get_num_threads()
    try:
        for n in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(n)
            out = [_key(uefast.evaluate(tied, measures=ms, ties=ties))
                   for ties in ("trec_eval", "input", "expected")]
            with pytest.raises(InputError) as err:
                uefast.evaluate(dup, measures=ms)
            results[n] = (out, str(err.value))
    finally:
        numba.set_num_threads(saved)
    first = results[1]
    assert all(r == first for r in results.values())


def _child(q):
    t = mslr_like(50, 1, seed=3)
    q.put(uefast.evaluate(t, measures=["AP"]).column("value").to_pylist())


def test_forked_child_evaluates():
    """The helper threads do not survive fork(): a child must make its own, not wait forever."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    t = mslr_like(50, 1, seed=3)
    parent = uefast.evaluate(t, measures=["AP"]).column("value").to_pylist()  # pool in use
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    try:
        assert q.get(timeout=60) == parent
    finally:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
