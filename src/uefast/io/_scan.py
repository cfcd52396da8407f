"""Byte-level scanning of whitespace-separated text files (TREC runs, qrels, LETOR).

One Numba pass over the raw bytes finds, for every content line, the start/end offsets of its first
``k`` fields and the number of fields; a second pass gathers a field into an Arrow string buffer.
No Python code runs per line.  Whitespace is C ``isspace`` (space, ``\\t``, ``\\n``, ``\\v``,
``\\f``, ``\\r``), exactly what trec_eval's ``get_trec_results.c`` / ``get_qrels.c`` skip.  Blank
lines and lines whose first non-blank byte is ``#`` (trec_eval 10 comment lines) are skipped.
"""
from __future__ import annotations

import os
from pathlib import Path

import numba as nb
import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.inputs import numpy_view

__all__ = ["read_bytes", "scan_fields", "gather_strings", "line_text", "parse_numbers",
           "file_stem", "numbers_per_line"]

def read_bytes(path: str | os.PathLike) -> np.ndarray:
    """Read a file (transparently gunzipping it when it starts with the gzip magic bytes).

    Returns a read-only ``uint8`` array.  Raises :class:`InputError` for a missing or empty file.
    """
    from uefast.io._fast import read_bytes as _read

    return _read(path)


@nb.njit(cache=True, nogil=True)
def _is_space(c):
    return c == 32 or (9 <= c <= 13)


@nb.njit(cache=True, nogil=True)
def _count_lines(buf):
    """Number of lines in ``buf`` (newlines + 1): the row capacity of a line scanner."""
    n_lines = 1
    for i in range(buf.size):
        if buf[i] == 10:
            n_lines += 1
    return n_lines


@nb.njit(cache=True, nogil=True)
def _scan(buf, k):
    n = buf.size
    n_lines = _count_lines(buf)
    starts = np.empty((k, n_lines), np.int64)
    ends = np.empty((k, n_lines), np.int64)
    nfields = np.empty(n_lines, np.int64)
    lineno = np.empty(n_lines, np.int64)
    line_start = np.empty(n_lines, np.int64)
    row = 0
    line = 1
    i = 0
    while i < n:
        j = i
        while j < n and buf[j] != 10:
            j += 1
        p = i
        f = 0
        while p < j:
            c = buf[p]
            if _is_space(c):
                p += 1
                continue
            if f == 0 and c == 35:  # '#': comment line
                break
            s = p
            while p < j and not _is_space(buf[p]):
                p += 1
            if f < k:
                starts[f, row] = s
                ends[f, row] = p
            f += 1
        if f > 0:
            for g in range(f, k):
                starts[g, row] = p
                ends[g, row] = p
            nfields[row] = f
            lineno[row] = line
            line_start[row] = i
            row += 1
        line += 1
        i = j + 1
    return starts[:, :row], ends[:, :row], nfields[:row], lineno[:row], line_start[:row]


def scan_fields(buf: np.ndarray, k: int):
    """Scan ``buf`` and return ``(starts, ends, nfields, lineno, line_start)``.

    ``starts``/``ends`` are ``(k, n_rows)`` byte offsets of the first ``k`` fields of each content
    line; ``nfields`` the total number of fields on the line; ``lineno`` the 1-based line number;
    ``line_start`` the byte offset where the line begins (for error messages).
    """
    return _scan(buf, k)


@nb.njit(cache=True, nogil=True)
def _gather(buf, starts, ends):
    n = starts.size
    offsets = np.empty(n + 1, np.int64)
    total = 0
    offsets[0] = 0
    for r in range(n):
        total += ends[r] - starts[r]
        offsets[r + 1] = total
    data = np.empty(total, np.uint8)
    pos = 0
    for r in range(n):
        for b in range(starts[r], ends[r]):
            data[pos] = buf[b]
            pos += 1
    return data, offsets


def gather_strings(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, path) -> pa.Array:
    """Copy the byte ranges ``buf[starts[i]:ends[i]]`` into one Arrow ``string`` array.

    The result is validated as UTF-8; invalid bytes raise :class:`InputError` naming the file,
    the 1-based number of the first line with such a field and the line's text.
    """
    data, offsets = _gather(buf, np.ascontiguousarray(starts), np.ascontiguousarray(ends))
    n = starts.size
    if offsets[-1] < 2**31 - 1:
        arr = pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
    else:
        arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        raise _utf8_error(buf, starts, data, offsets, path) from None
    return arr


