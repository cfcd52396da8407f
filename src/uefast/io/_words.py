"""Word-at-a-time scanning of TREC run lines: the fast path in front of the byte scanner
(:func:`uefast.io._fast._scan_run`).

The byte scanner tests every byte for whitespace and breaks out of a loop at every field end (a
mispredicted branch per field). Here each step loads 8 bytes as one little-endian 64-bit word
(unaligned) and classifies all of them at once with carry-free byte arithmetic ("SWAR"; Lamport,
*Multiple byte processing with full-word instructions*, CACM 1975; Warren, *Hacker's Delight*
ch. 6), so that a field end is one trailing-zero count:

* byte <= 32:      high bit of ``~(x + 0x5F..5F)``  (every byte < 128, so no carry crosses bytes);
* ASCII digit:     not (byte >= 0x3A, high bit of ``x + 0x46..46``) and byte >= 0x30 (high bit of
  ``(x | 0x80..80) - 0x30..30``);
* up to 8 digits -> integer: fast_float's ``parse_eight_digits_unrolled`` (Lemire, *Number
  parsing at a gigabyte per second*, Software: Practice and Experience 51(8), 2021), the digits
  moved to the top bytes so that missing ones act as leading zeros;
* decimal -> binary64: Clinger's exact fast path (*How to read floating point numbers
  accurately*, PLDI 1990: w <= 2^53 and 10^f <= 10^22 are exact doubles, one IEEE division is
  correctly rounded), else the same Eisel-Lemire routine as the byte scanner.

Results are identical to the byte scanner's, by construction: :func:`_plain` first checks that
every byte is ASCII and that the only bytes <= 32 are whitespace (else the file goes to the byte
scanner, which knows every odd case), any line the byte scanner would refuse sends the whole file
back to it, and numbers outside the fast forms (exponents, ``+``, more than 19 digits, ranks
outside 1..8 plain digits) are parsed by the byte scanner's own routines. Tested against the byte
scanner in ``tests/test_trec_words.py``.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast._intrinsics import _bswap64, _cttz64, _f64_bits, _load_le64
from uefast.io._floatparse import _eisel_lemire, _parse_float_open

__all__ = ["run_arrays", "run_result", "scan_run_words"]

_U = np.uint64
_jit = nb.njit(cache=True, nogil=True)
# the per-word helpers: separate Numba functions, which LLVM inlines into their callers when it
# links them. They were inlined at Numba IR level (``inline="always"``; "as separate calls the
# scanner ran ~1.2x slower", measured then), but every IR-level copy is typed and lowered again:
# with the helpers of io/_floatparse and io/_topics, ~5 s of CPU of the first-ever
# ``uefast trec_eval`` (benchmarks/RESULTS_startup.md, with the warm cost). They allocate
# nothing: no reference counting.
_inl = nb.njit(cache=True, nogil=True, _nrt=False)
# allocates nothing, runs per line: no reference counting (see uefast.io._hashtab._no_rc)
_jit_no_rc = nb.njit(cache=True, nogil=True, _nrt=False)
_HI = _U(0x8080808080808080)
_LO4 = _U(0x0F0F0F0F0F0F0F0F)
_C = _U(0x9E3779B97F4A7C15)
_P10U = np.array([10 ** k for k in range(20)], dtype=np.uint64)
_P10F = np.array([10.0 ** k for k in range(23)])


@_inl
def _ld(buf, p, n):
    """The 8 bytes at position p as a little-endian word; bytes at or past n read as 0."""
    if p + 8 <= n:
        return _load_le64(buf, p)
    x = _U(0)
    for k in range(8):
        if p + k < n:
            x |= _U(buf[p + k]) << _U(8 * k)
    return x


@_inl
def _fend(buf, p, n):
    """First position >= p whose byte is <= 32 (whitespace, once :func:`_plain` holds), or n."""
    while True:
        m = ~(_ld(buf, p, n) + _U(0x5F5F5F5F5F5F5F5F)) & _HI
        if m != _U(0):
            return min(p + np.int64(_cttz64(m) >> _U(3)), n)
        p += 8


@_inl
def _ndig(x):
    """How many of x's bytes, in memory order, are ASCII digits before the first other byte."""
    nd = ((x + _U(0x4646464646464646)) | ~((x | _HI) - _U(0x3030303030303030))) & _HI
    if nd == _U(0):
        return 8
    return np.int64(_cttz64(nd) >> _U(3))


