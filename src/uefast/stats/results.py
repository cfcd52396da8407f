"""Result types of ``uefast.stats``: frozen dataclasses (scipy-style ``statistic``/``pvalue``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from uefast.stats._validation import check_probability

__all__ = ["ConfidenceInterval", "PairedTestResult"]


@dataclass(frozen=True)
class ConfidenceInterval:
    """A confidence interval ``[low, high]`` for the mean difference ``mean(x) - mean(y)``."""

    low: float
    high: float


def t_interval(mean: float, se: float, df: int, confidence_level: float, alternative: str):
    """Student-t interval ``mean ± t_{df, q} · se`` (one-sided for one-sided alternatives)."""
    mean, se = float(mean), float(se)
    if alternative == "two-sided":
        q = float(special.stdtrit(df, 0.5 + confidence_level / 2))
        return ConfidenceInterval(mean - q * se, mean + q * se)
    q = float(special.stdtrit(df, confidence_level))
    if alternative == "greater":
        return ConfidenceInterval(mean - q * se, float(np.inf))
    return ConfidenceInterval(float(-np.inf), mean + q * se)


def percentile_interval(dist: np.ndarray, confidence_level: float, alternative: str):
    """Percentile bootstrap interval from the bootstrap distribution of the mean difference."""
    if alternative == "two-sided":
        lo, hi = np.quantile(dist, [(1 - confidence_level) / 2, (1 + confidence_level) / 2])
        return ConfidenceInterval(float(lo), float(hi))
    if alternative == "greater":
        return ConfidenceInterval(float(np.quantile(dist, 1 - confidence_level)), np.inf)
    return ConfidenceInterval(-np.inf, float(np.quantile(dist, confidence_level)))


@dataclass(frozen=True)
class PairedTestResult:
    """Result of :func:`uefast.stats.paired_test` for systems x and y over the same topics.

    Attributes
    ----------
    method : str
        ``"t"``, ``"wilcoxon"``, ``"sign"``, ``"bootstrap"`` or ``"randomization"``.
    statistic : float
        t (t-test and bootstrap: the observed studentised statistic), ``min(W+, W-)`` (Wilcoxon,
        two-sided) or ``W+`` (one-sided), ``n+`` (sign test), ``mean(x - y)`` (randomisation).
    pvalue : float
        The p-value (ASL for the bootstrap), in [0, 1].
    alternative : str
        ``"two-sided"``, ``"greater"`` (mean x > mean y) or ``"less"``.
    n_topics : int
        Number of paired observations.
    mean_difference : float
        ``mean(x) - mean(y)``.
    effect_size : float
        Standardised mean difference of paired data (Cohen's d_z): ``mean(z) / sd(z)``, ``z = x - y``;
        0 when ``z`` is constant zero, ``±inf`` when ``z`` is a non-zero constant.
    df : int or None
        Degrees of freedom (t-test), otherwise None.
    exact : bool or None
        Whether the null distribution was enumerated exactly (randomisation, Wilcoxon).
    n_resamples : int or None
        Number of resamples (bootstrap, Monte Carlo randomisation), otherwise None.
    seed : int or None
        The seed actually used (resampling tests), so that the call can be repeated.
    """

    method: str
    statistic: float
    pvalue: float
    alternative: str
    n_topics: int
    mean_difference: float
    effect_size: float
    df: int | None = None
    exact: bool | None = None
    n_resamples: int | None = None
    seed: int | None = None
    _standard_error: float = field(default=np.nan, repr=False, compare=False)
    _bootstrap_means: np.ndarray | None = field(default=None, repr=False, compare=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Confidence interval for ``mean(x) - mean(y)``.

        The bootstrap test gives the percentile interval of its own resampled mean differences
        (Efron & Tibshirani 1993, §13.3); every other test gives the Student-t interval
        ``mean ± t_{n-1} · sd(z)/√n``. One-sided alternatives give one-sided intervals.
        """
        level = check_probability("confidence_level", confidence_level)
        if self._bootstrap_means is not None:
            return percentile_interval(self._bootstrap_means, level, self.alternative)
        return t_interval(self.mean_difference, self._standard_error, self.n_topics - 1, level,
                          self.alternative)
