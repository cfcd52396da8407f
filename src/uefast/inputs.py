"""Turning user input into Arrow tables and checked NumPy columns (no silent drops).

Accepted sources: ``pyarrow.Table`` / ``RecordBatch`` / ``RecordBatchReader``, a Polars
``DataFrame`` / ``LazyFrame``, a pandas ``DataFrame``, a path to a Parquet file, or a mapping of
column name to array. Every check raises :class:`~uefast.errors.InputError` naming the column, the
first offending row and its value.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np
import pyarrow as pa

from uefast.errors import InputError, RowError
from uefast.kernels.ordering import DOC_BYTES, DOC_INT, DOC_NONE

__all__ = ["to_arrow", "column", "label_array", "score_array", "key_kind", "DocIds", "docids"]


def to_arrow(obj: Any, what: str) -> pa.Table:
    """Convert a supported table-like ``obj`` to a ``pyarrow.Table`` (zero-copy where possible)."""
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if isinstance(obj, pa.RecordBatchReader):
        return obj.read_all()
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if not os.path.exists(path):
            raise InputError(f"{what}: file not found: {path!r}")
        try:
            return read_parquet(path)
        except pa.ArrowInvalid as exc:
            raise InputError(f"{what}: {path!r} is not a readable Parquet file ({exc}); "
                             "for TREC files use uefast.io.read_run / read_qrels") from None
    mod = type(obj).__module__
    if mod.startswith("polars"):
        if hasattr(obj, "collect"):  # LazyFrame
            obj = obj.collect()
        return obj.to_arrow()
    if mod.startswith("pandas"):
        try:
            return pa.Table.from_pandas(obj, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # e.g. an object column of mixed types
            raise InputError(f"{what}: cannot convert the pandas DataFrame to Arrow: {exc}") from None
    if isinstance(obj, dict):
        try:
            return pa.table(obj)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise InputError(f"{what}: cannot build a table from the mapping: {exc}") from None
    raise InputError(
        f"{what}: unsupported type {type(obj).__name__}; pass a pyarrow Table/RecordBatchReader, "
        "a polars or pandas DataFrame, a Parquet path, or a dict of columns")


def column(table: pa.Table, name: str, what: str) -> pa.Array:
    """The single-chunk column ``name``; a clear error if it is missing or has nulls."""
    if name not in table.column_names:
        raise InputError(f"{what}: missing column {name!r}; columns are {table.column_names}")
    n_named = len(table.schema.get_all_field_indices(name))
    if n_named > 1:
        raise InputError(f"{what}: {n_named} columns are named {name!r}; rename all but one")
    col = table.column(name)
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if arr.null_count:
        first = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise RowError(what, f"column {name!r} has {arr.null_count} null value(s); first at row ",
                       first)
    if _is_string_view(arr.type):  # Polars' newest Arrow export, DuckDB: one copy to offsets
        arr = arr.cast(pa.large_string())
    return arr


def _is_string_view(t: pa.DataType) -> bool:
    return getattr(pa.types, "is_string_view", lambda _t: False)(t)


def key_kind(arr: pa.Array, name: str, what: str) -> str:
    """'int' or 'str' for a qid/docid column (of a dictionary column: of its values); an error
    for other types, and for uint64 values beyond int64 (uefast's integer key type)."""
    t = arr.type
    values = arr
    if pa.types.is_dictionary(t):
        t = t.value_type
        values = arr.dictionary
    if pa.types.is_integer(t):
        r = _first_beyond_int64(numpy_view(values)) if pa.types.is_uint64(t) else -1
        if r >= 0:
            advice = (", beyond int64 (uefast's integer key type): cast the column to string (for "
                      "docids the tie order stays the same: trec_eval compares them as text)")
            head = f"column {name!r} has {values[r].as_py()}"
            if values is arr:
                raise RowError(what, head + " at row ", r, advice)
            raise InputError(f"{what}: {head}{advice}")  # a dictionary value: no row
        return "int"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    raise InputError(f"{what}: column {name!r} must hold integers or strings, got {arr.type}")


@nb.njit(cache=True)
def _first_nonintegral(x):
    for i in range(x.shape[0]):
        v = x[i]
        if not (v == np.floor(v)) or np.isinf(v):
            return i
    return -1


def first_nan(x: np.ndarray) -> int:
    """Index of the first NaN in the float array ``x``, or -1."""
    return int(_first_nan(x))


@nb.njit(cache=True)
def _first_nan(x):
    for i in range(x.shape[0]):
        if x[i] != x[i]:
            return i
    return -1


def read_parquet(path) -> pa.Table:
    """``pyarrow.parquet.read_table(path)``, through ``ParquetFile`` for a single file:
    ``read_table`` goes through ``pyarrow.dataset``, whose import makes pyarrow import pandas
    where it is installed (~0.4 s of a command). Directories: :func:`parquet_dataset`."""
    import pyarrow.parquet as pq

    if os.path.isfile(path):
        with pq.ParquetFile(path) as f:
            return f.read()
    return parquet_dataset(path).read()


def parquet_dataset(path):
    """A Parquet directory as ``pq.ParquetDataset`` (what ``pq.read_table`` reads): hive partition
    columns (string values dictionary-encoded), files in its discovery order, ``.``/``_`` names
    skipped. The in-memory read (:func:`read_parquet`) and the streamed one
    (:mod:`uefast.streaming`) both open directories with it: the same rows in the same order."""
    import pyarrow.parquet as pq

    return pq.ParquetDataset(path)


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (``a`` itself if already read-only): every array handed to the
    kernels is read-only, so that each kernel is compiled (and cached) for one signature, not one
    per combination of writable and read-only arguments."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def kernel_array(a: np.ndarray, dtype=None) -> np.ndarray:
    """``a`` (cast to ``dtype`` if given) as a read-only, C-contiguous array (no copy when it
    already is one): every array handed to the kernels is, so that each kernel is compiled (and
    cached on disk) for one signature per label dtype instead of one per combination of writable /
    read-only / int32 / int64 inputs (measured: 11 compiled variants of the ranking pass after the
    test suite, ~20-40 s each)."""
    return readonly(np.ascontiguousarray(a, dtype=dtype))


def string_array(offsets: np.ndarray, data) -> pa.Array:
    """An Arrow ``string`` array from int64 ``offsets`` (n + 1) into the bytes ``data`` (32-bit
    offsets where they fit, else built as ``large_string`` and cast). No UTF-8 validation: call
    ``validate(full=True)`` where the bytes are not known to be valid."""
    n = len(offsets) - 1
    if offsets[-1] < 2**31:
        return pa.StringArray.from_buffers(n, pa.py_buffer(np.asarray(offsets, np.int32)),
                                           pa.py_buffer(data))
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(np.asarray(offsets, np.int64)),
                                            pa.py_buffer(data)).cast(pa.string())


