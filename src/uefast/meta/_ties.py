"""When two means are equal: a tolerance derived from the data's floating-point resolution.

Metric values are rationals (P@20 = k/20, AP a sum of fractions) held as doubles, and their means
over topic sets are sums in some order: mean(0.1, 0.2) and mean(0.3, 0.0) are both 0.15 in exact
arithmetic, but 0.15000000000000002 and 0.15 as doubles.  Where a tie decides an outcome (a swap
in :func:`uefast.meta.swap_rate`, a tied pair in Kendall's tau-b, :func:`ranking_swap_rate`), a
difference ``|d| <= tol`` counts as 0, with

    tol = 2**-40 * max |x|     (x: the values the means are taken of)

2**-40 (about 9.1e-13) is about 8800 units in the last place of max |x|: above the rounding error
of a mean of up to ~4000 values (each value's own rounding, u = 2**-53, plus at most one rounding
per addition: |error| <= (c + 1) * u * max|x| for c values), and far below any real difference of
means of metric values over topics (at least 1/(c * D) for values with denominator D <= 10**9).
"""
from __future__ import annotations

import numpy as np

#: the relative resolution below which two means compare equal
RESOLUTION = 2.0 ** -40


def tie_tolerance(*values) -> float:
    """``RESOLUTION * max |x|`` over the finite entries of ``values`` (0 where there is none)."""
    top = 0.0
    for v in values:
        a = np.abs(np.asarray(v, dtype=np.float64))
        a = a[np.isfinite(a)]
        if a.size:
            top = max(top, float(a.max()))
    return RESOLUTION * top


def tie_signs(d: np.ndarray, tol: float) -> np.ndarray:
    """``sign(d)``, with 0 where ``|d| <= tol``."""
    s = np.sign(d)
    s[np.abs(d) <= tol] = 0.0
    return s
