"""uefast.text.evaluate: values against rouge-score, REB/IUB against brute force on tiny
vocabularies, UE edge cases, bad input, input formats and the BERTScore dispatch."""
from __future__ import annotations

import itertools
import json
import sys
import types

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError, MeasureParseError
from uefast.text.evaluate import evaluate
from uefast.text.measures import parse_text_measure
from uefast.text.ue import text_ue

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

SRC = "the cat sat on the mat . a dog ran to the cat and the mat"
ROWS = [
    ("d1", "s1", "the cat sat on a mat", "a cat sat on the mat", SRC),
    ("d1", "s2", "dog ran to the mat the cat", "a cat sat on the mat", SRC),
    ("d2", "s1", "green eggs and ham", "I do not like green eggs and ham", "green eggs and ham sam"),
    ("d2", "s2", "ham ham ham", "I do not like green eggs and ham", "green eggs and ham sam"),
]


def _table(rows=ROWS, multi=False):
    cols = list(zip(*rows))
    ref = [list(r) if multi else r for r in cols[3]]
    return pa.table({"doc_id": list(cols[0]), "system": list(cols[1]),
                     "candidate": list(cols[2]), "reference": ref, "source": list(cols[4])})


def _col(t, name, measure):
    return np.array([v for v, m in zip(t[name].to_pylist(), t["measure"].to_pylist())
                     if m == measure], dtype=float)


def test_values_match_rouge_score_and_shape():
    ms = ["ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-Lsum", "ROUGE-1(score=recall)",
          "ROUGE-2(score=precision)"]
    out = evaluate(_table(), ms)
    assert out.num_rows == len(ROWS) * len(ms)
    assert out["qid"].to_pylist()[:len(ms)] == ["d1"] * len(ms)
    assert out["measure"].to_pylist()[:len(ms)] == ms
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    ref = [sc.score(r[3], r[2]) for r in ROWS]
    for m, key, field in [("ROUGE-1", "rouge1", 2), ("ROUGE-2", "rouge2", 2), ("ROUGE-L", "rougeL", 2),
                          ("ROUGE-Lsum", "rougeLsum", 2), ("ROUGE-1(score=recall)", "rouge1", 1),
                          ("ROUGE-2(score=precision)", "rouge2", 0)]:
        assert list(_col(out, "value", m)) == [s[key][field] for s in ref]
    for m in ms:
        a, u, r = _col(out, "value", m), _col(out, "iub", m), _col(out, "reb", m)
        assert np.all(a <= u + 1e-12) and np.all(r <= u + 1e-12)
        v2 = _col(out, "ue_v2", m)
        assert np.all((v2 >= -1) & (v2 <= 1))
    meta = json.loads(out.schema.metadata[b"uefast.settings"])
    assert meta["iub"] == "len" and meta["measures"] == ms


def _brute_expected(source_words, refs, L, fn):
    types_ = sorted(set(source_words))
    total = 0.0
    for cand in itertools.product(types_, repeat=L):
        p = np.prod([source_words.count(w) / len(source_words) for w in cand])
        total += p * fn(" ".join(cand), refs)
    return total


def test_reb_and_ue_against_brute_force():
    """REB (exact, single reference) == enumeration of every candidate; V1/V2 by §4."""
    source = "a b a c"
    rows = [("d", "s", "a b a", "a a b c b", source), ("e", "s", "c a", "b a c", source)]
    out = evaluate(_table(rows), ["ROUGE-1", "ROUGE-2(score=recall)", "ROUGE-1(score=precision)"])
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2"])
    for i, (_, _, cand, ref, src) in enumerate(rows):
        L = len(cand.split())
        for m, key, f in [("ROUGE-1", "rouge1", 2), ("ROUGE-2(score=recall)", "rouge2", 1),
                          ("ROUGE-1(score=precision)", "rouge1", 0)]:
            want = _brute_expected(src.split(), ref, L, lambda c, r: sc.score(r, c)[key][f])
            assert abs(_col(out, "reb", m)[i] - want) < 1e-12
            a, u, r = (_col(out, k, m)[i] for k in ("value", "iub", "reb"))
            v1, v2 = text_ue(a, u, r)
            assert _col(out, "ue_v1", m)[i] == pytest.approx(float(v1), nan_ok=True)
            assert _col(out, "ue_v2", m)[i] == pytest.approx(float(v2), nan_ok=True)


def _best_over_texts(words, L, fn):
    return max(fn(" ".join(c)) for c in itertools.product(words, repeat=L))


