"""Agreement between two rankings of the same systems: Kendall's tau-a / tau-b, Yilmaz's tau_AP,
and the simple swap rate (fraction of discordant pairs).

A ranking is given as a score vector over the systems (higher score = better rank), e.g. the
systems' mean nDCG@10. SPEC_math §6.10-§6.12. Two scores within 2**-40 times the largest one
are tied (:mod:`uefast.meta._ties`).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from uefast.errors import InputError
from uefast.meta._ties import tie_signs, tie_tolerance

__all__ = ["kendall_tau", "tau_ap", "ranking_swap_rate", "pair_signs"]


def _vectors(a, b) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise InputError(f"`a` and `b` must have the same length; got {x.size} and {y.size}")
    if x.size < 2:
        raise InputError(f"need at least 2 systems to compare rankings; got {x.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise InputError("`a` and `b` must be finite")
    return x, y


def pair_signs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """sign(a_i - a_j) and sign(b_i - b_j) over the P = m(m-1)/2 pairs i < j; a difference
    within 2**-40 * max|a| (for b: max|b|) is a tie, 0 (:mod:`uefast.meta._ties`: scores that
    are means tie exactly where their float sums differ by rounding only)."""
    x, y = _vectors(a, b)
    i, j = np.triu_indices(x.size, k=1)
    return tie_signs(x[i] - x[j], tie_tolerance(x)), tie_signs(y[i] - y[j], tie_tolerance(y))


def kendall_tau(a, b, variant: Literal["a", "b", "ap", "ap_sym"] = "b") -> float:
    """Kendall's rank correlation between the system rankings induced by scores ``a`` and ``b``.

    With C concordant pairs, D discordant pairs, P = m(m-1)/2, T_a (T_b) pairs tied in a (b):

    * ``"a"``:  tau_a = (C - D) / P                                   (Kendall 1938)
    * ``"b"``:  tau_b = (C - D) / sqrt((P - T_a)(P - T_b)); NaN if a denominator factor is 0
      (Kendall 1945; equals ``scipy.stats.kendalltau(a, b).statistic``)
    * ``"ap"``: tau_AP(a | b), ``a`` the estimated and ``b`` the reference ranking (see
      :func:`tau_ap`; Yilmaz, Aslam & Robertson, SIGIR 2008); ``"ap_sym"`` the mean of both
      directions. Ties are not allowed for tau_AP.

    Source: SPEC_math §6.11-§6.12.
    """
    if variant in ("ap", "ap_sym"):
        return tau_ap(a, b, symmetric=variant == "ap_sym")
    if variant not in ("a", "b"):
        raise InputError(f"`variant` must be in {{'a', 'b', 'ap', 'ap_sym'}}; got {variant!r}")
    sa, sb = pair_signs(a, b)
    p = sa.size
    prod = sa * sb
    c_minus_d = float(np.sum(prod > 0) - np.sum(prod < 0))
    if variant == "a":
        return c_minus_d / p
    t_a = int(np.sum(sa == 0))
    t_b = int(np.sum(sb == 0))
    denom = float(p - t_a) * float(p - t_b)
    if denom == 0.0:
        return float("nan")
    return c_minus_d / float(np.sqrt(denom))


def _tau_ap_one(est: np.ndarray, ref: np.ndarray) -> float:
    n = est.size
    order = np.argsort(-est, kind="stable")  # positions taken from the estimated ranking
    ref_sorted = ref[order]
    total = 0.0
    for i in range(1, n):  # 0-based position i is the paper's position i+1
        c_i = int(np.sum(ref_sorted[:i] > ref_sorted[i]))
        total += c_i / i
    return 2.0 * total / (n - 1) - 1.0


def tau_ap(a, b, *, symmetric: bool = False) -> float:
    """Yilmaz, Aslam & Robertson's AP correlation tau_AP(E | G) (SIGIR 2008).

    E is the ranking by ``a`` (estimated), G the ranking by ``b`` (reference); positions are taken
    from E::

        tau_AP = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1

    where C(i) is the number of items above position i in E that G also ranks above the item at
    position i of E. Top-heavy: an error at the top costs more than one at the bottom.
    ``symmetric=True`` returns (tau_AP(E|G) + tau_AP(G|E)) / 2. Ties raise :class:`InputError`
    (use tau_AP,b of Urbano & Marrero 2017 for tied rankings; not implemented).
    Source: SPEC_math §6.12.
    """
    x, y = _vectors(a, b)
    for name, v in (("a", x), ("b", y)):
        if np.any(np.diff(np.sort(v)) <= tie_tolerance(v)):  # ties as pair_signs sees them
            raise InputError(f"tau_AP needs a ranking without ties; `{name}` has tied scores")
    if symmetric:
        return 0.5 * (_tau_ap_one(x, y) + _tau_ap_one(y, x))
    return _tau_ap_one(x, y)


def ranking_swap_rate(a, b, *, ties: Literal["strict", "half"] = "strict") -> float:
    """Fraction of system pairs ordered differently by scores ``a`` and ``b``.

    swap = D / P with D = #{i<j : (a_i - a_j)(b_i - b_j) < 0} and P = m(m-1)/2. A pair tied in
    either ranking is not a swap (``ties="strict"``); with ``ties="half"`` a pair tied in exactly
    one ranking counts 0.5. Without ties, swap = (1 - tau_a)/2. Source: SPEC_math §6.10.
    """
    if ties not in ("strict", "half"):
        raise InputError(f"`ties` must be in {{'strict', 'half'}}; got {ties!r}")
    sa, sb = pair_signs(a, b)
    d = float(np.sum(sa * sb < 0))
    if ties == "half":
        d += 0.5 * float(np.sum((sa == 0) != (sb == 0)))
    return d / sa.size