def text_array(values) -> pa.Array:
    """An Arrow ``string`` array of a few Python strings (system or measure names), built from
    their UTF-8 bytes (``pa.array(list)`` imports pandas where it is installed)."""
    enc = [str(v).encode() for v in values]
    offsets = np.zeros(len(enc) + 1, np.int64)
    np.cumsum([len(b) for b in enc], out=offsets[1:])
    return string_array(offsets, b"".join(enc))


def numeric_array(a) -> pa.Array:
    """An Arrow array of a 1-D NumPy array of numbers or booleans (no nulls), zero-copy where the
    layout allows (booleans are bit-packed).

    ``pa.array(ndarray)`` would give the same array but makes pyarrow import pandas to ask
    whether the input is a pandas categorical: ~0.3-0.45 s of every command that builds a table
    in a fresh process."""
    a = np.ascontiguousarray(a)
    if a.ndim != 1:
        raise ValueError(f"numeric_array needs a 1-D array, got shape {a.shape}")
    if a.dtype == np.bool_:
        bits = np.packbits(a, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(bits)])
    return pa.Array.from_buffers(pa.from_numpy_dtype(a.dtype), len(a), [None, pa.py_buffer(a)])


_FLOAT_NAMES = {"float": np.float32, "double": np.float64}


def numpy_view(arr, null_value=None) -> np.ndarray:
    """``arr.to_numpy()`` of an integer or float32/float64 Arrow array (or ChunkedArray; several
    chunks are combined first) without nulls: a read-only zero-copy view of its data buffer.
    With ``null_value``, nulls are allowed and come out as that value (a copy). A boolean array
    without nulls: its bits unpacked (a copy). Any other array: its own ``to_numpy()``,
    unchanged.

    pyarrow's ``to_numpy`` imports pandas where it is installed (its conversion code initialises
    pandas' static data), ~0.4 s of every command in a fresh process."""
    orig = arr
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
    t = arr.type
    nulls = arr.null_count
    if (pa.types.is_integer(t) or str(t) in _FLOAT_NAMES) and (nulls == 0 or null_value is not None):
        dt = np.dtype(_FLOAT_NAMES.get(str(t), str(t)))
        n = len(arr)
        validity, buf = arr.buffers()[:2]
        if n == 0 or buf is None:
            return readonly(np.empty(0, dt))
        # read-only, as to_numpy's view is: the buffer may be a writable NumPy array of the caller
        v = readonly(np.frombuffer(buf, dtype=dt, count=n, offset=arr.offset * dt.itemsize))
        if nulls == 0:
            return v
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")
        return np.where(valid[arr.offset:arr.offset + n].astype(bool), v, dt.type(null_value))
    if pa.types.is_boolean(t) and nulls == 0:
        n = len(arr)
        if n == 0:
            return np.empty(0, bool)
        bits = np.unpackbits(np.frombuffer(arr.buffers()[1], np.uint8), bitorder="little",
                             count=arr.offset + n)
        return bits[arr.offset:].astype(bool)
    return orig.to_numpy()