@pytest.mark.parametrize("score,field", [("f1", 2), ("recall", 1), ("precision", 0)])
def test_iub_kinds_against_brute_force(score, field):
    """len: best of any text of length L (F3); src: best with source tokens (F1); n = 1, 2, L."""
    source = "a b"
    rows = [("d", "s", "a b a", "a c b a c", source), ("e", "s", "b", "c c a", source),
            ("f", "s", "a a b b", "b a", source)]
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    for kind, alphabet in (("len", ["a", "b", "c", "z"]), ("src", ["a", "b"])):
        for m, key in (("ROUGE-1", "rouge1"), ("ROUGE-L", "rougeL"), ("ROUGE-2", "rouge2")):
            name = m if score == "f1" else f"{m}(score={score})"
            out = evaluate(_table(rows), [name], iub=kind, samples=4)
            for i, (_, _, cand, ref, _) in enumerate(rows):
                best = _best_over_texts(alphabet, len(cand.split()),
                                        lambda c: sc.score(ref, c)[key][field])
                got = _col(out, "iub", name)[i]
                if kind == "src" and key == "rouge2":
                    assert got >= best - 1e-12  # upper end of the bracket
                    notes = json.loads(out.schema.metadata[b"uefast.notes"])
                    assert any("bracket is closed" in x for x in notes)
                else:
                    assert got == pytest.approx(best, abs=1e-12), (kind, name, i)


@pytest.mark.parametrize("score,field", [("f1", 2), ("recall", 1), ("precision", 0)])
def test_multi_reference_mean_rouge1_iub_greedy_against_brute_force(score, field):
    """F4: the greedy on marginal gains is the best mean ROUGE-1 over texts of length L."""
    refs = ["a a b", "b c", "a c c d"]
    rows = [("d", "s", "x y z", refs, "a b c"), ("e", "s", "x y", refs, "a b c")]
    sc = rouge_scorer.RougeScorer(["rouge1"])
    name = "ROUGE-1" if score == "f1" else f"ROUGE-1(score={score})"
    for kind, alphabet in (("len", ["a", "b", "c", "d", "z"]), ("src", ["a", "b", "c"])):
        out = evaluate(_table(rows, multi=True), [name], iub=kind)
        for i, row in enumerate(rows):
            best = _best_over_texts(alphabet, len(row[2].split()), lambda c: np.mean(
                [sc.score(r, c)["rouge1"][field] for r in refs]))
            assert _col(out, "iub", name)[i] == pytest.approx(best, abs=1e-12)


def test_multi_reference_mean_and_max_values():
    refs = ["a cat sat on the mat", "the cat is on the mat", "dogs run"]
    rows = [("d1", "s", "the cat sat", refs, SRC), ("d2", "s", "a dog ran to the mat", refs[:2], SRC)]
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    mean = evaluate(_table(rows, multi=True), ["ROUGE-1", "ROUGE-2", "ROUGE-L(score=recall)"],
                    samples=20)
    mx = evaluate(_table(rows, multi=True), ["ROUGE-1(score=recall)", "ROUGE-2", "ROUGE-L"],
                  multi_ref="max", samples=20)
    for i, row in enumerate(rows):
        per = [sc.score(r, row[2]) for r in row[3]]
        assert _col(mean, "value", "ROUGE-1")[i] == pytest.approx(np.mean([s["rouge1"][2] for s in per]))
        assert _col(mean, "value", "ROUGE-L(score=recall)")[i] == pytest.approx(
            np.mean([s["rougeL"][1] for s in per]))
        multi = sc.score_multi(row[3], row[2])
        assert _col(mx, "value", "ROUGE-1(score=recall)")[i] == multi["rouge1"].recall
        assert _col(mx, "value", "ROUGE-L")[i] == multi["rougeL"].fmeasure
    assert mx["reb_se"].null_count == 0  # every max REB is Monte Carlo
    assert mean.column("n_refs").to_pylist()[0] == 3


@pytest.mark.slow
def test_multi_reference_max_reb_covers_brute_force():
    """E[max_j F_j] by enumeration is inside the Monte Carlo interval (E2's quantity)."""
    source = "a b a c"
    refs = ["a b c", "c a a b", "b b"]
    rows = [("d", "s", "a c b", refs, source)]
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    for name, key in (("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2"), ("ROUGE-L", "rougeL")):
        out = evaluate(_table(rows, multi=True), [name], multi_ref="max", samples=20000, seed=5)
        want = _brute_expected(source.split(), refs, 3,
                               lambda c, r: sc.score_multi(r, c)[key].fmeasure)
        got, se = _col(out, "reb", name)[0], _col(out, "reb_se", name)[0]
        assert abs(got - want) < 4 * se, (name, got, want, se)


def test_length_reference_makes_reb_document_constant():
    out = evaluate(_table(), ["ROUGE-1"], length="reference")
    reb = _col(out, "reb", "ROUGE-1")
    assert reb[0] == reb[1] and reb[2] == reb[3]
    assert out["length"].to_pylist() == [6, 6, 8, 8]