@_inl
def _val(x, k):
    """Value of x's first k (1..8) bytes as decimal digits, most significant first (fast_float's
    parse_eight_digits_unrolled on the digits shifted to the top, zeros before them)."""
    d = (x & _LO4) << _U(8 * (8 - k))
    d = d * _U(10) + (d >> _U(8))
    d = (((d & _U(0x000000FF000000FF)) * _U(0x000F424000000064))
         + (((d >> _U(16)) & _U(0x000000FF000000FF)) * _U(0x0000271000000001))) >> _U(32)
    return d & _U(0xFFFFFFFF)


@_inl
def _digit_run(buf, p, n):
    """The digits starting at p: (value, count, end). A count > 19 means too many (the value is
    then meaningless)."""
    w = _U(0)
    c = 0
    while True:
        x = _ld(buf, p, n)
        k = _ndig(x)
        if k > 0:
            w = w * _P10U[k] + _val(x, k)
            c += k
            p += k
        if k < 8 or c > 19:
            return w, c, p


_LOW = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)  # k low bytes
_DOT = _U(0x2E2E2E2E2E2E2E2E)
_ONES = _U(0x0101010101010101)


@_inl
def _nondigit(x):
    """High bit of each byte of x that is not an ASCII digit (bytes < 128: no carries)."""
    return ((x + _U(0x4646464646464646)) | ~((x | _HI) - _U(0x3030303030303030))) & _HI


@_inl
def _short_decimal(buf, p, e, n):
    """(ok, digits as an integer, digits after the point) of ``d*(.d*)?`` in [p, e) when that is
    1..16 bytes with at least one digit, found without a loop: two words loaded; the point is
    the first zero byte of ``x ^ '.'`` (exact for the lowest one); every other byte must be a
    digit (:func:`_nondigit`); the point is cut out of the 16 bytes by a shift, and the digits
    are read 8 at a time (:func:`_val`). ok False: any other form or length."""
    ln = e - p
    if ln < 1 or ln > 16:
        return False, _U(0), 0
    x0 = _ld(buf, p, n)
    x1 = _ld(buf, p + 8, n)
    v0 = _LOW[min(ln, 8)]
    v1 = _LOW[max(ln - 8, 0)]
    t0 = x0 ^ _DOT
    t1 = x1 ^ _DOT
    z0 = (t0 - _ONES) & ~t0 & _HI & v0
    z1 = (t1 - _ONES) & ~t1 & _HI & v1
    bad0 = _nondigit(x0) & v0
    bad1 = _nondigit(x1) & v1
    d = ln  # the point's position (ln: none)
    y0, y1 = x0, x1
    if z0 != _U(0):
        d = np.int64(_cttz64(z0) >> _U(3))
        bad0 &= ~(_U(0x80) << _U(8 * d))
        lm = _LOW[d]
        y0 = (x0 & lm) | (((x0 >> _U(8)) | (x1 << _U(56))) & ~lm)
        y1 = x1 >> _U(8)
    elif z1 != _U(0):
        d = 8 + np.int64(_cttz64(z1) >> _U(3))
        bad1 &= ~(_U(0x80) << _U(8 * (d - 8)))
        lm = _LOW[d - 8]
        y1 = (x1 & lm) | ((x1 >> _U(8)) & ~lm)
    nd = ln - 1 if d < ln else ln  # digits
    if (bad0 | bad1) != _U(0) or nd == 0:
        return False, _U(0), 0
    if nd <= 8:
        w = _val(y0, nd)
    else:
        w = _val(y0, 8) * _P10U[nd - 8] + _val(y1, nd - 8)
    return True, w, (ln - 1 - d if d < ln else 0)


