"""Joint upper & expected value (UE) normalisation, SPEC_math §4 (Santu & Feng 2022, corrected).

    V1 = (A/IUB) * (A/(A+REB))                   ; V1 = 0 if IUB <= 0 or A <= 0
    V2 = (A-REB)/(IUB-REB)   if A >= REB
       = (A-REB)/REB         if A <  REB          ; clamped to [-1, 1]

A query is *degenerate* when IUB - REB <= 1e-12 * max(1, IUB): every ordering scores the same (no
relevant document, or every judged document relevant for a binary measure with k <= n). What the
UE scores are for such a query is the ``degenerate`` policy:

* ``"zero"`` (default, the spec): V2 = 0, V1 from its formula;
* ``"nan"``: V1 = V2 = NaN (``uefast.aggregate`` skips NaN);
* ``"drop"``: the rows are removed from the output and listed in the table metadata.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from uefast.inputs import kernel_array

__all__ = ["ue_scores", "ue_element", "is_degenerate", "degenerate_mask", "DEGENERATE_POLICIES"]

DEGENERATE_POLICIES = ("zero", "nan", "drop")


def degenerate_mask(iub: np.ndarray, reb: np.ndarray) -> np.ndarray:
    """IUB - REB <= 1e-12 * max(1, IUB) (elementwise: :func:`is_degenerate`)."""
    return (iub - reb) <= 1e-12 * np.maximum(1.0, iub)


@nb.njit(inline="always", cache=True)
def is_degenerate(u, r):
    """``IUB - REB <= 1e-12 * max(1, IUB)`` for one query and measure (``u`` = IUB, ``r`` =
    REB): :func:`degenerate_mask` of one element (the same operations)."""
    return (u - r) <= 1e-12 * max(1.0, u)


@nb.njit(inline="always", cache=True, error_model="numpy")
def ue_element(x, u, r, nan_degenerate):
    """``(V1, V2)`` of one score ``x = A`` with ``u = IUB`` and ``r = REB``: the formulas above,
    branch-free (quotients of the branch not taken may be inf/NaN and are discarded), so the
    CPU pass vectorises. The one definition of the UE scores: the CPU pass
    (:func:`_ue_pass`) and the GPU output kernel (:mod:`uefast.gpu.output`) call it, so both
    backends make the same IEEE operations in the same order (bitwise the same results)."""
    deg = is_degenerate(u, r)
    w1 = (x / u) * (x / (x + r))
    w1 = min(max(w1 if (u > 0.0) & (x > 0.0) else 0.0, 0.0), 1.0)
    w2 = (x - r) / ((u - r) if x >= r else r)
    w2 = min(max(w2, -1.0), 1.0)
    v1 = np.nan if deg & nan_degenerate else w1
    v2 = (np.nan if nan_degenerate else 0.0) if deg else w2
    return v1, v2


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _ue_pass(a, iub, reb, nan_degenerate, v1, v2):
    """V1, V2 of every element in one (vectorisable) pass of :func:`ue_element`: the same IEEE
    operations in the same order as the NumPy expressions they replaced (bitwise the same
    results)."""
    for i in range(a.size):
        v1[i], v2[i] = ue_element(a[i], iub[i], reb[i], nan_degenerate)


def ue_scores(value: np.ndarray, iub: np.ndarray, reb: np.ndarray,
              degenerate: str = "zero") -> tuple[np.ndarray, np.ndarray]:
    """Return (V1, V2) elementwise for arrays of A, IUB and REB (SPEC_math §4), with the
    ``degenerate`` policy ``"zero"`` or ``"nan"`` (``"drop"`` computes as ``"zero"``; the caller
    removes the rows)."""
    a, iub, reb = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (value, iub, reb)))
    shape = a.shape
    a, iub, reb = (kernel_array(x).reshape(-1) for x in (a, iub, reb))
    v1 = np.empty(a.size)
    v2 = np.empty(a.size)
    _ue_pass(a, iub, reb, degenerate == "nan", v1, v2)
    return v1.reshape(shape), v2.reshape(shape)
