"""Exception types. Every error raised for bad user input is a :class:`UefastError` subclass and
names the column / row / line / parameter and the offending value."""
from __future__ import annotations

__all__ = ["UefastError", "InputError", "MeasureParseError"]


class UefastError(ValueError):
    """Base class for errors caused by user input (a ``ValueError``)."""


class InputError(UefastError):
    """Bad input data: missing column, bad value, duplicate docid, ..."""


class MeasureParseError(UefastError):
    """A measure string that cannot be parsed."""
