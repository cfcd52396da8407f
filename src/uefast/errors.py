"""Exception types. Every error raised for bad user input is a :class:`UefastError` subclass and
names the column / row / line / parameter and the offending value."""
from __future__ import annotations

__all__ = ["UefastError", "InputError", "RowError", "MeasureParseError", "MissingDependencyError"]


class UefastError(ValueError):
    """Base class for errors caused by user input (a ``ValueError``)."""


class InputError(UefastError):
    """Bad input data: missing column, bad value, duplicate docid, ..."""


class RowError(InputError):
    """An :class:`InputError` naming rows of the input ``what`` ("run", "qrels"): the message is
    ``"{what}: "`` and ``parts`` joined, whose ``int`` parts are row numbers. The streaming layer
    evaluates one chunk of the input at a time and reports rows of the whole input with
    :meth:`shifted`."""

    def __init__(self, what: str, *parts: str | int) -> None:
        self.what = what
        self.parts = tuple(p if isinstance(p, str) else int(p) for p in parts)
        super().__init__(f"{what}: " + "".join(map(str, self.parts)))

    def shifted(self, offset: int) -> "RowError":
        """The same error with every row number plus ``offset``."""
        return type(self)(self.what, *(p if isinstance(p, str) else p + offset
                                       for p in self.parts))

    def __reduce__(self):
        return type(self), (self.what, *self.parts)


class MeasureParseError(UefastError):
    """A measure string that cannot be parsed."""


class MissingDependencyError(UefastError):
    """An optional dependency that the call needs is not installed; the message is one line
    naming the extra that installs it (``pip install "uefast[report]"``)."""


class MeasureRegistrationError(ValueError):
    """A measure family that cannot be registered (a missing routine, reference or name clash):
    a programming error in the family's definition, not bad user input."""
