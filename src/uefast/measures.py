"""Measure objects, the registry from measure name to kernel, and the measure-string parser.

Measure strings follow ir_measures where it has a name::

    nDCG@10   nDCG(gain=exp)@10   DCG@5   AP   AP@10   AP(norm=k)@10   SP@10
    P@10   P(rel=2)@10   R@100   Rprec   RR   RR@10   ERR@20   ERR(lmax=4)@20   RBP(p=0.8)
    Success@10

``str(measure)`` is the canonical form (defaults left out) and ``parse_measure(str(m)) == m``.
Parameters:

* ``rel``  -- relevance threshold of binary measures (label >= rel is relevant). ``None`` means
  "the ``rel_level`` given to :func:`uefast.evaluate`" (default 1, trec_eval's ``-l``).
* ``gain`` -- ``lin`` (g(l) = l, trec_eval ``ndcg_cut``) or ``exp`` (g(l) = 2^l - 1, the paper's).
* ``norm`` -- AP@k denominator: ``rel`` (Np, trec_eval ``map_cut``), ``k`` (the paper's
  AP@k = SP@k/k) or ``min`` (min(Np, k)).
* ``lmax`` -- ERR's maximum grade in theta(l) = (2^l - 1)/2^lmax; ``None`` means the largest label
  in the evaluated data (the collection's scale, SPEC_math §7.1); an lmax below a label of the
  data is refused at evaluation (theta would exceed 1).
* ``p``    -- RBP persistence.

Paper aliases: ``PaperAP@k`` is ``AP(norm=k)@k`` and ``MSP@k`` is ``SP@k`` (Santu & Feng 2022).
ir_measures' ``nDCG(dcg='exp-log2')@10`` (and ``dcg='log2'``) are read as ``gain=exp`` (``lin``).
"""
from __future__ import annotations

import decimal
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from uefast.errors import MeasureParseError

__all__ = [
    "Measure",
    "MeasureDef",
    "REGISTRY",
    "parse_measure",
    "parse_measures",
    "KIND",
    "describe_measures",
]

# Kernel codes (stable: the Numba kernels switch on them).
KIND = {
    "DCG": 0,
    "nDCG": 1,
    "P": 2,
    "R": 3,
    "Rprec": 4,
    "SP": 5,
    "AP": 6,
    "RR": 7,
    "ERR": 8,
    "RBP": 9,
    "Success": 10,
}
GAIN_CODES = {"lin": 0, "exp": 1}
NORM_CODES = {"rel": 0, "k": 1, "min": 2}


@dataclass(frozen=True)
class MeasureDef:
    """What a measure name means: its kernel code, parameters and cutoff rule."""

    name: str
    kind: int
    description: str
    params: dict[str, Any] = field(default_factory=dict)  # name -> default
    choices: dict[str, tuple] = field(default_factory=dict)  # name -> allowed values
    cutoff: str = "optional"  # "optional" | "required" | "none"
    binary: bool = True  # uses the relevance threshold `rel`
    paper_reb: bool = False  # the paper gives a REB formula (used by reb="paper")
    always_show: tuple = ()  # parameters printed even at their default (e.g. RBP's p)


REGISTRY: dict[str, MeasureDef] = {}
ALIASES: dict[str, tuple[str, dict[str, Any], bool]] = {}  # alias -> (name, params, cutoff_copies)


def _register(d: MeasureDef, aliases: Iterable[str] = ()) -> None:
    REGISTRY[d.name] = d
    for a in aliases:
        ALIASES[a] = (d.name, {}, False)


_register(MeasureDef("DCG", KIND["DCG"], "discounted cumulative gain, sum g(l_i)/log2(i+1)",
                     {"gain": "lin"}, {"gain": ("lin", "exp")}, binary=False, paper_reb=True))
_register(MeasureDef("nDCG", KIND["nDCG"], "DCG / IDCG (IDCG over all judged documents)",
                     {"gain": "lin"}, {"gain": ("lin", "exp")}, binary=False, paper_reb=True),
          aliases=("NDCG", "ndcg"))
_register(MeasureDef("P", KIND["P"], "precision at k (divides by k)", {"rel": None},
                     cutoff="required"), aliases=("Precision",))
_register(MeasureDef("R", KIND["R"], "recall at k (relevant in top k / Np)", {"rel": None},
                     cutoff="required"), aliases=("Recall",))
_register(MeasureDef("Rprec", KIND["Rprec"], "precision at rank Np", {"rel": None}, cutoff="none"),
          aliases=("RPrec", "R-prec"))
_register(MeasureDef("SP", KIND["SP"], "sum of precisions at relevant ranks, sum_i Prec(i) rel_i",
                     {"rel": None}, paper_reb=True), aliases=("MSP",))
_register(MeasureDef("AP", KIND["AP"], "average precision, SP@k / norm (trec_eval map, map_cut)",
                     {"rel": None, "norm": "rel"}, {"norm": ("rel", "k", "min")}, paper_reb=True),
          aliases=("MAP", "map"))
_register(MeasureDef("RR", KIND["RR"], "reciprocal rank of the first relevant document",
                     {"rel": None}), aliases=("MRR", "recip_rank"))
_register(MeasureDef("ERR", KIND["ERR"], "expected reciprocal rank, theta(l) = (2^l-1)/2^lmax",
                     {"lmax": None}, binary=False))
_register(MeasureDef("RBP", KIND["RBP"], "rank-biased precision (1-p) sum p^(i-1) rel_i (binary)",
                     {"p": 0.8, "rel": None}, always_show=("p",)))
