"""The guard for the expression path on TREC data: every relevant document in the frame.

The expressions (``uefast.polars.ap`` ...) are LETOR style: a group's rows are the query's whole
judged set.  A TREC run joined to its qrels and then grouped lacks the relevant documents the run
did not retrieve, so AP, recall, R-precision and nDCG (whose ideal ranking counts every relevant
document) come out too high -- e.g. AP 0.2785 instead of 0.2249 on a TREC 2003 Robust run.
``uefast.polars.evaluate(run, qrels)`` is the right path for such data; where a frame must go
through the expressions, :func:`require_all_relevant` proves it complete first.
"""
from __future__ import annotations

from typing import Any

import polars as pl

from uefast.errors import InputError

__all__ = ["require_all_relevant"]


def _lazy(x: Any) -> pl.LazyFrame:
    if isinstance(x, pl.LazyFrame):
        return x
    if isinstance(x, pl.DataFrame):
        return x.lazy()
    return pl.from_arrow(x).lazy() if hasattr(x, "schema") else pl.DataFrame(x).lazy()


def require_all_relevant(frame: pl.DataFrame | pl.LazyFrame, qrels: Any, *, qid: str = "qid",
                         docid: str = "docid", label: str = "label", rel_level: int = 1):
    """Return ``frame`` unchanged if it holds, for every query it has, every document that
    ``qrels`` judges relevant (label >= ``rel_level``); else raise :class:`InputError` naming the
    first missing (query, document) and how many are missing.

    Algorithm: an anti-join of the qrels' relevant (qid, docid) pairs of the frame's queries
    against the frame's (qid, docid) pairs; ids are compared as text (``01`` and ``1`` differ),
    as TREC files keep them.  ``qrels``: a Polars frame or an Arrow table with ``qid``, ``docid``,
    ``label`` (:func:`uefast.io.read_qrels`).  A LazyFrame is collected for the check.
    """
    text = [pl.col(qid).cast(pl.String), pl.col(docid).cast(pl.String)]
    f = _lazy(frame)
    q = _lazy(qrels)
    for name, lf, cols in (("frame", f, (qid, docid)), ("qrels", q, (qid, docid, label))):
        have = lf.collect_schema().names()
        for c in cols:
            if c not in have:
                raise InputError(f"require_all_relevant: {name} has no column {c!r} (columns {have})")
    pairs = f.select(text).unique()
    rel = (q.filter(pl.col(label) >= rel_level).select(text)
           .join(pairs.select(pl.col(qid)).unique(), on=qid, how="semi"))
    missing = rel.join(pairs, on=[qid, docid], how="anti").sort([qid, docid]).collect()
    if missing.height:
        r = missing.row(0, named=True)
        raise InputError(
            f"frame lacks {missing.height} relevant document(s) of its queries that the qrels judge "
            f"(label >= {rel_level}); first: qid {r[qid]!r}, docid {r[docid]!r}.  Grouped "
            f"expressions would leave them out (AP, recall, R-precision, nDCG too high): use "
            f"uefast.polars.evaluate(run, qrels) for a TREC run")
    return frame
