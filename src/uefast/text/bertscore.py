"""BERTScore with IUB and REB (expected value of a random summary), SPEC_text §5.

**BERTScore** (Zhang et al., ICLR 2020; ``bert_score`` 0.3.13 without idf and without baseline
rescaling). With x_i the candidate's and y_j the reference's content-wordpiece embeddings and
X̂, Ŷ these plus the text's [CLS]/[SEP] rows (matched, never averaged, SPEC §5.1):

    R = (1/M) Σ_j max_{x ∈ X̂} cos(y_j, x)      P = (1/L) Σ_i max_{y ∈ Ŷ} cos(x_i, y)
    F = 2PR/(P+R)

A text with no content wordpiece scores P = R = F = 0 (``bert_score``'s rule for empty texts).

**REB** (the random "expected summary" of K wordpieces, K = the candidate's content-wordpiece
count, or the reference's with ``length="reference"``):

- ``"exact"`` (default, SPEC §5.3): K source positions drawn i.i.d. uniformly (the unigram LM over
  source wordpieces), each keeping its in-context embedding e_i; v_j(1) ≤ … ≤ v_j(N) the sorted
  cos(y_j, e_i):

      E[R] = (1/M) Σ_j Σ_k v_j(k)·[(k/N)^K − ((k−1)/N)^K]     (max of K i.i.d. draws)
      E[P] = (1/N) Σ_i max_{y ∈ Ŷ} cos(e_i, y)                 (independent of K ≥ 1)

  Both exact; the in-context sample has no [CLS]/[SEP] rows of its own. E[F] has no closed
  form: F(E[P], E[R]) is used (within 0.1 % of the Monte Carlo E[F] on SummEval, SPEC §5.3).
- ``"sampled"``: Monte Carlo of the same model, ``n_samples`` draws seeded by (``seed``, row);
  with ``reencode=True`` (default) each draw is re-encoded as ``[CLS] w_1..w_K [SEP]`` (one
  encoder pass per draw; lower than the in-context value, SPEC §5.3 caveat), with
  ``reencode=False`` the in-context embeddings are scored (Monte Carlo E[F] of the exact model).
  The standard error goes to the ``"reb_se"`` column.
- ``"algorithm1"``: the dissertation's Algorithm 1 (Feng 2023; SPEC §5.2): the K source
  wordpieces whose embeddings are most cosine-similar to the source's mean embedding (stable
  sort), re-encoded as ``[CLS] sel [SEP]`` in similarity order (``reencode=True``) or scored in
  context; deterministic.

**IUB**: 1 (``iub="one"``; BERTScore's range maximum, the SPEC §7 protocol).

**Several references**: ``multi_ref="mean"`` (default): A, IUB and REB are means over the
references (exact for REB by linearity). ``multi_ref="max"``: A = max_j A_j (``bert_score``'s
rule); E[max_j] has no exact form, so REB needs ``reb="sampled"`` (per draw max over
references) or ``"algorithm1"`` (a fixed summary).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError, RowError
from .encoders import Encoder, TokenEmbeddings

__all__ = ["bertscore_rows", "bertscore_prf", "expected_bertscore_unigram",
           "sampled_bertscore_unigram", "algorithm1_selection", "f_from_pr"]

_SCORES = ("precision", "recall", "f1")
_REBS = ("exact", "sampled", "algorithm1")
_IUBS = ("one",)
_MULTI = ("mean", "max")
_LENGTHS = ("candidate", "reference")


def f_from_pr(p, r):
    """F = 2PR/(P+R), 0 where P+R = 0 (elementwise)."""
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    s = p + r
    return np.where(s > 0, 2.0 * p * r / np.where(s > 0, s, 1.0), 0.0)


def _unit(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    return a / np.where(n > 0, n, 1.0)


def _max_or(a: np.ndarray, axis: int, empty: float = -np.inf) -> np.ndarray:
    return a.max(axis=axis) if a.shape[axis] else np.full(a.shape[1 - axis], empty)


def bertscore_prf(cand: TokenEmbeddings, ref: TokenEmbeddings) -> tuple[float, float, float]:
    """BERTScore (P, R, F) of one candidate against one reference from their token embeddings
    (formula in the module docstring; (0, 0, 0) if either has no content wordpiece)."""
    x, xs = _unit(cand.content), _unit(cand.special)
    y, ys = _unit(ref.content), _unit(ref.special)
    if len(x) == 0 or len(y) == 0:
        return 0.0, 0.0, 0.0
    sim = x @ y.T
    p = np.maximum(sim.max(axis=1), _max_or(x @ ys.T, 1)).mean()
    r = np.maximum(sim.max(axis=0), _max_or(y @ xs.T, 1)).mean()
    return float(p), float(r), float(f_from_pr(p, r))


class _SourceRef:
    """Precomputed quantities of one (source, reference) pair for the unigram model."""

    def __init__(self, src: TokenEmbeddings, ref: TokenEmbeddings) -> None:
        e, y, ys = _unit(src.content), _unit(ref.content), _unit(ref.special)
        self.n, self.m = len(e), len(y)
        self.cos = y @ e.T                                   # (M, N): cos(y_j, e_i)
        # per source position: best match among the reference's rows incl. [CLS]/[SEP]
        self.pmax = np.maximum(_max_or(self.cos, 0), _max_or(e @ ys.T, 1)) if self.m else \
            np.zeros(self.n)
        # mean over j of the ascending sorted rows v_j(1..N): E[R] = u · w(K) (one dot per K)
        self.u = np.sort(self.cos, axis=1).mean(axis=0) if self.m else np.zeros(self.n)

    def expected(self, k: int) -> tuple[float, float]:
        if k <= 0 or self.n == 0 or self.m == 0:
            return 0.0, 0.0
        q = np.arange(self.n + 1, dtype=np.float64) / self.n
        w = np.diff(q ** k)                                  # P(max position = k-th smallest)
        return float(self.pmax.mean()), float(self.u @ w)

    def expected_prf(self, k: int) -> tuple[float, float, float]:
        ep, er = self.expected(k)
        return ep, er, float(f_from_pr(ep, er))


def expected_bertscore_unigram(source: TokenEmbeddings, reference: TokenEmbeddings,
                               k: int) -> tuple[float, float, float]:
    """Exact (E[P], E[R]) of a K-wordpiece in-context sample from the source's unigram model
    against one reference (SPEC §5.3, formulas in the module docstring), and the F proxy
    F(E[P], E[R]). (0, 0, 0) when K = 0 or the source or reference has no content wordpiece."""
    return _SourceRef(source, reference).expected_prf(int(k))


def _draws(rng: np.random.Generator, n: int, k: int, s: int) -> np.ndarray:
    return rng.integers(0, n, size=(s, k)) if n and k else np.zeros((s, 0), dtype=np.int64)


def _in_context_scores(pair: _SourceRef, idx: np.ndarray) -> np.ndarray:
    """(S, 3) P, R, F of in-context samples ``idx`` (S, K) against the pair's reference."""
    if idx.shape[1] == 0 or pair.m == 0:
        return np.zeros((len(idx), 3))
    p = pair.pmax[idx].mean(axis=1)
    r = pair.cos[:, idx].max(axis=2).mean(axis=0)
    return np.stack([p, r, f_from_pr(p, r)], axis=1)


