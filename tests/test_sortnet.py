"""The bitonic sorting network (uefast.kernels.sortnet) against plain sorts: it either ranks a
segment exactly as the float64 scores order it or declines, and it declines only for the
documented reasons (so the fast path cannot silently switch itself off)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.kernels.counting import COUNT_BY_INDEX, COUNT_BY_KEY, tie_keys_f32, tie_order
from uefast.kernels.ordering import DOC_BYTES, DOC_INT, DOC_NONE, TIE_DOCID, TIE_INPUT
from uefast.kernels.sortnet import (
    SORTNET_LABEL_MAX,
    SORTNET_MAX_N,
    SORTNET_TB_MAX,
    SORTNET_TIES_MAX_N,
    rank_labels_sortnet,
    rank_labels_sortnet_groups,
    rank_labels_sortnet_ties,
    sort_keys_desc,
    sortnet_pays,
    sortnet_ties_pays,
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
                               400, 511, 512, 513, 700, 1024, 1025, 2000, 2048])
def test_sort_keys_desc_sorts_every_network_size(n):
    rng = np.random.default_rng(n)
    for values in (rng.integers(-2**31, 2**31, n), rng.integers(-3, 3, n), np.arange(n),
                   np.arange(n)[::-1], np.full(n, -2**31)):
        keys = np.empty(SORTNET_MAX_N, np.int32)
        keys[:n] = values
        m = sort_keys_desc(keys, n, np.int32(-2**31), np.empty(SORTNET_MAX_N, np.int32))
        if n <= 256:  # one network: n rounded up to a power of two >= 16
            assert m >= n and m in (16, 32, 64, 128, 256) and (m == 16 or m // 2 < n)
        else:  # 256-key blocks, merged
            assert m == -(-n // 256) * 256
        assert keys[:n].tolist() == sorted(np.asarray(values, np.int32).tolist(), reverse=True)


_ROW = st.tuples(st.sampled_from(_POOL) | st.floats(-5, 5, allow_nan=False, width=32)
                 | st.floats(-1e6, 1e6, allow_nan=False),
                 st.integers(-2, SORTNET_LABEL_MAX))


@pytest.mark.slow  # ~10 s warm; compiling the unrolled networks it calls: minutes cold
@settings(max_examples=400, deadline=None)
@given(st.lists(_ROW, min_size=1, max_size=140) | st.lists(_ROW, min_size=250, max_size=300),
       st.booleans())
def test_network_ranks_exactly_or_declines_for_the_stated_reasons(rows, big_label):
    _check_network(rows, big_label)


def _long_rows(seed, n, tied):
    """n rows (score, label) drawn by NumPy from ``seed`` (Hypothesis draws the seed: lists of
    this length exceed its entropy budget): scores from the collision pool, a few tied values,
    float32-representable and arbitrary doubles, mixed in proportions that vary by seed, so
    that some segments are taken and some declined."""
    rng = np.random.default_rng(seed)
    # kinds: the collision pool, a grid of well-separated (tied) values, float32 values, doubles
    mixes = ([0.0, 0.0, 0.5, 0.5], [0.002, 0.0, 0.499, 0.499], [0.3, 0.0, 0.35, 0.35])
    if tied:
        mixes += ([0.0, 1.0, 0.0, 0.0], [0.002, 0.9, 0.0, 0.098])
    kind = rng.choice(4, n, p=mixes[rng.integers(len(mixes))])
    pool = np.array(_POOL + ([-1.0, 0.0, 1.0, 2.5] if tied else []), np.float64)
    scores = np.select([kind == 0, kind == 1, kind == 2],
                       [rng.choice(pool, n), rng.integers(-20, 20, n) * 0.5,
                        rng.uniform(-5, 5, n).astype(np.float32)], rng.uniform(-1e6, 1e6, n))
    labels = rng.integers(-1 if tied else -2, 5 if tied else SORTNET_LABEL_MAX + 1, n)
    return list(zip(scores.tolist(), labels.tolist()))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(500, 1100), st.booleans())
def test_network_on_long_segments_ranks_exactly_or_declines(seed, n, big_label):
    """Segments longer than one 256-key block: network-sorted blocks, merged."""
    _check_network(_long_rows(seed, n, tied=False), big_label)


def _check_network(rows, big_label):
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
    ok = rank_labels_sortnet(k32, lraw, n, keys, np.empty_like(keys), lab)
    b = np.sort(_bucket(k32))
    must_decline = big_label or bool(np.any(b[1:] == b[:-1]))
    assert ok == (not must_decline)
    if ok:  # exact: the float64 order, no tie to break
        order = sorted(range(n), key=lambda i: -scores[i])
        assert lab.tolist() == [int(lraw[i]) for i in order]


def test_network_declines_nan_and_long_segments():
    keys = np.empty(SORTNET_MAX_N, np.int32)
    k32 = np.array([1.0, np.nan, 3.0], np.float32)
    tmp = np.empty_like(keys)
    assert not rank_labels_sortnet(k32, np.ones(3, np.int64), 3, keys, tmp, np.empty(3, np.int64))
    n = SORTNET_MAX_N + 1
    k32 = np.arange(n, dtype=np.float32) * 16
    assert not rank_labels_sortnet(k32, np.ones(n, np.int64), n, keys, tmp, np.empty(n, np.int64))
    assert rank_labels_sortnet(k32[:-1], np.ones(n, np.int64), n - 1, keys, tmp, np.empty(n, np.int64))


def test_network_accepts_distinct_scores_at_every_size():
    """Distinct, well-separated scores are always taken (guards the fast path)."""
    rng = np.random.default_rng(7)
    keys = np.empty(SORTNET_MAX_N, np.int32)
    for n in range(2, SORTNET_MAX_N + 1, 37):
        k32 = (rng.permutation(n) * 0.25 - 3.0).astype(np.float32)
        lraw = rng.integers(0, 5, n)
        lab = np.empty(n, np.int64)
        assert rank_labels_sortnet(k32, lraw, n, keys, np.empty_like(keys), lab)
        assert lab.tolist() == lraw[np.argsort(-k32, kind="stable")].tolist()


def test_sortnet_pays_thresholds():
    assert not sortnet_pays(1, 1) and not sortnet_pays(SORTNET_MAX_N + 1, 300)
    assert sortnet_pays(120, 58) and not sortnet_pays(120, 3)
    for n in (20, 100, 200, 500):
        flags = [sortnet_pays(n, p) for p in range(0, min(n, 40) + 1)]
        assert flags == sorted(flags)  # once worth it, more positives keep it worth it


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 33, 64, 127, 128, 129, 256, 300, 512])
def test_sort_keys_desc_sorts_int64_keys_at_every_network_size(n):
    rng = np.random.default_rng(n)
    for values in (rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64), rng.integers(-3, 3, n),
                   np.arange(n), np.full(n, -2**63)):
        keys = np.empty(SORTNET_TIES_MAX_N, np.int64)
        keys[:n] = values
        sort_keys_desc(keys, n, np.int64(-2**63), np.empty(SORTNET_MAX_N, np.int64))
        assert keys[:n].tolist() == sorted(np.asarray(values, np.int64).tolist(), reverse=True)


_TIED_ROW = st.tuples(st.sampled_from(_POOL) | st.sampled_from([-1.0, 0.0, 1.0, 2.5])
                      | st.floats(-5, 5, allow_nan=False), st.integers(-1, 4))


@pytest.mark.slow  # ~10 s warm; compiling the unrolled networks it calls: minutes cold
@settings(max_examples=300, deadline=None)
@given(st.lists(_TIED_ROW, min_size=1, max_size=140) | st.lists(_TIED_ROW, min_size=300, max_size=520),
       st.sampled_from(["index", "docid", "wide docid"]), st.randoms(use_true_random=False))
def test_tie_network_ranks_exactly_or_declines_for_the_stated_reasons(rows, tie_by, rnd):
    """The tie-aware network gives exactly the float64 ranking with ties broken by position or
    by descending same-width docid, or declines -- only for a float32 collision (two different
    doubles, one float32), a tie-break key beyond 23 bits, or a segment longer than 512."""
    scores = np.array([r[0] for r in rows], np.float64)
    labels = np.array([r[1] for r in rows], np.int64)
    n = len(rows)
    lo = 10**9 if tie_by == "wide docid" else 10**6
    docids = np.array(rnd.sample(range(lo, 2 * lo), n), np.int64)
    mode = COUNT_BY_INDEX if tie_by == "index" else COUNT_BY_KEY
    k32, fp, tb = np.empty(n, np.float32), np.empty(n, np.int32), np.empty(n, np.int32)
    if not tie_keys_f32(scores, scores.view(np.int64), np.arange(n, dtype=np.int64), n, mode,
                        docids.copy(), k32, fp, tb):
        return  # out of float32 range: the caller counts in float64
    lraw = np.maximum(labels, 0)
    keys = np.empty(SORTNET_TIES_MAX_N, np.int64)
    lab = np.full(n, -7, np.int64)
    ok = rank_labels_sortnet_ties(k32, fp, tb, lraw, n, keys, np.empty_like(keys), lab)
    doubles_per_float32: dict[float, set] = {}
    for a, b in zip(k32.tolist(), scores.tolist()):
        doubles_per_float32.setdefault(a, set()).add(b)
    collision = any(len(v) > 1 for v in doubles_per_float32.values())
    must_decline = n > SORTNET_TIES_MAX_N or int(tb.max()) > SORTNET_TB_MAX or collision
    assert ok == (not must_decline)
    if ok:
        tie_key = list(range(n)) if mode == COUNT_BY_INDEX else [-d for d in docids]
        order = sorted(range(n), key=lambda i: (-scores[i], tie_key[i]))
        assert lab.tolist() == [int(lraw[i]) for i in order]


def test_tie_network_accepts_exact_ties_and_declines_collisions():
    """Both outcomes on fixed inputs (so the property test above is not vacuous)."""
    scores = np.array([2.0, 1.0, 1.0, 1.0 + 2.0 ** -40, 0.5] * 8)
    n = len(scores)
    docids = np.arange(100000, 100000 + n, dtype=np.int64)
    keys = np.empty(SORTNET_TIES_MAX_N, np.int64)
    for s, expect in ((scores, False), (np.where(scores == 1.0 + 2.0 ** -40, 3.0, scores), True)):
        k32, fp, tb = np.empty(n, np.float32), np.empty(n, np.int32), np.empty(n, np.int32)
        assert tie_keys_f32(s, s.view(np.int64), np.arange(n, dtype=np.int64), n, COUNT_BY_KEY,
                            docids.copy(), k32, fp, tb)
        lab = np.empty(n, np.int64)
        tmp = np.empty_like(keys)
        assert rank_labels_sortnet_ties(k32, fp, tb, np.ones(n, np.int64), n, keys, tmp, lab) == expect


def test_sortnet_ties_pays_thresholds():
    assert not sortnet_ties_pays(SORTNET_TIES_MAX_N + 1, 400) and sortnet_ties_pays(120, 58)
    for n in (20, 200, 500):
        flags = [sortnet_ties_pays(n, p) for p in range(0, 60)]
        assert flags == sorted(flags) and flags[-1]


def _pos_bits(n):
    s = 4
    while (1 << s) < n:
        s += 1
    return s


@pytest.mark.slow  # ~10 s warm; compiling the unrolled networks it calls: minutes cold
@settings(max_examples=300, deadline=None)
@given(st.lists(_TIED_ROW, min_size=1, max_size=140) | st.lists(_TIED_ROW, min_size=300, max_size=520),
       st.sampled_from([1, -1, 0]))
def test_group_network_ranks_exactly_or_declines_for_the_stated_reasons(rows, order):
    """The int32 tie-group network gives exactly the float64 ranking with ties in position order
    (``order`` 1) or reverse position order (-1), or declines -- only when some bucket of 2^s
    consecutive float32 values (s: the bits of a position) holds two different doubles, when
    ``order`` is 0, or for a segment longer than SORTNET_MAX_N."""
    _check_group_network(rows, order)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(500, 1100), st.sampled_from([1, -1]))
def test_group_network_on_long_segments_ranks_exactly_or_declines(seed, n, order):
    _check_group_network(_long_rows(seed, n, tied=True), order)


def _check_group_network(rows, order):
    scores = np.array([r[0] for r in rows], np.float64)
    lraw = np.maximum(np.array([r[1] for r in rows], np.int64), 0)
    n = len(rows)
    with np.errstate(over="ignore"):
        k32 = scores.astype(np.float32)
    keys = np.empty(SORTNET_MAX_N, np.int32)
    lab = np.full(n, -7, np.int64)
    ok = rank_labels_sortnet_groups(k32, scores, order, lraw, n, keys, np.empty_like(keys), lab,
                                    np.empty(n))
    doubles_per_bucket: dict[int, set] = {}
    for b, x in zip((_bucket(k32) >> (_pos_bits(n) - 3)).tolist(), scores.tolist()):
        doubles_per_bucket.setdefault(b, set()).add(x)
    shared = any(len(v) > 1 for v in doubles_per_bucket.values())
    assert ok == (not (n > SORTNET_MAX_N or order == 0 or shared))
    if ok:
        ranking = sorted(range(n), key=lambda i: (-scores[i], order * i))
        assert lab.tolist() == [int(lraw[i]) for i in ranking]


def test_group_network_accepts_ties_and_declines_shared_buckets():
    """Both outcomes on fixed inputs (so the property test above is not vacuous): exact ties
    (with -0 and +0 one score) are ranked, in either tie direction; 1 and 1 + 2^-40 (one float32)
    and 1 and its float32 successor (one bucket, two scores) are declined, as is a NaN score."""
    keys = np.empty(SORTNET_MAX_N, np.int32)
    for reps in (5, 125, SORTNET_MAX_N // 8):  # one network, merged blocks, the longest segment
        tied = np.array([2.0, 1.0, 0.0, 1.0, -0.0, 0.5, 2.0, 0.0] * reps)
        n = tied.size
        lraw = np.arange(n, dtype=np.int64) % 5
        for order in (1, -1):
            lab = np.empty(n, np.int64)
            assert rank_labels_sortnet_groups(tied.astype(np.float32), tied, order, lraw, n,
                                              keys, np.empty_like(keys), lab, np.empty(n))
            ranking = sorted(range(n), key=lambda i: (-tied[i], order * i))
            assert lab.tolist() == lraw[ranking].tolist()
    base = np.array([2.0, 1.0, 0.0, 1.0, -0.0, 0.5, 2.0, 0.0] * 5)
    n = base.size
    lraw = np.arange(n, dtype=np.int64) % 5
    close = [1.0 + 2.0 ** -40, float(np.nextafter(np.float32(1.0), np.float32(2.0))), np.nan]
    for x in close:
        s = base.copy()
        s[1] = x
        assert not rank_labels_sortnet_groups(s.astype(np.float32), s, 1, lraw, n, keys,
                                              np.empty_like(keys), np.empty(n, np.int64),
                                              np.empty(n))


@pytest.mark.parametrize("has_perm", [False, True])
def test_tie_order_directions(has_perm):
    """tie_order: position order for input ties and for trec_eval without docids; for trec_eval
    with same-width non-negative integer docids, position order when they fall with position,
    reverse when they rise, 0 (declined) when neither, for mixed widths, negative or string ids."""
    def order(tie_mode, doc_mode, docs):
        docs = np.asarray(docs, np.int64)
        n = docs.size
        if has_perm:  # the same segment read through a permutation of a longer column
            perm = np.arange(2 * n, dtype=np.int64)[::-1].copy()
            col = np.empty(2 * n, np.int64)
            col[perm[n:2 * n]] = docs
            got = tie_order(tie_mode, doc_mode, col, perm, True, n, n, False)
        else:
            got = tie_order(tie_mode, doc_mode, docs, np.empty(0, np.int64), False, 0, n, False)
        if tie_mode == TIE_DOCID and doc_mode == DOC_INT and n > 1 and np.all(np.diff(docs) > 0):
            # known to rise (from the duplicate check): only the width is looked at (one document
            # has no ties: either direction is right)
            assert tie_order(tie_mode, doc_mode, docs, np.empty(0, np.int64), False, 0, n, True) == got
        return got

    assert order(TIE_INPUT, DOC_INT, [5, 1, 9]) == 1
    assert order(TIE_DOCID, DOC_NONE, [5, 1, 9]) == 1
    assert order(TIE_DOCID, DOC_INT, [30, 20, 10]) == 1
    assert order(TIE_DOCID, DOC_INT, [10, 20, 30]) == -1
    assert order(TIE_DOCID, DOC_INT, [7]) == 1
    assert order(TIE_DOCID, DOC_INT, [10, 30, 20]) == 0
    assert order(TIE_DOCID, DOC_INT, [9, 10, 11]) == 0   # widths differ: strcmp order is not numeric
    assert order(TIE_DOCID, DOC_INT, [-3, -2, -1]) == 0
    assert order(TIE_DOCID, DOC_BYTES, [1, 2, 3]) == 0
