"""Measure families (one registry), measure objects and the measure-string parser.

Measure strings follow ir_measures where it has a name::

    nDCG@10   nDCG(gain=exp)@10   DCG@5   AP   AP@10   AP(norm=k)@10   SP@10
    P@10   P(rel=2)@10   R@100   Rprec   RR   RR@10   ERR@20   ERR(lmax=4)@20   RBP(p=0.8)
    Success@10   Q   Q(beta=2)@10   nERR@10   O   JKnDCG(logb=2)@10   NCU   NCU(nu=p)
    RBP-residual(p=0.8)

``str(measure)`` is the canonical form (defaults left out) and ``parse_measure(str(m)) == m``.
Parameters:

* ``rel``  -- relevance threshold of binary measures (label >= rel is relevant). ``None`` means
  "the ``rel_level`` given to :func:`uefast.evaluate`" (default 1, trec_eval's ``-l``).
* ``gain`` -- ``lin`` (g(l) = l, trec_eval ``ndcg_cut``, NTCIREVAL's default gain values) or
  ``exp`` (g(l) = 2^l - 1, the paper's).
* ``norm`` -- AP@k denominator: ``rel`` (Np, trec_eval ``map_cut``), ``k`` (the paper's
  AP@k = SP@k/k) or ``min`` (min(Np, k)).
* ``lmax`` -- ERR's / nERR's top grade; ``None`` means the largest label in the evaluated data.
* ``p``    -- RBP persistence.
* ``beta`` -- Q- and O-measure's weight of the cumulative gain in the blended ratio (default 1).
* ``logb`` -- JKnDCG's logarithm base b > 1 (ranks below b are not discounted; default 2).
* ``nu``   -- NCU's utility: ``br`` (the blended ratio) or ``p`` (precision).
* ``judged`` -- on every measure: ``only`` computes it on the condensed list (the run's unjudged
  documents removed before ranking: AP', Q', nDCG' of the literature), ``all`` (default) not.

Paper aliases: ``PaperAP@k`` is ``AP(norm=k)@k`` and ``MSP@k`` is ``SP@k`` (Santu & Feng 2022).
NTCIREVAL's names: ``MSnDCG@k`` is ``nDCG@k``, ``NCUguBR`` / ``NCUguP`` are ``NCU`` / ``NCU(nu=p)``,
``nDCG-orig@k`` is ``JKnDCG@k`` (docs/ntcireval.md).
ir_measures' ``nDCG(dcg='exp-log2')@10`` (and ``dcg='log2'``) are read as ``gain=exp`` (``lin``).

Every family is a :class:`~uefast.measures._family.Family` in :data:`FAMILIES`; see
docs/adding_a_measure.md for the contract and the checklist :func:`register` enforces.
"""
from __future__ import annotations

from uefast.measures._family import (ALIASES, FAMILIES, STATES, Family, KernelParams, PlanContext,
                                     register, unregister)
from uefast.measures._parse import Measure, parse_measure, parse_measures, split_measure_list
from uefast.measures._builtin import GAIN_CODES, NORM_CODES  # registers the built-in families

__all__ = [
    "Measure",
    "Family",
    "KernelParams",
    "PlanContext",
    "FAMILIES",
    "REGISTRY",
    "ALIASES",
    "STATES",
    "register",
    "unregister",
    "parse_measure",
    "parse_measures",
    "split_measure_list",
    "describe_measures",
    "KIND",
    "GAIN_CODES",
    "NORM_CODES",
]

#: the name the registry had before families (name -> Family)
REGISTRY = FAMILIES
#: the pre-registry name of :class:`Family`
MeasureDef = Family


def __getattr__(name: str):
    if name == "KIND":  # name -> kernel code, computed from the registry (plug-ins included)
        return {n: f.code for n, f in FAMILIES.items()}
    raise AttributeError(name)


def describe_measures() -> str:
    """A plain-text table of the registered measures (``uefast evaluate --list-measures``): name,
    cutoff rule, parameters, how REB is computed (exact / Monte Carlo), whether
    ``reb_universe="collection"`` takes it, and the description."""
    rows = []
    for name, d in FAMILIES.items():
        params = ", ".join(f"{k}={v}" for k, v in d.params.items() if k != "judged") or "-"
        cut = {"optional": "@k optional", "required": "@k required", "none": "no cutoff"}[d.cutoff]
        reb = "REB exact" if d.reb_method == "exact" else "REB Monte Carlo"
        coll = {"closed": "collection", "cutoff": "collection@k", "none": "-"}[d.collection_reb]
        rows.append((name, cut, params, reb, coll, d.description))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(f"{c:<{w}}" for c, w in zip(r[:5], widths)) + "  " + r[5] for r in rows]
    lines.append("aliases: " + ", ".join(f"{a}->{v[0]}" for a, v in ALIASES.items()))
    lines.append("every measure takes judged=only (the condensed list), e.g. AP(judged=only)")
    return "\n".join(lines)