def label_array(arr: pa.Array, name: str, what: str, negative: str) -> np.ndarray:
    """Integer labels as a read-only NumPy array of the kernels' label type: int8 when every
    label fits (zero-copy for an int8 column), else int64 -- so that the kernels are compiled for
    two label types, not one per integer width.

    Floating labels must be integral (e.g. 2.0). Negative labels: ``negative="clamp"`` treats
    them as 0 (non-relevant, as trec_eval does); ``"error"`` rejects them.
    """
    x = _integer_labels(arr, name, what, negative)
    if x.dtype != np.int8:
        fits = x.size == 0 or (int(x.min()) >= -128 and int(x.max()) <= 127)
        x = x.astype(np.int8 if fits else np.int64)
    return readonly(x)


_INT64_MAX = 2 ** 63 - 1


def _first_beyond_int64(x: np.ndarray) -> int:
    """The first index of a uint64 array whose value int64 cannot hold, or -1."""
    if x.dtype != np.uint64 or x.size == 0:
        return -1
    big = x > np.uint64(_INT64_MAX)
    return int(np.argmax(big)) if big.any() else -1


def _integer_labels(arr: pa.Array, name: str, what: str, negative: str) -> np.ndarray:
    t = arr.type
    if pa.types.is_boolean(t):
        return numpy_view(arr.cast(pa.int8()))
    if pa.types.is_integer(t):
        x = numpy_view(arr)
        bad = _first_beyond_int64(x)
        if bad >= 0:
            raise RowError(what, f"column {name!r} has label {int(x[bad])} at row ", bad,
                           ", beyond the int64 range labels are computed in")
    elif pa.types.is_floating(t):
        xf = numpy_view(arr).astype(np.float64, copy=False)
        bad = _first_nonintegral(xf)
        if bad >= 0:
            raise RowError(what, f"column {name!r} must hold integer labels; row ", bad,
                           f" has {float(xf[bad])!r}")
        if xf.size and not (-2.0 ** 63 <= xf.min() and xf.max() < 2.0 ** 63):
            bad = int(np.argmax((xf < -2.0 ** 63) | (xf >= 2.0 ** 63)))
            raise RowError(what, f"column {name!r} has label {float(xf[bad])!r} at row ", bad,
                           ", beyond the int64 range labels are computed in")
        x = xf.astype(np.int64)
    else:
        raise InputError(f"{what}: column {name!r} must hold integer labels, got {t}")
    if negative == "error" and x.size and x.min() < 0:
        bad = int(np.argmax(x < 0))
        raise RowError(what, f"column {name!r} has a negative label {x[bad]} at row ", bad,
                       " (pass negative_labels='clamp' to treat negatives as 0)")
    return x


