"""Fused single-pass scanners for TREC runs and qrels (the ``uefast trec_eval`` fast path).

One Numba pass per file tokenizes every line, parses the score (correctly rounded: Eisel-Lemire,
see :func:`_eisel_lemire`), checks the rank, and hashes the docno; no Arrow string column and no
Python object is built per line.  Open-addressing hash tables map qids to topic codes, docnos to
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
import zlib
from pathlib import Path

import numba as nb
import numpy as np

from uefast.errors import InputError

__all__ = ["read_bytes", "decompress", "parse_float_bytes", "scan_run", "scan_qrels", "fnv_rows",
           "dkey_rows", "build_table", "topic_codes", "intern_rows", "next_field", "group_rows",
           "build_topic_tables", "probe_topic_rows", "run_group", "run_index"]

_U = np.uint64
_GZIP_MAGIC = b"\x1f\x8b"

try:  # optional accelerator (ISA-L inflate, 2-3x faster than zlib); same output bytes
    from isal import isal_zlib as _zlib  # type: ignore
except ImportError:  # pragma: no cover - depends on the environment
    _zlib = zlib


def _zlib_decompress(raw: bytes, path) -> bytes:
    try:
        d = zlib.decompressobj(31)
        out = d.decompress(raw)
        if d.unused_data:  # multi-member gzip
            out = gzip.decompress(raw)
        return out
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: corrupt gzip data ({exc})") from None


def decompress(raw: bytes, path) -> bytes:
    """Gunzip ``raw`` with ISA-L when available, else zlib.  Anything but a clean single-member
    stream is redone with zlib, so that results and error messages do not depend on ``isal``."""
    if _zlib is not zlib:
        try:
            d = _zlib.decompressobj(31)
            out = d.decompress(raw)
            if d.eof and not d.unused_data:
                return out
        except Exception:  # noqa: BLE001 - redone with zlib below, which reports the error
            pass
    return _zlib_decompress(raw, path)


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view: every byte buffer handed to the kernels is read-only, so that each
    kernel is compiled (and cached) for one signature only."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def read_bytes(path: str | os.PathLike) -> np.ndarray:
    """Read a file, gunzipping it when it starts with the gzip magic bytes (read-only uint8)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read file ({exc.strerror or exc})") from None
    if raw[:2] == _GZIP_MAGIC:
        raw = decompress(raw, p)
    return np.frombuffer(raw, dtype=np.uint8)


# --------------------------------------------------------------------------------------------
# Correctly rounded decimal -> binary64 (Eisel-Lemire, as in fast_float / Arrow / strtod for
# inputs with at most 19 significant digits; others go to the slow path).


def _pow5_table() -> np.ndarray:
    """fast_float's 128-bit approximations of 5**q, q in [-342, 308] (hi, lo pairs)."""
    out = []
    for q in range(-342, 0):
        p5 = 5 ** -q
        z = p5.bit_length()  # smallest z with 2**z >= p5 (p5 is never a power of two here)
        c = 2 ** (z + 127 if q >= -27 else 2 * z + 128) // p5 + 1
        if c.bit_length() > 128:
            c >>= c.bit_length() - 128
        out.append(c)
    for q in range(0, 309):
        p5 = 5 ** q
        bl = p5.bit_length()
        out.append(p5 << (128 - bl) if bl <= 128 else p5 >> (bl - 128))
    flat = []
    for c in out:
        flat.append(c >> 64)
        flat.append(c & ((1 << 64) - 1))
    return np.array(flat, dtype=np.uint64)


_POW5 = _pow5_table()


@nb.njit(cache=True, nogil=True)
def _mul128(a, b):
    a_lo = a & _U(0xFFFFFFFF)
    a_hi = a >> _U(32)
    b_lo = b & _U(0xFFFFFFFF)
    b_hi = b >> _U(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> _U(32)) + (p1 & _U(0xFFFFFFFF)) + (p2 & _U(0xFFFFFFFF))
    lo = (p0 & _U(0xFFFFFFFF)) | (mid << _U(32))
    hi = p3 + (p1 >> _U(32)) + (p2 >> _U(32)) + (mid >> _U(32))
    return hi, lo


