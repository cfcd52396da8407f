"""Time-biased gain with per-document lengths: ``TBG(lengths=doc)`` (docs/tbg.md).

Smucker & Clarke (SIGIR 2012) charge each document t(d) = T_s + P(C=1|R=r_d)(alpha l_d + beta)
seconds, l_d its length in words. The lengths come from the column ``doc_len`` of the qrels
(TREC style) or of the table (LETOR style); a document without one (a null, an unjudged
document, or no such column, which warns) takes the measure's constant ``length``.

Each such measure is evaluated in a pass of its own, as Judged@k is: every document's label is
replaced by a code ``[label >= rel] * 2^62 + bits(delta_d)``, delta_d = exp(-t(d) ln 2 / h) and
``bits`` its IEEE-754 pattern (below 2^62 for delta in [0, 1], and rising with delta), and the
kernel's threshold is 2^62 (:mod:`uefast.kernels.tbg`). The judged pass's count at the threshold
is then Np, and its descending sort puts the relevant documents first, shortest first: the
ideal ranking. The main pass evaluates the constant-length measure in its column, which this
pass then replaces.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pyarrow as pa

from uefast.errors import InputError, RowError
from uefast.kernels.tbg import MIN_EXP, REL_BIT

__all__ = ["LENGTH_COLUMN", "per_document", "main_measures", "read_lengths", "codes",
           "refuse_streamed", "check_universe", "judged_codes", "run_codes", "passes", "letor_columns", "copy_stats"]

#: the column that holds each document's length in words
LENGTH_COLUMN = "doc_len"


def per_document(mlist: list) -> list[int]:
    """Indices of the measures that read per-document lengths (``TBG(lengths=doc)``)."""
    return [i for i, m in enumerate(mlist) if m.name == "TBG" and m.param("lengths") == "doc"]


def main_measures(mlist: list) -> list:
    """``mlist`` with each ``TBG(lengths=doc)`` as its constant-length twin, for the main pass
    (its column is then replaced from :func:`passes`)."""
    from uefast.measures import Measure

    doc = set(per_document(mlist))
    out = []
    for i, m in enumerate(mlist):
        if i in doc:
            params = dict(m.params)
            params["lengths"] = "const"
            m = Measure(m.name, m.cutoff, tuple(params.items()))
        out.append(m)
    return out


def read_lengths(table: pa.Table, what: str) -> np.ndarray | None:
    """The ``doc_len`` column of ``table`` as float64, NaN where null; None (with a warning) when
    the table has no such column. Lengths must be finite numbers >= 0 (RowError otherwise)."""
    if LENGTH_COLUMN not in table.column_names:
        warnings.warn(f"TBG(lengths=doc): {what} has no column {LENGTH_COLUMN!r}; every document "
                      f"takes the measure's constant `length`", UserWarning, stacklevel=4)
        return None
    col = table.column(LENGTH_COLUMN)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise InputError(f"{what}: column {LENGTH_COLUMN!r} must hold numbers (words), got "
                         f"{col.type}")
    null = col.is_null().to_numpy(zero_copy_only=False) if col.null_count else None
    x = col.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
    bad = np.flatnonzero(~((x >= 0) & np.isfinite(x)))
    if len(bad):
        r = int(bad[0])
        raise RowError(what, f"column {LENGTH_COLUMN!r} must hold finite lengths >= 0, got "
                             f"{float(x[r])!r} at row ", r)
    if null is not None:
        x[null] = np.nan
    return x


def codes(labels: np.ndarray, lengths: np.ndarray | None, m: Any, rel_level: int) -> np.ndarray:
    """The per-document codes of measure ``m`` (module docstring): ``labels`` clamped at 0,
    ``lengths`` in words (NaN or None: the constant ``length``)."""
    rel = m.param("rel") or rel_level
    flag = np.asarray(labels, np.int64) >= rel
    size = np.full(len(flag), m.param("length")) if lengths is None else np.where(
        np.isnan(lengths), m.param("length"), lengths)
    h = m.param("h")
    t = m.param("ts") + np.where(flag, m.param("pc1"), m.param("pc0")) * (
        m.param("alpha") * size + m.param("beta"))
    if len(t) and float(t.max()) / h > MIN_EXP - 60:
        raise InputError(f"measure {str(m)!r}: a document of {float(size[np.argmax(t)]):g} words "
                         f"takes {float(t.max()):g} s, more than {MIN_EXP - 60} half-lives "
                         f"(h={h:g}); its decay factor is below float64's useful range")
    delta = np.exp(-t * math.log(2.0) / h)
    return (flag.astype(np.int64) * REL_BIT) | delta.view(np.int64)


def refuse_streamed(mlist: list) -> None:
    """Streamed input is evaluated chunk by chunk on the columns it needs: it does not carry
    ``doc_len`` (InputError naming the measure)."""
    for i in per_document(mlist):
        raise InputError(f"measure {str(mlist[i])!r} reads each document's length (column "
                         f"{LENGTH_COLUMN!r}): streamed input does not carry it; read the input "
                         f"into a pyarrow.Table first, or use lengths=const")


def check_universe(mlist: list, n_universe: int) -> None:
    """``reb_universe="collection"`` has no per-document REB: the unjudged documents of the
    collection have no codes (InputError naming the measure)."""
    for i in per_document(mlist):
        if n_universe > 0:
            raise InputError(f"measure {str(mlist[i])!r}: REB over a collection is not available "
                             f"with per-document lengths; use reb_universe='judged' or "
                             f"'retrieved', or lengths=const")


def judged_codes(m: Any, q_lab: np.ndarray, q_len: np.ndarray | None, qg: Any, reb: str,
                 rel_level: int, n_universe: int):
    """``(plan, judged statistics, codes)`` of measure ``m`` over the judged documents (the
    rows of ``q_lab`` grouped by ``qg``), in a plan of its own."""
    from uefast.engine import judged_stats, plan_measures

    qc = codes(np.maximum(np.asarray(q_lab, np.int64), 0), q_len, m, rel_level)
    top = int(qc.max()) if len(qc) else 0
    plan = plan_measures([m], rel_level=rel_level, reb=reb, max_label=top, doc_codes=True)
    js = judged_stats(qg.offsets, qg.perm, qg.has_perm, qc, plan, top, n_universe)
    return plan, js, qc


def run_codes(qc: np.ndarray, hit: np.ndarray, m: Any, rel_level: int) -> np.ndarray:
    """Codes of the run's rows: the judged document's code (``hit`` its qrels row), else a
    non-relevant document of the constant length."""
    unjudged = codes(np.zeros(1, np.int64), None, m, rel_level)[0]
    return np.where(hit >= 0, qc[np.maximum(hit, 0)], unjudged)


def passes(mlist: list, q_lab: np.ndarray, q_len: np.ndarray | None, qg: Any, reb: str,
           rel_level: int, n_universe: int, judged: Any) -> list[tuple]:
    """``(i, plan, judged statistics, codes)`` of each per-document measure i (its own judged
    pass, :func:`judged_codes`), its column of the main pass's ``judged`` replaced."""
    out = []
    for i in per_document(mlist):
        plan, js, qc = judged_codes(mlist[i], q_lab, q_len, qg, reb, rel_level, n_universe)
        copy_stats(judged, js, i)
        out.append((i, plan, js, qc))
    return out


def letor_columns(cols: list[str], mlist: list, score_columns: Any) -> list[str]:
    """The score columns found in a LETOR table, less ``doc_len`` when a measure reads it."""
    if score_columns is not None or not per_document(mlist):
        return cols
    out = [c for c in cols if c != LENGTH_COLUMN]
    if not out:
        raise InputError(f"run: no score column found besides {LENGTH_COLUMN!r} (the document "
                         f"lengths); pass score_columns=")
    return out


def copy_stats(judged: Any, js: Any, i: int) -> None:
    """Column i of the main pass's judged statistics from the measure's own pass (column 0)."""
    for a, b in ((judged.iub, js.iub), (judged.reb, js.reb), (judged.nrel, js.nrel),
                 (judged.idcg, js.idcg)):
        a[:, i] = b[:, 0]
