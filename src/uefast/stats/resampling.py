"""Resampling tests over the columns of a topics x systems matrix: Sakai's paired bootstrap test,
the paired randomisation (sign-flip) test and Carterette's randomised Tukey HSD.

These functions take validated arrays and a list of column pairs and return plain arrays; the
public front ends are :func:`uefast.stats.paired_test`, :func:`uefast.stats.all_pairs` and
:func:`uefast.stats.tukey_hsd`. All pairs share the same resamples (common random numbers).
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from uefast.stats import _kernels as K
from uefast.stats._rng import DOMAIN_BOOTSTRAP, DOMAIN_RANDOMIZATION, DOMAIN_TUKEY
from uefast.stats.parametric import (REL_TOL, describe_differences, pow2_scale, studentized,
                                     zero_tolerance)

__all__ = ["bootstrap_pairs", "randomization_pairs", "tukey_null", "tukey_null_counts",
           "tukey_observed", "tukey_scale", "tie_tolerance", "MAX_EXACT_TOPICS",
           "DEFAULT_EXACT_TOPICS"]

DEFAULT_EXACT_TOPICS = 20  # exact enumeration by default up to 2**20 sign vectors (SPEC §6.4)
MAX_EXACT_TOPICS = 30
_DEFAULT_BATCH_CELLS = 1 << 21  # resamples per chunk x columns: bounds the chunk memory
_EPS = np.finfo(np.float64).eps


def _chunks(n_resamples: int, batch_size: int | None, width: int):
    """Resample ranges ``[b0, b0 + length)``; lengths are multiples of 4 except maybe the last."""
    if batch_size is None:
        batch_size = max(4, _DEFAULT_BATCH_CELLS // max(width, 1))
    batch = max(4, -(-batch_size // 4) * 4)
    for b0 in range(0, n_resamples, batch):
        yield b0, min(batch, n_resamples - b0)


def _pad4(k: int) -> int:
    return -(-k // 4) * 4


def tie_tolerance(obs, scale=0.0):
    """The tie tolerance γ = 1e-12·max(|T_obs|, scale) of the resampling tests (0 for an infinite
    T_obs; elementwise for arrays). SPEC §6 has 1e-12·|T_obs|, which vanishes with T_obs: a
    statistic that is a sum carries rounding of the size of its summands, ``scale`` (Σ of their
    absolute values), so exact ties with T_obs = 0 were lost."""
    obs = np.abs(np.asarray(obs, dtype=np.float64))
    return np.where(np.isinf(obs), 0.0, REL_TOL * np.maximum(obs, scale))


def _count_extreme(stat, obs, alternative, scale=0.0):
    """#{T* at least as extreme as T_obs} with the tie tolerance γ of :func:`tie_tolerance`."""
    gamma = float(tie_tolerance(obs, scale))
    if alternative == "two-sided":
        return int(np.count_nonzero(np.abs(stat) >= abs(obs) - gamma))
    if alternative == "greater":
        return int(np.count_nonzero(stat >= obs - gamma))
    return int(np.count_nonzero(stat <= obs + gamma))


def _column_means(x: np.ndarray) -> np.ndarray:
    return np.array([K.compensated_sum(np.ascontiguousarray(col)) / x.shape[0] for col in x.T])


def _sums_kernel(backend, work, name):
    """The resample-sums kernel ``name`` ("bootstrap_sums" / "signflip_sums") of the backend
    ``backend`` resolves to for ``work`` cell visits, and that backend's name."""
    if backend != "cpu":
        from uefast.gpu.tukey import resolve_backend

        backend = resolve_backend(backend, work)
        if backend == "cuda":
            from uefast.gpu import resample

            return getattr(resample, name + "_cuda"), "cuda"
    return getattr(K, name), "cpu"


