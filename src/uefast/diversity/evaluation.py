"""``uefast.diversity.evaluate``: diversity measures with IUB, exact REB and UE, long Arrow table.

Output: one row per (system, qid, measure), the columns of :func:`uefast.evaluate`
(``system, qid, measure, value, iub, reb, ue_v1, ue_v2, n_docs, n_judged, n_rel``) plus
``iub_exact`` (bool: False where the IUB is a greedy ranking's value, a lower bound on the true
maximum, so value > iub is possible). Schema: ``data_schemas/diversity_output.md``.

UE (SPEC_math §4, :func:`uefast.ue.ue_scores`) is computed on A, IUB, REB as they are for
measures that cannot be negative. For those that can (RBU with e > 0, EU), V1/V2 as defined
lose their meaning (SPEC_diversity §4), so they are computed on the values shifted by the
measure's minimum over rankings of the judged documents (the effort-only value, MIN):
A - MIN, IUB - MIN, REB - MIN; V2's lower branch is then (A - REB)/(REB - MIN), "how far from
the random baseline towards the worst ranking".
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast import __version__
from uefast.diversity.qrels import DivQrels, compile_qrels
from uefast.diversity.registry import Batch, parse_measures
from uefast.diversity.universe_div import check_universe
from uefast.errors import InputError
from uefast.inputs import column, numpy_view, to_arrow
from uefast.ue import DEGENERATE_POLICIES, ue_scores

__all__ = ["OUTPUT_COLUMNS", "evaluate", "rank_run", "score_batch"]

OUTPUT_COLUMNS = ("system", "qid", "measure", "value", "iub", "reb", "ue_v1", "ue_v2",
                  "iub_exact", "n_docs", "n_judged", "n_rel")
TIES = ("trec_eval", "pyndeval", "rank")


def _run_table(run, names) -> pa.Table:
    import os

    if isinstance(run, (str, os.PathLike)) and not str(run).endswith(".parquet"):
        from uefast.io.trec import read_run

        return read_run(run)
    t = to_arrow(run, "run")
    return t


def rank_run(run: pa.Table, topics: DivQrels, ties: str = "trec_eval", queries: str = "intersect",
             qid: str = "qid", docid: str = "docid", score: str = "score", system: str = "system"):
    """Order the run and join it to the judgments: returns (systems, segment system index,
    segment topic index, :class:`Batch`, info). ``ties``: ``"trec_eval"`` (score descending, then
    docid descending by bytes), ``"pyndeval"`` (score descending, docid ascending) or ``"rank"``
    (the ``rank`` column ascending, ndeval's default)."""
    if ties not in TIES:
        raise InputError(f"`ties` must be one of {TIES}, got {ties!r}")
    n = run.num_rows
    if n == 0:
        raise InputError("run: the input has no rows")
    q = column(run, qid, "run").cast(pa.string())
    d = column(run, docid, "run").cast(pa.string())
    s = (column(run, system, "run").cast(pa.string()) if system in run.column_names
         else pa.array(["run"] * n, pa.string()))
    systems = pc.unique(s)
    scode = np.asarray(pc.index_in(s, value_set=systems), np.int64)
    qids = list(topics)
    tcode = np.asarray(pc.index_in(q, value_set=pa.array(qids, pa.string())).fill_null(-1), np.int64)
    info = {"rows_in": n, "run_rows_query_not_in_qrels": int((tcode < 0).sum())}
    keep = np.flatnonzero(tcode >= 0)
    if keep.size == 0:
        raise InputError("run: no query of the run is in the qrels")
    # docids as integer codes of the run's distinct docids, and their rank by bytes
    denc = pc.dictionary_encode(d)
    dcode = np.asarray(denc.indices, np.int64)
    uniq = denc.dictionary
    if ties == "rank":
        key = numpy_view(column(run, "rank", "run")).astype(np.float64)
        sort = [("t", "ascending"), ("k", "ascending")]
        tab = pa.table({"s": scode[keep], "t": tcode[keep], "k": key[keep]})
    else:
        sc = numpy_view(column(run, score, "run")).astype(np.float64)
        if np.isnan(sc[keep]).any():
            raise InputError(f"run: column {score!r} has NaN (row {int(np.flatnonzero(np.isnan(sc))[0])})")
        urank = np.empty(len(uniq), np.int64)
        urank[np.asarray(pc.array_sort_indices(uniq), np.int64)] = np.arange(len(uniq))
        tab = pa.table({"s": scode[keep], "t": tcode[keep], "k": sc[keep], "d": urank[dcode[keep]]})
        sort = [("t", "ascending"), ("k", "descending"),
                ("d", "descending" if ties == "trec_eval" else "ascending")]
    order = keep[np.asarray(pc.sort_indices(tab, sort_keys=[("s", "ascending")] + sort), np.int64)]
    ss, ts = scode[order], tcode[order]
    start = np.r_[True, (ss[1:] != ss[:-1]) | (ts[1:] != ts[:-1])]
    first = np.flatnonzero(start)
    seg_sys, seg_top = ss[first], ts[first]
    soff = np.r_[first, order.size].astype(np.int64)
    rows = _join(topics, qids, ts, dcode[order], uniq)
    _check_duplicates(ts, ss, dcode[order], len(uniq), d, order)
    if queries == "qrels":
        seg_sys, seg_top, soff, rows = _all_queries(len(systems), len(qids), seg_sys, seg_top, soff, rows)
    elif queries != "intersect":
        raise InputError(f"`queries` must be 'intersect' or 'qrels', got {queries!r}")
    batch = Batch([topics[x] for x in qids], seg_top, rows, soff, flat=getattr(topics, "flat", None))
    return systems, seg_sys, batch, info


def _check_duplicates(ts, ss, code, U, d, order) -> None:
    """A docid twice within a (system, qid) is an error naming its row (``code``: the docid
    codes of the ordered rows, ``U`` distinct)."""
    key = (ss * (int(ts.max(initial=0)) + 1) + ts) * max(U, 1) + code
    srt = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[srt][1:] == key[srt][:-1])
    if dup.size:
        i = int(order[srt[dup[0] + 1]])
        raise InputError(f"run: row {i}: docid {d[i].as_py()!r} repeated within a (system, qid)")


