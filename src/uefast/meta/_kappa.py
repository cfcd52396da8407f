"""Agreement coefficients on weighted rating patterns, vectorised over bootstrap resamples.

Every coefficient here is a function of the *multiset* of rated items, so it is computed from
the distinct rating patterns ``P`` (rows) and a weight matrix ``W`` of shape ``(B, P)``: row
``b`` holds how often each pattern occurs in resample ``b`` (the observed data is the row of
pattern counts). Resampling ``n`` items with replacement is the same as drawing the pattern
counts from ``Multinomial(n, counts / n)``, so a bootstrap costs ``B x P`` work, not ``B x n``.

Conventions: when chance agreement is total (every rating in one category, so observed
agreement is total too) the coefficient is 0/0; it is then 1 (SPEC_math §6.14's choice for
Cohen's κ, applied to every coefficient here).
"""
from __future__ import annotations

import numpy as np

__all__ = ["disagreement_weights", "cohen_from_tables", "cohen_asymptotic", "fleiss_from_counts",
           "fleiss_null_se", "alpha_from_counts"]

_TINY = 1e-15


def disagreement_weights(k: int, weights: str | None) -> np.ndarray:
    """The ``k x k`` disagreement weights ``v_ij`` of weighted κ on the category positions
    ``0..k-1``: ``None`` 1 - δ_ij (Cohen 1960), ``"linear"`` |i - j| / (k - 1) (Cicchetti &
    Allison 1971), ``"quadratic"`` ((i - j) / (k - 1))^2 (Fleiss & Cohen 1973)."""
    i = np.arange(k, dtype=np.float64)
    d = np.abs(i[:, None] - i[None, :])
    if weights is None:
        return (d > 0).astype(np.float64)
    scale = max(k - 1, 1)
    return d / scale if weights == "linear" else (d / scale) ** 2


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """1 - num/den, with 1 where den is 0 (no chance disagreement: agreement is then total)."""
    num = np.asarray(num, np.float64)
    den = np.asarray(den, np.float64)
    zero = np.abs(den) <= _TINY
    return np.where(zero, 1.0, 1.0 - num / np.where(zero, 1.0, den))


