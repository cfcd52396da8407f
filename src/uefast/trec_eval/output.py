"""Formatting of :class:`~uefast.trec_eval.evaluator.TrecEvalResult` values.

``text`` is trec_eval's own output, byte for byte: ``%-22s\\t%s\\t%6.4f`` for real values,
``%ld`` for counts, ``'%s'`` for relstring (``meas_print_single.c`` / ``meas_print_final.c``);
per-topic lines (``-q``) come topic by topic, measures in table order, then the ``all`` lines.
``tsv`` / ``jsonl`` / ``parquet`` carry the same rows as (measure, qid, value) records.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa

from uefast.trec_eval.fixed4 import fixed4_lines

__all__ = ["rows", "format_text", "format_tsv", "format_jsonl", "to_table"]


def _f(v: float) -> str:
    if math.isnan(v):
        return f"{'-nan' if math.copysign(1.0, v) < 0 else 'nan':>6}"
    if math.isinf(v):
        return f"{'-inf' if v < 0 else 'inf':>6}"
    return f"{v:6.4f}"


def _fmt(fmt: str, v) -> str:
    if fmt == "float":
        return _f(float(v))
    if fmt == "long":
        return str(int(v))
    return str(v)


def rows(result, *, per_query: bool, summary: bool = True, extra=None):
    """Yield ``(name, qid, fmt, value)`` in trec_eval's print order.

    ``extra`` maps a slot name to a list of ``(name, per_query_values, summary_value)`` printed
    right after that slot (used for ``--ue``).
    """
    extra = extra or {}
    if per_query:
        for qi, qid in enumerate(result.qids):
            for s in result.slots:
                if s.per_query is not None:
                    v = s.per_query[qi]
                    yield s.name, qid, s.fmt, (f"'{v}'" if s.measure == "relstring" else v)
                    for name, pq, _ in extra.get(s.name, ()):
                        yield name, qid, "float", pq[qi]
    if summary:
        for s in result.slots:
            if s.summary is not None:
                yield s.name, "all", s.fmt, s.summary
                for name, _, sm in extra.get(s.name, ()):
                    yield name, "all", "float", sm


def _column(s) -> list[str]:
    """Per-topic values of one slot, formatted as trec_eval prints them."""
    v = s.per_query
    if s.fmt == "float":  # %6.4f by one Numba pass (fixed4.py), the values it leaves by _f
        arr = np.ascontiguousarray(v, dtype=np.float64)
        txt, slow = fixed4_lines(arr)
        out = txt.tobytes().decode("ascii").split("\n")[:-1]
        for i in slow.tolist():
            out[i] = _f(float(arr[i]))
        return out
    if s.fmt == "long":
        return [str(int(x)) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]
    if s.measure == "relstring":
        return [f"'{x}'" for x in v]
    return [str(x) for x in v]


def format_text(result, *, per_query: bool, summary: bool = True, extra=None) -> str:
    """trec_eval's text output (see module docstring)."""
    if extra:
        return "".join(f"{name:<22}\t{qid}\t{_fmt(fmt, v)}\n"
                       for name, qid, fmt, v in rows(result, per_query=per_query, summary=summary, extra=extra))
    out = []
    if per_query:  # column-wise formatting, then interleave topic by topic
        cols = [(f"{s.name:<22}\t", _column(s)) for s in result.slots if s.per_query is not None]
        for qi, qid in enumerate(result.qids):
            for prefix, vals in cols:
                out.append(f"{prefix}{qid}\t{vals[qi]}\n")
    out.extend(f"{name:<22}\t{qid}\t{_fmt(fmt, v)}\n"
               for name, qid, fmt, v in rows(result, per_query=False, summary=summary))
    return "".join(out)


def _plain(fmt, v):
    if fmt == "float":
        return float(v)
    if fmt == "long":
        return int(v)
    return str(v).strip("'")


def format_tsv(result, *, per_query: bool, summary: bool = True, extra=None) -> str:
    """Tab-separated ``runid, measure, qid, value`` with a header line; full float precision."""
    out = ["runid\tmeasure\tqid\tvalue\n"]
    for name, qid, fmt, v in rows(result, per_query=per_query, summary=summary, extra=extra):
        out.append(f"{result.runid}\t{name}\t{qid}\t{_plain(fmt, v)!r}\n" if fmt == "float"
                   else f"{result.runid}\t{name}\t{qid}\t{_plain(fmt, v)}\n")
    return "".join(out)


def format_jsonl(result, *, per_query: bool, summary: bool = True, extra=None) -> str:
    """One JSON object per line: ``{"runid", "measure", "qid", "value"}``."""
    return "".join(json.dumps({"runid": result.runid, "measure": name, "qid": qid,
                               "value": _plain(fmt, v)}) + "\n"
                   for name, qid, fmt, v in rows(result, per_query=per_query, summary=summary, extra=extra))


def to_table(result, *, per_query: bool, summary: bool = True, extra=None) -> pa.Table:
    """Arrow table ``runid, measure, qid, value (float64), text (string: relstring/runid)``."""
    names, qids, vals, texts = [], [], [], []
    for name, qid, fmt, v in rows(result, per_query=per_query, summary=summary, extra=extra):
        names.append(name)
        qids.append(qid)
        if fmt == "str":
            vals.append(None)
            texts.append(_plain(fmt, v))
        else:
            vals.append(float(v))
            texts.append(None)
    return pa.table({"runid": [result.runid] * len(names), "measure": names, "qid": qids,
                     "value": pa.array(vals, pa.float64()), "text": pa.array(texts, pa.string())})
