"""Reader for LETOR / SVMlight ranking files plus per-system score files.

Line format (MSLR-WEB, Yahoo LTR, LETOR 4.0):  ``label qid:Q 1:v1 2:v2 ... # docid = D ...``.
Feature values are not loaded (uefast evaluates rankings, it does not train them); the label,
the query id and, when the comment carries ``docid = D`` (or ``docid=D``), the document id are.
Score files, as rankers such as LightGBM / XGBoost / SVMrank write them, hold one score per line
in the same order as the LETOR file; each becomes a float64 column named by the file's stem.
See ``data_schemas/letor.md``.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numba as nb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.inputs import numeric_array, numpy_view
from uefast.io._scan import _count_lines
from uefast.io._scan import _is_space as _sp
from uefast.io._scan import (file_stem, gather_strings, line_text, numbers_per_line,
                             parse_integral, read_bytes)

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
                c0 = buf[p - 1]  # the word "docid", not the end of "mydocid"
                word_start = not ((48 <= c0 <= 57) or (65 <= c0 <= 90) or (97 <= c0 <= 122)
                                  or c0 == 95)
                if (word_start and buf[p] == 100 and buf[p + 1] == 111 and buf[p + 2] == 99
                        and buf[p + 3] == 105 and buf[p + 4] == 100):
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


#: Suffixes left out of a score file's name to name its column (``lambdamart.txt`` -> ``lambdamart``).
SCORE_SUFFIXES = (".gz", ".txt", ".tsv", ".csv", ".score", ".scores", ".pred", ".predict")


#: Group files looked for next to a LETOR file without ``qid:`` fields, in this order: LightGBM's
#: ``<data>.query`` (which LightGBM itself loads automatically) and XGBoost's ``<data>.group``.
GROUP_SUFFIXES = (".query", ".group")


def read_letor(path: str | os.PathLike, *, score_files: Sequence[str | os.PathLike] | None = None,
               group_file: str | os.PathLike | None = None) -> pa.Table:
    """Read a LETOR / SVMlight file and attach per-system score files as columns.

    Returns columns ``qid`` (string), ``label`` (int64), ``docid`` (string; only when every line's
    comment carries ``docid = ...``) and one float64 column per score file, named by the file's
    stem (``run1.txt`` -> ``run1``).  Row order is file order.

    Queries come from the lines' ``qid:`` fields, or, for files without them (LightGBM / XGBoost
    ranking data), from a **group file**: one group size per line, the groups covering the rows
    in file order; query i (0-based) gets qid ``"i"``.  ``group_file`` names it; by default
    ``<path>.query`` (LightGBM's convention) or ``<path>.group`` (XGBoost's) is used when it
    exists.  A group file given for a file *with* ``qid:`` fields is checked against them
    (every group one qid, no qid in two groups) and the qids are kept.

    Raises
    ------
    InputError
        Naming file and line: a line without a ``qid:`` field (when others have one, or no
        group file is found), a non-integer label, a non-numeric score, a score file whose
        number of lines differs from the LETOR file, duplicate score-column names, an empty
        file; a group size that is not a positive integer, group sizes that do not add up to
        the number of rows, groups that disagree with the ``qid:`` fields.
    """
    if isinstance(score_files, (str, os.PathLike)):  # one file, not its characters
        score_files = [score_files]
    buf = read_bytes(path)
    if 13 in buf:  # old-Mac CR-only line ends: lines, as XGBoost / RankLib read them
        import re

        raw = re.sub(rb"\r(?!\n)", b"\n", buf.tobytes())
        buf = np.frombuffer(raw, np.uint8)
    out, lineno, lstart, err = _scan_letor(buf)
    if out.shape[0] == 0:
        raise InputError(f"{path}: empty file (no 'label qid:Q features' lines)")
    n = out.shape[0]
    no_qid = bool(err.all())
    if group_file is None and no_qid:
        group_file = next((f"{path}{s}" for s in GROUP_SUFFIXES if os.path.isfile(f"{path}{s}")), None)
        if group_file is None:
            raise InputError(
                f"{path}: no line has a 'qid:' field and no group file was found "
                f"({path}.query or {path}.group: one query's number of lines per line, as "
                f"LightGBM/XGBoost write them); give one with group_file= (CLI: --group FILE)")
    if err.any() and not no_qid:
        r = int(np.flatnonzero(err)[0])
        raise InputError(f"{path}:{int(lineno[r])}: expected 'label qid:<id> ...': {line_text(buf, int(lstart[r]))!r}")
    labels = parse_integral(gather_strings(buf, out[:, 0], out[:, 1], path=path), path=path,
                            what="label", buf=buf, lineno=lineno, line_start=lstart)
    if group_file is not None:
        sizes = _read_groups(group_file, n, path)
        if no_qid:
            qid = pc.cast(numeric_array(np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)),
                          pa.string())
        else:
            qid = gather_strings(buf, out[:, 2], out[:, 3], path=path)
            _check_groups(qid, sizes, group_file, path, lineno)
    else:
        qid = gather_strings(buf, out[:, 2], out[:, 3], path=path)
    cols = {"qid": qid, "label": numeric_array(labels)}
    if (out[:, 4] >= 0).all():
        cols["docid"] = gather_strings(buf, out[:, 4], out[:, 5], path=path)
    for sf in score_files or ():
        name = file_stem(sf, SCORE_SUFFIXES)
        if name in cols:
            raise InputError(f"{sf}: score column name {name!r} (from the file name) is already used")

        def same_count(m, sf=sf):
            if m != n:
                raise InputError(f"{sf}: {m} scores but {path} has {n} lines")

        scores, _, _, _ = numbers_per_line(sf, "float", "score", same_count)
        cols[name] = numeric_array(np.ascontiguousarray(scores, np.float64))
    return pa.table(cols)


def _read_groups(group_file, n_rows: int, path) -> np.ndarray:
    """The group sizes in ``group_file`` (one positive integer per line), which must add up to
    ``n_rows`` (the lines of ``path``)."""
    def not_empty(m):
        if m == 0:
            raise InputError(f"{group_file}: empty group file (one group size per line expected)")

    sizes, glines, gstart, gbuf = numbers_per_line(group_file, "int", "group size", not_empty)
    if (sizes <= 0).any():
        r = int(np.flatnonzero(sizes <= 0)[0])
        raise InputError(f"{group_file}:{int(glines[r])}: group size {int(sizes[r])} is not "
                         f"positive: {line_text(gbuf, int(gstart[r]))!r}")
    # each size <= n_rows first: a sum of huge sizes could wrap around in int64 and "match"
    total = int(sizes.sum()) if int(sizes.max()) <= n_rows else sum(int(v) for v in sizes)
    if total != n_rows:
        raise InputError(f"{group_file}: group sizes add up to {total} rows but {path} has "
                         f"{n_rows} lines")
    return np.ascontiguousarray(sizes, np.int64)


def _check_groups(qid: pa.Array, sizes: np.ndarray, group_file, path, lineno) -> None:
    """Groups given for a file with ``qid:`` fields must be its queries: one qid per group, no
    qid in two groups."""
    codes = numpy_view(pc.dictionary_encode(qid).indices).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    first = codes[starts]
    mixed = np.flatnonzero(np.repeat(first, sizes) != codes)
    if mixed.size:
        r = int(mixed[0])
        g = int(np.searchsorted(starts, r, side="right") - 1)
        raise InputError(f"{path}:{int(lineno[r])}: qid {qid[r].as_py()!r} inside group {g} of "
                         f"{group_file} (which starts with qid {qid[int(starts[g])].as_py()!r})")
    if np.unique(first).size != first.size:
        seen: dict[int, int] = {}
        for g, c in enumerate(first.tolist()):
            if c in seen:
                raise InputError(f"{group_file}: groups {seen[c]} and {g} both hold qid "
                                 f"{qid[int(starts[g])].as_py()!r} of {path}")
            seen[c] = g