def cohen_from_tables(tables: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Weighted κ of each ``k x k`` contingency table in ``tables`` (shape ``(..., k, k)``,
    rows assessor A, columns assessor B): κ_w = 1 - Σ v_ij p_ij / Σ v_ij p_i. p_.j
    (Cohen 1968; with ``v = 1 - I`` it is Cohen's 1960 κ = (p_o - p_e) / (1 - p_e))."""
    t = np.asarray(tables, np.float64)
    n = t.sum(axis=(-2, -1))
    p = t / n[..., None, None]
    rows, cols = p.sum(axis=-1), p.sum(axis=-2)
    observed = np.einsum("...ij,ij->...", p, v)
    expected = np.einsum("...i,...j,ij->...", rows, cols, v)
    return _ratio(observed, expected)


def cohen_asymptotic(table: np.ndarray, v: np.ndarray) -> tuple[float, float, float]:
    """``(κ_w, se, se0)``: weighted κ with its large-sample standard error and the standard
    error under H0: κ = 0, of Fleiss, Cohen & Everitt (1969), "Large sample standard errors of
    kappa and weighted kappa", Psychological Bulletin 72(5):323-327, eqs. (13) and (14), with
    agreement weights w_ij = 1 - v_ij / max(v) (κ is invariant to rescaling v)::

        w̄_i. = Σ_j p_.j w_ij,  w̄_.j = Σ_i p_i. w_ij,  p_o = Σ w_ij p_ij,  p_e = Σ w_ij p_i. p_.j
        var  = [Σ p_ij (w_ij - (w̄_i. + w̄_.j)(1 - κ))^2 - (κ - p_e (1 - κ))^2] / (n (1 - p_e)^2)
        var0 = [Σ p_i. p_.j (w_ij - (w̄_i. + w̄_.j))^2 - p_e^2] / (n (1 - p_e)^2)

    (statsmodels' ``cohens_kappa`` computes the same). Both are NaN when ``p_e = 1``."""
    t = np.asarray(table, np.float64)
    n = t.sum()
    p = t / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    top = v.max()
    w = 1.0 - v / top if top > 0 else np.ones_like(v)
    kappa = float(cohen_from_tables(t, v))
    pe = float(rows @ w @ cols)
    if 1.0 - pe <= _TINY:
        return kappa, float("nan"), float("nan")
    wi = w @ cols  # w̄_i.
    wj = rows @ w  # w̄_.j
    s = wi[:, None] + wj[None, :]
    fac = n * (1.0 - pe) ** 2
    var = (np.sum(p * (w - s * (1.0 - kappa)) ** 2) - (kappa - pe * (1.0 - kappa)) ** 2) / fac
    var0 = (np.sum(np.outer(rows, cols) * (w - s) ** 2) - pe ** 2) / fac
    return kappa, float(np.sqrt(max(var, 0.0))), float(np.sqrt(max(var0, 0.0)))


def fleiss_from_counts(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Fleiss' κ (Fleiss 1971, "Measuring nominal scale agreement among many raters",
    Psychological Bulletin 76(5):378-382) of the items ``counts`` (``(P, k)``: ratings per
    category; every row sums to the same m >= 2) weighted by ``w`` (``(B, P)``)::

        p_j = Σ_i n_ij / (N m),  P_i = (Σ_j n_ij^2 - m) / (m (m - 1)),  P̄ = mean_i P_i,
        P_e = Σ_j p_j^2,  κ = (P̄ - P_e) / (1 - P_e)
    """
    c = np.asarray(counts, np.float64)
    m = c[0].sum()
    n = w.sum(axis=1)
    agree = (np.sum(c * c, axis=1) - m) / (m * (m - 1.0))
    p_bar = (w @ agree) / n
    pj = (w @ c) / (n * m)[:, None]
    pe = np.sum(pj * pj, axis=1)
    return _ratio(1.0 - p_bar, 1.0 - pe)


def fleiss_null_se(counts: np.ndarray, weights: np.ndarray) -> float:
    """Standard error of Fleiss' κ under H0: κ = 0 (raters assign categories at random with
    the observed marginals), Fleiss, Nee & Landis (1979), "Large sample variance of kappa in the
    case of different sets of raters", Psychological Bulletin 86(5):974-977, eq. (12)::

        se0 = sqrt(2 / (N m (m - 1))) * sqrt((Σ p_j q_j)^2 - Σ p_j q_j (q_j - p_j)) / Σ p_j q_j

    with q_j = 1 - p_j. NaN when Σ p_j q_j = 0 (one category only)."""
    c = np.asarray(counts, np.float64)
    m = c[0].sum()
    n = float(weights.sum())
    pj = (weights @ c) / (n * m)
    pq = pj * (1.0 - pj)
    s = pq.sum()
    if s <= _TINY:
        return float("nan")
    inner = s * s - np.sum(pq * ((1.0 - pj) - pj))
    return float(np.sqrt(2.0 / (n * m * (m - 1.0))) * np.sqrt(max(inner, 0.0)) / s)


def _alpha_distances(values: np.ndarray, level: str, nc: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distances δ²_ck (shape ``(B, k, k)`` for ordinal, else
    ``(k, k)``) between category values, Krippendorff (2011), "Computing Krippendorff's
    alpha-reliability", §C: nominal 1 - δ_ck; ordinal (Σ_{g=c..k} n_g - (n_c + n_k)/2)^2 with
    n_g the pairable values per category; interval (c - k)^2; ratio ((c - k)/(c + k))^2."""
    v = values.astype(np.float64)
    if level == "nominal":
        return 1.0 - np.eye(v.size)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        s = v[:, None] + v[None, :]
        d = v[:, None] - v[None, :]
        return np.divide(d, s, out=np.zeros_like(d), where=s != 0) ** 2
    cum = np.concatenate([np.zeros((nc.shape[0], 1)), np.cumsum(nc, axis=1)], axis=1)
    lo = np.minimum.outer(np.arange(v.size), np.arange(v.size))
    hi = np.maximum.outer(np.arange(v.size), np.arange(v.size))
    between = cum[:, hi + 1] - cum[:, lo]  # Σ_{g=lo..hi} n_g
    half = (nc[:, :, None] + nc[:, None, :]) / 2.0
    return (between - half) ** 2


def alpha_from_counts(counts: np.ndarray, w: np.ndarray, values: np.ndarray,
                      level: str) -> np.ndarray:
    """Krippendorff's α (Krippendorff 2011, op. cit., §A-§C) of the units ``counts`` (``(P, k)``:
    values per category of one unit, at least 2 values per unit) weighted by ``w`` (``(B, P)``)::

        o_ck = Σ_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)          (coincidences)
        n_c = Σ_k o_ck,  n = Σ_c n_c
        α = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck              (D_o / D_e)
    """
    c = np.asarray(counts, np.float64)
    k = c.shape[1]
    m = c.sum(axis=1)
    per_unit = (c[:, :, None] * c[:, None, :]
                - c[:, :, None] * np.eye(k)[None]) / (m - 1.0)[:, None, None]
    o = (w @ per_unit.reshape(c.shape[0], k * k)).reshape(-1, k, k)
    nc = o.sum(axis=2)
    n = nc.sum(axis=1)
    d = _alpha_distances(values, level, nc)
    observed = np.sum(o * d, axis=(1, 2))
    expected = np.sum(nc[:, :, None] * nc[:, None, :] * d, axis=(1, 2)) / (n - 1.0)
    return _ratio(observed, expected)
