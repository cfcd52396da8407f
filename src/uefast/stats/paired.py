"""``paired_test``: one pair of systems over the same topics, any of five tests."""
from __future__ import annotations

import numpy as np

from uefast.errors import InputError
from uefast.stats import parametric as P
from uefast.stats import resampling as R
from uefast.stats._rng import normalize_seed
from uefast.stats._validation import (ALTERNATIVES, check_choice, check_n_resamples,
                                      check_nonnegative, check_pair, check_seed)
from uefast.stats.results import PairedTestResult

__all__ = ["paired_test", "METHODS", "DEFAULT_RESAMPLES", "resampling_settings"]

METHODS = ("t", "wilcoxon", "sign", "bootstrap", "randomization")
RESAMPLING = ("bootstrap", "randomization")
DEFAULT_RESAMPLES = {"bootstrap": 1000, "randomization": 100_000, "tukey_hsd": 10_000}


def resampling_settings(method, n, *, n_resamples, seed, exact, plus_one, batch_size):
    """Normalise the resampling arguments shared by ``paired_test`` and ``all_pairs``."""
    if n_resamples is None:
        n_resamples = DEFAULT_RESAMPLES.get(method, 1)
    n_resamples = check_n_resamples(n_resamples)
    if batch_size is not None:
        batch_size = check_n_resamples(batch_size, "batch_size")
    seed = check_seed(seed)
    if exact is not None and not isinstance(exact, bool):
        raise InputError(f"`exact` must be True, False or None; got {exact!r}")
    if plus_one is not None and not isinstance(plus_one, bool):
        raise InputError(f"`plus_one` must be True, False or None; got {plus_one!r}")
    if method == "randomization":
        if exact is None:
            exact = n <= R.DEFAULT_EXACT_TOPICS
        if exact and n > R.MAX_EXACT_TOPICS:
            raise InputError(f"`exact=True` enumerates 2**n sign vectors and needs n <= "
                             f"{R.MAX_EXACT_TOPICS} topics; got n = {n}")
        plus_one = True if plus_one is None else plus_one
    else:
        plus_one = False if plus_one is None else plus_one
    if method in RESAMPLING or method == "tukey_hsd":
        seed = normalize_seed(seed)
    return n_resamples, seed, exact, plus_one, batch_size


def _paired_test_iv(x, y, method, alternative, epsilon, exact):
    method = check_choice("method", method, METHODS)
    if exact is not None and not isinstance(exact, bool):
        raise InputError(f"`exact` must be True, False or None; got {exact!r}")
    alternative = check_choice("alternative", alternative, ALTERNATIVES)
    epsilon = check_nonnegative("epsilon", epsilon)
    x, y = check_pair(x, y)
    return x, y, method, alternative, epsilon


def effect_size_dz(mean: float, sd: float, tol: float) -> float:
    """Cohen's d_z = mean(z)/sd(z) with 0/0 -> 0 and c/0 -> ±inf."""
    if sd <= tol:
        return 0.0 if abs(mean) <= tol else float(np.copysign(np.inf, mean))
    return mean / sd


def _finish(method, stat, p, alternative, z, **extra):
    mean, sd = P.describe_differences(z)
    tol = P.zero_tolerance(z)
    return PairedTestResult(
        method=method, statistic=float(stat), pvalue=float(min(1.0, max(0.0, p))),
        alternative=alternative, n_topics=int(z.shape[0]), mean_difference=mean,
        effect_size=effect_size_dz(mean, sd, tol),
        _standard_error=sd / np.sqrt(z.shape[0]), **extra)


