"""Classical paired tests on the differences ``z = x - y``: t, sign and Wilcoxon signed-rank.

Each function takes the validated difference vector and returns ``(statistic, pvalue, extra)``;
:func:`uefast.stats.paired_test` wraps them into a :class:`PairedTestResult`.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from uefast.stats._kernels import compensated_sum

__all__ = ["zero_tolerance", "pow2_scale", "t_test", "sign_test", "wilcoxon_test",
           "describe_differences"]

REL_TOL = 1e-12  # SPEC §6: zero-variance tolerance and the resampling tie tolerance gamma


def zero_tolerance(z: np.ndarray) -> float:
    """``1e-12 · max(1, max|z|)``: an sd (or mean) at most this large counts as 0 (SPEC §6)."""
    return REL_TOL * max(1.0, float(np.max(np.abs(z))) if z.size else 0.0)


def pow2_scale(v: np.ndarray) -> float:
    """The power of two ``2^e`` with ``max|v| < 2^e <= 2·max|v|`` (1.0 for an all-zero ``v``;
    at most ``2^1023``).

    Sums of squares are formed on ``v / 2^e`` (``|v / 2^e| < 2``), so they cannot overflow for
    finite inputs (``|v|`` ~ 1e160 squared is inf); dividing and multiplying by a power of two
    is exact, so results for ordinary data are bit-for-bit those of the unscaled formulas.
    """
    top = float(np.max(np.abs(v))) if v.size else 0.0
    return math.ldexp(1.0, min(math.frexp(top)[1], 1023)) if 0.0 < top < math.inf else 1.0


def describe_differences(z: np.ndarray) -> tuple[float, float]:
    """Mean and sample sd (ddof=1) of ``z`` by compensated summation (order-independent of threads),
    on ``z`` scaled by :func:`pow2_scale` (no overflow of the squares)."""
    n = z.shape[0]
    s = pow2_scale(z)
    u = z / s
    mean = compensated_sum(u) / n
    sd = math.sqrt(compensated_sum((u - mean) ** 2) / (n - 1))
    return mean * s, sd * s


def _pvalue_from_t(t: float, df: float, alternative: str) -> float:
    if alternative == "two-sided":
        return float(min(1.0, 2.0 * special.stdtr(df, -abs(t))))
    if alternative == "greater":
        return float(special.stdtr(df, -t))
    return float(special.stdtr(df, t))


def studentized(mean: float, sd: float, n: int, tol: float) -> float:
    """``t = mean / (sd / √n)`` with ``0/0 -> 0`` and ``c/0 -> ±inf`` (sd, mean <= tol count as
    0: a mean of rounding noise is a mean of 0, as the resampled ones are taken in
    :func:`uefast.stats.resampling.bootstrap_pairs`)."""
    if abs(mean) <= tol:
        return 0.0
    if sd <= tol:
        return math.copysign(math.inf, mean)
    return mean / (sd / math.sqrt(n))


def t_test(z: np.ndarray, alternative: str):
    """Paired t-test (Student 1908): ``t = z̄ / (sd(z)/√n)``, ``df = n - 1`` (SPEC §6.1).

    Zero variance: ``z̄ = 0`` gives ``t = 0, p = 1``; ``z̄ ≠ 0`` gives ``t = ±inf`` (p = 0 two-sided).
    """
    n = z.shape[0]
    s = pow2_scale(z)  # exact scaling: squares of |z| ~ 1e160 would overflow
    mean = float(np.mean(z / s)) * s
    sd = float(np.std(z / s, ddof=1)) * s
    tol = zero_tolerance(z)
    if sd <= tol:
        t = studentized(mean, sd, n, tol)
        if t == 0.0:
            return 0.0, 1.0, {"df": n - 1, "se": 0.0}
        p = {"two-sided": 0.0, "greater": float(t < 0), "less": float(t > 0)}[alternative]
        return t, p, {"df": n - 1, "se": 0.0}
    se = sd / math.sqrt(n)
    t = mean / se
    return t, _pvalue_from_t(t, n - 1, alternative), {"df": n - 1, "se": se}


def sign_test(z: np.ndarray, alternative: str, epsilon: float = 0.0, tol: float = 0.0):
    """Sign test (Dixon & Mood 1946): ``n+ = #{z > ε}``, ``n- = #{z < -ε}``, ``N = n+ + n-``.

    Two-sided ``p = min(1, 2 · Σ_{i <= min(n+, n-)} C(N, i) / 2^N)``; ``greater``:
    ``P(Bin(N, ½) >= n+)``; ``less``: ``P(Bin(N, ½) <= n+)``; ``N = 0`` gives p = 1 (SPEC §6.2).
    The statistic is ``n+``. With ``ε > 0`` the cut-off is ``ε + tol``: ``z`` and ``ε`` carry
    rounding (0.65 - 0.6 = 0.05000000000000004 is a difference of ε = 0.05), so callers pass the
    zero tolerance of the scores, ``tol = 1e-12·max(1, max|x|, max|y|)`` (SPEC §6); ``ε = 0``
    needs none (``x - y`` is exactly 0 only when ``x = y``).
    """
    cut = epsilon + tol if epsilon > 0 else 0.0
    n_pos = int(np.count_nonzero(z > cut))
    n_neg = int(np.count_nonzero(z < -cut))
    return sign_from_counts(n_pos, n_neg, alternative)


def sign_from_counts(n_pos: int, n_neg: int, alternative: str):
    """:func:`sign_test` from its counts ``n+``, ``n-`` alone (the distributed adapters merge
    the counts; :mod:`uefast.distributed`)."""
    big_n = n_pos + n_neg
    if big_n == 0:
        return 0.0, 1.0, {"n_nonzero": 0}
    if alternative == "two-sided":
        p = min(1.0, 2.0 * float(stats.binom.cdf(min(n_pos, n_neg), big_n, 0.5)))
    elif alternative == "greater":
        p = float(stats.binom.sf(n_pos - 1, big_n, 0.5))
    else:
        p = float(stats.binom.cdf(n_pos, big_n, 0.5))
    return float(n_pos), p, {"n_nonzero": big_n}


def _subset_sum_counts(ranks2: np.ndarray) -> np.ndarray:
    """``counts[s]`` = number of subsets of the (integer) ranks with sum ``s`` (exact ints)."""
    total = int(ranks2.sum())
    counts = np.zeros(total + 1, dtype=object if ranks2.shape[0] > 60 else np.int64)
    counts[0] = 1
    reach = 0
    for r in ranks2.tolist():
        counts[r:reach + r + 1] = counts[r:reach + r + 1] + counts[0:reach + 1]
        reach += r
    return counts


def wilcoxon_test(z: np.ndarray, alternative: str, exact: bool | None = None):
    """Wilcoxon signed-rank test (Wilcoxon 1945), SPEC §6.3.

    Zeros are dropped ("wilcox" treatment); ``|z|`` gets average ranks; ``W+``/``W-`` are the rank
    sums of positive/negative differences. Exact null (subset-sum DP over the ranks, Mann &
    Whitney style) when ``exact`` is True, or by default when there are no ties, no zeros and
    ``N <= 50``; with ties the DP runs on doubled ranks (the exact conditional null). Otherwise the
    normal approximation ``z = (W - N(N+1)/4) / sqrt(N(N+1)(2N+1)/24 - Σ(t³-t)/48)`` without
    continuity correction. Two-sided: statistic ``min(W+, W-)``; one-sided: ``W+``.
    """
    nz = z[z != 0]
    big_n = nz.shape[0]
    had_zeros = big_n < z.shape[0]
    if big_n == 0:
        return 0.0, 1.0, {"exact": exact is not False, "n_nonzero": 0}
    ranks = stats.rankdata(np.abs(nz))
    w_plus = float(ranks[nz > 0].sum())
    w_minus = float(ranks[nz < 0].sum())
    _, tie_counts = np.unique(ranks, return_counts=True)
    return wilcoxon_from_ranks(w_plus, w_minus, tie_counts, had_zeros, alternative, exact,
                               lambda: ranks)


def wilcoxon_from_ranks(w_plus: float, w_minus: float, tie_counts: np.ndarray, had_zeros: bool,
                        alternative: str, exact: bool | None, ranks):
    """:func:`wilcoxon_test` from its rank statistics: ``W+``, ``W-``, the sizes of the tie
    groups of ``|z|`` in ascending order (``N`` = their sum), whether zeros were dropped, and
    ``ranks()`` giving the ranks (any order; called only for the exact null). The distributed
    adapters compute these from merged counts of ``|z|`` values (:mod:`uefast.distributed`)."""
    big_n = int(np.sum(tie_counts))
    has_ties = bool((np.asarray(tie_counts) > 1).any())
    use_exact = exact if exact is not None else (not has_ties and not had_zeros and big_n <= 50)
    stat = min(w_plus, w_minus) if alternative == "two-sided" else w_plus
    if use_exact:
        ranks2 = np.rint(2 * ranks()).astype(np.int64)
        counts = _subset_sum_counts(ranks2)
        total = 2 ** big_n
        w2 = int(round(2 * (stat if alternative == "two-sided" else w_plus)))
        if alternative == "greater":
            p = float(sum(counts[w2:])) / total
        else:
            p = float(sum(counts[:w2 + 1])) / total
            if alternative == "two-sided":
                p = min(1.0, 2.0 * p)
        return stat, p, {"exact": True, "n_nonzero": big_n}
    mean = big_n * (big_n + 1) / 4.0
    var = big_n * (big_n + 1) * (2 * big_n + 1) / 24.0
    var -= float(((tie_counts.astype(np.float64) ** 3) - tie_counts).sum()) / 48.0
    zstat = (stat - mean) / math.sqrt(var) if var > 0 else 0.0
    if alternative == "two-sided":
        p = min(1.0, 2.0 * float(special.ndtr(-abs(zstat))))
    elif alternative == "greater":
        p = float(special.ndtr(-zstat))
    else:
        p = float(special.ndtr(zstat))
    return stat, p, {"exact": False, "n_nonzero": big_n}
