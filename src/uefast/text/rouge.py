"""ROUGE-N, ROUGE-L and ROUGE-Lsum with rouge-score 0.1.2 semantics (SPEC_text §1), on many
(candidate, reference) pairs at once.

Counts (Lin 2004; rouge-score ``rouge_scorer.py``):

* ROUGE-N: O_n = sum_g min(c_g, r_g) over the reference's n-grams (overlapping windows);
  P = O_n / max(n_c, 1), R = O_n / max(n_r, 1) with n_c = max(L-n+1, 0), n_r = max(M-n+1, 0).
* ROUGE-L: LCS over the whole token sequences; P = LCS/L, R = LCS/M (0 if a text is empty).
* ROUGE-Lsum: summary-level union LCS over newline-separated sentences, each reference token
  counted at most as often as it occurs in both texts; P = hits/L, R = hits/M.

F = 2PR/(P+R) (0 if P+R = 0), evaluated with the same float operations as rouge-score's
``scoring.fmeasure``, so P/R/F are bit-identical to ``RougeScorer.score(target, prediction)``.
Texts are tokenised once (:mod:`uefast.text.tokenize`); the counts come from the Numba kernels
of :mod:`uefast.text._rouge_kernels`, parallel over pairs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numba as nb
import numpy as np
import pyarrow as pa

from uefast.errors import MeasureParseError
from uefast.text import _rouge_kernels as K
from uefast.text.tokenize import Tokenized, Tokenizer

__all__ = ["Variant", "parse_variant", "ngram_keys", "overlap_counts", "count_units",
           "prf", "rouge_scores"]


@dataclass(frozen=True)
class Variant:
    """A ROUGE variant: ``kind`` "N" (with ``n``), "L" or "Lsum"."""

    kind: str
    n: int = 0

    def __str__(self) -> str:
        return f"ROUGE-{self.n}" if self.kind == "N" else f"ROUGE-{self.kind}"


def parse_variant(s: str) -> Variant:
    """``"1"``/``"rouge1"``/``"ROUGE-1"`` -> N-gram n=1; ``"L"``, ``"Lsum"`` likewise."""
    t = s.strip()
    for prefix in ("ROUGE-", "rouge-", "rouge", "ROUGE"):
        if t.startswith(prefix):
            t = t[len(prefix):]
            break
    if t.isdigit() and int(t) >= 1:
        return Variant("N", int(t))
    if t in ("L", "Lsum"):
        return Variant(t)
    raise MeasureParseError(f"unknown ROUGE variant {s!r}: expected ROUGE-<n> (n >= 1), "
                            "ROUGE-L or ROUGE-Lsum")


def ngram_keys(tok: Tokenized, n: int, texts: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """(keys, key_offsets): one int64 key per n-gram window of each text, equal keys for equal
    n-grams, sorted within each text. Keys pack the ids in base V when V**n < 2**63; otherwise
    n-gram ids are built by pairing ((n-1)-gram id, next token) through ``np.unique``.
    ``texts``: only these texts get keys (the others none), e.g. candidates and references, not
    sources."""
    offs = tok.text_offsets
    lengths = np.diff(offs)
    counts = np.maximum(lengths - n + 1, 0)
    if texts is not None:
        wanted = np.zeros(len(lengths), dtype=bool)
        wanted[texts] = True
        counts = np.where(wanted, counts, 0)
    key_off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=key_off[1:])
    base = max(len(tok.vocab), 1)
    if n * np.log2(base + 1) < 62:
        out = np.empty(int(key_off[-1]), dtype=np.int64)
        K.packed_ngram_keys(tok.ids, offs, np.int64(n), np.int64(base), key_off, out)
        return out, key_off
    # Iterative exact ids: id_k(i) = rank of (id_{k-1}(i), tok[i+k-1]) over all windows.
    text_of = np.repeat(np.arange(len(lengths)), lengths)
    pos = np.arange(len(tok.ids)) - offs[text_of]
    cur = tok.ids.astype(np.int64)
    for k in range(2, n + 1):
        valid = (pos + k <= lengths[text_of]) & (counts[text_of] > 0)
        nxt = np.full(len(cur), -1, dtype=np.int64)
        idx = np.nonzero(valid)[0]
        pair = cur[idx] * base + tok.ids[idx + k - 1]
        _, inv = np.unique(pair, return_inverse=True)
        nxt[idx] = inv
        cur = nxt
    keys = np.ascontiguousarray(cur[cur >= 0])
    K.sort_segments(keys, key_off)
    return keys, key_off


def _by_ref(ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, group offsets): pair indices grouped by reference text (stable)."""
    order = np.argsort(ref, kind="stable")
    new = np.ones(len(ref), dtype=bool)
    new[1:] = ref[order[1:]] != ref[order[:-1]]
    grp_off = np.append(np.flatnonzero(new), len(ref)).astype(np.int64)
    return order.astype(np.int64), grp_off