def _utf8_error(buf, starts, data, offsets, path) -> InputError:
    """:func:`gather_strings`' error for the first gathered field that is not valid UTF-8."""
    # a newline between the fields keeps their checks apart (it neither completes nor continues
    # a multi-byte sequence), so the first decoding error lies in the first invalid field
    joined = np.insert(data, offsets[1:-1], 10)
    try:
        joined.tobytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        s = int(starts[int(np.count_nonzero(joined[:exc.start] == 10))])
        nl = np.flatnonzero(buf[:s] == 10)
        text = line_text(buf, int(nl[-1]) + 1 if nl.size else 0)
        # not repr(): line_text already shows the bad bytes as \xNN (repr would double them)
        return InputError(f"{path}:{nl.size + 1}: text is not valid UTF-8: '{text}'")
    return InputError(f"{path}: file is not valid UTF-8 text")


def file_stem(path, suffixes) -> str:
    """The file name without those of ``suffixes`` it ends with, tried in order (each at most
    once, never down to nothing): a system's name from its file (``bm25.run.gz`` -> ``bm25.run``
    -> ...)."""
    name = Path(path).name
    for suffix in suffixes:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def numbers_per_line(path, kind: str, what: str, check_count=None):
    """The one number (``kind`` ``"float"`` or ``"int"``) on each content line of ``path`` (score
    files, group files), with the lines' numbers and start offsets and the buffer, for messages
    about them. ``check_count(n_lines)`` runs first; then a line without exactly one field, or
    whose field is not such a number (``nan`` is not: these numbers rank), is an error naming
    file, line, ``what`` and the line's text."""
    buf = read_bytes(path)
    starts, ends, nfields, lines, lstart = scan_fields(buf, 1)
    if check_count is not None:
        check_count(nfields.size)
    if (nfields != 1).any():
        r = int(np.flatnonzero(nfields != 1)[0])
        raise InputError(f"{path}:{int(lines[r])}: expected one {what} per line: "
                         f"{line_text(buf, int(lstart[r]))!r}")
    field = gather_strings(buf, starts[0], ends[0], path=path)
    values = parse_numbers(field, kind, path=path, what=what, buf=buf, lineno=lines, line_start=lstart)
    nan = np.flatnonzero(np.isnan(values)) if kind == "float" else ()
    if len(nan):
        r = int(nan[0])
        raise InputError(f"{path}:{int(lines[r])}: {what} {field[r].as_py()!r} is NaN (a ranking needs "
                         f"numbers): {line_text(buf, int(lstart[r]))!r}")
    return values, lines, lstart, buf


