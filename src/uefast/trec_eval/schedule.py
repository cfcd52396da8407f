"""Several run files against one qrels index on a few threads, no core idle while it is built.

The runs cannot be evaluated before the qrels are indexed (the one-pass scan of a run joins as it
goes), but they can be read and decompressed.  :func:`read_ahead_map` gives the index to one
worker and lets the others read run files ahead in the meantime, then every worker evaluates what
it holds and goes on with the next file.  The work is the same as reading and evaluating one file
after the other; only the order on each thread changes.

Why not an extra thread for the index, as before: on 2 cores (17 TREC 2003 Robust runs) the index
thread then shared the cores with two readers, which had read their first file by 15 ms and
waited idle until the index was done at 47 ms -- a whole core idle for a quarter of the round.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["read_ahead_map"]

IndexT = TypeVar("IndexT")
ResultT = TypeVar("ResultT")


def read_ahead_map(index: Callable[[], IndexT], read: Callable[[Any], Any],
                   evaluate: Callable[[Any, IndexT], ResultT],
                   items: Sequence[Any], workers: int, ahead: int = 4,
                   order: Sequence[int] | None = None) -> list[ResultT]:
    """``[evaluate(read(x), index()) for x in items]`` on ``workers`` threads (``read`` and
    ``evaluate`` should release the GIL for most of their time).

    Algorithm: worker 0 calls ``index()`` first; every worker takes the next item (in ``order``,
    a permutation of the item positions: default ``items`` order), reads it, and, while the index
    is not ready yet, reads the next one, up to ``ahead`` items held per worker (then it waits for
    the index); once the index is ready it evaluates what it holds.  Taking the longest items
    first (``order``) shortens the tail where one worker finishes the last item alone.

    Errors come as from the sequential loop over ``items``: the index's error first, else the
    error of the first failing item in ``items`` order (its read or its evaluation).  After an
    error only items before the failing one (in ``items`` order) are still taken, so all of those
    are done and an earlier item's error is the one raised.  Results come in ``items`` order.
    """
    if ahead < 1:
        raise ValueError(f"ahead must be >= 1, got {ahead!r}")
    n_items = len(items)
    seq = list(range(n_items)) if order is None else [int(i) for i in order]
    if sorted(seq) != list(range(n_items)):
        raise ValueError(f"order must be a permutation of range({n_items}), got {list(order)!r}")
    results: list[Any] = [None] * n_items
    errors: list[BaseException | None] = [None] * n_items
    box: dict[str, Any] = {}
    ready = threading.Event()
    lock = threading.Lock()
    nxt = [0]
    bad = [n_items]  # lowest failing position: items from it on are no longer taken

    def fail(i: int, exc: BaseException) -> None:
        with lock:
            errors[i] = exc
            bad[0] = min(bad[0], i)

    def take() -> int | None:
        with lock:
            while nxt[0] < n_items:
                i = seq[nxt[0]]
                nxt[0] += 1
                if i < bad[0]:
                    return i
            return None

    def work(k: int) -> None:
        if k == 0:
            try:
                box["index"] = index()
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller, first
                box["error"] = exc
                with lock:
                    bad[0] = -1
            finally:
                ready.set()
        held: list[tuple[int, Any]] = []
        while True:
            i = take()
            if i is not None:
                try:
                    held.append((i, read(items[i])))
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller, in order
                    fail(i, exc)
                if not ready.is_set() and len(held) < ahead:
                    continue  # the index is being built: read on
            elif not held:
                return
            ready.wait()
            if "error" in box:
                return
            for j, data in held:
                if j > bad[0]:  # after an earlier item's error: not needed
                    continue
                try:
                    results[j] = evaluate(data, box["index"])
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller, in order
                    fail(j, exc)
            held.clear()

    n = max(1, min(workers, n_items))
    if n == 1:
        work(0)
    else:
        with ThreadPoolExecutor(n) as ex:
            for f in [ex.submit(work, k) for k in range(n)]:
                f.result()
    if "error" in box:
        raise box["error"]
    for exc in errors:
        if exc is not None:
            raise exc
    return results