def count_units(variant: Variant, lengths: np.ndarray) -> np.ndarray:
    """Units the P/R denominators count: n-gram windows max(len-n+1, 0), else tokens."""
    if variant.kind == "N":
        return np.maximum(lengths - variant.n + 1, 0)
    return lengths


def overlap_counts(tok: Tokenized, cand: np.ndarray, ref: np.ndarray, variant: Variant,
                   keys: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """int64 per pair: O_n (clipped n-gram overlap), the LCS length, or the Lsum hits of text
    ``cand[p]`` against text ``ref[p]`` (indices into ``tok``). N-grams packable in an int64 and
    LCS run with the pairs grouped by reference; ``keys`` may pass precomputed
    :func:`ngram_keys` (then, and for n-grams too long to pack, the sorted-key merge is used)."""
    cand = np.ascontiguousarray(cand, dtype=np.int64)
    ref = np.ascontiguousarray(ref, dtype=np.int64)
    out = np.empty(len(cand), dtype=np.int64)
    base = max(len(tok.vocab), 1)
    packed = variant.kind == "N" and variant.n * np.log2(base + 1) < 62
    if variant.kind == "L" or (packed and keys is None):
        order, grp_off = _by_ref(ref)
        offs = tok.text_offsets
        chunks = np.int64(min(len(grp_off) - 1, 4 * nb.get_num_threads()))
        if variant.kind == "N" and variant.n == 1:
            K.clipped1_by_ref(tok.ids, offs, cand, ref, order, grp_off, np.int64(base), chunks,
                              out)
        elif variant.kind == "N" and variant.n == 2:
            K.clipped2_by_ref(tok.ids, offs, cand, ref, order, grp_off, np.int64(base), chunks,
                              out)
        elif variant.kind == "N":
            K.clipped_overlap_by_ref(tok.ids, offs, cand, ref, order, grp_off,
                                     np.int64(variant.n), np.int64(base), out)
        else:
            K.lcs_by_ref(tok.ids, offs, cand, ref, order, grp_off, np.int64(base), chunks, out)
    elif variant.kind == "N":  # n-grams too long to pack in an int64, or keys given
        k, ko = keys if keys is not None else ngram_keys(tok, variant.n)
        K.clipped_overlap(k, ko, k, ko, cand, ref, out)
    else:
        K.lsum_pairs(tok.ids, tok.tok_offsets, tok.line_offsets,
                     tok.ids, tok.tok_offsets, tok.line_offsets, cand, ref, out)
    return out


def prf(o, units_c, units_r, variant: Variant):
    """(P, R, F) float64 arrays from counts with rouge-score's float operations: n-grams
    P = O/max(n_c,1), R = O/max(n_r,1); LCS/Lsum P = O/L, R = O/M and all 0 if L or M is 0;
    F = 2*P*R/(P+R), 0 where P+R = 0."""
    o, uc, ur = np.broadcast_arrays(np.asarray(o, dtype=np.int64),
                                    np.asarray(units_c, dtype=np.int64),
                                    np.asarray(units_r, dtype=np.int64))
    out = np.empty((3,) + o.shape)
    K.prf_arrays(o.ravel(), uc.ravel(), ur.ravel(), variant.kind == "N",
                 out.reshape(3, -1))
    return out[0], out[1], out[2]


def rouge_scores(targets: Sequence[str], predictions: Sequence[str],
                 rouge_types: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
                 use_stemmer: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Pairwise ``RougeScorer(rouge_types, use_stemmer).score(targets[i], predictions[i])`` for
    every i, as ``{type: (P, R, F)}`` float64 arrays (bit-identical to rouge-score 0.1.2)."""
    if len(targets) != len(predictions):
        raise ValueError(f"{len(targets)} targets but {len(predictions)} predictions")
    n = len(predictions)
    enc = pa.array(list(predictions) + list(targets), type=pa.large_string()).dictionary_encode()
    idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    tok = Tokenizer(use_stemmer)(enc.dictionary)  # each distinct text once
    cand = idx[:n]
    ref = idx[n:]
    lengths = np.diff(tok.text_offsets)
    out = {}
    for t in rouge_types:
        v = parse_variant(t)
        o = overlap_counts(tok, cand, ref, v)
        out[t] = prf(o, count_units(v, lengths[cand]), count_units(v, lengths[ref]), v)
    return out
