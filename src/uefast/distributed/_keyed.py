"""Resampling draws keyed by ``(seed, qid, resample)``, and the per-partition sums they weight.

Every draw is a pure function of the seed, the query's *id* and the resample index, so a query
gets the same sign / weight in resample ``b`` whichever partition, worker or order it is in.
Construction (splitmix64 pieces of :mod:`uefast.stats._rng`, arithmetic modulo 2**64):

* query key ``q``: for an integer qid ``v``, ``mix64(v ^ T_INT)``; for a string, FNV-style chaining
  of ``mix64`` over its UTF-8 bytes in little-endian 8-byte words, then its length
  (:func:`qid_keys`); integer 1 and string ``"1"`` get different keys;
* resample key ``k_b = resample_key(stream_base(seed, domain), b)`` (as in ``uefast.stats``);
* the draw of query ``q`` in resample ``b`` is the word ``w = mix64(k_b ^ q)``;
* randomisation sign: ``+1`` if ``w & 1`` else ``-1`` (each query's sign a fair coin, independent
  across queries and resamples up to the quality of splitmix64);
* bootstrap weight: ``c = F^{-1}(u)`` for ``u = (w >> 11)·2^-53`` and ``F`` the Poisson(1) CDF
  (the Poisson bootstrap: Hanley & MacGibbon, Comput. Methods Programs Biomed. 2006; Chamandy et
  al., "Estimating uncertainty for massive data streams", Google 2012), the limit of Efron's
  multinomial counts as ``n`` grows, and the only bootstrap whose weights are independent across
  queries, hence computable without knowing ``n`` or the other partitions.

Sums are exact expansions (:mod:`uefast.distributed._exact`): a weighted value ``c·x`` is added as
``x`` added ``c`` times, a signed one as ``±x``, so no product is rounded.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

from uefast.distributed._exact import CAP, grow
from uefast.stats._rng import mix64, resample_key, stream_base

__all__ = ["DOMAIN_KEYED_RANDOMIZATION", "DOMAIN_KEYED_BOOTSTRAP", "qid_keys", "sign_draws",
           "poisson_draws", "signflip_sums", "poisson_sums", "plain_sums"]

DOMAIN_KEYED_RANDOMIZATION = 4
DOMAIN_KEYED_BOOTSTRAP = 5
_T_INT = np.uint64(0x243F6A8885A308D3)  # tags (pi's hex digits): int and string keys differ
_T_STR = np.uint64(0x13198A2E03707344)
_U53 = 1.0 / 9007199254740992.0  # 2**-53


def _poisson1_cdf() -> np.ndarray:
    """``F(k) = Σ_{i<=k} e^-1 / i!`` for k = 0..19 from the literal double e^-1 (no libm call, so
    every machine has the same table); ``1 - F(19) < 2^-53``."""
    p, acc, out = 0.36787944117144233, 0.0, []
    for i in range(20):
        if i:
            p = p / i
        acc += p
        out.append(acc)
    return np.array(out)


_CDF = _poisson1_cdf()


@njit(cache=True)
def _str_keys(offsets, data, out):
    for i in range(out.shape[0]):
        s, e = offsets[i], offsets[i + 1]
        h = _T_STR
        j = s
        while j < e:
            w = np.uint64(0)
            for t in range(min(8, e - j)):
                w |= np.uint64(data[j + t]) << np.uint64(8 * t)
            h = mix64(h ^ w)
            j += 8
        out[i] = mix64(h ^ np.uint64(e - s))


@njit(cache=True)
def _int_keys(values, out):
    for i in range(out.shape[0]):
        out[i] = mix64(np.uint64(values[i]) ^ _T_INT)


def qid_keys(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The uint64 key of each qid (integer or string column; dictionaries decoded)."""
    from uefast.inputs import string_buffers

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    out = np.empty(len(arr), np.uint64)
    if pa.types.is_integer(arr.type):
        _int_keys(arr.cast(pa.int64()).to_numpy().view(np.uint64), out)
    else:
        if not pa.types.is_large_string(arr.type):
            arr = arr.cast(pa.large_string())
        offsets, data = string_buffers(arr)
        _str_keys(offsets.astype(np.int64), data, out)
    return out


@njit(inline="always", cache=True)
def _poisson(w, cdf):
    u = np.float64(w >> np.uint64(11)) * _U53
    k = 0
    while k < cdf.shape[0] and u >= cdf[k]:
        k += 1
    return k


@njit(cache=True)
def sign_draws(qkeys, seed, b0, n_b, out):
    """``out[b, k]`` = the sign (+1/-1) of query ``qkeys[k]`` in resample ``b0 + b``."""
    base = stream_base(seed, DOMAIN_KEYED_RANDOMIZATION)
    for b in range(n_b):
        kb = resample_key(base, b0 + b)
        for k in range(qkeys.shape[0]):
            out[b, k] = 1 if mix64(kb ^ qkeys[k]) & np.uint64(1) else -1


