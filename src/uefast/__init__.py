"""uefast: fast, exact evaluation of ranking systems with IUB, REB and UE normalisation.

Main entry points: :func:`evaluate` (per-query long table), :func:`aggregate` (means),
:func:`parse_measure`, :func:`report` (a paper's results table). Statistics live in :mod:`uefast.stats`, meta-evaluation in
:mod:`uefast.meta`, TREC/LETOR readers in :mod:`uefast.io`, Polars expressions in
:mod:`uefast.polars`.
"""
from __future__ import annotations

__version__ = "0.1.0"

import sys as _sys
import types as _types

from uefast.errors import InputError, MeasureParseError, UefastError  # noqa: E402

# Imported on first use (PEP 562), so that ``import uefast`` loads neither the evaluation engine
# (Numba kernels, ``pyarrow.compute``) nor the statistics: a command such as ``uefast trec_eval``
# imports only what it runs (benchmarks/RESULTS_startup.md).
_LAZY = {
    "evaluate": "uefast.evaluate",
    "aggregate": "uefast.evaluate",
    "Measure": "uefast.measures",
    "parse_measure": "uefast.measures",
    "parse_measures": "uefast.measures",
    "report": "uefast.paper.table",
}
# The import system binds a submodule to its package's attribute when it first loads it, so
# importing the module ``uefast.evaluate`` (``from uefast.evaluate import ...``) would replace the
# function ``uefast.evaluate``; the package's class keeps the function there instead.
_FUNCTION_NAMED_AS_MODULE = ("evaluate",)


class _Package(_types.ModuleType):
    """The class of the ``uefast`` module object: binding a submodule named as one of
    :data:`_FUNCTION_NAMED_AS_MODULE` binds that module's function of the same name."""

    def __setattr__(self, name, value):
        if name in _FUNCTION_NAMED_AS_MODULE and isinstance(value, _types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

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
