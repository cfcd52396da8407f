"""ROUGE-N/L/Lsum against rouge-score 0.1.2 (the oracle): bit-identical P/R/F on random texts
(punctuation, digits, non-ASCII, newlines, empty) and on SummEval pairs, stemming on and off."""
from __future__ import annotations

import json
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError
from uefast.text import _rouge_kernels as K
from uefast.text.rouge import ngram_keys, parse_variant, rouge_scores
from uefast.text.tokenize import Tokenizer, tokenize

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
rs_tokenize = pytest.importorskip("rouge_score.tokenize")

TYPES = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]
WORDS = ["the", "cat", "cats", "running", "runs", "a", "university", "b", "3.5", "Über",
         "café", "naïve", "x1", "\u212a", "İs", "relational", "agreed", "it's", "--", "!!"]

texts = st.lists(st.sampled_from(WORDS + [" ", "\n", ", ", ". ", "\n\n"]), max_size=40).map("".join)


def _oracle(targets, preds, types, stem):
    sc = rouge_scorer.RougeScorer(types, use_stemmer=stem)
    return [sc.score(t, p) for t, p in zip(targets, preds)]


def _mismatches(targets, preds, types, stem):
    ours = rouge_scores(targets, preds, types, stem)
    bad = []
    for i, ref in enumerate(_oracle(targets, preds, types, stem)):
        for t in types:
            got = (ours[t][0][i], ours[t][1][i], ours[t][2][i])
            if got != tuple(ref[t]):
                bad.append((t, i, got, tuple(ref[t])))
    return bad


@settings(max_examples=35, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=12), st.booleans())
def test_random_pairs_bit_identical(pairs, stem):
    targets = [a for a, _ in pairs]
    preds = [b for _, b in pairs]
    assert _mismatches(targets, preds, TYPES, stem) == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=6), st.booleans())
def test_tokenizer_matches_on_any_unicode(xs, stem):
    try:
        [x.encode("utf-8") for x in xs]
    except UnicodeEncodeError:
        return
    from nltk.stem import porter
    stemmer = porter.PorterStemmer() if stem else None
    tok = tokenize(xs, stem)
    assert [tok.tokens(i) for i in range(len(xs))] == [rs_tokenize.tokenize(x, stemmer) for x in xs]


def test_fixed_edge_cases():
    targets = ["", "a", "", "The cat.\nThe dog!", "a a a b", "x y z"]
    preds = ["", "", "a", "the dog\nthe cat", "a a", "..."]
    assert _mismatches(targets, preds, TYPES + ["rouge4"], False) == []


def test_long_ngrams_use_exact_id_path():
    """n large enough that base**n overflows int64: the iterative-id path, same results."""
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(300)]
    targets = [" ".join(rng.choice(vocab[:5], size=40)) for _ in range(20)]
    preds = [" ".join(rng.choice(vocab[:5], size=35)) for _ in range(20)]
    targets[0] = " ".join(vocab)  # vocabulary of 300: 8 * log2(301) > 62
    assert _mismatches(targets, preds, ["rouge8", "rouge9"], False) == []
    tok = tokenize(targets + preds)
    keys, off = ngram_keys(tok, 8)
    assert off[-1] == sum(max(len(tok.tokens(i)) - 7, 0) for i in range(len(tok)))


def _dp_lcs(a, b):
    t = np.zeros((len(a) + 1, len(b) + 1), dtype=np.int64)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i, j] = t[i - 1, j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1, j], t[i, j - 1])
    return int(t[-1, -1])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=150), st.lists(st.integers(0, 4), max_size=200))
def test_bit_parallel_lcs_equals_dp(a, b):
    """Multi-word (M > 64) bit-parallel LCS == the textbook DP."""
    got = K.lcs_length(np.array(a, dtype=np.int32), np.array(b, dtype=np.int32))
    assert got == _dp_lcs(a, b)


def test_stem_without_nltk_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)
    monkeypatch.setitem(sys.modules, "nltk.stem", None)
    with pytest.raises(InputError, match=r'uefast\[text\]'):
        Tokenizer(stem=True)
    Tokenizer(stem=False)  # no NLTK needed


def test_parse_variant():
    assert str(parse_variant("rouge2")) == "ROUGE-2"
    assert str(parse_variant("ROUGE-Lsum")) == "ROUGE-Lsum"
    with pytest.raises(ValueError, match="ROUGE-0"):
        parse_variant("ROUGE-0")


