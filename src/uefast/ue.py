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

import numpy as np

__all__ = ["ue_scores", "degenerate_mask", "DEGENERATE_POLICIES"]

DEGENERATE_POLICIES = ("zero", "nan", "drop")


def degenerate_mask(iub: np.ndarray, reb: np.ndarray) -> np.ndarray:
    """IUB - REB <= 1e-12 * max(1, IUB)."""
    return (iub - reb) <= 1e-12 * np.maximum(1.0, iub)


def ue_scores(value: np.ndarray, iub: np.ndarray, reb: np.ndarray,
              degenerate: str = "zero") -> tuple[np.ndarray, np.ndarray]:
    """Return (V1, V2) elementwise for arrays of A, IUB and REB (SPEC_math §4)."""
    a = np.asarray(value, dtype=np.float64)
    iub = np.asarray(iub, dtype=np.float64)
    reb = np.asarray(reb, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        v1 = np.where((iub > 0) & (a > 0), (a / iub) * (a / (a + reb)), 0.0)
        up = (a - reb) / (iub - reb)
        down = (a - reb) / reb
        v2 = np.where(a >= reb, up, down)
    deg = degenerate_mask(iub, reb)
    v2 = np.where(deg, 0.0, np.clip(v2, -1.0, 1.0))
    v1 = np.clip(v1, 0.0, 1.0)
    if degenerate == "nan":
        v1 = np.where(deg, np.nan, v1)
        v2 = np.where(deg, np.nan, v2)
    return v1, v2