@njit(cache=True)
def poisson_draws(qkeys, seed, b0, n_b, cdf, out):
    """``out[b, k]`` = the Poisson(1) weight of query ``qkeys[k]`` in resample ``b0 + b``."""
    base = stream_base(seed, DOMAIN_KEYED_BOOTSTRAP)
    for b in range(n_b):
        kb = resample_key(base, b0 + b)
        for k in range(qkeys.shape[0]):
            out[b, k] = _poisson(mix64(kb ^ qkeys[k]), cdf)


@njit(cache=True)
def _signflip(z, qkeys, seed, n_b, dense, lens):
    n, P = z.shape
    base = stream_base(seed, DOMAIN_KEYED_RANDOMIZATION)
    for b in range(n_b):
        kb = resample_key(base, b)
        for k in range(n):
            keep = mix64(kb ^ qkeys[k]) & np.uint64(1)
            for p in range(P):
                x = z[k, p]
                if np.isnan(x):
                    continue
                c = b * P + p
                lens[c] = grow(dense[c], lens[c], x if keep else -x)
                if lens[c] < 0:
                    return c
    return -1


@njit(cache=True)
def _poisson_sums(w, qkeys, seed, n_b, cdf, dense, lens, nstar):
    n, P = w.shape
    base = stream_base(seed, DOMAIN_KEYED_BOOTSTRAP)
    for b in range(n_b):
        kb = resample_key(base, b)
        for k in range(n):
            c = _poisson(mix64(kb ^ qkeys[k]), cdf)
            if c == 0:
                continue
            for p in range(P):
                x = w[k, p]
                if np.isnan(x):
                    continue
                nstar[b, p] += c
                x2 = x * x
                c1 = (b * P + p) * 2
                for _ in range(c):
                    lens[c1] = grow(dense[c1], lens[c1], x)
                    lens[c1 + 1] = grow(dense[c1 + 1], lens[c1 + 1], x2)
                    if lens[c1] < 0 or lens[c1 + 1] < 0:
                        return c1
    return -1


@njit(cache=True)
def _plain(cells, x, dense, lens, counts):
    for k in range(x.shape[0]):
        v = x[k]
        if np.isnan(v):
            continue
        c = cells[k]
        counts[c] += 1
        lens[c] = grow(dense[c], lens[c], v)
        if lens[c] < 0:
            return c
    return -1


def _finish(bad, dense, lens):
    from uefast.distributed._exact import compact, raise_overflow

    if bad >= 0:
        raise_overflow()
    return compact(dense, lens)


def signflip_sums(z: np.ndarray, qkeys: np.ndarray, seed: int, n_resamples: int):
    """Exact ``Σ_k s_bk z_kp`` per (resample ``b``, column ``p``) over the rows of ``z``
    (NaN = absent); cells ordered ``b * P + p``."""
    cells = n_resamples * z.shape[1]
    dense, lens = np.empty((cells, CAP)), np.zeros(cells, np.int64)
    bad = _signflip(np.ascontiguousarray(z, np.float64), qkeys, np.uint64(seed), n_resamples,
                    dense, lens)
    return _finish(bad, dense, lens)


def poisson_sums(w: np.ndarray, qkeys: np.ndarray, seed: int, n_resamples: int):
    """Exact ``Σ_k c_bk w_kp`` and ``Σ_k c_bk fl(w_kp²)`` per (resample, column) (cells
    ``(b * P + p) * 2 + {0, 1}``) and the integer ``N*_bp = Σ_k c_bk`` over present rows."""
    P = w.shape[1]
    cells = n_resamples * P * 2
    dense, lens = np.empty((cells, CAP)), np.zeros(cells, np.int64)
    nstar = np.zeros((n_resamples, P), np.int64)
    bad = _poisson_sums(np.ascontiguousarray(w, np.float64), qkeys, np.uint64(seed), n_resamples,
                        _CDF, dense, lens, nstar)
    return _finish(bad, dense, lens), nstar


def plain_sums(cells: np.ndarray, x: np.ndarray, n_cells: int):
    """Exact sum of the values ``x[k]`` of each cell ``cells[k]`` (NaN skipped) and the count of
    non-NaN values per cell. A matrix: ``plain_sums(np.tile(arange(C), n), x.ravel(), C)``."""
    dense, lens = np.empty((n_cells, CAP)), np.zeros(n_cells, np.int64)
    counts = np.zeros(n_cells, np.int64)
    bad = _plain(np.ascontiguousarray(cells, np.int64), np.ascontiguousarray(x, np.float64),
                 dense, lens, counts)
    return _finish(bad, dense, lens), counts