@nb.njit(cache=True, nogil=True)
def _lz(w):
    n = 0
    top = _U(1) << _U(63)
    while (w & top) == _U(0):
        w = w << _U(1)
        n += 1
    return n


@nb.njit(cache=True, nogil=True)
def _eisel_lemire(q, w, pow5):
    """Bits of the binary64 nearest to ``w * 10**q`` (w < 2**64, positive)."""
    if w == _U(0) or q < -342:
        return _U(0)
    if q > 308:
        return _U(0x7FF) << _U(52)
    lz = _lz(w)
    w = w << _U(lz)
    idx = 2 * (q + 342)
    hi, lo = _mul128(w, pow5[idx])
    mask = _U(0xFFFFFFFFFFFFFFFF) >> _U(55)
    if (hi & mask) == mask:
        hi2, lo2 = _mul128(w, pow5[idx + 1])
        lo = lo + hi2
        if hi2 > lo:
            hi = hi + _U(1)
    upperbit = np.int64(hi >> _U(63))
    shift = upperbit + 64 - 52 - 3
    mant = hi >> _U(shift)
    power2 = (((152170 + 65536) * q) >> 16) + 63 + upperbit - lz + 1023
    if power2 <= 0:  # subnormal
        if -power2 + 1 >= 64:
            return _U(0)
        mant = mant >> _U(-power2 + 1)
        mant = mant + (mant & _U(1))
        mant = mant >> _U(1)
        p2 = 0 if mant < (_U(1) << _U(52)) else 1
        return (_U(p2) << _U(52)) | (mant & ~(_U(1) << _U(52)))
    if lo <= _U(1) and q >= -4 and q <= 23 and (mant & _U(3)) == _U(1):
        if (mant << _U(shift)) == hi:
            mant = mant & ~_U(1)
    mant = mant + (mant & _U(1))
    mant = mant >> _U(1)
    if mant >= (_U(2) << _U(52)):
        mant = _U(1) << _U(52)
        power2 += 1
    mant = mant & ~(_U(1) << _U(52))
    if power2 >= 0x7FF:
        return _U(0x7FF) << _U(52)
    return (_U(power2) << _U(52)) | mant


@nb.njit(cache=True, nogil=True)
def _digits(buf, p, n, w, nsig):
    """Append the digits at p to w: (w, nsig, p).  (An 8-digits-at-a-time SWAR variant measured
    slower here: scores have few digits per run of digits.)"""
    while p < n:
        c = buf[p]
        if c < 48 or c > 57:
            break
        w = w * _U(10) + _U(c - 48)
        nsig += 1
        p += 1
    return w, nsig, p


@nb.njit(cache=True, nogil=True)
def _parse_float_open(buf, s, n, pow5):
    """Parse the longest ``[+-]?(d+(.d*)?|.d+)([eE][+-]?d+)?`` prefix at ``s`` with at most
    19 significant digits, correctly rounded: (ok, bits, end).  ok False: leave it to Arrow."""
    p = s
    neg = False
    c = buf[p]
    if c == 45 or c == 43:  # '-' '+'
        neg = c == 45
        p += 1
    p0 = p
    while p < n and buf[p] == 48:  # leading zeros: not significant
        p += 1
    w, nsig, p = _digits(buf, p, n, _U(0), 0)
    ndig = p - p0
    frac = 0
    if p < n and buf[p] == 46:  # '.'
        p += 1
        f0 = p
        if nsig == 0:
            while p < n and buf[p] == 48:
                p += 1
        w, nsig, p = _digits(buf, p, n, w, nsig)
        frac = p - f0
        ndig += frac
    if ndig == 0 or nsig > 19:
        return False, _U(0), p
    ex = 0
    if p < n and (buf[p] == 101 or buf[p] == 69):  # 'e' 'E'
        p += 1
        eneg = False
        if p < n and (buf[p] == 45 or buf[p] == 43):
            eneg = buf[p] == 45
            p += 1
        nd = 0
        while p < n and 48 <= buf[p] <= 57:
            if nd < 8:
                ex = ex * 10 + (buf[p] - 48)
            nd += 1
            p += 1
        if nd == 0 or nd >= 8:
            return False, _U(0), p
        if eneg:
            ex = -ex
    bits = _eisel_lemire(ex - frac, w, pow5)
    if neg:
        bits = bits | (_U(1) << _U(63))
    return True, bits, p