def _judged_docs(topics, qids):
    """(all judged docids as one Arrow array, their topic index, their topic-local row), cached
    on the compiled qrels."""
    cache = getattr(topics, "_flat_docids", None)
    if cache is not None and cache[0] == qids:
        return cache[1]
    lens = np.array([topics[x].n for x in qids], np.int64)
    all_docs = np.concatenate([topics[x].docids for x in qids]) if qids else np.zeros(0, object)
    qtop = np.repeat(np.arange(len(qids), dtype=np.int64), lens)
    local = np.arange(qtop.size) - np.r_[0, np.cumsum(lens)][:-1][qtop]
    out = (pa.array(all_docs, pa.string()), qtop, local)
    try:
        topics._flat_docids = (list(qids), out)
    except AttributeError:  # a plain dict
        pass
    return out


def _join(topics, qids, ts, code, uniq) -> np.ndarray:
    """Topic-local judged row of every ranked document (-1 unjudged): the judged (topic, doc)
    pairs coded by the run's distinct docids ``uniq``, sorted, and searched for each ranked
    (topic, docid code)."""
    qd, qtop, local = _judged_docs(topics, qids)
    U = max(len(uniq), 1)
    qc = np.asarray(pc.index_in(qd, value_set=uniq).fill_null(-1), np.int64)
    ok = qc >= 0
    qkey = qtop[ok] * U + qc[ok]
    o = np.argsort(qkey, kind="stable")
    qkey, loc = qkey[o], local[ok][o]
    out = np.full(code.size, -1, np.int64)
    if qkey.size:
        key = ts * U + code
        pos = np.minimum(np.searchsorted(qkey, key), qkey.size - 1)
        out = np.where(qkey[pos] == key, loc[pos], -1)
    return out


def _universe_reb(batch, m, reb_universe, collection_size) -> np.ndarray:
    """REB of a measure outside the IA kernel per segment over the retrieved or collection
    universe (:func:`uefast.diversity.universe_div.universe_reb`)."""
    from uefast.diversity.universe_div import universe_reb

    if reb_universe == "collection":
        per = {t: universe_reb(batch.topics[t], m, int(collection_size), np.arange(batch.topics[t].n))
               for t in np.unique(batch.seg_topic)}
        return np.array([per[t] for t in batch.seg_topic], float)
    out = np.empty(batch.seg_topic.size)
    for s, (top, rows) in enumerate(batch.segments()):
        out[s] = universe_reb(top, m, rows.size, rows)
    return out


