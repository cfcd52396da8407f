"""Numba kernels of the resampling tests. Pure array-in/array-out; no validation here.

Determinism: every resample ``b`` is computed from ``(seed, b)`` alone (see ``_rng``) by the same
code path, so results do not depend on the number of threads or the chunking of resamples. The
4 x 4 micro-kernel ``_dot4x4`` is compiled with ``fastmath={'reassoc', 'contract'}`` so that LLVM
vectorises its dot products; its summation order is then fixed by the compiled code and the
length ``n`` (not by threads or batches), but may differ in the last bits between instruction
sets. The p-values use a tie tolerance (SPEC §6) that is far larger than such differences.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from uefast.kernels.threads import run_chunks
from uefast.stats._rng import below, high32, low32, resample_key, stream_base, word

__all__ = [
    "bootstrap_sums",
    "signflip_sums",
    "tukey_ranges",
    "exact_signflip_counts",
    "plain_sums",
    "sequential_column_sums",
    "compensated_sum",
    "BLOCK",
]

BLOCK = 4  # resamples per micro-kernel call; chunks of resamples are multiples of BLOCK
_FASTMATH = {"reassoc", "contract"}
_CHUNK = 512  # 64-bit words hashed per vectorised chunk
_SLOTS = 64  # parallel work items per call, each with its own scratch (not tied to threads)


@njit(fastmath=_FASTMATH, cache=True)
def _dot4x4(w, vt, out, cb):
    """``out[r, cb + c] = sum_k w[r, k] * vt[cb + c, k]`` for r, c in 0..3 (register-blocked)."""
    n = vt.shape[1]
    s00 = s01 = s02 = s03 = 0.0
    s10 = s11 = s12 = s13 = 0.0
    s20 = s21 = s22 = s23 = 0.0
    s30 = s31 = s32 = s33 = 0.0
    for k in range(n):
        c0 = np.float64(w[0, k])
        c1 = np.float64(w[1, k])
        c2 = np.float64(w[2, k])
        c3 = np.float64(w[3, k])
        v0 = vt[cb, k]
        v1 = vt[cb + 1, k]
        v2 = vt[cb + 2, k]
        v3 = vt[cb + 3, k]
        s00 += c0 * v0
        s01 += c0 * v1
        s02 += c0 * v2
        s03 += c0 * v3
        s10 += c1 * v0
        s11 += c1 * v1
        s12 += c1 * v2
        s13 += c1 * v3
        s20 += c2 * v0
        s21 += c2 * v1
        s22 += c2 * v2
        s23 += c2 * v3
        s30 += c3 * v0
        s31 += c3 * v1
        s32 += c3 * v2
        s33 += c3 * v3
    out[0, cb] = s00
    out[0, cb + 1] = s01
    out[0, cb + 2] = s02
    out[0, cb + 3] = s03
    out[1, cb] = s10
    out[1, cb + 1] = s11
    out[1, cb + 2] = s12
    out[1, cb + 3] = s13
    out[2, cb] = s20
    out[2, cb + 1] = s21
    out[2, cb + 2] = s22
    out[2, cb + 3] = s23
    out[3, cb] = s30
    out[3, cb + 1] = s31
    out[3, cb + 2] = s32
    out[3, cb + 3] = s33


@njit(cache=True)
def _add_counts(cnt, r, key, n):
    """Add the ``n`` uniform draws of stream ``key`` on ``[0, n)`` to ``cnt[r]``.

    Draws are produced in chunks by a vectorisable loop (hash + Lemire multiply); the rare draws
    that need Lemire's rejection test go through :func:`below`, which gives the same value as
    the plain path would, so the draws are exactly those of ``below(draw32(key, d), n, key, d)``.
    """
    nn = np.uint64(n)
    low_mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    buf = np.empty(2 * _CHUNK, np.uint64)  # 8 KiB: below the allocator's mmap threshold
    n_words = (n + 1) // 2
    for j0 in range(0, n_words, _CHUNK):
        jn = min(_CHUNK, n_words - j0)
        for t in range(jn):
            w = word(key, j0 + t)
            buf[2 * t] = (w & low_mask) * nn
            buf[2 * t + 1] = (w >> s32) * nn
        for t in range(min(2 * jn, n - 2 * j0)):
            m = buf[t]
            if (m & low_mask) < nn:
                d = 2 * j0 + t
                cnt[r, below(_draw32(key, d), nn, key, d)] += 1
            else:
                cnt[r, m >> s32] += 1


def bootstrap_sums(vt, seed, domain, b0, out, proto):
    """Weighted column sums of bootstrap resamples (multinomial counts).

    For resample ``b = b0 + r`` draw ``n`` topic indices i.i.d. uniform on ``[0, n)`` (draw ``d``
    is ``below(draw32(key_b, d), n)``), count them (``c_k`` = times topic ``k`` was drawn) and set
    ``out[r, j] = sum_k c_k * vt[j, k]``. ``vt`` is ``(n_cols, n)`` with ``n_cols % 4 == 0``;
    ``out`` is ``(n_rows, n_cols)`` with ``n_rows % 4 == 0``. ``proto`` is an empty array whose
    dtype holds the counts (uint16 when ``n < 65536``, int32 otherwise): counts never exceed
    ``n``, so they are exact. Work items (slots) run on :func:`~uefast.kernels.threads.run_chunks`.
    """
    run_chunks(_bootstrap_slots, _n_slots(out.shape[0] // 4), vt, seed, domain, b0, out, proto)


def _n_slots(n_items):
    return max(1, min(n_items, _SLOTS))


@njit(cache=True, nogil=True)
def _bootstrap_slots(s0, s1, vt, seed, domain, b0, out, proto):
    """:func:`bootstrap_sums` for slots ``s0 .. s1 - 1``: slot s fills blocks s, s + 64, ..."""
    n_cols, n = vt.shape
    base = stream_base(np.uint64(seed), domain)
    n_blocks = out.shape[0] // 4
    for slot in range(s0, min(s1, n_blocks)):
        cnt = np.empty((4, n), dtype=proto.dtype)  # one scratch per slot, reset per block
        for q in range(slot, n_blocks, _SLOTS):
            cnt[:] = 0
            for r in range(4):
                _add_counts(cnt, r, resample_key(base, b0 + 4 * q + r), n)
            block = out[4 * q:4 * q + 4]
            for cb in range(0, n_cols, 4):
                _dot4x4(cnt, vt, block, cb)


def signflip_sums(vt, seed, domain, b0, out):
    """Sign-flipped column sums: ``out[r, j] = sum_k s_k * vt[j, k]`` with random ``s_k = ±1``.

    ``s_k`` is bit ``k mod 64`` of word ``k // 64`` of resample ``b0 + r`` (1 -> +1, 0 -> -1).
    Shapes as in :func:`bootstrap_sums`.
    """
    run_chunks(_signflip_slots, _n_slots(out.shape[0] // 4), vt, seed, domain, b0, out)


@njit(cache=True, nogil=True)
def _signflip_slots(s0, s1, vt, seed, domain, b0, out):
    """:func:`signflip_sums` for slots ``s0 .. s1 - 1``."""
    n_cols, n = vt.shape
    base = stream_base(np.uint64(seed), domain)
    n_blocks = out.shape[0] // 4
    for slot in range(s0, min(s1, n_blocks)):
        sg = np.empty((4, n))  # one scratch per slot, fully rewritten per block
        for q in range(slot, n_blocks, _SLOTS):
            for r in range(4):
                key = resample_key(base, b0 + 4 * q + r)
                for kw in range((n + 63) // 64):
                    w = word(key, kw)
                    k0 = 64 * kw
                    for t in range(min(64, n - k0)):
                        sg[r, k0 + t] = 2.0 * np.float64((w >> np.uint64(t)) & np.uint64(1)) - 1.0
            block = out[4 * q:4 * q + 4]
            for cb in range(0, n_cols, 4):
                _dot4x4(sg, vt, block, cb)


@njit(cache=True)
def _draw32(key, i):
    """32-bit draw number ``i`` of stream ``key`` (two per 64-bit word, low half first)."""
    w = word(key, i // 2)
    if i % 2 == 0:
        return low32(w)
    return high32(w)


@njit(cache=True)
def _permutation_draws(key, n, n_perm, out):
    """``out[k]`` = uniform draw ``k`` on ``[0, n_perm)`` of stream ``key`` (vectorised like
    :func:`_add_counts`)."""
    nn = np.uint64(n_perm)
    low_mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for j in range((n + 1) // 2):
        w = word(key, j)
        out[2 * j] = (w & low_mask) * nn
        if 2 * j + 1 < n:
            out[2 * j + 1] = (w >> s32) * nn
    for k in range(n):
        m = out[k]
        if (m & low_mask) < nn:
            out[k] = below(_draw32(key, k), nn, key, k)
        else:
            out[k] = m >> s32


@njit(inline="always", cache=True)
def permuted_sums8(x, perms, u, key, drawn):
    """The randomised Tukey HSD null's column sums for ``m = x.shape[1] <= 8`` systems:
    ``S_j = sum_k x[k, p_k[j]]`` for ``j < m``, rows added in topic order into eight scalar
    accumulators (registers), returned as an 8-tuple (entries ``j >= m`` are 0). ``p_k`` is the
    byte-packed permutation ``perms[u_k]`` (byte ``j`` = ``p_k[j]``) with
    ``u_k = below(draw32(key, k), m!, key, k)``: read from ``u[k]`` where ``drawn`` (the CPU
    draws them beforehand in a vectorised pass, :func:`_permutation_draws`), else drawn here,
    two per 64-bit word (the GPU, where ``u`` is unused). Float additions only, in topic order,
    so every target gets the same sums (nothing to reassociate or contract). One definition for
    the CPU kernel (:func:`_permuted_sums_small`) and the GPU kernel (:mod:`uefast.gpu.tukey`);
    inlined, so the arrays cost no reference counting per call and ``drawn`` is unswitched."""
    n, m = x.shape
    nn = np.uint64(perms.shape[0])
    b = np.uint64(255)
    low = np.uint64(0xFFFFFFFF)
    w = np.uint64(0)
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
    for k in range(n):
        if drawn:
            c = perms[u[k]]
        elif k % 2 == 0:
            w = word(key, k // 2)
            c = perms[below(w & low, nn, key, k)]
        else:
            c = perms[below(w >> np.uint64(32), nn, key, k)]
        a0 += x[k, c & b]
        a1 += x[k, (c >> np.uint64(8)) & b]
        if m > 2:
            a2 += x[k, (c >> np.uint64(16)) & b]
        if m > 3:
            a3 += x[k, (c >> np.uint64(24)) & b]
        if m > 4:
            a4 += x[k, (c >> np.uint64(32)) & b]
        if m > 5:
            a5 += x[k, (c >> np.uint64(40)) & b]
        if m > 6:
            a6 += x[k, (c >> np.uint64(48)) & b]
        if m > 7:
            a7 += x[k, (c >> np.uint64(56)) & b]
    return a0, a1, a2, a3, a4, a5, a6, a7


@njit(inline="always", cache=True)
def shuffle_row(key, k, m, p, r):
    """The permutation of topic ``k`` for ``m > 8`` systems, in column ``r`` of ``p`` (``m`` x
    columns): ``p[:, r] = 0..m-1``, then Fisher-Yates, ``i = m-1 .. 1`` swapping ``p[i]`` and
    ``p[below(draw32(key, d), i + 1, key, d)]`` with ``d = k(m-1) + (m-1-i)``. Shared by the CPU
    kernel (one column) and the GPU kernel (a column per thread)."""
    for j in range(m):
        p[j, r] = j
    for i in range(m - 1, 0, -1):
        d = k * (m - 1) + (m - 1 - i)
        v = below(_draw32(key, d), np.uint64(i + 1), key, d)
        t = p[i, r]
        p[i, r] = p[v, r]
        p[v, r] = t


@njit(cache=True)
def _permuted_sums_small(x, perms, u, acc):
    """``acc[j] = sum_k x[k, p_k[j]]`` for ``m <= 8`` columns, ``p_k`` = byte-packed
    ``perms[u[k]]`` (:func:`permuted_sums8` on the pre-drawn ``u``)."""
    vals = permuted_sums8(x, perms, u, np.uint64(0), True)
    for j in range(x.shape[1]):
        acc[j] = vals[j]


def tukey_ranges(x, perms, seed, domain, b0, out):
    """Null sample of the range of column sums under row-wise permutation (Carterette 2012).

    For resample ``b = b0 + r`` every row of ``x`` (``n x m``) is permuted independently and
    uniformly; ``out[r] = max_j S_j - min_j S_j`` with ``S_j = sum_k x[k, p_k[j]]`` accumulated row
    by row. With a permutation table ``perms`` (all ``m!`` permutations packed one byte per
    position into a uint64, used when ``m <= 8``) each row costs one uniform draw on ``[0, m!)``;
    otherwise a Fisher-Yates shuffle uses ``m - 1`` draws per row.
    """
    run_chunks(_tukey_slots, _n_slots(out.shape[0]), x, perms, seed, domain, b0, out)


@njit(cache=True, nogil=True)
def _tukey_slots(s0, s1, x, perms, seed, domain, b0, out):
    """:func:`tukey_ranges` for slots ``s0 .. s1 - 1``: slot s fills rows s, s + 64, ..."""
    n, m = x.shape
    base = stream_base(np.uint64(seed), domain)
    n_perm = perms.shape[0]
    n_out = out.shape[0]
    for slot in range(s0, min(s1, n_out)):
        u = np.empty(n if n_perm > 0 else 0, np.uint64)  # one scratch per slot
        p = np.empty((m, 1), np.int64)
        for r in range(slot, n_out, _SLOTS):
            key = resample_key(base, b0 + r)
            acc = np.zeros(m)
            if n_perm > 0:
                _permutation_draws(key, n, n_perm, u)  # fully rewrites u
                _permuted_sums_small(x, perms, u, acc)
            else:
                for k in range(n):
                    shuffle_row(key, k, m, p, 0)
                    for j in range(m):
                        acc[j] += x[k, p[j, 0]]
            out[r] = acc.max() - acc.min()


@njit(cache=True)
def _half_sums(z):
    h = z.shape[0]
    sums = np.empty(1 << h)
    for mask in range(1 << h):
        s = 0.0
        for k in range(h):
            if (mask >> k) & 1:
                s += z[k]
            else:
                s -= z[k]
        sums[mask] = s
    return sums


@njit(cache=True)
def exact_signflip_counts(z, rel_tol, scale):
    """Exact sign-flip null by meet-in-the-middle enumeration of all ``2**n`` sign vectors.

    The topics are split into halves A and B; the ``2**|A|`` and ``2**|B|`` half sums are
    enumerated directly and every total is ``sA + sB`` (one rounding). The observed sum is the
    all-plus total computed the same way. Returns ``(count_two_sided, count_greater,
    count_less)`` with the tolerance ``gamma = rel_tol * max(|observed|, scale)`` (``scale`` =
    Σ|z|, the size of the rounding a sum of the z carries).
    """
    n = z.shape[0]
    h = n // 2
    sa = _half_sums(z[:h])
    sb = _half_sums(z[h:])
    obs = sa[sa.shape[0] - 1] + sb[sb.shape[0] - 1]
    gamma = rel_tol * max(abs(obs), scale)
    two = 0
    greater = 0
    less = 0
    lim_two = abs(obs) - gamma
    lim_hi = obs - gamma
    lim_lo = obs + gamma
    for a in range(sa.shape[0]):
        va = sa[a]
        for b in range(sb.shape[0]):
            t = va + sb[b]
            if abs(t) >= lim_two:
                two += 1
            if t >= lim_hi:
                greater += 1
            if t <= lim_lo:
                less += 1
    return two, greater, less


@njit(cache=True)
def plain_sums(vt):
    """``sum_k vt[j, k]`` with exactly the summation code of the resampling kernels (all weights 1),
    so that the observed statistic is rounded like a resample that reproduces the data."""
    ones = np.ones((4, vt.shape[1]))
    out = np.empty((4, vt.shape[0]))
    for cb in range(0, vt.shape[0], 4):
        _dot4x4(ones, vt, out, cb)
    return out[0].copy()


@njit(cache=True)
def sequential_column_sums(x):
    """Column sums of ``x`` accumulated row by row, as in :func:`tukey_ranges`."""
    n, m = x.shape
    acc = np.zeros(m)
    for k in range(n):
        for j in range(m):
            acc[j] += x[k, j]
    return acc


@njit(cache=True)
def compensated_sum(v):
    """Neumaier's compensated sum (error O(eps) independent of n), in a fixed order."""
    s = 0.0
    c = 0.0
    for k in range(v.shape[0]):
        t = s + v[k]
        if abs(s) >= abs(v[k]):
            c += (s - t) + v[k]
        else:
            c += (v[k] - t) + s
        s = t
    return s + c
