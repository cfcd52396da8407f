"""Reader for trec_eval's per-topic output (``trec_eval -q``, or ``uefast trec_eval -q``), so that
scores already computed can go straight into the significance tests (:mod:`uefast.stats`,
``uefast compare --trec-eval FILE...``).

Line format (trec_eval's ``print_results``): ``measure<spaces>\\tqid\\tvalue``; the summary lines
carry the qid ``all``, and ``runid all NAME`` names the run. See ``data_schemas/trec_eval_output.md``.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.inputs import numeric_array, numpy_view, text_array
from uefast.io._hash import first_duplicate, hash_keys, str_buffers
from uefast.io._scan import (file_stem, gather_strings, line_text, parse_numbers, read_bytes,
                             scan_fields)

__all__ = ["read_trec_eval_output"]

#: Measures whose value is text, not a number (their rows get a null ``value``).
TEXT_MEASURES = ("runid", "relstring")


def read_trec_eval_output(paths: str | os.PathLike | Sequence[str | os.PathLike], *,
                          system: str | Sequence[str] | None = None) -> pa.Table:
    """Read one or several ``trec_eval -q`` outputs (one run each) into one long table.

    Returns columns ``system`` (string), ``measure`` (string), ``qid`` (string) and ``value``
    (float64; null for the text-valued ``runid`` and ``relstring``), one row per per-topic line,
    in file order. The summary lines (qid ``all``) are left out: they are not topics. The system
    is named by ``system`` (one name per file), else by the file's ``runid all NAME`` line, else
    by the file name without its suffix. The table is the "long" input of
    :func:`uefast.stats.all_pairs` (pick the measure with ``measure=``).

    Values are as trec_eval printed them (4 decimals for most measures): tests on them test the
    rounded numbers, as with any tool that reads trec_eval's output.

    Raises
    ------
    InputError
        Naming file and line: a line without exactly 3 fields, a value that is not a number,
        a (measure, qid) printed twice; a file without per-topic lines (trec_eval run without
        ``-q``); two files with the same system name (give ``system=[...]``).
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not paths:
        raise InputError("read_trec_eval_output: no file given")
    names = [None] * len(paths) if system is None else (
        [system] if isinstance(system, str) else list(system))
    if len(names) != len(paths):
        raise InputError(f"read_trec_eval_output: {len(paths)} files but {len(names)} system names")
    tables, seen = [], {}
    for path, name in zip(paths, names):
        t, runid = _read_one(path)
        if name is None:
            name = runid if runid is not None else file_stem(path, NAME_SUFFIXES)
        if name in seen:
            raise InputError(f"{path}: system name {name!r} is also used by {seen[name]}; give each "
                             f"file its own name: `system=[...]` in Python, `--names` on the "
                             f"command line")
        seen[name] = path
        tables.append(t.add_column(0, "system", pa.repeat(text_array([name])[0], t.num_rows)))
    return pa.concat_tables(tables)


#: Suffixes left out of a file's name when it names the system (``bm25.eval`` -> ``bm25``).
NAME_SUFFIXES = (".gz", ".txt", ".eval", ".tsv")


def _read_one(path) -> tuple[pa.Table, str | None]:
    """(measure, qid, value) of the per-topic lines of one file, and its runid (or None)."""
    buf = read_bytes(path)
    starts, ends, nfields, lineno, lstart = scan_fields(buf, 3)
    if nfields.size == 0:
        raise InputError(f"{path}: empty file (trec_eval -q output expected)")
    bad = np.flatnonzero(nfields != 3)
    if bad.size:
        r = int(bad[0])
        raise InputError(f"{path}:{int(lineno[r])}: expected 3 fields (measure qid value) as "
                         f"trec_eval prints them, got {int(nfields[r])}: "
                         f"{line_text(buf, int(lstart[r]))!r}")
    measure = gather_strings(buf, starts[0], ends[0], path=path)
    qid = gather_strings(buf, starts[1], ends[1], path=path)
    value = gather_strings(buf, starts[2], ends[2], path=path)
    summary = numpy_view(pc.equal(qid, text_array(["all"])[0]))
    runid = None
    is_runid = numpy_view(pc.equal(measure, text_array(["runid"])[0]))
    hit = np.flatnonzero(is_runid & summary)
    if hit.size:
        runid = value[int(hit[0])].as_py()
    keep = np.flatnonzero(~summary)
    if keep.size == 0:
        raise InputError(f"{path}: no per-topic lines (every line is a summary line, qid 'all'): "
                         f"was trec_eval run with -q?")
    take = numeric_array(keep)
    measure, qid, value = measure.take(take), qid.take(take), value.take(take)
    lineno, lstart = lineno[keep], lstart[keep]
    text = np.zeros(keep.size, bool)
    for m in TEXT_MEASURES:  # relstring also as relstring_20 (-m relstring.20)
        text |= numpy_view(pc.match_substring_regex(measure, f"^{m}(_[0-9]+)?$"))
    vals = np.full(keep.size, np.nan)
    num = np.flatnonzero(~text)
    if num.size:
        vals[num] = parse_numbers(value.take(numeric_array(num)), "float", path=path, what="value",
                                  buf=buf, lineno=lineno[num], line_start=lstart[num])
    mo, md = str_buffers(measure)
    qo, qd = str_buffers(qid)
    zero = np.zeros(keep.size, np.int64)
    i, j = first_duplicate(hash_keys(zero, mo, md, qo, qd), zero, mo, md, qo, qd)
    if i >= 0:
        raise InputError(f"{path}:{int(lineno[j])}: measure {measure[j].as_py()!r} of topic "
                         f"{qid[j].as_py()!r} printed twice (first at line {int(lineno[i])})")
    valid = numeric_array(~text)
    col = pa.Array.from_buffers(pa.float64(), keep.size, [valid.buffers()[1], pa.py_buffer(vals)])
    return pa.table({"measure": measure, "qid": qid, "value": col}), runid
