"""Adapter from a Polars ``List(Struct{label, score[, docid]})`` Series to the core engine.

Inside ``group_by(...).agg(...)`` (and ``.over(...)``, ``select``) an expression of the form
``pl.struct(label, score).implode().map_batches(f, is_elementwise=True, returns_scalar=True)``
calls ``f`` **once** with one list element per group (DESIGN §4). The list offsets *are* the
query offsets, so the engine's grouping is ``Grouping(offsets, -, has_perm=False)`` with no copy
and no sort: every group's rows are its judged set (LETOR style), exactly what
``uefast.evaluate(run)`` does for a run without qrels.

Thread safety: Polars calls ``f`` from its own worker threads, possibly several at once. Every
kernel entry goes through :data:`uefast.engine.KERNEL_LOCK`: the kernels already run on every core
(:func:`uefast.kernels.threads.run_chunks`), so serialising them costs nothing but queueing and
keeps concurrent calls from oversubscribing the cores.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from uefast.engine import (  # noqa: F401  (KERNEL_LOCK re-exported for adapters)
    KERNEL_LOCK,
    Grouping,
    docid_ranks,
    judged_stats,
    plan_measures,
    rank_values,
)
from uefast.errors import InputError
from uefast.inputs import NO_DOCIDS, docids, label_array, score_array
from uefast.measures import Measure, parse_measures
from uefast.ue import degenerate_mask, ue_scores

__all__ = ["KERNEL_LOCK", "Spec", "compute", "resolve_measures"]

_NO_PERM = np.zeros(1, np.int64)
STATS = ("value", "iub", "reb", "ue_v1", "ue_v2", "n_rel")


@dataclass(frozen=True)
class Spec:
    """What one expression computes; hashable so expressions can be cached/compared."""

    measures: tuple[Measure, ...]
    rel_level: int = 1
    reb: str = "exact"
    ties: str = "trec_eval"
    degenerate: str = "zero"
    max_label: int | None = None
    negative_labels: str = "clamp"
    has_score: bool = True


def resolve_measures(measures, max_label: int | None) -> tuple[Measure, ...]:
    """Parse measures; ERR without ``lmax`` needs ``max_label`` (the collection's top grade).

    The in-memory path takes ERR's default ``lmax`` from the largest label of the data it sees.
    A Polars expression may see only part of the data (streaming engine, ``over`` windows), so the
    value must be given: ``ERR(lmax=4)@20`` or ``max_label=4``. Never guessed per batch.
    """
    ms = tuple(parse_measures(measures))
    for m in ms:
        if m.definition.takes_label_max(m) and max_label is None:
            raise InputError(
                f"{m}: in Polars expressions ERR's lmax must be explicit (a batch may not contain "
                "the collection's top grade); pass lmax=... / 'ERR(lmax=4)@k' or max_label=...")
    return ms


def _to_list_array(s) -> pa.Array:
    a = s.to_arrow()
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
    if not (pa.types.is_list(a.type) or pa.types.is_large_list(a.type)):
        raise InputError(f"uefast.polars: expected a list of structs, got {a.type}")
    return a


def _field(values: pa.StructArray, name: str) -> pa.Array:
    arr = values.field(name)
    if arr.null_count:
        first = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        hint = ""
        if name == "label":  # the usual cause: a run left-joined to its qrels (unjudged: null)
            hint = ("; a null label is an unjudged document, as a run joined to its qrels has them: "
                    "such a frame also lacks the relevant documents the run did not retrieve, "
                    "which AP, recall, R-precision and nDCG's ideal ranking count (filling the "
                    "nulls with 0 gives too high values): evaluate a TREC run with "
                    "uefast.polars.evaluate(run, qrels), or check a frame with "
                    "uefast.polars.require_all_relevant(frame, qrels)")
        raise InputError(f"polars: column {name!r} has {arr.null_count} null value(s); first at "
                         f"row {first} of the batch{hint}")
    if pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.large_string())
    return arr


@dataclass
class Result:
    """Per group g and measure m: ``value[g, m]`` etc.; ``n_docs[g]``, ``n_judged[g]``."""

    value: np.ndarray
    iub: np.ndarray
    reb: np.ndarray
    ue_v1: np.ndarray
    ue_v2: np.ndarray
    n_rel: np.ndarray
    n_docs: np.ndarray
    n_judged: np.ndarray
    degenerate: np.ndarray


def compute(s, spec: Spec, want_value: bool = True, want_ue: bool = True) -> Result:
    """Run the two kernel passes once over every group of the list Series ``s``."""
    a = _to_list_array(s)
    offsets = np.ascontiguousarray(a.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    g = len(a)
    vals = a.values
    if isinstance(vals, pa.ChunkedArray):  # pragma: no cover - defensive
        vals = vals.combine_chunks()
    names = [vals.type.field(i).name for i in range(vals.type.num_fields)]
    what = "polars"
    labels = label_array(_field(vals, "label"), "label", what, spec.negative_labels)
    nrows = len(labels)
    data_max = int(labels[offsets[0]:offsets[-1]].max()) if g and offsets[-1] > offsets[0] else 0
    if spec.max_label is not None and data_max > spec.max_label:
        raise InputError(f"{what}: the data has label {data_max}, above max_label={spec.max_label} "
                         f"(the collection's largest label, ERR's default lmax)")
    # max_label (>= every label of the data, checked above) is ERR's default lmax
    plan = plan_measures(list(spec.measures), rel_level=spec.rel_level, reb=spec.reb,
                         max_label=spec.max_label if spec.max_label is not None else data_max)
    nm = len(spec.measures)
    with KERNEL_LOCK:
        judged = judged_stats(offsets, _NO_PERM, False, labels, plan, max(data_max, 0))
        if want_value and spec.has_score:
            scores = score_array(_field(vals, "score"), "score", what)
            if len(scores) != nrows:  # pragma: no cover - struct children share a length
                raise InputError("polars: label and score lengths differ")
            docs = NO_DOCIDS
            if "docid" in names:
                darr = _field(vals, "docid")
                docs = docids(darr, "docid", what)
                # string docids -> byte-order ranks (the sort is also the duplicate check)
                docs, r, o = docid_ranks(Grouping(offsets, _NO_PERM, False, None), docs)
                if r >= 0:
                    raise InputError(f"polars: duplicate docid {darr[r].as_py()!r} within one "
                                     f"group: rows {o} and {r} of the batch")
            value = rank_values(offsets, _NO_PERM, False, labels, scores,
                                np.arange(g, dtype=np.int64), spec.ties, docs, plan, judged)
        else:
            value = np.zeros((g, nm))
    deg = degenerate_mask(judged.iub, judged.reb)
    if want_ue:
        pol = "nan" if spec.degenerate == "nan" else "zero"
        v1, v2 = ue_scores(value, judged.iub, judged.reb, pol)
    else:
        v1 = v2 = value
    return Result(value, judged.iub, judged.reb, v1, v2, judged.nrel, np.diff(offsets),
                  judged.n_judged, deg)
