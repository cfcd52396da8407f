"""Many systems at once: ``all_pairs``, ``tukey_hsd``, p-value corrections and effect sizes.

Both return a ``pyarrow.Table`` with one row per system pair (schema: data_schemas/stats_pairs.md).
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.inputs import numeric_array, text_array
from uefast.stats import parametric as P
from uefast.stats import resampling as R
from uefast.stats._validation import (ALTERNATIVES, check_choice, check_matrix,
                                      check_nonnegative, check_probability)
from uefast.stats.matrix import MISSING_POLICIES, topic_system_matrix
from uefast.stats.paired import effect_size_dz, resampling_settings
from uefast.stats.results import ConfidenceInterval, percentile_interval, t_interval

__all__ = ["all_pairs", "tukey_hsd", "adjust_pvalues", "sakai_effect_size_e",
           "difference_required", "DifferenceRequired", "CORRECTIONS", "PAIR_METHODS"]

CORRECTIONS = ("none", "bonferroni", "holm", "bh")
PAIR_METHODS = ("t", "wilcoxon", "sign", "bootstrap", "randomization", "tukey_hsd")


def _adjust_pvalues_iv(pvalues, method):
    method = check_choice("method", method, CORRECTIONS)
    try:
        p = np.asarray(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        p = None
    if p is None or p.ndim != 1 or (p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1)):
        raise InputError(f"`pvalues` must be a 1-D array of values in [0, 1]; got {pvalues!r}")
    return p, method


def adjust_pvalues(pvalues, method="holm") -> np.ndarray:
    """Multiple-comparison adjusted p-values for a family of ``k`` tests.

    * ``"bonferroni"``: ``min(1, k·p)`` (Bonferroni / Dunn 1961), family-wise error rate.
    * ``"holm"``: step-down ``max_{j<=i} min(1, (k - j + 1)·p_(j))`` (Holm 1979), FWER.
    * ``"bh"``: step-up ``min_{j>=i} min(1, k·p_(j)/j)`` (Benjamini & Hochberg 1995), false
      discovery rate.
    * ``"none"``: unchanged.

    ``p_(j)`` is the j-th smallest p-value; results are returned in the input order.
    """
    p, method = _adjust_pvalues_iv(pvalues, method)
    k = p.shape[0]
    if method == "none" or k == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * k)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (k - np.arange(k)) * ranked))
    else:
        adj = np.minimum.accumulate((k * ranked / np.arange(1, k + 1))[::-1])[::-1]
        adj = np.minimum(1.0, adj)
    out = np.empty(k)
    out[order] = adj
    return out


def sakai_effect_size_e(x: np.ndarray) -> float:
    """``sqrt(V_E)``: residual sd of the two-way ANOVA without replication of the topics x systems
    matrix, ``V_E = Σ (x_ij - x̄_i. - x̄_.j + x̄)² / ((n-1)(m-1))``; a mean difference divided by it
    is Sakai's ES_E (Sakai, "Statistical reform in IR?", SIGIR Forum 2014). The squares are
    summed on ``x`` scaled by a power of two (:func:`~uefast.stats.parametric.pow2_scale`, exact),
    so |x| ~ 1e160 does not overflow."""
    n, m = x.shape
    s = P.pow2_scale(x)
    u = x / s
    resid = u - u.mean(axis=1, keepdims=True) - u.mean(axis=0, keepdims=True) + u.mean()
    return float(np.sqrt((resid ** 2).sum() / ((n - 1) * (m - 1)))) * s


def _coerce_matrix(matrix, measure, column, missing, systems):
    """(X, system names, missing-policy report or None) from an ndarray or a long table."""
    if isinstance(matrix, np.ndarray) or isinstance(matrix, (list, tuple)):
        x = check_matrix(matrix)
        if systems is None:
            names = [str(j) for j in range(x.shape[1])]
        else:
            names = [str(s) for s in systems]
            if len(names) != x.shape[1] or len(set(names)) != len(names):
                raise InputError(f"`systems` must give {x.shape[1]} distinct names for the "
                                 f"columns of `matrix`; got {list(systems)!r}")
        return x, names, None
    tsm = topic_system_matrix(matrix, measure, column=column, missing=missing, systems=systems)
    if tsm.dropped_qids or tsm.filled:
        warnings.warn(f"missing={tsm.missing!r}: dropped {len(tsm.dropped_qids)} queries and "
                      f"filled {len(tsm.filled)} cells with 0 (see the table metadata)",
                      UserWarning, stacklevel=3)
    x = check_matrix(tsm.matrix)
    return x, [str(s) for s in tsm.systems], tsm.report() | {"measure": tsm.measure,
                                                             "column": tsm.column}


def _pairs(names, baseline, *, by_index=True):
    """All pairs, or ``(i, baseline)`` for every other system. ``baseline`` is matched against
    the system names as text (the table names systems as text: an integer system 2 is "2"); an
    integer that names no system is a column index, only when ``by_index`` (a matrix, not a
    long table)."""
    m = len(names)
    if baseline is None:
        return [(i, j) for i in range(m) for j in range(i + 1, m)]
    is_int = isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool)
    if str(baseline) in names:
        b = names.index(str(baseline))
    elif is_int and by_index:
        if not 0 <= baseline < m:
            raise InputError(f"`baseline` index must be in [0, {m}); got {baseline!r}")
        b = int(baseline)
    else:
        raise InputError(f"`baseline` {baseline!r} is not one of the systems {names!r}")
    return [(i, b) for i in range(m) if i != b]


def _pair_moments(x, pairs):
    """Per pair: mean and sd of ``z = x_i - x_j`` and the zero tolerance of SPEC §6."""
    out = []
    for i, j in pairs:
        z = x[:, i] - x[:, j]
        out.append((*P.describe_differences(z), P.zero_tolerance(z)))
    return out


def _table(x, names, pairs, moments, stat, pvalue, ci, alpha, correction, settings):
    ii = np.array([i for i, _ in pairs], dtype=np.int64)
    jj = np.array([j for _, j in pairs], dtype=np.int64)
    means = x.mean(axis=0)
    diff = np.array([mean for mean, _, _ in moments])
    es_d = [effect_size_dz(mean, sd, tol) for mean, sd, tol in moments]
    # ES_E = diff / sqrt(V_E), with the zero tolerance of d_z (SPEC §6) on the matrix's scale:
    # V_E of an additive matrix is rounding noise (diff / 1e-17 was ±1e15, not ±inf)
    sd_e, tol_e = sakai_effect_size_e(x), P.zero_tolerance(x)
    es_e = np.array([effect_size_dz(mean, sd_e, tol_e) for mean in diff])
    pvalue = np.clip(np.asarray(pvalue, dtype=np.float64), 0.0, 1.0)
    adjusted = adjust_pvalues(pvalue, correction)
    columns = {
        "system_a": text_array([names[i] for i in ii]),
        "system_b": text_array([names[j] for j in jj]),
        "n_topics": numeric_array(np.full(len(pairs), x.shape[0], np.int64)),
        "mean_a": numeric_array(means[ii]),
        "mean_b": numeric_array(means[jj]),
        "mean_difference": numeric_array(diff),
        "effect_size": numeric_array(np.asarray(es_d, dtype=np.float64)),
        "effect_size_e": numeric_array(es_e.astype(np.float64)),
        "statistic": numeric_array(np.asarray(stat, dtype=np.float64)),
        "pvalue": numeric_array(pvalue),
        "pvalue_adjusted": numeric_array(adjusted),
        "significant": numeric_array(adjusted < alpha),
        "ci_low": numeric_array(np.array([c.low for c in ci], dtype=np.float64)),
        "ci_high": numeric_array(np.array([c.high for c in ci], dtype=np.float64)),
    }
    meta = {b"uefast.stats": json.dumps(settings | {"alpha": alpha, "correction": correction,
                                                     "n_pairs": len(pairs)}).encode()}
    return pa.table(columns).replace_schema_metadata(meta)


def _all_pairs_iv(method, alternative, correction, alpha, confidence_level, missing, epsilon,
                  exact):
    if exact is not None and not isinstance(exact, bool):
        raise InputError(f"`exact` must be True, False or None; got {exact!r}")
    return (check_choice("method", method, PAIR_METHODS),
            check_choice("alternative", alternative, ALTERNATIVES),
            check_choice("correction", correction, CORRECTIONS),
            check_probability("alpha", alpha),
            check_probability("confidence_level", confidence_level),
            check_choice("missing", missing, MISSING_POLICIES),
            check_nonnegative("epsilon", epsilon))


def all_pairs(matrix, method="t", *, measure=None, column="value", missing="intersect",
              systems=None, baseline=None, alternative="two-sided", correction="none",
              alpha=0.05, confidence_level=0.95, n_resamples=None, seed=0, exact=None,
              plus_one=None, epsilon=0.0, batch_size=None, backend="cpu") -> pa.Table:
    """Test every pair of systems (or every system against ``baseline``); one row per pair.

    ``matrix`` is a topics x systems array or the long table of :func:`uefast.evaluate` (then
    ``measure``/``column``/``missing``/``systems`` select and align it, see
    :func:`topic_system_matrix`; the missing-data report goes into the table metadata).
    ``method`` is one of the :func:`paired_test` methods or ``"tukey_hsd"`` (then see
    :func:`tukey_hsd`). The resampling tests draw one set of resamples shared by all pairs
    (common random numbers, as Sakai recommends), so the p-value of a pair equals
    ``paired_test`` on that pair with the same seed. Rows are pairs ``(i, j)``, ``i < j`` in column
    order, or ``(system, baseline)``; ``mean_difference = mean_a - mean_b``. ``baseline`` names a
    system, matched as text as the table names systems (``2`` or ``"2"`` for an integer system
    2); only for a numpy matrix is an integer that names no system a column index.

    ``correction`` ("none", "bonferroni", "holm", "bh"; see :func:`adjust_pvalues`) fills
    ``pvalue_adjusted``; ``significant = pvalue_adjusted < alpha``. Intervals: bootstrap
    percentile (bootstrap), simultaneous Tukey (tukey_hsd), Student t otherwise.

    ``backend`` ("cpu", "cuda", "auto") runs the resamples of the bootstrap, randomisation and
    Tukey HSD tests on the CPU or an NVIDIA GPU (:mod:`uefast.gpu.resample`,
    :mod:`uefast.gpu.tukey`) with the same counter-based draws: the same p-values on the same
    seed. It is validated for every method and unused by the others.
    """
    method, alternative, correction, alpha, level, missing, epsilon = _all_pairs_iv(
        method, alternative, correction, alpha, confidence_level, missing, epsilon, exact)
    backend = check_choice("backend", backend, ("cpu", "cuda", "auto"))
    if method == "tukey_hsd":
        if alternative != "two-sided":
            raise InputError(f"`alternative` must be 'two-sided' for tukey_hsd; got {alternative!r}")
        return tukey_hsd(matrix, measure=measure, column=column, missing=missing,
                         systems=systems, baseline=baseline, n_resamples=n_resamples, seed=seed,
                         alpha=alpha, confidence_level=level, correction=correction,
                         batch_size=batch_size, backend=backend)
    x, names, report = _coerce_matrix(matrix, measure, column, missing, systems)
    pairs = _pairs(names, baseline, by_index=report is None)
    n = x.shape[0]
    settings = {"method": method, "alternative": alternative, "confidence_level": level,
                "missing_report": report}
    moments = _pair_moments(x, pairs)
    ci_t = [t_interval(mean, sd / np.sqrt(n), n - 1, level, alternative)
            for mean, sd, _ in moments]
    if method in ("bootstrap", "randomization"):
        b, seed, exact, plus_one, batch_size = resampling_settings(
            method, n, n_resamples=n_resamples, seed=seed, exact=exact, plus_one=plus_one,
            batch_size=batch_size)
        settings |= {"n_resamples": b, "seed": seed, "plus_one": plus_one}
        if method == "bootstrap":
            stat, counts, bm = R.bootstrap_pairs(x, pairs, n_resamples=b, seed=seed,
                                                 alternative=alternative, keep_means=True,
                                                 batch_size=batch_size, backend=backend)
            pv = (counts + 1) / (b + 1) if plus_one else counts / b
            ci = [percentile_interval(bm[:, p], level, alternative) for p in range(len(pairs))]
            settings["ci_method"] = "bootstrap-percentile"
        else:
            pv, _, _ = R.randomization_pairs(x, pairs, n_resamples=b, seed=seed,
                                             alternative=alternative, exact=exact,
                                             plus_one=plus_one, batch_size=batch_size,
                                             backend=backend)
            stat = [mean for mean, _, _ in moments]
            ci, settings["ci_method"], settings["exact"] = ci_t, "t", exact
            if exact:  # all 2^n sign vectors: no resamples, no seed (as paired_test reports)
                settings |= {"n_resamples": None, "seed": None}
    else:
        run = {"t": lambda a, b: P.t_test(a - b, alternative),
               "sign": lambda a, b: P.sign_test(a - b, alternative, epsilon,
                                                P.zero_tolerance(np.concatenate((a, b)))),
               "wilcoxon": lambda a, b: P.wilcoxon_test(a - b, alternative, exact)}[method]
        res = [run(x[:, i], x[:, j]) for i, j in pairs]
        stat, pv = [r[0] for r in res], [r[1] for r in res]
        ci, settings["ci_method"] = ci_t, "t"
    return _table(x, names, pairs, moments, stat, pv, ci, alpha, correction, settings)


def _tukey_hsd_iv(alpha, confidence_level, correction, missing):
    return (check_probability("alpha", alpha),
            check_probability("confidence_level", confidence_level),
            check_choice("correction", correction, CORRECTIONS),
            check_choice("missing", missing, MISSING_POLICIES))


def tukey_hsd(matrix, *, measure=None, column="value", missing="intersect", systems=None,
              baseline=None, n_resamples=None, seed=0, alpha=0.05, confidence_level=0.95,
              correction="none", batch_size=None, backend="cpu") -> pa.Table:
    """Carterette's randomised Tukey HSD test (TOIS 2012; SPEC §6.6), family-wise over all systems.

    For ``b = 1..B`` (default 10,000) every row (topic) of the topics x systems matrix is permuted
    independently and uniformly across the ``m`` systems and ``q*_b = max_j mean_j - min_j mean_j``
    of the permuted column means is recorded. ``p_ij = #{q*_b >= |mean_i - mean_j| - γ} / B``: one
    null sample serves every pair, so ``p`` is non-increasing in the observed difference. On
    column sums ``S``, ``γ = 1e-12·max(|S_i - S_j|, Σ_k (two largest |x_kj| of row k))``: as in
    the randomisation test (a deviation from SPEC §6's ``1e-12·|T_obs|``), γ covers the rounding
    of a difference of two permuted column sums, so exact ties (equal means, rounded
    differently) are counted; for ``m = 2`` it is the randomisation test's γ. The
    interval is the simultaneous ``mean_i - mean_j ± q*_(1-α)``. Row permutations come from the
    counter-based generator (one draw on ``[0, m!)`` per row for ``m <= 8``), so p-values do not
    depend on threads or ``batch_size``. Returns the table of :func:`all_pairs` (statistic =
    ``|mean_a - mean_b|``).

    ``backend``: ``"cpu"`` (default), ``"cuda"`` (the null sample and the exceedance counts on an
    NVIDIA GPU, :mod:`uefast.gpu.tukey`: the same draws, so statistic, p-values and interval are
    identical to the CPU's on the same seed) or ``"auto"`` (the GPU only for a large
    resamples x topics x systems, where a device is usable); the metadata records the one used.
    """
    alpha, level, correction, missing = _tukey_hsd_iv(alpha, confidence_level, correction, missing)
    x, names, report = _coerce_matrix(matrix, measure, column, missing, systems)
    pairs = _pairs(names, baseline, by_index=report is None)
    n = x.shape[0]
    b, seed, _, _, batch_size = resampling_settings(
        "tukey_hsd", n, n_resamples=n_resamples, seed=seed, exact=None, plus_one=None,
        batch_size=batch_size)
    sums = R.tukey_observed(x)
    d = np.array([abs(sums[i] - sums[j]) for i, j in pairs])
    q, count, backend = R.tukey_null_counts(x, d - R.tie_tolerance(d, R.tukey_scale(x)),
                                            n_resamples=b, seed=seed, batch_size=batch_size,
                                            backend=backend)
    q = np.sort(q)
    half = float(np.quantile(q, level)) / n
    moments = _pair_moments(x, pairs)
    ci = [ConfidenceInterval(mean - half, mean + half) for mean, _, _ in moments]
    settings = {"method": "tukey_hsd", "alternative": "two-sided", "confidence_level": level,
                "n_resamples": b, "seed": seed, "ci_method": "tukey-simultaneous",
                "backend": backend, "missing_report": report}
    return _table(x, names, pairs, moments, d / n, count / b, ci, alpha, correction, settings)


@dataclass(frozen=True)
class DifferenceRequired:
    """Sakai's estimated difference required for significance (bootstrap test, SIGIR 2006).

    ``difference`` is the maximum over pairs of ``per_pair``; ``pairs`` names the pairs in order.
    """

    difference: float
    per_pair: np.ndarray
    pairs: tuple
    alpha: float
    n_resamples: int
    seed: int
    shifted: bool


def difference_required(matrix, *, alpha=0.05, n_resamples=1000, seed=0, shifted=True,
                        measure=None, column="value", missing="intersect",
                        systems=None) -> DifferenceRequired:
    """Sakai's "estimated difference required" at level ``alpha`` (SIGIR 2006; SPEC §6.5).

    With the resamples of the paired bootstrap test (shared by all pairs): for each pair sort
    ``|t(w*_b)|`` in descending order, take the replicate at (1-based) position
    ``max(1, ⌊B·alpha⌋)`` and record its mean difference, ``|mean(w*_b)|`` (``shifted=True``, as
    published re-implementations do) or ``|x̄*_b - ȳ*_b|`` (``shifted=False``). The estimate is the
    maximum over all pairs.
    """
    alpha = check_probability("alpha", alpha)
    if not isinstance(shifted, bool):
        raise InputError(f"`shifted` must be True or False; got {shifted!r}")
    missing = check_choice("missing", missing, MISSING_POLICIES)
    x, names, _ = _coerce_matrix(matrix, measure, column, missing, systems)
    pairs = _pairs(names, None)
    b, seed, _, _, _ = resampling_settings("bootstrap", x.shape[0], n_resamples=n_resamples,
                                           seed=seed, exact=None, plus_one=None, batch_size=None)
    _, _, means, t_all = R.bootstrap_pairs(x, pairs, n_resamples=b, seed=seed,
                                           alternative="two-sided", keep_means=True, keep_t=True)
    pos = max(1, int(np.floor(b * alpha))) - 1
    per_pair = np.empty(len(pairs))
    for p, (i, j) in enumerate(pairs):
        k = np.argsort(-np.abs(t_all[:, p]), kind="stable")[pos]
        zbar = float(np.mean(x[:, i] - x[:, j]))
        per_pair[p] = abs(means[k, p] - zbar) if shifted else abs(means[k, p])
    return DifferenceRequired(float(per_pair.max()), per_pair,
                              tuple((names[i], names[j]) for i, j in pairs), alpha, b, seed,
                              shifted)
