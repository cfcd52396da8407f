"""ir_measures interoperability: its measure objects (``ir_measures.nDCG@10``) wherever uefast takes
a measure, mapped to the uefast measure that gives the **same number**, or refused with a reason.

ir_measures (MacAvaney et al., ECIR 2022) names measures as uefast does (``nDCG@10``, ``P(rel=2)@5``,
``AP``, ``RR``, ``Rprec``, ``R@100``, ``Success@10``, ``ERR@20``, ``RBP(p=0.8,rel=1)``); strings are
read by :func:`uefast.parse_measure` directly. An *object* says which semantics its author meant,
so it is translated (:data:`TRANSLATED`) to keep ir_measures' number:

* ``ERR@k`` -> ``ERR(lmax=4)@k``: ir_measures (gdeval) fixes the top grade at 4, uefast's default
  is the largest label in the data (the string ``"ERR@k"`` keeps uefast's default);
* ``nDCG(dcg='exp-log2')`` -> ``nDCG(gain=exp)``, ``dcg='log2'`` is the default;
* ``judged_only=False`` and ``gains=None`` are the defaults and dropped.

Refused, with the reason (:data:`REFUSED`): ``RBP`` without ``rel`` (graded in ir_measures,
binary in uefast: give ``rel``), ``judged_only=True``, custom ``gains``, other ``dcg`` forms, and
measures uefast does not compute (``Bpref``, ``infAP``, ``Judged``, ``NumRet``, ``SetP``, ...:
use ``uefast trec_eval`` or ir_measures for them).
"""
from __future__ import annotations

from uefast.errors import MeasureParseError

__all__ = ["is_ir_measures_measure", "to_uefast", "TRANSLATED", "REFUSED", "SAME"]

#: ir_measures measures whose object maps to the uefast measure of the same name and parameters
SAME = ("nDCG", "P", "R", "AP", "RR", "Rprec", "Success")
#: translated so that the value is ir_measures'
TRANSLATED = {"ERR@k": "ERR(lmax=4)@k", "nDCG(dcg='exp-log2')": "nDCG(gain=exp)",
              "RBP(p=…,rel=r)": "RBP(p=…,rel=r)"}
#: refused, and why
REFUSED = {
    "RBP without rel": "graded in ir_measures, binary in uefast: give rel (RBP(p=0.8, rel=1))",
    "judged_only=True": "uefast counts unjudged documents as non-relevant (trec_eval's reading)",
    "gains={...}": "custom gain maps are not a uefast parameter (gain=exp is 2^l - 1)",
    "other measures": "no uefast equivalent (Bpref, infAP, Judged, NumRet, SetP, ...): use "
                      "`uefast trec_eval` or ir_measures",
}
_PARAM_ORDER = ("gain", "lmax", "p", "rel")


def is_ir_measures_measure(obj) -> bool:
    """Whether ``obj`` is an ir_measures measure object (``ir_measures.nDCG@10``), without
    importing ir_measures."""
    return (type(obj).__module__.split(".")[0] == "ir_measures" and hasattr(obj, "NAME")
            and hasattr(obj, "params"))


def _refuse(obj, why: str):
    raise MeasureParseError(f"ir_measures measure {obj!r}: {why}")


def to_uefast(obj) -> str:
    """The uefast measure string that gives ``obj``'s number (see the module docstring), or a
    :class:`~uefast.errors.MeasureParseError` saying why there is none."""
    name = obj.NAME
    params = dict(obj.params)
    cutoff = params.pop("cutoff", None)
    if params.pop("judged_only", False):
        _refuse(obj, f"judged_only=True: {REFUSED['judged_only=True']}")
    if params.pop("gains", None) is not None:
        _refuse(obj, f"gains: {REFUSED['gains={...}']}")
    out = {}
    if name == "nDCG":
        dcg = params.pop("dcg", "log2")
        if dcg == "exp-log2":
            out["gain"] = "exp"
        elif dcg != "log2":
            _refuse(obj, f"dcg={dcg!r}: uefast has log2 discounts with linear (default) or "
                         f"exponential (gain=exp) gains")
    elif name == "ERR":
        out["lmax"] = 4  # gdeval's fixed top grade
    elif name == "RBP":
        if params.get("rel") is None:
            _refuse(obj, f"RBP without rel: {REFUSED['RBP without rel']}")
        out["p"] = params.pop("p", 0.8)
    elif name not in SAME:
        _refuse(obj, f"{name}: {REFUSED['other measures']}")
    rel = params.pop("rel", None)
    if rel is not None:
        out["rel"] = rel
    if params:
        _refuse(obj, f"parameters {sorted(params)} have no uefast equivalent")
    text = name
    if out:
        text += "(" + ",".join(f"{k}={out[k]}" for k in _PARAM_ORDER if k in out) + ")"
    if cutoff is not None:
        text += f"@{cutoff}"
    return text