@_inl
def _score_bits(buf, s, e, n, pow5):
    """(ok, binary64 bits) of the field [s, e) when it is ``-?d*(.d*)?`` with 1..19 digits;
    ok False: any other form (left to the byte scanner's parser). Fields of up to 16 bytes after
    the sign are read by :func:`_short_decimal` (no loop: the one-pass scan's line loop ~6%
    faster on the 17 Robust runs, 69 -> 65 ms), longer ones by digit runs. Inlined: as a call, that loop
    took ~14% longer."""
    p = s
    neg = buf[p] == 45
    if neg:
        p += 1
    ok, w, lf = _short_decimal(buf, p, e, n)
    if not ok:
        wi, li, p = _digit_run(buf, p, n)
        wf = _U(0)
        lf = 0
        if p < e and buf[p] == 46:
            wf, lf, p = _digit_run(buf, p + 1, n)
        t = li + lf
        if p != e or t == 0 or t > 19:
            return False, _U(0)
        w = wi * _P10U[lf] + wf
    if w <= _U(9007199254740992):  # Clinger: both operands exact, lf <= 19 <= 22
        bits = _f64_bits(np.float64(w) / _P10F[lf])
    else:
        bits = _eisel_lemire(-lf, w, pow5)
    if neg:
        bits |= _U(1) << _U(63)
    return True, bits


@_inl
def _word(buf, p, n, k):
    """k (1..8) bytes at p packed big-endian, right-aligned (as ``_hashtab._dkey`` packs them)."""
    x = _bswap64(_ld(buf, p, n))
    if k < 8:
        x = x >> _U(8 * (8 - k))
    return x


@_jit_no_rc
def _docno_key_words(buf, s, e, n):
    """(hash, w0, w1) of the docno [s, e), equal to ``uefast.io._hashtab._dkey``'s: every full
    8-byte word folded in with one multiply, the rest and the length in the last step. Any
    length (:func:`_docno_key` takes docnos of up to 16 bytes without this loop)."""
    ln = e - s
    h = _U(14695981039346656037)
    w0 = _U(0)
    w1 = _U(0)
    nfull = ln // 8
    for t in range(nfull):
        w = _word(buf, s + 8 * t, n, 8)
        if t == 0:
            w0 = w
        elif t == 1:
            w1 = w
        h = (h ^ w) * _C
        h = h ^ (h >> _U(29))
    rem = ln - 8 * nfull
    w = _U(0)
    if rem > 0:
        w = _word(buf, s + 8 * nfull, n, rem)
        if nfull == 0:
            w0 = w
        elif nfull == 1:
            w1 = w
    h = (h ^ w ^ (_U(ln) << _U(56))) * _C
    return h ^ (h >> _U(32)), w0, w1


@nb.njit(cache=True, nogil=True, _nrt=False)
def _docno_key(buf, s, e, n):
    """:func:`_docno_key_words` (the same key), for docnos of up to 16 bytes without a loop or a
    branch on the length: both 8-byte words loaded, both hash steps computed, the length choosing
    among them (selects). TREC docnos (``FBIS3-10082``, ``LA010189-0001``) are 10..16 bytes of
    varying length, on which the loop's exits were mispredicted. Inlined into the line loop: the
    one-pass scan of the 17 Robust runs ~7% faster (sum of per-file best of 21, 111 -> 103 ms)."""
    ln = e - s
    if ln > 16:
        return _docno_key_words(buf, s, e, n)
    a = _bswap64(_ld(buf, s, n))
    b = _bswap64(_ld(buf, s + 8, n))
    rem = ln & 7
    nfull = ln >> 3
    h0 = _U(14695981039346656037)
    ha = (h0 ^ a) * _C
    ha = ha ^ (ha >> _U(29))
    hab = (ha ^ b) * _C
    hab = hab ^ (hab >> _U(29))
    ta = _U(0) if rem == 0 else a >> _U(64 - 8 * rem)  # the first rem bytes, right-aligned
    tb = _U(0) if rem == 0 else b >> _U(64 - 8 * rem)
    if nfull == 0:
        w0, w1, hp, wl = ta, _U(0), h0, ta
    elif nfull == 1:
        w0, w1, hp, wl = a, tb, ha, tb
    else:
        w0, w1, hp, wl = a, b, hab, _U(0)
    h = (hp ^ wl ^ (_U(ln) << _U(56))) * _C
    return h ^ (h >> _U(32)), w0, w1


