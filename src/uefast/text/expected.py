"""REB: expected ROUGE of a random candidate of L tokens drawn i.i.d. from the source's unigram
model p(w) = c_src(w)/N, in token space (after tokenisation and stemming) -- SPEC_text §2.

* ROUGE-1: exact, binomial closed form (§2.1).
* ROUGE-N, n >= 2: exact, automaton DP (§2.3).
* ROUGE-L and ROUGE-Lsum: Monte Carlo with a seeded counter-based generator (§2.4); the standard
  error sd/sqrt(S) is returned with the mean. Draw d of a source is one stream of positions
  keyed by (seed, source text, d); the length-L candidate is its first L tokens, so one pass of
  the bit-parallel LCS per draw serves every length of a (source, reference) pair, and the draws
  are shared by all references and lengths (common random numbers). For Lsum the random summary
  is one sentence.

For fixed lengths F is linear in the overlap (§1, check A3), so with O the overlap (or LCS)::

    E[P] = E[O]/max(n_c, 1),  E[R] = E[O]/max(n_r, 1),  E[F] = 2 E[O]/(n_c + n_r)

exactly (0 when n_c or n_r is 0). The candidate length L is given per row (§2.5: by default the
candidate's own token count; a fixed L0 per document is the caller's choice). Work is grouped
by (source, reference) so each DP runs once for all the lengths it is needed at.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numba as nb
import numpy as np

from uefast.text import _expected_kernels as EK
from uefast.text import _mc_kernels as MK
from uefast.text.rouge import Variant
from uefast.text.tokenize import Tokenized

__all__ = ["SourceIndex", "expected_overlaps", "task_groups", "expected_prf",
           "overlap1_distribution",
           "DEFAULT_SAMPLES"]

DEFAULT_SAMPLES = 200


@dataclass(frozen=True)
class SourceIndex:
    """The unigram models of some texts of a :class:`Tokenized` used as sources: each one's token
    ids sorted (``sorted_ids[offsets[s]:offsets[s+1]]``) and a 64-bit key of its content (blake2b
    of its text) that seeds the Monte Carlo draws, which pick positions of the source in text
    order: the draws depend on the source's tokens only, not on the other texts or row order."""

    sorted_ids: np.ndarray
    offsets: np.ndarray
    keys: np.ndarray
    text_order: np.ndarray  # the same ids in text order: Monte Carlo draws positions from it

    @classmethod
    def build(cls, tok: Tokenized, texts: np.ndarray, raw=None) -> "SourceIndex":
        """Source model of the texts ``texts`` (indices into ``tok``), in that order. ``raw``:
        the source strings, or their UTF-8 bytes (which key the draws; default: the token
        strings)."""
        offs = tok.text_offsets
        parts = [tok.ids[offs[t]:offs[t + 1]] for t in texts]
        lengths = np.array([len(p) for p in parts], dtype=np.int64)
        off = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=off[1:])
        if raw is None:
            raw = [" ".join(tok.vocab[i] for i in p) for p in parts]
        keys = np.array([int.from_bytes(hashlib.blake2b(
            r.encode("utf-8", "surrogatepass") if isinstance(r, str) else r,
            digest_size=8).digest(), "little") for r in raw], dtype=np.uint64)
        text_order = np.ascontiguousarray(np.concatenate(parts) if parts else
                                          np.empty(0, np.int32), dtype=np.int32)
        ids = text_order.copy()
        for s in range(len(parts)):
            ids[off[s]:off[s + 1]].sort()
        return cls(ids, off, keys, text_order)


