"""Reading and checking the input table of :func:`uefast.text.evaluate`
(``data_schemas/text_input.md``).

Columns: ``doc_id``, ``system``, ``candidate``, ``reference`` (a string, or a list of strings for
several references), ``source``. Input: a ``pyarrow.Table``, anything with ``to_arrow()`` or the
Arrow C stream interface (Polars, pandas via ``pa.table``), or a path to a Parquet
(``.parquet``/``.pq``), Arrow IPC (``.arrow``/``.feather``/``.ipc``) or JSON Lines
(``.jsonl``/``.ndjson``/``.json``) file; in JSON Lines a ``reference`` may be a text on some
lines and a list on others (a text is then a list of one). Every problem is an :class:`~uefast.errors.InputError`
naming the column and the row (0-based) or the file line (1-based).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError, RowError

__all__ = ["TextRows", "read_text_table", "check_text_table", "COLUMNS", "EMPTY_POLICIES"]

COLUMNS = ("doc_id", "system", "candidate", "reference", "source")
EMPTY_POLICIES = ("error", "score")
WHAT = "text table"


@dataclass(frozen=True)
class TextRows:
    """The checked columns: Python lists, ``references`` a list of lists of strings."""

    doc_id: pa.Array
    system: pa.Array
    candidates: list
    references: list
    sources: list
    multi_reference: bool

    def __len__(self) -> int:
        return len(self.candidates)


def _read_jsonl(path: Path) -> pa.Table:
    rows = []
    with open(path, "rb") as fh:
        for line_no, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path}: line {line_no}: not valid UTF-8 ({exc.reason} at byte "
                                 f"{exc.start})") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: line {line_no}: not a JSON object ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}: line {line_no}: expected a JSON object, got "
                                 f"{type(obj).__name__}")
            rows.append(obj)
    names = list(dict.fromkeys(k for r in rows for k in r))
    if any(isinstance(r.get("reference"), list) for r in rows):  # a single text among lists
        for r in rows:
            if isinstance(r.get("reference"), str):
                r["reference"] = [r["reference"]]
    try:
        return pa.table({k: [r.get(k) for r in rows] for k in names})
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"{path}: a column mixes value types ({exc})") from None


def read_text_table(data) -> pa.Table:
    """The input as a ``pyarrow.Table`` (see the module docstring for what is accepted)."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        if not path.exists():
            raise InputError(f"input file not found: {str(path)!r}")
        suffix = path.suffix.lower()
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq
            return pq.read_table(path)
        if suffix in (".arrow", ".feather", ".ipc"):
            import pyarrow.feather as feather
            return feather.read_table(path)
        if suffix in (".jsonl", ".ndjson", ".json"):
            return _read_jsonl(path)
        raise InputError(f"unknown input format {suffix!r} of {str(path)!r}: expected .parquet, "
                         ".arrow/.feather or .jsonl")
    if isinstance(data, pa.Table):
        return data
    to_arrow = getattr(data, "to_arrow", None)
    if callable(to_arrow):
        return to_arrow()
    if hasattr(data, "__arrow_c_stream__") or type(data).__module__.startswith("pandas"):
        return pa.table(data)
    raise InputError(f"expected a pyarrow.Table, a DataFrame or a file path; got "
                     f"{type(data).__name__}")


def _first_null(arr) -> int:
    return int(pc.index(pc.is_null(arr), True).as_py())


def _strings(table: pa.Table, name: str) -> list:
    """A text column as Python strings; binary columns are decoded as strict UTF-8."""
    col = table[name]
    if col.null_count:
        raise RowError(WHAT, f"null `{name}` at row ", _first_null(col))
    t = col.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        out = []
        for i, b in enumerate(col.to_pylist()):
            try:
                out.append(b.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise RowError(WHAT, f"`{name}` is not valid UTF-8 at row ", i,
                               f" ({exc.reason} at byte {exc.start})") from None
        return out
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise InputError(f"{WHAT}: column `{name}` must hold text (string); it is {t}")
    return col.to_pylist()


def _ids(table: pa.Table, name: str) -> pa.Array:
    col = table[name]
    if col.null_count:
        raise RowError(WHAT, f"null `{name}` at row ", _first_null(col))
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_integer(arr.type):
        return arr.cast(pa.int64())
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr.cast(pa.string())
    raise InputError(f"{WHAT}: column `{name}` must be text or integers; it is {arr.type}")


def _check_empty(values: list, name: str, empty: str, row_of=None) -> None:
    if empty == "score":
        return
    for i, v in enumerate(values):
        if not v.strip():
            row = i if row_of is None else row_of[i]
            raise RowError(WHAT, f"empty `{name}` at row ", row,
                           " (pass empty='score' to score empty texts as rouge-score does: 0)")


def _check_unique(system: pa.Array, doc_id: pa.Array) -> None:
    """No (system, doc_id) twice: the first repeat is named with both rows."""
    import numpy as np

    codes = []
    for arr in (system, doc_id):
        enc = arr.dictionary_encode()
        codes.append(enc.indices.to_numpy(zero_copy_only=False).astype(np.int64))
    key = codes[0] * (int(codes[1].max()) + 1 if len(codes[1]) else 1) + codes[1]
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    if len(first) == len(key):
        return
    seen: dict = {}
    for i, k in enumerate(key.tolist()):
        j = seen.setdefault(k, i)
        if j != i:
            pair = (system[i].as_py(), doc_id[i].as_py())
            raise RowError(WHAT, f"duplicate (system, doc_id) {pair!r} at rows ", j, " and ", i)


def check_text_table(table: pa.Table, empty: str = "error") -> TextRows:
    """Check the columns and rows (see ``data_schemas/text_input.md``) and return them."""
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise InputError(f"{WHAT}: missing column(s) {missing}; columns are {table.column_names} "
                         f"(need {list(COLUMNS)})")
    doc_id = _ids(table, "doc_id")
    system = _ids(table, "system")
    cands = _strings(table, "candidate")
    sources = _strings(table, "source")
    rt = table["reference"].type
    if pa.types.is_list(rt) or pa.types.is_large_list(rt):
        col = table["reference"]
        if col.null_count:
            raise RowError(WHAT, "null `reference` list at row ", _first_null(col))
        refs = col.to_pylist()
        flat_rows = []
        for i, lst in enumerate(refs):
            if len(lst) == 0:
                raise RowError(WHAT, "empty `reference` list at row ", i, " (at least one "
                               "reference is needed)")
            for k, r in enumerate(lst):
                if r is None:
                    raise RowError(WHAT, f"null reference #{k} in `reference` at row ", i)
                if not isinstance(r, str):
                    raise RowError(WHAT, f"reference #{k} at row ", i, " is not text")
            flat_rows.extend([i] * len(lst))
        multi = True
        flat = [r for lst in refs for r in lst]
        _check_empty(flat, "reference", empty, flat_rows)
    else:
        refs = [[r] for r in _strings(table, "reference")]
        multi = False
        _check_empty([r[0] for r in refs], "reference", empty)
    _check_empty(cands, "candidate", empty)
    _check_empty(sources, "source", empty)
    _check_unique(system, doc_id)
    return TextRows(doc_id, system, cands, refs, sources, multi)
