"""Input-table helpers shared by the in-memory evaluation (:mod:`uefast.evaluate`) and the
streaming layer (:mod:`uefast.streaming`), so that neither imports the other."""
from __future__ import annotations

import pyarrow as pa

from uefast.engine import Grouping, duplicate_docid
from uefast.errors import InputError, RowError
from uefast.inputs import DocIds, docids, explicit_score_columns

__all__ = ["check_trec_score_columns", "letor_score_columns", "qrels_docids"]


def check_trec_score_columns(score_columns) -> None:
    """``score_columns`` names the systems of a LETOR-style table; a TREC-style run (qrels given)
    has its one score column (``score=``) and its systems in a ``system`` column."""
    if score_columns is not None:
        raise InputError(f"`score_columns`={score_columns!r} applies to LETOR-style input "
                         "(qrels=None); a TREC-style run names its score column with score=... "
                         "and its systems in a `system` column")


def letor_score_columns(t: pa.Table, score_columns, names) -> list[str]:
    """The score columns of a LETOR-style table: ``score_columns`` checked, or the ``score``
    column of a long table (with a ``system`` column), or every floating-point column that is
    not a key or the label."""
    if score_columns is not None:
        return explicit_score_columns(score_columns, t.column_names, names["system"])
    if names["system"] in t.column_names:
        return [names["score"]]
    keys = {names["qid"], names["docid"], names["label"], names["system"]}
    cols = [f.name for f in t.schema if f.name not in keys and pa.types.is_floating(f.type)]
    if not cols:
        raise InputError(f"run: no score column found (floating-point columns other than "
                         f"{sorted(keys)}); columns are {t.column_names}; pass score_columns=")
    return cols


def qrels_docids(qg: Grouping, q_qid: pa.Array, q_doc: pa.Array, dn: str) -> DocIds:
    """The qrels docids (:func:`docids`), a (qid, docid) judged twice refused (rows of the
    qrels; the streaming layer checks the whole qrels with it up front)."""
    qdocs = docids(q_doc, dn, "qrels")
    r, o = duplicate_docid(qg, qdocs)
    if r >= 0:
        raise RowError("qrels", f"duplicate judgment for qid {q_qid[r].as_py()!r} docid "
                       f"{q_doc[r].as_py()!r}: rows ", o, " and ", r)
    return qdocs
