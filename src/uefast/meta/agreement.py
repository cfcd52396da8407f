"""Inter-assessor agreement on relevance judgments: Cohen's κ (unweighted, linear, quadratic),
Fleiss' κ and Krippendorff's α over two or more qrels tables, with confidence intervals.

Each qrels table is one assessor (or one assessor group) judging (qid, docid) pairs; the tables
are aligned on (qid, docid) and an *item* is one such pair. Formulas: :mod:`uefast.meta._kappa`.
Table layout: data_schemas/meta_agreement.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
from scipy import special

from uefast.errors import InputError
from uefast.meta import _kappa
from uefast.stats._rng import normalize_seed
from uefast.stats._validation import (check_choice, check_n_resamples, check_probability,
                                      check_seed)
from uefast.stats.results import ConfidenceInterval, percentile_interval

__all__ = ["AgreementResult", "agreement", "rating_matrix"]

STATISTICS = ("cohen", "fleiss", "krippendorff")
LEVELS = ("nominal", "ordinal", "interval", "ratio")
_WEIGHTS = ("linear", "quadratic")


@dataclass(frozen=True)
class AgreementResult:
    """Result of :func:`agreement`.

    Attributes
    ----------
    statistic : float
        The coefficient: Cohen's κ / weighted κ, Fleiss' κ, or Krippendorff's α.
    pvalue : float
        Two-sided p-value of H0: κ = 0 from the asymptotic null standard error (Cohen: Fleiss,
        Cohen & Everitt 1969; Fleiss: Fleiss, Nee & Landis 1979); NaN for Krippendorff's α
        (no standard test; use the bootstrap interval) and where the null SE is 0 or undefined.
    method : str
        ``"cohen"``, ``"fleiss"`` or ``"krippendorff"``.
    weights : str or None
        Cohen's κ weights (``None``, ``"linear"``, ``"quadratic"``); None for the others.
    level : str or None
        Krippendorff's level of measurement; None for the κ statistics.
    n_items : int
        (qid, docid) pairs that enter the statistic.
    n_assessors : int
        Number of qrels tables.
    categories : tuple of int
        The label values, ascending; weights and distances use these positions (weighted κ,
        ordinal α) or values (interval / ratio α).
    n_excluded : int
        (qid, docid) pairs judged in some table but not used: for κ those not judged by every
        assessor, for α those judged by one assessor only.
    excluded_per_assessor : tuple of int
        For each assessor, how many of the excluded pairs it judged (two assessors: the pairs
        only A judged, the pairs only B judged).
    standard_error : float
        Asymptotic standard error of the statistic (Cohen's κ only), else NaN.
    ci_method : str
        ``"asymptotic"`` (Wald interval statistic ± z·se) or ``"bootstrap"`` (percentile interval
        over items resampled with replacement).
    n_resamples, seed : int or None
        The bootstrap's size and the seed it used (None for the asymptotic interval).
    """

    statistic: float
    pvalue: float
    method: str
    weights: str | None
    level: str | None
    n_items: int
    n_assessors: int
    categories: tuple
    n_excluded: int
    excluded_per_assessor: tuple
    standard_error: float
    ci_method: str
    n_resamples: int | None = None
    seed: int | None = None
    _bootstrap: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def bootstrap_distribution(self) -> np.ndarray | None:
        """The statistic in each bootstrap resample (None for the asymptotic interval)."""
        return None if self._bootstrap is None else self._bootstrap.copy()

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Two-sided interval for the coefficient: the Wald interval ``statistic ± z_{(1+c)/2}
        · standard_error`` (Fleiss, Cohen & Everitt 1969) or the percentile bootstrap interval
        (Efron & Tibshirani 1993, §13.3) of the resampled statistics."""
        level = check_probability("confidence_level", confidence_level)
        if self._bootstrap is not None:
            return percentile_interval(self._bootstrap, level, "two-sided")
        z = float(special.ndtri(0.5 + level / 2))
        return ConfidenceInterval(self.statistic - z * self.standard_error,
                                  self.statistic + z * self.standard_error)


def _decoded(arr):
    """A dictionary-encoded key column (pandas categorical) as its plain values."""
    return arr.dictionary_decode() if pa.types.is_dictionary(arr.type) else arr


def rating_matrix(qrels: Sequence[Any], *, categories: Sequence[int] | None = None,
                  qid: str = "qid", docid: str = "docid", label: str = "label"):
    """Align qrels tables on (qid, docid).

    Returns ``(keys, codes, categories)``: ``keys`` a ``pyarrow.Table`` of the (qid, docid) pairs
    judged in at least one table (order: first appearance, table by table), ``codes`` an int64
    array ``(n_pairs, n_tables)`` of category positions with -1 where a table has no judgment,
    and ``categories`` the label values (ascending; ``categories`` if given, which must hold
    every label). Errors name the table, column and value: a missing column, non-integer
    labels, qid/docid types that differ between tables, a pair judged twice in one table."""
    import polars as pl

    from uefast.inputs import check_same_kind, column, label_array
    from uefast.io.tables import qrels_from

    frames, first = [], None
    for i, obj in enumerate(qrels):
        what = f"qrels {i + 1}"
        t = qrels_from(obj, what)
        q, d = (_decoded(column(t, c, what)) for c in (qid, docid))
        if first is None:
            first = (q, d, what)
        else:
            check_same_kind(first[0], q, qid, first[2], what)
            check_same_kind(first[1], d, docid, first[2], what)
        lab = label_array(column(t, label, what), label, what, negative="keep").astype(np.int64)
        frames.append(pl.DataFrame({"qid": pl.from_arrow(q), "docid": pl.from_arrow(d),
                                    "label": lab, "table": np.full(lab.size, i, np.int32)}))
    long = pl.concat(frames, how="vertical_relaxed")
    dup = long.filter(pl.struct("table", "qid", "docid").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise InputError(f"qrels {row['table'] + 1}: qid {row['qid']!r}, docid {row['docid']!r} "
                         "is judged more than once; an assessor gives one label per pair")
    labels = long["label"].to_numpy()
    if categories is None:
        cats = np.unique(labels)
    else:
        cats = np.asarray(categories)
        if cats.ndim != 1 or cats.size == 0 or not np.issubdtype(cats.dtype, np.integer):
            raise InputError(f"`categories` must be a non-empty sequence of integer labels; "
                             f"got {categories!r}")
        if np.unique(cats).size != cats.size:
            raise InputError(f"`categories` repeats a label: {categories!r}")
        cats = np.sort(cats.astype(np.int64))
        outside = ~np.isin(labels, cats)
        if outside.any():
            row = long.row(int(np.argmax(outside)), named=True)
            raise InputError(f"qrels {row['table'] + 1}: label {row['label']} (qid "
                             f"{row['qid']!r}, docid {row['docid']!r}) is not in `categories` "
                             f"{cats.tolist()}")
    long = long.with_columns(pl.Series("code", np.searchsorted(cats, labels).astype(np.int64)))
    keys = long.select("qid", "docid").unique(maintain_order=True).with_row_index("item")
    long = long.join(keys, on=["qid", "docid"], how="left")
    codes = np.full((keys.height, len(frames)), -1, np.int64)
    codes[long["item"].to_numpy(), long["table"].to_numpy()] = long["code"].to_numpy()
    return keys.drop("item").to_arrow(), codes, cats


def _check_options(n_tables, statistic, weights, level, ci, unmatched):
    statistic = check_choice("statistic", statistic, STATISTICS)
    if weights is not None:
        if statistic != "cohen":
            raise InputError(f"`weights`={weights!r} applies to statistic='cohen' (weighted κ); "
                             f"got statistic={statistic!r}")
        weights = check_choice("weights", weights, _WEIGHTS)
    if level is not None and statistic != "krippendorff":
        raise InputError(f"`level`={level!r} applies to statistic='krippendorff'; "
                         f"got statistic={statistic!r}")
    if statistic == "krippendorff":
        level = check_choice("level", "nominal" if level is None else level, LEVELS)
    if ci is None:
        ci = "asymptotic" if statistic == "cohen" else "bootstrap"
    ci = check_choice("ci", ci, ("asymptotic", "bootstrap"))
    if ci == "asymptotic" and statistic != "cohen":
        raise InputError(f"`ci`='asymptotic' is available for Cohen's κ only (the standard "
                         f"errors of Fleiss' κ and Krippendorff's α are for H0 or unknown); "
                         f"use ci='bootstrap' with statistic={statistic!r}")
    unmatched = check_choice("unmatched", unmatched, ("exclude", "error"))
    if n_tables < 2:
        raise InputError(f"agreement needs at least 2 qrels tables (assessors); got {n_tables}")
    if statistic == "cohen" and n_tables != 2:
        raise InputError(f"Cohen's κ compares 2 assessors; got {n_tables} qrels tables: use "
                         "statistic='fleiss' or statistic='krippendorff'")
    return statistic, weights, level, ci, unmatched


def _patterns(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows and their counts (the items as weighted patterns)."""
    uniq, counts = np.unique(rows, axis=0, return_counts=True)
    return uniq, counts.astype(np.float64)


def pattern_statistic(statistic: str, rows: np.ndarray, cats: np.ndarray,
                      weights: str | None, level: str | None):
    """``(patterns, counts, stat)``: the distinct rating patterns of the items ``rows``
    (category positions per assessor, -1 = no judgment), how often each occurs, and ``stat(w)``,
    the coefficient of each row of pattern weights ``w`` (``(B, P)``). A pattern is the pair
    (label of A, label of B) for Cohen's κ, and the count of each category among the item's
    labels for Fleiss' κ and Krippendorff's α (which do not tell assessors apart)."""
    k = cats.size
    if statistic == "cohen":
        v = _kappa.disagreement_weights(k, weights)
        pats, counts = _patterns(rows)
        cell = pats[:, 0] * k + pats[:, 1]

        def stat(w):
            tables = np.zeros((k * k, w.shape[0]))
            np.add.at(tables, cell, w.T)
            return _kappa.cohen_from_tables(tables.T.reshape(-1, k, k), v)

        return pats, counts, stat
    onehot = np.zeros((rows.shape[0], k), np.int64)
    for j in range(rows.shape[1]):
        ok = rows[:, j] >= 0
        np.add.at(onehot, (np.flatnonzero(ok), rows[ok, j]), 1)
    pats, counts = _patterns(onehot)
    if statistic == "fleiss":
        return pats, counts, lambda w: _kappa.fleiss_from_counts(pats, w)
    return pats, counts, lambda w: _kappa.alpha_from_counts(pats, w, cats, level)


def agreement(
    *qrels: Any,
    statistic: str = "cohen",
    weights: str | None = None,
    level: str | None = None,
    categories: Sequence[int] | None = None,
    ci: str | None = None,
    n_resamples: int = 9999,
    seed: int | None = None,
    unmatched: str = "exclude",
    qid: str = "qid",
    docid: str = "docid",
    label: str = "label",
) -> AgreementResult:
    """Agreement between assessors who judged the same (qid, docid) pairs.

    Parameters
    ----------
    *qrels
        Two or more qrels tables, one per assessor: ``pyarrow.Table``, Polars/pandas
        ``DataFrame``, a dict of columns, a Parquet/Arrow/CSV/TSV table file, or a TREC qrels
        file (``qid iter docno rel``), with columns ``qid``, ``docid``, ``label`` (integer
        labels; negative ones, e.g. TREC Web's -2 for spam, are ordinary categories).
    statistic : {"cohen", "fleiss", "krippendorff"}
        * ``"cohen"`` (2 assessors): κ = (p_o - p_e) / (1 - p_e) (Cohen 1960); with
          ``weights`` the weighted κ_w = 1 - Σ v_ij p_ij / Σ v_ij p_i. p_.j (Cohen 1968) with
          linear (Cicchetti & Allison 1971) or quadratic (Fleiss & Cohen 1973) disagreement
          weights on category positions.
        * ``"fleiss"`` (2 or more): Fleiss' κ (Fleiss 1971) over the pairs every assessor judged.
        * ``"krippendorff"``: Krippendorff's α = 1 - D_o / D_e (Krippendorff 2011) over the
          pairs judged by at least 2 assessors, ``level`` ``"nominal"`` (default),
          ``"ordinal"``, ``"interval"`` or ``"ratio"``.
        Formulas: :mod:`uefast.meta._kappa`. A coefficient whose chance agreement is total
        (every label the same) is 1 (SPEC_math §6.14).
    categories : sequence of int, optional
        The label scale (default: the labels that occur). Give it when a grade may go unused
        (weighted κ and ordinal α depend on positions on the scale).
    ci : {"asymptotic", "bootstrap"}, optional
        Interval of :meth:`AgreementResult.confidence_interval`. Default: asymptotic (Wald,
        Fleiss, Cohen & Everitt 1969) for Cohen's κ, bootstrap for the others.
    n_resamples, seed
        Bootstrap: items (pairs) resampled with replacement ``n_resamples`` times, from
        ``numpy.random.default_rng(seed)``; the seed used is in the result.
    unmatched : {"exclude", "error"}
        Pairs judged by too few assessors (κ: not by all; α: by one only) are left out of the
        statistic and counted in ``n_excluded`` / ``excluded_per_assessor`` (``"exclude"``),
        or raise :class:`InputError` naming the first such pair (``"error"``).
    qid, docid, label : str
        Column names.

    Returns
    -------
    AgreementResult
        ``statistic``, ``pvalue``, ``confidence_interval()``, counts and categories.
    """
    statistic, weights, level, ci, unmatched = _check_options(
        len(qrels), statistic, weights, level, ci, unmatched)
    if ci == "bootstrap":
        n_resamples = check_n_resamples(n_resamples)
        seed = normalize_seed(check_seed(seed))
    keys, codes, cats = rating_matrix(qrels, categories=categories, qid=qid, docid=docid,
                                      label=label)
    judged = codes >= 0
    per_item = judged.sum(axis=1)
    need = 2 if statistic == "krippendorff" else codes.shape[1]
    used = per_item >= need
    if unmatched == "error" and not used.all():
        i = int(np.argmax(~used))
        row = keys.slice(i, 1).to_pylist()[0]
        who = [int(t) + 1 for t in np.flatnonzero(judged[i])]
        raise InputError(f"qid {row['qid']!r}, docid "
                         f"{row['docid']!r} is judged only in qrels {who} (needs {need} "
                         f"assessors); pass unmatched='exclude' to count and leave out such pairs")
    n_items = int(used.sum())
    if n_items == 0:
        raise InputError(f"no (qid, docid) pair is judged by {need} assessors: the qrels do not "
                         "overlap")
    excluded = judged & ~used[:, None]
    rows = codes[used]
    pats, counts, stat = pattern_statistic(statistic, rows, cats, weights, level)
    se, pvalue = float("nan"), float("nan")
    if statistic == "cohen":
        observed = np.zeros((cats.size, cats.size))
        observed[pats[:, 0], pats[:, 1]] = counts
        value, se, se0 = _kappa.cohen_asymptotic(
            observed, _kappa.disagreement_weights(cats.size, weights))
    else:
        value = float(stat(counts[None])[0])
        se0 = (_kappa.fleiss_null_se(pats, counts) if statistic == "fleiss"
               else float("nan"))
    if statistic != "krippendorff" and se0 > 0:
        pvalue = float(2.0 * special.ndtr(-abs(value) / se0))
    boot = None
    if ci == "bootstrap":
        boot = _bootstrap(stat, counts, n_resamples, seed)
    return AgreementResult(
        statistic=float(value), pvalue=pvalue, method=statistic, weights=weights, level=level,
        n_items=n_items, n_assessors=codes.shape[1], categories=tuple(int(c) for c in cats),
        n_excluded=int((~used & (per_item > 0)).sum()),
        excluded_per_assessor=tuple(int(x) for x in excluded.sum(axis=0)),
        standard_error=se if statistic == "cohen" else float("nan"), ci_method=ci,
        n_resamples=n_resamples if ci == "bootstrap" else None,
        seed=seed if ci == "bootstrap" else None, _bootstrap=boot)


_BATCH = 1024


def _bootstrap(stat, counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The statistic over ``n_resamples`` item resamples: pattern counts drawn from
    ``Multinomial(n, counts / n)`` (the same law as resampling the n items with replacement)."""
    rng = np.random.default_rng(seed)
    n = int(counts.sum())
    p = counts / counts.sum()
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, _BATCH):
        b = min(_BATCH, n_resamples - start)
        out[start:start + b] = stat(rng.multinomial(n, p, size=b).astype(np.float64))
    return out
