"""The bitonic sorting network (uefast.kernels.sortnet) against plain sorts: it either ranks a
segment exactly as the float64 scores order it or declines, and it declines only for the
documented reasons (so the fast path cannot silently switch itself off)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.kernels.sortnet import (
    SORTNET_LABEL_MAX,
    SORTNET_MAX_N,
    rank_labels_sortnet,
    sort_keys_desc,
    sortnet_pays,
)

_EPS = 2.0 ** -40
# doubles that collide or nearly collide in float32, signed zeros, infinities, subnormals
_POOL = [1.0, 1.0 + _EPS, 1.0 - _EPS, 2.0, 0.0, -0.0, 1e-40, -1e-40, 3e-39, 1e-300, 3e39,
         -3e39, np.inf, -np.inf, 0.5, 0.1, 0.1 + 1e-17, 7.0, np.nextafter(np.float32(7.0), np.float32(8.0))]


def _bucket(x32):
    """The network's sort key without the label bits (order-preserving int of the float32, -0 as
    +0, coarsened to 8 consecutive float32 values)."""
    u = (x32 + np.float32(0.0)).view(np.int32).astype(np.int64)
    o = np.where(u < 0, u ^ 0x7FFFFFFF, u)
    return o >> 3


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 31, 32, 33, 64, 100, 128, 129, 255, 256, 257,
                               400, 511, 512])
def test_sort_keys_desc_sorts_every_network_size(n):
    rng = np.random.default_rng(n)
    for values in (rng.integers(-2**31, 2**31, n), rng.integers(-3, 3, n), np.arange(n),
                   np.arange(n)[::-1], np.full(n, -2**31)):
        keys = np.empty(SORTNET_MAX_N, np.int32)
        keys[:n] = values
        m = sort_keys_desc(keys, n)
        assert m >= n and m in (16, 32, 64, 128, 256, 512) and (m == 16 or m // 2 < n)
        assert keys[:n].tolist() == sorted(np.asarray(values, np.int32).tolist(), reverse=True)


_ROW = st.tuples(st.sampled_from(_POOL) | st.floats(-5, 5, allow_nan=False, width=32)
                 | st.floats(-1e6, 1e6, allow_nan=False),
                 st.integers(-2, SORTNET_LABEL_MAX))


@settings(max_examples=400, deadline=None)
@given(st.lists(_ROW, min_size=1, max_size=140) | st.lists(_ROW, min_size=250, max_size=300),
       st.booleans())
def test_network_ranks_exactly_or_declines_for_the_stated_reasons(rows, big_label):
    scores = np.array([r[0] for r in rows], np.float64)
    labels = np.array([r[1] for r in rows], np.int64)
    if big_label:
        labels[len(labels) // 2] = SORTNET_LABEL_MAX + 1
    n = len(rows)
    with np.errstate(over="ignore"):
        k32 = scores.astype(np.float32)
    lraw = np.maximum(labels, 0)
    keys = np.empty(SORTNET_MAX_N, np.int32)
    lab = np.full(n, -7, np.int64)
    ok = rank_labels_sortnet(k32, lraw, n, keys, lab)
    b = np.sort(_bucket(k32))
    must_decline = big_label or bool(np.any(b[1:] == b[:-1]))
    assert ok == (not must_decline)
    if ok:  # exact: the float64 order, no tie to break
        order = sorted(range(n), key=lambda i: -scores[i])
        assert lab.tolist() == [int(lraw[i]) for i in order]


def test_network_declines_nan_and_long_segments():
    keys = np.empty(SORTNET_MAX_N, np.int32)
    k32 = np.array([1.0, np.nan, 3.0], np.float32)
    assert not rank_labels_sortnet(k32, np.ones(3, np.int64), 3, keys, np.empty(3, np.int64))
    n = SORTNET_MAX_N + 1
    k32 = np.arange(n, dtype=np.float32) * 16
    assert not rank_labels_sortnet(k32, np.ones(n, np.int64), n, keys, np.empty(n, np.int64))
    assert rank_labels_sortnet(k32[:-1], np.ones(n, np.int64), n - 1, keys, np.empty(n, np.int64))


def test_network_accepts_distinct_scores_at_every_size():
    """Distinct, well-separated scores are always taken (guards the fast path)."""
    rng = np.random.default_rng(7)
    keys = np.empty(SORTNET_MAX_N, np.int32)
    for n in range(2, SORTNET_MAX_N + 1, 37):
        k32 = (rng.permutation(n) * 0.25 - 3.0).astype(np.float32)
        lraw = rng.integers(0, 5, n)
        lab = np.empty(n, np.int64)
        assert rank_labels_sortnet(k32, lraw, n, keys, lab)
        assert lab.tolist() == lraw[np.argsort(-k32, kind="stable")].tolist()


def test_sortnet_pays_thresholds():
    assert not sortnet_pays(1, 1) and not sortnet_pays(SORTNET_MAX_N + 1, 300)
    assert sortnet_pays(120, 58) and not sortnet_pays(120, 3)
    for n in (20, 100, 200, 500):
        flags = [sortnet_pays(n, p) for p in range(0, min(n, 40) + 1)]
        assert flags == sorted(flags)  # once worth it, more positives keep it worth it
