"""The means that :func:`uefast.aggregate` takes over queries: arithmetic, geometric (GMAP) and
harmonic, as Polars expressions.

* arithmetic: Σ x / n.
* geometric: exp(Σ log(max(x, floor)) / n), ``floor`` = 0.00001 by default: trec_eval's
  ``gm_map`` / ``gm_bpref`` (``MIN_GEO_MEAN`` in ``trec_eval.h``; ``m_gm_map.c`` takes
  ``log(max(ap, MIN_GEO_MEAN))`` per topic and ``exp`` of their mean over topics), the GMAP of
  Robertson (2006), "On GMAP: and other transformations", CIKM, and of the TREC Robust track.
  ``floor=0`` gives the plain geometric mean (0 as soon as one value is 0).
* harmonic: n / Σ 1/max(x, floor), ``floor`` = 0 by default: a value 0 makes the mean 0 (the
  limit of the formula as that value goes to 0; ``scipy.stats.hmean`` gives the same).

Geometric and harmonic means are defined for non-negative values only: they apply to the
``value``, ``iub`` and ``reb`` columns, where a negative value is an error naming its row. The UE
columns (``ue_v1``, ``ue_v2``) can be negative, so under these means they are null (compute the
UE scores of the means from the mean ``value``, ``iub`` and ``reb`` if that is what is wanted).
"""
from __future__ import annotations

import json
import math
import numbers

from uefast.errors import InputError, RowError

__all__ = ["MEANS", "MIN_GEO_MEAN", "check_mean", "mean_expressions", "mean_metadata"]

MEANS = ("arithmetic", "geometric", "harmonic")
#: trec_eval's floor for geometric means (``MIN_GEO_MEAN``, trec_eval.h).
MIN_GEO_MEAN = 0.00001
_DEFAULT_FLOOR = {"arithmetic": None, "geometric": MIN_GEO_MEAN, "harmonic": 0.0}
#: the columns geometric / harmonic means apply to (measure values, never negative)
NONNEGATIVE = ("value", "iub", "reb")


def check_mean(mean, floor) -> tuple[str, float | None]:
    """``(mean, floor)`` checked, the floor defaulted (None for the arithmetic mean, which
    takes none)."""
    if not isinstance(mean, str) or mean not in MEANS:
        raise InputError(f"`mean` must be one of {{{', '.join(map(repr, MEANS))}}}; got {mean!r}")
    if floor is None:
        return mean, _DEFAULT_FLOOR[mean]
    if mean == "arithmetic":
        raise InputError(f"`floor`={floor!r} applies to mean='geometric' or 'harmonic'")
    if (isinstance(floor, bool) or not isinstance(floor, numbers.Real)
            or not 0 <= floor < math.inf):
        raise InputError(f"`floor` must be a finite number >= 0; got {floor!r}")
    return mean, float(floor)


def _check_nonnegative(df, cols) -> None:
    import numpy as np

    for c in cols:
        x = df[c].to_numpy()
        neg = x < 0  # (NaN and null compare False)
        if neg.any():
            row = int(np.argmax(neg))
            keys = [k for k in ("system", "qid", "measure") if k in df.columns]
            where = ", ".join(f"{k} {df[k][row]!r}" for k in keys)
            raise RowError("table", f"column {c!r} has {float(x[row])!r} at row ", row,
                           f" ({where}): geometric and harmonic means need values >= 0")


def mean_expressions(df, cols, mean: str, floor: float | None, skip_nan: bool) -> list:
    """One Polars aggregation per column of ``cols`` (named as the column). ``skip_nan``: NaN
    values are left out of the mean (as nulls). Under the geometric and harmonic means the
    columns outside :data:`NONNEGATIVE` are null, and a negative value is a :class:`RowError`."""
    import polars as pl

    if mean != "arithmetic":
        _check_nonnegative(df, [c for c in cols if c in NONNEGATIVE])
    out = []
    for c in cols:
        e = pl.col(c).fill_nan(None) if skip_nan else pl.col(c)
        if mean == "arithmetic":
            out.append(e.mean().alias(c))
        elif c not in NONNEGATIVE:
            out.append(pl.lit(None, dtype=pl.Float64).alias(c))
        elif mean == "geometric":
            out.append(e.clip(lower_bound=floor).log().mean().exp().alias(c))
        else:
            x = e.clip(lower_bound=floor)
            out.append((x.count().cast(pl.Float64) / (1.0 / x).sum()).alias(c))
    return out


def mean_metadata(mean: str, floor: float | None) -> dict:
    """The ``uefast.aggregate`` metadata entry (JSON) of a non-arithmetic mean."""
    return {"uefast.aggregate": json.dumps({"mean": mean, "floor": floor,
                                            "columns": list(NONNEGATIVE),
                                            "null_columns": ["ue_v1", "ue_v2"]})}
