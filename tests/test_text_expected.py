"""Expected ROUGE under the source unigram model (SPEC_text §2) against brute-force enumeration of
every candidate on tiny vocabularies, and against plain Monte Carlo."""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.text import _expected_kernels as EK
from uefast.text._rouge_kernels import lcs_length
from uefast.text.expected import SourceIndex, expected_overlaps, expected_prf
from uefast.text.rouge import Variant
from uefast.text.tokenize import tokenize


def _ngrams(toks, n):
    return Counter(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))


def _overlap(cand, ref, n):
    c, r = _ngrams(cand, n), _ngrams(ref, n)
    return sum(min(v, c[g]) for g, v in r.items())


def _brute(source, ref, L, fn):
    """E[fn(candidate)] over all |V|^L candidates, V the source's types, p = source frequency."""
    cnt = Counter(source)
    types = sorted(cnt)
    total = 0.0
    for cand in itertools.product(types, repeat=L):
        p = np.prod([cnt[w] / len(source) for w in cand]) if L else 1.0
        total += p * fn(list(cand), ref)
    return total


def _ours(source, refs, lengths, variant, **kw):
    """expected_overlaps for (source, refs[i], lengths[i]) rows."""
    texts = [" ".join(source)] + [" ".join(r) for r in refs]
    tok = tokenize(texts)
    src = SourceIndex.build(tok, np.array([0]))
    return expected_overlaps(tok, src, np.zeros(len(refs), np.int64), np.arange(1, len(refs) + 1),
                             np.asarray(lengths), variant, **kw)


words = st.sampled_from(["a", "b", "c", "d"])


@settings(max_examples=25, deadline=None)
@given(st.lists(words, min_size=1, max_size=6), st.lists(words, max_size=6),
       st.lists(st.integers(0, 5), min_size=1, max_size=4), st.integers(1, 3))
def test_expected_ngram_overlap_equals_brute_force(source, ref, lengths, n):
    """n = 1 (closed form) and n = 2, 3 (automaton DP, self-overlapping patterns included)."""
    got, err = _ours(source, [ref] * len(lengths), lengths, Variant("N", n))
    assert err is None
    for L, g in zip(lengths, got):
        want = _brute(source, ref, L, lambda c, r: _overlap(c, r, n))
        assert abs(g - want) < 1e-12, (L, g, want)


def test_self_overlapping_patterns():
    for ref in (["a", "a", "a", "a"], ["a", "b", "a", "b", "a"], ["a", "a", "b", "a", "a"]):
        for n in (2, 3):
            got, _ = _ours(["a", "b", "a", "c"], [ref] * 7, list(range(7)), Variant("N", n))
            want = [_brute(["a", "b", "a", "c"], ref, L, lambda c, r: _overlap(c, r, n))
                    for L in range(7)]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