def _all_queries(nsys, nq, seg_sys, seg_top, soff, rows):
    have = {(int(a), int(b)): s for s, (a, b) in enumerate(zip(seg_sys, seg_top))}
    new_rows, new_off, ss, tt = [], [0], [], []
    for a in range(nsys):
        for b in range(nq):
            s = have.get((a, b))
            seg = rows[soff[s]:soff[s + 1]] if s is not None else np.zeros(0, np.int64)
            new_rows.append(seg)
            new_off.append(new_off[-1] + seg.size)
            ss.append(a)
            tt.append(b)
    return (np.array(ss, np.int64), np.array(tt, np.int64), np.array(new_off, np.int64),
            np.concatenate(new_rows) if new_rows else np.zeros(0, np.int64))


def score_batch(batch: Batch, mlist, reb_universe: str = "judged", collection_size=None):
    """(value, iub, reb, minimum, iub_exact), each (segments x measures), of the parsed measures
    ``mlist`` on ``batch``: the :data:`~uefast.diversity.ia_fast.FAST` families in one Numba
    call (:func:`~uefast.diversity.ia_fast.ia_scores`), ndeval's names by the batch ndeval pass
    and :func:`~uefast.diversity.novelty_fast.novelty_scores`, the others by their family's
    functions; REB over ``reb_universe`` (validated by the caller). ``minimum`` is the measure's
    least value (0 for measures that cannot be negative), the origin of the UE shift."""
    from uefast.diversity.ia_fast import FAST, ia_scores
    from uefast.diversity.novelty_fast import NOVELTY, novelty_scores

    S, M = batch.seg_topic.size, len(mlist)
    val = np.empty((S, M))
    iub = np.empty((S, M))
    reb = np.empty((S, M))
    low = np.zeros((S, M))
    exact = np.empty((S, M), bool)
    n_judged = np.array([t.n for t in batch.topics], np.int64)
    fast = [j for j, m in enumerate(mlist) if m.fam.name in FAST]
    if fast:
        val[:, fast], iub[:, fast], exact[:, fast], reb[:, fast] = ia_scores(
            batch, [mlist[j] for j in fast], reb_universe, collection_size)
    for j, m in enumerate(mlist):
        if m.fam.minimum is not None:  # a function of the topic's n (registry.Family)
            ns = n_judged[batch.seg_topic]
            un, inv = np.unique(ns, return_inverse=True)
            first = np.full(un.size, -1, np.int64)
            first[inv[::-1]] = batch.seg_topic[::-1]
            low[:, j] = np.array([m.fam.minimum(batch.topics[t], m) for t in first], float)[inv]
        if j in fast:
            continue
        val[:, j] = m.fam.value(batch, m)
        if m.fam.name in NOVELTY:  # all topics at once (uefast.diversity.novelty_fast)
            ti, te, tr = novelty_scores(batch, m)
            st = batch.seg_topic
            iub[:, j], exact[:, j], reb[:, j] = ti[st], te[st], tr[st]
        else:
            judged = reb_universe == "judged"
            per_topic = {}
            for t in np.unique(batch.seg_topic):
                top = batch.topics[t]
                iv, ex = m.fam.iub(top, m)
                per_topic[t] = (iv, ex, m.fam.reb(top, m) if judged else np.nan)
            for s, t in enumerate(batch.seg_topic):
                iub[s, j], exact[s, j], reb[s, j] = per_topic[t]
        if reb_universe != "judged":  # checked by check_universe
            reb[:, j] = _universe_reb(batch, m, reb_universe, collection_size)
    return val, iub, reb, low, exact


