"""Reader for LETOR / SVMlight ranking files plus per-system score files.

Line format (MSLR-WEB, Yahoo LTR, LETOR 4.0):  ``label qid:Q 1:v1 2:v2 ... # docid = D ...``.
Feature values are not loaded (uefast evaluates rankings, it does not train them); the label,
the query id and, when the comment carries ``docid = D`` (or ``docid=D``), the document id are.
Score files, as rankers such as LightGBM / RankLib / SVMrank write them, hold one score per line
in the same order as the LETOR file; each becomes a float64 column named by the file's stem.
See ``data_schemas/letor.md``.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numba as nb
import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.io._scan import _count_lines
from uefast.io._scan import _is_space as _sp
from uefast.io._scan import gather_strings, line_text, parse_numbers, read_bytes, scan_fields

__all__ = ["read_letor"]


@nb.njit(cache=True, nogil=True)
def _scan_letor(buf):
    """Per content line: label (start,end), qid value (start,end), docid (start,end or -1),
    line number, line start, and an error code (0 ok, 1 no qid field)."""
    n = buf.size
    n_lines = _count_lines(buf)
    out = np.empty((n_lines, 6), np.int64)
    lineno = np.empty(n_lines, np.int64)
    lstart = np.empty(n_lines, np.int64)
    err = np.zeros(n_lines, np.int64)
    row = 0
    line = 1
    i = 0
    while i < n:
        j = i
        while j < n and buf[j] != 10:
            j += 1
        p = i
        while p < j and _sp(buf[p]):
            p += 1
        if p < j and buf[p] != 35:
            # label
            s = p
            while p < j and not _sp(buf[p]) and buf[p] != 35:
                p += 1
            out[row, 0] = s
            out[row, 1] = p
            while p < j and _sp(buf[p]):
                p += 1
            # qid:
            if p + 4 <= j and buf[p] == 113 and buf[p + 1] == 105 and buf[p + 2] == 100 and buf[p + 3] == 58:
                s = p + 4
                p = s
                while p < j and not _sp(buf[p]) and buf[p] != 35:
                    p += 1
                out[row, 2] = s
                out[row, 3] = p
                if p == s:
                    err[row] = 1
            else:
                err[row] = 1
                out[row, 2] = p
                out[row, 3] = p
            # find comment and docid
            out[row, 4] = -1
            out[row, 5] = -1
            while p < j and buf[p] != 35:
                p += 1
            while p + 5 <= j:
                if (buf[p] == 100 and buf[p + 1] == 111 and buf[p + 2] == 99 and buf[p + 3] == 105
                        and buf[p + 4] == 100):
                    q = p + 5
                    while q < j and _sp(buf[q]):
                        q += 1
                    if q < j and buf[q] == 61:
                        q += 1
                        while q < j and _sp(buf[q]):
                            q += 1
                        s = q
                        while q < j and not _sp(buf[q]):
                            q += 1
                        if q > s:
                            out[row, 4] = s
                            out[row, 5] = q
                            break
                p += 1
            lineno[row] = line
            lstart[row] = i
            row += 1
        line += 1
        i = j + 1
    return out[:row], lineno[:row], lstart[:row], err[:row]


def _stem(path) -> str:
    name = Path(path).name
    for suffix in (".gz", ".txt", ".tsv", ".csv", ".score", ".scores", ".pred", ".predict"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def read_letor(path: str | os.PathLike, *, score_files: Sequence[str | os.PathLike] | None = None) -> pa.Table:
    """Read a LETOR / SVMlight file and attach per-system score files as columns.

    Returns columns ``qid`` (string), ``label`` (int64), ``docid`` (string; only when every line's
    comment carries ``docid = ...``) and one float64 column per score file, named by the file's
    stem (``run1.txt`` -> ``run1``).  Row order is file order.

    Raises
    ------
    InputError
        Naming file and line: a line without a ``qid:`` field, a non-integer label, a
        non-numeric score, a score file whose number of lines differs from the LETOR file,
        duplicate score-column names, an empty file.
    """
    buf = read_bytes(path)
    out, lineno, lstart, err = _scan_letor(buf)
    if out.shape[0] == 0:
        raise InputError(f"{path}: empty file (no 'label qid:Q features' lines)")
    if err.any():
        r = int(np.flatnonzero(err)[0])
        raise InputError(f"{path}:{int(lineno[r])}: expected 'label qid:<id> ...': {line_text(buf, int(lstart[r]))!r}")
    labels = parse_numbers(gather_strings(buf, out[:, 0], out[:, 1], path=path), "int", path=path,
                           what="label", buf=buf, lineno=lineno, line_start=lstart)
    cols = {"qid": gather_strings(buf, out[:, 2], out[:, 3], path=path), "label": pa.array(labels)}
    if (out[:, 4] >= 0).all():
        cols["docid"] = gather_strings(buf, out[:, 4], out[:, 5], path=path)
    n = out.shape[0]
    for sf in score_files or ():
        name = _stem(sf)
        if name in cols:
            raise InputError(f"{sf}: score column name {name!r} (from the file name) is already used")
        sbuf = read_bytes(sf)
        starts, ends, nfields, slines, sstart = scan_fields(sbuf, 1)
        if nfields.size != n:
            raise InputError(f"{sf}: {nfields.size} scores but {path} has {n} lines")
        if (nfields != 1).any():
            r = int(np.flatnonzero(nfields != 1)[0])
            raise InputError(f"{sf}:{int(slines[r])}: expected one score per line: {line_text(sbuf, int(sstart[r]))!r}")
        scores = parse_numbers(gather_strings(sbuf, starts[0], ends[0], path=sf), "float", path=sf,
                               what="score", buf=sbuf, lineno=slines, line_start=sstart)
        cols[name] = pa.array(scores, pa.float64())
    return pa.table(cols)
