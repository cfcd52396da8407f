"""Diversity (subtopic) qrels: reading the files, and the per-topic arrays the measures use.

Formats (SPEC_diversity §1, §6; table in ``data_schemas/diversity_qrels.md``):

* TREC / ndeval: ``topic subtopic docno grade``, whitespace-separated (``#`` comment and blank
  lines skipped, as :func:`uefast.io.read_qrels`).
* EvALL (the RBU repository): five double-quoted, tab-separated fields
  ``"topic" "docno" "grade" "aspect" "aspect weight"``.

Loader rules (all seen in the TREC Web 2009-2014 files): negative grades (-2 = spam) become 0
(``negative="zero"``); subtopic ``0`` is an ordinary aspect id (2009 lists judged non-relevant
documents under it, the 2014 single-facet topics use it as their only aspect) and an aspect with
no relevant document is dropped when the topic is compiled (ndeval's ``actualSubtopics``);
a file that lists relevant pairs only (2010) takes its judged set from the ad hoc qrels
(``judged=``); a (topic, subtopic, docno) given twice is an error naming both lines.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uefast.diversity import _qrels_kernels as _qk
from uefast.errors import InputError
from uefast.inputs import column, numpy_view, to_arrow
from uefast.io._hash import first_duplicate, hash_keys, str_buffers
from uefast.io._scan import parse_integral

__all__ = ["read_qrels", "read_weights", "compile_qrels", "Topic", "DivQrels", "QRELS_SCHEMA"]

QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("subtopic", pa.string()), ("docid", pa.string()),
                          ("label", pa.int64())])
_NEGATIVE = ("zero", "keep", "error")
WEIGHT_TOL = 1e-6


def _lines_of(path) -> "object":
    from uefast.io.trec import _parse  # the shared line scanner (fields, line numbers, errors)

    return _parse(path, 5, min_fields=1, max_fields=None, layout="topic subtopic docno grade")


def _is_evall(path) -> bool:
    from uefast.io._scan import read_bytes

    buf = read_bytes(path)
    for line in bytes(buf[:4096]).splitlines():
        s = line.strip()
        if s and not s.startswith(b"#"):
            return s.startswith(b'"')
    return False


def read_qrels(path: str | os.PathLike, *, format: str = "auto", negative: str = "zero",
               duplicates: str = "error", judged: str | os.PathLike | None = None) -> pa.Table:
    """Read a diversity qrels file into a table ``qid, subtopic, docid, label`` (+ ``weight``).

    ``format``: ``"trec"`` (``topic subtopic docno grade``), ``"evall"`` (quoted, tab-separated
    ``"topic" "docno" "grade" "aspect" "weight"``; adds a float64 ``weight`` column) or ``"auto"``
    (EvALL when the first content line starts with ``"``). ``negative``: ``"zero"`` (default,
    -2 spam -> 0, as the ``qrels-for-ndeval`` files), ``"keep"`` or ``"error"``.
    ``duplicates``: ``"error"`` (default) for a (topic, subtopic, docno) given twice, naming both
    lines; ``"keep"`` keeps them (ndeval then counts both in its per-subtopic relevant counts).
    ``judged``: an ad hoc qrels file (``topic iter docno grade``) whose documents not in the
    diversity file are added as judged non-relevant (grade 0, subtopic = its second field), for
    files that list relevant pairs only (TREC 2010). Topic ids stay text.

    Raises :class:`InputError` naming file, line and text for a wrong field count, a grade that
    is not an integer, a negative grade with ``negative="error"``, a duplicate, a weight that is
    not a number; :func:`compile_qrels` checks that weights sum to 1.
    """
    if negative not in _NEGATIVE:
        raise InputError(f"`negative` must be one of {_NEGATIVE}, got {negative!r}")
    if duplicates not in ("error", "keep"):
        raise InputError(f"`duplicates` must be 'error' or 'keep', got {duplicates!r}")
    if format not in ("auto", "trec", "evall"):
        raise InputError(f"`format` must be 'auto', 'trec' or 'evall', got {format!r}")
    return read_qrels_parsed(path, format=format, negative=negative, duplicates=duplicates,
                             judged=judged)[0]


def read_qrels_parsed(path, *, format: str = "auto", negative: str = "zero",
                      duplicates: str = "error", judged=None):
    """:func:`read_qrels`, also returning the parsed lines (for errors naming lines) and the
    grade column's text: (table, parsed lines, grade text)."""
    if format == "auto":
        format = "evall" if _is_evall(path) else "trec"
    p = _lines_of(path)
    nf = p.nfields
    want = 4 if format == "trec" else 5
    bad = np.flatnonzero(nf != want) if format == "trec" else np.flatnonzero(nf < 5)
    if bad.size:
        r = int(bad[0])
        layout = ("topic subtopic docno grade" if format == "trec"
                  else '"topic" "docno" "grade" "aspect" "weight" (tab-separated)')
        raise p.error(r, f"expected {want} fields ({layout}), got {int(nf[r])}")
    cols = [p.col(j) for j in range(5 if format == "evall" else 4)]
    if format == "evall":
        cols = [_unquote(c, p, j) for j, c in enumerate(cols)]
        qid, docid, grade, sub, wcol = cols
    else:
        qid, sub, docid, grade = cols
    label = parse_integral(grade, path=p.path, what="grade", buf=p.buf, lineno=p.lineno,
                           line_start=p.line_start)
    neg = np.flatnonzero(label < 0)
    if neg.size and negative == "error":
        raise p.error(int(neg[0]), f"negative grade {int(label[neg[0]])}")
    if negative == "zero":
        label = np.maximum(label, 0)
    arrays = [qid, sub, docid, pa.array(label, pa.int64())]
    names = list(QRELS_SCHEMA.names)
    if format == "evall":
        try:
            w = pc.cast(wcol, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            r = _first_non_number(wcol)
            raise p.error(r, f"aspect weight {wcol[r].as_py()!r} is not a number") from None
        arrays.append(w)
        names.append("weight")
    table = pa.Table.from_arrays(arrays, names=names)
    if duplicates == "error":
        _check_unique(table, p)
    if format == "evall":
        try:
            _weight_map(qid, sub, numpy_view(w).astype(float))
        except InputError as exc:  # name the file and the topic's first line
            bad = str(exc).split("topic ")[1].split(" ")[0].strip("'")
            r = int(np.flatnonzero(numpy_view(pc.equal(qid, bad)))[0])
            raise p.error(r, str(exc)) from None
    if judged is not None:
        table = _add_judged(table, judged)
    return table, p, grade


def _first_non_number(arr: pa.Array) -> int:
    for i, v in enumerate(arr.to_pylist()):
        try:
            float(v)
        except ValueError:
            return i
    return 0


def _unquote(arr: pa.Array, p, j: int) -> pa.Array:
    quoted = numpy_view(pc.and_(pc.starts_with(arr, '"'), pc.ends_with(arr, '"')))
    quoted &= numpy_view(pc.utf8_length(arr)) >= 2
    if not quoted.all():
        r = int(np.flatnonzero(~quoted)[0])
        raise p.error(r, f"EvALL field {j + 1} {arr[r].as_py()!r} is not double-quoted")
    return pc.utf8_slice_codeunits(arr, 1, -1)


def _check_unique(table: pa.Table, p) -> None:
    sub = table["subtopic"].combine_chunks()
    code = numpy_view(pc.dictionary_encode(sub).indices).astype(np.int64)
    qo, qd = str_buffers(table["qid"].combine_chunks())
    do, dd = str_buffers(table["docid"].combine_chunks())
    h = hash_keys(code, qo, qd, do, dd)
    i, j = first_duplicate(h, code, qo, qd, do, dd)
    if j >= 0:
        raise p.error(int(j), f"(topic, subtopic, docno) judged twice (first at "
                              f"{p.path}:{int(p.lineno[i])})")


def _add_judged(table: pa.Table, path) -> pa.Table:
    from uefast.io.trec import read_qrels as read_adhoc

    adhoc = read_adhoc(path, duplicates="keep")
    from uefast.io.trec import _parse

    it = _parse(path, 4, min_fields=4, max_fields=4, layout="qid iter docno rel").col(1)
    key = pc.binary_join_element_wise(table["qid"], table["docid"], "\x00")
    akey = pc.binary_join_element_wise(adhoc["qid"], adhoc["docid"], "\x00")
    new = numpy_view(pc.invert(pc.is_in(akey, value_set=key.combine_chunks())))
    # one row per new (topic, docno): the first line that names it
    _, first = np.unique(np.asarray(akey.to_pylist(), dtype=object)[new], return_index=True)
    rows = np.flatnonzero(new)[np.sort(first)]
    take = pa.array(rows, pa.int64())
    extra = {"qid": adhoc["qid"].take(take), "subtopic": it.take(take),
             "docid": adhoc["docid"].take(take), "label": pa.array(np.zeros(rows.size, np.int64))}
    if "weight" in table.column_names:
        raise InputError("`judged` is for TREC-format files without weights")
    return pa.concat_tables([table, pa.table(extra, schema=QRELS_SCHEMA)])


def read_weights(path: str | os.PathLike) -> pa.Table:
    """Aspect weights (NTCIR intent probabilities) from ``topic subtopic weight`` lines, as a
    table ``qid, subtopic, weight``; errors name file and line."""
    from uefast.io.trec import _parse
    from uefast.io._scan import parse_numbers

    p = _parse(path, 3, min_fields=3, max_fields=3, layout="topic subtopic weight")
    w = parse_numbers(p.col(2), "float", path=p.path, what="weight", buf=p.buf,
                      lineno=p.lineno, line_start=p.line_start)
    bad = np.flatnonzero(~(np.asarray(w, dtype=float) >= 0))
    if bad.size:
        raise p.error(int(bad[0]), "weight must be >= 0")
    return pa.table({"qid": p.col(0), "subtopic": p.col(1), "weight": pa.array(w, pa.float64())})


# ------------------------------------------------------------------------------- compiled form
@dataclass
class Topic:
    """One topic's judgments: ``docids`` (judged documents, ascending by UTF-8 bytes, ndeval's
    order), ``grades`` (int64, n x m, grade of document i for active aspect j, 0 if not listed),
    ``aspects`` (active aspect ids: at least one document with grade >= 1; numeric order when all
    ids are integers, else bytewise), ``weights`` (float64, m, summing to 1: uniform 1/m, or the
    given weights renormalised over the active aspects), ``n_rel_pairs`` (int64, m: relevant
    judgments per aspect, ndeval's ``nrelSub``); ``cache``: per-topic results shared by the
    measures (ideal rankings)."""

    qid: str
    docids: np.ndarray
    grades: np.ndarray
    aspects: list
    weights: np.ndarray
    n_rel_pairs: np.ndarray
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        return int(self.docids.size)

    @property
    def m(self) -> int:
        return len(self.aspects)

    def rel(self, grade_map: str = "binary", gmax: str = "aspect") -> np.ndarray:
        """r(d,t) in [0, 1] (n x m) by ``grade_map`` (SPEC_diversity §1): ``binary`` J = [g >= 1];
        ``cascade`` (2^g - 1)/2^gmax; ``linear`` g/gmax; ``grade`` the raw grade. ``gmax``:
        ``"aspect"`` (max grade of that aspect in the topic, RBU.java) or ``"topic"``."""
        g = self.grades.astype(np.float64)
        if grade_map == "binary":
            return (self.grades >= 1).astype(np.float64)
        if grade_map == "grade":
            return g
        if g.size == 0:
            return g
        gm = g.max(axis=0) if gmax == "aspect" else np.full(g.shape[1], g.max())
        gm = np.where(gm > 0, gm, 1.0)
        if grade_map == "cascade":
            return (np.exp2(g) - 1.0) / np.exp2(gm)
        if grade_map == "linear":
            return g / gm
        raise InputError(f"grade map must be binary, cascade, linear or grade, got {grade_map!r}")


class DivQrels(dict):
    """``{qid: Topic}`` in the qrels' topic order. ``flat``: the same topics as the flat arrays
    (toff, aoff, goff, G, W, NR) of :func:`uefast.diversity.ia_fast.flat_topics`, in this order,
    as :func:`compile_qrels` built them (the topics are views of them); read-only, like the
    topics themselves."""

    flat = None


def _aspect_order(ids: list[str]) -> list[str]:
    try:
        return sorted(ids, key=lambda s: (int(s), s))
    except ValueError:
        return sorted(ids, key=lambda s: s.encode())


def compile_qrels(qrels, *, weights=None, qid: str = "qid", subtopic: str = "subtopic",
                  docid: str = "docid", label: str = "label") -> DivQrels:
    """Group a diversity qrels table (path, or table with ``qid, subtopic, docid, label`` and an
    optional ``weight`` column) into :class:`Topic` objects. ``weights``: a table or file of
    ``qid, subtopic, weight`` (overrides a ``weight`` column). Weights of a topic must sum to 1
    (within 1e-6) over the aspects listed; they are renormalised over the active aspects.
    Labels must be integers; negative labels count as 0."""
    if isinstance(qrels, (str, os.PathLike)) and not str(qrels).endswith(".parquet"):
        qrels = read_qrels(qrels)
    t = to_arrow(qrels, "qrels")
    qa = column(t, qid, "qrels").cast(pa.string())
    sa = column(t, subtopic, "qrels").cast(pa.string())
    da = column(t, docid, "qrels").cast(pa.string())
    lab = column(t, label, "qrels")
    if not (pa.types.is_integer(lab.type)):
        raise InputError(f"qrels: column {label!r} must hold integers, got {lab.type}")
    g = np.maximum(numpy_view(lab).astype(np.int64), 0)
    qenc = pc.dictionary_encode(qa.combine_chunks() if isinstance(qa, pa.ChunkedArray) else qa)
    senc = pc.dictionary_encode(sa.combine_chunks() if isinstance(sa, pa.ChunkedArray) else sa)
    qids, subs = qenc.dictionary, senc.dictionary  # first-appearance order
    qc = np.asarray(qenc.indices, np.int64)
    sc = np.asarray(senc.indices, np.int64)
    NS = len(subs)
    # every (topic, subtopic) pair that has a relevant document is an active aspect
    pair = qc * NS + sc
    active = np.zeros(len(qids) * NS, bool)
    active[pair[g >= 1]] = True
    sub_names = subs.to_pylist()
    wmap = None
    if weights is not None:
        wt = read_weights(weights) if isinstance(weights, (str, os.PathLike)) else to_arrow(weights, "weights")
        wq = column(wt, "qid", "weights").cast(pa.string())
        ws = column(wt, "subtopic", "weights").cast(pa.string())
        wmap = _weight_map(wq, ws, numpy_view(column(wt, "weight", "weights")).astype(float))
    elif "weight" in t.column_names:
        wmap = _weight_map(qa, sa, numpy_view(column(t, "weight", "qrels")).astype(float))
    denc = pc.dictionary_encode(da.combine_chunks() if isinstance(da, pa.ChunkedArray) else da)
    dix = np.asarray(denc.indices, np.int64)
    urank = np.empty(len(denc.dictionary), np.int64)  # docid's rank by bytes
    urank[np.asarray(pc.array_sort_indices(denc.dictionary), np.int64)] = np.arange(urank.size)
    order = _qk.sort_topic_doc(qc, len(qids), urank[dix], max(urank.size, 1))
    qs, dcode = qc[order], dix[order]
    new_doc = np.r_[True, (qs[1:] != qs[:-1]) | (dcode[1:] != dcode[:-1])] if order.size else np.zeros(0, bool)
    doc_ix = np.cumsum(new_doc) - 1  # global judged-document index, sorted by (topic, docid)
    ps = pair[order]
    x = _qk.first_duplicate_pair(doc_ix, sc[order], max(NS, 1))
    if x >= 0:
        i = int(order[x])
        raise InputError(f"qrels: (qid, subtopic, docid) = ({qa[i].as_py()!r}, {sa[i].as_py()!r}, "
                         f"{da[i].as_py()!r}) given twice (row {i})")
    first_doc = np.flatnonzero(new_doc)
    doc_names = denc.dictionary.take(pa.array(dcode[first_doc])).to_numpy(zero_copy_only=False).astype(object)
    doc_topic = qs[first_doc]
    tstart = np.searchsorted(doc_topic, np.arange(len(qids) + 1))
    return _build_topics(qids.to_pylist(), sub_names, active, NS, qs, ps, doc_ix, g[order],
                         doc_names, tstart, wmap)


def _sub_ranks(names: list[str]):
    """(int-parsable?, rank by (int(s), s) among those, rank by UTF-8 bytes) of each subtopic id:
    the two orders of :func:`_aspect_order`."""
    n = len(names)
    isint = np.zeros(n, bool)
    ints = []
    for i, s in enumerate(names):
        try:
            ints.append((int(s), s, i))
            isint[i] = True
        except ValueError:
            pass
    numrank = np.zeros(n, np.int64)
    for r, (_, _, i) in enumerate(sorted(ints)):
        numrank[i] = r
    byterank = np.empty(n, np.int64)
    byterank[sorted(range(n), key=lambda i: names[i].encode())] = np.arange(n)
    return isint, numrank, byterank


def _build_topics(qid_list, sub_names, active, NS, qs, ps, doc_ix, gs, doc_names, tstart, wmap):
    """The :class:`Topic` objects, from arrays over the qrels rows sorted by (topic, docid)
    (``qs`` topic code, ``ps`` = topic x NS + subtopic code, ``doc_ix`` global judged-document
    index, ``gs`` grade): aspect order, grade matrices, weights and relevant counts for all topics
    at once (one flat grade array; each topic's ``grades`` is a view of its block)."""
    T = len(qid_list)
    ap = np.flatnonzero(active)  # active (topic, subtopic) pairs, ascending
    at, asub = ap // NS, ap % NS
    isint, numrank, byterank = _sub_ranks(sub_names)
    textual = np.bincount(at, weights=~isint[asub], minlength=T) > 0  # a topic's order is bytewise
    o = np.lexsort((np.where(textual[at], byterank[asub], numrank[asub]), at))
    astart = np.searchsorted(at[o], np.arange(T + 1))
    m = np.diff(astart)
    jloc = np.empty(ap.size, np.int64)
    jloc[o] = np.arange(ap.size) - astart[at[o]]
    n = np.diff(tstart)
    goff = np.r_[0, np.cumsum(n * m)].astype(np.int64)
    G = np.zeros(int(goff[-1]), np.int64)
    nrel = np.zeros(ap.size, np.int64)
    _qk.scatter_grades(qs, ps, doc_ix, gs, ap, astart, jloc, tstart, m, goff, G, nrel)
    names = [sub_names[i] for i in asub[o]]
    W = np.repeat(1.0 / np.maximum(m, 1), m)
    out = DivQrels()
    ws = []
    for ti, qi in enumerate(qid_list):
        a0, a1 = int(tstart[ti]), int(tstart[ti + 1])
        p0, p1 = int(astart[ti]), int(astart[ti + 1])
        aspects = names[p0:p1]
        if wmap is None:
            w = W[p0:p1].copy()
        else:
            given = wmap.get(qi, {})
            missing = [a for a in aspects if a not in given]
            if missing:
                raise InputError(f"weights: topic {qi!r} has no weight for aspect {missing[0]!r}")
            w = np.array([given[a] for a in aspects], float)
            tot = w.sum()
            w = w / tot if tot > 0 else np.full(len(aspects), 1.0 / max(len(aspects), 1))
        ws.append(w)
        out[qi] = Topic(qi, doc_names[a0:a1], G[goff[ti]:goff[ti + 1]].reshape(a1 - a0, p1 - p0),
                        aspects, w, nrel[p0:p1].copy())
    if len(out) == T:  # a qid given twice would make the flat arrays disagree with the topics
        Wf = W if wmap is None else (np.concatenate(ws) if ws else np.zeros(0))
        out.flat = (np.asarray(tstart, np.int64), np.asarray(astart, np.int64), goff, G,
                    np.ascontiguousarray(Wf, np.float64), nrel.copy())
    return out


def _weight_map(q: pa.Array, s: pa.Array, w: np.ndarray) -> dict:
    """{qid: {subtopic: weight}} from rows (one weight per (qid, subtopic), checked equal where
    repeated; each topic's weights sum to 1 within 1e-6)."""
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        i = int(bad[0])
        raise InputError(f"weights: topic {q[i].as_py()!r} aspect {s[i].as_py()!r}: weight "
                         f"{float(w[i])!r} must be >= 0")
    key = pc.binary_join_element_wise(q, s, "\x00")
    uk = pc.unique(key)
    code = np.asarray(pc.index_in(key, value_set=uk), np.int64)
    first = np.full(len(uk), -1, np.int64)
    first[code[::-1]] = np.arange(code.size)[::-1]
    diff = np.flatnonzero(w != w[first[code]])
    if diff.size:
        i = int(diff[0])
        raise InputError(f"weights: topic {q[i].as_py()!r} aspect {s[i].as_py()!r} has two weights "
                         f"{float(w[first[code[i]]])!r}, {float(w[i])!r}")
    res: dict[str, dict[str, float]] = {}
    for qi, si, wi in zip(q.take(pa.array(first)).to_pylist(), s.take(pa.array(first)).to_pylist(),
                          w[first].tolist()):
        res.setdefault(qi, {})[si] = wi
    for qi, wsum in res.items():
        tot = sum(wsum.values())
        if abs(tot - 1.0) > WEIGHT_TOL:
            raise InputError(f"weights: the aspect weights of topic {qi!r} sum to {tot!r}, not 1")
    return res