def test_ue_edge_cases():
    v1, v2 = text_ue([0.2, 0.5, 0.0, 0.3, 0.0, 0.1], [0.8, 0.8, 0.8, 0.0, 0.0, 0.1],
                     [0.2, 0.2, 0.2, 0.0, 0.0, 0.1])
    assert v2[0] == 0 and v2[1] == pytest.approx(0.5) and v2[2] == -1  # H1
    assert v1[2] == 0 and np.isnan(v1[3]) and np.isnan(v2[4]) and np.isnan(v2[5])
    assert text_ue(0.8, 0.8, 0.2)[1] == 1


def test_bad_input():
    t = _table()
    with pytest.raises(InputError, match=r"missing column\(s\) \['source'\]"):
        evaluate(t.drop(["source"]))
    cand = t["candidate"].to_pylist()
    cand[2] = None
    with pytest.raises(InputError, match="null `candidate` at row 2"):
        evaluate(t.set_column(2, "candidate", pa.array(cand)))
    cand[2] = "   "
    bad = t.set_column(2, "candidate", pa.array(cand))
    with pytest.raises(InputError, match="empty `candidate` at row 2"):
        evaluate(bad)
    scored = evaluate(bad, ["ROUGE-1"], empty="score")
    assert scored.num_rows == 4 and scored["value"][2].as_py() == 0.0
    assert np.isnan(scored["ue_v1"][2].as_py())
    refs = pa.array([["a"], [], ["b"], ["c"]], type=pa.list_(pa.string()))
    with pytest.raises(InputError, match="empty `reference` list at row 1"):
        evaluate(t.set_column(3, "reference", refs))
    binary = pa.array([b"ok", b"\xff\xfe", b"x", b"y"], type=pa.binary())
    with pytest.raises(InputError, match="`candidate` is not valid UTF-8 at row 1"):
        evaluate(t.set_column(2, "candidate", binary))
    dup = pa.concat_tables([t, t.slice(1, 1)])
    with pytest.raises(InputError, match=r"duplicate \(system, doc_id\) \('s2', 'd1'\) at rows 1 and 4"):
        evaluate(dup)
    with pytest.raises(MeasureParseError, match="ROUGE-X"):
        evaluate(t, ["ROUGE-X"])
    with pytest.raises(InputError, match="`iub` must be one of"):
        evaluate(t, iub="best")


def test_jsonl_parquet_and_non_utf8(tmp_path):
    t = _table()
    pq.write_table(t, tmp_path / "x.parquet")
    lines = [json.dumps(r) for r in t.to_pylist()]
    (tmp_path / "x.jsonl").write_text("\n".join(lines) + "\n")
    a = evaluate(tmp_path / "x.parquet", ["ROUGE-2"])
    b = evaluate(str(tmp_path / "x.jsonl"), ["ROUGE-2"])
    assert a.drop(["reb_se"]).equals(b.drop(["reb_se"]))
    raw = "\n".join(lines).encode() + b'\n{"doc_id": "\xff"}\n'
    (tmp_path / "bad.jsonl").write_bytes(raw)
    with pytest.raises(InputError, match="line 5: not valid UTF-8"):
        evaluate(tmp_path / "bad.jsonl")


def test_bertscore_dispatch(monkeypatch):
    calls = []

    def fake(candidates, references, sources, *, score="f1", reb="exact", iub="one",
             encoder=None, seed=0, n_samples=32, multi_ref="mean", length="candidate"):
        calls.append((list(candidates), [list(r) for r in references], score, reb, iub, seed,
                      n_samples, encoder, multi_ref, length))
        n = len(candidates)
        return {"value": np.full(n, 0.6), "iub": np.ones(n), "reb": np.full(n, 0.2)}

    monkeypatch.setitem(sys.modules, "uefast.text.bertscore",
                        types.SimpleNamespace(bertscore_rows=fake))
    out = evaluate(_table(), ["ROUGE-1", "BERTScore(score=precision,reb=sampled)"], seed=3,
                   encoder="enc", bertscore_samples=7, length="reference")
    assert calls == [([r[2] for r in ROWS], [[r[3]] for r in ROWS], "precision", "sampled", "one",
                      3, 7, "enc", "mean", "reference")]
    assert _col(out, "ue_v2", "BERTScore(score=precision,reb=sampled)") == pytest.approx([0.5] * 4)
    monkeypatch.setitem(sys.modules, "uefast.text.bertscore", None)
    with pytest.raises(InputError, match="needs the module uefast.text.bertscore"):
        evaluate(_table(), ["BERTScore"])


@pytest.mark.parametrize("s,canon", [("ROUGE-1", "ROUGE-1"), ("rouge2", "ROUGE-2"),
                                     ("ROUGE-L(score=r)", "ROUGE-L(score=recall)"),
                                     ("rougeLsum(score=f1)", "ROUGE-Lsum"),
                                     ("BERTScore(reb=exact,score=precision)", "BERTScore(score=precision)"),
                                     ("BERTScore(reb=sampled)", "BERTScore(reb=sampled)")])
