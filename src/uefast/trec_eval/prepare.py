"""Turn a run table and a qrels table into trec_eval's per-topic ranked relevance lists.

Semantics of trec_eval's ``form_res_rels.c``: a topic's retrieved docs are sorted by score
descending, ties broken by docno descending (``strcmp``); the rank column is ignored.  Only the
first ``-M`` docs are kept; with ``-J`` unjudged docs are then dropped.  Each doc gets its qrels
label, ``-1`` if the topic's qrels do not list it, ``-2`` if its label is negative (pooled but
unjudged).  Topics are evaluated in ``strcmp`` order of qid; topics without qrels are ignored;
qrels topics without results are skipped unless ``-c``.

No Python runs per document or per topic: Numba kernels (:mod:`uefast.io._fast`) group the run by
topic, join it to per-topic open-addressing hash tables of the qrels (docnos of up to 16 bytes
compared as two 64-bit words, longer ones byte by byte), and rank it (runs are usually already
sorted by score within a topic: that is checked, and only runs of tied scores are sorted, by docno
words then bytes).  :class:`ScannedRun` does all of it in one pass per topic straight from a run
file's bytes (:mod:`uefast.io._fused`; no Arrow columns), or feeds the same kernels from them when
that pass declines the file; a table input uses its string buffers.  Inputs with NaN scores or a
repeated docno take the general path below (NumPy ``lexsort``, exact trec_eval duplicate check).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from uefast.errors import InputError
from uefast.inputs import float64_exact, numpy_view, readonly, string_array
from uefast.io import _fast
from uefast.io._fused import scan_rank_run
from uefast.io._hash import first_duplicate, hash_keys, str_buffers
from uefast.io._scan import fast_ints
from uefast.io._topics import ranked_rel
from uefast.trec_eval.ordering import rank_order

__all__ = ["QrelsIndex", "Prepared", "ScannedRun", "prepare"]


def _col(table: pa.Table, name: str) -> pa.Array:
    if name not in table.column_names:
        raise InputError(f"missing column {name!r} (have {table.column_names})")
    arr = table[name].combine_chunks() if isinstance(table[name], pa.ChunkedArray) else table[name]
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return arr


def _as_str(arr: pa.Array) -> pa.Array:
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr.cast(pa.string())
    import pyarrow.compute as pc  # here: not imported by `uefast trec_eval` on files (start-up)

    return pc.cast(arr, pa.string())


def _intern_sorted(data, starts, ends):
    """Topic codes in byte (strcmp) order of the distinct strings ``data[starts:ends]``."""
    code0, first = _fast.intern_rows(data, starts, ends)
    uniq = [bytes(data[starts[f]:ends[f]]) for f in first]
    order = sorted(range(len(uniq)), key=uniq.__getitem__)
    remap = np.empty(len(uniq), np.int64)
    remap[np.asarray(order, np.int64)] = np.arange(len(uniq))
    return remap[code0], [uniq[k] for k in order]


#: rel_levels holds a count per (topic, label value): at most this many cells (256 MiB)
_MAX_LEVEL_CELLS = 1 << 25


@dataclass
class QrelsIndex:
    """Qrels indexed for lookups: topics in byte order (with a qid -> topic code hash table),
    rows grouped by topic with one open-addressing docno table per topic, label counts per topic.
    Build it from a table (:meth:`build`) or straight from a file (:meth:`from_file`)."""

    qids: pa.Array            # sorted unique topic ids (string)
    rel_levels: np.ndarray    # (n_topics, max_label + 1) counts of labels >= 0
    row_code: np.ndarray      # topic code per qrels row (rows grouped by topic)
    row_label: np.ndarray     # label per qrels row
    doc_data: np.ndarray      # bytes holding the docnos; row i is doc_data[doc_start[i]:doc_end[i]]
    doc_start: np.ndarray
    doc_end: np.ndarray
    table: np.ndarray         # per-topic hash tables (docno -> row, relevance code), 3 words a slot (io._fast.build_topic_tables)
    slot_start: np.ndarray    # topic t owns slots slot_start[t]:slot_start[t+1]
    t_data: np.ndarray        # topic table (qid bytes -> topic code)
    t_start: np.ndarray
    t_end: np.ndarray
    t_slots: np.ndarray
    t_keys: np.ndarray
    dup_row: np.ndarray       # per topic: a row (grouped order) repeating a judged docno, or -1
    source: str | None = None  # the qrels file, for error messages

    @cached_property
    def qid_list(self) -> list[str]:
        """``qids`` as Python strings."""
        return self.qids.to_pylist()

    @classmethod
    def _from_rows(cls, q_data, qs, qe, d_data, ds, de, label, source=None):
        q_data, d_data = readonly(q_data), readonly(d_data)
        qc, uniq = _intern_sorted(q_data, qs, qe)
        nq = len(uniq)
        if qc.size < 2 or bool((qc[1:] >= qc[:-1]).all()):
            # each topic's lines together, topics in byte order (as qrels files come): the rows
            # are grouped as they are, and the docnos stay where they are (no copy)
            row_start = np.zeros(nq + 1, np.int64)
            np.cumsum(np.bincount(qc, minlength=nq), out=row_start[1:])
            g_data, g_s, g_e, g_label, g_code = d_data, ds, de, label, qc
        else:
            perm, row_start, g_data, g_s, g_e = _fast.group_rows(qc, nq, d_data, ds, de)
            g_data = readonly(g_data)
            g_label, g_code = label[perm], qc[perm]
        # a docno judged twice is an error only in a topic that is evaluated (check_evaluated)
        table, soff, dup = _fast.build_topic_tables(row_start, g_data, g_s, g_e, g_label)
        top = max(int(label.max()), 0)
        if nq * (top + 1) > _MAX_LEVEL_CELLS:  # trec_eval too keeps a count per label value
            r = int(np.argmax(label))
            raise InputError(
                f"qrels: label {top} (topic {bytes(q_data[qs[r]:qe[r]]).decode(errors='replace')!r}, "
                f"docno {bytes(d_data[ds[r]:de[r]]).decode(errors='replace')!r}) is too large: "
                f"a count per label value and topic is kept ({nq} topics x {top + 1} values); "
                f"labels up to {_MAX_LEVEL_CELLS // nq - 1} are supported with {nq} topics")
        pos = label >= 0
        rl = np.bincount(qc[pos] * (top + 1) + label[pos], minlength=nq * (top + 1)).reshape(nq, top + 1)
        t_len = np.fromiter((len(u) for u in uniq), np.int64, nq)
        t_end = np.cumsum(t_len)
        t_start = t_end - t_len
        t_data = np.frombuffer(b"".join(uniq), np.uint8)
        t_slots, t_keys, _ = _fast.build_table(np.zeros(nq, np.int64), _fast.fnv_rows(t_data, t_start, t_end),
                                               t_data, t_start, t_end, _fast._cap(nq))
        # from the buffers: pa.array() of Python or NumPy values makes pyarrow import pandas
        # (~0.3 s of a `uefast trec_eval` call)
        qids = string_array(np.concatenate(([0], t_end)), t_data)
        qids.validate(full=True)  # UTF-8, as the decode it replaces checked
        return cls(qids, rl.astype(np.int64), g_code, g_label, g_data, g_s, g_e, table, soff,
                   t_data, t_start, t_end, t_slots, t_keys, dup, None if source is None else str(source))

    def check_evaluated(self, evaluated: np.ndarray) -> None:
        """trec_eval's ``form_res_rels.c`` refuses a docno judged twice in a topic it evaluates
        ("duplicate docs"); repeats in other topics are never looked at. ``evaluated``: a bool
        per topic. From a file, the error is :func:`uefast.io.read_qrels`'s (lines, text)."""
        bad = np.flatnonzero(evaluated & (self.dup_row >= 0))
        if bad.size == 0:
            return
        if self.source is not None:
            from uefast.io.trec import check_qrels_topics_unique

            check_qrels_topics_unique(self.source, [self.qid_list[t] for t in bad.tolist()])
        t = int(bad[0])
        r = int(self.dup_row[t])
        doc = bytes(self.doc_data[self.doc_start[r]:self.doc_end[r]]).decode(errors="replace")
        raise InputError(f"qrels: topic {self.qid_list[t]!r} judges docno {doc!r} twice "
                         f"(trec_eval: \"duplicate docs\")")

    @classmethod
    def build(cls, qrels: pa.Table, source=None) -> "QrelsIndex":
        """Index a qrels table (``qid``, ``docid``, ``label``); a docno judged twice is an error
        when its topic is evaluated (:meth:`check_evaluated`); ``source``: the file it came from."""
        qid = _as_str(_col(qrels, "qid"))
        doc = _as_str(_col(qrels, "docid"))
        label = np.asarray(numpy_view(_col(qrels, "label")), dtype=np.int64)
        if len(qid) == 0:
            raise InputError("qrels are empty")
        qo, qd = str_buffers(qid)
        do, dd = str_buffers(doc)

        return cls._from_rows(qd, qo[:-1], qo[1:], dd, do[:-1], do[1:], label, source)

    @classmethod
    def from_file(cls, path) -> "QrelsIndex":
        """Read and index a qrels file in one fused scan; anything unusual (bad line, non-ASCII
        text) goes through :func:`uefast.io.read_qrels` and its errors; a docno judged twice is
        refused only in a topic that is evaluated (:meth:`check_evaluated`)."""

        def general():
            from uefast.io import read_qrels  # (here: the table reader's import is ~0.05 s)

            return cls.build(read_qrels(path, duplicates="keep"), path)

        buf = _fast.read_bytes(path)
        ok, qs, qe, ds, de, label, slow = _fast.scan_qrels(buf)
        if not ok:
            return general()
        if slow.size:
            v = fast_ints([bytes(buf[ds_:de_]).decode() for ds_, de_ in zip(*_field_after(buf, de[slow]))])
            if v is None:
                return general()
            label = label.copy()
            label[slow] = v
        return cls._from_rows(buf, qs, qe, buf, ds, de, label, path)


