"""Input validation shared by the public functions of ``uefast.stats``.

Each public function has its own ``_<name>_iv`` that calls these helpers and returns normalised
arguments. Messages name the parameter in backticks and show the offending value.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from uefast.errors import InputError

__all__ = [
    "ALTERNATIVES",
    "check_choice",
    "check_pair",
    "check_matrix",
    "check_n_resamples",
    "check_seed",
    "check_probability",
    "check_nonnegative",
    "check_positive",
]

ALTERNATIVES = ("two-sided", "less", "greater")


def check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        raise InputError(f"`{name}` must be one of {{{', '.join(map(repr, choices))}}}; got {value!r}")
    return value.lower()


def _check_finite(name: str, arr: np.ndarray) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        pos = np.argwhere(bad)[0]
        where = f"index {int(pos[0])}" if arr.ndim == 1 else f"row {int(pos[0])}, column {int(pos[1])}"
        raise InputError(f"`{name}` contains {float(arr[tuple(pos)])!r} at {where}; "
                         "every value must be finite")


def _as_float_array(name: str, value, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`{name}` must be numeric; got {type(value).__name__} ({exc})") from None
    if arr.ndim != ndim:
        raise InputError(f"`{name}` must be {ndim}-D; got an array of shape {arr.shape}")
    return arr


def check_pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D finite float64 arrays of the same length >= 2 (contiguous copies)."""
    x = _as_float_array("x", x, 1)
    y = _as_float_array("y", y, 1)
    if x.shape[0] != y.shape[0]:
        raise InputError(f"`x` and `y` must have the same length; got {x.shape[0]} and {y.shape[0]}")
    if x.shape[0] < 2:
        raise InputError(f"need at least 2 topics; got {x.shape[0]}")
    _check_finite("x", x)
    _check_finite("y", y)
    return np.ascontiguousarray(x), np.ascontiguousarray(y)


def check_matrix(matrix) -> np.ndarray:
    """A finite float64 topics x systems matrix with >= 2 topics and >= 2 systems."""
    arr = _as_float_array("matrix", matrix, 2)
    if arr.shape[0] < 2:
        raise InputError(f"`matrix` needs at least 2 topics (rows); got shape {arr.shape}")
    if arr.shape[1] < 2:
        raise InputError(f"`matrix` needs at least 2 systems (columns); got shape {arr.shape}")
    _check_finite("matrix", arr)
    return np.ascontiguousarray(arr)


def check_n_resamples(value, name: str = "n_resamples", *, allow_zero: bool = False) -> int:
    """A positive integer (``allow_zero``: a non-negative one, e.g. 0 to skip a step)."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or value < (0 if allow_zero else 1)):
        what = "a non-negative integer" if allow_zero else "a positive integer"
        raise InputError(f"`{name}` must be {what}; got {value!r}")
    return int(value)


def check_seed(value, *, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**64:
        raise InputError(f"`seed` must be an integer in [0, 2**64){' or None' if allow_none else ''}; "
                         f"got {value!r}")
    return int(value)


def check_probability(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"`{name}` must be a number in (0, 1); got {value!r}")
    v = float(value)
    if not (0.0 < v < 1.0):
        raise InputError(f"`{name}` must be in (0, 1); got {value!r}")
    return v


def check_nonnegative(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise InputError(f"`{name}` must be a non-negative number; got {value!r}")
    return float(value)


def check_positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < math.inf:
        raise InputError(f"`{name}` must be a finite positive number; got {value!r}")
    return float(value)
