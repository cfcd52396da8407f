"""rouge-score 0.1.2's tokeniser, to integer ids, for many texts at once (SPEC_text §1).

rouge-score (``rouge_score/tokenize.py``) does, per text::

    text.lower()  ->  re.sub("[^a-z0-9]+", " ")  ->  split on whitespace
    -> (use_stemmer) NLTK PorterStemmer().stem(tok) for tokens longer than 3 characters
    -> drop tokens that do not match ^[a-z0-9]+$

(``six.ensure_str`` between the two steps is the identity on a Python 3 ``str``; the final
check only drops empty strings, since every piece left is ``[a-z0-9]+`` unless the stemmer
changed it.) ``rougeLsum`` tokenises each newline-separated sentence on its own (``text.split("\\n")``).
A newline is itself a separator, so the tokens of the whole text are the concatenation of the
tokens of its lines: :func:`tokenize` therefore tokenises lines and keeps two levels of offsets
(tokens per line, lines per text), which serve every ROUGE variant.

The lower-casing and the ``[^a-z0-9]+`` replacement are one byte scan of the UTF-8 text in Numba
(:mod:`uefast.text._tokenize_kernels`: ASCII lower-casing, every other byte a separator, and the
only two non-ASCII characters whose ``str.lower()`` is ASCII, U+0130 and U+212A, mapped as Python
maps them), then one scan interning each token to an id in an open-addressing table; the
stemmer and the validity check run once per distinct token.
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
        index, vocab, stemmer = self._index, self.vocab, self._stemmer
        if stemmer is None and not vocab and len(set(words)) == len(words) and all(
                map(_VALID.match, words)):
            # a fresh vocabulary, no stemmer, distinct valid words (as the scan gives): the
            # words in order are the vocabulary
            vocab.extend(words)
            index.update(zip(words, range(len(words))))
            return np.arange(len(words), dtype=np.int32)
        out = np.empty(len(words), dtype=np.int32)
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
        """Tokenise ``texts`` (strings, or an Arrow string/binary array holding UTF-8; no nulls)
        as rouge-score does; see the module docstring."""
        offsets, data = _utf8_buffers(texts)
        ids, line_start, line_tok, types = _scan(offsets, data)
        n_types = len(types)
        remap = self._ids_of(types.to_pylist())
        if not np.array_equal(remap, np.arange(n_types)):  # identity for a fresh vocabulary
            ids = remap[ids]
        tok_offsets = line_tok
        if (remap < 0).any():  # a stem that is not [a-z0-9]+: dropped, as rouge-score does
            keep = ids >= 0
            kept = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum(keep, out=kept[1:])
            tok_offsets = kept[line_tok]
            ids = ids[keep]
        return Tokenized(np.ascontiguousarray(ids, dtype=np.int32), tok_offsets, line_start,
                         self.vocab)


# below this many bytes one scan is as quick as starting threads
_PARALLEL_BYTES = 1 << 22


def _scan_chunk(data, offsets):
    """One sequential interning scan of texts ``offsets`` (a slice of the value offsets):
    (local ids, line_start, line_tok, the local types as an Arrow string array in order of first
    occurrence), all local to the chunk."""
    from uefast.text import _tokenize_kernels as TK

    n = len(offsets) - 1
    # at most (B + 1) // 2 tokens in B bytes: pages past the real count are never touched
    ids = np.empty(int(offsets[-1] - offsets[0] + n) // 2 + 1, dtype=np.int32)
    n_ids, line_start, line_tok, pool, pool_off, tok_bytes, n_types = TK.intern_tokens(
        data, offsets, TK.LUT, ids)
    raw = np.empty(int(tok_bytes[:n_types].sum()), dtype=np.uint8)
    raw_off = np.empty(n_types + 1, dtype=np.int64)
    TK.type_bytes(pool, pool_off, tok_bytes, n_types, raw, raw_off)
    types = pa.LargeStringArray.from_buffers(n_types, pa.py_buffer(raw_off), pa.py_buffer(raw))
    return ids[:n_ids], line_start, line_tok, types


def _scan(offsets, data, chunks: int | None = None):
    """Token ids (int32, in order of first occurrence of the token string over all texts),
    line_start, line_tok and the types (Arrow strings, id order) of the texts.

    With several Numba threads and enough bytes, the texts are split into one contiguous chunk
    per thread (equal bytes) and each chunk is scanned on its own thread (the kernels release
    the GIL) with a local vocabulary. The merge keeps the ids of a single scan: the chunks'
    type lists, concatenated in chunk order, each in its local order of first occurrence, are
    dictionary-encoded (Arrow numbers distinct values in order of first occurrence) -- a type's
    first occurrence over all texts is in the first chunk that has it, where its local rank
    orders it among that chunk's new types. The local ids are then mapped per chunk in
    parallel. ``chunks`` overrides the number of chunks (tests)."""
    import numba

    n = len(offsets) - 1
    k = min(numba.get_num_threads() if chunks is None else chunks, n)
    if k < 2 or (chunks is None and int(offsets[-1] - offsets[0]) < _PARALLEL_BYTES):
        ids, line_start, line_tok, types = _scan_chunk(data, offsets)
        return ids, line_start, line_tok, types
    from concurrent.futures import ThreadPoolExecutor
    from itertools import pairwise

    from uefast.text import _tokenize_kernels as TK

    cuts = np.searchsorted(offsets, np.linspace(offsets[0], offsets[-1], k + 1)[1:-1])
    bounds = [0, *sorted({int(c) for c in cuts} - {0, n}), n]
    parts = [offsets[a:b + 1] for a, b in pairwise(bounds)]
    with ThreadPoolExecutor(len(parts)) as pool:
        chunks = list(pool.map(lambda o: _scan_chunk(data, o), parts))
        enc = pa.concat_arrays([c[3] for c in chunks]).dictionary_encode()
        merged = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32)
        tok_base = np.cumsum([0] + [len(c[0]) for c in chunks])
        ids = np.empty(int(tok_base[-1]), dtype=np.int32)
        type_base = np.cumsum([0] + [len(c[3]) for c in chunks])
        list(pool.map(lambda j: TK.gather_ids(chunks[j][0],
                                              merged[type_base[j]:type_base[j + 1]],
                                              ids, tok_base[j]), range(len(chunks))))
    line_base = np.cumsum([0] + [len(c[2]) - 1 for c in chunks])
    line_start = np.concatenate([c[1][:-1] + line_base[j] for j, c in enumerate(chunks)]
                                + [line_base[-1:]])
    line_tok = np.concatenate([c[2][:-1] + tok_base[j] for j, c in enumerate(chunks)]
                              + [tok_base[-1:]])
    return ids, line_start, line_tok, enc.dictionary


def _utf8_buffers(texts) -> tuple[np.ndarray, np.ndarray]:
    """(value offsets, UTF-8 bytes) of ``texts``: an Arrow string/binary array read in place, or
    Python strings encoded (``surrogatepass``: a lone surrogate is a separator, as in
    rouge-score, where it is not ``[a-z0-9]``)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not isinstance(texts, pa.Array):
        texts = pa.array([t.encode("utf-8", "surrogatepass") for t in texts],
                         type=pa.large_binary())
    t = texts.type
    if pa.types.is_string(t) or pa.types.is_binary(t):
        width = np.int32
    elif pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        width = np.int64
    else:
        raise InputError(f"texts to tokenise must be strings; got Arrow type {t}")
    if texts.null_count:
        raise InputError(f"texts to tokenise contain a null at position "
                         f"{int(pc.index(pc.is_null(texts), True).as_py())}")
    n = len(texts)
    bufs = texts.buffers()
    if n == 0 or bufs[1] is None:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(bufs[1], dtype=width)[texts.offset:texts.offset + n + 1]
    data = (np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None
            else np.zeros(0, dtype=np.uint8))
    return offsets, data


def tokenize(texts: Sequence[str], stem: bool = False) -> Tokenized:
    """Tokenise ``texts`` with a fresh :class:`Tokenizer` (rouge-score 0.1.2 semantics)."""
    return Tokenizer(stem)(texts)
