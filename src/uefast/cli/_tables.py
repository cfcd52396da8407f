"""CSV/TSV tables for the commands: the one place that decides how their columns are typed."""
from __future__ import annotations

#: Key columns read as text whatever they look like: type inference made ``001`` the integer 1
#: and ``1.10`` the float 1.1, merging ids that TREC files and Parquet tables keep apart.
TEXT_COLUMNS = ("qid", "docid", "system", "runid")


def read_delimited(path, delimiter: str, *, empty_is_null: bool = False, labels: bool = False):
    """A CSV/TSV file (optionally gzipped) as a ``pyarrow.Table``, its :data:`TEXT_COLUMNS` as
    strings (Arrow infers the other types). ``empty_is_null``: only an empty cell is missing
    (so ``nan`` stays NaN); otherwise Arrow's default null spellings apply. With ``labels`` (the
    table's ``label`` column is relevance), that column is read as the TREC readers read labels
    (:func:`uefast.io._scan.parse_integral`): integers or integral decimals, nothing that C's
    ``atol`` reads differently (Arrow's inference took ``0x10`` as 16 and ``1e1`` as 10); an
    error names the line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    text = TEXT_COLUMNS + (("label",) if labels else ())
    convert = pacsv.ConvertOptions(column_types={c: pa.string() for c in text},
                                   **({"null_values": [""]} if empty_is_null else {}))
    t = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                       convert_options=convert)
    if labels and "label" in t.column_names:
        i = t.schema.get_field_index("label")
        t = t.set_column(i, "label", _labels(t["label"].combine_chunks(), path))
    return t


def _labels(arr, path):
    """The label column's text (spaces around a value trimmed, as Arrow's number inference did)
    as int64. The file is read again only to word an error: its data lines are the non-blank
    lines after the header (Arrow skips blank lines; a quoted field spanning lines would shift
    the count)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from uefast.errors import InputError
    from uefast.inputs import numeric_array
    from uefast.io._scan import parse_integral

    arr = pc.utf8_trim_whitespace(arr.cast(pa.string()))
    n = len(arr)
    try:
        values = parse_integral(arr, path=path, what="label", buf=np.zeros(0, np.uint8),
                                lineno=np.zeros(n, np.int64), line_start=np.zeros(n, np.int64))
    except InputError:
        buf, starts, data = _data_rows(path, n)
        values = parse_integral(arr, path=path, what="label", buf=buf, lineno=data + 1,
                                line_start=starts[data])
    return numeric_array(values)


def _data_rows(path, n: int):
    """``(buf, line starts, line indexes (0-based) of the n data rows)`` of a CSV/TSV file: its
    data lines are the non-blank lines after the header (Arrow skips blank lines; a quoted field
    spanning lines would shift the count)."""
    import numpy as np

    from uefast.io._scan import read_bytes

    buf = read_bytes(path)  # decompressed as the TREC readers decompress
    starts = np.concatenate([[0], np.flatnonzero(buf == 10) + 1])
    starts = starts[starts < buf.size]  # (no line after a final newline)
    ends = np.append(starts[1:] - 1, buf.size)
    content = np.flatnonzero((ends - starts > 1) | ((ends - starts == 1) & (buf[starts] != 13)))
    return buf, starts, np.resize(content[1:], n)



def row_error_in_lines(exc, files: dict):
    """A :class:`~uefast.errors.RowError` about a table read from a CSV/TSV file (``files``
    maps the error's ``what``, "run" or "qrels", to that file), reworded with the file's line
    numbers (header = line 1) instead of 0-based table rows, so that every message about a
    text file names lines; ``None`` where ``exc`` is about another input."""
    import re

    from uefast.errors import InputError

    path = files.get(getattr(exc, "what", None))
    if path is None:
        return None
    rows = [p for p in exc.parts if isinstance(p, int)]
    _, _, lines = _data_rows(path, max(rows) + 1 if rows else 0)
    text = []
    for i, p in enumerate(exc.parts):
        if isinstance(p, int):
            text.append(str(int(lines[p]) + 1) if 0 <= p < lines.size else str(p))
        else:
            nxt = i + 1 < len(exc.parts) and isinstance(exc.parts[i + 1], int)
            text.append(re.sub(r"\b(row)(s?)(\s*)$", r"line\2\3", p) if nxt else p)
    return InputError(f"{path}: " + "".join(text))
