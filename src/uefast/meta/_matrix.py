"""Turn the inputs of the meta-evaluation functions into a topics x systems matrix.

Every public function of :mod:`uefast.meta` accepts either

* a 2-D numpy array (or anything ``np.asarray`` turns into one), shape ``(n_topics, n_systems)``,
  with the per-topic values of ONE metric; or
* the long table of :func:`uefast.evaluate` (``system, qid, measure, value, ...``), together with
  ``measure=`` (needed when the table holds several measures) and ``column=`` (``value``,
  ``ue_v1``, ``ue_v2``, ``iub`` or ``reb``).

Topics that some system lacks are dropped (intersection), so that every column is paired.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError

__all__ = ["TopicSystemMatrix", "as_matrix", "pair_indices"]


@dataclass(frozen=True)
class TopicSystemMatrix:
    """A topics x systems matrix with its labels."""

    values: np.ndarray  # float64, shape (n_topics, n_systems)
    systems: list[str]
    topics: list[Any]


def _is_table(data: Any) -> bool:
    return isinstance(data, pa.Table) or hasattr(data, "__arrow_c_stream__")


def as_matrix(
    data: Any,
    *,
    measure: str | None = None,
    column: str = "value",
    systems: Sequence[str] | None = None,
) -> TopicSystemMatrix:
    """Return the topics x systems matrix of ``data`` (see the module docstring)."""
    if _is_table(data):
        return _from_long_table(data, measure=measure, column=column, systems=systems)
    if isinstance(data, TopicSystemMatrix):
        return data
    x = np.asarray(data, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"`matrix` must be 2-D (topics x systems); got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        bad = np.argwhere(~np.isfinite(x))[0]
        raise InputError(f"`matrix` has a non-finite value at topic {bad[0]}, system {bad[1]}")
    if systems is None:
        names = [f"s{j}" for j in range(x.shape[1])]
    else:
        names = [str(s) for s in systems]
        if len(names) != x.shape[1]:
            raise InputError(
                f"`systems` has {len(names)} names but the matrix has {x.shape[1]} columns"
            )
    return TopicSystemMatrix(x, names, list(range(x.shape[0])))


def _from_long_table(
    data: Any, *, measure: str | None, column: str, systems: Sequence[str] | None
) -> TopicSystemMatrix:
    table = data if isinstance(data, pa.Table) else pa.table(data)
    for col in ("system", "qid", column):
        if col not in table.column_names:
            raise InputError(
                f"the long table needs a `{col}` column; it has {table.column_names}"
            )
    if "measure" in table.column_names:
        measures = pc.unique(table["measure"]).to_pylist()
        if measure is None:
            if len(measures) != 1:
                raise InputError(
                    f"the table holds several measures {measures}; pass `measure=`"
                )
            measure = measures[0]
        elif measure not in measures:
            raise InputError(f"`measure` {measure!r} is not in the table; it has {measures}")
        table = table.filter(pc.equal(table["measure"], measure))
    # system names as strings (as uefast.stats names them: an integer system 10 is "10")
    sys_col = [str(v) for v in table["system"].to_pylist()]
    qid_col = table["qid"].to_pylist()
    val = table[column].to_numpy(zero_copy_only=False).astype(np.float64)
    order = list(dict.fromkeys(sys_col)) if systems is None else [str(s) for s in systems]
    missing = set(order) - set(sys_col)
    if missing:
        raise InputError(f"`systems` names {sorted(missing)} are not in the table")
    sys_index = {s: j for j, s in enumerate(order)}
    per_system: list[dict[Any, float]] = [dict() for _ in order]
    for s, q, v in zip(sys_col, qid_col, val):
        j = sys_index.get(s)
        if j is not None:
            if q in per_system[j]:
                raise InputError(f"duplicate rows for system {s!r}, qid {q!r}"
                                 + (f" (measure {measure!r})" if measure is not None else ""))
            per_system[j][q] = v
    common = [q for q in dict.fromkeys(qid_col) if all(q in d for d in per_system)]
    if not common:
        raise InputError("no query is evaluated for every system")
    x = np.array([[d[q] for d in per_system] for q in common], dtype=np.float64)
    if np.isnan(x).any():
        raise InputError(f"column `{column}` has null/NaN values for measure {measure!r}")
    if np.isinf(x).any():  # as the matrix path: every value finite
        k, j = np.argwhere(np.isinf(x))[0]
        raise InputError(f"column `{column}` is {float(x[k, j])!r} for system {order[j]!r}, qid "
                         f"{common[k]!r}; every value must be finite")
    return TopicSystemMatrix(x, order, common)


def pair_indices(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of the m(m-1)/2 unordered system pairs, in row-major order."""
    i, j = np.triu_indices(m, k=1)
    return i.astype(np.int64), j.astype(np.int64)
