"""Query partitions for the Santu & Feng (arXiv 2209.05007) protocol.

* :func:`uninformative_ideal_queries` - the top-N queries either way by the gap
  |mean over systems of the actual metric - REB|.
* :func:`query_types` - informative / uninformative-hard / uninformative-easy / ideal / degenerate.
* :func:`broad_focused_queries` - broad (a large share of highly relevant documents) vs focused.
* :func:`random_document_splits` / :func:`apply_document_split` - left/right random halves of
  every query's documents, several replicates.

Tables in, tables out (schemas: data_schemas/meta_partitions.md).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.errors import InputError
from uefast.stats._validation import check_seed

__all__ = [
    "query_summary",
    "uninformative_ideal_queries",
    "query_types",
    "broad_focused_queries",
    "random_document_splits",
    "apply_document_split",
]

_DEGENERATE_TOL = 1e-12


def _require(table: pa.Table, cols: tuple[str, ...], what: str) -> None:
    missing = [c for c in cols if c not in table.column_names]
    if missing:
        raise InputError(f"{what} needs columns {missing}; it has {table.column_names}")


def query_summary(table: pa.Table, measure: str | None = None) -> pa.Table:
    """Per query: ``qid, n_systems, mean_value, iub, reb, gap`` from the long table of
    :func:`uefast.evaluate` (one measure). mean_value is the mean over systems of ``value``;
    iub and reb are the query's (system-independent) bounds; gap = |mean_value - reb|."""
    _require(table, ("system", "qid", "value", "iub", "reb"), "the evaluate table")
    if "measure" in table.column_names:
        names = pc.unique(table["measure"]).to_pylist()
        if measure is None and len(names) != 1:
            raise InputError(f"the table holds several measures {names}; pass `measure=`")
        measure = names[0] if measure is None else measure
        table = table.filter(pc.equal(table["measure"], measure))
    if table.num_rows == 0:
        raise InputError(f"no rows for measure {measure!r}")
    g = table.group_by("qid", use_threads=False).aggregate(
        [("system", "count"), ("value", "mean"), ("iub", "mean"), ("reb", "mean")]
    )
    order = {q: i for i, q in enumerate(dict.fromkeys(table["qid"].to_pylist()))}
    idx = np.argsort([order[q] for q in g["qid"].to_pylist()], kind="stable")
    g = g.take(pa.array(idx))
    mean_value = g["value_mean"].to_numpy()
    reb = g["reb_mean"].to_numpy()
    return pa.table(
        {
            "qid": g["qid"],
            "n_systems": g["system_count"],
            "mean_value": mean_value,
            "iub": g["iub_mean"],
            "reb": reb,
            "gap": np.abs(mean_value - reb),
        }
    )


def _degenerate(iub: np.ndarray, reb: np.ndarray) -> np.ndarray:
    return (iub - reb) <= _DEGENERATE_TOL * np.maximum(1.0, np.abs(iub))


