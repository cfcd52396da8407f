"""Fused single-pass scanners for TREC runs and qrels (the ``uefast trec_eval`` fast path).

One Numba pass per file tokenizes every line, parses the score (correctly rounded: Eisel-Lemire,
see :func:`_eisel_lemire`), checks the rank, and hashes the docno; no Arrow string column and no
Python object is built per line.  Run files go first to the word-at-a-time scanner
(:mod:`uefast.io._words`, same results 8 bytes per step); the byte loop here takes every file it
declines.  Open-addressing hash tables map qids to topic codes, docnos to
qrels rows (one small table per topic, so that a run grouped by topic is joined in cache), and
detect repeated docnos.  A hash match is never trusted alone: docnos of up to 16 bytes are keyed by
their bytes packed into two 64-bit words plus the length (an exact comparison), longer ones and
qids are compared byte by byte.

The fast path is deliberately narrow: anything unusual (a line with the wrong number of fields, a
non-ASCII byte in a parsed field, a repeated docno, a NaN score, an empty file) makes the scanner
report ``ok == False`` and the caller falls back to the general readers in :mod:`uefast.io.trec`,
which produce the documented error messages (file, line number, line text).  Numbers the fast
parser does not take (``inf``, ``nan``, hex, more than 19 significant digits, ``+5`` ranks ...) are
listed and parsed by Arrow exactly as the general reader does.

All kernels are ``nogil``: files can be processed in parallel threads.
"""
from __future__ import annotations

import gzip
import os
import sys
import zlib
from pathlib import Path

import numba as nb
import numpy as np

from uefast.errors import InputError
from uefast.io._floatparse import (  # noqa: F401  (re-exported)
    _POW5,
    _parse_float_open,
    _parse_int,
    parse_float_bytes,
)
from uefast.io._hashtab import (  # noqa: F401  (re-exported)
    _cap,
    _dkey,
    build_table,
    dkey_rows,
    fnv_rows,
    topic_codes,
)
from uefast.io._words import _skip, _sp, run_arrays, run_result, scan_run_words
from uefast.io._topics import (  # noqa: F401  (re-exported)
    build_topic_tables,
    group_rows,
    intern_rows,
    probe_topic_rows,
    run_group,
    run_index,
)

__all__ = ["read_bytes", "decompress", "usable_cpus", "parse_float_bytes", "scan_run", "scan_qrels", "fnv_rows",
           "dkey_rows", "build_table", "topic_codes", "intern_rows", "next_field", "group_rows",
           "build_topic_tables", "probe_topic_rows", "run_group", "run_index"]

_U = np.uint64
_GZIP_MAGIC = b"\x1f\x8b"
_LITTLE_ENDIAN = sys.byteorder == "little"

try:  # optional accelerator (ISA-L inflate, 2-3x faster than zlib); same output bytes
    from isal import isal_zlib as _zlib  # type: ignore
except ImportError:  # pragma: no cover - depends on the environment
    _zlib = zlib
try:
    from isal import igzip_lib as _igzip_lib  # type: ignore
except ImportError:  # pragma: no cover - depends on the environment
    _igzip_lib = None


def _zlib_decompress(raw: bytes, path) -> bytes:
    try:
        d = zlib.decompressobj(31)
        out = d.decompress(raw)
        if not d.eof:  # zlib returns what it could decode: refuse a cut file, never read half
            raise InputError(f"{path}: truncated gzip data (the stream ends before its end "
                             f"marker, after {len(out):,} bytes of text: an incomplete download "
                             f"or copy?)")
        if d.unused_data:  # multi-member gzip
            out = gzip.decompress(raw)
        return out
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: corrupt gzip data ({exc})") from None


def _isal_gunzip(raw: bytes, size_hint: int | None = None) -> bytes | None:
    """ISA-L inflate of a single-member gzip stream; None unless the stream ended cleanly with
    nothing after it (a multi-member file: zlib's path reads every member).

    The output goes into one buffer of the size the trailer states (ISIZE, the length mod 2^32;
    ``size_hint`` overrides it, for tests): ~25% less time than a growing buffer (17 Robust
    runs: 57 vs 75 ms). A longer stream (beyond 4 GiB) continues into a growing buffer."""
    if not hasattr(_igzip_lib, "IgzipDecompressor"):  # an older python-isal
        d = _zlib.decompressobj(31)
        out = d.decompress(raw)
        return out if d.eof and not d.unused_data else None
    if len(raw) < 18:
        return None
    size = int.from_bytes(raw[-4:], "little") if size_hint is None else size_hint
    d = _igzip_lib.IgzipDecompressor(flag=_igzip_lib.DECOMP_GZIP)
    out = d.decompress(raw, size + 1)
    if not d.eof and not d.needs_input:  # the hint was short: the rest, buffer growing
        out += d.decompress(b"")
    return out if d.eof and not d.unused_data else None


