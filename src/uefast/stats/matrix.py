"""Topics x systems matrix from the long per-query table of :func:`uefast.evaluate`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.inputs import numpy_view, text_array
from uefast.stats._validation import check_choice

__all__ = ["TopicSystemMatrix", "topic_system_matrix", "as_table", "MISSING_POLICIES"]

MISSING_POLICIES = ("intersect", "zero", "error")
_SHOW = 5


@dataclass(frozen=True)
class TopicSystemMatrix:
    """A topics x systems matrix aligned by qid, with a report of what the missing policy did.

    Attributes
    ----------
    matrix : numpy.ndarray
        float64, ``n_topics x n_systems``; row ``k`` is ``qids[k]``, column ``j`` is ``systems[j]``.
    qids, systems : tuple
        Row and column labels (qids keep their type: str or int).
    measure, column : str or None
        The measure selected and the value column read.
    missing : str
        The policy applied: ``"intersect"``, ``"zero"`` or ``"error"``.
    dropped_qids : tuple
        Queries removed by ``"intersect"`` (missing for at least one system), in input order.
    filled : tuple of (system, qid)
        Cells set to 0.0 by ``"zero"``.
    """

    matrix: np.ndarray
    qids: tuple
    systems: tuple
    measure: str | None
    column: str
    missing: str
    dropped_qids: tuple = ()
    filled: tuple = ()

    def report(self) -> dict:
        """JSON-friendly summary of the missing-data policy."""
        return {"missing": self.missing, "n_topics": len(self.qids),
                "n_systems": len(self.systems), "dropped_qids": list(self.dropped_qids),
                "filled": [list(c) for c in self.filled]}


def as_table(data) -> pa.Table:
    """A ``pyarrow.Table`` from a pyarrow Table, a polars DataFrame or any Arrow stream object."""
    if isinstance(data, pa.Table):
        return data
    to_arrow = getattr(data, "to_arrow", None)
    if callable(to_arrow):
        return to_arrow()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    raise InputError(f"expected a pyarrow.Table or polars.DataFrame; got {type(data).__name__}")


def _examples(values) -> str:
    values = list(values)
    shown = ", ".join(map(repr, values[:_SHOW]))
    return shown + (f", ... ({len(values)} in all)" if len(values) > _SHOW else "")


def _select_measure(table: pa.Table, measure):
    if "measure" not in table.column_names:
        if measure is not None:
            raise InputError(f"`measure` given ({measure!r}) but the table has no `measure` column")
        return table, None
    names = pc.unique(table["measure"]).to_pylist()
    if measure is None:
        if len(names) != 1:
            raise InputError(f"the table holds {len(names)} measures ({_examples(names)}); "
                             "choose one with `measure`")
        measure = names[0]
    elif measure not in names:
        raise InputError(f"`measure` {measure!r} not in the table; it has {_examples(names)}")
    # the measure as an Arrow scalar taken from an array built from its bytes: converting the
    # Python string (pa.scalar) would make pyarrow import pandas (~0.4 s of a command)
    return table.filter(pc.equal(table["measure"], text_array([measure])[0])), measure


def _topic_system_matrix_iv(table, column, missing, systems):
    table = as_table(table)
    missing = check_choice("missing", missing, MISSING_POLICIES)
    for name in ("system", "qid", column):
        if name not in table.column_names:
            raise InputError(f"the table has no `{name}` column; columns are {table.column_names}")
    if systems is not None:
        systems = list(systems)
        if len(systems) < 2:
            raise InputError(f"`systems` must name at least 2 systems; got {systems!r}")
        _check_no_repeats(systems, systems)
    return table, missing, systems


def _check_no_repeats(resolved, given) -> None:
    """`systems` naming one system twice (``resolved``: as matched to the table's names)."""
    seen = set()
    for r, g in zip(resolved, given):
        if r in seen:
            raise InputError(f"`systems` names system {r!r} twice (as {g!r}); got {list(given)!r}")
        seen.add(r)


def topic_system_matrix(table, measure=None, *, column="value", missing="intersect",
                        systems=None) -> TopicSystemMatrix:
    """Pivot the long per-query table into a topics x systems matrix aligned by qid.

    Parameters
    ----------
    table : pyarrow.Table or polars.DataFrame
        Columns ``system``, ``qid``, ``column`` and optionally ``measure`` (the layout of
        :func:`uefast.evaluate`, or a plain ``qid, system, value`` table).
    measure : str, optional
        Measure to select; may be omitted when the table holds one measure (or no ``measure``
        column).
    column : str
        Value column: ``"value"``, ``"ue_v1"``, ``"ue_v2"``, ``"iub"``, ``"reb"``, ...
    missing : {"intersect", "zero", "error"}
        What to do with a qid that some system lacks (a null value counts as missing): keep only
        qids present for every system, fill the missing cells with 0.0, or raise. What was done is
        reported in ``dropped_qids`` / ``filled``; nothing happens silently.
    systems : sequence of str, optional
        Systems to keep, in this column order (default: all, in order of first appearance); a
        name is matched as given or as text (``"1"`` selects an integer system 1).

    Rows are qids in order of first appearance. NaN values and duplicate ``(system, qid)`` rows
    raise :class:`uefast.InputError`.
    """
    table, missing, systems = _topic_system_matrix_iv(table, column, missing, systems)
    table, measure = _select_measure(table, measure)
    sys_all = table["system"].to_pylist()
    order = list(dict.fromkeys(sys_all))
    if systems is None:
        systems = order
    else:
        known = set(order)
        as_text = {str(s): s for s in order}  # "1" names an integer system 1
        given = systems
        systems = [s if s in known else as_text.get(str(s), s) for s in systems]
        unknown = [s for s in systems if s not in known]
        if unknown:
            raise InputError(f"`systems` not in the table: {_examples(unknown)}; "
                             f"it has {_examples(order)}")
        _check_no_repeats(systems, given)
    qid_list = table["qid"].to_pylist()
    qids = list(dict.fromkeys(qid_list))
    q_index = {q: k for k, q in enumerate(qids)}
    s_index = {s: j for j, s in enumerate(systems)}
    col = table[column]
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        try:  # numbers read as text (a CSV column that also held, e.g., trec_eval's runid row)
            col = pc.cast(col, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
            or pa.types.is_decimal(col.type) or pa.types.is_null(col.type)):
        bad = next(((k, v) for k, v in enumerate(col.to_pylist()) if v is not None
                    and not _is_number(v)), None)
        at = f"; row {bad[0]} holds {bad[1]!r}" if bad else ""
        raise InputError(f"column `{column}` must hold numbers, got {col.type}{at}")
    # read through the buffers (numpy_view): to_numpy() makes pyarrow import pandas
    values = numpy_view(col.cast(pa.float64()), null_value=np.nan).astype(np.float64, copy=True)
    valid = numpy_view(pc.is_null(table[column]).cast(pa.int8())) == 0
    rows = np.fromiter((q_index[q] for q in qid_list), np.int64, len(qid_list))
    cols = np.fromiter((s_index.get(s, -1) for s in sys_all), np.int64, len(sys_all))
    keep = (cols >= 0) & valid
    rows, cols, values = rows[keep], cols[keep], values[keep]
    if np.isnan(values).any():
        k = int(np.flatnonzero(np.isnan(values))[0])
        raise InputError(f"column `{column}` is NaN for system {systems[cols[k]]!r}, "
                         f"qid {qids[rows[k]]!r} (a UE score of a degenerate query? evaluate "
                         f"with --degenerate zero or drop; a missing value is an empty cell)")
    cell = rows * len(systems) + cols
    uniq, n_seen = np.unique(cell, return_counts=True)
    if (n_seen > 1).any():
        k = int(uniq[np.argmax(n_seen > 1)])
        raise InputError(f"duplicate rows for system {systems[k % len(systems)]!r}, "
                         f"qid {qids[k // len(systems)]!r}")
    mat = np.full((len(qids), len(systems)), np.nan)
    mat[rows, cols] = values
    absent = np.isnan(mat)
    dropped, filled = (), ()
    if absent.any():
        bad_rows = np.flatnonzero(absent.any(axis=1))
        if missing == "error":
            pairs = [(systems[j], qids[k]) for k, j in np.argwhere(absent)]
            raise InputError(f"{len(pairs)} (system, qid) cells are missing, e.g. "
                             f"{_examples(pairs)}; use missing='intersect' or 'zero' (command line: --missing)")
        if missing == "intersect":
            dropped = tuple(qids[k] for k in bad_rows)
            keep_rows = ~absent.any(axis=1)
            mat = mat[keep_rows]
            qids = [q for q, k in zip(qids, keep_rows) if k]
        else:
            filled = tuple((systems[j], qids[k]) for k, j in np.argwhere(absent))
            mat[absent] = 0.0
    return TopicSystemMatrix(np.ascontiguousarray(mat), tuple(qids), tuple(systems), measure,
                             column, missing, dropped, filled)


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True
