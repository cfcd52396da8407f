"""Reading and checking the input table of :func:`uefast.text.evaluate`
(``data_schemas/text_input.md``).

Columns: ``doc_id``, ``system``, ``candidate``, ``reference`` (a string, or a list of strings for
several references), ``source``. Input: a ``pyarrow.Table``, anything with ``to_arrow()`` or the
Arrow C stream interface (Polars, pandas via ``pa.table``), or a path to a Parquet
(``.parquet``/``.pq``), Arrow IPC (``.arrow``/``.feather``/``.ipc``) or JSON Lines
(``.jsonl``/``.ndjson``/``.json``) file; in JSON Lines a ``reference`` may be a text on some
lines and a list on others (a text is then a list of one). Every problem is an
:class:`~uefast.errors.InputError`
naming the column and the row (0-based) or the file line (1-based).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError, RowError

__all__ = ["TextRows", "read_text_table", "check_text_table", "COLUMNS", "EMPTY_POLICIES"]

COLUMNS = ("doc_id", "system", "candidate", "reference", "source")
EMPTY_POLICIES = ("error", "score")
WHAT = "text table"


@dataclass(frozen=True)
class TextRows:
    """The checked columns. Each text column is kept dictionary-encoded (its distinct texts once,
    ``large_string``, and an int64 code per element): sources and references are shared by many
    rows, so checks and tokenising run on distinct texts only. Candidates seldom repeat and are
    kept one per row (``cand_codes`` = 0..n-1). ``ref_texts`` holds every
    reference, those of row i at ``ref_offsets[i]:ref_offsets[i+1]``."""

    doc_id: pa.Array
    system: pa.Array
    cand_dict: pa.Array
    cand_codes: np.ndarray
    ref_dict: pa.Array
    ref_codes: np.ndarray
    ref_offsets: np.ndarray
    src_dict: pa.Array
    src_codes: np.ndarray
    multi_reference: bool

    def __len__(self) -> int:
        return len(self.cand_codes)

    @property
    def candidates(self) -> pa.Array:
        """The candidate of each row."""
        return self.cand_dict.take(pa.array(self.cand_codes))

    @property
    def ref_texts(self) -> pa.Array:
        """Every reference, row after row."""
        return self.ref_dict.take(pa.array(self.ref_codes))

    @property
    def sources(self) -> pa.Array:
        """The source of each row."""
        return self.src_dict.take(pa.array(self.src_codes))

    @property
    def references(self) -> list[list[str]]:
        """The references of each row as Python lists (for callers that need them)."""
        flat = self.ref_texts.to_pylist()
        o = self.ref_offsets
        return [flat[o[i]:o[i + 1]] for i in range(len(o) - 1)]


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


def _distinct(col: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(distinct values, int64 code per element) by Arrow's dictionary encoding. Rows usually
    come grouped by document, so a source (or reference) repeats on consecutive rows: when runs
    of equal consecutive values are at most half the rows, only the first value of each run is
    hashed (comparing neighbours is a length check and a memcmp, hashing a 2 kB source is not)."""
    n = len(col)
    if n > 1:
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = pc.not_equal(col.slice(1), col.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        heads = np.flatnonzero(new)
        if len(heads) * 2 <= n:
            first = col.take(pa.array(heads))
            if isinstance(first, pa.ChunkedArray):
                first = first.combine_chunks()
            enc = first.dictionary_encode()
            head_codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            return enc.dictionary, head_codes[np.cumsum(new) - 1]
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    enc = col.dictionary_encode()
    return enc.dictionary, enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _text(col, name: str, row_of=None, distinct: bool = True) -> tuple[pa.Array, np.ndarray]:
    """A text column as (distinct texts as ``large_string``, int64 code per element); ``binary``
    is checked as strict UTF-8 (an error names the row: ``row_of`` maps element -> row for
    flattened lists). Encoding first means the cast and the UTF-8 check touch each distinct text
    once (a source repeated on many rows is one entry). A chunked column is not combined
    (that would copy every repeated source). ``distinct=False`` (candidates, which seldom
    repeat: hashing them costs more than it saves) keeps every element, code i for element i."""
    if isinstance(col, pa.ChunkedArray) and col.num_chunks == 1:
        col = col.chunk(0)
    if col.null_count:
        i = _first_null(col)
        raise RowError(WHAT, f"null `{name}` at row ", i if row_of is None else int(row_of[i]))
    t = col.type
    is_bin = pa.types.is_binary(t) or pa.types.is_large_binary(t)
    if not is_bin and not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise InputError(f"{WHAT}: column `{name}` must hold text (string); it is {t}")
    if distinct:
        values, codes = _distinct(col)
    else:
        values = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        codes = np.arange(len(values), dtype=np.int64)
    if is_bin:
        try:
            values = values.cast(pa.large_string())
        except pa.ArrowInvalid:
            for i, b in enumerate(col.to_pylist()):
                try:
                    b.decode("utf-8")
                except UnicodeDecodeError as exc:
                    row = i if row_of is None else int(row_of[i])
                    raise RowError(WHAT, f"`{name}` is not valid UTF-8 at row ", row,
                                   f" ({exc.reason} at byte {exc.start})") from None
            raise
    return values.cast(pa.large_string()), codes


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


def _starts_alnum(values: pa.Array) -> np.ndarray:
    """bool per text of a ``large_string`` array: its first byte is ``[A-Za-z0-9]``."""
    bufs = values.buffers()
    n = len(values)
    if bufs[2] is None or bufs[2].size == 0:
        return np.zeros(n, dtype=bool)
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[values.offset:values.offset + n + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8)
    start = offsets[:-1]
    nonempty = offsets[1:] > start
    first = data[np.minimum(start, len(data) - 1)]
    low = first | 0x20  # ASCII letters lower-cased
    return nonempty & (((low >= 0x61) & (low <= 0x7A)) | ((first >= 0x30) & (first <= 0x39)))


def _check_empty(values: pa.Array, codes: np.ndarray, name: str, empty: str,
                 row_of=None) -> None:
    """A blank text (empty or only whitespace) is an error unless ``empty == "score"``; the
    distinct ``values`` are checked and the first element using a blank one is named."""
    if empty == "score" or len(values) == 0:
        return
    # a text whose first byte is an ASCII letter or digit is not blank; only the others (few)
    # are trimmed by Arrow (trimming copies every text)
    unsure = ~_starts_alnum(values)
    if not unsure.any():
        return
    picked = np.flatnonzero(unsure)
    blank_some = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(
        values.take(pa.array(picked)))), 0).to_numpy(zero_copy_only=False)
    if blank_some.any():
        blank = np.zeros(len(values), dtype=bool)
        blank[picked] = blank_some
        bad = blank[codes]
        i = int(np.argmax(bad))
        row = i if row_of is None else int(row_of[i])
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
    if len(key) == 0:
        return
    top = int(key.max()) + 1
    if top <= 8 * len(key):  # a count per possible key (no sort)
        if int(np.bincount(key, minlength=top).max()) <= 1:
            return
    elif len(np.unique(key)) == len(key):
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
    cands, cand_codes = _text(table["candidate"], "candidate", distinct=False)
    sources, src_codes = _text(table["source"], "source")
    col = table["reference"]
    if isinstance(col, pa.ChunkedArray):
        col = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        if col.null_count:
            raise RowError(WHAT, "null `reference` list at row ", _first_null(col))
        lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False).astype(np.int64)
        if (lengths == 0).any():
            raise RowError(WHAT, "empty `reference` list at row ", int(np.argmax(lengths == 0)),
                           " (at least one reference is needed)")
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        row_of = np.repeat(np.arange(len(lengths)), lengths)
        flat = pc.list_flatten(col)
        if flat.null_count:
            i = _first_null(flat)
            raise RowError(WHAT, f"null reference #{i - offsets[row_of[i]]} in `reference` at "
                           "row ", int(row_of[i]))
        refs, ref_codes = _text(flat, "reference", row_of)
        multi = True
    else:
        refs, ref_codes = _text(col, "reference")
        offsets = np.arange(len(ref_codes) + 1, dtype=np.int64)
        row_of = None
        multi = False
    _check_empty(refs, ref_codes, "reference", empty, row_of)
    _check_empty(cands, cand_codes, "candidate", empty)
    _check_empty(sources, src_codes, "source", empty)
    _check_unique(system, doc_id)
    return TextRows(doc_id, system, cands, cand_codes, refs, ref_codes, offsets, sources,
                    src_codes, multi)
