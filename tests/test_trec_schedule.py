"""read_ahead_map (the thread schedule of evaluate_trec_files) against the sequential loop it
replaces: same results in order, the same error raised, read-ahead bounded by ``ahead``."""
from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.trec_eval.schedule import read_ahead_map


class Boom(Exception):
    pass


def _sequential(index, read, evaluate, items):
    qi = index()
    return [evaluate(read(x), qi) for x in items]


def _outcome(fn):
    try:
        return ("ok", fn())
    except Boom as exc:
        return ("error", str(exc))


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(0, 9), workers=st.integers(1, 4), ahead=st.integers(1, 3),
       bad_index=st.booleans(), bad_read=st.sets(st.integers(0, 8), max_size=3),
       bad_eval=st.sets(st.integers(0, 8), max_size=3), slow_index=st.booleans())
def test_same_results_and_error_as_the_loop(data, n, workers, ahead, bad_index, bad_read, bad_eval, slow_index):
    """Results in item order; the index's error first, else the first failing item's (read or
    evaluate) in item order, whatever the processing order, the number of workers and the
    timing."""
    items = list(range(n))
    order = data.draw(st.none() | st.permutations(items))

    def index():
        if slow_index:
            time.sleep(0.002)
        if bad_index:
            raise Boom("index")
        return 100

    def read(x):
        if x in bad_read:
            raise Boom(f"read {x}")
        return x * 10

    def evaluate(data, qi):
        if data // 10 in bad_eval:
            raise Boom(f"evaluate {data // 10}")
        return data + qi

    want = _outcome(lambda: _sequential(index, read, evaluate, items))
    got = _outcome(lambda: read_ahead_map(index, read, evaluate, items, workers, ahead, order))
    assert got == want


@pytest.mark.parametrize("ahead", [1, 2, 4])
def test_reads_ahead_while_the_index_is_built_and_no_further(ahead):
    """While the index is being built the other worker reads on, holding at most ``ahead`` files;
    nothing is evaluated before the index is there."""
    gate = threading.Event()
    log, lock = [], threading.Lock()

    def index():
        assert gate.wait(5)
        with lock:
            log.append("index")
        return 0

    def read(x):
        with lock:
            log.append(("read", x))
            if sum(1 for e in log if e != "index" and e[0] == "read") == ahead:
                gate.set()  # let the index finish once the reader has read `ahead` files
        return x

    def evaluate(data, qi):
        with lock:
            log.append(("eval", data))
        return data

    out = read_ahead_map(index, read, evaluate, list(range(8)), workers=2, ahead=ahead)
    assert out == list(range(8))
    first_eval = next(i for i, e in enumerate(log) if e != "index" and e[0] == "eval")
    assert log.index("index") < first_eval
    reads_before_index = [e for e in log[:log.index("index")] if e[0] == "read"]
    assert reads_before_index == [("read", x) for x in range(ahead)]


def test_no_new_item_after_an_error():
    """After a failing item no further item is read (items already taken are finished)."""
    seen = []

    def read(x):
        seen.append(x)
        if x == 2:
            raise Boom("read 2")
        return x

    with pytest.raises(Boom, match="read 2"):
        read_ahead_map(lambda: 0, read, lambda d, q: d, list(range(50)), workers=1)
    assert seen == [0, 1, 2]


def test_ahead_is_checked():
    with pytest.raises(ValueError, match="ahead must be >= 1, got 0"):
        read_ahead_map(lambda: 0, lambda x: x, lambda d, q: d, [1], workers=2, ahead=0)


def test_the_first_item_in_order_wins_over_the_first_in_time():
    """Item 1 fails first in time, item 0 (taken before it) fails later: item 0's error is
    raised, as the sequential loop would raise it."""
    one_failed = threading.Event()

    def read(x):
        if x == 0:
            assert one_failed.wait(5)
            raise Boom("read 0")
        one_failed.set()
        raise Boom("read 1")

    with pytest.raises(Boom, match="read 0"):
        read_ahead_map(lambda: 0, read, lambda d, q: d, [0, 1, 2], workers=3)


def test_a_later_item_in_processing_order_still_wins_if_first_in_item_order():
    """Processed last-to-first on one worker: items 3 then 1 fail; item 1's error is raised
    (the sequential loop meets it first), and item 0 is still done before that."""
    seen = []

    def read(x):
        seen.append(x)
        if x in (1, 3):
            raise Boom(f"read {x}")
        return x

    with pytest.raises(Boom, match="read 1"):
        read_ahead_map(lambda: 0, read, lambda d, q: d, [0, 1, 2, 3, 4], workers=1, order=[4, 3, 2, 1, 0])
    assert seen == [4, 3, 2, 1, 0]


def test_order_is_checked():
    with pytest.raises(ValueError, match=r"order must be a permutation of range\(3\), got \[0, 0, 1\]"):
        read_ahead_map(lambda: 0, lambda x: x, lambda d, q: d, [1, 2, 3], workers=2, order=[0, 0, 1])
