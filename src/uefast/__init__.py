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
    """``uefast.report``: :func:`uefast.paper.table.report` (the paper results table), imported on
    first use so that ``import uefast`` stays light."""
    if name == "report":
        from uefast.paper.table import report

        return report
    raise AttributeError(f"module 'uefast' has no attribute {name!r}")