def fast_ints(texts: list[str]) -> np.ndarray | None:
    """The fused readers' few numbers their byte scanners leave aside, as int64 through Arrow's
    cast; ``None`` (the caller takes its general reader, whose errors name lines) where Arrow
    refuses one or would read hexadecimal, which :func:`parse_numbers` refuses ("0x10": Arrow 16,
    C's atol 0)."""
    if any("x" in t or "X" in t for t in texts):
        return None
    import pyarrow.compute as pc  # here, as in the two below: not on `uefast trec_eval`'s path

    try:
        return pc.cast(pa.array(texts, pa.string()), pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def parse_integral(arr: pa.Array, *, path, what: str, buf, lineno, line_start) -> np.ndarray:
    """Integers, or integral decimals such as ``1.0`` / ``2.00`` (tools that write labels as
    floats; trec_eval's ``atol`` and LightGBM read them as those integers), as int64. Anything
    else -- ``0.5``, ``x`` -- is an error naming file, line, ``what`` and the line's text."""
    import pyarrow.compute as pc

    kw = dict(path=path, what=what, buf=buf, lineno=lineno, line_start=line_start)
    try:
        return parse_numbers(arr, "int", **kw)
    except InputError as exc:
        as_int = exc
    try:
        f = parse_numbers(arr, "float", **kw)
    except InputError:
        raise as_int from None  # a value that is no number at all: "... is not an integer"
    plain = pc.match_substring_regex(arr, _INT_RE).to_numpy(zero_copy_only=False)
    out = np.empty(len(arr), np.int64)
    if plain.any():  # written as integers: exactly (beyond 2^53 too)
        idx = np.flatnonzero(plain)
        out[idx] = parse_numbers(arr.take(pa.array(idx)), "int", **{**kw, "lineno": lineno[idx],
                                                                    "line_start": line_start[idx]})
    integral = np.isfinite(f) & (f == np.round(f)) & (np.abs(f) <= 2.0**53)
    # the value must also be what C's atol reads, the text's leading integer ("" -> 0): "1.0",
    # ".0" and "1.000e+00" read the same both ways; "1e1" is 10 but atol reads 1 (refused)
    lead = pc.extract_regex(arr, r"^\s*(?P<lead>[+-]?[0-9]{0,18})").field("lead")
    lead = pc.replace_substring_regex(lead, r"^[+-]?$", "0")
    lead = pc.replace_substring_regex(lead, r"^\+", "")
    integral &= numpy_view(pc.cast(lead, pa.int64())) == f
    bad = np.flatnonzero(~plain & ~integral)
    if bad.size:
        r = int(bad[0])
        raise InputError(f"{path}:{int(lineno[r])}: {what} {arr[r].as_py()!r} is not an integer: "
                         f"{line_text(buf, int(line_start[r]))!r}")
    out[~plain] = f[~plain].astype(np.int64)
    return out


def line_text(buf: np.ndarray, line_start: int, limit: int = 200) -> str:
    """The text of the line that starts at byte ``line_start`` (for error messages; bytes that
    are not UTF-8 shown as ``\\xNN``)."""
    end = line_start
    n = buf.size
    while end < n and buf[end] != 10 and end - line_start < limit:
        end += 1
    return bytes(buf[line_start:end]).decode("utf-8", errors="backslashreplace").rstrip("\r")


_FLOAT_RE = r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN])$"
_INT_RE = r"^[+-]?[0-9]+$"


def parse_numbers(arr: pa.Array, kind: str, *, path, what: str, buf, lineno, line_start) -> np.ndarray:
    """Parse an Arrow string array of numbers (``kind`` ``"float"`` or ``"int"``) to numpy.

    The whole column must parse: the first bad value raises :class:`InputError` naming file, line
    number, the column (``what``) and the line's text.
    """
    import pyarrow.compute as pc

    target = pa.float64() if kind == "float" else pa.int64()
    # Arrow's integer parser also takes hexadecimal ("0x10" -> 16, where C's atol reads 0):
    # such text takes the checked path below, which refuses it
    hex_like = kind == "int" and pc.any(pc.match_substring(arr, "x", ignore_case=True)).as_py()
    try:
        if not hex_like:
            return numpy_view(pc.cast(arr, target))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    unsigned = pc.replace_substring_regex(arr, r"^\+", "")
    try:  # Arrow refuses a leading '+' on integers ("+1": SVMlight labels, strtol/atol read it)
        if not hex_like:
            return numpy_view(pc.cast(unsigned, target))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    pattern = _FLOAT_RE if kind == "float" else _INT_RE
    ok = pc.match_substring_regex(arr, pattern).to_numpy(zero_copy_only=False)
    bad_rows = np.flatnonzero(~ok)
    if bad_rows.size == 0:  # well-formed but refused (out of range): the first such value
        def refused(k):
            try:
                pc.cast(unsigned.slice(k, 1), target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return True
            return False

        bad = next((k for k in range(len(arr)) if refused(k)), 0)
        raise InputError(f"{path}:{int(lineno[bad])}: {what} {arr[bad].as_py()!r} is out of the "
                         f"{target} range: {line_text(buf, int(line_start[bad]))!r}")
    bad = int(bad_rows[0])
    raise InputError(
        f"{path}:{int(lineno[bad])}: {what} {arr[bad].as_py()!r} is not "
        f"{'a number' if kind == 'float' else 'an integer'}: {line_text(buf, int(line_start[bad]))!r}"
    )
