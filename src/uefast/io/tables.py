"""Qrels and runs from what a user passes: a table object or a file path (one place that
decides how a path is read, for the functions that take either)."""
from __future__ import annotations

import os
from typing import Any

import pyarrow as pa

__all__ = ["qrels_from", "run_from"]


def qrels_from(obj: Any, what: str = "qrels") -> pa.Table:
    """A qrels table: a ``pyarrow`` Table, Polars/pandas DataFrame or dict of columns as is
    (:func:`uefast.inputs.to_arrow`); a path as ``uefast evaluate --qrels`` reads it: a
    Parquet/Arrow/CSV/TSV table by its suffix or Parquet's magic bytes, else TREC qrels text
    (:func:`uefast.io.read_qrels`)."""
    if isinstance(obj, (str, os.PathLike)):
        from uefast.cli.cmd_evaluate import _read_qrels_arg

        return _read_qrels_arg(os.fspath(obj))
    from uefast.inputs import to_arrow

    return to_arrow(obj, what)


def run_from(obj: Any, what: str = "run") -> pa.Table:
    """A run table: a table object as is; a path, or a list / tuple of paths, as TREC run files
    (:func:`uefast.io.read_run`, one system per ``runid``) unless a single path is a Parquet
    file or directory (:func:`uefast.inputs.to_arrow`)."""
    from uefast.inputs import to_arrow

    if isinstance(obj, (list, tuple)) and obj and all(isinstance(p, (str, os.PathLike)) for p in obj):
        from uefast.io import read_run

        return read_run(list(obj))
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        parquet = os.path.isdir(path)
        if not parquet and os.path.isfile(path):
            with open(path, "rb") as fh:
                parquet = fh.read(4) == b"PAR1"
        if not parquet:
            from uefast.io import read_run

            return read_run(path)
    return to_arrow(obj, what)