def paired_test(x, y, method="t", *, alternative="two-sided", n_resamples=None, seed=0,
                exact=None, plus_one=None, epsilon=0.0, batch_size=None) -> PairedTestResult:
    """Paired significance test of two systems' per-topic scores ``x`` and ``y``.

    Methods (``z = x - y``; formulas and oracles in SPEC_math §6):

    * ``"t"``: paired t-test, ``t = z̄ / (sd(z)/√n)``, ``df = n - 1`` (Student 1908).
    * ``"wilcoxon"``: Wilcoxon signed-rank (Wilcoxon 1945); zeros dropped, average ranks, exact
      subset-sum null when there are no ties/zeros and ``N <= 50`` (or ``exact=True``), else the
      normal approximation without continuity correction.
    * ``"sign"``: sign test on ``n+ = #{z > epsilon}`` of ``N = #{|z| > epsilon}`` (binomial, p = ½);
      with ``epsilon > 0``, ``|z| <= epsilon + 1e-12·max(1, max|x|, max|y|)`` is a tie (rounding).
    * ``"bootstrap"``: Sakai's studentised paired bootstrap test (SIGIR 2006, Fig. 1): ASL =
      ``#{|t(w*)| >= |t(z)|} / B`` with ``w = z - z̄``, ``B = 1000`` by default.
    * ``"randomization"``: Fisher's paired randomisation (sign-flip) test (Smucker, Allan &
      Carterette, CIKM 2007) on ``mean(z)``: exact enumeration of all ``2^n`` sign vectors when
      ``n <= 20`` (or ``exact=True``, ``n <= 30``), else Monte Carlo with ``B = 100,000`` and
      ``p = (count + 1)/(B + 1)`` (``plus_one=False``: ``count / B``).

    Parameters
    ----------
    x, y : array_like
        Per-topic scores of the two systems on the same topics in the same order (finite, n >= 2).
    method : str
        One of the methods above.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: mean(x) > mean(y).
    n_resamples : int, optional
        Resamples B for the resampling tests.
    seed : int or None
        Seed of the counter-based generator; resample ``b`` depends only on ``(seed, b)``, so the
        p-value is the same for any thread count or ``batch_size``. ``None`` draws a seed, which is
        reported in the result.
    exact, plus_one, epsilon, batch_size
        See above; ``batch_size`` only bounds memory (resamples per kernel call).
    """
    x, y, method, alternative, epsilon = _paired_test_iv(x, y, method, alternative, epsilon,
                                                         exact)
    return _DISPATCH[method](x, y, alternative, n_resamples=n_resamples, seed=seed, exact=exact,
                             plus_one=plus_one, epsilon=epsilon, batch_size=batch_size)


def _run_t(x, y, alternative, **_):
    z = x - y
    stat, p, extra = P.t_test(z, alternative)
    return _finish("t", stat, p, alternative, z, df=extra["df"])


def _run_sign(x, y, alternative, *, epsilon, **_):
    z = x - y
    stat, p, _ = P.sign_test(z, alternative, epsilon, P.zero_tolerance(np.concatenate((x, y))))
    return _finish("sign", stat, p, alternative, z)


def _run_wilcoxon(x, y, alternative, *, exact, **_):
    z = x - y
    stat, p, extra = P.wilcoxon_test(z, alternative, exact)
    return _finish("wilcoxon", stat, p, alternative, z, exact=extra["exact"])


def _run_bootstrap(x, y, alternative, *, n_resamples, seed, exact, plus_one, batch_size, **_):
    n_resamples, seed, _, plus_one, batch_size = resampling_settings(
        "bootstrap", x.shape[0], n_resamples=n_resamples, seed=seed, exact=exact,
        plus_one=plus_one, batch_size=batch_size)
    mat = np.column_stack([x, y])
    t_obs, counts, means = R.bootstrap_pairs(mat, [(0, 1)], n_resamples=n_resamples, seed=seed,
                                             alternative=alternative, keep_means=True,
                                             batch_size=batch_size)
    p = (counts[0] + 1) / (n_resamples + 1) if plus_one else counts[0] / n_resamples
    return _finish("bootstrap", t_obs[0], p, alternative, x - y, n_resamples=n_resamples,
                   seed=seed, _bootstrap_means=means[:, 0])


def _run_randomization(x, y, alternative, *, n_resamples, seed, exact, plus_one, batch_size,
                       **_):
    n_resamples, seed, exact, plus_one, batch_size = resampling_settings(
        "randomization", x.shape[0], n_resamples=n_resamples, seed=seed, exact=exact,
        plus_one=plus_one, batch_size=batch_size)
    mat = np.column_stack([x, y])
    p, _, _ = R.randomization_pairs(mat, [(0, 1)], n_resamples=n_resamples, seed=seed,
                                    alternative=alternative, exact=exact, plus_one=plus_one,
                                    batch_size=batch_size)
    z = x - y
    mean, _ = P.describe_differences(z)
    return _finish("randomization", mean, p[0], alternative, z, exact=exact,
                   n_resamples=None if exact else n_resamples, seed=None if exact else seed)


_DISPATCH = {
    "t": _run_t,
    "wilcoxon": _run_wilcoxon,
    "sign": _run_sign,
    "bootstrap": _run_bootstrap,
    "randomization": _run_randomization,
}
