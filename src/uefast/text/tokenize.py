"""rouge-score 0.1.2's tokeniser, to integer ids, for many texts at once (SPEC_text §1).

rouge-score (``rouge_score/tokenize.py``) does, per text::

    text.lower()  ->  re.sub("[^a-z0-9]+", " ")  ->  split on whitespace
    -> (use_stemmer) NLTK PorterStemmer().stem(tok) for tokens longer than 3 characters
    -> drop tokens that do not match ^[a-z0-9]+$

``rougeLsum`` tokenises each newline-separated sentence on its own (``text.split("\\n")``).
A newline is itself a separator, so the tokens of the whole text are the concatenation of the
tokens of its lines: :func:`tokenize` therefore tokenises lines and keeps two levels of offsets
(tokens per line, lines per text), which serve every ROUGE variant.

The lower-casing is Python's ``str.lower`` (the same Unicode special cases as rouge-score, e.g.
the Kelvin sign lower-cases to ``k``); ``[^a-z0-9]+ -> " "`` is a byte translation of the UTF-8
text (every non-ASCII character is bytes >= 0x80); the splits and the mapping of token strings to
ids run in Arrow (C++), the stemmer once per distinct token.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError

__all__ = ["Tokenized", "Tokenizer", "tokenize", "porter_stemmer"]

_VALID = re.compile(r"^[a-z0-9]+$")
#: bytes.translate table: a-z, 0-9 and newline kept, every other byte a space
_KEEP = bytes(c if (97 <= c <= 122 or 48 <= c <= 57 or c == 10) else 32 for c in range(256))


def porter_stemmer():
    """NLTK's ``PorterStemmer()`` (mode NLTK_EXTENSIONS, as rouge-score); a one-line error naming
    the extra when NLTK is missing."""
    try:
        from nltk.stem import porter
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in tests
        raise InputError('stem=True needs NLTK\'s Porter stemmer: pip install "uefast[text]"') \
            from exc
    return porter.PorterStemmer()


@dataclass(frozen=True)
class Tokenized:
    """Token ids of many texts. Text ``i`` has lines ``line_offsets[i]:line_offsets[i+1]``;
    line ``k`` has tokens ``ids[tok_offsets[k]:tok_offsets[k+1]]``. ``vocab[id]`` is the token
    string (after stemming)."""

    ids: np.ndarray          # int32, all tokens
    tok_offsets: np.ndarray  # int64, n_lines + 1
    line_offsets: np.ndarray  # int64, n_texts + 1
    vocab: list

    @property
    def text_offsets(self) -> np.ndarray:
        """int64 (n_texts + 1): token offsets of whole texts."""
        return self.tok_offsets[self.line_offsets]

    def __len__(self) -> int:
        return len(self.line_offsets) - 1

    def tokens(self, i: int) -> list[str]:
        """The token strings of text ``i`` (for tests and debugging)."""
        o = self.text_offsets
        return [self.vocab[t] for t in self.ids[o[i]:o[i + 1]]]


class Tokenizer:
    """rouge-score's tokeniser with a persistent vocabulary (token string -> id) and, with
    ``stem=True``, a cache of stems, so that texts tokenised in several calls share ids."""

    def __init__(self, stem: bool = False) -> None:
        self.stem = bool(stem)
        self._stemmer = porter_stemmer() if self.stem else None
        self.vocab: list[str] = []
        self._index: dict[str, int] = {}

    def _ids_of(self, words: list[str]) -> np.ndarray:
        """Vocabulary id of each distinct raw word (after the stemmer), -1 for a dropped one."""
        out = np.empty(len(words), dtype=np.int32)
        index, vocab, stemmer = self._index, self.vocab, self._stemmer
        for k, w in enumerate(words):
            if stemmer is not None and len(w) > 3:
                w = stemmer.stem(w)
            if not w or not _VALID.match(w):
                out[k] = -1
                continue
            i = index.get(w)
            if i is None:
                i = index[w] = len(vocab)
                vocab.append(w)
            out[k] = i
        return out

    def __call__(self, texts: Sequence[str] | pa.Array | pa.ChunkedArray) -> Tokenized:
        """Tokenise ``texts`` (strings; no nulls) as rouge-score does; see the module docstring."""
        if isinstance(texts, (pa.Array, pa.ChunkedArray)):
            texts = texts.to_pylist()
        # rouge-score: lower(), then [^a-z0-9]+ -> " ". In UTF-8 every non-ASCII character is
        # bytes >= 0x80, so mapping each byte outside [a-z0-9\n] to a space and splitting on
        # runs of spaces gives the same tokens (newlines kept for the line split).
        cleaned = [t.lower().encode("utf-8", "surrogatepass").translate(_KEEP) for t in texts]
        n = len(cleaned)
        arr = pa.array(cleaned, type=pa.large_binary()).cast(pa.large_string())
        lines = pc.split_pattern(arr, "\n")
        line_counts = pc.list_value_length(lines).to_numpy(zero_copy_only=False)
        words = pc.ascii_split_whitespace(pc.list_flatten(lines))
        word_counts = pc.list_value_length(words).to_numpy(zero_copy_only=False)
        enc = pc.list_flatten(words).dictionary_encode()
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        remap = self._ids_of(enc.dictionary.to_pylist())
        raw = remap[enc.indices.to_numpy(zero_copy_only=False)] if len(enc) else \
            np.empty(0, np.int32)
        keep = raw >= 0
        ids = np.ascontiguousarray(raw[keep], dtype=np.int32)
        word_line = np.repeat(np.arange(len(word_counts)), word_counts)
        per_line = np.bincount(word_line[keep], minlength=len(word_counts))
        tok_offsets = np.zeros(len(word_counts) + 1, dtype=np.int64)
        np.cumsum(per_line, out=tok_offsets[1:])
        line_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(line_counts, out=line_offsets[1:])
        return Tokenized(ids, tok_offsets, line_offsets, self.vocab)


def tokenize(texts: Sequence[str], stem: bool = False) -> Tokenized:
    """Tokenise ``texts`` with a fresh :class:`Tokenizer` (rouge-score 0.1.2 semantics)."""
    return Tokenizer(stem)(texts)
