"""PAD: percentage absolute difference between two systems' mean scores (SPEC_math §6.13)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from uefast.meta._matrix import as_matrix, pair_indices

__all__ = ["pad", "pad_table"]


def pad(m1, m2):
    """PAD(m1, m2) = |m1 - m2| / max(|m1|, |m2|) * 100, and PAD(0, 0) = 0.

    For non-negative inputs the denominator is max(m1, m2), as in the PAD of Santu & Feng
    (arXiv 2209.05007); the absolute values make PAD defined for UE V2, which can be negative
    (a flagged choice, SPEC_math §6.13). Works element-wise on arrays; returns a float for scalars.
    A NaN input gives NaN.
    """
    a = np.asarray(m1, dtype=np.float64)
    b = np.asarray(m2, dtype=np.float64)
    den = np.maximum(np.abs(a), np.abs(b))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, np.abs(a - b) / np.where(den > 0, den, 1.0) * 100.0, 0.0)
    out = np.where(np.isnan(a) | np.isnan(b), np.nan, out)  # NaN in: NaN out (was 0: "no difference")
    return float(out) if out.ndim == 0 else out


def pad_table(
    data: Any,
    *,
    measure: str | None = None,
    column: str = "value",
    systems: Sequence[str] | None = None,
) -> pa.Table:
    """PAD of every unordered system pair, from a topics x systems matrix or a long table.

    Returns one row per pair i < j (data_schemas/meta_pad.md): ``system_a, system_b, mean_a,
    mean_b, pad``, with mean_x the mean over topics and pad = :func:`pad` (mean_a, mean_b).
    """
    mat = as_matrix(data, measure=measure, column=column, systems=systems)
    means = mat.values.mean(axis=0)
    i, j = pair_indices(means.size)
    return pa.table(
        {
            "system_a": pa.array([mat.systems[k] for k in i], pa.string()),
            "system_b": pa.array([mat.systems[k] for k in j], pa.string()),
            "mean_a": means[i],
            "mean_b": means[j],
            "pad": np.atleast_1d(pad(means[i], means[j])).astype(np.float64),
        }
    )
