"""The measure-family contract and the one registry that drives parsing, planning and dispatch.

A :class:`Family` is everything uefast knows about one measure family, in one place:

* identity -- ``name``, ``description``, ``formula``, ``source``, ``aliases`` (and aliases that fix
  a parameter, ``fixed_aliases``), ``external`` names: ``ir_measures``, ``ntcireval``, and for
  trec_eval ``trec_eval`` (the printed name of the measure without a cutoff, same values: the
  ``uefast trec_eval --ue`` bridge), ``trec_eval_cut`` (the printed name with cutoff k, a
  ``{k}`` template, same values), ``trec_eval_alias`` / ``trec_eval_other`` (names only);
* parameters -- ``params`` (name -> default), ``choices`` (name -> allowed values), the
  ``cutoff`` rule ("optional", "required", "none"), ``always_show`` (printed even at the default),
  ``check`` (a cross-parameter rule, e.g. AP(norm=k) needs a cutoff);
* kernels -- ``code`` (the dispatch code, :mod:`uefast.kernels.dispatch`) and the four routines
  ``plain``, ``tied``, ``iub``, ``reb`` (Numba functions of the signatures in
  :mod:`uefast.kernels.routines`), ``paper_reb`` (the paper's REB, or None where the paper gives
  none), ``kernel_params`` (a measure and a :class:`PlanContext` -> :class:`KernelParams`),
  ``reals`` (how many of the measure's real parameters its routines read, 1 to :data:`REALS`:
  with 1 their ``fp`` argument is ``fparam``, with more it is the row
  ``(fparam, fparam2, fparam3)``);
* every family takes the modifier ``judged=only`` (added by :func:`register`): the measure on the
  condensed list, the run's unjudged documents removed before ranking;
* the per-query state it needs -- ``state``, a subset of :data:`STATES`, and ``sorted_labels``:
  how much of the judged labels sorted descending its IUB / REB routines read ("none": closed
  forms; "top_k": the top k, "all" without a cutoff; "all");
* claims the tests hold it to -- ``iub_exact`` (IUB is the maximum over all orders),
  ``reb_method`` ("exact", or "monte_carlo" where no polynomial algorithm is known),
  ``truncatable`` (the value at cutoff k reads ranks <= k only), ``normalised`` (value, IUB and
  REB divided by the raw IUB, as nDCG and nERR), ``collection_reb`` (whether its REB routine is a
  closed form in (n, Np, gain sum, K) that may be evaluated with n = a collection's size N:
  "closed" always, "cutoff" with a cutoff (O(k) per query), "none": ``reb_universe="collection"``
  refuses it), ``judged_only`` (its value is computed on the condensed list: a run's unjudged
  documents removed before ranking, as bpref), ``label_source`` ("label", or "judged": the
  routines read 1 for a judged document and 0 for an unjudged one instead of its label, as
  Judged@k).

:func:`register` refuses a family that lacks a piece (naming every missing piece), clashes with a
registered name or alias, or has a kernel code the dispatch does not handle. The reference
implementation every family needs lives in the test tree (``tests/naive.py``,
``naive.REFERENCE``); the registry-driven test (tests/test_registry.py) fails for a registered
family that has none.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, NamedTuple

from uefast.errors import MeasureRegistrationError

__all__ = ["Family", "KernelParams", "PlanContext", "STATES", "REALS", "FAMILIES", "ALIASES",
           "register", "unregister"]

#: Per-query state a family may ask the judged pass for:
#: ``nrel`` -- Np, the judged documents at or above the relevance threshold;
#: ``gain_sum`` -- the sum of the judged labels' gains (REB of rank-linear measures);
#: ``ideal`` -- the judged labels sorted descending, kept for the ranking pass (Q, O: cg*(r));
#: ``label_max`` -- the largest label of the data (ERR's and nERR's grade scale).
STATES = frozenset({"nrel", "gain_sum", "ideal", "label_max"})

_CUTOFF_RULES = ("optional", "required", "none")
_REB_METHODS = ("exact", "monte_carlo")
_REQUIRED = ("name", "code", "description", "formula", "source", "plain", "tied", "iub", "reb",
             "kernel_params")


#: how many real parameters a measure carries to its routines (:attr:`Family.reals`)
REALS = 3


class KernelParams(NamedTuple):
    """What the kernels read for one measure: gain code, relevance threshold, the real parameter
    (RBP's p, ERR's lmax, Q's beta), AP's norm code, and a family's second and third reals where
    its ``reals`` asks for them (NCUrb's gamma; TBG's decay factors delta_1, delta_0)."""

    gtype: int = 0
    rel: int = 1
    fparam: float = 0.0
    norm: int = 0
    fparam2: float = 0.0
    fparam3: float = 0.0


@dataclass(frozen=True)
class PlanContext:
    """What planning knows about the data: the default relevance threshold, the largest label,
    the REB kind ("exact" / "paper") and the exponential gain's scale code (``1 + s``, gains
    scaled by 2^-s so that their sums stay finite; :func:`uefast.kernels.metrics.gain`);
    ``doc_codes``: the labels are TBG's per-document codes (:mod:`uefast.tbg_lengths`)."""

    rel_level: int = 1
    max_label: int = 1
    reb: str = "exact"
    exp_gtype: int = 1
    #: the labels are TBG's per-document codes (uefast.tbg_lengths); only that pass sets it
    doc_codes: bool = False


