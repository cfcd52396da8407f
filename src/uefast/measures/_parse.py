"""Measure objects and the measure-string parser (the grammar of ir_measures:
``Name(k1=v1,k2=v2)@cutoff``). Families, their parameters and aliases come from the registry
(:mod:`uefast.measures._family`)."""
from __future__ import annotations

import decimal
import numbers
import re
from dataclasses import dataclass
from typing import Any, Iterable

from uefast.errors import MeasureParseError
from uefast.measures._family import ALIASES, FAMILIES, Family

__all__ = ["Measure", "parse_measure", "parse_measures", "split_measure_list"]

#: how a parameter's text is read and checked, by parameter name; parameters not listed here
#: must be choice parameters (``Family.choices``)
PARAM_KINDS = {"rel": "int", "lmax": "int", "p": "prob", "beta": "nonneg", "logb": "base",
               # time-biased gain (kernels/tbg.py): seconds, words, probabilities
               "h": "pos", "ts": "nonneg", "alpha": "nonneg", "length": "nonneg",
               "pc1": "unit", "pc0": "unit", "ps1": "unit"}
_REAL_KINDS = ("prob", "nonneg", "pos", "unit", "base")


@dataclass(frozen=True)
class Measure:
    """One measure with its parameters, e.g. ``nDCG@10`` or ``P(rel=2)@10``.

    A measure is canonical once built: its parameters are checked as the parser checks them
    (:class:`~uefast.errors.MeasureParseError` otherwise) and completed with their defaults, so
    ``Measure("nDCG", 10) == parse_measure("nDCG@10")`` and ``parse_measure(str(m)) == m``.
    ``nDCG @ 10`` sets the cutoff (as in ir_measures).
    """

    name: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.name not in FAMILIES:
            raise MeasureParseError(f"unknown measure {self.name!r}; known: {sorted(FAMILIES)}")
        try:
            given = dict(self.params)
        except (TypeError, ValueError):
            raise MeasureParseError(f"Measure {self.name!r}: `params` must be (name, value) pairs, "
                                    f"got {self.params!r}") from None
        text = f"{self.name}{'' if self.cutoff is None else f'@{self.cutoff}'}"
        cutoff, full = _validate(self.name, self.cutoff, given, text)
        object.__setattr__(self, "cutoff", cutoff)
        object.__setattr__(self, "params", full)

    @property
    def definition(self) -> Family:
        return FAMILIES[self.name]

    def param(self, key: str) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return self.definition.params[key]

    def __matmul__(self, cutoff: int) -> "Measure":
        return _build(self.name, dict(self.params), cutoff, str(self) + f"@{cutoff}")

    def __str__(self) -> str:
        defaults = self.definition.params
        always = self.definition.always_show
        shown = [(k, v) for k, v in self.params if k in always or defaults.get(k, object()) != v]
        s = self.name
        if shown:
            s += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in shown) + ")"
        if self.cutoff is not None:
            s += f"@{self.cutoff}"
        return s

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


_MEASURE_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-+]*)\s*(?:\((?P<params>[^()]*)\))?\s*(?:@\s*(?P<cut>[^\s]+))?\s*$"
)
#: ir_measures' spelling of the DCG gain (``nDCG(dcg='exp-log2')@10``) -> uefast's ``gain``.
_IR_MEASURES_DCG = {"log2": "lin", "exp-log2": "exp"}
_MAX_CUTOFF = 2 ** 63 - 1  # cutoffs are int64 in the kernels
# plain ASCII numbers only (Python's int()/float() also take "1_0", "٥", full-width digits)
_INT_RE = re.compile(r"[+-]?[0-9]+")
_REAL_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FORMAT = "must be in format Measure(k1=v1,k2=v2)@cutoff, e.g. nDCG@10, P(rel=2)@10, RBP(p=0.8)"


