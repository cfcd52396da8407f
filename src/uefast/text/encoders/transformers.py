"""BERTScore encoder through ``transformers``/``torch`` (extra ``uefast[bertscore]``).

Loads a local Hugging Face encoder (``AutoModel``/``AutoTokenizer`` with
``local_files_only=True``: nothing is downloaded) and returns the hidden state ``layer``
(``hidden_states[layer]``; default the last, as ``bert_score(..., num_layers=<last>)``).
Texts are tokenised without special tokens, packed into chunks of at most ``window`` wordpieces
(SPEC_text §5.1, :mod:`uefast.text.encoders._chunks`) and encoded as
``<cls> chunk <sep>`` in length-sorted, padded batches.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Sequence

import numpy as np

from . import TokenEmbeddings
from ._chunks import pack_chunks, sentence_ends

__all__ = ["TransformersEncoder"]


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ModuleNotFoundError(f"the transformers BERTScore encoder needs {name!r} ({e}): "
                                  f"pip install \"uefast[bertscore]\"") from None


class TransformersEncoder:
    """:class:`uefast.text.encoders.Encoder` over a local transformers model.

    ``model_name_or_path``: a local folder (or a name already in the Hugging Face cache);
    ``layer``: hidden state index (0 = embeddings; default the last layer); ``window``: content
    wordpieces per chunk (default 254, MiniLM's max_seq_length 256 − 2); ``batch_size``:
    sequences per forward pass; ``device``: torch device string."""

    def __init__(self, model_name_or_path: str | Path, *, layer: int | None = None,
                 window: int = 254, batch_size: int = 32, device: str = "cpu") -> None:
        self._torch = _import("torch")
        tr = _import("transformers")
        path = str(model_name_or_path)
        self.tokenizer = tr.AutoTokenizer.from_pretrained(path, local_files_only=True)
        if not getattr(self.tokenizer, "is_fast", False):
            raise ValueError(f"{path}: a fast tokenizer (tokenizer.json) is needed for offsets")
        self.model = tr.AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
        n_layers = int(self.model.config.num_hidden_layers)
        self.layer = n_layers if layer is None else int(layer)
        if not 0 <= self.layer <= n_layers:
            raise ValueError(f"layer must be in 0..{n_layers}, got {layer}")
        self.window, self.batch_size, self.device = int(window), int(batch_size), device
        tok = self.tokenizer
        self.cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
        self.sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        self.name = f"transformers:{Path(path).name}@{self.layer}"

    def _run(self, seqs: list[np.ndarray]) -> list[np.ndarray]:
        torch = self._torch
        out: list[np.ndarray | None] = [None] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        for k in range(0, len(order), self.batch_size):
            batch = order[k:k + self.batch_size]
            T = max(len(seqs[i]) for i in batch)
            ids = np.full((len(batch), T), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), T), dtype=np.int64)
            for r, i in enumerate(batch):
                ids[r, :len(seqs[i])] = seqs[i]
                mask[r, :len(seqs[i])] = 1
            with torch.no_grad():
                hs = self.model(input_ids=torch.from_numpy(ids).to(self.device),
                                attention_mask=torch.from_numpy(mask).to(self.device),
                                output_hidden_states=True).hidden_states[self.layer]
            hs = hs.float().cpu().numpy()
            for r, i in enumerate(batch):
                out[i] = hs[r, :len(seqs[i])]
        return out  # type: ignore[return-value]

    def _encode_pieces(self, pieces) -> list[TokenEmbeddings]:
        seqs, owner = [], []
        for t, (ids, chunks) in enumerate(pieces):
            for a, b in chunks:
                seqs.append(np.concatenate([[self.cls_id], ids[a:b], [self.sep_id]]))
                owner.append(t)
        content: list[list[np.ndarray]] = [[] for _ in pieces]
        special: list[list[np.ndarray]] = [[] for _ in pieces]
        for t, hs in zip(owner, self._run(seqs)):
            content[t].append(hs[1:-1])
            special[t].append(hs[[0, -1]])
        return [TokenEmbeddings(np.concatenate(c), np.concatenate(s), np.asarray(p[0]))
                for c, s, p in zip(content, special, pieces)]

    def encode(self, texts: Sequence[str]) -> list[TokenEmbeddings]:
        """Token embeddings of each text (see :class:`uefast.text.encoders.Encoder`)."""
        enc = self.tokenizer([str(t) for t in texts], add_special_tokens=False,
                             return_offsets_mapping=True)
        pieces = []
        for text, ids, offs in zip(texts, enc["input_ids"], enc["offset_mapping"]):
            ids = np.asarray(ids, dtype=np.int64)
            ends = sentence_ends(text, offs) if len(ids) > self.window else \
                np.zeros(len(ids), dtype=bool)
            pieces.append((ids, pack_chunks(len(ids), ends, self.window)))
        return self._encode_pieces(pieces)

    def encode_ids(self, ids: Sequence[np.ndarray]) -> list[TokenEmbeddings]:
        """Token embeddings of given content wordpiece-id sequences (fixed-size chunks)."""
        pieces = [(np.asarray(x, dtype=np.int64),
                   pack_chunks(len(x), np.zeros(len(x), dtype=bool), self.window)) for x in ids]
        return self._encode_pieces(pieces)