@_jit
def _plain(buf):
    """True if every byte is ASCII and the only bytes <= 32 are whitespace (9..13, 32): the
    condition under which byte <= 32 means "field end".

    Eight bytes at a time (SWAR, as above): a word is bad if a byte has its high bit set (>= 128),
    else, with no carry between bytes, if ``x + 0x77..77`` lacks a byte's high bit (byte < 9) or
    ``x + 0x72..72`` has it and ``x + 0x60..60`` lacks it (14 <= byte < 32). 3.4x faster than a
    byte loop (17 Robust runs: 4.3 vs 14.8 ms)."""
    n = buf.size
    acc = _U(0)
    for k in range(n // 8):
        x = _load_le64(buf, 8 * k)
        acc |= ((x & _HI) | (~(x + _U(0x7777777777777777)) & _HI)
                | ((x + _U(0x7272727272727272)) & ~(x + _U(0x6060606060606060)) & _HI))
    for i in range(n - n % 8, n):
        c = buf[i]
        if c >= 128 or c < 9 or 13 < c < 32:
            return False
    return acc == _U(0)


@_inl
def _sp(c):
    """A field separator: C ``isspace`` except the newline (shared with the byte scanners)."""
    return c == 32 or (9 <= c <= 13 and c != 10)


@_inl
def _skip(buf, i, n):
    """The first position >= i that is not a field separator."""
    while i < n and _sp(buf[i]):
        i += 1
    return i


@_inl
def _content(buf, i, n):
    """The start of the first content line at or after ``i`` (n if none): leading blanks, blank
    lines and ``#`` comment lines (trec_eval 10) skipped."""
    while i < n:
        c = buf[i]
        if c > 32 and c != 35:
            return i
        i = _skip(buf, i, n)
        if i >= n:
            return n
        c = buf[i]
        if c == 10:
            i += 1
        elif c == 35:
            while i < n and buf[i] != 10:
                i += 1
            i += 1
        else:
            return i
    return i


@_inl
def _at_end(buf, i, n):
    """True if no field starts at i (end of buffer, or a line end)."""
    return i >= n or buf[i] <= 32


@_jit
def _rank_bytes(buf, s, n):
    """The byte scanner's rank rule: (value, slow) -- digits after an optional '-', slow unless
    1..18 digits span the field."""
    j = s + 1 if buf[s] == 45 else s
    d0 = j
    v = 0
    while j < n and 48 <= buf[j] <= 57:
        v = v * 10 + (buf[j] - 48)
        j += 1
    if s != d0:
        v = -v
    return v, j == d0 or j - d0 > 18 or not _at_end(buf, j, n)


@_jit
def run_arrays(n, full):
    """Output arrays of a run scanner over ``n`` bytes (qid/docno offsets, docno hash and words,
    score bits, rank, runid offsets, slow-number rows): room for every line of >= 11 bytes; rank
    and runid offsets only with ``full``. Shared by this scanner and the byte scanner."""
    cap = n // 11 + 2 if n > 0 else 0
    fcap = cap if full else 0
    return (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.int64), np.empty(cap, np.uint64), np.empty(cap, np.uint64),
            np.empty(cap, np.uint64), np.empty(cap, np.uint64), np.empty(fcap, np.int64),
            np.empty(fcap, np.int64), np.empty(fcap, np.int64), np.empty(cap, np.int64),
            np.empty(cap, np.int64))


