"""Swap rates of a metric over topic subsets: Voorhees & Buckley's swap method (SIGIR 2002) and
Sakai's bootstrap variant (SIGIR 2006). SPEC_math §6.8-§6.9.

For the swap rate between two given rankings of systems see
:func:`uefast.meta.correlation.ranking_swap_rate`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.stats._validation import (check_n_resamples, check_positive, check_probability,
                                      check_seed)
from uefast.meta._matrix import as_matrix, pair_indices
from uefast.meta._ties import tie_tolerance

__all__ = ["SwapResult", "swap_rate"]

_CHUNK = 128  # trials per vectorised block (bounds memory at _CHUNK * c * m floats)


@dataclass(frozen=True)
class SwapResult:
    """Result of :func:`swap_rate`.

    ``bins`` (data_schemas/meta_swap.md): ``bin, lower, upper, count, swaps, swap_rate`` with
    ``upper`` = +inf for the last bin and ``swap_rate`` null where ``count`` is 0.
    """

    method: str
    subset_size: int
    n_trials: int
    n_pairs: int
    swap_rate: float  # all bins pooled: sum(swaps) / sum(count)
    difference_required: float  # NaN when no bin qualifies
    alpha: float
    bins: pa.Table


def _difference_required(lower: np.ndarray, count: np.ndarray, swaps: np.ndarray, alpha: float) -> float:
    """Smallest bin lower edge d* such that every non-empty bin >= d* has swap rate <= alpha, at
    least one of them (NaN when no non-empty bin qualifies: the empty bins above the data do not)."""
    best = float("nan")
    qualified = False
    for b in range(lower.size - 1, -1, -1):
        if count[b] > 0:
            if swaps[b] / count[b] > alpha:
                break
            qualified = True
        if qualified:
            best = float(lower[b])
    return best


@dataclass(frozen=True)
class SwapSettings:
    """The validated settings of :func:`swap_rate` (shared with
    :func:`uefast.distributed.swap_rate`)."""

    method: str
    subset_size: int | None
    n_trials: int | None
    bin_width: float
    n_bins: int
    binning: str
    ties: str
    alpha: float
    seed: int

    def sizes(self, n: int, m: int) -> tuple[int, int]:
        """``(c, T)`` for ``n`` topics and ``m`` systems (defaults of SPEC_math §6.8-§6.9)."""
        if m < 2:
            raise InputError(f"swap rates need at least 2 systems; got {m}")
        vb = self.method == "voorhees-buckley"
        c = (n // 2 if vb else n) if self.subset_size is None else int(self.subset_size)
        if c < 1 or (vb and 2 * c > n):
            limit = f"1..{n // 2} (disjoint halves of {n} topics)" if vb else ">= 1"
            raise InputError(f"`subset_size` must be in {limit}; got {c}")
        t_total = (50 if vb else 1000) if self.n_trials is None else int(self.n_trials)
        if t_total < 1:
            raise InputError(f"`n_trials` must be >= 1; got {t_total}")
        return c, t_total


def check_settings(*, method, subset_size, n_trials, bin_width, n_bins, binning, ties, alpha,
                   seed) -> SwapSettings:
    """Validate the settings of :func:`swap_rate` (errors name the argument and value)."""
    if method not in ("voorhees-buckley", "bootstrap"):
        raise InputError(f"`method` must be in {{'voorhees-buckley', 'bootstrap'}}; got {method!r}")
    if binning not in ("d1", "mean"):
        raise InputError(f"`binning` must be in {{'d1', 'mean'}}; got {binning!r}")
    if ties not in ("strict", "tie_is_swap"):
        raise InputError(f"`ties` must be in {{'strict', 'tie_is_swap'}}; got {ties!r}")
    bin_width = check_positive("bin_width", bin_width)
    n_bins = check_n_resamples(n_bins, "n_bins")
    alpha = check_probability("alpha", alpha)
    seed = check_seed(seed)
    if subset_size is not None:
        subset_size = check_n_resamples(subset_size, "subset_size")
    if n_trials is not None:
        n_trials = check_n_resamples(n_trials, "n_trials")
    return SwapSettings(method, subset_size, n_trials, bin_width, n_bins, binning, ties,
                        float(alpha), seed)


def tally(m1: np.ndarray, m2: np.ndarray, ii: np.ndarray, jj: np.ndarray, tol: float,
          st: SwapSettings, count: np.ndarray, swaps: np.ndarray) -> None:
    """Add the comparisons of trials with subset means ``m1``, ``m2`` (shape ``(t, m)``) to the
    bin counts ``count`` and ``swaps`` (in place): the formulas of :func:`swap_rate`."""
    # differences within the data's resolution are ties (float noise of the summation
    # order decided them before: mean(0.1, 0.2) vs mean(0.3, 0.0))
    d1 = m1[:, ii] - m1[:, jj]
    d2 = m2[:, ii] - m2[:, jj]
    d1[np.abs(d1) <= tol] = 0.0
    d2[np.abs(d2) <= tol] = 0.0
    key = np.abs(d1) if st.binning == "d1" else 0.5 * (np.abs(d1) + np.abs(d2))
    # clipped before the cast: |d| / w beyond 2**63 made a negative int64 (np.bincount failed)
    b = np.minimum(np.floor(key / st.bin_width + 1e-9), st.n_bins - 1).astype(np.int64).ravel()
    prod = (d1 * d2).ravel()
    sw = prod < 0 if st.ties == "strict" else prod <= 0
    count += np.bincount(b, minlength=st.n_bins)
    swaps += np.bincount(b, weights=sw, minlength=st.n_bins).astype(np.int64)


def swap_result(st: SwapSettings, c: int, t_total: int, n_pairs: int, count: np.ndarray,
                swaps: np.ndarray) -> SwapResult:
    """The :class:`SwapResult` of bin counts ``count`` / ``swaps``."""
    lower = np.arange(st.n_bins) * st.bin_width
    upper = np.append(lower[1:], np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(count > 0, swaps / np.maximum(count, 1), np.nan)
    bins = pa.table(
        {
            "bin": pa.array(np.arange(st.n_bins), pa.int64()),
            "lower": lower,
            "upper": upper,
            "count": count,
            "swaps": swaps,
            "swap_rate": pa.array(rate, pa.float64(), from_pandas=True),
        }
    )
    return SwapResult(
        method=st.method,
        subset_size=c,
        n_trials=t_total,
        n_pairs=n_pairs,
        swap_rate=float(swaps.sum() / count.sum()),
        difference_required=_difference_required(lower, count, swaps, st.alpha),
        alpha=float(st.alpha),
        bins=bins,
    )


def swap_rate(
    matrix: Any,
    *,
    method: Literal["voorhees-buckley", "bootstrap"] = "voorhees-buckley",
    subset_size: int | None = None,
    n_trials: int | None = None,
    bin_width: float = 0.01,
    n_bins: int = 21,
    binning: Literal["d1", "mean"] = "d1",
    ties: Literal["strict", "tie_is_swap"] = "strict",
    alpha: float = 0.05,
    seed: int = 0,
    measure: str | None = None,
    column: str = "value",
    systems: Sequence[str] | None = None,
) -> SwapResult:
    """Swap rate of a metric between two topic subsets, binned by the difference in means.

    Each trial draws two topic sets Q1, Q2 of size c and, for every system pair i < j, computes
    d1 = mean_{Q1} X_i - mean_{Q1} X_j and d2 likewise on Q2. Then::

        bin = min(floor(|d1| / w), n_bins - 1)       (binning="mean": (|d1|+|d2|)/2)
        count[bin] += 1 ;  swaps[bin] += [d1 * d2 < 0]   (ties="tie_is_swap": <= 0)
        swap_rate[bin] = swaps[bin] / count[bin]

    * ``method="voorhees-buckley"`` (Voorhees & Buckley, SIGIR 2002): Q1, Q2 disjoint halves of a
      random permutation of the topics, c <= n // 2 (default n // 2), T trials (default 50).
    * ``method="bootstrap"`` (Sakai 2006/2007): Q1, Q2 independent samples of size c drawn with
      replacement (default c = n), B trials (default 1000).

    ``difference_required`` is the smallest bin lower edge d* such that every non-empty bin with
    lower edge >= d* has swap rate <= ``alpha``. The pooled ``swap_rate`` is sum(swaps)/sum(count)
    over all T*P comparisons. Randomness: ``numpy.random.default_rng(seed)``.

    Ties: a difference ``|d| <= 2**-40 * max|X|`` is 0 (:mod:`uefast.meta._ties`): exactly tied
    means are not decided by the floating-point noise of their summation order.
    Source: SPEC_math §6.8-§6.9 (defaults as stated there).
    """
    st = check_settings(method=method, subset_size=subset_size, n_trials=n_trials,
                        bin_width=bin_width, n_bins=n_bins, binning=binning, ties=ties,
                        alpha=alpha, seed=seed)
    mat = as_matrix(matrix, measure=measure, column=column, systems=systems)
    x = mat.values
    n, m = x.shape
    c, t_total = st.sizes(n, m)
    vb = st.method == "voorhees-buckley"
    rng = np.random.default_rng(st.seed)
    tol = tie_tolerance(x)
    ii, jj = pair_indices(m)
    count = np.zeros(st.n_bins, dtype=np.int64)
    swaps = np.zeros(st.n_bins, dtype=np.int64)
    done = 0
    while done < t_total:
        t = min(_CHUNK, t_total - done)
        if vb:
            perm = rng.permuted(np.tile(np.arange(n), (t, 1)), axis=1)
            q1, q2 = perm[:, :c], perm[:, c : 2 * c]
        else:
            q1 = rng.integers(0, n, size=(t, c))
            q2 = rng.integers(0, n, size=(t, c))
        tally(x[q1].mean(axis=1), x[q2].mean(axis=1), ii, jj, tol, st, count, swaps)
        done += t
    return swap_result(st, c, t_total, int(ii.size), count, swaps)
