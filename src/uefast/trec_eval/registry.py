"""trec_eval's measure table: names, parameter kinds, defaults, nicknames, and ``-m`` parsing.

Mirrors ``measures.c`` / ``meas_init.c`` of trec_eval 9.0.8 and 10.0: measures are computed and
printed in table order (not command-line order); ``-m name.params`` attaches parameters (the first
``-m`` naming a measure wins; a measure without parameters ignores them); cutoff lists are sorted ascending and must not repeat; printed
names are ``name_<cutoff>`` (``%ld``; ``%3.2f`` for fractional cutoffs) or ``name_<params as
typed>`` for single-valued measures with parameters.  trec_eval 9.0.8's table has no dcg,
ideal_dcg, rbp, rbp_resid or unj (10.0 added them; the 9.0.8 table compiled into pytrec_eval has
none of them): in 9.0.8 mode they are illegal measures, as there.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from uefast.errors import MeasureParseError

__all__ = ["MeasureSpec", "MEASURES", "NICKNAMES", "Selected", "select_measures", "c_atof", "c_atol", "c_trunc"]

# kinds: runid | num_q | long | double | gm | cut_long | cut_double | p_double | p_pair | relstring
LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
DEC = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class MeasureSpec:
    name: str
    kind: str
    default: tuple = ()
    versions: tuple = ("10.0", "9.0.8")


MEASURES: tuple[MeasureSpec, ...] = (
    MeasureSpec("runid", "runid"),
    MeasureSpec("num_q", "num_q"),
    MeasureSpec("num_ret", "long"),
    MeasureSpec("num_rel", "long"),
    MeasureSpec("num_rel_ret", "long"),
    MeasureSpec("map", "double"),
    MeasureSpec("gm_map", "gm"),
    MeasureSpec("Rprec", "double"),
    MeasureSpec("bpref", "double"),
    MeasureSpec("recip_rank", "double"),
    MeasureSpec("iprec_at_recall", "cut_double", DEC),
    MeasureSpec("P", "cut_long", LONG_CUTS),
    MeasureSpec("relstring", "relstring", (10.0,)),
    MeasureSpec("recall", "cut_long", LONG_CUTS),
    MeasureSpec("infAP", "double"),
    MeasureSpec("gm_bpref", "gm"),
    MeasureSpec("Rprec_mult", "cut_double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    MeasureSpec("utility", "p_double", (1.0, -1.0, 0.0, 0.0)),
    MeasureSpec("11pt_avg", "p_double", DEC),
    MeasureSpec("binG", "double"),
    MeasureSpec("G", "p_pair"),
    MeasureSpec("dcg", "p_pair", versions=("10.0",)),
    MeasureSpec("ideal_dcg", "p_pair", versions=("10.0",)),
    MeasureSpec("ndcg", "p_pair"),
    MeasureSpec("ndcg_rel", "p_pair"),
    MeasureSpec("Rndcg", "p_pair"),
    MeasureSpec("ndcg_cut", "cut_long", LONG_CUTS),
    MeasureSpec("map_cut", "cut_long", LONG_CUTS),
    MeasureSpec("relative_P", "cut_long", LONG_CUTS),
    MeasureSpec("success", "cut_long", (1, 5, 10)),
    MeasureSpec("set_P", "double"),
    MeasureSpec("set_relative_P", "double"),
    MeasureSpec("set_recall", "double"),
    MeasureSpec("set_map", "double"),
    MeasureSpec("set_F", "p_double", (1.0,)),
    MeasureSpec("num_nonrel_judged_ret", "long"),
    MeasureSpec("rbp", "p_pair", versions=("10.0",)),
    MeasureSpec("rbp_resid", "double", versions=("10.0",)),
    MeasureSpec("unj", "cut_long", (5, 10, 20), versions=("10.0",)),
)
_BY_NAME = {m.name: m for m in MEASURES}

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank", "iprec_at_recall", "P")
_TREC9 = _OFFICIAL + ("relstring", "recall", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg",
                      "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg",
                      "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                      "num_nonrel_judged_ret")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F")
NICKNAMES = {
    "10.0": {"official": _OFFICIAL, "all_trec": _TREC9 + ("rbp", "rbp_resid", "unj"), "set": _SET},
    "9.0.8": {"official": _OFFICIAL, "all_trec": _TREC9, "set": _SET},
}
UNSUPPORTED = {
    "all_prefs": "preference measures need -R prefs / qrels_prefs input",
    "prefs": "preference measures need -R prefs / qrels_prefs input",
    "qrels_jg": "judgment-group measures need -R qrels_jg input",
}


def c_atof(s: str) -> float:
    """C ``atof``: the longest numeric prefix of ``s`` (0.0 when there is none)."""
    import re

    m = re.match(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", s)
    return float(m.group(0)) if m else 0.0


LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1


def c_atol(s: str) -> int:
    """C ``atol``/``strtol``: the longest integer prefix of ``s`` (0 when there is none), clamped
    to ``[LONG_MIN, LONG_MAX]`` as glibc's ``strtol`` clamps a value beyond 64 bits."""
    import re

    m = re.match(r"\s*[+-]?\d+", s)
    return min(max(int(m.group(0)), LONG_MIN), LONG_MAX) if m else 0


