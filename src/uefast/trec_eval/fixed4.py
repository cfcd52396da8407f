"""C's ``printf("%6.4f", x)`` inside a Numba pass (trec_eval's per-topic values, written by
:func:`uefast.trec_eval.interleave.per_topic_lines`), byte for byte.

``%.4f`` prints the exact binary value of ``x`` rounded to 4 decimals, halves to even (glibc;
CPython's ``"%6.4f" % x`` is the same correctly rounded conversion). With ``x = m * 2**e``
(``m`` the 53-bit significand, ``e`` the exponent) and ``k = -e``, ``x * 10**4 = m * 10**4 /
2**k``: the integer ``N = m * 10**4`` needs at most 67 bits, so the quotient ``N >> k`` and the
remainder, compared with the half ``2**(k - 1)``, are exact in two 64-bit words. Values it does
not take (NaN, infinities, ``|x| >= 2**39``: :func:`fixed4_fits`) are the caller's to format in
Python.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast._intrinsics import _f64_bits, _mulhi64

__all__ = ["fixed4_fits", "put_fixed4", "put_uint"]

_U = np.uint64
_TEN4 = _U(10000)


@nb.njit(cache=True, nogil=True)
def _round_scaled(m, k):
    """Round-half-even of ``m * 10**4 / 2**k`` (``m < 2**53``, ``k >= 14``): exact."""
    lo = m * _TEN4          # N = m * 10**4 < 2**67, as (hi, lo)
    hi = _mulhi64(m, _TEN4)
    if k >= 68:             # N < 2**67 <= half: rounds to 0
        return _U(0)
    if k < 64:
        q = (lo >> _U(k)) | (hi << _U(64 - k))
        rem = lo & ((_U(1) << _U(k)) - _U(1))
        half = _U(1) << _U(k - 1)
        up = rem > half or (rem == half and (q & _U(1)) == _U(1))
    elif k == 64:
        q = hi
        up = lo > (_U(1) << _U(63)) or (lo == (_U(1) << _U(63)) and (q & _U(1)) == _U(1))
    else:                   # 65 .. 67: the remainder's high word is below 2**(k - 64)
        s = k - 64
        q = hi >> _U(s)
        rh = hi & ((_U(1) << _U(s)) - _U(1))
        hh = _U(1) << _U(s - 1)  # half = (hh, 0)
        up = rh > hh or (rh == hh and (lo > _U(0) or (q & _U(1)) == _U(1)))
    return q + _U(1) if up else q


@nb.njit(cache=True, nogil=True, inline="always")
def put_uint(out, p, u, dig):
    """Write the decimal digits of the unsigned ``u`` to ``out[p:]`` (``%lu``); returns the
    position after them. ``dig``: 20 bytes of scratch."""
    nd = 0
    while True:
        dig[nd] = np.uint8(48 + u % _U(10))
        nd += 1
        u //= _U(10)
        if u == _U(0):
            break
    for j in range(nd - 1, -1, -1):
        out[p] = dig[j]
        p += 1
    return p


@nb.njit(cache=True, nogil=True, inline="always")
def fixed4_fits(x):
    """Whether :func:`put_fixed4` takes ``x`` (not NaN, not infinite, ``|x| < 2**39``)."""
    b = _f64_bits(x)
    bexp = np.int64((b >> _U(52)) & _U(0x7FF))
    return bexp != 0x7FF and (bexp == 0 or bexp - 1075 <= -14)


@nb.njit(cache=True, nogil=True, inline="always")
def put_fixed4(out, p, x, dig):
    """Write ``%6.4f`` of ``x`` (one that :func:`fixed4_fits`) to ``out[p:]`` (at most 18 bytes);
    returns the position after it. ``dig``: 20 bytes of scratch."""
    b = _f64_bits(x)
    bexp = np.int64((b >> _U(52)) & _U(0x7FF))
    mant = b & ((_U(1) << _U(52)) - _U(1))
    if bexp == 0:
        m, e = mant, np.int64(-1074)
    else:
        m, e = mant | (_U(1) << _U(52)), bexp - 1075
    q = _round_scaled(m, -e)
    if (b >> _U(63)) != _U(0):
        out[p] = 45  # '-' (also -0.0 and negatives that round to zero, as printf)
        p += 1
    fp = q % _TEN4
    p = put_uint(out, p, q // _TEN4, dig)
    out[p] = 46  # '.'
    out[p + 1] = np.uint8(48 + fp // _U(1000))
    out[p + 2] = np.uint8(48 + (fp // _U(100)) % _U(10))
    out[p + 3] = np.uint8(48 + (fp // _U(10)) % _U(10))
    out[p + 4] = np.uint8(48 + fp % _U(10))
    return p + 5