def _field_after(buf, ends):
    """(starts, ends) of the field following each position in ``ends`` (slow-path numbers)."""
    return _fast.next_field(buf, np.ascontiguousarray(ends, np.int64))


@dataclass
class Prepared:
    """Ranked relevance lists of the evaluated topics, in trec_eval's topic order."""

    qids: list[str]           # evaluated topics
    rel: np.ndarray           # flat relevance values in rank order
    off: np.ndarray           # offsets into rel (len(qids) + 1)
    rel_levels: np.ndarray    # (E, L) qrels label counts per topic
    nrl: np.ndarray           # number of label levels (highest label with a doc, + 1)
    bogus: np.ndarray         # bool: topic had no results (``-c`` in trec_eval 10)
    n_qrels_topics: int
    all_num_rel: np.ndarray   # qrels lines labelled > 0 per qrels topic (the -c summary of num_rel)
    #: the first qrels topic (trec_eval's order) with no results, and how many evaluated topics
    #: precede it: trec_eval 10.0 without -c stops there (see uefast.trec_eval.unretrieved)
    first_unretrieved: tuple[str, int] | None = None


def prepare(run: pa.Table, qi: QrelsIndex, *, float32_scores: bool = False, max_docs: int | None = None,
            judged_only: bool = False, complete: bool = False, bogus_missing: bool = False,
            level: int = 1, source: str = "run", run_file=None) -> Prepared:
    """Build :class:`Prepared` for one system's run (columns ``qid``, ``docid``, ``score``).

    A docno repeated within a topic is an error (``source`` names the run in the message) where
    trec_eval's ``form_res_rels.c`` finds it: among the first ``max_docs`` documents (``-M``) of
    a topic that has qrels; elsewhere it is ranked like any row, as there.  ``run_file``: the
    run file ``run`` was read from (by :func:`uefast.io.read_run`, one row per content line),
    whose line number and text such errors then name.

    ``float32_scores`` rounds scores to float32 first (trec_eval 9.x stores ``float sim``, which
    changes tie-breaking); ``bogus_missing`` gives qrels topics absent from the run a ranking of
    one unjudged doc, as trec_eval 10 does with ``-c``.
    """
    if isinstance(run, ScannedRun):
        return run.prepare(qi, float32_scores=float32_scores, max_docs=max_docs, judged_only=judged_only,
                           complete=complete, bogus_missing=bogus_missing, level=level)
    qid = _as_str(_col(run, "qid"))
    doc = _as_str(_col(run, "docid"))
    sc = _col(run, "score")
    if pa.types.is_integer(sc.type) or pa.types.is_floating(sc.type):
        score = numpy_view(float64_exact(sc, "score", source), null_value=np.nan)  # no pandas import
    else:
        score = np.asarray(sc.to_numpy(zero_copy_only=False), dtype=np.float64)
    if float32_scores:
        score = float32_sim(score)
    qo, qd = str_buffers(qid)
    if not np.isnan(score).any():  # the fast path's kernels on the table's string buffers
        do, dd = str_buffers(doc)
        buf = readonly(np.concatenate((qd, dd)))
        score = score if score.flags.writeable else score.copy()
        qs, qe, ds, de = qo[:-1], qo[1:], do[:-1] + qd.size, do[1:] + qd.size
        dh, dw0, dw1 = _fast.dkey_rows(buf, ds, de)
        ok, first, cnt, byr = _fast.run_group(buf, qs, qe, ds, de, dh, dw0, dw1)
        if ok:  # no repeated (qid, docno): else the exact checks below
            order, counts, r, _ = _fast.run_index(
                buf, qs, qe, ds, de, dh, dw0, dw1, first, cnt, byr, score, len(qi.qids), qi.t_data, qi.t_start,
                qi.t_end, qi.t_slots, qi.t_keys, qi.table, qi.slot_start, qi.doc_data, qi.doc_start, qi.doc_end)
            return _finish(qi, ranked_rel(order, r, qi.row_label), counts, max_docs=max_docs,
                           judged_only=judged_only, complete=complete, bogus_missing=bogus_missing,
                           level=level)
    qc = _fast.topic_codes(readonly(qd), qo[:-1], qo[1:], qi.t_data, qi.t_start, qi.t_end, qi.t_slots, qi.t_keys)
    idx = np.flatnonzero(qc >= 0)  # the run's rows kept, for error messages
    if idx.size < qc.size:
        qc, score = qc[idx], score[idx]
        doc = doc.take(pa.array(idx))

    def error(r, msg, first=None):  # about kept row r (and kept row `first`)
        if run_file is None:
            return InputError(f"{source}: {msg}")
        from uefast.io.trec import run_lines

        lines = run_lines(run_file)
        if first is not None:
            msg += f", first seen at line {int(lines.lineno[idx[first]])}"
        return lines.error(int(idx[r]), msg)

    nan = np.flatnonzero(np.isnan(score))
    if nan.size:  # trec_eval's comparator is false both ways for NaN: its qsort order is undefined
        r = int(nan[0])
        raise error(r, f"score NaN (or missing) for docno {doc[r].as_py()!r} in topic "
                       f"{qi.qids[int(qc[r])].as_py()!r} ({nan.size} such rows in topics with "
                       f"qrels): trec_eval's ranking is undefined with NaN scores; fix or "
                       f"drop those lines")
    doff, ddata = str_buffers(doc)
    empty_off, empty = np.zeros(len(doc) + 1, np.int64), np.zeros(0, np.uint8)
    h = hash_keys(qc, doff, ddata, empty_off, empty)
    i, j = first_duplicate(h, qc, doff, ddata, empty_off, empty)
    order = rank_order(qc, score, doff, ddata)
    qc_s = qc[order]
    counts = np.bincount(qc_s, minlength=len(qi.qids))
    if j >= 0 and max_docs is not None:  # trec_eval: "duplicate docs" among the first -M only
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        top = np.sort(order[np.arange(qc_s.size) - starts[qc_s] < max_docs])
        so, sd = str_buffers(doc.take(pa.array(top)))
        i, j = first_duplicate(h[top], qc[top], so, sd, empty_off[:top.size + 1], empty)
        if j >= 0:
            i, j = int(top[i]), int(top[j])
    if j >= 0:
        raise error(int(j), f"docno {doc[int(j)].as_py()!r} retrieved twice for topic "
                            f"{qi.qids[int(qc[j])].as_py()!r} (trec_eval: \"duplicate docs\")", int(i))
    # relevance lookup (hash join on (topic, docno), verified bytewise)
    ds, de = doff[:-1], doff[1:]
    r = _fast.probe_topic_rows(qc, readonly(ddata), ds, de, qi.table, qi.slot_start, qi.doc_data, qi.doc_start, qi.doc_end)
    return _finish(qi, ranked_rel(order, r, qi.row_label), counts, max_docs=max_docs, judged_only=judged_only,
                   complete=complete, bogus_missing=bogus_missing, level=level)


