"""Packing long wordpiece sequences into model windows (SPEC_text §5.1).

A text of at most ``window`` content wordpieces is one chunk (so short texts are encoded exactly
as ``bert_score`` encodes them). A longer text is split into sentences (a sentence ends after a
wordpiece whose last character is ``.``, ``!`` or ``?`` and that whitespace follows), and the
sentences are packed greedily, in order, into chunks of at most ``window`` wordpieces; a sentence
longer than ``window`` is cut into pieces of ``window`` wordpieces. Each chunk is then encoded as
``[CLS] chunk [SEP]``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["sentence_ends", "pack_chunks"]


def sentence_ends(text: str, offsets: Sequence[tuple[int, int]]) -> np.ndarray:
    """Boolean per wordpiece: True where a sentence ends after it (its last character is one of
    ``.!?`` and the text continues with whitespace). ``offsets`` are the wordpieces' character
    spans ``[start, end)`` in ``text``."""
    n = len(offsets)
    ends = np.zeros(n, dtype=bool)
    for i in range(n - 1):
        end = offsets[i][1]
        if end > 0 and text[end - 1] in ".!?" and end < len(text) and text[end].isspace():
            ends[i] = True
    return ends


def pack_chunks(n: int, ends: np.ndarray, window: int) -> list[tuple[int, int]]:
    """Chunks ``[start, stop)`` covering wordpieces ``0..n-1`` in order, each of at most
    ``window`` wordpieces, made of whole sentences where a sentence fits (see the module
    docstring). ``n == 0`` gives one empty chunk (the text is still encoded as [CLS][SEP])."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if n <= window:
        return [(0, n)]
    bounds = [0] + [i + 1 for i in np.flatnonzero(ends[: n - 1])] + [n]
    chunks: list[tuple[int, int]] = []
    start = 0          # start of the chunk being filled
    for s, e in zip(bounds[:-1], bounds[1:]):
        if e - start <= window:
            continue   # the sentence fits into the current chunk
        if s > start:  # close the current chunk before this sentence
            chunks.append((start, s))
            start = s
        while e - start > window:  # a sentence longer than the window: cut it
            chunks.append((start, start + window))
            start += window
    chunks.append((start, n))
    return chunks
