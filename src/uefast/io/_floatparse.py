"""Correctly rounded decimal -> binary64 parsing for the TREC fast path (Eisel-Lemire, as in
fast_float / Arrow / strtod, for inputs with at most 19 significant digits; others go to the slow
path)."""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast._intrinsics import _ctlz64, _mulhi64

_U = np.uint64

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


@nb.njit(cache=True, nogil=True, _nrt=False)
def _mul128(a, b):
    """The 128-bit product of two uint64 as (high, low) words (one MUL instruction)."""
    return _mulhi64(a, b), a * b


@nb.njit(cache=True, nogil=True, _nrt=False)
def _lz(w):
    """Leading zero bits of a nonzero uint64."""
    return np.int64(_ctlz64(w))


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
    w, nsig, p = _digits(buf, p, n, _U(0), np.int64(0))  # int64: _digits compiled once
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
