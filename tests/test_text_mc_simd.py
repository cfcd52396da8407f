"""The vector-lane Monte Carlo LCS kernels (uefast.text._mc_simd) against the scalar ones: same
draws, same LCS values, draw for draw; and mc_lcs's values independent of its chunking."""
from __future__ import annotations

import numba as nb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.text import _mc_kernels as MK
from uefast.text._mc_simd import LANES, draw_positions_x8
from uefast.text._rouge_kernels import build_pm, lcs_length, mask_rows


@nb.njit(cache=False)
def _draw_x8(stt, npairs, n, pos):
    draw_positions_x8(stt, npairs, n, pos)  # an intrinsic: callable from jitted code only


@given(n=st.integers(1, 2**32 - 1), npairs=st.integers(0, 40), key=st.integers(0, 2**64 - 1),
       d0=st.integers(0, 1000))
@settings(max_examples=60, deadline=None)
def test_vector_positions_equal_scalar_draws(n, npairs, key, d0):
    """Lane k of draw_positions_x8 is draw d0 + k of draw_positions, step for step (high half of
    each splitmix64 output, then low half; n up to 2**32 - 1)."""
    stt = np.array([MK._stream(np.uint64(5), np.uint64(key), d0 + k) for k in range(LANES)],
                   dtype=np.uint64)
    pos = np.empty(max(npairs, 1) * 2 * LANES, dtype=np.uint64)
    _draw_x8(stt, np.int64(npairs), np.uint64(n), pos)
    want = np.empty(2 * npairs, dtype=np.int64)
    for k in range(LANES):
        MK.draw_positions(n, np.uint64(5), np.uint64(key), 2 * npairs, d0 + k, want)
        np.testing.assert_array_equal(pos[k:2 * npairs * LANES:LANES].astype(np.int64), want)


def _general(rows, masks, m, lengths, samples, seed, key):
    tot, tot2 = np.zeros(len(lengths)), np.zeros(len(lengths))
    MK._lcs_prefixes(rows, masks, m, np.uint64(seed), np.uint64(key), lengths, 0, len(lengths),
                     samples, tot, tot2)
    return tot, tot2


@given(m=st.integers(1, 128), n_src=st.integers(1, 120), vocab=st.integers(1, 20),
       lengths=st.lists(st.integers(0, 150), min_size=1, max_size=8, unique=True),
       samples=st.integers(1, 41), seed=st.integers(0, 2**64 - 1), key=st.integers(0, 2**64 - 1),
       data=st.data())
@settings(max_examples=80, deadline=None)
def test_vector_lcs_equals_general_loop(m, n_src, vocab, lengths, samples, seed, key, data):
    """One- and two-word vector kernels (eight draws per block, the last block partly used when
    samples % 8 != 0) give the general scalar loop's sums exactly, for any sorted lengths
    (0 and odd ones included)."""
    ref = np.array(data.draw(st.lists(st.integers(0, vocab - 1), min_size=m, max_size=m)),
                   dtype=np.int32)
    src = np.array(data.draw(st.lists(st.integers(0, vocab + 3), min_size=n_src,
                                      max_size=n_src)), dtype=np.int32)
    lengths = np.array(sorted(lengths), dtype=np.int64)
    u, k, masks = build_pm(ref)
    rows = mask_rows(src, u, k)
    want = _general(rows, masks, m, lengths, samples, seed, key)
    got = (np.zeros(len(lengths)), np.zeros(len(lengths)))
    if m <= 64:
        m1 = np.zeros(k + 1, dtype=np.uint64)
        m1[:k] = masks[:k, 0]
        MK._lcs_prefixes_1w(rows, m1, m, np.uint64(seed), np.uint64(key), lengths, 0,
                            len(lengths), samples, *got)
    else:
        m0, m1 = np.zeros(k + 1, dtype=np.uint64), np.zeros(k + 1, dtype=np.uint64)
        m0[:k], m1[:k] = masks[:k, 0], masks[:k, 1]
        MK._lcs_prefixes_2w(rows, m0, m1, m, np.uint64(seed), np.uint64(key), lengths, 0,
                            len(lengths), samples, *got)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_general_loop_is_the_lcs_of_the_drawn_candidates():
    """The scalar reference itself: the sum over draws of the LCS (DP) of each drawn
    candidate's prefix."""
    rng = np.random.default_rng(4)
    ref = rng.integers(0, 6, 70).astype(np.int32)
    src = rng.integers(0, 8, 50).astype(np.int32)
    lengths = np.array([3, 20, 71], dtype=np.int64)
    u, k, masks = build_pm(ref)
    tot, _ = _general(mask_rows(src, u, k), masks, 70, lengths, 9, 2, 77)
    want = np.zeros(3)
    pos = np.empty(71, dtype=np.int64)
    cand = np.empty(71, dtype=np.int32)
    for d in range(9):
        MK.draw_candidate(src, np.uint64(2), np.uint64(77), 71, d, pos, cand)
        for x, L in enumerate(lengths):
            want[x] += _dp_lcs(list(cand[:L]), list(ref))
            assert lcs_length(cand[:L], ref) == _dp_lcs(list(cand[:L]), list(ref))
    np.testing.assert_array_equal(tot, want)


def _dp_lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@pytest.mark.parametrize("chunks", [1, 2, 3, 7])
def test_mc_lcs_values_do_not_depend_on_chunks(chunks):
    """mc_lcs over groups of 1-, 2- and multi-word references, in any number of chunks: the
    same means and sds as one chunk."""
    rng = np.random.default_rng(chunks)
    texts, sizes = [], [30, 200, 64, 65, 128, 129, 5, 90]
    for n in sizes:
        texts.append(rng.integers(0, 40, n).astype(np.int32))
    ids = np.concatenate(texts)
    offs = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offs[1:])
    tok_off = offs.copy()
    line_off = np.arange(len(texts) + 1, dtype=np.int64)
    src_ids, src_off = ids, offs
    keys = np.arange(len(texts), dtype=np.uint64) * np.uint64(977)
    g_src = np.array([1, 1, 1, 1, 1, 1, 7], dtype=np.int64)
    g_ref = np.array([0, 2, 3, 4, 5, 6, 3], dtype=np.int64)
    lengths = np.tile(np.array([0, 9, 30, 57], dtype=np.int64), len(g_src))
    len_off = np.arange(0, len(lengths) + 1, 4, dtype=np.int64)

    def run(n_chunks):
        mean, sd = np.empty(len(lengths)), np.empty(len(lengths))
        MK.mc_lcs(ids, offs, tok_off, line_off, src_ids, src_off, keys, g_src, g_ref, len_off,
                  lengths, np.int64(21), np.uint64(3), False, np.int64(40), np.int64(n_chunks),
                  mean, sd)
        return mean, sd

    one, many = run(1), run(chunks)
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_array_equal(one[1], many[1])
    # and each group equals the general scalar loop
    for g in range(len(g_src)):
        ref = ids[offs[g_ref[g]]:offs[g_ref[g] + 1]]
        src = ids[offs[g_src[g]]:offs[g_src[g] + 1]]
        u, k, masks = build_pm(ref)
        tot, _ = _general(mask_rows(src, u, k), masks, ref.size, lengths[4 * g:4 * g + 4], 21, 3,
                          keys[g_src[g]])
        np.testing.assert_array_equal(one[0][4 * g:4 * g + 4], tot / 21)