def c_trunc(x: float, bits: int = 64) -> int:
    """C's ``(long) x`` (``bits=64``) or ``(int) x`` (``bits=32``) on x86-64: truncation toward
    zero; NaN, infinities and values outside the type's range give its minimum (``cvttsd2si``'s
    "integer indefinite"), e.g. ``(long) 1e300 == LONG_MIN``."""
    lo = -(2 ** (bits - 1))
    if x != x or not lo <= x < -lo:
        return lo
    return int(x)


def _comp_long(a: int, b: int) -> int:
    """trec_eval's qsort comparator for long cutoffs, ``(int) (a - b)`` on x86-64: the 64-bit
    difference (wrapping) truncated to its low 32 bits, signed. It orders cutoffs less than 2^31
    apart as numbers; further apart it may misorder them (``P.4294967301,5`` prints
    ``P_4294967301`` first), and trec_eval prints them in that order."""
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d & 0x80000000 else d


@dataclass
class Selected:
    """A measure to compute, with its parsed parameters and printed value names."""

    spec: MeasureSpec
    params: tuple = ()
    printable: str | None = None  # parameter string as typed (None: defaults)
    pairs: list = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        s = self.spec
        if s.kind == "cut_long":
            return [f"{s.name}_{c}" for c in self.params]
        if s.kind == "cut_double":
            return [f"{s.name}_{c:3.2f}" for c in self.params]
        if s.kind in ("p_double", "p_pair", "relstring") and self.printable is not None:
            return [f"{s.name}_{self.printable}"]
        return [s.name]


def _parse_params(spec: MeasureSpec, text: str) -> Selected:
    parts = text.split(",")
    k = spec.kind
    if k == "cut_long":
        cuts = sorted((c_atol(p) for p in parts), key=functools.cmp_to_key(_comp_long))
        if min(cuts) <= 0:
            raise MeasureParseError(f"measure '{spec.name}.{text}': cutoffs must be positive")
        if len(set(cuts)) != len(cuts):
            raise MeasureParseError(f"measure '{spec.name}.{text}': duplicate cutoffs")
        return Selected(spec, tuple(cuts), text)
    if k == "cut_double":
        cuts = sorted(c_atof(p) for p in parts)
        if len(set(cuts)) != len(cuts):
            raise MeasureParseError(f"measure '{spec.name}.{text}': duplicate cutoffs")
        return Selected(spec, tuple(cuts), text)
    if k in ("p_double", "relstring"):
        vals = tuple(c_atof(p) for p in parts)
        if spec.name == "utility" and len(vals) != 4:
            raise MeasureParseError(f"measure 'utility.{text}': needs exactly 4 coefficients")
        return Selected(spec, vals, text)
    if k == "p_pair":  # meas_init.c get_param_pairs: each parameter is one name=value
        if any(p.count("=") != 1 for p in parts):
            raise MeasureParseError(f"measure '{spec.name}.{text}': malformed pair parameters in "
                                    f"'{text}' (each comma-separated parameter must be name=value)")
        pairs = [(name, c_atof(val)) for name, val in (p.split("=") for p in parts)]
        return Selected(spec, (), text, pairs)
    # a measure without parameters: trec_eval keeps them but its init never reads them
    return Selected(spec, tuple(spec.default))


def select_measures(args: list[str], version: str = "10.0") -> list[Selected]:
    """Resolve ``-m`` arguments (in command-line order) to the measures to compute, in table order.

    ``args`` empty means ``official``.  Unknown or unsupported names raise
    :class:`MeasureParseError` with the reason.
    """
    nick = NICKNAMES[version]
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args or ["official"]:
        name, dot, text = arg.partition(".")
        if dot and not text:  # trec_eval.c add_meas_arg_info, for any -m argument
            raise MeasureParseError(f"improper measure parameters in '{arg}' (empty parameter list)")
        if name in UNSUPPORTED:
            raise MeasureParseError(f"measure '{arg}' is not supported by uefast trec_eval: {UNSUPPORTED[name]}")
        if dot and name not in params:
            params[name] = text
        if name in nick:
            marked.update(nick[name])
            continue
        spec = _BY_NAME.get(name)
        if spec is None or version not in spec.versions:
            known = ", ".join(m.name for m in MEASURES if version in m.versions)
            since = "" if spec is None else f"a trec_eval {'/'.join(spec.versions)} measure; "
            raise MeasureParseError(
                f"illegal measure '{arg}' for trec_eval {version} ({since}supported: {known}; "
                f"nicknames: {', '.join(nick)})"
            )
        marked.add(name)
    out = []
    for spec in MEASURES:
        if spec.name not in marked or version not in spec.versions:
            continue
        if spec.name in params:
            out.append(_parse_params(spec, params[spec.name]))
        else:
            out.append(Selected(spec, tuple(spec.default)))
    return out
