"""The dense bigram overlap kernel (clipped2_by_ref) against brute-force clipped counts and the
hashed kernel, including references with too many distinct tokens for its dense table."""
from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.text import _rouge_kernels as K
from uefast.text.rouge import _by_ref


def _brute(c, r):
    cc = Counter(zip(c, c[1:]))
    rc = Counter(zip(r, r[1:]))
    return sum(min(v, rc[g]) for g, v in cc.items())


def _texts(draw, n, vocab, max_len):
    return [draw(st.lists(st.integers(0, vocab - 1), max_size=max_len)) for _ in range(n)]


@given(data=st.data(), vocab=st.integers(1, 400), n_ref=st.integers(1, 4),
       n_cand=st.integers(1, 12), long_ref=st.booleans(), chunks=st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_dense_bigram_overlap_equals_brute_force(data, vocab, n_ref, n_cand, long_ref, chunks):
    """Any token ids (repeats, self-overlapping bigrams, empty texts); a long reference over a
    large vocabulary has more than 128 distinct tokens and takes the hashed fallback."""
    refs = _texts(data.draw, n_ref, vocab, 300 if long_ref else 40)
    cands = _texts(data.draw, n_cand, vocab, 60)
    texts = cands + refs
    ids = np.array([t for x in texts for t in x], dtype=np.int32)
    offs = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in texts], out=offs[1:])
    cand = np.array(data.draw(st.lists(st.integers(0, n_cand - 1), min_size=1, max_size=20)),
                    dtype=np.int64)
    ref = np.array([n_cand + data.draw(st.integers(0, n_ref - 1)) for _ in cand], dtype=np.int64)
    order, grp_off = _by_ref(ref)
    got = np.empty(len(cand), dtype=np.int64)
    n_chunks = np.int64(min(len(grp_off) - 1, chunks))
    K.clipped2_by_ref(ids, offs, cand, ref, order, grp_off, np.int64(vocab), n_chunks, got)
    hashed = np.empty(len(cand), dtype=np.int64)
    K.clipped_overlap_by_ref(ids, offs, cand, ref, order, grp_off, np.int64(2), np.int64(vocab),
                             hashed)
    want = [_brute(texts[a], texts[b]) for a, b in zip(cand, ref)]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(hashed, want)


def test_fallback_reference_is_used_and_exact():
    """A reference of 300 distinct tokens (300**2 cells > the dense table) and a candidate
    that repeats its bigrams: the clipped count."""
    r = list(range(300))
    c = r[:50] + r[:50] + [7, 8, 7, 8]
    ids = np.array(c + r, dtype=np.int32)
    offs = np.array([0, len(c), len(c) + len(r)], dtype=np.int64)
    cand, ref = np.array([0]), np.array([1])
    order, grp_off = _by_ref(ref)
    out = np.empty(1, dtype=np.int64)
    K.clipped2_by_ref(ids, offs, cand, ref, order, grp_off, np.int64(300), np.int64(1), out)
    assert out[0] == _brute(c, r) == 49


def _dp_lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@given(data=st.data(), vocab=st.integers(1, 30), n_ref=st.integers(1, 4),
       n_cand=st.integers(1, 8), ref_len=st.sampled_from([0, 1, 5, 63, 64, 65, 100, 127, 128,
                                                           129, 200]),
       chunks=st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_lcs_by_ref_equals_dp(data, vocab, n_ref, n_cand, ref_len, chunks):
    """lcs_by_ref (one- and two-word dense-mask paths up to 128 reference tokens, mask rows
    above) against the textbook LCS dynamic programme."""
    refs = [data.draw(st.lists(st.integers(0, vocab - 1), min_size=ref_len, max_size=ref_len))
            for _ in range(n_ref)]
    cands = _texts(data.draw, n_cand, vocab, 150)
    texts = cands + refs
    ids = np.array([t for x in texts for t in x], dtype=np.int32)
    offs = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in texts], out=offs[1:])
    cand = np.array(data.draw(st.lists(st.integers(0, n_cand - 1), min_size=1, max_size=12)),
                    dtype=np.int64)
    ref = np.array([n_cand + data.draw(st.integers(0, n_ref - 1)) for _ in cand], dtype=np.int64)
    order, grp_off = _by_ref(ref)
    got = np.empty(len(cand), dtype=np.int64)
    K.lcs_by_ref(ids, offs, cand, ref, order, grp_off, np.int64(vocab),
                 np.int64(min(len(grp_off) - 1, chunks)), got)
    np.testing.assert_array_equal(got, [_dp_lcs(texts[a], texts[b]) for a, b in zip(cand, ref)])