def sampled_bertscore_unigram(source: TokenEmbeddings, references: Sequence[TokenEmbeddings],
                              k: int, *, n_samples: int, rng: np.random.Generator,
                              encoder: Encoder | None = None) -> np.ndarray:
    """Monte Carlo draws of the unigram model (SPEC §5.3): (n_samples, J, 3) P, R, F of each
    draw of K i.i.d. source wordpieces against each reference, scored in context
    (``encoder=None``) or re-encoded as ``[CLS] w_1..w_K [SEP]`` by ``encoder``."""
    idx = _draws(rng, len(source.content), int(k), int(n_samples))
    if encoder is None:
        return np.stack([_in_context_scores(_SourceRef(source, ref), idx) for ref in references],
                        axis=1)
    salads = encoder.encode_ids([source.ids[row] for row in idx])
    return np.array([[bertscore_prf(c, ref) for ref in references] for c in salads])


def algorithm1_selection(source: TokenEmbeddings, k: int) -> np.ndarray:
    """The dissertation's Algorithm 1 (SPEC §5.2): source positions of the min(K, N) content
    wordpieces most cosine-similar to the mean source embedding s = mean_i e_i, in descending
    similarity (stable sort)."""
    e = np.asarray(source.content, dtype=np.float64)
    if len(e) == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    sim = _unit(e) @ _unit(e.mean(axis=0))
    return np.argsort(-sim, kind="stable")[: int(k)]


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InputError(f"`{name}` must be one of {', '.join(allowed)}; got {value!r}")
    return value


