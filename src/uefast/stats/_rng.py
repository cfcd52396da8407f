"""Counter-based random numbers for the resampling tests (DESIGN §7).

Every random number is a pure function of ``(seed, domain, resample index, draw index)``, so a
resample's draws do not depend on the thread that computes it, on how resamples are batched, or
on the backend. There is no generator *state* anywhere.

Construction (all arithmetic modulo 2**64):

* ``mix64`` is the output function of splitmix64 (Steele, Lea & Flood, "Fast splittable
  pseudorandom number generators", OOPSLA 2014; constants of Stafford's "Mix13" variant).
* The key of resample ``b`` is ``mix64(base + (b + 1)·φ)`` with
  ``base = mix64(seed ^ mix64(domain·φ))`` and ``φ = 0x9E3779B97F4A7C15`` (the golden-ratio
  Weyl increment), i.e. the ``b``-th output of a splitmix64 stream seeded from ``(seed, domain)``.
* Word ``j`` of resample ``b`` is ``mix64(key_b + (j + 1)·φ)``: the ``j``-th output of a
  splitmix64 stream started at ``key_b``. Each 64-bit word gives two 32-bit draws (low half
  first).
* A uniform integer in ``[0, n)`` (``n < 2**32``) is taken from a 32-bit draw ``x`` with Lemire's
  nearly-divisionless method ("Fast random integer generation in an interval", ACM TOMACS 2019):
  ``m = x·n``; accept ``m >> 32`` unless ``(m mod 2**32) < (2**32 - n) mod n``. The method is
  exactly unbiased. A rejected draw (probability < n / 2**32) is replaced by draws from a
  fallback stream keyed by ``(key_b, draw index, attempt)``, so it stays a pure function of the
  counters.
* Sign vectors for the randomisation test use the bits of consecutive words, bit ``k mod 64`` of
  word ``k // 64`` for topic ``k`` (1 = keep, 0 = swap).

The same integer arithmetic can be written for a GPU and gives the same draws.
"""
from __future__ import annotations

import secrets

import numpy as np
from numba import njit

__all__ = ["DOMAIN_BOOTSTRAP", "DOMAIN_RANDOMIZATION", "DOMAIN_TUKEY", "normalize_seed"]

_PHI = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_REJECT = np.uint64(0xD1B54A32D192ED03)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_ONE = np.uint64(1)

DOMAIN_BOOTSTRAP = 1
DOMAIN_RANDOMIZATION = 2
DOMAIN_TUKEY = 3

_SEED_LIMIT = 1 << 64


def normalize_seed(seed: int | None) -> int:
    """Return the seed as an int in ``[0, 2**64)``; ``None`` draws one from the OS."""
    if seed is None:
        return secrets.randbits(63)
    return int(seed)


@njit(inline="always", cache=True)
def mix64(z):
    """splitmix64 output function (a bijection of uint64)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(inline="always", cache=True)
def stream_base(seed, domain):
    """Base key of the streams for ``(seed, domain)``; ``seed`` is a uint64."""
    return mix64(seed ^ mix64(np.uint64(domain) * _PHI))


@njit(inline="always", cache=True)
def resample_key(base, b):
    """Key of resample ``b`` (an int >= 0)."""
    return mix64(base + (np.uint64(b) + _ONE) * _PHI)


@njit(inline="always", cache=True)
def word(key, j):
    """Random 64-bit word ``j`` (an int >= 0) of the stream ``key``."""
    return mix64(key + (np.uint64(j) + _ONE) * _PHI)


@njit(inline="always", cache=True)
def below(x, n, key, i):
    """Unbiased uniform integer in ``[0, n)`` from the 32-bit draw ``x`` (Lemire 2019).

    ``x`` and ``n`` are uint64 with ``x < 2**32`` and ``0 < n < 2**32``; ``(key, i)`` name the
    draw so that a rejected draw is replaced deterministically.
    """
    m = x * n
    low = m & _LOW32
    if low < n:
        threshold = (_TWO32 - n) % n
        attempt = np.uint64(0)
        while low < threshold:
            attempt += _ONE
            x = mix64((key ^ _REJECT) + (np.uint64(i) * np.uint64(64) + attempt) * _PHI) & _LOW32
            m = x * n
            low = m & _LOW32
    return np.int64(m >> _S32)


@njit(inline="always", cache=True)
def low32(w):
    return w & _LOW32


@njit(inline="always", cache=True)
def high32(w):
    return w >> _S32
