"""UE scores of text measures with the edge cases of SPEC_text §4 (Feng 2023, ch. 8):

    V1 = (A/IUB)·(A/(A+REB));  NaN if IUB = 0, else 0 if A = 0 (including A + REB = 0)
    V2 = (A−REB)/(IUB−REB) if A ≥ REB, else (A−REB)/REB;  NaN if the denominator in use is 0

No clamping: with IUB kinds ``len`` (A ≤ IUB always) V2 lies in [−1, 1]; under ``src`` an
abstractive candidate could in principle exceed the bound and get V2 > 1, which is reported as
it is. V2(REB) = 0, V2(IUB) = 1, V2(0) = −1 (check H1).
"""
from __future__ import annotations

import numpy as np

__all__ = ["text_ue"]


def text_ue(a, iub, reb) -> tuple[np.ndarray, np.ndarray]:
    """(V1, V2) elementwise, float64, with the §4 rules above."""
    a, iub, reb = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (a, iub, reb)))
    with np.errstate(divide="ignore", invalid="ignore"):
        v1 = (a / iub) * (a / (a + reb))
        v1 = np.where(a == 0, 0.0, v1)
        v1 = np.where(iub == 0, np.nan, v1)
        den = np.where(a >= reb, iub - reb, reb)
        v2 = np.where(den == 0, np.nan, (a - reb) / np.where(den == 0, 1.0, den))
    return v1, v2
