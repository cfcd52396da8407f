"""uefast: fast, exact evaluation of ranking systems with IUB, REB and UE normalisation.

Main entry points: :func:`evaluate` (per-query long table), :func:`aggregate` (means),
:func:`parse_measure`, :func:`report` (a paper's results table). Statistics live in :mod:`uefast.stats`, meta-evaluation in
:mod:`uefast.meta`, TREC/LETOR readers in :mod:`uefast.io`, Polars expressions in
:mod:`uefast.polars`.
"""
from __future__ import annotations

__version__ = "0.1.0"

from uefast.errors import InputError, MeasureParseError, UefastError  # noqa: E402
from uefast.evaluate import aggregate, evaluate  # noqa: E402
from uefast.measures import Measure, parse_measure, parse_measures  # noqa: E402

# Imported on first use (PEP 562), so that ``import uefast`` does not load the statistics. (Not
# for ``evaluate``: importing the submodule ``uefast.evaluate`` would shadow a lazy function.)
_LAZY = {"report": "uefast.paper.table"}

__all__ = [
    "__version__",
    "evaluate",
    "aggregate",
    "Measure",
    "parse_measure",
    "parse_measures",
    "UefastError",
    "InputError",
    "MeasureParseError",
    "report",
]


def __getattr__(name):
    """The names of :data:`_LAZY`, imported from their module on first use (and then kept as
    attributes of the package, so this runs once per name)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'uefast' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