def uninformative_ideal_queries(
    table: pa.Table, measure: str | None = None, *, top_n: int, exclude_degenerate: bool = True
) -> pa.Table:
    """Split queries by gap = |mean over systems of the metric - REB| (Santu & Feng's protocol).

    The ``top_n`` queries with the smallest gap are ``uninformative`` (the systems are, on average,
    no better than a random ordering of the judged documents); the ``top_n`` with the largest gap
    are ``ideal``; the rest ``middle``. Ties in the gap keep the input query order. With
    ``exclude_degenerate`` (default) queries where IUB = REB (every ordering scores the same, e.g.
    no relevant document) are set aside as ``degenerate`` first: their gap is 0 by construction
    and would otherwise fill the uninformative set. Raises if 2 * top_n exceeds the queries left.

    Returns :func:`query_summary` plus ``gap_rank`` (0 = smallest gap; null for degenerate) and
    ``query_set``.
    """
    s = query_summary(table, measure)
    iub, reb, gap = s["iub"].to_numpy(), s["reb"].to_numpy(), s["gap"].to_numpy()
    degen = _degenerate(iub, reb) if exclude_degenerate else np.zeros(gap.size, bool)
    keep = np.flatnonzero(~degen)
    if top_n < 1 or 2 * top_n > keep.size:
        raise InputError(f"`top_n` must be in 1..{keep.size // 2} ({keep.size} usable queries); got {top_n}")
    order = keep[np.argsort(gap[keep], kind="stable")]
    rank = np.full(gap.size, -1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    label = np.full(gap.size, "middle", dtype=object)
    label[order[:top_n]] = "uninformative"
    label[order[-top_n:]] = "ideal"
    label[degen] = "degenerate"
    return s.append_column("gap_rank", pa.array(rank, pa.int64(), mask=rank < 0)).append_column(
        "query_set", pa.array(label.tolist(), pa.string())
    )


def query_types(table: pa.Table, measure: str | None = None, *, tol: float = 0.05) -> pa.Table:
    """Classify each query by where the systems' mean score A lies between REB and IUB.

    With a = A/IUB and r = REB/IUB (both in [0, 1]):

    * ``degenerate``          IUB = REB (every ordering scores the same, e.g. no relevant doc);
    * ``uninformative-hard``  |a - r| <= tol and r < 0.5 (systems no better than random, and
      random is poor: few relevant documents);
    * ``uninformative-easy``  |a - r| <= tol and r >= 0.5 (random is already near ideal);
    * ``ideal``               a >= 1 - tol (systems reach the ideal ranking);
    * ``informative``         otherwise.

    This operationalises the query types of Santu & Feng (arXiv 2209.05007, Fig. 1); ``tol`` is
    ours (default 0.05 of IUB). Returns :func:`query_summary` plus ``rel_value``, ``rel_reb`` and
    ``query_type``.
    """
    if not (0.0 <= tol < 0.5):
        raise InputError(f"`tol` must be in [0, 0.5); got {tol}")
    s = query_summary(table, measure)
    a_abs, iub, reb = s["mean_value"].to_numpy(), s["iub"].to_numpy(), s["reb"].to_numpy()
    degen = _degenerate(iub, reb)
    safe = np.where(iub > 0, iub, 1.0)
    a, r = a_abs / safe, reb / safe
    qtype = np.where(
        degen,
        "degenerate",
        np.where(
            np.abs(a - r) <= tol,
            np.where(r < 0.5, "uninformative-hard", "uninformative-easy"),
            np.where(a >= 1.0 - tol, "ideal", "informative"),
        ),
    )
    return (
        s.append_column("rel_value", pa.array(a))
        .append_column("rel_reb", pa.array(r))
        .append_column("query_type", pa.array(qtype.tolist(), pa.string()))
    )


def broad_focused_queries(
    labels: pa.Table,
    *,
    min_label: int = 2,
    threshold: float | Literal["median"] = 0.5,
    balanced: bool = True,
    seed: int = 0,
) -> pa.Table:
    """Broad vs focused queries from a (qid, label) table (qrels or LETOR rows).

    share = #{documents with label >= min_label} / #{documents of the query}. A query is ``broad``
    when share >= threshold (default 0.5: at least half the documents highly relevant), else
    ``focused``; ``threshold="median"`` uses the median share of the eligible queries. Queries
    without any relevant document (label >= 1) are ``none`` (not eligible). With ``balanced``
    the larger group is subsampled (``numpy.random.default_rng(seed)``) to the size of the
    smaller one; the dropped queries become ``none``.
    Returns ``qid, n_docs, n_rel, n_high, share, group``.
    """
    _require(labels, ("qid", "label"), "the label table")
    seed = check_seed(seed)
    qids = labels["qid"].to_pylist()
    lab = np.maximum(labels["label"].to_numpy(zero_copy_only=False).astype(np.int64), 0)
    uq, first_row, inv = np.unique(
        np.asarray([str(q) for q in qids]), return_index=True, return_inverse=True
    )
    n_docs = np.bincount(inv, minlength=uq.size)
    n_rel = np.bincount(inv, weights=lab >= 1, minlength=uq.size).astype(np.int64)
    n_high = np.bincount(inv, weights=lab >= min_label, minlength=uq.size).astype(np.int64)
    share = n_high / n_docs
    eligible = n_rel > 0
    thr = float(np.median(share[eligible])) if threshold == "median" else float(threshold)
    broad = eligible & (share >= thr)
    if threshold == "median":  # a strict median split keeps the groups apart when shares tie
        broad = eligible & (share > thr)
    group = np.where(~eligible, "none", np.where(broad, "broad", "focused")).astype(object)
    if balanced:
        nb, nf = int(np.sum(group == "broad")), int(np.sum(group == "focused"))
        big, size = ("focused", nb) if nf > nb else ("broad", nf)
        members = np.flatnonzero(group == big)
        rng = np.random.default_rng(seed)
        drop = rng.permutation(members)[size:]
        group[drop] = "none"
    order = np.argsort(first_row, kind="stable")  # queries in order of first appearance
    return pa.table(
        {
            "qid": labels["qid"].take(pa.array(first_row[order])),
            "n_docs": n_docs[order],
            "n_rel": n_rel[order],
            "n_high": n_high[order],
            "share": share[order],
            "group": pa.array(group[order].tolist(), pa.string()),
        }
    )


def random_document_splits(
    docs: pa.Table, *, n_replicates: int = 5, seed: int = 0, qid: str = "qid", docid: str = "docid"
) -> pa.Table:
    """Random left/right halves of every query's documents, ``n_replicates`` times.

    ``docs`` lists each (qid, docid) once. In replicate r (rng = ``default_rng([seed, r])``) each
    query's documents get a uniformly random order; the first ceil(n_q/2) are ``left``, the rest
    ``right``. Returns ``replicate, qid, docid, half``, n_replicates x rows.
    """
    _require(docs, (qid, docid), "the document table")
    seed = check_seed(seed, allow_none=False)
    if n_replicates < 1:
        raise InputError(f"`n_replicates` must be >= 1; got {n_replicates}")
    q = docs[qid].combine_chunks().dictionary_encode()
    codes = q.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = np.bincount(codes)
    out = []
    for r in range(n_replicates):
        rng = np.random.default_rng([seed, r])
        key = rng.random(codes.size)
        order = np.lexsort((key, codes))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        rank = np.empty(codes.size, dtype=np.int64)
        rank[order] = np.arange(codes.size) - starts[codes[order]]
        left = rank < (sizes[codes] + 1) // 2
        out.append(
            pa.table(
                {
                    "replicate": pa.array(np.full(codes.size, r), pa.int32()),
                    qid: docs[qid],
                    docid: docs[docid],
                    "half": pa.array(np.where(left, "left", "right").tolist(), pa.string()),
                }
            )
        )
    return pa.concat_tables(out)


def apply_document_split(
    table: pa.Table, splits: pa.Table, *, replicate: int, half: str, qid: str = "qid", docid: str = "docid"
) -> pa.Table:
    """Rows of ``table`` whose (qid, docid) is in ``half`` of ``replicate`` of ``splits``."""
    if half not in ("left", "right"):
        raise InputError(f"`half` must be 'left' or 'right'; got {half!r}")
    sel = splits.filter(pc.and_(pc.equal(splits["replicate"], replicate), pc.equal(splits["half"], half)))
    if sel.num_rows == 0:
        raise InputError(f"replicate {replicate} is not in the split table")
    keys = sel.select([qid, docid])
    joined = table.append_column("__row", pa.array(np.arange(table.num_rows))).join(
        keys, keys=[qid, docid], join_type="inner", use_threads=False
    )
    idx = np.sort(joined["__row"].to_numpy())
    return table.take(pa.array(idx))