def float64_exact(arr, name: str, what: str):
    """``arr`` (an Arrow array or chunked array of numbers) as float64; an integer beyond
    +-2**53, which a double cannot hold exactly (two distinct scores could then tie), raises
    :class:`~uefast.errors.RowError` naming the column, the row and the value (Arrow's own
    message named neither)."""
    t = arr.type
    if pa.types.is_float64(t):
        return arr
    try:
        return arr.cast(pa.float64())
    except pa.ArrowInvalid:
        if not pa.types.is_integer(t):
            raise
        import pyarrow.compute as pc

        big = pc.greater(pc.abs_checked(arr.cast(pa.decimal128(20, 0))), pa.scalar(2 ** 53, pa.decimal128(20, 0)))
        row = int(np.flatnonzero(np.asarray(big.to_numpy(zero_copy_only=False), dtype=bool))[0])
        value = (arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr)[row].as_py()
        raise RowError(what, f"column {name!r} holds the integer {value} at row ", row,
                       ", beyond 2**53: a float64 cannot hold it exactly (distinct values could "
                       "tie); rescale the column or give it as floating point") from None


def score_array(arr: pa.Array, name: str, what: str, check_nan: bool = True) -> np.ndarray:
    """Scores as float64 (zero-copy for float64 columns). NaN is an error (``check_nan=False``
    leaves the check to the caller, e.g. the ranking kernel: :func:`score_nan_error`); +-inf
    are ordered."""
    t = arr.type
    if not (pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_decimal(t)):
        raise InputError(f"{what}: score column {name!r} must be numeric, got {t}")
    x = numpy_view(float64_exact(arr, name, what))
    if check_nan:
        bad = _first_nan(x)
        if bad >= 0:
            raise score_nan_error(name, what)(bad)
    return x


def score_nan_error(name: str, what: str):
    """The error for a NaN score at a given row of column ``name``, as a callable of the row."""
    return lambda row: RowError(what, f"score column {name!r} has NaN at row ", row)


@dataclass(frozen=True)
class DocIds:
    """Docids in the form the kernels compare: int64 values or Arrow string offsets + bytes."""

    mode: int
    ints: np.ndarray
    offsets: np.ndarray
    data: np.ndarray


_EMPTY_I = np.zeros(1, np.int64)
_EMPTY_B = np.zeros(1, np.uint8)
NO_DOCIDS = DocIds(DOC_NONE, _EMPTY_I, _EMPTY_I, _EMPTY_B)


def string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Arrow (large_)string array -> (offsets, data) NumPy views (offsets rebased to the slice)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    _, obuf, dbuf = arr.buffers()
    odt = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(obuf, dtype=odt)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(dbuf, dtype=np.uint8) if dbuf is not None else _EMPTY_B
    return offsets, data


def docids(arr: pa.Array | None, name: str, what: str) -> DocIds:
    """Kernel view of a docid column (``None`` -> no docids: ties fall back to input order)."""
    if arr is None:
        return NO_DOCIDS
    if key_kind(arr, name, what) == "int":
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        return DocIds(DOC_INT, numpy_view(arr.cast(pa.int64())), _EMPTY_I, _EMPTY_B)
    offsets, data = string_buffers(arr)
    return DocIds(DOC_BYTES, _EMPTY_I, offsets, data)


def check_same_kind(a: pa.Array, b: pa.Array, name: str, what_a: str, what_b: str) -> None:
    """Join keys must be both integers or both strings (no silent casting between them)."""
    ka, kb = key_kind(a, name, what_a), key_kind(b, name, what_b)
    if ka != kb:
        raise InputError(f"mismatched dtypes: {what_a} column {name!r} is {a.type} but {what_b} "
                         f"column {name!r} is {b.type}; cast one of them")


def explicit_score_columns(score_columns, column_names, system: str | None = None) -> list[str]:
    """``score_columns=`` as given (a name or a list): non-empty, no repeats, all present; with
    a ``system`` column in ``column_names`` (long format: each row one system's score) exactly
    one."""
    cols = [score_columns] if isinstance(score_columns, str) else list(score_columns)
    if system is not None and system in column_names and len(cols) != 1:
        raise InputError(f"`score_columns`={cols!r}: with a {system!r} column each row is one "
                         "system's score, so name exactly one score column (or drop the system "
                         "column to evaluate several score columns)")
    if not cols:
        raise InputError("`score_columns` is empty: name at least one score column (or pass "
                         "None to take every floating-point column)")
    if len(set(cols)) < len(cols):
        raise InputError(f"`score_columns` names a column twice: {cols}")
    for c in cols:
        if c not in column_names:
            raise InputError(f"run: missing score column {c!r}; columns are {list(column_names)}")
    return cols
