"""Builders of ``pl.Expr`` that run the uefast kernels once for all groups (DESIGN §4)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from uefast.errors import InputError
from uefast.options import NEGATIVE as _NEGATIVE, REB as _REB, TIES as _TIES, check_choice as _check_choice
from uefast.polars._kernels import STATS, Spec, compute, resolve_measures

__all__ = ["build_expr", "build_struct", "build_long", "as_expr"]

_DEGENERATE = ("zero", "nan")


def as_expr(x: Any) -> pl.Expr:
    """A column name or an expression."""
    if isinstance(x, pl.Expr):
        return x
    if isinstance(x, str):
        return pl.col(x)
    raise TypeError(f"expected a column name or a polars expression, got {type(x).__name__}")


def _spec(measures, *, rel_level: int, reb: str, ties: str, degenerate: str,
          max_label: int | None, negative_labels: str = "clamp", has_score: bool = True) -> Spec:
    _check_choice("ties", ties, _TIES)
    _check_choice("reb", reb, _REB)
    if degenerate not in _DEGENERATE:
        raise InputError(f"`degenerate` must be one of {list(_DEGENERATE)} in expressions, got "
                         f"{degenerate!r} (use uefast.polars.evaluate(..., degenerate='drop'))")
    if isinstance(rel_level, bool) or not isinstance(rel_level, (int, np.integer)) or rel_level < 1:
        raise InputError(f"`rel_level` must be an integer >= 1, got {rel_level!r}")
    if max_label is not None and (isinstance(max_label, bool) or not isinstance(max_label, (int, np.integer))
                                  or max_label < 0):
        raise InputError(f"`max_label` must be an integer >= 0 (the collection's largest label), "
                         f"got {max_label!r}")
    _check_choice("negative_labels", negative_labels, _NEGATIVE)
    return Spec(resolve_measures(measures, max_label), int(rel_level), reb, ties, degenerate,
                max_label, negative_labels, has_score)


def _packed(label, score, docid) -> pl.Expr:
    fields = [as_expr(label).alias("label")]
    if score is not None:
        fields.append(as_expr(score).alias("score"))
    if docid is not None:
        fields.append(as_expr(docid).alias("docid"))
    return pl.struct(fields).implode()


def _map(packed: pl.Expr, fn, dtype) -> pl.Expr:
    return packed.map_batches(fn, return_dtype=dtype, is_elementwise=True, returns_scalar=True)


def build_expr(measure, label, score, *, stat: str = "value", docid=None, ties: str = "trec_eval",
               reb: str = "exact", degenerate: str = "zero", rel_level: int = 1,
               max_label: int | None = None) -> pl.Expr:
    """One value per group: ``stat`` (value/iub/reb/ue_v1/ue_v2: Float64; n_rel: Int64) of one
    measure."""
    if stat not in STATS:
        raise InputError(f"`stat` must be one of {list(STATS)}, got {stat!r}")
    need_score = stat in ("value", "ue_v1", "ue_v2")
    if need_score and score is None:
        raise InputError(f"stat {stat!r} needs a score column")
    spec = _spec(measure, rel_level=rel_level, reb=reb, ties=ties, degenerate=degenerate,
                 max_label=max_label, has_score=need_score)
    if len(spec.measures) != 1:
        raise InputError("one measure expected; use uefast.polars.measures(...) for several")

    dtype = pl.Int64 if stat == "n_rel" else pl.Float64

    def fn(s: pl.Series) -> pl.Series:
        r = compute(s, spec, want_value=need_score, want_ue=stat.startswith("ue"))
        return pl.Series(s.name, getattr(r, stat)[:, 0], dtype=dtype)

    name = str(spec.measures[0]) + ("" if stat == "value" else f":{stat}")
    return _map(_packed(label, score if need_score else None, docid if need_score else None),
                fn, dtype).alias(name)


def _field_name(m, stat: str, only_value: bool) -> str:
    return str(m) if only_value else f"{m}:{stat}"


def build_struct(label, score, measures, *, stats: Sequence[str] = ("value",), docid=None,
                 ties: str = "trec_eval", reb: str = "exact", degenerate: str = "zero",
                 rel_level: int = 1, max_label: int | None = None) -> pl.Expr:
    """A Struct per group with one field per (measure, stat), from one shared sort."""
    stats = (stats,) if isinstance(stats, str) else tuple(stats)
    if not stats:
        raise InputError(f"`stats` must name at least one of {list(STATS)}, got {stats!r}")
    for st in stats:
        if st not in STATS:
            raise InputError(f"`stats` entries must be in {list(STATS)}, got {st!r}")
    spec = _spec(measures, rel_level=rel_level, reb=reb, ties=ties, degenerate=degenerate,
                 max_label=max_label)
    only_value = stats == ("value",)
    fields = []
    for m in spec.measures:
        for st in stats:
            fields.append((_field_name(m, st, only_value), st, pl.Int64 if st == "n_rel" else pl.Float64))
    dtype = pl.Struct({name: dt for name, _, dt in fields})
    want_ue = any(st.startswith("ue") for st in stats)

    def fn(s: pl.Series) -> pl.Series:
        r = compute(s, spec, want_value=True, want_ue=want_ue)
        cols = {}
        i = 0
        for j in range(len(spec.measures)):
            for st in stats:
                name, _, dt = fields[i]
                cols[name] = pl.Series(name, getattr(r, st)[:, j], dtype=dt)
                i += 1
        return pl.DataFrame(cols).to_struct(s.name)

    return _map(_packed(label, score, docid), fn, dtype).alias("measures")


def _list_array(mat: np.ndarray, typ) -> pa.Array:
    g, m = mat.shape
    offsets = pa.array(np.arange(0, g * m + 1, m, dtype=np.int64))
    return pa.LargeListArray.from_arrays(offsets, pa.array(mat.reshape(-1), typ))


LONG_FIELDS = ("measure", "value", "iub", "reb", "ue_v1", "ue_v2", "n_rel", "_keep")


def build_long(label, score, measures, *, docid=None, ties: str = "trec_eval", reb: str = "exact",
               degenerate: str = "zero", rel_level: int = 1, max_label: int | None = None,
               negative_labels: str = "clamp", ue: bool = True) -> pl.Expr:
    """Struct{n_docs, n_judged, and list fields (one entry per measure)} for frame evaluate."""
    spec = _spec(measures, rel_level=rel_level, reb=reb, ties=ties,
                 degenerate="zero" if degenerate == "drop" else degenerate,
                 max_label=max_label, negative_labels=negative_labels)
    names = [str(m) for m in spec.measures]
    f64 = pl.List(pl.Float64)
    dtype = pl.Struct({"n_docs": pl.Int64, "n_judged": pl.Int64, "measure": pl.List(pl.String),
                       "value": f64, "iub": f64, "reb": f64, "ue_v1": f64, "ue_v2": f64,
                       "n_rel": pl.List(pl.Int64), "_keep": pl.List(pl.Boolean)})

    def fn(s: pl.Series) -> pl.Series:
        r = compute(s, spec, want_value=True, want_ue=ue)
        g, nm = r.value.shape
        cols = {"n_docs": pa.array(r.n_docs.astype(np.int64)),
                "n_judged": pa.array(r.n_judged.astype(np.int64)),
                "measure": _list_array(np.tile(np.array(names, dtype=object), (g, 1)), pa.large_string())}
        for st in ("value", "iub", "reb"):
            cols[st] = _list_array(getattr(r, st), pa.float64())
        for st in ("ue_v1", "ue_v2"):
            mat = getattr(r, st) if ue else np.full((g, nm), np.nan)
            cols[st] = _list_array(mat, pa.float64())
        cols["n_rel"] = _list_array(r.n_rel.astype(np.int64), pa.int64())
        # as uefast.evaluate: "drop" removes the degenerate rows, with or without UE scores
        keep = ~r.degenerate if degenerate == "drop" else np.ones((g, nm), bool)
        cols["_keep"] = _list_array(keep, pa.bool_())
        out = pl.from_arrow(pa.table(cols)).to_struct(s.name)
        return out.cast(dtype)

    return _map(_packed(label, score, docid), fn, dtype)
