"""One home per diversity measure family: definition, measure string, value, IUB, REB, reference.

A :class:`Family` bundles everything a measure needs; :func:`register` refuses a family with a
piece missing, so a measure cannot ship without its IUB, its exact REB or its slow reference
(the name of a function of ``tests/naive_diversity.py``, which the registry-driven tests look up
and compare against). Measure strings: ``NAME[(p=v,...)][@k]``, e.g. ``alpha-nDCG@20``,
``RBU(p=0.8,e=0.03)@20``, ``NRBP(alpha=0.3,beta=0.9)``; parameters equal to their default are
left out of the canonical string, which parses back to the same measure. Designed to be plugged
into the general measure registry (one ``Family`` = one entry).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from uefast.errors import MeasureParseError

__all__ = ["Family", "DivMeasure", "Batch", "register", "parse_measure", "parse_measures",
           "families", "family"]


@dataclass
class Batch:
    """The rankings to score: segment s is topic ``topics[seg_topic[s]]`` ranked as
    ``rows[soff[s]:soff[s+1]]`` (topic-local judged rows, -1 unjudged). ``cache`` holds results
    shared by several measures (e.g. the ndeval pass). ``flat``: the topics as flat arrays
    (:attr:`uefast.diversity.qrels.DivQrels.flat`) where ``topics`` are all of a compiled qrels'
    topics in its order, else None (then built when needed)."""

    topics: list
    seg_topic: np.ndarray
    rows: np.ndarray
    soff: np.ndarray
    cache: dict = field(default_factory=dict)
    flat: tuple | None = None

    def segments(self):
        """(topic, rows) of each segment."""
        for s in range(self.seg_topic.size):
            yield self.topics[self.seg_topic[s]], self.rows[self.soff[s]:self.soff[s + 1]]


@dataclass(frozen=True)
class Family:
    """A measure family. ``params``: name -> default (the type of the default is the type);
    ``cutoff``: ``"required"``, ``"optional"`` (None = whole ranking) or ``"none"``;
    ``value(batch, m) -> (S,) array``; ``iub(topic, m) -> (iub, exact)``; ``reb(topic, m)``
    exact expectation over uniformly random orders of the judged documents; ``minimum(topic, m)``
    the least value (for measures that can be negative, see :mod:`uefast.diversity.evaluation`;
    a function of the topic's number of judged documents ``topic.n`` only, as the least value
    of a ranking with no gain: ``evaluate`` calls it once per distinct n), None for measures >= 0; ``naive``: the reference function's name in tests/naive_diversity.py;
    ``doc``: the definition and its source."""

    name: str
    params: dict
    cutoff: str
    value: Callable
    iub: Callable
    reb: Callable
    naive: str
    doc: str
    aliases: tuple = ()
    minimum: Callable | None = None
    max_cutoff: int | None = None
    check: Callable | None = None


_FAMILIES: dict[str, Family] = {}
_ALIASES: dict[str, str] = {}


def register(fam: Family) -> Family:
    """Add ``fam``; a missing piece (value, IUB, REB, reference name, definition) or a name taken
    twice raises ``ValueError`` at registration."""
    for piece in ("value", "iub", "reb"):
        if not callable(getattr(fam, piece, None)):
            raise ValueError(f"diversity measure {fam.name!r}: {piece} is missing")
    if not fam.naive or not isinstance(fam.naive, str):
        raise ValueError(f"diversity measure {fam.name!r}: no reference (tests/naive_diversity.py) named")
    if not fam.doc or len(fam.doc.strip()) < 20:
        raise ValueError(f"diversity measure {fam.name!r}: definition (doc) is missing")
    if fam.cutoff not in ("required", "optional", "none"):
        raise ValueError(f"diversity measure {fam.name!r}: bad cutoff kind {fam.cutoff!r}")
    for n in (fam.name, *fam.aliases):
        if n in _ALIASES:
            raise ValueError(f"diversity measure name {n!r} registered twice")
    _FAMILIES[fam.name] = fam
    for n in (fam.name, *fam.aliases):
        _ALIASES[n] = fam.name
    return fam


def families() -> dict[str, Family]:
    """Registered families by canonical name (registration order)."""
    _load()
    return dict(_FAMILIES)


def family(name: str) -> Family:
    _load()
    return _FAMILIES[_ALIASES[name]]


_MODULES = ("families_ndeval", "families_ia", "families_utility", "families_cube")


def _load() -> None:
    """Import the family modules (each registers its families) on first use; a module imported
    directly before (which registered its own families) does not stop the others loading."""
    import sys

    if not all(f"uefast.diversity.{mod}" in sys.modules for mod in _MODULES):
        import importlib

        for mod in _MODULES:
            importlib.import_module(f"uefast.diversity.{mod}")


@dataclass(frozen=True)
class DivMeasure:
    """A parsed measure: family, parameters (every one, defaults filled in), cutoff ``k``."""

    fam: Family
    p: tuple
    k: int | None

    @property
    def params(self) -> dict:
        return dict(self.p)

    def __getitem__(self, key: str) -> Any:
        return dict(self.p)[key]

    def __str__(self) -> str:
        shown = [f"{n}={_fmt(v)}" for n, v in self.p if v != self.fam.params[n]]
        s = self.fam.name + (f"({','.join(shown)})" if shown else "")
        return s + (f"@{self.k}" if self.k is not None else "")


def _fmt(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


_RE = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z0-9#\-]*)(\((?P<params>[^()]*)\))?"
                 r"(@(?P<k>[0-9]+%?))?\s*$")


def parse_measure(text: str | DivMeasure) -> DivMeasure:
    """Parse ``NAME[(p=v,...)][@k]``; errors name the string and what is wrong."""
    if isinstance(text, DivMeasure):
        return text
    _load()
    m = _RE.match(str(text))
    if not m or m.group("name") not in _ALIASES:
        known = ", ".join(sorted(_ALIASES))
        raise MeasureParseError(f"unknown diversity measure {text!r}; known: {known}")
    fam = _FAMILIES[_ALIASES[m.group("name")]]
    vals = dict(fam.params)
    if m.group("params"):
        for part in m.group("params").split(","):
            key, eq, raw = part.partition("=")
            key = key.strip()
            if not eq or key not in fam.params:
                raise MeasureParseError(f"{text!r}: unknown parameter {key!r} (takes "
                                        f"{', '.join(fam.params) or 'none'})")
            default = fam.params[key]
            try:
                vals[key] = type(default)(raw.strip()) if not isinstance(default, str) else raw.strip()
            except ValueError:
                raise MeasureParseError(f"{text!r}: parameter {key}={raw.strip()!r} is not a "
                                        f"{type(default).__name__}") from None
    k = m.group("k")
    if k is not None:
        if fam.cutoff == "none":
            raise MeasureParseError(f"{text!r}: {fam.name} takes no cutoff")
        if k.endswith("%"):
            if k != "100%":
                raise MeasureParseError(f"{text!r}: only @100% is defined")
            k = None
        else:
            k = int(k)
            if k < 1:
                raise MeasureParseError(f"{text!r}: the cutoff must be >= 1")
            if fam.max_cutoff is not None and k > fam.max_cutoff:
                raise MeasureParseError(f"{text!r}: cutoff above {fam.max_cutoff}")
    elif fam.cutoff == "required":
        raise MeasureParseError(f"{text!r}: {fam.name} needs a cutoff, e.g. {fam.name}@20")
    meas = DivMeasure(fam, tuple(vals.items()), k)
    if fam.check is not None:
        fam.check(meas, text)
    return meas


def parse_measures(items) -> list[DivMeasure]:
    if isinstance(items, (str, DivMeasure)):
        items = [items]
    return [parse_measure(x) for x in items]