@nb.njit(cache=True, nogil=True)
def _parse_int(buf, s, e):
    """(ok, value) for ``-?\\d{1,18}``."""
    p = s
    neg = buf[p] == 45
    if neg:
        p += 1
    if p == e or e - p > 18:
        return False, 0
    v = 0
    while p < e:
        c = buf[p]
        if not (48 <= c <= 57):
            return False, 0
        v = v * 10 + (c - 48)
        p += 1
    return True, -v if neg else v


@nb.njit(cache=True, nogil=True)
def _parse_floats(data, starts, ends, pow5):
    n = starts.size
    bits = np.empty(n, np.uint64)
    ok = np.empty(n, np.bool_)
    for i in range(n):
        o, b, p = _parse_float_open(data, starts[i], ends[i], pow5)
        ok[i] = o and p == ends[i]
        bits[i] = b
    return ok, bits


def parse_float_bytes(data: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """Parse ``data[starts[i]:ends[i]]`` as floats: ``(ok, values)`` (``ok`` False: not taken)."""
    ok, bits = _parse_floats(data, starts.astype(np.int64), ends.astype(np.int64), _POW5)
    return ok, bits.view(np.float64)


# --------------------------------------------------------------------------------------------
# Hashing and open-addressing tables


@nb.njit(cache=True, nogil=True)
def _fnv(data, s, e):
    """64-bit hash of data[s:e]: bytes packed 8 per word (short dependency chains), each word
    folded in with one multiply; the length goes into the final mix.  Not cryptographic: every
    hash match is verified byte by byte."""
    h = _U(14695981039346656037)
    w = _U(0)
    k = 0
    for b in range(s, e):
        w = (w << _U(8)) | _U(data[b])
        k += 1
        if k == 8:
            h = (h ^ w) * _U(0x9E3779B97F4A7C15)
            h = h ^ (h >> _U(29))
            w = _U(0)
            k = 0
    h = (h ^ w ^ (_U(e - s) << _U(56))) * _U(0x9E3779B97F4A7C15)
    return h ^ (h >> _U(32))


@nb.njit(cache=True, nogil=True)
def _mix(h):
    h = (h ^ (h >> _U(33))) * _U(0xFF51AFD7ED558CCD)
    h = (h ^ (h >> _U(33))) * _U(0xC4CEB9FE1A85EC53)
    return h ^ (h >> _U(33))


@nb.njit(cache=True, nogil=True)
def _key(code, dh):
    return _mix(dh ^ (_U(code + 1) * _U(0x9E3779B97F4A7C15)))


@nb.njit(cache=True, nogil=True)
def _eqb(a, as_, ae, b, bs, be):
    if ae - as_ != be - bs:
        return False
    for k in range(ae - as_):
        if a[as_ + k] != b[bs + k]:
            return False
    return True


_EMPTY = _U(0xFFFFFFFFFFFFFFFF)


@nb.njit(cache=True, nogil=True)
def _dkey(data, s, e):
    """(hash, w0, w1) of a docno: w0 / w1 pack its first / next 8 bytes, so that for docnos of
    at most 16 bytes (w0, w1, length) *is* the docno and hash-table matches need no byte
    comparison.  The hash folds every 8-byte word in with one multiply (the same function is
    inlined in :func:`_scan_run`)."""
    h = _U(14695981039346656037)
    w = _U(0)
    w0 = _U(0)
    w1 = _U(0)
    k = 0
    c8 = 0
    for b in range(s, e):
        w = (w << _U(8)) | _U(data[b])
        k += 1
        if k == 8:
            if c8 == 0:
                w0 = w
            elif c8 == 1:
                w1 = w
            c8 += 1
            h = (h ^ w) * _U(0x9E3779B97F4A7C15)
            h = h ^ (h >> _U(29))
            w = _U(0)
            k = 0
    if k > 0:
        if c8 == 0:
            w0 = w
        elif c8 == 1:
            w1 = w
    h = (h ^ w ^ (_U(e - s) << _U(56))) * _U(0x9E3779B97F4A7C15)
    return h ^ (h >> _U(32)), w0, w1


@nb.njit(cache=True, nogil=True)
def dkey_rows(data, starts, ends):
    n = starts.size
    h = np.empty(n, np.uint64)
    w0 = np.empty(n, np.uint64)
    w1 = np.empty(n, np.uint64)
    for i in range(n):
        h[i], w0[i], w1[i] = _dkey(data, starts[i], ends[i])
    return h, w0, w1


@nb.njit(cache=True, nogil=True)
def _wfind(tab, base, mask, h, w0, w1, ln, r_data, r_s, r_e, data, s, e):
    """Find the docno in a (w0, w1, meta) table region: (row or -1, slot)."""
    lm = _U(min(ln, 0xFFFF))
    p = h & mask
    while True:
        j = 3 * (base + np.int64(p))
        m = tab[j + 2]
        if m == _EMPTY:
            return -1, p
        if tab[j] == w0 and tab[j + 1] == w1 and (m & _U(0xFFFF)) == lm:
            r = np.int64(m >> _U(16))
            if ln <= 16 or _eqb(r_data, r_s[r], r_e[r], data, s, e):
                return r, p
        p = (p + _U(1)) & mask


@nb.njit(cache=True, nogil=True)
def _wput(tab, base, p, w0, w1, ln, row):
    j = 3 * (base + np.int64(p))
    tab[j] = w0
    tab[j + 1] = w1
    tab[j + 2] = (_U(row) << _U(16)) | _U(min(ln, 0xFFFF))


@nb.njit(cache=True, nogil=True)
def fnv_rows(data, starts, ends):
    n = starts.size
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _fnv(data, starts[i], ends[i])
    return out


def _cap(n):
    c = 16
    while c < 2 * n:
        c *= 2
    return c


@nb.njit(cache=True, nogil=True)
def build_table(code, dh, data, starts, ends, cap):
    """Table of rows keyed by (code, string); returns (slots, keys, dup_j) where dup_j is the
    first row whose key was already present (-1: none)."""
    slots = np.full(cap, -1, np.int64)
    keys = np.zeros(cap, np.uint64)
    mask = _U(cap - 1)
    for i in range(code.size):
        k = _key(code[i], dh[i])
        p = k & mask
        while True:
            r = slots[p]
            if r < 0:
                slots[p] = i
                keys[p] = k
                break
            if keys[p] == k and code[r] == code[i] and _eqb(data, starts[r], ends[r], data, starts[i], ends[i]):
                return slots, keys, i
            p = (p + _U(1)) & mask
    return slots, keys, -1


@nb.njit(cache=True, nogil=True)
def _probe(slots, keys, r_code, r_data, r_s, r_e, code, k, data, s, e):
    mask = _U(slots.size - 1)
    p = k & mask
    while True:
        r = slots[p]
        if r < 0:
            return -1
        if keys[p] == k and r_code[r] == code and _eqb(r_data, r_s[r], r_e[r], data, s, e):
            return r
        p = (p + _U(1)) & mask


@nb.njit(cache=True, nogil=True)
def topic_codes(data, starts, ends, t_data, t_s, t_e, t_slots, t_keys):
    """Topic code of each row (-1: not a topic of the table); consecutive equal qids hashed once."""
    n = starts.size
    out = np.empty(n, np.int64)
    zero = np.zeros(t_s.size, np.int64)
    ps, pe, pc = np.int64(-1), np.int64(-1), np.int64(-1)
    for i in range(n):
        s, e = starts[i], ends[i]
        if ps >= 0 and _eqb(data, ps, pe, data, s, e):
            out[i] = pc
            continue
        k = _key(0, _fnv(data, s, e))
        pc = _probe(t_slots, t_keys, zero, t_data, t_s, t_e, 0, k, data, s, e)
        ps, pe = s, e
        out[i] = pc
    return out


# --------------------------------------------------------------------------------------------
# Fused line scanners


@nb.njit(cache=True, nogil=True)
def _sp(c):
    return c == 32 or (9 <= c <= 13 and c != 10)


@nb.njit(cache=True, nogil=True)
def _skip(buf, i, n):
    while i < n and _sp(buf[i]):
        i += 1
    return i


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
def _scan_run(buf, strict, pow5):
    """Run lines ``qid Q0 docno rank score runid``.  Returns (ok, qs, qe, ds, de, dh, dw0, dw1,
    bits, slow_score, slow_rank, rs, re, rank, runid starts, runid ends) trimmed to the content
    rows; ok False: use the general reader."""
    n = buf.size
    cap = n // 11 + 2
    qs = np.empty(cap, np.int64)
    qe = np.empty(cap, np.int64)
    ds = np.empty(cap, np.int64)
    de = np.empty(cap, np.int64)
    dh = np.empty(cap, np.uint64)
    dw0 = np.empty(cap, np.uint64)
    dw1 = np.empty(cap, np.uint64)
    bits = np.empty(cap, np.uint64)
    rank = np.empty(cap, np.int64)
    ys = np.empty(cap, np.int64)
    ye = np.empty(cap, np.int64)
    slow_s = np.empty(cap, np.int64)
    slow_r = np.empty(cap, np.int64)
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
        # field 2: docno, hashed while scanning
        i = _skip(buf, i, n)
        if _end(buf, i, n):
            return _fail(qs)
        s = i
        h = _U(14695981039346656037)
        w = _U(0)
        w0 = _U(0)
        w1 = _U(0)
        k = 0
        c8 = 0
        while i < n:  # inlined _dkey
            c = buf[i]
            if c == 32 or (9 <= c <= 13):
                break
            bad |= c
            w = (w << _U(8)) | _U(c)
            k += 1
            if k == 8:
                if c8 == 0:
                    w0 = w
                elif c8 == 1:
                    w1 = w
                c8 += 1
                h = (h ^ w) * _U(0x9E3779B97F4A7C15)
                h = h ^ (h >> _U(29))
                w = _U(0)
                k = 0
            i += 1
        if k > 0:
            if c8 == 0:
                w0 = w
            elif c8 == 1:
                w1 = w
        h = (h ^ w ^ (_U(i - s) << _U(56))) * _U(0x9E3779B97F4A7C15)
        ds[row] = s
        de[row] = i
        dh[row] = h ^ (h >> _U(32))
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
    return (True, qs[:row], qe[:row], ds[:row], de[:row], dh[:row], dw0[:row], dw1[:row], bits[:row],
            slow_s[:ns], slow_r[:nr], rs, re_, rank[:row], ys[:row], ye[:row])


@nb.njit(cache=True, nogil=True)
def _fail(a):
    e = a[:0]
    u = np.zeros(0, np.uint64)
    return False, e, e, e, e, u, u, u, u, e, e, 0, 0, e, e, e


def scan_run(buf: np.ndarray, strict: bool):
    return _scan_run(buf, strict, _POW5)


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


# --------------------------------------------------------------------------------------------
# Ordering: topic, score descending, docno descending (bytes)


@nb.njit(cache=True, nogil=True)
def _cmpb(data, s, e, i, j):
    a0, a1, b0, b1 = s[i], e[i], s[j], e[j]
    la, lb = a1 - a0, b1 - b0
    for k in range(min(la, lb)):
        x, y = data[a0 + k], data[b0 + k]
        if x != y:
            return 1 if x > y else -1
    if la == lb:
        return 0
    return 1 if la > lb else -1


@nb.njit(cache=True, nogil=True)
def _sort_ties(seg, tmp, data, s, e):
    """Sort ``seg`` (row ids) by docno descending (insertion sort if short, else merge sort)."""
    m = seg.size
    if m <= 16:
        for a in range(1, m):
            x = seg[a]
            b = a - 1
            while b >= 0 and _cmpb(data, s, e, seg[b], x) < 0:
                seg[b + 1] = seg[b]
                b -= 1
            seg[b + 1] = x
        return
    width = 1
    src = seg
    dst = tmp[:m]
    while width < m:
        lo = 0
        while lo < m:
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            a, b, k = lo, mid, lo
            while a < mid and b < hi:
                if _cmpb(data, s, e, src[a], src[b]) >= 0:
                    dst[k] = src[a]
                    a += 1
                else:
                    dst[k] = src[b]
                    b += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
            lo = hi
        for k in range(m):
            src[k] = dst[k]
        width *= 2


@nb.njit(cache=True, nogil=True)
def intern_rows(data, starts, ends):
    """Codes of the strings ``data[starts[i]:ends[i]]`` in order of first appearance, and the
    first row of every distinct string (consecutive equal strings compared, not hashed)."""
    n = starts.size
    code = np.empty(n, np.int64)
    cap = 16
    slots = np.full(cap, -1, np.int64)
    keys = np.zeros(cap, np.uint64)
    first = np.empty(16, np.int64)
    nu = 0
    ps, pe, pc = np.int64(-1), np.int64(-1), np.int64(-1)
    for i in range(n):
        s, e = starts[i], ends[i]
        if ps >= 0 and _eqb(data, ps, pe, data, s, e):
            code[i] = pc
            continue
        k = _mix(_fnv(data, s, e))
        mask = _U(cap - 1)
        p = k & mask
        c = -1
        while True:
            r = slots[p]
            if r < 0:
                break
            f = first[r]
            if keys[p] == k and _eqb(data, starts[f], ends[f], data, s, e):
                c = r
                break
            p = (p + _U(1)) & mask
        if c < 0:
            c = nu
            if nu == first.size:
                nf = np.empty(2 * nu, np.int64)
                nf[:nu] = first
                first = nf
            first[nu] = i
            nu += 1
            slots[p] = c
            keys[p] = k
            if 2 * nu > cap:  # grow and rehash
                cap *= 4
                slots = np.full(cap, -1, np.int64)
                keys = np.zeros(cap, np.uint64)
                mask = _U(cap - 1)
                for u in range(nu):
                    f = first[u]
                    ku = _mix(_fnv(data, starts[f], ends[f]))
                    pu = ku & mask
                    while slots[pu] >= 0:
                        pu = (pu + _U(1)) & mask
                    slots[pu] = u
                    keys[pu] = ku
        code[i] = c
        ps, pe, pc = s, e, c
    return code, first[:nu].copy()


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


# --------------------------------------------------------------------------------------------
# Per-topic tables: qrels rows grouped by topic, one small open-addressing table per topic, so
# that a run (grouped by topic too) is joined inside the cache.


@nb.njit(cache=True, nogil=True)
def _pow2(m):
    c = 4
    while c < m:
        c *= 2
    return c


@nb.njit(cache=True, nogil=True)
def group_rows(code, nq, data, starts, ends):
    """Rows grouped by code (stable): (perm, row_start per code, gathered bytes, new starts/ends)."""
    n = code.size
    cnt = np.zeros(nq + 1, np.int64)
    for i in range(n):
        cnt[code[i] + 1] += 1
    for t in range(nq):
        cnt[t + 1] += cnt[t]
    pos = cnt[:nq].copy()
    perm = np.empty(n, np.int64)
    for i in range(n):
        perm[pos[code[i]]] = i
        pos[code[i]] += 1
    total = 0
    for i in range(n):
        total += ends[i] - starts[i]
    out = np.empty(total, np.uint8)
    ns = np.empty(n, np.int64)
    ne = np.empty(n, np.int64)
    p = 0
    for k in range(n):
        i = perm[k]
        ns[k] = p
        for b in range(starts[i], ends[i]):
            out[p] = data[b]
            p += 1
        ne[k] = p
    return perm, cnt, out, ns, ne


@nb.njit(cache=True, nogil=True)
def build_topic_tables(row_start, data, starts, ends):
    """One (w0, w1, meta) table per topic over rows row_start[t]:row_start[t+1].  Returns
    (tab, slot_start, dup_row): dup_row is the first row (grouped order) whose docno repeats
    within its topic, -1 if none."""
    nq = row_start.size - 1
    soff = np.zeros(nq + 1, np.int64)
    for t in range(nq):
        m = row_start[t + 1] - row_start[t]
        soff[t + 1] = soff[t] + _pow2(m + (m + 1) // 2)  # load factor 1/3 .. 2/3
    tab = np.full(3 * soff[nq], _EMPTY, np.uint64)
    dup = -1
    for t in range(nq):
        base = soff[t]
        mask = _U(soff[t + 1] - base - 1)
        for i in range(row_start[t], row_start[t + 1]):
            h, w0, w1 = _dkey(data, starts[i], ends[i])
            ln = ends[i] - starts[i]
            r, p = _wfind(tab, base, mask, h, w0, w1, ln, data, starts, ends, data, starts[i], ends[i])
            if r >= 0:
                if dup < 0 or i < dup:
                    dup = i
            else:
                _wput(tab, base, p, w0, w1, ln, i)
    return tab, soff, dup


@nb.njit(cache=True, nogil=True)
def probe_topic_rows(code, data, starts, ends, tab, soff, r_data, r_s, r_e):
    """Per row with code >= 0: the qrels row (grouped order) judging the same docno, or -1."""
    n = code.size
    out = np.full(n, -1, np.int64)
    for i in range(n):
        t = code[i]
        if t >= 0:
            h, w0, w1 = _dkey(data, starts[i], ends[i])
            base = soff[t]
            out[i], _ = _wfind(tab, base, _U(soff[t + 1] - base - 1), h, w0, w1, ends[i] - starts[i],
                               r_data, r_s, r_e, data, starts[i], ends[i])
    return out


@nb.njit(cache=True, nogil=True)
def run_group(buf, qs, qe, ds, de, dh, dw0, dw1):
    """Group a scanned run by qid (codes in order of first appearance) and detect a repeated
    (qid, docno).  Returns (ok, first row of every qid, group offsets, rows grouped); ok False:
    some docno repeats (the caller then goes through the general reader and its error)."""
    n = qs.size
    rcode, first = intern_rows(buf, qs, qe)
    nr = first.size
    cnt = np.zeros(nr + 1, np.int64)
    for i in range(n):
        cnt[rcode[i] + 1] += 1
    maxb = 0
    for u in range(nr):
        maxb = max(maxb, cnt[u + 1])
        cnt[u + 1] += cnt[u]
    pos = cnt[:nr].copy()
    byr = np.empty(n, np.int64)
    for i in range(n):
        byr[pos[rcode[i]]] = i
        pos[rcode[i]] += 1
    dtab = np.empty(3 * _pow2(2 * maxb), np.uint64)
    zero = np.int64(0)
    for u in range(nr):
        a, b = cnt[u], cnt[u + 1]
        cap = _pow2(2 * (b - a))
        mask = _U(cap - 1)
        dtab[:3 * cap] = _EMPTY
        for k in range(a, b):
            i = byr[k]
            s, e = ds[i], de[i]
            r, p = _wfind(dtab, zero, mask, dh[i], dw0[i], dw1[i], e - s, buf, ds, de, buf, s, e)
            if r >= 0:
                return False, first, cnt, byr
            _wput(dtab, zero, p, dw0[i], dw1[i], e - s, i)
    return True, first, cnt, byr


@nb.njit(cache=True, nogil=True)
def run_index(buf, qs, qe, ds, de, dh, dw0, dw1, first, cnt, byr, score, nq, t_data, t_s, t_e, t_slots,
              t_keys, tab, soff, r_data, r_s, r_e):
    """Join a grouped run (:func:`run_group`) to the qrels: the qrels row of every run row
    (-1: unjudged or topic without qrels) and the ranking (qrels topic order, score descending,
    docno descending by bytes).  Returns (order, counts per qrels topic, qrels row per row, and a
    checksum of the table prefetch, to be ignored)."""
    n = qs.size
    nr = first.size
    zero = np.zeros(t_s.size, np.int64)
    ubyt = np.full(nq, -1, np.int64)
    rr = np.full(n, -1, np.int64)
    maxb = 0
    warm = _U(0)
    for u in range(nr):
        f = first[u]
        t = _probe(t_slots, t_keys, zero, t_data, t_s, t_e, 0, _key(0, _fnv(buf, qs[f], qe[f])), buf, qs[f], qe[f])
        if t < 0:
            continue
        ubyt[t] = u
        maxb = max(maxb, cnt[u + 1] - cnt[u])
        tbase = soff[t]
        tmask = _U(soff[t + 1] - tbase - 1)
        # read the topic's table once in address order (hardware prefetch) before the random
        # probes: ~30% faster than taking a cache miss on the first touch of every line
        for j in range(3 * tbase, 3 * soff[t + 1], 8):
            warm ^= tab[j]
        for k in range(cnt[u], cnt[u + 1]):
            i = byr[k]
            rr[i], _ = _wfind(tab, tbase, tmask, dh[i], dw0[i], dw1[i], de[i] - ds[i], r_data, r_s, r_e,
                              buf, ds[i], de[i])
    counts = np.zeros(nq, np.int64)
    total = 0
    for t in range(nq):
        u = ubyt[t]
        if u >= 0:
            counts[t] = cnt[u + 1] - cnt[u]
            total += counts[t]
    order = np.empty(total, np.int64)
    tmp = np.empty(maxb, np.int64)
    o = 0
    for t in range(nq):
        u = ubyt[t]
        if u < 0:
            continue
        a, b = cnt[u], cnt[u + 1]
        m = b - a
        seg = order[o:o + m]
        seg[:] = byr[a:b]
        o += m
        srt = True
        for k in range(m - 1):
            if score[seg[k]] < score[seg[k + 1]]:
                srt = False
                break
        if not srt:
            sc = np.empty(m, np.float64)
            for k in range(m):
                sc[k] = -score[seg[k]]
            idx = np.argsort(sc, kind="mergesort")
            cp = seg.copy()
            for k in range(m):
                seg[k] = cp[idx[k]]
        k = 0
        while k < m:
            k2 = k + 1
            while k2 < m and score[seg[k2]] == score[seg[k]]:
                k2 += 1
            if k2 - k > 1:
                _sort_ties(seg[k:k2], tmp, buf, ds, de)
            k = k2
    return order, counts, rr, warm
