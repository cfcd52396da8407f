"""CSV/TSV tables for the commands: the one place that decides how their columns are typed."""
from __future__ import annotations

#: Key columns read as text whatever they look like: type inference made ``001`` the integer 1
#: and ``1.10`` the float 1.1, merging ids that TREC files and Parquet tables keep apart.
TEXT_COLUMNS = ("qid", "docid", "system", "runid")


def read_delimited(path, delimiter: str, *, empty_is_null: bool = False):
    """A CSV/TSV file (optionally gzipped) as a ``pyarrow.Table``, its :data:`TEXT_COLUMNS` as
    strings (Arrow infers the other types). ``empty_is_null``: only an empty cell is missing
    (so ``nan`` stays NaN); otherwise Arrow's default null spellings apply."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    convert = pacsv.ConvertOptions(column_types={c: pa.string() for c in TEXT_COLUMNS},
                                   **({"null_values": [""]} if empty_is_null else {}))
    return pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                          convert_options=convert)
