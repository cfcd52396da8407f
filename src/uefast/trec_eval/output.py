"""Formatting of :class:`~uefast.trec_eval.evaluator.TrecEvalResult` values.

``text`` is trec_eval's own output, byte for byte: ``%-22s\\t%s\\t%6.4f`` for real values,
``%ld`` for counts, ``'%s'`` for relstring (``meas_print_single.c`` / ``meas_print_final.c``);
per-topic lines (``-q``) come topic by topic, measures in table order, then the ``all`` lines.
``tsv`` / ``jsonl`` / ``parquet`` carry the same rows as (runid, measure, qid, value, text) records:
``value`` numeric (null for the text-valued ``runid`` and ``relstring``), ``text`` their text.
"""
from __future__ import annotations

import functools
import json
import math

import numpy as np
import pyarrow as pa

from uefast.trec_eval.interleave import FLOAT, INT, TEXT, pack, per_topic_lines

__all__ = ["rows", "per_topic_text", "format_text", "format_tsv", "format_jsonl", "to_table"]


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
    """Per-topic values of one slot, formatted as trec_eval prints them (in Python)."""
    v = s.per_query
    if s.fmt == "float":
        return [_f(x) for x in np.asarray(v, dtype=np.float64).tolist()]
    if s.fmt == "long":
        return [str(int(x)) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]
    if s.measure == "relstring":
        return [f"'{x}'" for x in v]
    return [str(x) for x in v]


@functools.lru_cache(maxsize=256)
def _packed(texts: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~uefast.trec_eval.interleave.pack`, kept for the next result (the same topics and
    measure names come result after result)."""
    return pack(list(texts))


@functools.lru_cache(maxsize=256)
def _prefixes(names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_packed` of the line prefixes ``%-22s\\t`` of measure names."""
    return pack([f"{name:<22}\t" for name in names])


def _int_column(v) -> bool:
    return (isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iub"
            and (v.dtype.kind != "u" or v.dtype.itemsize < 8))


def per_topic_text(qids, slots) -> str:
    """The ``-q`` lines of ``slots`` (each with per-topic values) for topics ``qids``, topic by
    topic: one Numba pass (:func:`uefast.trec_eval.interleave.per_topic_lines`) that prints real
    values ``%6.4f`` and counts ``%ld`` itself; text columns, and real ones with a value it does
    not take (NaN, infinities, ``|x| >= 2**39``), are formatted here first."""
    nq = len(qids)
    if not slots or not nq:
        return ""
    ns = len(slots)
    kind, row = [TEXT] * ns, [0] * ns
    fj = [j for j in range(ns) if slots[j].fmt == "float"]
    ij = [j for j in range(ns) if slots[j].fmt == "long" and _int_column(slots[j].per_query)]
    fvals = np.array([slots[j].per_query for j in fj], np.float64) if fj else np.zeros((0, nq))
    ivals = np.array([slots[j].per_query for j in ij], np.int64) if ij else np.zeros((0, nq), np.int64)
    if fvals.shape != (len(fj), nq) or ivals.shape != (len(ij), nq):
        raise ValueError(f"per-topic values of another shape than {nq} topics")
    fits = (np.abs(fvals) < 2.0 ** 39).all(axis=1).tolist()  # False with NaN and infinities too
    for r, j in enumerate(fj):
        if fits[r]:
            kind[j], row[j] = FLOAT, r
    for r, j in enumerate(ij):
        kind[j], row[j] = INT, r
    texts = []
    for j in range(ns):
        if kind[j] == TEXT:
            col = _column(slots[j])
            if len(col) != nq:
                raise ValueError(f"slot {slots[j].name!r}: {len(col)} values for {nq} topics")
            row[j] = len(texts)
            texts.append(col)
    if texts:
        tdata, toff = pack([x for col in texts for x in col])
        toff = np.stack([toff[c * nq:(c + 1) * nq + 1] for c in range(len(texts))])
    else:
        tdata, toff = np.zeros(0, np.uint8), np.zeros((0, nq + 1), np.int64)
    pdata, poff = _prefixes(tuple([s.name for s in slots]))
    qdata, qoff = _packed(tuple(map(str, qids.tolist() if isinstance(qids, np.ndarray) else qids)))
    return per_topic_lines(qdata, qoff, pdata, poff, np.array(kind, np.int64), np.array(row, np.int64),
                           fvals, ivals, tdata, toff).tobytes().decode()


def format_text(result, *, per_query: bool, summary: bool = True, extra=None) -> str:
    """trec_eval's text output (see module docstring)."""
    if extra:
        return "".join(f"{name:<22}\t{qid}\t{_fmt(fmt, v)}\n"
                       for name, qid, fmt, v in rows(result, per_query=per_query, summary=summary, extra=extra))
    head = per_topic_text(result.qids, [s for s in result.slots if s.per_query is not None]) if per_query else ""
    if not summary:
        return head
    # the summary lines (one per slot): an f-string each -- Python's %6.4f is C's, both exact
    # (tests/test_trec_fixed4.py); ~6x faster than a pass with one topic named "all"
    return head + "".join([f"{s.name:<22}\tall\t{_fmt(s.fmt, s.summary)}\n"
                           for s in result.slots if s.summary is not None])


def _plain(fmt, v):
    if fmt == "float":
        return float(v)
    if fmt == "long":
        return int(v)
    return str(v).strip("'")


def format_tsv(result, *, per_query: bool, summary: bool = True, extra=None) -> str:
    """Tab-separated ``runid, measure, qid, value, text`` with a header line, as :func:`to_table`:
    ``value`` a number (full float precision) or empty for the text-valued ``runid`` and
    ``relstring``, whose text goes to ``text`` (empty otherwise)."""
    out = ["runid\tmeasure\tqid\tvalue\ttext\n"]
    for name, qid, fmt, v in rows(result, per_query=per_query, summary=summary, extra=extra):
        if fmt == "str":
            out.append(f"{result.runid}\t{name}\t{qid}\t\t{_plain(fmt, v)}\n")
        else:
            out.append(f"{result.runid}\t{name}\t{qid}\t{_plain(fmt, v)!r}\t\n" if fmt == "float"
                       else f"{result.runid}\t{name}\t{qid}\t{_plain(fmt, v)}\t\n")
    return "".join(out)


def format_jsonl(result, *, per_query: bool, summary: bool = True, extra=None) -> str:
    """One JSON object per line: ``{"runid", "measure", "qid", "value", "text"}``, as
    :func:`to_table`: ``value`` a number or null (``runid``, ``relstring``), ``text`` their
    text or null."""
    return "".join(json.dumps({"runid": result.runid, "measure": name, "qid": qid,
                               "value": None if fmt == "str" else _plain(fmt, v),
                               "text": _plain(fmt, v) if fmt == "str" else None}) + "\n"
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