def decompress(raw: bytes, path) -> bytes:
    """Gunzip ``raw`` with ISA-L when available, else zlib.  Anything but a clean single-member
    stream is redone with zlib, so that results and error messages do not depend on ``isal``."""
    if _zlib is not zlib:
        try:
            out = _isal_gunzip(raw)
            if out is not None:
                return out
        except Exception:  # noqa: BLE001 - redone with zlib below, which reports the error
            pass
    return _zlib_decompress(raw, path)


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


#: the UTF-8 encoding of U+FEFF, which some editors (Windows Notepad) put at the start of a file
UTF8_BOM = b"\xef\xbb\xbf"


class MemoryFile(os.PathLike):
    """A file's bytes already read (``uefast trec_eval qrels -`` reads the run from standard
    input), for every reader that takes a path; ``name`` stands for it in messages."""

    def __init__(self, data: bytes, name: str = "-"):
        self.data, self.name = data, name

    def __fspath__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    @property
    def stem(self) -> str:
        return self.name


def read_bytes(path: str | os.PathLike) -> np.ndarray:
    """Read a file, decompressing it when it starts with the magic bytes of gzip, bzip2 or xz
    (read-only uint8).  A UTF-8 byte-order mark at the start of the (decompressed) text is
    dropped: it is no part of the first field (trec_eval would read ``\\ufeff301`` as the first
    qid and lose that topic's lines)."""
    if isinstance(path, MemoryFile):
        p, raw = path, path.data
    else:
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise InputError(f"{p}: cannot read file ({exc.strerror or exc})") from None
    raw = _decompressed(raw, p)
    if raw[:3] == UTF8_BOM:
        raw = raw[3:]
    return np.frombuffer(raw, dtype=np.uint8)


def _decompressed(raw: bytes, p) -> bytes:
    """``raw`` decompressed by its magic bytes (gzip, bzip2, xz), else as it is."""
    if raw[:2] == _GZIP_MAGIC:
        raw = decompress(raw, p)
    elif _is_bzip2(raw) or raw[:6] == b"\xfd7zXZ\x00":
        raw = _other_decompress(raw, p)
    elif raw[:4] == b"\x28\xb5\x2f\xfd":
        raise InputError(f"{p}: zstd-compressed; decompress it first (zstd -d): gzip, bzip2 and "
                         f"xz files are read directly")
    return raw


