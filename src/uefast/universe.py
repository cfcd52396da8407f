"""Which random ranking REB is the expectation over (``reb_universe``).

* ``"judged"`` (default): a uniformly random order of the query's judged documents (SPEC_math §0).
  In LETOR-style data every candidate is judged, so this is random re-ranking. On pooled TREC
  qrels the judged set leans towards relevant documents, so the baseline is strong: real runs can
  score below it.
* ``"retrieved"``: a random order of each run's own retrieved documents (unjudged = label 0),
  per (system, query). It is the tie-aware value of the run with every score tied (SPEC_math §5),
  computed by the same kernels. IUB and the normalisers (IDCG, Np) still come from the qrels.
* ``"collection"``: a random order of a collection of N documents, of which the unjudged ones
  are non-relevant. Every closed form of SPEC_math §1 depends on the judged labels only through
  (n, Np, the gain sum), so it is evaluated with n = N: O(1) or O(k) per query for any N. The
  families that declare this (``Family.collection_reb``) are DCG, nDCG, P, R, R-prec, SP, AP,
  RBP, TBG (its REB reads n, Np and K only: O(M min(M, Np)), :mod:`uefast.kernels.tbg`), and,
  with a cutoff, RR, Success, F and E. The others (ERR, nERR, Q, O, P+) need the
  labels at every rank and are refused.
"""
from __future__ import annotations

import math

import numpy as np

from uefast.errors import InputError

__all__ = ["UNIVERSES", "check_universe", "collection_tables", "retrieved_reb"]

UNIVERSES = ("judged", "retrieved", "collection")
_CHUNK = 1 << 20


def check_universe(reb_universe: str, collection_size, mlist, reb: str) -> int:
    """Validate ``reb_universe`` / ``collection_size`` against the measures; returns N (0 unless
    ``"collection"``)."""
    if reb_universe not in UNIVERSES:
        raise InputError(f"`reb_universe` must be one of {list(UNIVERSES)}, got {reb_universe!r}")
    if reb_universe != "collection":
        if collection_size is not None:
            raise InputError("`collection_size` is for reb_universe='collection', got "
                             f"reb_universe={reb_universe!r}")
        return 0
    if (isinstance(collection_size, bool) or not isinstance(collection_size, (int, np.integer))
            or collection_size < 1):
        raise InputError("reb_universe='collection' needs `collection_size`, the number of "
                         f"documents in the collection (an integer >= 1), got {collection_size!r}")
    if reb != "exact":
        raise InputError("reb_universe='collection' takes reb='exact' (the paper's formulas are "
                         "over the judged documents)")
    for m in mlist:
        rule = m.definition.collection_reb
        if rule == "none" or (rule == "cutoff" and m.cutoff is None):
            need = " with a cutoff" if rule == "cutoff" else ""
            raise InputError(
                f"measure {str(m)!r}: REB over a collection is available in closed form for "
                f"{_supported()}{need}; {m.name}'s REB reads the label at every rank")
    return int(collection_size)


def _supported() -> str:
    from uefast.measures import FAMILIES

    closed = [n for n, f in FAMILIES.items() if f.collection_reb == "closed"]
    cut = [n for n, f in FAMILIES.items() if f.collection_reb == "cutoff"]
    return ", ".join(closed) + " (and " + ", ".join(cut) + " with a cutoff)"


def _sum_to(n: int, fn) -> float:
    """sum_{i=1..n} fn(i) in chunks (one O(N) pass per evaluation, not per query)."""
    parts = []
    for a in range(1, n + 1, _CHUNK):
        i = np.arange(a, min(a + _CHUNK, n + 1), dtype=np.float64)
        parts.append(float(fn(i).sum()))
    return math.fsum(parts)


def collection_tables(plan, max_group: int, n: int) -> np.ndarray:
    """The kernels' rank tables (:func:`uefast.engine.tables`) for REB over N = ``n`` documents:
    columns up to every rank a measure reads below N, then one column holding the sums at N
    (discounts sum_{i<=N} 1/log2(i+1), harmonic number H_N), read where K = N
    (:func:`uefast.kernels.routines._at`)."""
    from uefast.engine import tables

    if n < max_group:
        raise InputError(f"`collection_size` {n} is smaller than a query's judged documents "
                         f"({max_group})")
    ks = [int(k) for k in plan.ks if 0 < k < n]
    base = tables(max(max_group, *ks, 1))
    last = np.array([[1.0 / math.log2(n + 1.0)],
                     [_sum_to(n, lambda i: 1.0 / np.log2(i + 1.0))],
                     [_sum_to(n, lambda i: 1.0 / i)],
                     [1.0 / n]])
    return np.ascontiguousarray(np.hstack([base, last]))


def retrieved_reb(offsets, perm, has_perm, labels, qref, plan, judged, backend="cpu"):
    """REB per ranked segment over a random order of its own documents: the tie-aware value of
    the segment with every score tied (one tie group)."""
    from uefast.engine import rank_values
    from uefast.inputs import NO_DOCIDS

    zeros = np.zeros(len(labels), np.float64)
    return rank_values(offsets, perm, has_perm, labels, zeros, qref, "expected", NO_DOCIDS, plan,
                       judged, backend=backend)