def _summeval(shared_data):
    d = json.loads((shared_data / "summeval_bartscore" / "data.json").read_text())
    targets, preds = [], []
    for v in d.values():
        for x in v["sys_summs"].values():
            targets.append(v["ref_summ"])
            preds.append(x["sys_summ"])
    return d, targets, preds


@pytest.mark.slow
@pytest.mark.parametrize("stem", [False, True])
def test_all_summeval_pairs_bit_identical(shared_data, stem):
    """All 1,600 (summary, original reference) pairs and the 11 references of every 8th doc."""
    d, targets, preds = _summeval(shared_data)
    for i, v in enumerate(d.values()):
        if i % 8 == 0:
            x = next(iter(v["sys_summs"].values()))["sys_summ"]
            targets += v["ref_summs"]
            preds += [x] * len(v["ref_summs"])
    assert _mismatches(targets, preds, TYPES, stem) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="aB1 \n.é", max_size=5), max_size=25))
def test_tokenizer_many_short_texts(xs):
    """Short texts back to back (words not separated by any byte across texts), lines kept."""
    tok = tokenize(xs)
    assert [tok.tokens(i) for i in range(len(xs))] == [rs_tokenize.tokenize(x, None) for x in xs]
    lines = [[w for ln in x.split("\n") for w in [rs_tokenize.tokenize(ln, None)]] for x in xs]
    got = [[[tok.vocab[t] for t in tok.ids[tok.tok_offsets[k]:tok.tok_offsets[k + 1]]]
            for k in range(tok.line_offsets[i], tok.line_offsets[i + 1])] for i in range(len(xs))]
    assert got == lines


TRICKY = st.text(alphabet=st.sampled_from(list("aZ9 \n.-é\u0130\u0307\u212a\u212b\u00df\u0131"
                                                "\u03a3\ud800\U0001F600K")), max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(TRICKY, max_size=12), st.integers(0, 3),
       st.sampled_from([None, pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]))
def test_tokenizer_byte_scan_on_tricky_text_and_arrow_inputs(xs, cut, arrow_type):
    """The byte scan against rouge-score on the characters whose lower-casing is special (İ ->
    'i' + a combining dot, the Kelvin sign -> 'k', ß, dotless ı, Σ, Å sign), lone surrogates
    (Python input only: Arrow holds valid UTF-8), and Arrow string/binary arrays, sliced."""
    if arrow_type is not None:
        xs = [x for x in xs if not any(0xD800 <= ord(c) <= 0xDFFF for c in x)]
        binary = pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)
        arr = pa.array(["pad"] * cut + [x.encode() if binary else x for x in xs], type=arrow_type)
        tok = tokenize(arr.slice(cut))
    else:
        tok = tokenize(xs)
    assert [tok.tokens(i) for i in range(len(xs))] == [rs_tokenize.tokenize(x, None) for x in xs]



@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="aB1 \n.é\u212a", max_size=9), min_size=1, max_size=30),
       st.integers(2, 5), st.sampled_from([pa.string(), pa.large_string()]))
def test_tokenizer_chunked_scan_gives_the_single_scan_ids(xs, chunks, arrow_type):
    """The texts split into chunks scanned on threads (local vocabularies merged) give exactly
    the ids, line offsets and types of one sequential scan."""
    import importlib

    T = importlib.import_module("uefast.text.tokenize")
    offsets, data = T._utf8_buffers(pa.array(xs, type=arrow_type))
    one = T._scan(offsets, data, chunks=1)
    many = T._scan(offsets, data, chunks=chunks)
    for a, b in zip(one[:3], many[:3]):
        assert np.array_equal(a, b)
    assert one[3].to_pylist() == many[3].to_pylist()


def test_tokenizer_chunked_on_large_input(monkeypatch):
    """The threaded path of :class:`Tokenizer` (forced on a small input) against rouge-score."""
    import importlib

    T = importlib.import_module("uefast.text.tokenize")
    monkeypatch.setattr(T, "_PARALLEL_BYTES", 0)
    rng = np.random.default_rng(5)
    words = ["The", "cat", "sat", "ON", "mat", "\u212aelvin", "x\ny", "42", "a.b"]
    xs = [" ".join(rng.choice(words, rng.integers(0, 30))) for _ in range(200)]
    tok = Tokenizer()(pa.array(xs))
    assert [tok.tokens(i) for i in range(len(xs))] == [rs_tokenize.tokenize(x, None) for x in xs]