def _convert(name: str, key: str, raw: str, text: str) -> Any:
    d = FAMILIES[name]
    default = d.params[key]
    if key in d.choices:
        if raw not in d.choices[key]:
            raise MeasureParseError(
                f"measure {text!r}: `{key}` must be one of {list(d.choices[key])}, got {raw!r}")
        return raw
    kind = PARAM_KINDS.get(key)
    if kind == "int":
        if not _INT_RE.fullmatch(raw):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be an integer, got {raw!r}")
        return int(raw)
    if kind in _REAL_KINDS:
        if not _REAL_RE.fullmatch(raw):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be a number, got {raw!r}")
        v = float(raw)
        if kind == "prob" and v == 1.0 and decimal.Decimal(raw) != 1:  # 0.99999999999999999999: not exactly 1
            raise MeasureParseError(f"measure {text!r}: `p` must be in (0, 1); {raw!r} rounds to "
                                    "1.0 in double precision")
        return v
    return type(default)(raw) if default is not None else raw  # pragma: no cover


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _validate(name: str, cutoff: Any, params: dict[str, Any], text: str):
    """The canonical ``(cutoff, params)`` of measure ``name`` -- every parameter, sorted, defaults
    filled in -- or :class:`~uefast.errors.MeasureParseError` naming ``text`` and the problem."""
    d = FAMILIES[name]
    if cutoff is not None:
        if not _is_int(cutoff) or not 1 <= cutoff <= _MAX_CUTOFF:
            raise MeasureParseError(f"measure {text!r}: cutoff must be a positive integer "
                                    f"(at most 2^63 - 1), got {cutoff!r}")
        cutoff = int(cutoff)
    if d.cutoff == "required" and cutoff is None:
        raise MeasureParseError(f"measure {text!r}: {name} needs a cutoff, e.g. {name}@10")
    if d.cutoff == "none" and cutoff is not None:
        raise MeasureParseError(f"measure {text!r}: {name} takes no cutoff")
    for key, v in params.items():
        if key not in d.params:
            raise MeasureParseError(
                f"measure {text!r}: unknown parameter `{key}` for {name}; known: {sorted(d.params)}")
        if key in d.choices and v not in d.choices[key]:
            raise MeasureParseError(
                f"measure {text!r}: `{key}` must be one of {list(d.choices[key])}, got {v!r}")
        # a threshold or top grade below 1 makes no measure
        kind = PARAM_KINDS.get(key)
        if kind == "int" and v is not None and not (_is_int(v) and v >= 1):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be an integer >= 1, got {v!r}")
        real = isinstance(v, numbers.Real) and not isinstance(v, bool)
        if kind == "prob" and not (real and 0.0 < v < 1.0):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be in (0, 1), got {v!r}")
        if kind == "nonneg" and not (real and 0.0 <= v < float("inf")):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be a finite number >= 0, "
                                    f"got {v!r}")
        if kind == "pos" and not (real and 0.0 < v < float("inf")):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be a finite number > 0, "
                                    f"got {v!r}")
        if kind == "unit" and not (real and 0.0 <= v <= 1.0):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be in [0, 1], got {v!r}")
        if kind == "base" and not (real and 1.0 < v < float("inf")):
            raise MeasureParseError(f"measure {text!r}: `{key}` (a logarithm's base) must be a "
                                    f"finite number > 1, got {v!r}")
    if d.check is not None:
        d.check(cutoff, params, text)

    def canon(k: str, v: Any) -> Any:
        kind = PARAM_KINDS.get(k)
        if kind == "int":
            return v if v is None else int(v)
        if kind in _REAL_KINDS:
            return float(v)
        return v

    full = tuple((k, canon(k, params.get(k, v))) for k, v in sorted(d.params.items()))
    return cutoff, full


def _build(name: str, params: dict[str, Any], cutoff: Any, text: str) -> Measure:
    if isinstance(cutoff, str):
        if not _INT_RE.fullmatch(cutoff):
            raise MeasureParseError(f"measure {text!r}: cutoff must be a positive integer, got {cutoff!r}")
        cutoff = int(cutoff)
    cutoff, full = _validate(name, cutoff, params, text)  # errors name the user's text
    return Measure(name, cutoff, full)