@_jit
def run_result(ok, arrays, row, ns, nr, rs, re_, full):
    """A run scanner's result: ``ok``, the :func:`run_arrays` trimmed to ``row`` rows (``ns`` /
    ``nr`` slow scores / ranks), the last runid's offsets."""
    qs, qe, ds, de, dh, dw0, dw1, bits, rank, ys, ye, slow_s, slow_r = arrays
    fr = row if full else 0
    return (ok, qs[:row], qe[:row], ds[:row], de[:row], dh[:row], dw0[:row], dw1[:row],
            bits[:row], slow_s[:ns], slow_r[:nr], rs, re_, rank[:fr], ys[:fr], ye[:fr])


@_jit
def scan_run_words(buf, strict, full, pow5):
    """:func:`uefast.io._fast._scan_run`'s result, found word-at-a-time, prefixed by
    ``handled``: False (and empty arrays) when the byte scanner must take the file instead
    (:func:`_plain` fails, or a line it would refuse)."""
    n = buf.size
    ok = _plain(buf)
    arrays = run_arrays(n if ok else 0, full)
    qs, qe, ds, de, dh, dw0, dw1, bits, rank, ys, ye, slow_s, slow_r = arrays
    ns = 0
    nr = 0
    rs, re_ = 0, 0
    row = 0
    i = 0
    while ok and i < n:
        i = _content(buf, i, n)
        if i >= n:
            break
        # qid
        e = _fend(buf, i, n)
        qs[row] = i
        qe[row] = e
        # Q0 (any text)
        i = _skip(buf, e, n)
        if _at_end(buf, i, n):
            ok = False  # too few fields: the byte scanner words the error
            break
        i = _skip(buf, _fend(buf, i, n), n)
        if _at_end(buf, i, n):
            ok = False
            break
        # docno, hashed
        e = _fend(buf, i, n)
        h, w0, w1 = _docno_key(buf, i, e, n)
        ds[row] = i
        de[row] = e
        dh[row] = h
        dw0[row] = w0
        dw1[row] = w1
        i = _skip(buf, e, n)
        if _at_end(buf, i, n):
            ok = False
            break
        # rank
        e = _fend(buf, i, n)
        ln = e - i
        if 1 <= ln <= 8 and _ndig(_ld(buf, i, n)) >= ln:
            v = np.int64(_val(_ld(buf, i, n), ln))
        else:
            v, slow = _rank_bytes(buf, i, n)
            if slow:
                slow_r[nr] = row
                nr += 1
        if full:
            rank[row] = v
        i = _skip(buf, e, n)
        if _at_end(buf, i, n):
            ok = False
            break
        # score
        e = _fend(buf, i, n)
        o, b = _score_bits(buf, i, e, n, pow5)
        if not o:
            o, b, p = _parse_float_open(buf, i, n, pow5)
            if not o or not _at_end(buf, p, n):
                slow_s[ns] = row
                ns += 1
        bits[row] = b
        i = _skip(buf, e, n)
        if _at_end(buf, i, n):
            ok = False
            break
        # runid
        e = _fend(buf, i, n)
        rs, re_ = i, e
        if full:
            ys[row] = i
            ye[row] = e
        # the rest of the line: nothing, or extra columns (refused when strict)
        i = _skip(buf, e, n)
        if i < n and buf[i] != 10:
            if strict:
                ok = False
                break
            while i < n and buf[i] != 10:
                i += 1
        i += 1
        row += 1
    if not ok or row == 0:
        return run_result(False, arrays, 0, 0, 0, 0, 0, full)
    return run_result(True, arrays, row, ns, nr, rs, re_, full)
