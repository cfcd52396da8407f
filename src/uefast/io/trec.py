"""Readers for TREC run files and TREC qrels files (plain, gzip, bzip2 or xz), into Arrow tables.

Formats (whitespace-separated, any mix of spaces and tabs, blank lines and ``#`` comment lines
skipped as trec_eval 10 does):

* run:   ``qid Q0 docno rank score runid`` (trec_eval's ``get_trec_results.c``)
* qrels: ``qid iter docno rel``            (trec_eval's ``get_qrels.c``)

Columns and error behaviour are documented in ``data_schemas/trec_run.md`` and
``data_schemas/qrels.md``.  Run files take the fused scanner of :mod:`uefast.io._fast` (one Numba
pass: fields, numbers, docno hashes, duplicate check); files it does not take as is, and qrels,
take the general path: one Numba pass over the bytes plus Arrow casts.  No Python runs per line.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence, Set
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.inputs import numeric_array, numpy_view, string_array, text_array
from uefast.io import _fast
from uefast.io._fast import usable_cpus
from uefast.io._hash import first_duplicate, hash_keys, str_buffers
from uefast.io._scan import (_gather, fast_ints, gather_strings, line_text, parse_integral, parse_numbers,
                             read_bytes, scan_fields)

__all__ = ["read_run", "read_qrels", "RUN_SCHEMA", "QRELS_SCHEMA"]

RUN_SCHEMA = pa.schema(
    [("qid", pa.string()), ("docid", pa.string()), ("score", pa.float64()),
     ("system", pa.string()), ("rank", pa.int64())]
)
QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("docid", pa.string()), ("label", pa.int64())])

PathLike = str | os.PathLike


@dataclass
class _Parsed:
    path: str
    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    nfields: np.ndarray
    lineno: np.ndarray
    line_start: np.ndarray

    def col(self, j: int) -> pa.Array:
        return gather_strings(self.buf, self.starts[j], self.ends[j], path=self.path)

    def error(self, row: int, msg: str) -> InputError:
        text = line_text(self.buf, int(self.line_start[row]))
        return InputError(f"{self.path}:{int(self.lineno[row])}: {msg}: {text!r}")


def _parse(path: PathLike, k: int, *, min_fields: int, max_fields: int | None, layout: str) -> _Parsed:
    buf = read_bytes(path)
    starts, ends, nfields, lineno, line_start = scan_fields(buf, k)
    p = _Parsed(str(path), buf, starts, ends, nfields, lineno, line_start)
    if nfields.size == 0:
        raise InputError(f"{path}: empty file (no {layout} lines)")
    bad = nfields < min_fields
    if max_fields is not None:
        bad |= nfields > max_fields
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        want = f"{min_fields}" if max_fields == min_fields else f"at least {min_fields}"
        raise p.error(r, f"expected {want} whitespace-separated fields ({layout}), got {int(nfields[r])}")
    return p


def run_lines(path: PathLike) -> _Parsed:
    """The content lines of run file ``path``, row ``i`` being :func:`read_run`'s row ``i`` of
    that file: ``run_lines(path).error(i, msg)`` is an error naming its line and text."""
    return _parse(path, 1, min_fields=1, max_fields=None, layout="qid Q0 docno rank score runid")


def _check_unique(code: np.ndarray, qid: pa.Array, doc: pa.Array, p: _Parsed, what: str,
                  hint=None) -> None:
    """Raise :class:`InputError` if two rows share (code, qid, docid) (hashing, verified bytewise);
    ``hint(i, j)`` may add a sentence about the two rows."""
    qo, qd = str_buffers(qid)
    do, dd = str_buffers(doc)
    h = hash_keys(code, qo, qd, do, dd)
    i, j = first_duplicate(h, code, qo, qd, do, dd)
    if j >= 0:
        extra = hint(int(i), int(j)) if hint is not None else ""
        raise p.error(int(j), f"{what} (first seen at {p.path}:{int(p.lineno[i])}){extra}")


def _ascii_strings(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """Arrow strings of byte ranges already known to be ASCII (no UTF-8 validation needed)."""
    data, offsets = _gather(buf, starts, ends)
    return string_array(offsets, data)


def _read_run_fast(path: PathLike, sysname, extra_columns: str, ranks: str = "check",
                   duplicates: str = "error", nan: str = "keep") -> pa.Table | None:
    """One run file through the fused scanner (:func:`uefast.io._fast.scan_run`); ``None`` when
    the file needs the general reader (an odd line, non-ASCII text, a number Arrow must judge and
    refuses, a repeated (qid, docno) -- which may or may not be an error, depending on runids)."""
    buf = _fast.read_bytes(path)
    (ok, qs, qe, ds, de, dh, dw0, dw1, bits, slow_s, slow_r, _, _, rank, ys, ye) = _fast.scan_run(
        buf, extra_columns != "ignore")
    if not ok:
        return None
    score = bits.view(np.float64)
    try:
        if slow_r.size and ranks == "check":
            a, b = _fast.next_field(buf, de[slow_r])
            v = fast_ints([bytes(buf[x:y]).decode() for x, y in zip(a, b)])
            if v is None:
                return None
            rank[slow_r] = v
        if slow_s.size:
            a, b = _fast.next_field(buf, de[slow_s])
            a, b = _fast.next_field(buf, b)
            v = pc.cast(pa.array([bytes(buf[x:y]).decode() for x, y in zip(a, b)], pa.string()), pa.float64())
            score[slow_s] = v.to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if nan == "error" and np.isnan(score).any():
        return None  # the general reader names the line
    if duplicates == "error":
        ok, _, _, _ = _fast.run_group(buf, qs, qe, ds, de, dh, dw0, dw1)
        if not ok:
            return None
    n = qs.size
    sys_col = (_ascii_strings(buf, ys, ye) if sysname is None
               else pa.repeat(text_array([str(sysname)])[0], n))
    rank_col = numeric_array(rank) if ranks == "check" else pa.nulls(n, pa.int64())
    return pa.Table.from_arrays([_ascii_strings(buf, qs, qe), _ascii_strings(buf, ds, de),
                                 numeric_array(score), sys_col, rank_col],
                                schema=RUN_SCHEMA)


def read_run(paths_or_path: PathLike | Sequence[PathLike], *, system: str | Sequence[str] | None = None,
             extra_columns: str = "error", ranks: str = "check", duplicates: str = "error",
             nan: str = "keep") -> pa.Table:
    """Read one or several TREC run files into one Arrow table.

    Each content line is ``qid Q0 docno rank score runid``.  Returns columns ``qid`` (string),
    ``docid`` (string), ``score`` (float64, parsed as C ``strtod`` would: correctly rounded),
    ``system`` (string) and ``rank`` (int64, the file's rank column, unused by trec_eval, which
    ranks by score descending then docno descending).

    Parameters
    ----------
    paths_or_path:
        One path or a sequence of paths; gzip files are detected by their magic bytes.
    system:
        ``None`` (default): the ``runid`` field of each line.  A string (one file) or one string
        per file: that name for every row of the file.
    extra_columns:
        ``"error"`` (default) rejects lines with more than 6 fields; ``"ignore"`` drops fields
        after the 6th, as trec_eval does (its ``results.trunc`` test file has such lines).
    ranks:
        ``"check"`` (default): the rank field must be an integer (a rank that is not catches
        swapped rank/score columns). ``"ignore"``: any token, as trec_eval reads it (it ranks by
        score and never parses the field); the ``rank`` column is then null.
    duplicates:
        ``"error"`` (default): a docno repeated within a (system, topic) is an error.
        ``"keep"``: such rows are kept (for ``uefast trec_eval``, which, like trec_eval, refuses
        a repeated docno only among the first ``-M`` documents of a topic it evaluates).
    nan:
        ``"keep"`` (default): a ``nan`` score is read as NaN. ``"error"``: refused, naming the
        file and line (``uefast evaluate`` ranks numbers only).

    Raises
    ------
    InputError
        Naming file, line number and line text for: wrong field count, non-numeric score or
        non-integer rank, a docno repeated within a (system, topic) (trec_eval refuses it too;
        unless ``duplicates="keep"``),
        an empty file, or a file that cannot be read.
    """
    if extra_columns not in ("error", "ignore"):
        raise InputError(f"`extra_columns` must be 'error' or 'ignore', got {extra_columns!r}")
    if ranks not in ("check", "ignore"):
        raise InputError(f"`ranks` must be 'check' or 'ignore', got {ranks!r}")
    if duplicates not in ("error", "keep"):
        raise InputError(f"`duplicates` must be 'error' or 'keep', got {duplicates!r}")
    if nan not in ("error", "keep"):
        raise InputError(f"`nan` must be 'error' or 'keep', got {nan!r}")
    paths = [paths_or_path] if isinstance(paths_or_path, (str, os.PathLike)) else list(paths_or_path)
    if not paths:
        raise InputError("read_run: no run file given")
    if system is None or isinstance(system, str):
        systems = [system] * len(paths)
        if isinstance(system, str) and len(paths) > 1:
            raise InputError("read_run: `system` must be a list with one name per file when reading several files")
    else:
        try:  # a list, tuple, array, Series ...; None: the file's runid. Not a set or dict:
            # no order to pair with the files
            systems = None if isinstance(system, (Set, Mapping)) else list(system)
        except TypeError:
            systems = None
        if systems is None or not all(x is None or isinstance(x, str) for x in systems):
            raise InputError(f"read_run: `system` must be a name or a list of names, got {system!r}")
        if len(systems) != len(paths):
            raise InputError(f"read_run: {len(paths)} files but {len(systems)} system names")
    parsed, tables, general = [], [], []
    layout = "qid Q0 docno rank score runid"
    # the fast path of every file, files in parallel threads (gunzip and the scans release the
    # GIL); an error is raised for the first failing file in the order given
    workers = min(len(paths), usable_cpus())
    if workers > 1:
        with ThreadPoolExecutor(workers) as ex:
            fast = list(ex.map(lambda ps: _read_run_fast(ps[0], ps[1], extra_columns, ranks, duplicates, nan),
                               zip(paths, systems)))
    else:
        fast = [_read_run_fast(p, s, extra_columns, ranks, duplicates, nan) for p, s in zip(paths, systems)]
    for path, sysname, t in zip(paths, systems, fast):  # no repeated (qid, docno) in t
        if t is not None:
            tables.append(t)
            parsed.append(str(path))
            continue
        p = _parse(path, 6, min_fields=6, max_fields=6 if extra_columns == "error" else None, layout=layout)
        n = p.nfields.size
        score = parse_numbers(p.col(4), "float", path=p.path, what="score", buf=p.buf,
                              lineno=p.lineno, line_start=p.line_start)
        if nan == "error":
            bad = np.flatnonzero(np.isnan(np.asarray(score, dtype=np.float64)))
            if bad.size:
                raise p.error(int(bad[0]), "score is NaN (a ranking needs numbers)")
        if ranks == "check":
            rank = numeric_array(parse_numbers(p.col(3), "int", path=p.path, what="rank",
                                               buf=p.buf, lineno=p.lineno, line_start=p.line_start))
        else:
            rank = pa.nulls(n, pa.int64())
        sys_col = p.col(5) if sysname is None else pa.repeat(text_array([str(sysname)])[0], n)
        tables.append(pa.Table.from_arrays([p.col(0), p.col(2), numeric_array(score), sys_col,
                                            rank],
                                           schema=RUN_SCHEMA))
        parsed.append(p.path)
        general.append((len(tables) - 1, p, sysname))
    for k, p, sysname in general if duplicates == "error" else ():
        t = tables[k]
        n = t.num_rows
        code = (np.zeros(n, np.int64) if sysname is not None else
                numpy_view(pc.dictionary_encode(t["system"].combine_chunks()).indices).astype(np.int64))
        _check_unique(code, t["qid"].combine_chunks(), t["docid"].combine_chunks(), p,
                      "docno repeated within a topic of the run")
    if len(tables) == 1:
        return tables[0]
    names = [set(pc.unique(t["system"]).to_pylist()) for t in tables]
    seen: dict[str, int] = {}
    for fi, ns in enumerate(names):
        for name in ns:
            if name in seen:
                raise InputError(
                    f"{parsed[fi]}: system name {name!r} is also used by {parsed[seen[name]]}; "
                    "give each file its own name: `system=[...]` in Python, `--names` on the "
                    "command line"
                )
            seen[name] = fi
    return pa.concat_tables(tables)


def _qrels_labels(p: _Parsed) -> np.ndarray:
    """The relevance column as int64: integers, or integral decimals such as ``1.0`` (trec_eval's
    ``atol`` reads ``1.0`` as 1); ``0.5`` or ``x`` is an error naming its line (trec_eval would
    truncate it silently). See :func:`uefast.io._scan.parse_integral`."""
    return parse_integral(p.col(3), path=p.path, what="relevance label", buf=p.buf,
                          lineno=p.lineno, line_start=p.line_start)


def read_qrels(path: PathLike, *, duplicates: str = "error") -> pa.Table:
    """Read a TREC qrels file (``qid iter docno rel``) into an Arrow table.

    Returns columns ``qid`` (string), ``docid`` (string), ``label`` (int64; trec_eval treats
    negative labels as "in the pool but unjudged" and labels >= the relevance level (default 1)
    as relevant).

    Raises
    ------
    InputError
        Naming file, line number and line text for: a line without exactly 4 fields, a
        label that is not an integer (``1.0`` is read as 1; ``0.5`` or ``x`` are errors), a
        (qid, docno) judged twice (unless ``duplicates="keep"``: trec_eval refuses a repeated
        judgment only in a topic it evaluates, and ``uefast trec_eval`` does the same), an empty
        file.
    """
    if duplicates not in ("error", "keep"):
        raise InputError(f"`duplicates` must be 'error' or 'keep', got {duplicates!r}")
    p, table = _qrels_table(path)
    if duplicates == "error":
        _check_qrels_unique(p, table, np.zeros(p.nfields.size, np.int64))
    return table


def _qrels_table(path: PathLike) -> tuple[_Parsed, pa.Table]:
    p = _parse(path, 4, min_fields=4, max_fields=4, layout="qid iter docno rel")
    return p, pa.Table.from_arrays([p.col(0), p.col(2), numeric_array(_qrels_labels(p))],
                                   schema=QRELS_SCHEMA)


def _check_qrels_unique(p: _Parsed, table: pa.Table, code: np.ndarray) -> None:
    def subtopics(i, j):
        it = p.col(1)
        if it[i].as_py() == it[j].as_py():
            return ""
        return ("; the two lines differ in the second field: a diversity (subtopic) qrels file? "
                "ad hoc qrels judge each docno once per topic")

    _check_unique(code, table["qid"].combine_chunks(), table["docid"].combine_chunks(), p,
                  "docno judged twice for the topic", hint=subtopics)


def check_qrels_topics_unique(path: PathLike, topics: Sequence[str]) -> None:
    """:func:`read_qrels`'s error (file, line numbers, text) for a docno judged twice within one
    of ``topics``; repeats in other topics are left alone (as trec_eval leaves them)."""
    p, table = _qrels_table(path)
    inside = numpy_view(pc.is_in(table["qid"].combine_chunks(), value_set=text_array(list(topics))))
    n = table.num_rows
    _check_qrels_unique(p, table, np.where(inside, 0, np.arange(1, n + 1, dtype=np.int64)))
