"""Tie-breaking order: docids compared as trec_eval does (strcmp on the docno bytes)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.kernels.ordering import _int_str_compare

INT64 = st.integers(-(2**63), 2**63 - 1)
EDGES = st.sampled_from([0, 1, 9, 10, 11, 19, 99, 100, 101, 990, -1, -9, -10, -100,
                         10**18, 2**63 - 1, -(2**63) + 1, -(2**63), -922337203685477580])


@settings(max_examples=3000, deadline=None)
@given(st.one_of(INT64, EDGES, st.integers(-1000, 1000)), st.one_of(INT64, EDGES, st.integers(-1000, 1000)))
def test_integer_docids_compare_as_their_decimal_strings(a, b):
    sa, sb = str(a).encode(), str(b).encode()
    assert _int_str_compare(a, b) == (sa > sb) - (sa < sb)


# --------------------------------------------------------------------------- float32 counting
import numpy as np  # noqa: E402

from uefast.kernels.counting import (  # noqa: E402
    COUNT_BY_INDEX,
    COUNT_BY_KEY,
    rank_labels_f32,
    rank_labels_f32_ties,
    tie_keys_f32,
)

_EPS = 2.0 ** -40
# scores chosen to collide in float32: near-equal doubles, +-0, subnormal-float32 doubles,
# doubles beyond float32 range, infinities, binade edges
_POOL = [1.0, 1.0 + _EPS, 1.0 - _EPS, 2.0, 2.0 - _EPS, 0.0, -0.0, 1e-40, -1e-40, 3e-39, 1e-300,
         -1e-300, 3e39, 2e39, -3e39, np.inf, -np.inf, 0.5, 0.25, 0.1, 0.1 + 1e-17, 7.0, 7.0]


def _expected_labels(scores, labels, tb):
    """Labels in rank order: score descending, then tie-break key ascending (a plain sort)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], tb[i]))
    return [max(labels[i], 0) for i in order]


def _positive(labels):
    pidx = np.flatnonzero(np.asarray(labels) > 0).astype(np.int64)
    return pidx, len(pidx)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_POOL) | st.floats(-5, 5, allow_nan=False),
                          st.integers(-1, 3)), min_size=1, max_size=60),
       st.sampled_from(["index", "docid"]), st.randoms(use_true_random=False))
def test_float32_tie_counting_is_exact_or_declines(rows, tie_by, rnd):
    """rank_labels_f32_ties either declines or gives exactly the float64 ranking with ties
    broken by position (COUNT_BY_INDEX) or by descending same-width docid (COUNT_BY_KEY)."""
    scores = np.array([r[0] for r in rows], np.float64)
    labels = np.array([r[1] for r in rows], np.int64)
    n = len(rows)
    docids = np.array(rnd.sample(range(1000, 9999), n), np.int64)
    mode = COUNT_BY_INDEX if tie_by == "index" else COUNT_BY_KEY
    rows_ix = np.arange(n, dtype=np.int64)
    k32 = np.empty(n, np.float32)
    fp = np.empty(n, np.int32)
    tb = np.empty(n, np.int32)
    ok = tie_keys_f32(scores, scores.view(np.int64), rows_ix, n, mode, docids.copy(), k32, fp, tb)
    tie_key = list(range(n)) if mode == COUNT_BY_INDEX else [-d for d in docids]
    finite32 = all(abs(s) <= 3.4028234663852886e38 and not (0 < abs(s) < 1.1754943508222875e-38)
                   for s in scores)
    assert ok == finite32
    if not ok:
        return
    pidx, npos = _positive(labels)
    lraw = np.maximum(labels, 0)
    pk, pf, pt, acc = (np.empty(n + 8, t) for t in (np.float32, np.int32, np.int32, np.int32))
    lab = np.full(n, -7, np.int64)
    if rank_labels_f32_ties(k32, fp, tb, lraw, pidx, pk, pf, pt, acc, n, npos, lab):
        assert lab.tolist() == _expected_labels(scores.tolist(), labels.tolist(), tie_key)
    else:  # declined: only when two different doubles round to one float32
        with np.errstate(over="ignore"):
            f32 = scores.astype(np.float32)
        assert any(f32[i] == f32[j] and scores[i] != scores[j]
                   for i in range(n) for j in pidx)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_POOL) | st.floats(-5, 5, allow_nan=False),
                          st.integers(-1, 3)), min_size=1, max_size=60))