def _is_ir_measures(obj) -> bool:
    from uefast.ir_measures_compat import is_ir_measures_measure

    return is_ir_measures_measure(obj)


def parse_measure(text: "str | Measure") -> Measure:
    """Parse one measure string (or return a :class:`Measure` unchanged; an ir_measures measure
    object is read as :func:`uefast.ir_measures_compat.to_uefast` maps it).

    Raises :class:`~uefast.errors.MeasureParseError` naming the string and the problem.
    """
    if isinstance(text, Measure):
        return text
    if _is_ir_measures(text):  # ir_measures.nDCG@10: the uefast measure of the same number
        from uefast.ir_measures_compat import to_uefast

        text = to_uefast(text)
    if not isinstance(text, str):
        raise MeasureParseError(f"measure must be a string, got {type(text).__name__}: {text!r}")
    m = _MEASURE_RE.match(text)
    if not m:
        raise MeasureParseError(f"measure {text!r} {_FORMAT}")
    name = m.group("name")
    params: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    if name in ALIASES:
        name, fixed = ALIASES[name]
        params.update(fixed)
    if name not in FAMILIES:
        raise MeasureParseError(
            f"unknown measure {m.group('name')!r} in {text!r}; known: {sorted(FAMILIES) + sorted(ALIASES)}")
    raw_params = m.group("params")
    if raw_params and raw_params.strip():
        given: set[str] = set()
        for item in raw_params.split(","):
            if "=" not in item:
                raise MeasureParseError(f"measure {text!r} {_FORMAT}")
            key, raw = (s.strip() for s in item.split("=", 1))
            if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
                raw = raw[1:-1]  # ir_measures quotes its string values: dcg='exp-log2'
            if key == "dcg" and "gain" in FAMILIES[name].params:
                if raw not in _IR_MEASURES_DCG:
                    raise MeasureParseError(f"measure {text!r}: `dcg` (ir_measures' spelling of "
                                            f"`gain`) must be one of {list(_IR_MEASURES_DCG)}, "
                                            f"got {raw!r}")
                key, raw = "gain", _IR_MEASURES_DCG[raw]
            if key not in FAMILIES[name].params:
                raise MeasureParseError(
                    f"measure {text!r}: unknown parameter `{key}` for {name}; known: {sorted(FAMILIES[name].params)}")
            if key in given:
                raise MeasureParseError(f"measure {text!r}: parameter `{key}` given twice")
            if key in fixed:
                raise MeasureParseError(f"measure {text!r}: {m.group('name')} is "
                                        f"{name}({key}={fixed[key]}); `{key}` cannot be set")
            given.add(key)
            params[key] = _convert(name, key, raw, text)
    return _build(name, params, m.group("cut"), text)


def split_measure_list(text: str) -> list[str]:
    """Split ``"nDCG@10 RBP(p=0.8, rel=2) AP"`` at whitespace outside parentheses."""
    out, cur, depth = [], [], 0
    for ch in text:
        if ch.isspace() and depth == 0:
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        depth += (ch == "(") - (ch == ")")
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def parse_measures(measures: "str | Measure | Iterable[str | Measure]") -> list[Measure]:
    """Parse a measure string, a whitespace-separated list of them, or an iterable.

    Duplicates (after canonicalisation) are removed, keeping the first occurrence.
    """
    if isinstance(measures, (str, Measure)) or _is_ir_measures(measures):
        items = split_measure_list(measures) if isinstance(measures, str) else [measures]
    else:
        items = [x for it in measures for x in (split_measure_list(it) if isinstance(it, str) else [it])]
    if not items:
        raise MeasureParseError("`measures` must name at least one measure, e.g. ['nDCG@10', 'AP']")
    out: list[Measure] = []
    for it in items:
        m = parse_measure(it)
        if m not in out:
            out.append(m)
    return out