def float32_sim(score: np.ndarray) -> np.ndarray:
    """Scores as trec_eval 9.x keeps them (``float sim``): rounded to float32, those beyond its
    range to +-inf as the C conversion gives them (without NumPy's overflow warning)."""
    with np.errstate(over="ignore"):
        return score.astype(np.float32).astype(np.float64)


def _finish(qi: QrelsIndex, rel: np.ndarray, counts: np.ndarray, *, max_docs, judged_only,
            complete, bogus_missing, level) -> Prepared:
    """Ranked rows (``rel``: relevance values in rank order, :func:`ranked_rel`; ``counts[t]``
    rows of qrels topic t, topics in code order) -> :class:`Prepared`."""
    nq = len(qi.qids)
    qc_s = np.repeat(np.arange(nq, dtype=np.int64), counts) if (max_docs is not None or judged_only or
                                                                bogus_missing) else None
    sel = None
    if max_docs is not None:
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        rank_in_q = np.arange(qc_s.size) - starts[qc_s]
        sel = rank_in_q < max_docs
    if judged_only:
        sel = rel >= 0 if sel is None else sel & (rel >= 0)
    has_results = counts > 0
    evaluated = has_results | complete if bogus_missing else has_results
    qi.check_evaluated(evaluated)
    rel_k, qc_k = (rel, qc_s) if sel is None else (rel[sel], qc_s[sel])
    bog = evaluated & ~has_results
    # trec_eval 10's bogus ranking is one unjudged doc, which -J throws out like any other
    if bog.any() and not judged_only:
        bq = np.flatnonzero(bog)
        qc_k = np.concatenate((qc_k, bq))
        rel_k = np.concatenate((rel_k, np.full(bq.size, -1, np.int64)))
        o = np.argsort(qc_k, kind="stable")
        qc_k, rel_k = qc_k[o], rel_k[o]
    ev = np.flatnonzero(evaluated)
    n_per = (np.bincount(qc_k, minlength=nq) if sel is not None or bog.any() else counts)[ev]
    off = np.zeros(ev.size + 1, np.int64)
    np.cumsum(n_per, out=off[1:])
    rl = qi.rel_levels
    nz = rl > 0
    nrl_all = np.where(nz.any(axis=1), rl.shape[1] - np.argmax(nz[:, ::-1], axis=1), 0)
    # trec_eval's -c summary of num_rel (m_num_rel.c, te_calc_avg_num_rel, 9.0.8 and 10.0) counts
    # the qrels lines with rel > 0 of every topic, whatever -l, -M or -J say
    all_num_rel = rl[:, 1:].sum(axis=1)
    miss = np.flatnonzero(~has_results)
    first_unretrieved = None
    if miss.size:
        t = int(miss[0])
        first_unretrieved = (bytes(qi.t_data[qi.t_start[t]:qi.t_end[t]]).decode(), int(evaluated[:t].sum()))
    return Prepared(
        first_unretrieved=first_unretrieved,
        qids=[qi.qid_list[i] for i in ev.tolist()],
        rel=np.ascontiguousarray(rel_k, dtype=np.int64),
        off=off,
        rel_levels=np.ascontiguousarray(rl[ev]),
        nrl=nrl_all[ev].astype(np.int64),
        bogus=bog[ev],
        n_qrels_topics=nq,
        all_num_rel=all_num_rel,
    )


