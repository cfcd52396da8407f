"""Exact REB building blocks (SPEC_diversity §4): expectations under a uniformly random order of
a topic's n judged documents.

* :func:`novelty_terms`: E[J(d_i,t) (1-alpha)^{c(i,t)}] at every rank i for an aspect with R
  relevant documents = (R/n) sum_c (1-alpha)^c H(n-1, R-1, i-1, c) (the document at rank i is
  relevant with probability R/n; given that, the number c of the other R-1 among the i-1 earlier
  ranks is hypergeometric). Graded gain r (1-alpha)^c: replace R/n by V/n, V = sum_d r(d,t).
  Overlap between aspects does not matter (linearity).
* :func:`cascade_survival`: E[S_m] = e_m(y)/C(n,m), S_m = prod_{j<=m} (1 - r(pi_j)), y = 1 - r,
  by the elementary symmetric polynomials normalised by C(j,m) along the documents
  (E_m^{(j)} = (j-m)/j E_m^{(j-1)} + m/j y_j E_{m-1}^{(j-1)}, a convex combination: stable).
  Then E[r(pi_i) prod_{j<i}(1 - r(pi_j))] = E[S_{i-1}] - E[S_i] (ERR-IA, RBU).
* :func:`ap_reb`: E[AP] = (R(n - H_n) + n(H_n - 1))/(n(n-1)) (SPEC_math AP row).
* :func:`coverage_reb`: P(aspect covered in the top K) = 1 - C(n-R, K)/C(n, K), as
  -expm1(sum_{l<min(K,R)} log1p(-max(K,R)/(n-l))) (C(n-R,K)/C(n,K) = prod_{l<K} (1 - R/(n-l)),
  symmetric in K and R): exact to rounding at any n, where 1 - exp(difference of log-gammas)
  loses every digit once n is a collection's size (n = 10^9, R = 3, K = 10 gave 0 for 3e-8).
* :func:`log_comb`: log C(a, b); for one large ``a`` (>= 1024, a universe of N documents) as a
  sum of log(a - l) over the smaller side min(b, a-b) instead of log-gamma differences, whose
  rounding (ulp of lgamma(10^9) ~ 4e-6) would otherwise be the relative error of every
  hypergeometric probability.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

__all__ = ["novelty_terms", "cascade_survival", "ap_reb", "coverage_reb", "log_comb"]


_LARGE = 1024


def log_comb(a, b):
    """log C(a, b) (b in [0, a]; arrays broadcast). One scalar a >= 1024: sum_{l<s} log(a - l) -
    lgamma(s + 1), s = min(b, a - b), by a cumulative sum up to the largest s (see the module
    docstring); otherwise lgamma(a+1) - lgamma(b+1) - lgamma(a-b+1)."""
    if np.ndim(a) == 0 and float(a) >= _LARGE:
        a = float(a)
        b = np.asarray(b, float)
        s = np.clip(np.minimum(b, a - b), 0, None)
        top = int(s.max(initial=0))
        if top < a / 4:  # the smaller side is short: the cumulative sum is cheap and accurate
            cs = np.r_[0.0, np.cumsum(np.log(a - np.arange(top)))]
            return cs[s.astype(np.int64)] - gammaln(s + 1)
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)


def novelty_terms(n: int, R: int, K: int, alpha: float, scale: float | None = None) -> np.ndarray:
    """E[gain at rank i], i = 1..K (K <= n), for one aspect with R >= 1 relevant of n judged
    documents; ``scale`` = V/n for graded gains (default R/n)."""
    K = min(K, n)
    if R <= 0 or K <= 0:
        return np.zeros(max(K, 0))
    i = np.arange(1, K + 1)[:, None].astype(float)
    c = np.arange(0, R)[None, :].astype(float)
    N, Kp, m = n - 1, R - 1, i - 1
    ok = (c <= m) & (m - c <= N - Kp)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        logh = log_comb(Kp, c) + log_comb(N - Kp, np.where(ok, m - c, 0)) - log_comb(N, m)
        h = np.where(ok, np.exp(np.where(ok, logh, 0.0)), 0.0)
        pw = np.where(alpha < 1.0, (1.0 - alpha) ** c, (c == 0).astype(float))
    s = (h * pw).sum(axis=1)
    return s * (R / n if scale is None else scale)


def cascade_survival(y: np.ndarray, K: int) -> np.ndarray:
    """E[S_m] for m = 0..K: mean over random orders of prod of the first m values of ``y``."""
    n = y.size
    K = min(K, n)
    E = np.zeros(K + 1)
    E[0] = 1.0
    for j in range(1, n + 1):
        top = min(j, K)
        m = np.arange(top, 0, -1)
        # descending m so E[m-1] is still the previous document's value
        E[m] = np.where(m < j, (j - m) / j * E[m], 0.0) + (m / j) * y[j - 1] * E[m - 1]
    return E


def ap_reb(n: int, R: int) -> float:
    """E[AP] over random orders of n judged documents, R >= 1 relevant (all retrieved)."""
    if R <= 0:
        return 0.0
    if n == 1:
        return 1.0
    H = float(np.sum(1.0 / np.arange(1, n + 1)))
    return (R * (n - H) + n * (H - 1.0)) / (n * (n - 1.0))


def coverage_reb(n: int, R: int, K: int) -> float:
    """P(at least one of R relevant documents among the first K of a random order of n)."""
    K = min(K, n)
    if R <= 0 or K <= 0:
        return 0.0
    if n - R < K:
        return 1.0
    lo, hi = min(K, R), max(K, R)
    return float(-np.expm1(math.fsum(np.log1p(-hi / (n - np.arange(lo, dtype=np.float64))))))
