"""Turn a run table and a qrels table into trec_eval's per-topic ranked relevance lists.

Semantics of trec_eval's ``form_res_rels.c``: a topic's retrieved docs are sorted by score
descending, ties broken by docno descending (``strcmp``); the rank column is ignored.  Only the
first ``-M`` docs are kept; with ``-J`` unjudged docs are then dropped.  Each doc gets its qrels
label, ``-1`` if the topic's qrels do not list it, ``-2`` if its label is negative (pooled but
unjudged).  Topics are evaluated in ``strcmp`` order of qid; topics without qrels are ignored;
qrels topics without results are skipped unless ``-c``.  Everything is vectorised (NumPy sorts and
``searchsorted``); no Python runs per document or per topic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.io._hash import first_duplicate, hash_keys, lookup, str_buffers
from uefast.trec_eval.ordering import rank_order

__all__ = ["QrelsIndex", "Prepared", "prepare"]


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
    return pc.cast(arr, pa.string())


@dataclass
class QrelsIndex:
    """Qrels sorted for lookups: topics in byte order, (topic, doc) keys sorted, label counts."""

    qids: pa.Array            # sorted unique topic ids (string)
    docs: pa.Array            # unique docids of the qrels (string)
    keys: np.ndarray          # sorted qcode * n_docs + dcode
    labels: np.ndarray        # labels aligned with keys
    rel_levels: np.ndarray    # (n_topics, max_label + 1) counts of labels >= 0
    h_sorted: np.ndarray = None   # hash(qcode, docid) of qrels rows, sorted
    h_order: np.ndarray = None
    row_code: np.ndarray = None   # qcode per qrels row
    doc_off: np.ndarray = None
    doc_data: np.ndarray = None
    row_label: np.ndarray = None

    @classmethod
    def build(cls, qrels: pa.Table) -> "QrelsIndex":
        """Index a qrels table (``qid``, ``docid``, ``label``); duplicate judgments raise."""
        qid = _as_str(_col(qrels, "qid"))
        doc = _as_str(_col(qrels, "docid"))
        label = np.asarray(_col(qrels, "label").to_numpy(zero_copy_only=False), dtype=np.int64)
        if len(qid) == 0:
            raise InputError("qrels are empty")
        uq = pc.unique(qid)
        qids = uq.take(pc.sort_indices(uq))
        docs = pc.unique(doc)
        qc = pc.index_in(qid, value_set=qids).to_numpy(zero_copy_only=False).astype(np.int64)
        dc = pc.index_in(doc, value_set=docs).to_numpy(zero_copy_only=False).astype(np.int64)
        key = qc * len(docs) + dc
        order = np.argsort(key, kind="stable")
        keys = key[order]
        dup = np.flatnonzero(keys[1:] == keys[:-1])
        if dup.size:
            r = int(order[dup[0] + 1])
            raise InputError(f"qrels: topic {qid[r].as_py()!r} judges docno {doc[r].as_py()!r} twice")
        lab = label[order]
        top = max(int(label.max()), 0)
        rl = np.zeros((len(qids), top + 1), np.int64)
        pos = lab >= 0
        np.add.at(rl, (qc[order][pos], lab[pos]), 1)
        off, data = str_buffers(doc)
        h = hash_keys(qc, off, data, np.zeros(len(doc) + 1, np.int64), np.zeros(0, np.uint8))
        ho = np.argsort(h, kind="stable")
        return cls(qids, docs, keys, lab, rl, h[ho], ho.astype(np.int64), qc, off, data, label)


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
    all_num_rel: np.ndarray   # num_rel of every qrels topic (for -c sums)


def prepare(run: pa.Table, qi: QrelsIndex, *, float32_scores: bool = False, max_docs: int | None = None,
            judged_only: bool = False, complete: bool = False, bogus_missing: bool = False,
            level: int = 1) -> Prepared:
    """Build :class:`Prepared` for one system's run (columns ``qid``, ``docid``, ``score``).

    ``float32_scores`` rounds scores to float32 first (trec_eval 9.x stores ``float sim``, which
    changes tie-breaking); ``bogus_missing`` gives qrels topics absent from the run a ranking of
    one unjudged doc, as trec_eval 10 does with ``-c``.
    """
    qid = _as_str(_col(run, "qid"))
    doc = _as_str(_col(run, "docid"))
    score = np.asarray(_col(run, "score").to_numpy(zero_copy_only=False), dtype=np.float64)
    if float32_scores:
        score = score.astype(np.float32).astype(np.float64)
    qc = pc.index_in(qid, value_set=qi.qids).to_numpy(zero_copy_only=False)
    keep = ~np.isnan(qc)
    nq = len(qi.qids)
    if not keep.all():
        idx = np.flatnonzero(keep)
        qc, score = qc[idx], score[idx]
        doc = doc.take(pa.array(idx))
    qc = qc.astype(np.int64)
    doff, ddata = str_buffers(doc)
    empty_off, empty = np.zeros(len(doc) + 1, np.int64), np.zeros(0, np.uint8)
    h = hash_keys(qc, doff, ddata, empty_off, empty)
    i, j = first_duplicate(h, qc, doff, ddata, empty_off, empty)
    order = rank_order(qc, score, doff, ddata)
    qc_s = qc[order]
    counts = np.bincount(qc_s, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank_in_q = np.arange(qc_s.size) - starts[qc_s]
    if j >= 0:  # trec_eval: "duplicate docs" (checked among the first -M docs only)
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        lim = max_docs if max_docs is not None else np.iinfo(np.int64).max
        if rank_in_q[inv[i]] < lim and rank_in_q[inv[j]] < lim:
            raise InputError(f"run: docno {doc[int(j)].as_py()!r} retrieved twice for topic "
                             f"{qi.qids[int(qc[j])].as_py()!r}")
    # relevance lookup (hash join on (topic, docno), verified bytewise)
    r = lookup(h, qc, doff, ddata, qi.h_sorted, qi.h_order, qi.row_code, qi.doc_off, qi.doc_data)[order]
    rel = np.where(r >= 0, qi.row_label[np.maximum(r, 0)], -1)
    rel = np.where((r >= 0) & (rel < 0), -2, rel)
    sel = np.ones(qc_s.size, bool)
    if max_docs is not None:
        sel &= rank_in_q < max_docs
    if judged_only:
        sel &= rel >= 0
    has_results = counts > 0
    evaluated = has_results | complete if bogus_missing else has_results
    rel_k, qc_k = rel[sel], qc_s[sel]
    bog = evaluated & ~has_results
    if bog.any():
        bq = np.flatnonzero(bog)
        qc_k = np.concatenate((qc_k, bq))
        rel_k = np.concatenate((rel_k, np.full(bq.size, -1, np.int64)))
        o = np.argsort(qc_k, kind="stable")
        qc_k, rel_k = qc_k[o], rel_k[o]
    ev = np.flatnonzero(evaluated)
    n_per = np.bincount(qc_k, minlength=nq)[ev]
    off = np.concatenate(([0], np.cumsum(n_per))).astype(np.int64)
    rl = qi.rel_levels
    nz = rl > 0
    nrl_all = np.where(nz.any(axis=1), rl.shape[1] - np.argmax(nz[:, ::-1], axis=1), 0)
    lv = max(level, 0)
    all_num_rel = rl[:, lv:].sum(axis=1) if lv < rl.shape[1] else np.zeros(nq, np.int64)
    return Prepared(
        qids=qi.qids.take(pa.array(ev)).to_pylist(),
        rel=np.ascontiguousarray(rel_k, dtype=np.int64),
        off=off,
        rel_levels=np.ascontiguousarray(rl[ev]),
        nrl=nrl_all[ev].astype(np.int64),
        bogus=bog[ev],
        n_qrels_topics=nq,
        all_num_rel=all_num_rel,
    )
