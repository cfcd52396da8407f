"""The text of ``ndeval`` v4.5 (``uefast ndeval``): reading its files as it does, and its CSV.

ndeval's input rules (``ndeval.c``): qrels lines ``topic subtopic docno judgment`` whose topic,
subtopic and judgment are natural numbers (digits only; judgments > 1 read as 1; a negative
grade is a syntax error, hence NIST's ``qrels-for-ndeval`` files); run lines with at least six
fields ``topic Q0 docno rank score runid``, the topic optionally prefixed by a task name ending in
``-`` (``wt09-12``), the rank a natural number; the run id is the sixth field of the first line.
Runs are ordered by the rank column (``-traditional``: score descending, then docno descending,
ranks reassigned); a rank or docno repeated within a topic is an error; ``-M d`` keeps the first
d ranks. Output: a header, one line per run topic in numeric order (topics missing from the
qrels print zeros), and ``amean`` = the sum over the printed topics divided by the number of
topics in both run and qrels (``-c``: the number of qrels topics), every value ``%.6f``.
``-baseline`` / ``-riskAlpha`` print the risk-sensitive differences r - b (r >= b) or
(1 + a)(r - b) against a baseline run, as ndeval does.

Deviations, each an error where ndeval would go on: a (topic, subtopic, docno) judged twice
(ndeval keeps one judgment and counts both), blank and ``#`` lines are skipped (ndeval stops on
them with a syntax error).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.diversity.ndeval import (DEPTH, NDEVAL_COLUMNS, NdevalQrels, build_ndeval_qrels,
                                     column_index, join_rows, ndeval_scores)
from uefast.diversity.qrels import compile_qrels
from uefast.errors import InputError
from uefast.inputs import numpy_view

__all__ = ["natural_number", "parse_topic", "read_ndeval_qrels", "NdevalRun", "read_ndeval_run",
           "ndeval_text", "format_value"]

LARGE_ENOUGH = 100000
VERSION = "version 4.5 (Mon 29 Apr 2013 20:51:02 EDT)"


def natural_number(s: str) -> int:
    """ndeval's ``naturalNumber``: digits only, else -1 (also -1 once the value read so far
    exceeds 100000 before another digit)."""
    if not s:
        return -1
    v = 0
    for ch in s:
        if "0" <= ch <= "9":
            if v > LARGE_ENOUGH:
                return -1
            v = 10 * v + ord(ch) - 48
        else:
            return -1
    return v


def parse_topic(s: str) -> int:
    """ndeval's ``parseTopic``: a natural number, or the number after the first ``-`` when the
    field does not start with a digit (``wt09-12`` -> 12)."""
    if s[:1].isdigit() and s[:1].isascii():
        return natural_number(s)
    k = s.find("-")
    return natural_number(s[k + 1:]) if k >= 0 else -1


def _naturals(col: pa.Array, p, what: str) -> np.ndarray:
    """ndeval's natural number of every value of ``col`` (up to six digits always one; longer
    ones by :func:`natural_number`); the first line that is not one raises ndeval's syntax
    error with file and line."""
    short = numpy_view(pc.match_substring_regex(col, "^[0-9]{1,6}$"))
    out = np.full(len(col), -1, np.int64)
    idx = np.flatnonzero(short)
    if idx.size == len(col):
        out = numpy_view(pc.cast(col, pa.int64())).astype(np.int64)
    else:
        out[idx] = numpy_view(pc.cast(col.take(pa.array(idx)), pa.int64()))
        for i in np.flatnonzero(~short):
            out[i] = natural_number(col[int(i)].as_py())
    bad = np.flatnonzero(out < 0)
    if bad.size:
        raise p.error(int(bad[0]), f"syntax error: {what} {col[int(bad[0])].as_py()!r} is not a "
                                   "natural number (ndeval)")
    return out


def _qrels_fast(path, alpha, beta, depth) -> NdevalQrels | None:
    """One Numba pass over the qrels (:func:`uefast.diversity._ndeval_scan.scan_qrels`: fields,
    document ids from a hash table), the documents sorted by (topic, bytes) with one lexsort over
    their names' 64-bit words; None when the file needs the general reader (odd lines, a
    duplicate), which also raises the errors. The document table is kept for the run scans."""
    from uefast.diversity import _ndeval_scan as sc
    from uefast.diversity.ndeval import ndeval_qrels_from_arrays
    from uefast.inputs import string_array
    from uefast.io._scan import _gather, read_bytes

    buf = read_bytes(path)
    ok, n, topic, sub, jd, gid, G, dtop, dst, den, tab = sc.scan_qrels(buf)
    if not ok or n == 0:
        return None
    topic, sub, jd, gid = (a[:n] for a in (topic, sub, jd, gid))
    dtop, dst, den = (a[:G] for a in (dtop, dst, den))
    words = sc.name_words(buf, dst, den)
    dorder = np.lexsort((den - dst, *words[::-1], dtop))  # topic, then the docno's bytes
    rank_of = np.empty(G, np.int64)
    rank_of[dorder] = np.arange(G)
    row = rank_of[gid]
    S = int(sub.max()) + 1
    key = np.sort(row * S + sub)
    if (key[1:] == key[:-1]).any():
        return None  # a (topic, subtopic, docno) twice: the general reader names the lines
    utop, tstart = np.unique(dtop[dorder], return_index=True)
    T = utop.size
    roff = np.r_[tstart, G].astype(np.int64)
    tix = np.searchsorted(utop, topic)
    pair = tix * S + sub
    act = np.unique(pair[jd == 1])
    act_t = act // S
    col_act = np.arange(act.size) - np.searchsorted(act_t, act_t, side="left")
    m = np.bincount(act_t, minlength=T).astype(np.int64)
    mmax = max(int(m.max(initial=0)), 1)
    J = np.zeros((G, mmax), np.uint8)
    nrel = np.zeros((T, mmax), np.int64)
    rel = np.flatnonzero(jd == 1)
    c = col_act[np.searchsorted(act, pair[rel])]
    J[row[rel], c] = 1
    np.add.at(nrel, (tix[rel], c), 1)
    data, offs = _gather(buf, dst[dorder], den[dorder])
    names = string_array(offs, data).to_numpy(zero_copy_only=False)
    docids = [names[roff[i]:roff[i + 1]] for i in range(T)]
    nq = ndeval_qrels_from_arrays([str(int(x)) for x in utop], docids, J, roff, m, nrel,
                                  alpha, beta, depth)
    nq.scan_table = (tab, buf, rank_of - roff[np.searchsorted(utop, dtop)])
    return nq


def read_ndeval_qrels(path, alpha: float = 0.5, beta: float = 0.5, depth: int = DEPTH,
                      fast: bool = True) -> NdevalQrels:
    """Read and compile a qrels file under ndeval's rules (module docstring); topics are keyed by
    their number as text (``"0151"`` and ``"151"`` are one topic, as in ndeval). ``fast``: try
    the one-pass Numba reader first (same result; the general reader raises the errors)."""
    from uefast.diversity.qrels import read_qrels_parsed

    if fast:
        nq = _qrels_fast(path, alpha, beta, depth)
        if nq is not None:
            return nq

    try:
        t, p, grade = read_qrels_parsed(path, format="trec", negative="keep", duplicates="error")
    except InputError as exc:
        if "expected 4 fields" in str(exc):  # ndeval's rule: at least 4 (the rest ignored)
            raise InputError(str(exc).replace("expected 4 fields", "expected 4 fields (ndeval)")) from None
        raise
    topic = _naturals(t["qid"].combine_chunks(), p, "topic")
    sub = _naturals(t["subtopic"].combine_chunks(), p, "subtopic")
    _naturals(grade, p, "judgment")
    lab = np.minimum(numpy_view(t["label"].combine_chunks()), 1)
    t = pa.table({"qid": pc.cast(pa.array(topic), pa.string()), "subtopic": pc.cast(pa.array(sub), pa.string()),
                  "docid": t["docid"], "label": pa.array(lab, pa.int64())})
    topics = compile_qrels(t)
    order = sorted(topics, key=int)
    return build_ndeval_qrels({q: topics[q] for q in order}, alpha, beta, depth)


@dataclass
class NdevalRun:
    """A run read and ordered as ndeval does: ``runid``, ``topics`` (ascending, ints), segment
    offsets ``soff`` into ``docids`` (rank order within each topic)."""

    runid: str
    topics: np.ndarray
    soff: np.ndarray
    docids: pa.Array | None
    rows: np.ndarray | None = None  # topic-local judged rows (fast path), else None


def _scan_table(nq: NdevalQrels):
    """The qrels' document table for the run scans: (table, the bytes its names point into,
    topic-local row of each document); built here from the docids when the general reader read
    the qrels."""
    if getattr(nq, "scan_table", None) is None:
        from uefast.diversity._ndeval_scan import build_table

        from uefast.io._hash import str_buffers

        arr = pa.array(np.concatenate(nq.docids) if nq.docids else np.zeros(0, object), pa.string())
        off, data = str_buffers(arr)
        off = np.asarray(off, np.int64)
        data = np.asarray(data, np.uint8)
        topics = np.repeat(np.array([int(q) for q in nq.qids], np.int64), np.diff(nq.roff))
        local = np.arange(off.size - 1) - np.repeat(nq.roff[:-1], np.diff(nq.roff))
        nq.scan_table = (build_table(data, off[:-1], off[1:], topics), data, local)
    return nq.scan_table


def _read_fast(path, depth_m: int, nq: NdevalQrels) -> NdevalRun | None:
    """The one-pass scan (:mod:`uefast.diversity._ndeval_scan`); None when the file needs the
    general reader (which then also raises the errors)."""
    from uefast.diversity import _ndeval_scan as sc
    from uefast.io._scan import read_bytes

    buf = read_bytes(path)
    tab, names, local = _scan_table(nq)
    st, n, topic, rank, grow, in_order, rs, re_ = sc.scan(buf, tab, names, local, True)
    if st == sc.RESCAN:  # a topic's lines are not contiguous: one duplicate table for the file
        st, n, topic, rank, grow, in_order, rs, re_ = sc.scan(buf, tab, names, local, False)
    if st != sc.OK or n == 0:
        return None
    topic, rank, grow = (a[:n] for a in (topic, rank, grow))
    if in_order:  # already in (topic, rank) order, as run files usually are
        ts, rows = topic, grow
    else:
        order = np.lexsort((rank, topic))
        ts, rks = topic[order], rank[order]
        if ((ts[1:] == ts[:-1]) & (rks[1:] == rks[:-1])).any():
            return None  # duplicate rank: the general reader raises it
        rows = grow[order]
    start = np.r_[True, ts[1:] != ts[:-1]]
    first = np.flatnonzero(start)
    if depth_m > 0:
        depth = np.arange(n) - first[np.cumsum(start) - 1] + 1
        keep = depth <= depth_m
        ts, rows = ts[keep], rows[keep]
        start = np.r_[True, ts[1:] != ts[:-1]]
        first = np.flatnonzero(start)
    runid = bytes(buf[rs:re_]).decode("utf-8", errors="replace")
    return NdevalRun(runid, ts[first], np.r_[first, ts.size].astype(np.int64), None, rows)


def read_ndeval_run(path, traditional: bool = False, depth_m: int = 0,
                    nq: NdevalQrels | None = None) -> NdevalRun:
    """Read a run file under ndeval's rules (module docstring). With ``nq`` (and not
    ``traditional``) a one-pass scan joins the docnos to the judgments as it reads."""
    from uefast.io.trec import read_run, run_lines

    if nq is not None and not traditional:
        fast = _read_fast(path, depth_m, nq)
        if fast is not None:
            return fast

    # without -M, read_run's fused scan refuses a docno repeated within a topic (ndeval checks
    # after the cutoff, so with -M the check below runs instead)
    t = read_run(path, extra_columns="ignore", ranks="check",
                 duplicates="keep" if depth_m > 0 else "error")
    lines = None

    def err_at(row: int, msg: str):
        nonlocal lines
        lines = lines or run_lines(path)
        return lines.error(row, msg)

    enc = pc.dictionary_encode(t["qid"].combine_chunks())
    names = enc.dictionary.to_pylist()
    tv = np.array([parse_topic(s) for s in names], np.int64)
    topic = tv[np.asarray(enc.indices, np.int64)]
    checked = depth_m <= 0 and len(set(tv.tolist())) == len(names)  # one text per topic number
    rank = numpy_view(t["rank"].combine_chunks()).astype(np.int64)
    bad = np.flatnonzero((topic < 0) | (rank < 0) | (rank > 10 * LARGE_ENOUGH + 9))
    if bad.size:
        raise err_at(int(bad[0]), "syntax error (topic or rank is not a natural number, ndeval)")
    runid = t["system"][0].as_py()
    docid = t["docid"].combine_chunks()
    n = t.num_rows
    if traditional:
        tab = pa.table({"t": topic, "s": t["score"], "d": docid})
        order = np.asarray(tab.sort_indices([("t", "ascending"), ("s", "descending"),
                                             ("d", "descending")]) if hasattr(tab, "sort_indices")
                           else pc.sort_indices(tab, sort_keys=[("t", "ascending"), ("s", "descending"),
                                                                ("d", "descending")]), np.int64)
        topic_s = topic[order]
        start = np.r_[True, topic_s[1:] != topic_s[:-1]]
        grp = np.cumsum(start) - 1
        first = np.flatnonzero(start)
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n) - first[grp] + 1
    order = np.lexsort((rank, topic))
    ts, rs = topic[order], rank[order]
    dup = np.flatnonzero((ts[1:] == ts[:-1]) & (rs[1:] == rs[:-1]))
    if dup.size:
        i = int(order[dup[0] + 1])
        raise err_at(i, f"duplicate rank ({int(rank[i])}) for topic {int(topic[i])} in run file "
                        f"\"{path}\"")
    start = np.r_[True, ts[1:] != ts[:-1]]
    first = np.flatnonzero(start)
    depth = np.arange(n) - first[np.cumsum(start) - 1] + 1
    if depth_m > 0:
        keep = depth <= depth_m
        order, ts = order[keep], ts[keep]
        start = np.r_[True, ts[1:] != ts[:-1]] if ts.size else np.zeros(0, bool)
        first = np.flatnonzero(start)
    d_sorted = docid.take(pa.array(order))
    rep = np.zeros(0, np.int64)
    if not checked:
        code = np.asarray(pc.dictionary_encode(d_sorted).indices, np.int64)
        key = ts * (int(code.max(initial=0)) + 1) + code
        ks = np.sort(key, kind="stable")
        rep = np.flatnonzero(ks[1:] == ks[:-1])
    if rep.size:
        pos = np.flatnonzero(key == ks[rep[0]])
        i = int(order[pos[1]])
        raise err_at(i, f"duplicate docno ({docid[i].as_py()}) for topic {int(topic[i])} in run file "
                        f"\"{path}\"")
    soff = np.r_[first, ts.size].astype(np.int64)
    return NdevalRun(runid, ts[first], soff, d_sorted)


def evaluate_ndeval_run(nq: NdevalQrels, run: NdevalRun) -> tuple[np.ndarray, np.ndarray]:
    """ndeval's values of the run's topics that the qrels have: (mask over run topics,
    values (S, 6*depth+3) of those topics)."""
    tix = nq.topic_index(np.asarray(run.topics, np.int64))
    seg_t = np.repeat(tix, np.diff(run.soff))
    rows = run.rows if run.rows is not None else join_rows(nq, seg_t, run.docids)
    have = tix >= 0
    keep_rows = np.repeat(have, np.diff(run.soff))
    lens = np.diff(run.soff)[have]
    soff = np.r_[0, np.cumsum(lens)].astype(np.int64)
    return have, ndeval_scores(nq, rows[keep_rows], soff, tix[have])


def format_value(x: float) -> str:
    """C's ``%.6f`` (``nan`` with its sign, as glibc prints it)."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return "%.6f" % x


