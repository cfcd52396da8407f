"""CSV/TSV tables for the commands: the one place that decides how their columns are typed."""
from __future__ import annotations

#: Key columns read as text whatever they look like: type inference made ``001`` the integer 1
#: and ``1.10`` the float 1.1, merging ids that TREC files and Parquet tables keep apart.
TEXT_COLUMNS = ("qid", "docid", "system", "runid")


def read_delimited(path, delimiter: str, *, empty_is_null: bool = False):
    """A CSV/TSV file (optionally gzipped) as a ``pyarrow.Table``, its :data:`TEXT_COLUMNS` as
    strings (Arrow infers the other types). ``empty_is_null``: only an empty cell is missing
    (so ``nan`` stays NaN); otherwise Arrow's default null spellings apply. A ``label`` column is
    read as the TREC readers read labels (:func:`uefast.io._scan.parse_integral`): integers or
    integral decimals, nothing that C's ``atol`` would read differently (Arrow's inference took
    ``0x10`` as 16 and ``1e1`` as 10); an error names the line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {c: pa.string() for c in (*TEXT_COLUMNS, "label")}
    convert = pacsv.ConvertOptions(column_types=types,
                                   **({"null_values": [""]} if empty_is_null else {}))
    t = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                       convert_options=convert)
    if "label" in t.column_names:
        i = t.schema.get_field_index("label")
        t = t.set_column(i, "label", _labels(t["label"].combine_chunks(), path))
    return t


def _labels(arr, path):
    """The label column's text as int64, with the file's line numbers in errors (one header line;
    a quoted field spanning lines would shift them)."""
    import gzip

    import numpy as np
    import pyarrow as pa

    from uefast.errors import InputError
    from uefast.inputs import numeric_array
    from uefast.io._scan import parse_integral

    if arr.null_count:
        r = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{path}:{r + 2}: the label cell is empty")
    with (gzip.open if str(path).lower().endswith(".gz") else open)(path, "rb") as fh:
        buf = np.frombuffer(fh.read(), np.uint8)
    starts = np.concatenate([[0], np.flatnonzero(buf == 10) + 1])
    n = len(arr)
    line_start = np.resize(starts[1:n + 1], n)  # (a short file: only with quoted newlines)
    values = parse_integral(arr.cast(pa.string()), path=path, what="label", buf=buf,
                            lineno=np.arange(2, n + 2), line_start=line_start)
    return numeric_array(values)