def test_plain_float32_counting_is_exact_or_declines(rows):
    """rank_labels_f32 accepts only segments where no positive document shares its float32
    score with another document, and then ranks exactly as float64."""
    scores = np.array([r[0] for r in rows], np.float64)
    labels = np.array([r[1] for r in rows], np.int64)
    n = len(rows)
    with np.errstate(over="ignore"):
        k32 = scores.astype(np.float32)
    pidx, npos = _positive(labels)
    pk = np.empty(n + 8, np.float32)
    pk[:npos] = k32[pidx]
    acc = np.empty(n + 8, np.int32)
    lab = np.full(n, -7, np.int64)
    shared = any(k32[i] == k32[j] for j in pidx for i in range(n) if i != j)
    assert rank_labels_f32(k32, np.maximum(labels, 0), pidx, pk, acc, n, npos, lab) == (not shared)
    if not shared:
        assert lab.tolist() == _expected_labels(scores.tolist(), labels.tolist(), list(range(n)))


def test_float32_tie_counting_accepts_exact_ties_and_declines_collisions():
    """The two outcomes on fixed inputs (so the property test above is not vacuous)."""
    def run(scores, labels):
        scores = np.asarray(scores, np.float64)
        n = len(scores)
        k32, fp, tb = np.empty(n, np.float32), np.empty(n, np.int32), np.empty(n, np.int32)
        assert tie_keys_f32(scores, scores.view(np.int64), np.arange(n), n, COUNT_BY_INDEX,
                            np.zeros(n, np.int64), k32, fp, tb)
        pidx, npos = _positive(labels)
        bufs = [np.empty(n + 8, t) for t in (np.float32, np.int32, np.int32, np.int32)]
        lab = np.empty(n, np.int64)
        return rank_labels_f32_ties(k32, fp, tb, np.asarray(labels), pidx, *bufs, n, npos, lab), lab

    ok, lab = run([1.0, 2.0, 1.0, 2.0, 0.5], [1, 0, 2, 3, 4])
    assert ok and lab.tolist() == [0, 3, 1, 2, 4]
    ok, _ = run([1.0, 1.0 + 2.0 ** -40, 0.5], [1, 0, 0])
    assert not ok


@pytest.mark.parametrize("ties", ["trec_eval", "input"])
def test_heavily_tied_segments_rank_as_float64(ties, ranking_path):
    """End to end on a segment mixing exact ties, float32-only collisions and edge values."""
    from test_engine_vs_naive import _check

    rng = np.random.default_rng(7)
    queries = []
    for _ in range(20):
        n = int(rng.integers(2, 80))
        scores = rng.choice(_POOL + [3.0, 3.0, 4.0, 4.0], size=n).tolist()
        labels = rng.integers(0, 4, size=n).tolist()
        docs = (rng.permutation(9000)[:n] + 1000).tolist()
        queries.append((labels, scores, docs))
    _check(queries, ties)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**62), max_size=200), st.integers(0, 5))
def test_heapsort_desc(values, extra):
    """The driver's sort for label lists too wide to count: descending, in place, a[n:] untouched."""
    from uefast.kernels.ordering import heapsort_desc

    a = np.array(values + [7] * extra, dtype=np.int64)
    n = len(values)
    heapsort_desc(a, n)
    assert a[:n].tolist() == sorted(values, reverse=True)
    assert a[n:].tolist() == [7] * extra


def test_int64_extremes_as_docids():
    """Distinct int64 docids spanning >= 2^63 crashed the duplicate check (its range test wrapped
    in int64: an out-of-bounds table index, a segfault or a false duplicate); -2^63 was taken for
    -(2^63 - 1) when breaking ties ("...808" > "...807" as trec_eval compares docnos)."""
    import pyarrow as pa

    import uefast

    t = pa.table({"qid": [1, 1, 1], "docid": pa.array([5 * 10**18, -5 * 10**18, 1], pa.int64()),
                  "label": [1, 0, 0], "score": [0.0, 1.0, 2.0]})
    assert uefast.evaluate(t, measures=["AP"], ue=False)["value"].to_pylist() == [pytest.approx(1 / 3)]
    docs = [-2**63, -2**63 + 1, 2**63 - 1, 0, -1, 10, 9, 100, -10, -9]
    t = pa.table({"qid": [1] * 10, "docid": pa.array(docs, pa.int64()), "label": [1] + [0] * 9,
                  "score": [0.5] * 10})
    as_str = t.set_column(1, "docid", pa.array([str(d) for d in docs]))
    for ties in ("trec_eval", "input", "expected"):
        a = uefast.evaluate(t, measures=["AP", "RR", "nDCG@3"], ties=ties)
        assert a.equals(uefast.evaluate(as_str, measures=["AP", "RR", "nDCG@3"], ties=ties))
    t = pa.table({"qid": [1, 1], "docid": pa.array([-2**63 + 1, -2**63], pa.int64()),
                  "label": [0, 1], "score": [1.0, 1.0]})
    assert uefast.evaluate(t, measures=["RR"], ue=False)["value"].to_pylist() == [1.0]
