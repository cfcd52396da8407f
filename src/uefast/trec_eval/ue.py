"""``uefast trec_eval --ue``: IUB, REB and UE V1/V2 next to the trec_eval measures that uefast's
engine (:func:`uefast.evaluate`) also computes.

Mapping (trec_eval printed name -> engine measure), from each measure family's ``external``
names in the registry (:mod:`uefast.measures`): ``map`` -> ``AP``, ``P_k`` -> ``P@k``,
``ndcg_cut_k`` -> ``nDCG@k``, ``recip_rank`` -> ``RR``, ``Rprec`` -> ``Rprec``, ``recall_k`` ->
``R@k``, ``map_cut_k`` -> ``AP@k``, ``success_k`` -> ``Success@k``, ``bpref`` -> ``bpref``.  For each mapped value four
more lines are printed right after it, in trec_eval's format: ``<name>_iub``, ``<name>_reb``,
``<name>_ue_v1``, ``<name>_ue_v2`` (per topic with ``-q``, and the mean over the evaluated topics
for ``all``).
"""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.inputs import numeric_array, numpy_view, text_array
from uefast.trec_eval.prepare import float32_sim

__all__ = ["engine_measure", "ue_extra", "UE_COLUMNS"]

UE_COLUMNS = ("iub", "reb", "ue_v1", "ue_v2")


def _bridge() -> tuple[dict, dict]:
    """From the registry (each family's ``external`` names): trec_eval printed name -> measure
    string for measures without a cutoff, and printed-name prefix -> family name for cutoff
    measures (``P_{k}`` -> P). Only the names a family declares as the same values are bridged."""
    from uefast.measures import FAMILIES

    plain, cut = {}, {}
    for name, f in FAMILIES.items():
        if "trec_eval" in f.external:
            plain[f.external["trec_eval"]] = name
        tpl = f.external.get("trec_eval_cut")
        if tpl is not None:
            cut[tpl.replace("_{k}", "")] = name
    return plain, cut


def trec_eval_name(measure: str) -> str | None:
    """The trec_eval printed name of a :func:`uefast.evaluate` measure string (the inverse of
    :func:`engine_measure`; ``nDCG`` -> ``ndcg`` too: a family's ``trec_eval_alias``), or None.
    Only measures at their default parameters have one."""
    from uefast.errors import MeasureParseError
    from uefast.measures import parse_measure

    try:
        m = parse_measure(measure)
    except MeasureParseError:
        return None
    if str(m) != m.name + ("" if m.cutoff is None else f"@{m.cutoff}"):
        return None  # a non-default parameter: trec_eval prints no such measure
    ext = m.definition.external
    if m.cutoff is None:
        return ext.get("trec_eval", ext.get("trec_eval_alias"))
    tpl = ext.get("trec_eval_cut")
    return None if tpl is None else tpl.format(k=m.cutoff)


def engine_measure(name: str) -> str | None:
    """The :func:`uefast.evaluate` measure for a trec_eval printed name (None: no counterpart)."""
    plain, cut = _bridge()
    if name in plain:
        return plain[name]
    m = re.fullmatch(r"(.+)_(\d+)", name)
    if m and m.group(1) in cut:
        return f"{cut[m.group(1)]}@{int(m.group(2))}"
    return None


def _truncate(run: pa.Table, max_docs: int) -> pa.Table:
    import polars as pl

    df = pl.from_arrow(run.select(["qid", "docid", "score"]))
    df = df.sort(["qid", "score", "docid"], descending=[False, True, True])
    df = df.filter(pl.int_range(pl.len()).over("qid") < max_docs)
    return df.to_arrow()


def ue_extra(result, run: pa.Table, qrels: pa.Table, *, relevance_level: int = 1, complete: bool = False,
             max_docs: int | None = None, judged_only: bool = False, version: str = "10.0") -> dict:
    """Extra rows for :func:`uefast.trec_eval.output.rows`: ``{slot name: [(name, per-topic, all)]}``.

    The engine sees what trec_eval ranked: the evaluated topics only (``result.qids``: a NaN score
    or a repeated judgment elsewhere is never looked at), scores rounded to float32 in 9.0.8 mode
    (``float sim``: its ties), each topic cut to ``max_docs`` in trec_eval's order."""
    try:
        from uefast import evaluate
    except ImportError:  # pragma: no cover - engine missing in a partial checkout
        raise InputError("--ue needs uefast.evaluate (the core engine), which is not available") from None
    if judged_only:
        raise InputError("--ue cannot be combined with -J (the engine has no judged-only mode)")
    if relevance_level < 1:
        raise InputError("--ue needs -l >= 1")
    wanted = {}
    for s in result.slots:
        em = engine_measure(s.name)
        if em is not None and s.per_query is not None:
            wanted[s.name] = em
    if not wanted:
        return {}
    topics = text_array(list(result.qids))
    r = run.select(["qid", "docid", "score"])
    r = r.filter(pc.is_in(r["qid"], value_set=topics))
    if version != "10.0":  # trec_eval 9 stores scores as float, rounded as its ranking was
        f32 = float32_sim(np.asarray(numpy_view(r["score"].combine_chunks()), dtype=np.float64))
        r = r.set_column(r.schema.get_field_index("score"), "score", numeric_array(f32))
    if max_docs is not None:
        r = _truncate(r, max_docs)
    # an Arrow scalar from the name's bytes: pa.array / pa.scalar of Python values would make
    # pyarrow import pandas (~0.3 s of a command)
    r = r.append_column("system", pa.repeat(text_array([result.runid])[0], r.num_rows))
    qrels = qrels.filter(pc.is_in(qrels["qid"], value_set=topics))  # the topics evaluated
    t = evaluate(r, qrels, measures=sorted(set(wanted.values())), ue=True, ties="trec_eval", reb="exact",
                 rel_level=relevance_level, queries="qrels" if complete else "intersect")
    qpos = {q: i for i, q in enumerate(result.qids)}
    cols = {c: numpy_view(t[c], null_value=np.nan) for c in UE_COLUMNS}
    meas = t["measure"].to_pylist()
    qids = [str(x) for x in t["qid"].to_pylist()]
    per = {}
    for row, (m, q) in enumerate(zip(meas, qids)):
        if q in qpos:
            per.setdefault(m, {c: np.full(len(result.qids), np.nan) for c in UE_COLUMNS})
            for c in UE_COLUMNS:
                per[m][c][qpos[q]] = cols[c][row]
    out = {}
    for name, em in wanted.items():
        vals = per.get(em)
        if vals is None:
            continue
        out[name] = [(f"{name}_{c}", vals[c], float(np.nanmean(vals[c])) if np.isfinite(vals[c]).any() else float("nan"))
                     for c in UE_COLUMNS]
    return out