def _check_text(name: str, i: int, v) -> None:
    if not isinstance(v, str):
        raise RowError(name, "row ", i, f": expected a string, got {type(v).__name__}")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise RowError(name, "row ", i, f": not valid Unicode text ({e.reason} at character "
                       f"{e.start}: {v[e.start:e.end]!r})") from None


def _check_rows(candidates, references, sources) -> list[list[str]]:
    n = len(candidates)
    for name, col in (("reference", references), ("source", sources)):
        if len(col) != n:
            raise InputError(f"{name}: {len(col)} rows, but candidate has {n} rows")
    refs: list[list[str]] = []
    for i in range(n):
        _check_text("candidate", i, candidates[i])
        _check_text("source", i, sources[i])
        try:
            r = [references[i]] if isinstance(references[i], str) else list(references[i])
        except TypeError:
            raise RowError("reference", "row ", i, ": expected a string or a list of strings, "
                           f"got {type(references[i]).__name__}") from None
        if not r:
            raise RowError("reference", "row ", i, ": empty list of references")
        for v in r:
            _check_text("reference", i, v)
        refs.append(r)
    return refs


def _encode_unique(encoder: Encoder, texts: list[str]) -> dict[str, TokenEmbeddings]:
    uniq = list(dict.fromkeys(texts))
    return dict(zip(uniq, encoder.encode(uniq)))


def _pick(prf: np.ndarray, score: str) -> np.ndarray:
    return prf[..., _SCORES.index(score)]


def bertscore_rows(candidates: Sequence[str], references: Sequence[Sequence[str] | str],
                   sources: Sequence[str], *, score: str = "f1", reb: str = "exact",
                   iub: str = "one", encoder: Encoder | None = None, seed: int = 0,
                   n_samples: int = 32, multi_ref: str = "mean", length: str = "candidate",
                   reencode: bool = True) -> dict[str, np.ndarray]:
    """BERTScore value, IUB and REB per row (formulas and options in the module docstring).

    ``candidates[i]`` is scored against ``references[i]`` (a string or a non-empty list of
    strings) with REB from ``sources[i]``. ``score``: ``"precision"``, ``"recall"`` or ``"f1"``.
    ``reb``: ``"exact"`` (SPEC §5.3, default), ``"sampled"`` (Monte Carlo, ``n_samples`` draws,
    ``seed``), ``"algorithm1"`` (SPEC §5.2). ``iub``: ``"one"``. ``encoder``: an
    :class:`~uefast.text.encoders.Encoder`, default the offline numpy MiniLM
    (``uefast[text-encoder]``). ``multi_ref``: ``"mean"`` or ``"max"``. ``length``: K is the
    candidate's (default) or the first reference's content-wordpiece count. ``reencode``: for
    ``"sampled"`` and ``"algorithm1"``, re-encode the random summary (default) or score it in
    context.

    Returns float64 arrays, one value per row: ``"value"``, ``"iub"``, ``"reb"``, plus
    ``"reb_se"`` (Monte Carlo standard error) when ``reb="sampled"``. Every text is encoded once
    however many rows share it.
    """
    _check_choice("score", score, _SCORES)
    _check_choice("reb", reb, _REBS)
    _check_choice("iub", iub, _IUBS)
    _check_choice("multi_ref", multi_ref, _MULTI)
    _check_choice("length", length, _LENGTHS)
    if reb == "exact" and multi_ref == "max":
        raise InputError("reb='exact' has no exact form for multi_ref='max' (E[max_j] needs the "
                         "joint over references); use reb='sampled' or multi_ref='mean'")
    if reb == "sampled" and int(n_samples) < 2:
        raise InputError(f"`n_samples` must be >= 2 for reb='sampled'; got {n_samples}")
    refs = _check_rows(candidates, references, sources)
    if encoder is None:
        from .encoders import default_encoder
        encoder = default_encoder()
    emb = _encode_unique(encoder, list(candidates) + [r for rs in refs for r in rs]
                         + list(sources))
    agg = np.mean if multi_ref == "mean" else np.max
    n = len(candidates)
    value = np.array([agg(_pick(np.array([bertscore_prf(emb[candidates[i]], emb[r])
                                          for r in refs[i]]), score)) for i in range(n)])
    ks = [len(emb[candidates[i]].content) if length == "candidate" else len(emb[refs[i][0]].content)
          for i in range(n)]
    pairs = _PairCache(emb)
    out = {"value": value, "iub": np.ones(n)}
    if reb == "exact":
        out["reb"] = np.array([agg(_pick(np.array([pairs(sources[i], r).expected_prf(ks[i])
                                                   for r in refs[i]]), score))
                               for i in range(n)])
    elif reb == "sampled":
        out["reb"], out["reb_se"] = _reb_sampled(emb, pairs, sources, refs, ks, score, agg,
                                                 encoder if reencode else None, seed, n_samples)
    else:
        out["reb"] = _reb_algorithm1(emb, sources, refs, ks, score, agg,
                                     encoder if reencode else None)
    return out