def bootstrap_pairs(x, pairs, *, n_resamples, seed, alternative, keep_means, batch_size=None,
                    keep_t=False, backend="cpu"):
    """Sakai's studentised, shifted paired bootstrap test for each column pair (SPEC §6.5).

    Algorithm: with ``w = z - z̄`` per pair, ``ASL = #{|t(w*_b)| >= |t(z)| - γ} / B``. One set of
    ``B`` resamples of topic indices serves every pair. A resample is summarised by its
    multinomial counts ``c`` (topic ``k`` drawn ``c_k`` times), and only sufficient statistics are
    formed: ``Σ c_k Y_ik`` for each system ``i`` (``Y`` = column-centred matrix, so
    ``Σ c w = Σ c Y_i - Σ c Y_j``) and ``Σ c_k w_k²`` for each pair. That is
    ``m + m(m-1)/2`` dot products of length ``n`` per resample, done by a register-blocked kernel.

    Returns ``(t_obs, counts, boot_means)``; ``boot_means`` (``B x P``, resampled ``mean(z*)``)
    only when ``keep_means``. With ``keep_t`` a fourth item: the ``B x P`` array of ``t(w*_b)``.
    ``backend="cuda"`` (or ``"auto"``, see :func:`uefast.gpu.tukey.resolve_backend`) forms the
    resampled sums on the GPU (:func:`uefast.gpu.resample.bootstrap_sums_cuda`): the same
    draws, so the same p-values.
    """
    n, m = x.shape
    n_pairs = len(pairs)
    means = _column_means(x)
    y = x - means
    # sums of squares on y / 2^e (exact): |x| ~ 1e160 squared overflowed; t* is unchanged, the
    # resampled means and the tolerances are kept in those units
    scale = pow2_scale(y)
    y = y / scale
    n_cols = _pad4(m + n_pairs)
    vt = np.zeros((n_cols, n))
    vt[:m] = y.T
    t_obs = np.empty(n_pairs)
    zbar = np.empty(n_pairs)
    tols = np.empty(n_pairs)
    for p, (i, j) in enumerate(pairs):
        w = y[:, i] - y[:, j]
        vt[m + p] = w * w
        z = x[:, i] - x[:, j]
        zbar[p], sd = describe_differences(z)
        tols[p] = zero_tolerance(z)
        t_obs[p] = studentized(zbar[p], sd, n, tols[p])
    tols /= scale
    proto = np.empty(0, np.uint16 if n < 65536 else np.int32)
    counts = np.zeros(n_pairs, dtype=np.int64)
    boot_means = np.empty((n_resamples, n_pairs)) if keep_means else None
    t_all = np.empty((n_resamples, n_pairs)) if keep_t else None
    ii = np.array([i for i, _ in pairs], dtype=np.int64)
    jj = np.array([j for _, j in pairs], dtype=np.int64)
    sums, _ = _sums_kernel(backend, n_resamples * n * n_cols, "bootstrap_sums")
    for b0, length in _chunks(n_resamples, batch_size, n_cols):
        out = np.empty((_pad4(length), n_cols))
        sums(vt, np.uint64(seed), DOMAIN_BOOTSTRAP, b0, out, proto)
        out = out[:length]
        s1 = out[:, ii] - out[:, jj]
        s2 = out[:, m:m + n_pairs]
        mean_star = s1 / n
        var_num = s2 - s1 * mean_star
        with np.errstate(divide="ignore", invalid="ignore"):
            t_star = mean_star / np.sqrt(np.maximum(var_num, 0.0) / (n - 1) / n)
            sd_star = np.sqrt(np.maximum(var_num, 0.0) / (n - 1))
            degenerate = (var_num <= 64 * _EPS * s2) | (sd_star <= tols)
            t_star = np.where(degenerate, np.copysign(np.inf, mean_star), t_star)
            # a resampled mean within the zero tolerance is 0 (centring by an inexact mean
            # leaves ~1e-17 where the exact resample mean is 0), as t_obs's (studentized)
            t_star = np.where(np.abs(mean_star) <= tols, 0.0, t_star)
        for p in range(n_pairs):
            counts[p] += _count_extreme(t_star[:, p], t_obs[p], alternative)
        if keep_means:
            boot_means[b0:b0 + length] = zbar + mean_star * scale
        if keep_t:
            t_all[b0:b0 + length] = t_star
    if keep_t:
        return t_obs, counts, boot_means, t_all
    return t_obs, counts, boot_means


def randomization_pairs(x, pairs, *, n_resamples, seed, alternative, exact, plus_one,
                        batch_size=None, backend="cpu"):
    """Paired randomisation (sign-flip) test for each column pair (SPEC §6.4).

    Statistic ``Σ z = n · mean(x - y)``; under H0 each topic's labels are exchangeable, i.e. each
    ``z_k`` gets a random sign. Exact: all ``2^n`` sign vectors by meet-in-the-middle enumeration,
    ``p = count / 2^n``. Monte Carlo: ``B`` sign vectors shared by all pairs; because the statistic
    is linear, ``Σ s_k z_k = Σ s_k x_ik - Σ s_k x_jk``, so each resample only needs the ``m``
    sign-weighted column sums. ``p = (count + 1)/(B + 1)`` (Phipson & Smyth 2010) or
    ``count / B`` when ``plus_one`` is False. Returns ``(pvalues, count, denominator)``.
    ``backend``: as in :func:`bootstrap_pairs` (Monte Carlo only; the exact enumeration runs on
    the CPU).
    """
    n, m = x.shape
    n_pairs = len(pairs)
    counts = np.zeros(n_pairs, dtype=np.int64)
    idx = {"two-sided": 0, "greater": 1, "less": 2}[alternative]
    if exact:
        for p, (i, j) in enumerate(pairs):
            z = np.ascontiguousarray(x[:, i] - x[:, j])
            counts[p] = K.exact_signflip_counts(z, REL_TOL, float(np.abs(z).sum()))[idx]
        return counts / float(2 ** n), counts, 2 ** n
    n_cols = _pad4(m)
    vt = np.zeros((n_cols, n))
    vt[:m] = x.T
    obs_cols = K.plain_sums(vt)
    ii = np.array([i for i, _ in pairs], dtype=np.int64)
    jj = np.array([j for _, j in pairs], dtype=np.int64)
    obs = obs_cols[ii] - obs_cols[jj]
    abs_cols = np.abs(x).sum(axis=0)
    scale = abs_cols[ii] + abs_cols[jj]  # bounds the rounding of Σ s·x_i - Σ s·x_j
    sums, _ = _sums_kernel(backend, n_resamples * n * n_cols, "signflip_sums")
    for b0, length in _chunks(n_resamples, batch_size, max(n_cols, n_pairs)):
        out = np.empty((_pad4(length), n_cols))
        sums(vt, np.uint64(seed), DOMAIN_RANDOMIZATION, b0, out)
        stat = out[:length, ii] - out[:length, jj]
        for p in range(n_pairs):
            counts[p] += _count_extreme(stat[:, p], obs[p], alternative, float(scale[p]))
    if plus_one:
        return (counts + 1) / (n_resamples + 1.0), counts, n_resamples + 1
    return counts / float(n_resamples), counts, n_resamples