def _risk(r: float, b: float, a: float) -> float:
    return r - b if r >= b else (a + 1) * (r - b)


def _format_rows(prefixes, vals: np.ndarray) -> list:
    """``prefix + ",".join(format_value(v) for v in row)`` per row: one %-format per row, value
    by value only in rows holding a NaN (C prints its sign)."""
    fmt = ",".join(["%.6f"] * vals.shape[1])
    nan = np.isnan(vals).any(axis=1)
    return [p + (",".join(format_value(v) for v in row) if bad else fmt % tuple(row))
            for p, row, bad in zip(prefixes, vals.tolist(), nan.tolist())]


def _text_no_baseline(lines, runstring, topics, rv, risk_alpha, actual) -> str:
    """ndeval's text without ``-baseline``: each value r printed as its risk difference against
    0 (r - 0, or (1 + a)(r - 0) when r < 0, the same IEEE operations as :func:`_risk`), the
    amean the sum over the printed topics in their order divided by ``actual``."""
    with np.errstate(all="ignore"):
        vals = np.where(rv >= 0.0, rv - 0.0, (risk_alpha + 1) * (rv - 0.0))
        tot = np.zeros(rv.shape[1])
        for row in vals:  # sequential sum, as ndeval adds topic after topic
            tot = tot + row
        means = tot / np.float64(actual)
    lines += _format_rows([f"{runstring},{int(t)}," for t in topics.tolist()], vals)
    lines += _format_rows([f"{runstring},amean,"], means[None, :])
    return "\n".join(lines) + "\n"