class _PairCache:
    """:class:`_SourceRef` per distinct (source, reference) text pair."""

    def __init__(self, emb: dict[str, TokenEmbeddings]) -> None:
        self.emb, self.pairs = emb, {}

    def __call__(self, source: str, reference: str) -> _SourceRef:
        key = (source, reference)
        if key not in self.pairs:
            self.pairs[key] = _SourceRef(self.emb[source], self.emb[reference])
        return self.pairs[key]


def _reb_sampled(emb, pairs, sources, refs, ks, score, agg, encoder, seed, n_samples):
    """Monte Carlo REB and its standard error per row; row i draws from default_rng([seed, i])."""
    reb, se = np.zeros(len(ks)), np.zeros(len(ks))
    for i, k in enumerate(ks):
        rng = np.random.default_rng([int(seed), i])
        if encoder is not None:
            draws = sampled_bertscore_unigram(emb[sources[i]], [emb[r] for r in refs[i]], k,
                                              n_samples=n_samples, rng=rng, encoder=encoder)
        else:
            idx = _draws(rng, len(emb[sources[i]].content), k, int(n_samples))
            draws = np.stack([_in_context_scores(pairs(sources[i], r), idx) for r in refs[i]],
                             axis=1)
        per_draw = agg(_pick(draws, score), axis=1)
        reb[i] = per_draw.mean()
        se[i] = per_draw.std(ddof=1) / np.sqrt(len(per_draw))
    return reb, se


def _reb_algorithm1(emb, sources, refs, ks, score, agg, encoder):
    """Algorithm 1 REB per row; the selected summaries (one per distinct (source, K)) are
    re-encoded in one ``encode_ids`` call, or taken in context when ``encoder`` is None."""
    keys = list(dict.fromkeys(zip(sources, ks)))
    sel = {key: algorithm1_selection(emb[key[0]], key[1]) for key in keys}
    if encoder is not None:
        summaries = dict(zip(keys, encoder.encode_ids([emb[s].ids[sel[(s, k)]] for s, k in keys])))
    else:
        summaries = {(s, k): TokenEmbeddings(emb[s].content[sel[(s, k)]], emb[s].special[:0],
                                             emb[s].ids[sel[(s, k)]]) for s, k in keys}
    return np.array([agg(_pick(np.array([bertscore_prf(summaries[(sources[i], k)], emb[r])
                                         for r in refs[i]]), score))
                     for i, k in enumerate(ks)])
