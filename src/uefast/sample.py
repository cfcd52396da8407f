"""Deterministic synthetic LETOR-style data (the package's embedded sample and benchmark data).

:func:`mslr_like` imitates the shape of MSLR-WEB30K (Qin & Liu 2013): documents per query drawn
from a skewed (log-normal) distribution with mean ~120, graded labels 0-4 whose marginals
(~.514/.325/.134/.019/.008) vary per query (a Dirichlet draw around them), and several systems
of different quality: system s scores ``quality_s * label + noise``, and some systems round their
scores so that they contain ties. The same seed gives the same table on every machine.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from uefast.inputs import numeric_array

__all__ = ["mslr_like", "letor_sample", "LABEL_MARGINALS"]

LABEL_MARGINALS = np.array([0.514, 0.325, 0.134, 0.019, 0.008])
_QUALITY = (1.6, 1.2, 0.9, 0.7, 0.5, 0.35, 0.2, 0.0)  # 0.0 = a random ranker
_ROUND = (None, 1, None, 0, None, 1, None, None)  # decimals kept; None = no rounding (no ties)


def mslr_like(n_queries: int = 31_531, n_systems: int = 8, *, seed: int = 0,
              mean_docs: float = 120.0, max_docs: int = 1_250, string_ids: bool = False) -> pa.Table:
    """An MSLR-WEB30K-shaped LETOR table: ``qid``, ``docid``, ``label`` and ``n_systems`` float64
    score columns ``sys0..`` (quality decreasing with the index; ``sys3`` and ``sys1``/``sys5``
    have rounded, tied scores). Rows are clustered by query.

    ``string_ids=True`` makes ``qid``/``docid`` strings (e.g. ``"q17"``, ``"d17-3"``).
    """
    if n_queries < 1 or n_systems < 1:
        raise ValueError(f"`n_queries` and `n_systems` must be >= 1, got {n_queries}, {n_systems}")
    if not max_docs >= 1:
        raise ValueError(f"`max_docs` must be >= 1, got {max_docs}")
    if not mean_docs > 0:
        raise ValueError(f"`mean_docs` must be > 0, got {mean_docs}")
    rng = np.random.default_rng(seed)
    sigma = 0.6
    sizes = rng.lognormal(np.log(mean_docs) - sigma**2 / 2, sigma, n_queries)
    sizes = np.clip(np.rint(sizes), 1, max_docs).astype(np.int64)
    n = int(sizes.sum())
    qidx = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    probs = rng.dirichlet(LABEL_MARGINALS * 20.0, n_queries)
    cum = np.cumsum(probs, axis=1)
    u = rng.random(n)
    label = np.zeros(n, np.int8)
    for j in range(4):
        label += (u > cum[qidx, j]).astype(np.int8)
    start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    pos = np.arange(n, dtype=np.int64) - start
    cols: dict[str, object] = {}
    if string_ids:
        cols["qid"] = pa.array(np.char.add("q", qidx.astype(str)))
        cols["docid"] = pa.array(np.char.add(np.char.add("d", qidx.astype(str)),
                                             np.char.add("-", pos.astype(str))))
    else:
        cols["qid"] = numeric_array(qidx + 1)
        cols["docid"] = numeric_array(qidx * 10_000 + pos)
    cols["label"] = numeric_array(label)
    for s in range(n_systems):
        q = _QUALITY[s % len(_QUALITY)]
        score = q * label + rng.standard_normal(n)
        dec = _ROUND[s % len(_ROUND)]
        if dec is not None:
            score = np.round(score, dec)
        cols[f"sys{s}"] = numeric_array(score)
    return pa.table(cols)


def letor_sample() -> pa.Table:
    """The embedded default: 60 queries, 4 systems (``sys0``..``sys3``), seed 2022."""
    return mslr_like(60, 4, seed=2022, mean_docs=40.0, max_docs=200)