class ScannedRun:
    """A run file read for the fused fast path.

    :meth:`read` only reads (and decompresses) the file; :meth:`prepare` then scans, joins and
    ranks it in one pass per topic (:func:`uefast.io._fused.scan_rank_run`) and falls back to the
    staged scan when that pass declines the file. :meth:`scan` runs the staged scan at once: byte
    offsets of qid and docno, docno hashes, scores, rows grouped by qid (repeated docnos checked).
    When the file needs the general reader (odd lines, non-ASCII text, NaN scores or numbers
    Arrow refuses, a repeated docno), ``table`` holds what :func:`uefast.io.read_run` makes of it
    instead, and the staged scan raises exactly that reader's errors.
    """

    def __init__(self, path, extra_columns):
        self.path = path
        self.extra_columns = extra_columns
        self.table: pa.Table | None = None
        self.buf: np.ndarray | None = None
        self.qs: np.ndarray | None = None  # set by the staged scan
        self._rows: int | None = None      # content lines, once a pass has counted them
        self.runid: str | None = None

    @classmethod
    def read(cls, path, *, extra_columns: str = "ignore") -> "ScannedRun":
        """Read (and decompress) the file; scanning waits for :meth:`prepare`, which knows the
        qrels and the score precision."""
        self = cls(path, extra_columns)
        self.buf = _fast.read_bytes(path)
        return self

    @classmethod
    def scan(cls, path, *, extra_columns: str = "ignore") -> "ScannedRun":
        """Read the file and run the staged scan now (its errors raised here)."""
        self = cls.read(path, extra_columns=extra_columns)
        self._scan()
        return self

    def _scan(self) -> None:
        buf = self.buf
        ok, qs, qe, ds, de, dh, dw0, dw1, bits, slow_s, _, rs, re_, _, _, _ = _fast.scan_run(
            buf, self.extra_columns != "ignore", full=False)
        score = bits.view(np.float64)
        if ok and slow_s.size:  # the rank field is never read: trec_eval ignores it
            ok = self._slow_numbers(buf, de, score, slow_s)
        if ok and np.isnan(score).any():
            ok = False
        if ok:  # group rows by qid; a repeated (qid, docno) -> the general reader's error
            ok, self.first, self.cnt, self.byr = _fast.run_group(buf, qs, qe, ds, de, dh, dw0, dw1)
        if not ok:
            self._general()
            return
        self.qs, self.qe, self.ds, self.de, self.score = qs, qe, ds, de, score
        self.dh, self.dw0, self.dw1 = dh, dw0, dw1
        self.runid = bytes(buf[rs:re_]).decode("ascii")

    def _general(self) -> "ScannedRun":
        from uefast.io import read_run

        # a repeated docno is judged by prepare(), as trec_eval does: among the first -M
        # documents of the topics it evaluates only
        self.table = read_run(self.path, extra_columns=self.extra_columns, ranks="ignore", duplicates="keep")
        return self

    @staticmethod
    def _slow_numbers(buf, de, score, slow_s) -> bool:
        """Scores the fused parser leaves to Arrow (as the general reader parses them)."""
        import pyarrow.compute as pc

        try:
            s, e = _fast.next_field(buf, de[slow_s])
            s, e = _fast.next_field(buf, e)
            v = pc.cast(pa.array([bytes(buf[a:b]).decode() for a, b in zip(s, e)], pa.string()), pa.float64())
            score[slow_s] = v.to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return False
        return True

    def check(self) -> None:
        """Raise the errors :meth:`scan` would raise for this file (the one-pass scan of
        :meth:`prepare` only meets them when it falls back): used to report a bad run file before
        errors found later, in the order of a scan on reading."""
        if not self._staged():
            self._scan()

    def _staged(self) -> bool:
        """Whether the staged scan (or the general reader) has run."""
        return self.table is not None or self.qs is not None

    @property
    def num_rows(self) -> int:
        if self.table is not None:
            return self.table.num_rows
        if self.qs is not None:
            return self.qs.size
        if self._rows is None:
            self._scan()
            return self.num_rows
        return self._rows

    def prepare(self, qi: QrelsIndex, *, float32_scores=False, max_docs=None, judged_only=False, complete=False,
                bogus_missing=False, level=1) -> Prepared:
        kw = dict(max_docs=max_docs, judged_only=judged_only, complete=complete, bogus_missing=bogus_missing,
                  level=level)
        # the one-pass scan loads 8-byte little-endian words, as the word scanner does
        if (not self._staged() and self.extra_columns == "ignore" and _fast._LITTLE_ENDIAN
                and self.buf.flags.c_contiguous):
            ok, rel, counts, rows, rs, re_, _ = scan_rank_run(
                self.buf, float32_scores, _fast._POW5, qi.t_data, qi.t_start, qi.t_end, qi.t_slots, qi.t_keys,
                qi.table, qi.slot_start, qi.doc_data, qi.doc_start, qi.doc_end, qi.row_label)
            if ok:
                self._rows = rows
                self.runid = bytes(self.buf[rs:re_]).decode("ascii")
                return _finish(qi, rel, counts, **kw)
        if not self._staged():
            self._scan()
        if self.table is not None:
            return prepare(self.table, qi, float32_scores=float32_scores, source=str(self.path),
                           run_file=self.path, **kw)
        score = float32_sim(self.score) if float32_scores else self.score
        order, counts, r, _ = _fast.run_index(
            self.buf, self.qs, self.qe, self.ds, self.de, self.dh, self.dw0, self.dw1, self.first, self.cnt,
            self.byr, score, len(qi.qids), qi.t_data, qi.t_start, qi.t_end, qi.t_slots, qi.t_keys, qi.table,
            qi.slot_start, qi.doc_data, qi.doc_start, qi.doc_end)
        return _finish(qi, ranked_rel(order, r, qi.row_label), counts, **kw)
