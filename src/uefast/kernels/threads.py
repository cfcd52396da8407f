"""Running a chunked Numba kernel on several threads, driven from Python.

The heavy kernels (:mod:`uefast.kernels.driver`) split their work into ``nchunks`` contiguous
chunks of query groups and write every result to a fixed slot, so any thread may take any chunk.
They are compiled as plain ``nogil`` functions over a range of chunks, ``kernel(c0, c1, ...)``,
and :func:`run_chunks` hands ranges of chunks to a small pool of threads. This replaces a
``prange`` loop inside the kernel: Numba's parallel lowering compiles the loop body into a
separate gufunc and optimises every function it calls once more in each of the two modules, which
made the ranking pass's first compilation 37 s instead of 21 s (judged pass 11 s instead of 6 s;
measured on a 2-core VM, cold cache). Chunks are handed out first come, first served (a batch
of ``nchunks / (4 * threads)`` chunks at a time), so a thread slowed by another process does not
hold the others up; the results do not depend on which thread ran what.

The resampling kernels of :mod:`uefast.stats._kernels` run their 64 work items the same way
(first compilation of the bootstrap, randomisation and Tukey kernels 7.2 -> 4.1 s, same speed,
bitwise the same results for 1 and 2 threads).

Not every kernel gained: :func:`uefast.kernels.docrank.docid_byte_ranks` compiled as a chunk kernel
ranked string docids ~2x slower (single thread, 86 -> 155 ms on the MSLR-shaped table, also
when called from a ``prange`` loop), so it keeps its ``prange`` loop body.

Threads: ``numba.get_num_threads()`` of the calling thread (``NUMBA_NUM_THREADS``,
``numba.set_num_threads``), the calling thread being one of them.
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba as nb

__all__ = ["run_chunks"]

_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The helper threads of this process (made on first use; made again after a fork, whose
    child does not inherit the parent's threads)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            size = max(1, nb.config.NUMBA_NUM_THREADS - 1)
            _POOL = (os.getpid(), ThreadPoolExecutor(size, thread_name_prefix="uefast"))
        return _POOL[1]


def run_chunks(kernel, nchunks: int, *args) -> None:
    """Call ``kernel(c0, c1, *args)`` for ranges ``[c0, c1)`` covering ``range(nchunks)`` once,
    on up to ``numba.get_num_threads()`` threads (the caller's included); exceptions propagate.

    ``kernel`` must release the GIL (``nogil=True``) and write each chunk's results to slots of
    its own, so that the outcome does not depend on the thread count or the order of chunks."""
    threads = min(nb.get_num_threads(), nchunks)
    if threads <= 1:
        kernel(0, nchunks, *args)
        return
    step = max(1, nchunks // (4 * threads))
    batches = itertools.count()  # next() is atomic under the GIL: each batch is taken once

    def work():
        while True:
            c0 = next(batches) * step
            if c0 >= nchunks:
                return
            kernel(c0, min(c0 + step, nchunks), *args)

    helpers = [_pool().submit(work) for _ in range(threads - 1)]
    try:
        work()
    finally:
        for h in helpers:
            h.result()