def _is_bzip2(raw: bytes) -> bool:
    """``BZh``, the block-size digit, then a block's or the end of stream's 48-bit magic (so a
    text file whose first word starts with "BZh" is not taken for one)."""
    return (raw[:3] == b"BZh" and raw[3:4].isdigit()
            and raw[4:10] in (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90"))


def _other_decompress(raw: bytes, path) -> bytes:
    """bzip2 or xz (by their magic bytes), with the standard library; a truncated or corrupt
    stream is an error naming the file (never a partial read)."""
    import bz2
    import lzma

    kind, mod = ("bzip2", bz2) if _is_bzip2(raw) else ("xz", lzma)
    try:
        return mod.decompress(raw)
    except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
        raise InputError(f"{path}: corrupt or truncated {kind} data ({exc})") from None


# --------------------------------------------------------------------------------------------
# Fused line scanners


@nb.njit(cache=True, nogil=True)
def _tok(buf, i, n):
    acc = 0
    while i < n:
        c = buf[i]
        if c == 32 or (9 <= c <= 13):
            break
        acc |= c
        i += 1
    return i, acc


@nb.njit(cache=True, nogil=True)
def _end(buf, i, n):
    """True if a field ends at i (whitespace or end of buffer)."""
    if i >= n:
        return True
    c = buf[i]
    return c == 32 or (9 <= c <= 13)


@nb.njit(cache=True, nogil=True)
def _scan_run(buf, strict, full, pow5):
    """Run lines ``qid Q0 docno rank score runid``.  Returns (ok, qs, qe, ds, de, dh, dw0, dw1,
    bits, slow_score, slow_rank, rs, re, rank, runid starts, runid ends) trimmed to the content
    rows; ok False: use the general reader.  Ranks and runid spans are only kept with ``full``
    (every rank is checked either way; without ``full`` those three arrays are empty)."""
    n = buf.size
    arrays = run_arrays(n, full)
    qs, qe, ds, de, dh, dw0, dw1, bits, rank, ys, ye, slow_s, slow_r = arrays
    ns = 0
    nr = 0
    rs, re_ = 0, 0
    row = 0
    i = 0
    while i < n:
        i = _skip(buf, i, n)
        if i >= n:
            break
        c = buf[i]
        if c == 10:  # blank line
            i += 1
            continue
        if c == 35:  # '#': comment line
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            continue
        # field 0: qid
        s = i
        i, acc = _tok(buf, i, n)
        qs[row] = s
        qe[row] = i
        bad = acc
        # field 1: Q0 (any bytes)
        i = _skip(buf, i, n)
        if _end(buf, i, n):
            return _fail(qs)
        i, _ = _tok(buf, i, n)
        # field 2: docno, and its hash table key
        i = _skip(buf, i, n)
        if _end(buf, i, n):
            return _fail(qs)
        s = i
        i, acc = _tok(buf, i, n)
        bad |= acc
        h, w0, w1 = _dkey(buf, s, i)
        ds[row] = s
        de[row] = i
        dh[row] = h
        dw0[row] = w0
        dw1[row] = w1
        # field 3: rank
        i = _skip(buf, i, n)
        if _end(buf, i, n):
            return _fail(qs)
        s = i
        if buf[i] == 45:  # '-'
            i += 1
        d0 = i
        v = 0
        while i < n and 48 <= buf[i] <= 57:
            v = v * 10 + (buf[i] - 48)
            i += 1
        if full:
            rank[row] = -v if s != d0 else v
        if i == d0 or i - d0 > 18 or not _end(buf, i, n):
            slow_r[nr] = row
            nr += 1
            i, acc = _tok(buf, s, n)
            bad |= acc
        # field 4: score
        i = _skip(buf, i, n)
        if _end(buf, i, n):
            return _fail(qs)
        s = i
        o, b, i = _parse_float_open(buf, s, n, pow5)
        bits[row] = b
        if not o or not _end(buf, i, n):
            slow_s[ns] = row
            ns += 1
            i, acc = _tok(buf, s, n)
            bad |= acc
        # field 5: runid
        i = _skip(buf, i, n)
        if _end(buf, i, n):
            return _fail(qs)
        s = i
        i, acc = _tok(buf, i, n)
        bad |= acc
        rs, re_ = s, i
        if full:
            ys[row] = s
            ye[row] = i
        if bad >= 128:
            return _fail(qs)
        # rest of the line
        i = _skip(buf, i, n)
        if i < n and buf[i] != 10:
            if strict:
                return _fail(qs)
            while i < n and buf[i] != 10:
                i += 1
        i += 1
        row += 1
    if row == 0:
        return _fail(qs)
    return run_result(True, arrays, row, ns, nr, rs, re_, full)


@nb.njit(cache=True, nogil=True)
def _fail(a):
    e = a[:0]
    u = np.zeros(0, np.uint64)
    return False, e, e, e, e, u, u, u, u, e, e, 0, 0, e, e, e


def scan_run(buf: np.ndarray, strict: bool, full: bool = True):
    """:func:`_scan_run`'s result (``full=False``: ranks and runid spans checked but not
    returned), found by the word-at-a-time scanner (:func:`uefast.io._words.scan_run_words`)
    when it takes the file, else by :func:`_scan_run`."""
    if _LITTLE_ENDIAN and buf.flags.c_contiguous:  # its loads assume contiguous little-endian words
        res = scan_run_words(buf, strict, full, _POW5)
        if res[0]:
            return res
    return _scan_run(buf, strict, full, _POW5)


@nb.njit(cache=True, nogil=True)
def scan_qrels(buf):
    """Qrels lines ``qid iter docno rel``.  Returns (ok, qs, qe, ds, de, label, slow_label)."""
    n = buf.size
    cap = n // 7 + 2
    qs = np.empty(cap, np.int64)
    qe = np.empty(cap, np.int64)
    ds = np.empty(cap, np.int64)
    de = np.empty(cap, np.int64)
    lab = np.empty(cap, np.int64)
    slow = np.empty(cap, np.int64)
    nsl = 0
    row = 0
    i = 0
    ok = True
    while i < n:
        f = 0
        while True:
            while i < n and _sp(buf[i]):
                i += 1
            if i >= n or buf[i] == 10:
                i += 1
                break
            if f == 0 and buf[i] == 35:
                while i < n and buf[i] != 10:
                    i += 1
                i += 1
                break
            s = i
            acc = 0
            while i < n:
                c = buf[i]
                if c == 32 or (9 <= c <= 13):
                    break
                acc |= c
                i += 1
            if f != 1 and acc >= 128:
                ok = False
            if f == 0:
                qs[row] = s
                qe[row] = i
            elif f == 2:
                ds[row] = s
                de[row] = i
            elif f == 3:
                o, v = _parse_int(buf, s, i)
                lab[row] = v
                if not o:
                    slow[nsl] = row
                    nsl += 1
            f += 1
        if f > 0:
            if f != 4:
                ok = False
            row += 1
            if not ok:
                break
    if row == 0:
        ok = False
    return ok, qs[:row], qe[:row], ds[:row], de[:row], lab[:row], slow[:nsl]

@nb.njit(cache=True, nogil=True)
def next_field(buf, pos):
    """(starts, ends) of the whitespace-delimited field following each byte position."""
    n = buf.size
    s = np.empty(pos.size, np.int64)
    e = np.empty(pos.size, np.int64)
    for k in range(pos.size):
        i = pos[k]
        while i < n and _sp(buf[i]):
            i += 1
        s[k] = i
        while i < n and not (buf[i] == 32 or (9 <= buf[i] <= 13)):
            i += 1
        e[k] = i
    return s, e