@lru_cache(maxsize=8)
def _permutation_table(m: int) -> np.ndarray:
    """All ``m!`` permutations of ``range(m)`` (lexicographic order) for ``m <= 8``, each packed
    into a uint64 with ``p[j]`` in byte ``j``; empty for larger ``m`` (Fisher-Yates is used)."""
    if m > 8:
        return np.empty(0, dtype=np.uint64)
    perms = np.array(list(itertools.permutations(range(m))), dtype=np.uint64).reshape(-1, m)
    shifts = (8 * np.arange(m)).astype(np.uint64)
    return np.bitwise_or.reduce(perms << shifts, axis=1)


def tukey_observed(x):
    """Column sums accumulated as in the null kernel (so ties compare consistently)."""
    return K.sequential_column_sums(np.ascontiguousarray(x))


def tukey_scale(x) -> float:
    """``Σ_k`` (the two largest ``|x_kj|`` of row k): a bound on ``Σ|summands|`` of any difference
    of two permuted column sums ``S*_i - S*_j``, i.e. on their rounding, as ``Σ|z|`` is for the
    randomisation test (for ``m = 2`` it is that test's scale, ``Σ|x_k1| + Σ|x_k2|``)."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    return float(np.sort(a, axis=1)[:, -2:].sum())


def tukey_null(x, *, n_resamples, seed, batch_size=None):
    """Null sample ``q*_b = max_j S*_j - min_j S*_j`` of column *sums* under row-wise permutation
    (Carterette 2012; divide by ``n`` for means). Returns an array of length ``B``."""
    x = np.ascontiguousarray(x)
    perms = _permutation_table(x.shape[1])
    q = np.empty(n_resamples)
    for b0, length in _chunks(n_resamples, batch_size, 1):
        K.tukey_ranges(x, perms, np.uint64(seed), DOMAIN_TUKEY, b0, q[b0:b0 + length])
    return q


def tukey_null_counts(x, thresholds, *, n_resamples, seed, batch_size=None, backend="cpu"):
    """The null sample of :func:`tukey_null` and its exceedance counts
    ``count_t = #{b : q*_b >= thresholds[t]}``; returns ``(q, counts, backend)``.

    ``backend="cpu"``: :func:`tukey_null`, counted by binary search in the sorted sample.
    ``"cuda"``: one GPU thread per resample with the same counter-based draws
    (:func:`uefast.gpu.tukey.tukey_ranges_cuda`), the counts made on the device; the sample is
    bit-identical to the CPU's, so are the counts. ``"auto"``: the GPU only where a device is
    usable and the work is large (:func:`uefast.gpu.tukey.resolve_backend`); the backend used is
    returned. ``batch_size`` applies to the CPU only (results never depend on it).
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    thresholds = np.asarray(thresholds, dtype=np.float64)
    if backend != "cpu":
        from uefast.gpu.tukey import resolve_backend, tukey_ranges_cuda

        backend = resolve_backend(backend, n_resamples * x.shape[0] * x.shape[1])
        if backend == "cuda":
            q = np.empty(n_resamples)
            counts = tukey_ranges_cuda(x, _permutation_table(x.shape[1]), np.uint64(seed),
                                       DOMAIN_TUKEY, 0, q, thresholds)
            return q, counts, backend
    q = tukey_null(x, n_resamples=n_resamples, seed=seed, batch_size=batch_size)
    counts = n_resamples - np.searchsorted(np.sort(q), thresholds, side="left")
    return q, counts.astype(np.int64), "cpu"