def ndeval_text(qrels_path, run_path, *, alpha: float = 0.5, beta: float = 0.5,
                traditional: bool = False, depth_m: int = 0, complete: bool = False,
                baseline=None, risk_alpha: float = 0.0, risk_alpha_str: str = "0",
                nq: NdevalQrels | None = None) -> str:
    """The complete standard output of ``ndeval [options] qrels run`` (v4.5). ``nq``: qrels
    already read by :func:`read_ndeval_qrels` with the same alpha and beta (reused)."""
    if nq is None:
        nq = read_ndeval_qrels(qrels_path, alpha, beta)
    cols = [column_index(c, nq.depth) for c in NDEVAL_COLUMNS]

    def table(path):
        run = read_ndeval_run(path, traditional, depth_m, nq)
        have, vals = evaluate_ndeval_run(nq, run)
        full = np.zeros((run.topics.size, len(cols)))
        full[have] = vals[:, cols]
        return run, full, int(have.sum())

    run, rv, actual = table(run_path)
    lines = ["runid,topic," + ",".join(NDEVAL_COLUMNS)]
    if baseline is None:
        runstring = run.runid
        bt, bv = np.zeros(0, np.int64), np.zeros((0, len(cols)))
    else:
        brun, bv, _ = table(baseline)
        bt = brun.topics
        runstring = f"{run.runid} (rel to. {brun.runid}; rs=1+a; a={risk_alpha_str})"
    zero_baseline = baseline is None or bt.size == 0
    if baseline is None:
        return _text_no_baseline(lines, runstring, run.topics, rv, risk_alpha,
                                 len(nq.qids) if complete else actual)
    totals = [0.0] * len(cols)
    i = j = 0
    num = 0
    rt = run.topics
    while i < rt.size or (j < bt.size and complete):
        zr, zb = i >= rt.size, (j >= bt.size) or zero_baseline
        ni, nj = i, j
        if not zr and not zb:
            if rt[i] == bt[j]:
                topic, ni, nj = rt[i], i + 1, j + 1
            elif rt[i] > bt[j]:
                zr, topic, nj = True, bt[j], j + 1
                if not complete:
                    i, j = ni, nj
                    continue
            else:
                topic, zb, ni = rt[i], True, i + 1
        elif zr:
            topic, nj = bt[j], j + 1
        else:
            topic, ni = rt[i], i + 1
        vals = [_risk(0.0 if zr else float(rv[i, c]), 0.0 if zb else float(bv[j, c]), risk_alpha)
                for c in range(len(cols))]
        lines.append(f"{runstring},{int(topic)}," + ",".join(format_value(v) for v in vals))
        totals = [a + b for a, b in zip(totals, vals)]
        i, j = ni, nj
        num += 1
    if not zero_baseline and num > actual:
        actual = num
    if complete:
        actual = len(nq.qids)
    with np.errstate(all="ignore"):
        means = [float(np.float64(t) / np.float64(actual)) for t in totals]
    lines.append(f"{runstring},amean," + ",".join(format_value(v) for v in means))
    return "\n".join(lines) + "\n"