_register(MeasureDef("Success", KIND["Success"],
                     "1 if a relevant document is in the top k, else 0 (trec_eval success_k; Hit@k)",
                     {"rel": None}, cutoff="required"), aliases=("Hit", "success"))
ALIASES["PaperAP"] = ("AP", {"norm": "k"}, False)


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
        if self.name not in REGISTRY:
            raise MeasureParseError(f"unknown measure {self.name!r}; known: {sorted(REGISTRY)}")
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
    def definition(self) -> MeasureDef:
        return REGISTRY[self.name]

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
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)\s*(?:\((?P<params>[^()]*)\))?\s*(?:@\s*(?P<cut>[^\s]+))?\s*$"
)
#: ir_measures' spelling of the DCG gain (``nDCG(dcg='exp-log2')@10``) -> uefast's ``gain``.
_IR_MEASURES_DCG = {"log2": "lin", "exp-log2": "exp"}
_MAX_CUTOFF = 2 ** 63 - 1  # cutoffs are int64 in the kernels
# plain ASCII numbers only (Python's int()/float() also take "1_0", "٥", full-width digits)
_INT_RE = re.compile(r"[+-]?[0-9]+")
_REAL_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FORMAT = "must be in format Measure(k1=v1,k2=v2)@cutoff, e.g. nDCG@10, P(rel=2)@10, RBP(p=0.8)"


def _convert(name: str, key: str, raw: str, text: str) -> Any:
    d = REGISTRY[name]
    default = d.params[key]
    if key in d.choices:
        if raw not in d.choices[key]:
            raise MeasureParseError(
                f"measure {text!r}: `{key}` must be one of {list(d.choices[key])}, got {raw!r}")
        return raw
    if key in ("rel", "lmax"):
        if not _INT_RE.fullmatch(raw):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be an integer, got {raw!r}")
        return int(raw)
    if key == "p":
        if not _REAL_RE.fullmatch(raw):
            raise MeasureParseError(f"measure {text!r}: `p` must be a number, got {raw!r}")
        v = float(raw)
        if v == 1.0 and decimal.Decimal(raw) != 1:  # 0.99999999999999999999: not exactly 1
            raise MeasureParseError(f"measure {text!r}: `p` must be in (0, 1); {raw!r} rounds to "
                                    "1.0 in double precision")
        return v
    return type(default)(raw) if default is not None else raw  # pragma: no cover


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _validate(name: str, cutoff: Any, params: dict[str, Any], text: str):
    """The canonical ``(cutoff, params)`` of measure ``name`` -- every parameter, sorted, defaults
    filled in -- or :class:`~uefast.errors.MeasureParseError` naming ``text`` and the problem."""
    d = REGISTRY[name]
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
        if key in ("rel", "lmax") and v is not None and not (_is_int(v) and v >= 1):
            raise MeasureParseError(f"measure {text!r}: `{key}` must be an integer >= 1, got {v!r}")
        if key == "p" and not (isinstance(v, numbers.Real) and not isinstance(v, bool)
                               and 0.0 < v < 1.0):
            raise MeasureParseError(f"measure {text!r}: `p` must be in (0, 1), got {v!r}")
    if name == "AP" and params.get("norm", "rel") != "rel" and cutoff is None:
        raise MeasureParseError(f"measure {text!r}: AP(norm=...) needs a cutoff")
    canon = {"rel": lambda v: v if v is None else int(v), "lmax": lambda v: v if v is None else int(v),
             "p": float}
    full = tuple((k, canon.get(k, lambda v: v)(params.get(k, v))) for k, v in sorted(d.params.items()))
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
        name, fixed, _ = ALIASES[name]
        params.update(fixed)
    if name not in REGISTRY:
        raise MeasureParseError(
            f"unknown measure {m.group('name')!r} in {text!r}; known: {sorted(REGISTRY) + sorted(ALIASES)}")
    raw_params = m.group("params")
    if raw_params and raw_params.strip():
        given: set[str] = set()
        for item in raw_params.split(","):
            if "=" not in item:
                raise MeasureParseError(f"measure {text!r} {_FORMAT}")
            key, raw = (s.strip() for s in item.split("=", 1))
            if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
                raw = raw[1:-1]  # ir_measures quotes its string values: dcg='exp-log2'
            if key == "dcg" and name in ("DCG", "nDCG"):
                if raw not in _IR_MEASURES_DCG:
                    raise MeasureParseError(f"measure {text!r}: `dcg` (ir_measures' spelling of "
                                            f"`gain`) must be one of {list(_IR_MEASURES_DCG)}, "
                                            f"got {raw!r}")
                key, raw = "gain", _IR_MEASURES_DCG[raw]
            if key not in REGISTRY[name].params:
                raise MeasureParseError(
                    f"measure {text!r}: unknown parameter `{key}` for {name}; known: {sorted(REGISTRY[name].params)}")
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


def describe_measures() -> str:
    """A plain-text table of the registered measures (used by ``uefast evaluate --list-measures``)."""
    lines = []
    width = max(len(name) for name in REGISTRY)
    for name, d in REGISTRY.items():
        params = ", ".join(f"{k}={v}" for k, v in d.params.items())
        cut = {"optional": "@k optional", "required": "@k required", "none": "no cutoff"}[d.cutoff]
        lines.append(f"{name:<{width}} {cut:<12} {params:<22} {d.description}")
    lines.append("aliases: " + ", ".join(f"{a}->{v[0]}" for a, v in ALIASES.items()))
    return "\n".join(lines)