def task_groups(src, ref, lengths):
    """Distinct (src, ref, L) tasks sorted by (src, ref, L); the rows' task index; and group
    boundaries of equal (src, ref)."""
    src = np.asarray(src, dtype=np.int64)
    ref = np.asarray(ref, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    n_ref = int(ref.max()) + 1 if len(ref) else 1
    n_len = int(lengths.max()) + 1 if len(lengths) else 1
    key = (src * n_ref + ref) * n_len + lengths  # one int64 per task, ordered as (src, ref, L)
    ukey, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    uniq = np.stack([ukey // n_len // n_ref, ukey // n_len % n_ref, ukey % n_len], axis=1)
    new = np.ones(len(uniq), dtype=bool)
    if len(uniq):
        new[1:] = (uniq[1:, 0] != uniq[:-1, 0]) | (uniq[1:, 1] != uniq[:-1, 1])
    starts = np.nonzero(new)[0]
    len_off = np.append(starts, len(uniq)).astype(np.int64)
    return uniq, inv, len_off


def expected_overlaps(tok: Tokenized, sources: SourceIndex, src: np.ndarray, ref: np.ndarray,
                      lengths: np.ndarray, variant: Variant, *, samples: int = DEFAULT_SAMPLES,
                      seed: int = 0, groups=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Per row: E[O] (n-gram overlap, LCS or Lsum hits) of a random length-``lengths[i]``
    candidate from source ``src[i]`` (index into ``sources``) against reference text ``ref[i]``
    (index into ``tok``). Returns (mean, standard error) -- the error ``None`` when exact.
    ``groups``: ``task_groups(src, ref, lengths)`` when the caller already has it (several
    variants over the same rows)."""
    src = np.asarray(src, dtype=np.int64)
    ref = np.asarray(ref, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(src) == 0:
        return np.zeros(0), (None if variant.kind == "N" else np.zeros(0))
    uniq, inv, len_off = task_groups(src, ref, lengths) if groups is None else groups
    g_src = np.ascontiguousarray(uniq[len_off[:-1], 0])
    g_ref = np.ascontiguousarray(uniq[len_off[:-1], 1])
    t_len = np.ascontiguousarray(uniq[:, 2])
    out = np.empty(len(uniq))
    offs = tok.text_offsets
    # groups in contiguous chunks, each with its own per-id scratch of the vocabulary's size
    n_vocab = np.int64(max(len(tok.vocab), 1))
    chunks = np.int64(min(len(g_src), 4 * nb.get_num_threads()))
    if variant.kind == "N" and variant.n == 1:
        EK.expected_overlap_1(tok.ids, offs, sources.sorted_ids, sources.offsets, g_src, g_ref,
                              len_off, t_len, n_vocab, chunks, out)
        return out[inv], None
    if variant.kind == "N":
        EK.expected_overlap_n(tok.ids, offs, sources.sorted_ids, sources.offsets, g_src, g_ref,
                              len_off, t_len, np.int64(variant.n), n_vocab, chunks, out)
        return out[inv], None
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    sd = np.empty(len(uniq))
    MK.mc_lcs(tok.ids, offs, tok.tok_offsets, tok.line_offsets, sources.text_order,
              sources.offsets, sources.keys, g_src, g_ref, len_off, t_len, np.int64(samples),
              np.uint64(seed % 2**64), variant.kind == "Lsum", n_vocab, chunks, out, sd)
    return out[inv], sd[inv] / np.sqrt(samples)


def expected_prf(e_o, units_c, units_r):
    """(E[P], E[R], E[F]) from E[O]: E[O]/max(n_c,1), E[O]/max(n_r,1), 2E[O]/(n_c+n_r); all 0
    where n_c or n_r is 0 (the overlap is then 0)."""
    e_o = np.asarray(e_o, dtype=np.float64)
    uc = np.asarray(units_c, dtype=np.int64)
    ur = np.asarray(units_r, dtype=np.int64)
    ok = (uc > 0) & (ur > 0)
    p = np.where(ok, e_o / np.maximum(uc, 1), 0.0)
    r = np.where(ok, e_o / np.maximum(ur, 1), 0.0)
    f = np.where(ok, 2.0 * e_o / np.maximum(uc + ur, 1), 0.0)
    return p, r, f


def overlap1_distribution(source: str, reference: str, length: int, *,
                          stem: bool = False) -> np.ndarray:
    """Exact distribution of the ROUGE-1 overlap O_1 of a random length-``length`` candidate
    from the source's unigram model against ``reference`` (SPEC_text §2.2): ``out[o] = P(O_1 =
    o)``, o = 0..min(L, M). Texts are tokenised as rouge-score does. Its mean is E[O_1] of
    :func:`expected_overlaps`; it gives the variance, quantiles or a p-value of an observed
    overlap against the random summary. Cost O(m L^2 min(L, M)), m the reference's in-source
    types."""
    from uefast.text.tokenize import Tokenizer

    if int(length) != length or length < 0:
        raise ValueError(f"length must be a non-negative integer, got {length!r}")
    tok = Tokenizer(stem)([source, reference])
    o = tok.text_offsets
    src = np.sort(tok.ids[o[0]:o[1]])
    ref_types, ref_counts = np.unique(tok.ids[o[1]:o[2]], return_counts=True)
    c_src = np.searchsorted(src, ref_types, side="right") - np.searchsorted(src, ref_types)
    keep = c_src > 0
    pmf = EK.overlap1_pmf(c_src[keep].astype(np.int64), np.int64(len(src)),
                          ref_counts[keep].astype(np.int64), np.int64(length))
    full = np.zeros(min(int(length), int(o[2] - o[1])) + 1)
    full[:len(pmf)] = pmf
    return full
