"""``uefast.evaluate``: per-query measures with IUB, REB and UE scores, as a long Arrow table."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
import pyarrow as pa

from uefast.engine import (
    KERNEL_LOCK,
    Grouping,
    docid_ranks,
    group_codes,
    group_keys,
    judged_stats,
    plan_measures,
    rank_values,
    rank_values_many,
)
from uefast.errors import InputError, RowError
from uefast.inputs import (
    DocIds,
    check_same_kind,
    column,
    docids,
    kernel_array,
    label_array,
    numeric_array,
    numpy_view,
    readonly,
    score_array,
    score_nan_error,
    text_array,
    to_arrow,
)
from uefast.kernels.driver import n_chunks
from uefast.kernels.join import pair_table, probe_pairs
from uefast.kernels.ordering import DOC_INT
from uefast.measures import Measure
from uefast.options import BACKENDS, NEGATIVE, QUERIES, REB, TIES, EvalOptions, check_choice
from uefast.universe import retrieved_reb
from uefast import tbg_lengths as tbgl
from uefast._tables import check_trec_score_columns, qrels_docids
from uefast._tables import letor_score_columns as _letor_score_columns
from uefast._output import _build_table, _Result

__all__ = ["evaluate", "aggregate", "OUTPUT_SCHEMA"]

OUTPUT_COLUMNS = ("system", "qid", "measure", "value", "iub", "reb", "ue_v1", "ue_v2",
                  "n_docs", "n_judged", "n_rel")
OUTPUT_SCHEMA = "data_schemas/evaluate_output.md"
# the option choices, declared once (uefast.options); the old names kept for importers
_TIES, _REB, _QUERIES, _NEGATIVE, _BACKENDS = TIES, REB, QUERIES, NEGATIVE, BACKENDS


_check_choice = check_choice


def evaluate(
    run: Any,
    qrels: Any = None,
    measures: str | Measure | Iterable[str | Measure] = ("nDCG@10", "AP"),
    *,
    ue: bool = True,
    ties: str = "trec_eval",
    reb: str = "exact",
    degenerate: str = "zero",
    rel_level: int = 1,
    queries: str = "intersect",
    negative_labels: str = "clamp",
    score_columns: Sequence[str] | None = None,
    qid: str = "qid",
    docid: str = "docid",
    label: str = "label",
    score: str = "score",
    system: str = "system",
    backend: str = "cpu",
    reb_universe: str = "judged",
    collection_size: int | None = None,
) -> pa.Table:
    """Evaluate every system on every query for every measure, with IUB, REB and UE V1/V2.

    Parameters
    ----------
    run
        LETOR style (``qrels=None``): every candidate judged; columns ``qid``, ``label``, optional
        ``docid`` and either score columns (``score_columns``, default: every floating-point
        column that is not a key or the label), or a ``system`` column with one score column
        (``score``, or the one named in ``score_columns``). TREC style (``qrels`` given):
        columns ``qid``, ``docid``, ``score``, optional ``system``.
        Any of: pyarrow Table / RecordBatchReader, polars DataFrame / LazyFrame, pandas DataFrame,
        Parquet path, dict of columns. A RecordBatchReader, an iterator of record batches, a
        ``pyarrow.dataset`` or a Parquet path larger than 1 GiB is *streamed* query by query with
        bounded memory (:func:`uefast.streaming.evaluate_stream`; rows must be clustered by qid);
        with ``queries="qrels"`` it is read whole into memory instead.
    qrels
        ``qid``, ``docid``, ``label``. Retrieved-but-unjudged documents count as label 0; relevant
        documents that were not retrieved still count in Np and in the ideal ranking (trec_eval).
    measures
        Measure strings (see :mod:`uefast.measures`), e.g. ``["nDCG@10", "AP", "P(rel=2)@10"]``.
    ue
        Compute ``ue_v1``/``ue_v2`` (SPEC_math §4). With ``False`` those columns are null.
    ties
        ``"trec_eval"``: score descending, then docid descending by bytes (input order without a
        docid column); ``"input"``: input order; ``"expected"``: the tie-aware expectation over
        all orders of tied documents (McSherry & Najork 2008, SPEC_math §5).
    reb
        ``"exact"``: exact expectation under a uniformly random order of the judged documents;
        ``"paper"``: the paper's formulas (DCG summed to k, E[SP@k] = k p^2) where it has them.
    reb_universe
        The random ranking REB is the expectation over (:mod:`uefast.universe`): ``"judged"``
        (a random order of the query's judged documents; on pooled TREC qrels a strong
        baseline), ``"retrieved"`` (a random order of each run's own retrieved documents,
        unjudged = 0), ``"collection"`` (a random order of ``collection_size`` documents, the
        unjudged ones non-relevant; closed-form measures only). Recorded in the metadata.
    collection_size
        N for ``reb_universe="collection"``.
    degenerate
        UE scores of queries with IUB == REB: ``"zero"`` (spec), ``"nan"``, or ``"drop"`` (rows
        removed and listed in the metadata key ``uefast.dropped``, also with ``ue=False``).
    rel_level
        Default relevance threshold of binary measures (label >= rel_level), as trec_eval ``-l``.
    queries
        TREC style: ``"intersect"`` evaluates, per system, the queries present in both run and
        qrels (trec_eval's default); ``"qrels"`` evaluates every qrels query, a system that
        retrieved nothing for it scoring 0 (trec_eval ``-c``). Run rows of queries absent from the
        qrels are not evaluated; their count is in the metadata (``uefast.info``).
    negative_labels
        ``"clamp"``: labels < 0 count as 0 (judged non-relevant, trec_eval's reading);
        ``"error"``: reject them.
    backend
        ``"cpu"`` (default): the Numba CPU engine. ``"cuda"``: rank and score every segment on an
        NVIDIA GPU (:mod:`uefast.gpu`; needs the ``gpu`` extra) with the same measure routines
        (the sort kernels; ``UEFAST_CUDA_KERNEL=counting`` ranks by counting, one thread block per
        (system, query)); the grouping of unclustered rows and the judged pass (IUB, REB) run on
        the GPU too, several score columns pipelined. Same values. ``"auto"``: ``"cuda"``
        where CuPy, a GPU and at least :data:`uefast.gpu.memory.AUTO_MIN_ROWS` rows are
        present, else ``"cpu"``. Columns already in GPU memory: :func:`uefast.gpu.evaluate_device`.

    Returns
    -------
    pyarrow.Table
        One row per (system, qid, measure); schema in ``data_schemas/evaluate_output.md``.
        Metadata: ``uefast.version``, ``uefast.settings`` (JSON), ``uefast.info`` (JSON row
        accounting), ``uefast.dropped`` (JSON). Use :func:`aggregate` for means over queries.
    """
    from uefast.streaming import evaluate_stream, is_streaming_source

    names = dict(qid=qid, docid=docid, label=label, score=score, system=system)
    opts = EvalOptions(measures=measures, ue=ue, ties=ties, reb=reb, reb_universe=reb_universe,
                       collection_size=collection_size, degenerate=degenerate,
                       rel_level=rel_level, queries=queries, negative_labels=negative_labels,
                       score_columns=score_columns, columns=names, backend=backend).validated()
    mlist = list(opts.measures)
    n_universe = opts.n_universe
    tbgl.check_universe(mlist, n_universe)
    rel_level = opts.rel_level
    if qrels is not None:
        check_trec_score_columns(score_columns)
    streamed = is_streaming_source(run)
    if streamed:
        tbgl.refuse_streamed(mlist)
    if backend == "auto" and streamed:
        backend = "cpu"  # streamed input is evaluated on the CPU
    if streamed and reb_universe != "judged":
        raise InputError(f"reb_universe={reb_universe!r} does not take streamed input yet; read "
                         "it into a pyarrow.Table first")
    if queries == "intersect" and streamed:
        if backend != "cpu":
            raise InputError(f"`backend`={backend!r} does not take streamed input (a "
                             "RecordBatchReader, batch iterator, dataset or Parquet file > 1 GiB);"
                             " read it into a pyarrow.Table first, or use backend='cpu'")
        # RecordBatchReader, batch iterator, Parquet dataset or a Parquet file > 1 GiB: stream it
        # query by query with bounded memory (identical results; uefast.streaming).
        return evaluate_stream(run, qrels, measures, ue=ue, ties=ties, reb=reb,
                               degenerate=degenerate, rel_level=rel_level, queries=queries,
                               negative_labels=negative_labels, score_columns=score_columns,
                               qid=qid, docid=docid, label=label, score=score, system=system)
    if streamed:  # queries="qrels" (every qrels query, each system) evaluates in memory
        from uefast.streaming._source import read_source

        run = read_source(run)
    settings = opts.settings("letor" if qrels is None else "trec")
    run_t = to_arrow(run, "run")
    if run_t.num_rows == 0:
        raise InputError("run: the input has no rows")
    if backend == "auto":  # the GPU only where CuPy, a device and a large input (uefast.gpu.memory)
        from uefast.gpu.memory import choose_backend

        backend = settings["backend"] = choose_backend(backend, run_t.num_rows)
    if qrels is None:
        res = _evaluate_letor(run_t, mlist, ties, reb, int(rel_level), negative_labels,
                              score_columns, names, backend, n_universe)
    else:
        qrels_t = to_arrow(qrels, "qrels")
        if qrels_t.num_rows == 0:
            raise InputError("qrels: the input has no rows")
        res = _evaluate_trec(run_t, qrels_t, mlist, ties, reb, int(rel_level), queries,
                             negative_labels, names, backend, n_universe,
                             reb_universe == "retrieved")
    settings["score_columns"] = res.info.pop("score_columns", None)
    return _build_table(res, mlist, ue, degenerate, settings)


# ----------------------------------------------------------------------------- LETOR style
def _evaluate_letor(t, mlist, ties, reb, rel_level, negative, score_columns, names,
                    backend="cpu", n_universe=0) -> _Result:
    """LETOR style (every candidate judged: the retrieved universe is the judged one)."""
    what = "run"
    qid_arr = column(t, names["qid"], what)
    labels = label_array(column(t, names["label"], what), names["label"], what, negative)
    max_label = int(labels.max())
    doc_arr = column(t, names["docid"], what) if names["docid"] in t.column_names else None
    docs = docids(doc_arr, names["docid"], what)
    cols = tbgl.letor_columns(_letor_score_columns(t, score_columns, names), mlist, score_columns)
    plan = plan_measures(tbgl.main_measures(mlist), rel_level=rel_level, reb=reb, max_label=max_label)
    lens = tbgl.read_lengths(t, what) if tbgl.per_document(mlist) else None
    info: dict[str, Any] = {"rows_in": t.num_rows, "score_columns": cols}
    flags = [i for i, m in enumerate(mlist) if m.definition.label_source == "judged"]
    if names["system"] in t.column_names:
        # long format: one score column, rows of each system; group by (system, qid)
        sys_g = group_keys(column(t, names["system"], what), names["system"], what)
        q_g = group_keys(qid_arr, names["qid"], what, backend)
        scodes = _codes(sys_g, t.num_rows)
        qcodes = _codes(q_g, t.num_rows)
        nq, ns = q_g.n_groups, sys_g.n_groups
        g = group_codes(scodes * nq + qcodes, ns * nq, q_g.keys, backend)
        docs, rising = _check_duplicates(g, docs, doc_arr, names["docid"], "run", "(system, qid)")
        judged = judged_stats(g.offsets, g.perm, g.has_perm, labels, plan, max_label, n_universe,
                              backend=backend)
        scores = score_array(column(t, cols[0], what), cols[0], what, check_nan=False)
        qref = np.arange(g.n_groups, dtype=np.int64)
        vals = rank_values(g.offsets, g.perm, g.has_perm, labels, scores, qref, ties, docs, plan,
                           judged, nan_error=score_nan_error(cols[0], what), doc_rising=rising,
                           backend=backend)
        if flags:  # every candidate is judged: its flag is 1
            one = np.ones(len(labels), np.int8)
            vals[:, flags] = _flag_values(g, g, one, one, scores, qref, ties, docs, plan, judged,
                                          flags, n_universe, backend)
        for i, pl, js, qc in tbgl.passes(mlist, labels, lens, g, reb, rel_level, n_universe, judged):
            vals[:, i] = rank_values(g.offsets, g.perm, g.has_perm, qc, scores, qref, ties, docs,
                                     pl, js, doc_rising=rising)[:, 0]
        sizes = np.diff(g.offsets)
        keep = np.flatnonzero(sizes > 0)
        info["missing_system_queries"] = int(ns * nq - len(keep))
        info["rows_evaluated"] = int(sizes.sum())
        return _Result(sys_g.keys.cast(pa.string()), q_g.keys, keep // nq, keep % nq, vals[keep],
                       judged.iub[keep], judged.reb[keep], sizes[keep], judged.n_judged[keep],
                       judged.nrel[keep], info)
    g = group_keys(qid_arr, names["qid"], what, backend)
    docs, rising = _check_duplicates(g, docs, doc_arr, names["docid"], "run", "qid")
    judged = judged_stats(g.offsets, g.perm, g.has_perm, labels, plan, max_label, n_universe,
                          backend=backend)
    docp = tbgl.passes(mlist, labels, lens, g, reb, rel_level, n_universe, judged)
    nq = g.n_groups
    qref = np.arange(nq, dtype=np.int64)
    vals = np.empty((len(cols) * nq, len(mlist)))
    pipelined = backend == "cuda" and len(cols) > 1  # the systems pipelined on the GPU
    if pipelined:
        many = rank_values_many(g.offsets, g.perm, g.has_perm, labels,
                                [score_array(column(t, c, what), c, what, check_nan=False)
                                 for c in cols], qref, ties, docs, plan, judged,
                                [score_nan_error(c, what) for c in cols], rising, backend)
    for s, c in enumerate(cols):
        # every row is in a query group, so the ranking kernel sees (and checks) every score
        scores = score_array(column(t, c, what), c, what, check_nan=False)
        if pipelined:
            vals[s * nq:(s + 1) * nq] = many[s]
        else:
            vals[s * nq:(s + 1) * nq] = rank_values(g.offsets, g.perm, g.has_perm, labels,
                                                    scores, qref, ties, docs, plan, judged,
                                                    nan_error=score_nan_error(c, what),
                                                    doc_rising=rising, backend=backend)
        if flags:  # every candidate is judged: its flag is 1
            one = np.ones(len(labels), np.int8)
            vals[s * nq:(s + 1) * nq, flags] = _flag_values(g, g, one, one, scores, qref, ties,
                                                            docs, plan, judged, flags, n_universe,
                                                            backend)
        for i, pl, js, qc in docp:
            vals[s * nq:(s + 1) * nq, i] = rank_values(g.offsets, g.perm, g.has_perm, qc, scores,
                                                       qref, ties, docs, pl, js,
                                                       doc_rising=rising)[:, 0]
    info["rows_evaluated"] = t.num_rows
    ns = len(cols)
    sizes = np.diff(g.offsets)
    tile = lambda a: np.tile(a, (ns,) + (1,) * (a.ndim - 1))  # noqa: E731
    return _Result(text_array(cols), g.keys, np.repeat(np.arange(ns), nq),
                   np.tile(np.arange(nq), ns), vals, tile(judged.iub), tile(judged.reb),
                   tile(sizes), tile(judged.n_judged), tile(judged.nrel), info)


def _codes(g: Grouping, n_rows: int) -> np.ndarray:
    """Per-row group code from a grouping."""
    codes = np.empty(n_rows, np.int64)
    sizes = np.diff(g.offsets)
    rep = np.repeat(np.arange(g.n_groups, dtype=np.int64), sizes)
    if g.has_perm:
        codes[g.perm] = rep
    else:
        codes[:] = rep
    return codes


def _check_duplicates(g: Grouping, docs, doc_arr, docid_name: str, what: str,
                      within: str):
    """Raise on a docid repeated within a group; return ``(docs, rising)`` for
    :func:`rank_values`: string docids become their byte-order ranks within each group
    (:func:`docid_ranks`: the same sort is the duplicate check; trec_eval's tie order, ranked by
    the fast integer paths), and ``rising`` marks the groups whose docids rise strictly (uint8 per
    group)."""
    rising = np.zeros(g.n_groups, np.uint8)
    docs, r, o = docid_ranks(g, docs, rising)
    if r >= 0:
        raise RowError(what, f"duplicate {docid_name} {doc_arr[r].as_py()!r} within one {within} "
                       "group: rows ", o, " and ", r)
    return docs, rising


# ----------------------------------------------------------------------------- TREC style
def _evaluate_trec(run_t, qrels_t, mlist, ties, reb, rel_level, queries, negative, names,
                   backend="cpu", n_universe=0, retrieved=False) -> _Result:
    """TREC style. ``n_universe``: REB over a collection of that many documents;
    ``retrieved``: REB over each run's retrieved documents (:mod:`uefast.universe`)."""
    qn, dn = names["qid"], names["docid"]
    r_qid, r_doc = column(run_t, qn, "run"), column(run_t, dn, "run")
    q_qid, q_doc = column(qrels_t, qn, "qrels"), column(qrels_t, dn, "qrels")
    check_same_kind(r_qid, q_qid, qn, "run", "qrels")
    check_same_kind(r_doc, q_doc, dn, "run", "qrels")
    q_lab = label_array(column(qrels_t, names["label"], "qrels"), names["label"], "qrels", negative)
    max_label = int(q_lab.max())
    qg = group_keys(q_qid, qn, "qrels", backend)
    qdocs = qrels_docids(qg, q_qid, q_doc, dn)
    # query codes of run rows in the qrels' dictionary (-1: query not in qrels)
    import pyarrow.compute as pc

    qkeys = qg.keys
    rq = r_qid.dictionary_decode() if pa.types.is_dictionary(r_qid.type) else r_qid
    if pa.types.is_integer(rq.type):
        rq, qkeys_c = rq.cast(pa.int64()), qkeys.cast(pa.int64())
    else:
        rq, qkeys_c = rq.cast(pa.large_string()), qkeys.cast(pa.large_string())
    qcodes = numpy_view(pc.index_in(rq, value_set=qkeys_c), null_value=-1).astype(np.int64)
    # label of every run row: left join on (qid, docid) keeping run order; unjudged -> 0
    docs = docids(r_doc, dn, "run")
    if docs.mode == DOC_INT:
        hit = _int_join_rows(qcodes, docs.ints, qg, qdocs.ints)
    else:
        hit = _string_join_rows(qcodes, docs, qg, qdocs)
    labels = np.where(hit >= 0, q_lab[np.maximum(hit, 0)], 0).astype(q_lab.dtype, copy=False)
    nq = qg.n_groups
    if names["system"] in run_t.column_names:
        sys_g = group_keys(column(run_t, names["system"], "run"), names["system"], "run")
        scodes = _codes(sys_g, run_t.num_rows)
        sys_names = sys_g.keys.cast(pa.string())
    else:
        scodes = np.zeros(run_t.num_rows, np.int64)
        sys_names = text_array(["run"])
    ns = len(sys_names)
    codes = np.where(qcodes >= 0, scodes * nq + qcodes, -1)
    g = group_codes(codes, ns * nq, qkeys, backend)
    docs, rising = _check_duplicates(g, docs, r_doc, dn, "run", "(system, qid)")
    plan = plan_measures(tbgl.main_measures(mlist), rel_level=rel_level, reb=reb,
                         max_label=max_label)
    judged = judged_stats(qg.offsets, qg.perm, qg.has_perm, q_lab, plan, max_label,
                          n_universe, backend=backend)
    scores = score_array(column(run_t, names["score"], "run"), names["score"], "run")
    qref = np.tile(np.arange(nq, dtype=np.int64), ns)
    vals = rank_values(g.offsets, g.perm, g.has_perm, labels, scores, qref, ties, docs, plan,
                       judged, doc_rising=rising, backend=backend)
    flags = [i for i, m in enumerate(mlist) if m.definition.label_source == "judged"]
    if flags:  # Judged@k: the same rankings with 1 for a judged document, 0 for an unjudged one
        vals[:, flags] = _flag_values(qg, g, np.ones(len(q_lab), np.int8),
                                      (hit >= 0).astype(np.int8), scores, qref, ties, docs,
                                      plan, judged, flags, n_universe, backend)
    # families read on the condensed list (bpref): the same segments without unjudged rows
    cond = [i for i, m in enumerate(mlist) if m.definition.condensed(m)]
    gj = None
    if cond:
        gj = group_codes(np.where(hit >= 0, codes, -1), ns * nq, qkeys, backend)
        vj = rank_values(gj.offsets, gj.perm, gj.has_perm, labels, scores, qref, ties, docs, plan,
                         judged, backend=backend)
        vals[:, cond] = vj[:, cond]
    docp = []  # TBG(lengths=doc): each in a pass of its own on per-document codes
    for i, pl, js, qc in tbgl.passes(mlist, q_lab, tbgl.read_lengths(qrels_t, "qrels")
                                     if tbgl.per_document(mlist) else None, qg, reb, rel_level,
                                     n_universe, judged):
        gi = gj if mlist[i].definition.condensed(mlist[i]) else g
        rc = tbgl.run_codes(qc, hit, mlist[i], rel_level)
        vals[:, i] = rank_values(gi.offsets, gi.perm, gi.has_perm, rc, scores, qref, ties, docs,
                                 pl, js)[:, 0]
        docp.append((i, pl, js, gi, rc))
    sizes = np.diff(g.offsets)
    keep = np.flatnonzero(sizes > 0) if queries == "intersect" else np.arange(ns * nq)
    q_of = keep % nq
    dropped_rows = int(np.count_nonzero(qcodes < 0))
    info = {"rows_in": run_t.num_rows, "qrels_rows_in": qrels_t.num_rows,
            "rows_evaluated": int(sizes.sum()), "run_rows_query_not_in_qrels": dropped_rows,
            "run_queries_not_in_qrels": int(len(pc.unique(rq.filter(numeric_array(qcodes < 0))))),
            "system_query_pairs_without_run_rows": int(np.count_nonzero(sizes == 0))}
    rebs = judged.reb[q_of]
    if retrieved:
        rr = retrieved_reb(g.offsets, g.perm, g.has_perm, labels, qref, plan, judged, backend)
        if flags:  # families that read judged flags: a random order of the flags
            rr[:, flags] = retrieved_reb(g.offsets, g.perm, g.has_perm, (hit >= 0).astype(np.int8),
                                         qref, plan, judged, backend)[:, flags]
        if gj is not None:
            rr[:, cond] = retrieved_reb(gj.offsets, gj.perm, gj.has_perm, labels, qref, plan,
                                        judged, backend)[:, cond]
        for i, pl, js, gi, rc in docp:
            rr[:, i] = retrieved_reb(gi.offsets, gi.perm, gi.has_perm, rc, qref, pl, js)[:, 0]
        rebs = rr[keep]
    return _Result(sys_names, qkeys, keep // nq, q_of, vals[keep], judged.iub[q_of],
                   rebs, sizes[keep], judged.n_judged[q_of], judged.nrel[q_of], info)


def _flag_values(qg, g, q_flags, r_flags, scores, qref, ties, docs, plan, judged, cols,
                 n_universe, backend):
    """Values of the measures ``cols`` whose family reads judged flags (``label_source=
    "judged"``): judged pass on ``q_flags`` (every judged document 1), ranking on ``r_flags``;
    the judged statistics of those columns replaced in ``judged``."""
    jf = judged_stats(qg.offsets, qg.perm, qg.has_perm, q_flags, plan, 1, n_universe,
                      backend=backend)
    for a, b in ((judged.iub, jf.iub), (judged.reb, jf.reb), (judged.nrel, jf.nrel),
                 (judged.idcg, jf.idcg)):
        a[:, cols] = b[:, cols]
    return rank_values(g.offsets, g.perm, g.has_perm, r_flags, scores, qref, ties, docs, plan,
                       jf, backend=backend)[:, cols]


def _string_join_rows(qcodes: np.ndarray, r_docs: DocIds, qg: Grouping,
                      q_docs: DocIds) -> np.ndarray:
    """Qrels row judging each run row's (qrels topic ``qcodes[i]``, string docid), else -1: one
    open-addressing table per qrels topic keyed by the docid's first 16 bytes and length (longer
    ones compared byte by byte), probed by every run row -- the tables of the ``uefast trec_eval``
    reader (:func:`uefast.io._topics.build_topic_tables`). Measured on the 17 Robust 2003 runs
    (1.5 M rows): ~80 ms single-thread (probes in parallel), against ~230 ms for the Polars left
    join with its conversions used before."""
    from uefast.io._topics import build_topic_tables, probe_topic_rows_parallel

    q_data = readonly(q_docs.data)
    rows = qg.perm if qg.has_perm else np.arange(len(q_docs.offsets) - 1, dtype=np.int64)
    qs = q_docs.offsets[rows].astype(np.int64)
    qe = q_docs.offsets[rows + 1].astype(np.int64)
    # repeats were refused before; labels are not needed here (the codes are unused)
    tab, soff, _ = build_topic_tables(qg.offsets, q_data, qs, qe, np.zeros(qs.size, np.int64))
    r_off, r_data = r_docs.offsets.astype(np.int64), readonly(r_docs.data)
    qcodes = kernel_array(qcodes, np.int64)
    with KERNEL_LOCK:
        hit = probe_topic_rows_parallel(qcodes, r_data, r_off[:-1], r_off[1:], tab, soff, q_data,
                                        qs, qe, n_chunks(len(qcodes) // 1024 + 1))
    return np.where(hit >= 0, rows[np.maximum(hit, 0)], -1)


def _int_join_rows(qcodes: np.ndarray, r_docs: np.ndarray, qg: Grouping,
                   q_docs: np.ndarray) -> np.ndarray:
    """Qrels row judging each run row's (qrels topic ``qcodes[i]``, integer docid), else -1: one
    hash table keyed by (topic, docid) over the qrels rows (:mod:`uefast.kernels.join`)."""
    q_codes = readonly(_codes(qg, len(q_docs)))
    q_docs, qcodes, r_docs = (kernel_array(a, np.int64) for a in (q_docs, qcodes, r_docs))
    slots = pair_table(q_codes, q_docs)
    with KERNEL_LOCK:
        return probe_pairs(slots, q_codes, q_docs, qcodes, r_docs,
                           n_chunks(len(qcodes) // 1024 + 1))


def aggregate(table: pa.Table, *, skip_nan: bool = True, mean: str = "arithmetic",
              floor: float | None = None) -> pa.Table:
    """Mean over queries per (system, measure) of ``value``, ``iub``, ``reb``, ``ue_v1``, ``ue_v2``.

    ``n_queries`` counts the (system, qid) rows of the group. With ``skip_nan`` NaN values
    (``degenerate="nan"``: the UE scores of degenerate queries) are left out of each mean, so
    ``ue_v1`` / ``ue_v2`` then average only the queries where they are defined, fewer than
    ``n_queries``. Order: first appearance of (system, measure). Metadata is kept.

    ``mean``: ``"arithmetic"`` (default), ``"geometric"`` (exp of the mean of
    log(max(x, floor)), ``floor`` = 0.00001 by default: trec_eval's ``gm_map``, i.e. GMAP for
    AP) or ``"harmonic"`` (n / Σ 1/max(x, floor), ``floor`` = 0 by default: a 0 makes the mean
    0). The geometric and harmonic means apply to ``value``, ``iub`` and ``reb`` (a negative
    value is an error); ``ue_v1`` / ``ue_v2``, which can be negative, are then null, and the
    metadata key ``uefast.aggregate`` records the mean. Details: :mod:`uefast.aggregation`.
    """
    import polars as pl

    from uefast.aggregation import check_mean, mean_expressions, mean_metadata

    mean, floor = check_mean(mean, floor)
    df = pl.from_arrow(table)
    cols = ["value", "iub", "reb", "ue_v1", "ue_v2"]
    agg = [pl.len().alias("n_queries")] + mean_expressions(df, cols, mean, floor, skip_nan)
    out = df.group_by(["system", "measure"], maintain_order=True).agg(agg).to_arrow()
    out = out.cast(pa.schema([pa.field("system", pa.string()), pa.field("measure", pa.string()),
                              pa.field("n_queries", pa.int64())] +
                             [pa.field(c, pa.float64()) for c in cols]))
    meta = dict(table.schema.metadata or {})
    if mean != "arithmetic":
        meta.update({k.encode(): v.encode() for k, v in mean_metadata(mean, floor).items()})
    return out.replace_schema_metadata(meta or None)