@dataclass(frozen=True, eq=False)
class Family:
    """One measure family (see the module docstring for every field)."""

    name: str | None = None
    code: int | None = None
    description: str | None = None
    formula: str | None = None
    source: str | None = None
    plain: Callable | None = None
    tied: Callable | None = None
    iub: Callable | None = None
    reb: Callable | None = None
    kernel_params: Callable[[Any, PlanContext], KernelParams] | None = None
    paper_reb: Callable | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    choices: Mapping[str, tuple] = field(default_factory=dict)
    cutoff: str = "optional"
    always_show: tuple = ()
    aliases: tuple = ()
    fixed_aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    external: Mapping[str, str] = field(default_factory=dict)
    state: tuple = ("nrel",)
    sorted_labels: str = "none"
    iub_exact: bool = True
    reb_method: str = "exact"
    truncatable: bool = True
    normalised: bool = False
    collection_reb: str = "none"
    judged_only: bool = False
    label_source: str = "label"
    check: Callable[[Any, str], None] | None = None
    label_max_rule: Callable[[Any], bool] | None = None
    reals: int = 1

    def condensed(self, m: Any) -> bool:
        """Whether measure ``m`` is computed on the condensed list (the run's unjudged documents
        removed before ranking): the family's rule (bpref) or the modifier ``judged=only``
        (AP(judged=only) is the AP' of Sakai 2007 and Yilmaz & Aslam 2006)."""
        return self.judged_only or m.param("judged") == "only"

    def takes_label_max(self, m: Any) -> bool:
        """Whether measure ``m`` of this family takes its top grade from the data (state
        ``label_max``, no explicit ``lmax``; ``label_max_rule`` narrows it, e.g. graded RBP only)."""
        if "label_max" not in self.state or m.param("lmax") is not None:
            return False
        return self.label_max_rule is None or bool(self.label_max_rule(m))

    # the names the pre-registry code used
    @property
    def kind(self) -> int:
        return self.code

    @property
    def binary(self) -> bool:
        """Reads the relevance threshold ``rel``."""
        return "rel" in self.params

    @property
    def has_paper_reb(self) -> bool:
        return self.paper_reb is not None

    def missing(self) -> list[str]:
        """The required pieces this family lacks (empty when complete)."""
        out = [k for k in _REQUIRED if getattr(self, k) is None]
        if self.cutoff not in _CUTOFF_RULES:
            out.append(f"cutoff rule (one of {list(_CUTOFF_RULES)}, got {self.cutoff!r})")
        if self.reb_method not in _REB_METHODS:
            out.append(f"reb_method (one of {list(_REB_METHODS)}, got {self.reb_method!r})")
        if self.collection_reb not in ("none", "closed", "cutoff"):
            out.append(f"collection_reb (one of ['none', 'closed', 'cutoff'], got "
                       f"{self.collection_reb!r})")
        if self.label_source not in ("label", "judged"):
            out.append(f"label_source (one of ['label', 'judged'], got {self.label_source!r})")
        if self.sorted_labels not in ("none", "top_k", "all"):
            out.append(f"sorted_labels (one of ['none', 'top_k', 'all'], got {self.sorted_labels!r})")
        if self.reals not in range(1, REALS + 1):
            out.append(f"reals (1 to {REALS}, got {self.reals!r})")
        bad = set(self.state) - STATES
        if bad:
            out.append(f"known state names (unknown: {sorted(bad)}; known: {sorted(STATES)})")
        for key in self.choices:
            if key not in self.params:
                out.append(f"a default for choice parameter `{key}`")
        return out


#: name -> Family, in registration order
FAMILIES: dict[str, Family] = {}
#: alias -> (family name, fixed parameters)
ALIASES: dict[str, tuple[str, dict]] = {}


def register(fam: Family) -> Family:
    """Add ``fam`` to the registry, or raise :class:`MeasureRegistrationError` naming every
    missing piece, a name or alias already taken, a kernel code taken or not dispatched."""
    label = fam.name if fam.name else "<unnamed>"
    missing = fam.missing()
    if missing:
        raise MeasureRegistrationError(
            f"measure family {label!r} cannot be registered: missing {', '.join(missing)}")
    taken = set(FAMILIES) | set(ALIASES)
    for nm in (fam.name, *fam.aliases, *fam.fixed_aliases):
        if nm in taken:
            raise MeasureRegistrationError(
                f"measure family {label!r} cannot be registered: the name {nm!r} is taken")
    for other in FAMILIES.values():
        if other.code == fam.code:
            raise MeasureRegistrationError(
                f"measure family {label!r} cannot be registered: kernel code {fam.code} is "
                f"{other.name}'s")
    if os.environ.get("UEFAST_CODEGEN") != "1" and fam.code not in _dispatched():
        raise MeasureRegistrationError(
            f"measure family {label!r} cannot be registered: kernel code {fam.code} has no branch "
            f"in uefast.kernels.dispatch (regenerate it from the registry: "
            f"UEFAST_CODEGEN=1 python -m uefast.measures._codegen)")
    if "judged" not in fam.params:  # the condensed-list modifier, on every family
        fam = replace(fam, params={**fam.params, "judged": "all"},
                      choices={**fam.choices, "judged": ("all", "only")})
    FAMILIES[fam.name] = fam
    for a in fam.aliases:
        ALIASES[a] = (fam.name, {})
    for a, fixed in fam.fixed_aliases.items():
        ALIASES[a] = (fam.name, dict(fixed))
    return fam


def _dispatched() -> frozenset:
    from uefast.kernels.dispatch import DISPATCHED

    return DISPATCHED


def unregister(name: str) -> None:
    """Remove family ``name`` and its aliases (tests, plug-ins)."""
    FAMILIES.pop(name)
    for a in [a for a, (n, _) in ALIASES.items() if n == name]:
        del ALIASES[a]
