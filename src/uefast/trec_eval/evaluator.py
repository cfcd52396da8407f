"""trec_eval-compatible evaluation of one run: per-topic values and the summary, per measure.

:func:`evaluate_trec` is the Python entry point behind ``uefast trec_eval``.  It reproduces
trec_eval 10.0 (default) or 9.0.8 (``version="9.0.8"``: float32 scores, ``(long)(x + 0.9)``
recall cutoffs for iprec_at_recall / 11pt_avg, no unj/rbp/rbp_resid/dcg/ideal_dcg, ``-c``
topics without results not printed) value for value.  Summary = sum over evaluated topics in topic order,
divided by the number of topics (``-c``: number of qrels topics); gm_map / gm_bpref are
exp(mean log(max(x, 1e-5))); num_* are sums.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.io._fast import usable_cpus
from uefast.trec_eval import kernels_basic as kb
from uefast.trec_eval import kernels_cut as kc
from uefast.trec_eval import unretrieved
from uefast.trec_eval import kernels_gain as kg
from uefast.trec_eval.prepare import Prepared, QrelsIndex, ScannedRun, prepare
from uefast.trec_eval.registry import Selected, c_trunc, select_measures
from uefast.trec_eval.schedule import read_ahead_map

__all__ = ["Slot", "TrecEvalResult", "evaluate_trec", "evaluate_trec_files", "VERSIONS"]

VERSIONS = ("10.0", "9.0.8")


@dataclass
class Slot:
    """One printed value name: per-topic values (None: not printed per topic) and summary."""

    name: str
    measure: str
    fmt: str                       # "float" | "long" | "str"
    per_query: object              # np.ndarray or list[str] or None
    summary: object                # float | int | str | None


@dataclass
class TrecEvalResult:
    """Result of :func:`evaluate_trec`; format with :mod:`uefast.trec_eval.output`."""

    runid: str
    qids: list[str]
    slots: list[Slot]
    prepared: Prepared


def _seq_sum(x: np.ndarray) -> float:
    """Left-to-right double sum (as trec_eval's accumulation), not NumPy's pairwise sum."""
    return float(np.cumsum(x, dtype=np.float64)[-1]) if len(x) else 0.0


def evaluate_trec(run: pa.Table | ScannedRun | str | os.PathLike, qrels: pa.Table | QrelsIndex | str | os.PathLike,
                  measures: list[str] | None = None, *,
                  version: str = "10.0", relevance_level: int = 1, complete: bool = False,
                  max_docs: int | None = None, judged_only: bool = False, num_docs_in_coll: int = 0,
                  runid: str | None = None) -> TrecEvalResult:
    """Evaluate one system's run exactly as trec_eval does.

    Parameters mirror trec_eval's options: ``measures`` (``-m`` arguments, default
    ``["official"]``), ``relevance_level`` (``-l``), ``complete`` (``-c``), ``max_docs`` (``-M``),
    ``judged_only`` (``-J``), ``num_docs_in_coll`` (``-N``).  ``run`` needs ``qid``, ``docid``,
    ``score``; ``qrels`` ``qid``, ``docid``, ``label`` (or a prebuilt :class:`QrelsIndex`).
    ``runid`` defaults to the run's last ``system`` value (trec_eval prints the last line's runid).

    ``run`` / ``qrels`` may also be file paths (plain, gzip, bzip2 or xz): they are then read by the fused
    fast path (:meth:`ScannedRun.read`, whose :meth:`~ScannedRun.prepare` scans, joins and ranks
    the run in one pass per topic; :meth:`QrelsIndex.from_file`; run lines with more than six
    fields are accepted and the rank field is not read, as in trec_eval), with the same errors as
    :func:`uefast.io.read_run` (``ranks="ignore"``) / :func:`uefast.io.read_qrels`.
    """
    if isinstance(qrels, (str, os.PathLike)):
        qrels = QrelsIndex.from_file(qrels)
    if isinstance(run, (str, os.PathLike)):
        run = ScannedRun.read(run)
    try:
        if version not in VERSIONS:
            raise InputError(f"trec_eval version must be one of {VERSIONS}, got {version!r}")
        sel = select_measures(list(measures or []), version)
        qi = qrels if isinstance(qrels, QrelsIndex) else QrelsIndex.build(qrels)
    except Exception:
        if isinstance(run, ScannedRun):  # a bad run file is reported first, as when scanned on reading
            run.check()
        raise
    v10 = version == "10.0"
    prep = prepare(run, qi, float32_scores=not v10, max_docs=max_docs, judged_only=judged_only,
                   complete=complete, bogus_missing=complete and v10, level=relevance_level)
    if len(prep.qids) == 0:  # trec_eval's words and exit status; the run named where there is a file
        where = f"{run.path}" if isinstance(run, ScannedRun) else "the run"
        err = InputError(f"{where}: no topics with both results and relevance info")
        err.exit_status = 7  # trec_eval.c: "No queries with both results and relevance info"
        if v10 and not complete and prep.first_unretrieved is not None:  # 10.0 stops before
            err = InputError(f"{err}; {unretrieved.message(prep.first_unretrieved[0], where)}")
            err.exit_status = unretrieved.EXIT_STATUS
        raise err
    if runid is None:
        if isinstance(run, ScannedRun) and run.table is None:
            runid = run.runid
        else:
            t = run.table if isinstance(run, ScannedRun) else run
            runid = str(t["system"][-1]) if "system" in t.column_names and t.num_rows else "run"
    return TrecEvalResult(runid, prep.qids, _compute(sel, prep, version, relevance_level, complete,
                                                     num_docs_in_coll, runid), prep)


def evaluate_trec_files(qrels: QrelsIndex | pa.Table | str | os.PathLike,
                        runs: Sequence[str | os.PathLike], measures: list[str] | None = None, *,
                        workers: int | None = None, **options) -> list[TrecEvalResult]:
    """:func:`evaluate_trec` for several run files against one qrels, files processed in
    parallel threads (gunzip, the fused scan, the join and the sort release the GIL).

    Scheduling (:func:`uefast.trec_eval.schedule.read_ahead_map`): one worker indexes the qrels
    file while the others read and decompress the first runs (the one-pass scan of a run needs
    the qrels index), then every worker evaluates the runs it has read and goes on with the next;
    the largest files go first, so that the round does not end with one worker on a large file
    while the others idle.

    ``workers`` defaults to the number of usable CPUs; ``options`` are those of
    :func:`evaluate_trec`.  Results come in the order of ``runs``; a qrels error is raised
    first, else the error of the first failing run file in that order.
    """
    def index():
        if isinstance(qrels, QrelsIndex):
            return qrels
        if isinstance(qrels, (str, os.PathLike)):
            return QrelsIndex.from_file(qrels)
        return QrelsIndex.build(qrels)

    if workers is None:
        workers = usable_cpus()
    runs = list(runs)
    return read_ahead_map(index, ScannedRun.read, lambda scanned, qi: evaluate_trec(scanned, qi, measures, **options),
                          runs, workers, order=sorted(range(len(runs)), key=lambda i: -_file_size(runs[i])))


def _file_size(path) -> int:
    """Bytes on disk (0 if unknown: reading the file then reports the error)."""
    try:
        return os.stat(path).st_size
    except (OSError, TypeError, ValueError):
        return 0


def _compute(sel: list[Selected], p: Prepared, version: str, level: int, complete: bool,
             n_coll: int, runid: str) -> list[Slot]:
    v10 = version == "10.0"
    rel, off = p.rel, p.off
    e = len(p.qids)
    den = p.n_qrels_topics if complete else e
    cnt = kb.counts(rel, off, level)
    num_ret, num_rel_ret, nonpool, unjudged = cnt[:, 0], cnt[:, 1], cnt[:, 2], cnt[:, 3]
    lv = max(level, 0)
    rl = p.rel_levels
    num_rel = rl[:, lv:].sum(axis=1) if lv < rl.shape[1] else np.zeros(e, np.int64)
    num_nonrel = rl[:, :min(lv, rl.shape[1])].sum(axis=1)
    bogus = p.bogus
    slots: list[Slot] = []
    cache: dict = {}

    def mean_slot(name, measure, vals):
        vals = np.asarray(vals, dtype=np.float64)
        slots.append(Slot(name, measure, "float", vals, _seq_sum(vals) / den if den else 0.0))

    def mean_slots(names, measure, vals):
        """mean_slot of each column of ``vals`` (topics x columns): the same left-to-right sums,
        in one accumulate (np.cumsum adds along the topics one after the other)."""
        vals = np.asarray(vals, dtype=np.float64)
        sums = np.cumsum(vals, axis=0)[-1].tolist() if len(vals) else [0.0] * vals.shape[1]
        for j, name in enumerate(names):
            slots.append(Slot(name, measure, "float", vals[:, j], sums[j] / den if den else 0.0))

    def gm_slot(name, measure, logs):
        s = _seq_sum(logs) + (den - e) * np.log(kb.MIN_GEO_MEAN)
        slots.append(Slot(name, measure, "float", None, float(np.exp(s / den))))

    def gains(s: Selected):
        return kg.gain_tables(s.pairs, p.nrl)

    for s in sel:
        m = s.spec.name
        k = s.spec.kind
        if m == "runid":
            slots.append(Slot("runid", m, "str", None, runid))
        elif m == "num_q":
            slots.append(Slot("num_q", m, "long", None, p.n_qrels_topics if complete else e))
        elif m == "num_ret":
            nr = np.where(bogus, 0, num_ret)
            slots.append(Slot(m, m, "long", nr, int(nr.sum())))
        elif m == "num_rel":
            slots.append(Slot(m, m, "long", num_rel, int(p.all_num_rel.sum()) if complete else int(num_rel.sum())))
        elif m == "num_rel_ret":
            slots.append(Slot(m, m, "long", num_rel_ret, int(num_rel_ret.sum())))
        elif m == "num_nonrel_judged_ret":
            v = num_ret - nonpool - unjudged - num_rel_ret
            slots.append(Slot(m, m, "long", v, int(v.sum())))
        elif m in ("map", "gm_map"):
            if "map" not in cache:
                cache["map"] = kb.map_ap(rel, off, num_rel, level)
            ap, gm = cache["map"]
            mean_slot(m, m, ap) if m == "map" else gm_slot(m, m, gm)
        elif m in ("bpref", "gm_bpref"):
            if "bpref" not in cache:
                cache["bpref"] = kb.bpref(rel, off, num_rel, num_nonrel, level)
            b, gm = cache["bpref"]
            mean_slot(m, m, b) if m == "bpref" else gm_slot(m, m, gm)
        elif m == "Rprec":
            mean_slot(m, m, kb.rprec(rel, off, num_rel, level))
        elif m == "recip_rank":
            mean_slot(m, m, kb.recip_rank(rel, off, level))
        elif m == "infAP":
            mean_slot(m, m, kb.infap(rel, off, num_rel, level))
        elif m == "binG":
            mean_slot(m, m, kb.bing(rel, off, num_rel, level))
        elif m == "rbp_resid":
            mean_slot(m, m, np.where(bogus, 0.0, kb.rbp_resid(rel, off, 0.9)))
        elif m.startswith("set_"):
            beta = s.params[0] if m == "set_F" else 1.0
            vals = kb.set_measures(num_ret, num_rel, num_rel_ret, float(beta))
            col = {"set_P": 0, "set_relative_P": 1, "set_recall": 2, "set_map": 3, "set_F": 4}[m]
            mean_slot(s.names[0], m, vals[:, col])
        elif m == "utility":
            u = kb.utility(num_ret, num_rel, num_rel_ret, s.params, n_coll)
            mean_slot(s.names[0], m, np.where(bogus, 0.0, u))
        elif m == "relstring":
            n = c_trunc(s.params[0])  # m_relstring.c: (long) params[0]
            strs = []
            for q in range(e):
                if bogus[q]:
                    strs.append("")
                    continue
                seg = rel[off[q]:off[q] + max(min(n, off[q + 1] - off[q]), 0)]
                strs.append("".join(">" if r > 9 else chr(48 + r) if r >= 0 else "-" if r == -1 else "." for r in seg))
            slots.append(Slot(s.names[0], m, "str", strs, None))
        elif k == "cut_long":
            cuts = np.asarray(s.params, np.int64)
            if m == "ndcg_cut":
                vals = kc.ndcg_cut(rel, off, rl, p.nrl, cuts)
            else:
                kind = {"P": kc.CUT_P, "recall": kc.CUT_RECALL, "map_cut": kc.CUT_MAP, "success": kc.CUT_SUCCESS,
                        "relative_P": kc.CUT_RELATIVE_P, "unj": kc.CUT_UNJ}[m]
                vals = kc.cut_family(rel, off, num_rel, level, cuts, kind)
                if m == "unj":
                    vals[bogus] = 0.0
            mean_slots(s.names, m, vals)
        elif m == "iprec_at_recall":
            mean_slots(s.names, m, kc.iprec_at_recall(rel, off, num_rel, level, np.asarray(s.params, np.float64), v10))
        elif m == "11pt_avg":
            if len(s.params) == 0:
                raise InputError("11pt_avg: no cutoff values")
            vals = kc.iprec_at_recall(rel, off, num_rel, level, np.asarray(s.params, np.float64), v10)
            tot = np.zeros(e)
            for j in range(vals.shape[1]):  # same order as m_11pt_avg.c's sum (highest cutoff first)
                tot += vals[:, vals.shape[1] - 1 - j]
            mean_slot(s.names[0], m, tot / float(len(s.params)))
        elif m == "Rprec_mult":
            mean_slots(s.names, m, kc.rprec_mult(rel, off, num_rel, level, np.asarray(s.params, np.float64)))
        elif m in ("ndcg", "dcg", "ideal_dcg"):
            d = kg.ndcg(rel, off, rl, p.nrl, *gains(s))
            if m == "ndcg":
                v = np.where(d[:, 1] > 0.0, d[:, 0] / np.where(d[:, 1] > 0, d[:, 1], 1.0), 0.0)
            else:
                v = d[:, 0] if m == "dcg" else d[:, 1]
            mean_slot(s.names[0], m, v)
        elif m == "ndcg_rel":
            mean_slot(s.names[0], m, kg.ndcg_rel(rel, off, rl, p.nrl, *gains(s)))
        elif m == "Rndcg":
            mean_slot(s.names[0], m, kg.rndcg(rel, off, rl, p.nrl, num_rel, *gains(s)))
        elif m == "G":
            mean_slot(s.names[0], m, kg.g_measure(rel, off, rl, p.nrl, *gains(s)))
        elif m == "rbp":
            pp = 0.9
            for name, val in s.pairs:
                if name == "p":
                    pp = val
            mean_slot(s.names[0], m, kg.rbp(rel, off, rl, p.nrl, float(pp), *gains(s)))
        else:  # pragma: no cover - registry and this switch are kept in sync by tests
            raise InputError(f"measure {m!r} is not implemented")
    return slots