def test_dp_n1_equals_closed_form():
    """The automaton DP at n = 1 is the binomial closed form (check C2), L = 0..60."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        p = rng.uniform(0.01, 0.9)
        r = int(rng.integers(1, 6))
        lengths = np.arange(61, dtype=np.int64)
        out = np.zeros(61)
        EK.expected_min_count(np.array([7], np.int32), r, np.array([p]), np.array([7], np.int32),
                              1.0 - p, lengths, 0, 61, out)
        closed = [EK.expected_min_binomial(int(L), p, r) for L in lengths]
        np.testing.assert_allclose(out, closed, rtol=0, atol=1e-13)


def test_closed_form_large_length_no_underflow():
    # (1-p)^L underflows; terms near the mean must survive (log-space pmf).
    got = EK.expected_min_binomial(3000, 0.5, 1600)
    x = np.arange(3001)
    from scipy.stats import binom
    want = float(np.sum(np.minimum(x, 1600) * binom.pmf(x, 3000, 0.5)))
    assert abs(got - want) < 1e-9


def _mc(source, ref, L, fn, draws, seed):
    rng = np.random.default_rng(seed)
    vals = np.array([fn(list(rng.choice(source, size=L)), ref) for _ in range(draws)], float)
    return vals.mean(), vals.std(ddof=1) / np.sqrt(draws)


@pytest.mark.slow
def test_ngram_overlap_vs_monte_carlo():
    """Larger case (V=12, |ref|=36, L=45) where enumeration is out of reach: |exact - MC| < 4 SE."""
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(12)]
    source = list(rng.choice(vocab, size=80, p=np.arange(1, 13) / 78))
    ref = list(rng.choice(vocab, size=36))
    for n in (1, 2, 3):
        exact, _ = _ours(source, [ref], [45], Variant("N", n))
        m, se = _mc(source, ref, 45, lambda c, r: _overlap(c, r, n), 20000, n)
        assert abs(exact[0] - m) < 4 * se + 1e-9, (n, exact[0], m, se)


def test_lcs_monte_carlo_covers_brute_force():
    """E[LCS] (check D1): the seeded Monte Carlo mean within 4 SE of the enumerated value."""
    source = ["a", "b", "c", "a", "b", "d"]
    ref = ["a", "b", "c", "a", "b"]
    for L in (3, 5):
        want = _brute(source, ref, L, lambda c, r: lcs_length(
            np.array([ord(x) for x in c], np.int32), np.array([ord(x) for x in r], np.int32)))
        got, se = _ours(source, [ref], [L], Variant("L"), samples=20000, seed=1)
        assert se[0] > 0 and abs(got[0] - want) < 4 * se[0], (L, got[0], want, se[0])


def test_monte_carlo_is_seeded_and_shared_across_references():
    source = "the cat sat on the mat with another cat".split()
    refs = [["the", "cat"], ["on", "the", "mat"], ["the", "cat"]]
    a, _ = _ours(source, refs, [5, 5, 5], Variant("L"), samples=50, seed=3)
    b, _ = _ours(source, refs[::-1], [5, 5, 5], Variant("L"), samples=50, seed=3)
    c, _ = _ours(source, refs, [5, 5, 5], Variant("L"), samples=50, seed=4)
    np.testing.assert_array_equal(a, b[::-1])  # row order does not matter
    assert a[0] == a[2]
    assert not np.array_equal(a, c)


def test_lsum_monte_carlo_single_sentence_equals_lcs_estimate():
    """With a one-line reference, union LCS hits = LCS, so Lsum's and L's estimates agree."""
    source = "a b c d a b e f".split()
    ref = "a b d e f a".split()
    x, _ = _ours(source, [ref], [6], Variant("L"), samples=300, seed=9)
    y, _ = _ours(source, [ref], [6], Variant("Lsum"), samples=300, seed=9)
    assert x[0] == y[0]


def test_expected_prf_is_linear_in_overlap():
    """E[F] = 2E[O]/(n_c+n_r) = F(E[P], E[R]) (check B5)."""
    p, r, f = expected_prf([3.0, 0.0, 2.0], [10, 0, 4], [6, 5, 0])
    assert f[0] == pytest.approx(2 * p[0] * r[0] / (p[0] + r[0]))
    assert (p[1], r[1], f[1], f[2]) == (0, 0, 0, 0)


def test_word_absent_from_source_contributes_zero():
    got, _ = _ours(["a", "b"], [["z", "z", "a"]], [4], Variant("N", 1))
    want = _brute(["a", "b"], ["z", "z", "a"], 4, lambda c, r: _overlap(c, r, 1))
    assert abs(got[0] - want) < 1e-13
    got2, _ = _ours(["a", "b"], [["z", "a"]], [4], Variant("N", 2))
    assert got2[0] == 0.0


def test_fused_one_word_path_equals_general_path():
    """A one-line reference of <= 64 tokens takes the fused draw+LCS path; the same reference
    followed by an empty line takes the general union-LCS path with the same draws: same mean."""
    source = "a b c d e f g a b c h i".split()
    texts = [" ".join(source), "a b c g h i a d", "a b c g h i a d\n"]
    tok = tokenize(texts)
    src = SourceIndex.build(tok, np.array([0]))
    got, _ = expected_overlaps(tok, src, np.zeros(2, np.int64), np.array([1, 2]),
                               np.array([9, 9]), Variant("Lsum"), samples=300, seed=2)
    assert got[0] == got[1]


def test_overlap1_distribution_equals_brute_force():
    """Exact pmf of O_1 (check B4): enumeration; sums to 1 and its mean is the closed form (B3)."""
    from uefast.text.expected import overlap1_distribution

    source = "a b a c d".split()
    for ref in (["a", "a", "b", "z"], ["c", "d", "d"], ["z"], ["a", "b", "c", "d"]):
        for L in range(0, 6):
            pmf = overlap1_distribution(" ".join(source), " ".join(ref), L)
            want = np.zeros(len(pmf))
            cnt = Counter(source)
            for cand in itertools.product(sorted(cnt), repeat=L):
                p = np.prod([cnt[w] / len(source) for w in cand]) if L else 1.0
                want[_overlap(list(cand), ref, 1)] += p
            np.testing.assert_allclose(pmf, want, rtol=0, atol=1e-13)
            mean, _ = _ours(source, [ref], [L], Variant("N", 1))
            assert abs(pmf @ np.arange(len(pmf)) - mean[0]) < 1e-12
            assert abs(pmf.sum() - 1) < 1e-12


@pytest.mark.parametrize("m", [1, 37, 63, 64, 65, 100, 127, 128])
def test_one_and_two_word_monte_carlo_paths_equal_the_general_one(m):
    """The specialised one-word (M <= 64) and two-word (M <= 128) Monte Carlo LCS loops give
    exactly the sums of the general multi-word loop, draw for draw."""
    from uefast.text import _mc_kernels as EK
    from uefast.text._rouge_kernels import build_pm, mask_rows

    rng = np.random.default_rng(m)
    ref = rng.integers(0, 12, m).astype(np.int32)
    src = rng.integers(0, 15, 90).astype(np.int32)
    lengths = np.array([0, 1, 7, 8, 40, 131], dtype=np.int64)
    u, k, masks = build_pm(ref)
    rows = mask_rows(src, u, k)
    want = (np.zeros(6), np.zeros(6))
    EK._lcs_prefixes(rows, masks, m, np.uint64(3), np.uint64(99), lengths, 0, 6, 25, *want)
    got = (np.zeros(6), np.zeros(6))
    if m <= 64:
        m1 = np.zeros(k + 1, dtype=np.uint64)
        m1[:k] = masks[:k, 0]
        EK._lcs_prefixes_1w(rows, m1, m, np.uint64(3), np.uint64(99), lengths, 0, 6, 25, *got)
    else:
        m0, m1 = np.zeros(k + 1, dtype=np.uint64), np.zeros(k + 1, dtype=np.uint64)
        m0[:k], m1[:k] = masks[:k, 0], masks[:k, 1]
        EK._lcs_prefixes_2w(rows, m0, m1, m, np.uint64(3), np.uint64(99), lengths, 0, 6, 25,
                            *got)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert want[0][-1] > 0