def evaluate(run, qrels, measures=("alpha-nDCG@20", "ERR-IA@20"), *, ue: bool = True,
             ties: str = "trec_eval", degenerate: str = "zero", queries: str = "intersect",
             weights=None, reb_universe: str = "judged", collection_size=None, qid: str = "qid",
             docid: str = "docid", score: str = "score", system: str = "system") -> pa.Table:
    """Evaluate every system on every query with each diversity measure, with IUB, exact REB and
    UE V1/V2 (see the module docstring and ``docs/diversity.md``).

    ``run``: a TREC run file path, or a table ``qid, docid, score[, system][, rank]`` (Arrow,
    Polars, pandas, Parquet path, dict). ``qrels``: a diversity qrels path
    (:func:`uefast.diversity.read_qrels`), a table ``qid, subtopic, docid, label[, weight]``, or
    compiled :class:`~uefast.diversity.DivQrels`. ``measures``: strings such as
    ``"alpha-nDCG@20"``, ``"ERR-IA@20"``, ``"RBU(p=0.8,e=0.03)@20"`` (see
    :mod:`uefast.diversity.registry`). ``ties``: ``"trec_eval"``, ``"pyndeval"`` or ``"rank"``.
    ``queries``: ``"intersect"`` (queries in both) or ``"qrels"`` (every qrels query; a system
    without rows for it gets an empty ranking). ``weights``: aspect weights (file or table
    ``qid, subtopic, weight``). ``reb_universe``: ``"judged"`` (default: REB over random orders
    of each query's judged documents), ``"retrieved"`` (of each run's own ranked documents) or
    ``"collection"`` (of ``collection_size`` documents, the unjudged ones non-relevant); the
    last two for every family (:mod:`uefast.diversity.ia_fast`,
    :mod:`uefast.diversity.universe_ndeval`, :mod:`uefast.diversity.universe_div`) except,
    over a collection, those whose REB sums over all N ranks: RR-IA, NRBP, nNRBP, EU and RBU
    without a cutoff or as ``variant=java`` (``docs/reb_universe.md``). The families of
    :data:`uefast.diversity.ia_fast.FAST` are scored by one Numba pass over all segments
    (:mod:`uefast.diversity._ia_kernels`).
    """
    from uefast.diversity.ia_fast import relevant_docs

    if degenerate not in DEGENERATE_POLICIES:
        raise InputError(f"`degenerate` must be one of {DEGENERATE_POLICIES}, got {degenerate!r}")
    mlist = parse_measures(measures)
    check_universe(reb_universe, collection_size, mlist)  # uefast.diversity.universe_div
    topics = qrels if isinstance(qrels, DivQrels) and weights is None else compile_qrels(qrels, weights=weights)
    run_t = _run_table(run, None)
    systems, seg_sys, batch, info = rank_run(run_t, topics, ties, queries, qid, docid, score, system)
    S, M = batch.seg_topic.size, len(mlist)
    big = max((t.n for t in batch.topics), default=0)
    if reb_universe == "collection" and collection_size < big:
        raise InputError(f"`collection_size` {collection_size} is smaller than a query's judged "
                         f"documents ({big})")
    val, iub, reb, low, exact = score_batch(batch, mlist, reb_universe, collection_size)
    if ue:
        v1, v2 = ue_scores(val - low, iub - low, reb - low, degenerate)
    else:
        v1 = v2 = np.full((S, M), np.nan)
    keep = np.ones((S, M), bool)
    if ue and degenerate == "drop":
        keep = ~((iub - reb) <= 1e-12 * np.maximum(1.0, iub))
    lens = np.diff(batch.soff)
    n_rel = relevant_docs(batch)
    n_judged = np.array([t.n for t in batch.topics], np.int64)
    sel = keep.reshape(-1)
    rep = lambda a: np.repeat(a, M)[sel]  # noqa: E731
    qids = pa.array(list(topics), pa.string())
    names = pa.array([str(m) for m in mlist], pa.string())
    nulls = pa.nulls(int(sel.sum()), pa.float64())
    cols = {
        "system": systems.take(pa.array(rep(seg_sys))),
        "qid": qids.take(pa.array(rep(batch.seg_topic))),
        "measure": names.take(pa.array(np.tile(np.arange(M, dtype=np.int64), S)[sel])),
        "value": pa.array(val.reshape(-1)[sel]), "iub": pa.array(iub.reshape(-1)[sel]),
        "reb": pa.array(reb.reshape(-1)[sel]),
        "ue_v1": pa.array(v1.reshape(-1)[sel]) if ue else nulls,
        "ue_v2": pa.array(v2.reshape(-1)[sel]) if ue else nulls,
        "iub_exact": pa.array(exact.reshape(-1)[sel]),
        "n_docs": pa.array(rep(lens).astype(np.int64)),
        "n_judged": pa.array(rep(n_judged[batch.seg_topic])),
        "n_rel": pa.array(rep(n_rel[batch.seg_topic])),
    }
    info["output_rows"] = int(sel.sum())
    settings = dict(measures=[str(m) for m in mlist], ue=ue, ties=ties, degenerate=degenerate,
                    queries=queries, reb=f"exact, {reb_universe} documents", reb_universe=reb_universe,
                    collection_size=collection_size, style="diversity")
    meta = {"uefast.version": __version__, "uefast.settings": json.dumps(settings),
            "uefast.info": json.dumps(info)}
    return pa.table(cols).replace_schema_metadata(meta)