def test_measure_round_trip(s, canon):
    m = parse_text_measure(s)
    assert str(m) == canon and parse_text_measure(str(m)) == m


@pytest.mark.parametrize("s", ["ROUGE-0", "ROUGE-1(score=x)", "ROUGE-1(reb=exact)", "BLEU",
                               "BERTScore(iub=len)", "ROUGE-1(score)"])
def test_measure_errors(s):
    with pytest.raises(MeasureParseError):
        parse_text_measure(s)


def test_output_feeds_uefast_aggregate_and_stats():
    import polars as pl

    import uefast
    from uefast.stats import topic_system_matrix

    df = pl.from_arrow(_table())
    out = evaluate(df, ["ROUGE-1", "ROUGE-2"])
    means = uefast.aggregate(out)
    assert means.num_rows == 4 and means["n_queries"].to_pylist() == [2, 2, 2, 2]
    m = topic_system_matrix(out, "ROUGE-1", column="ue_v2")
    assert m.matrix.shape == (2, 2) and m.qids == ("d1", "d2")


def test_chunked_and_repeated_columns_give_the_same_table():
    """Distinct texts are found by runs of equal neighbours (rows grouped by document) or by
    hashing (rows shuffled); a column in several chunks is read without combining it: every
    way gives the output of the plain one-chunk table."""
    from uefast.text.inputs import _text

    rng = np.random.default_rng(5)
    vals = [f"text {v}" for v in np.repeat(rng.integers(0, 6, 25), 4)]
    for order in (np.arange(len(vals)), rng.permutation(len(vals))):
        want = [vals[i] for i in order]
        chunked = pa.chunked_array([want[:33], want[33:34], want[34:]])
        for col in (chunked, pa.chunked_array([pa.array(want, pa.binary())])):
            values, codes = _text(col, "source")
            assert [values[int(c)].as_py() for c in codes] == want
    plain = _table()
    parts = pa.Table.from_batches(plain.to_batches(max_chunksize=1))
    ms = ["ROUGE-1", "ROUGE-2", "ROUGE-L"]
    assert evaluate(parts, ms).equals(evaluate(plain, ms))


def test_src_bracket_lower_end_is_attained_and_below_the_best():
    """iub=src, ROUGE-2/3: the lower end (whole in-source segments, longest first) <= the best
    clipped overlap of any length-L text of source tokens (brute force) <= the upper end."""
    from uefast.text.expected import SourceIndex
    from uefast.text.iub import src_lower, src_windows
    from uefast.text.rouge import Variant, overlap_counts
    from uefast.text.tokenize import tokenize

    rng = np.random.default_rng(11)
    for _ in range(25):
        source = " ".join(rng.choice(list("abc"), 4))
        ref = " ".join(rng.choice(list("abcd"), int(rng.integers(2, 9))))
        src_types = sorted(set(source.split()))
        for n in (2, 3):
            for L in range(1, 6):
                cands = [" ".join(c) for c in itertools.product(src_types, repeat=L)]
                tok = tokenize([source, ref] + cands)
                sources = SourceIndex.build(tok, np.array([0]))
                k = len(cands)
                o = overlap_counts(tok, np.arange(2, 2 + k), np.ones(k, np.int64), Variant("N", n))
                low = src_lower(tok, sources, np.zeros(1, np.int64), np.ones(1, np.int64), n, [L])
                up = min(max(L - n + 1, 0),
                         src_windows(tok, sources, np.zeros(1, np.int64), np.ones(1, np.int64),
                                     n)[0])
                assert low[0] <= o.max() <= up, (source, ref, n, L)



@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=list(" \t\n\r\x0b\x0c\x1c\x1f\x10\x85\xa0\u3000\u2028a Z9.@[`{é"),
                        max_size=4), min_size=1, max_size=12), st.integers(0, 2))
def test_blank_check_matches_arrow_trim_on_every_text(xs, cut):
    """The blank check (first byte [A-Za-z0-9] -> not blank, the others trimmed by Arrow) names
    the same first blank row as trimming every text with Arrow."""
    from uefast.text.inputs import _check_empty

    values = pa.array(["pad"] * cut + xs, type=pa.large_string()).slice(cut)
    codes = np.arange(len(xs))
    import pyarrow.compute as pc

    blank = [len(s) == 0 for s in pc.utf8_trim_whitespace(values).to_pylist()]
    if any(blank):
        with pytest.raises(InputError, match=f"empty `candidate` at row {blank.index(True)} "):
            _check_empty(values, codes, "candidate", "error")
    else:
        _check_empty(values, codes, "candidate", "error")
