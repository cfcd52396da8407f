"""ndeval v4.5 (TREC Web 2010-2014 diversity evaluation), re-derived: the same values, bit for bit.

The 21 per-topic values of ``ndeval.c`` (Clarke, TREC; as compiled in ``pyndeval`` 0.0.8), with
J(d,t) = [grade >= 1] over the *active* aspects (at least one relevant document), |T| of them,
aspects visited in increasing subtopic number, a(i) = sum_t J(d_i,t) (1-alpha)^{c(i,t)} the
novelty gain at rank i (c = earlier documents on t):

* ``alpha-DCG@k`` = sum_{i<=k} a(i)/log2(i+1) / (|T| sum_{i<=k} (1-alpha)^{i-1}/log2(i+1))
  ("ideal ideal" normaliser; k = 1 is *not* normalised, an ndeval quirk kept here);
* ``ERR-IA@k`` = sum_{i<=k} a(i)/i / (|T| sum_{i<=k} (1-alpha)^{i-1}/i) (k = 1 likewise);
* ``NRBP`` = (1-(1-alpha)beta)/|T| sum_i beta^{i-1} a(i) over the whole run;
* ``alpha-nDCG@k``, ``nERR-IA@k``, ``nNRBP``: divided by the value of the greedy ideal ranking
  (each rank takes the judged document of largest a(i), ties to the larger docno by bytes); the
  two @k ones are 0 when the run's alpha-DCG@k is 0; nNRBP is 0/0 = NaN for a topic without a
  relevant document (ndeval prints ``-nan``);
* ``MAP-IA`` = (1/|T|) sum_t AP_t with R_t = relevant judgments of t;
* ``P-IA@k`` = sum_{i<=k} sum_t J(d_i,t) / (k |T|) (k even past the end of the run);
* ``strec@k`` = |{t: some d_i, i <= k, has J(d_i,t) = 1}| / |T|.

Every sum is taken in ndeval's order with its operations (discounts log(2)/log(i+1), the
cumulative sums then the division), so the doubles are those of ndeval: SPEC_diversity §2.1, §2.3.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

__all__ = ["NdevalQrels", "NDEVAL_COLUMNS", "ndeval_scores", "build_ndeval_qrels", "DEPTH"]

DEPTH = 20
NDEVAL_COLUMNS = (
    "ERR-IA@5", "ERR-IA@10", "ERR-IA@20", "nERR-IA@5", "nERR-IA@10", "nERR-IA@20",
    "alpha-DCG@5", "alpha-DCG@10", "alpha-DCG@20", "alpha-nDCG@5", "alpha-nDCG@10", "alpha-nDCG@20",
    "NRBP", "nNRBP", "MAP-IA", "P-IA@5", "P-IA@10", "P-IA@20", "strec@5", "strec@10", "strec@20",
)
# column blocks of the kernel's output row: 6 arrays of `depth` values, then NRBP, nNRBP, MAP-IA
ERR, NERR, DCG, NDCG, PREC, STREC = range(6)


def discounts(depth: int) -> np.ndarray:
    """ndeval's ``discount(i)``: 1 at i = 0, log(2)/log(i + 2) after (C's ``log``)."""
    return np.array([1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, depth)])


@nb.njit(cache=True, nogil=True)
def _gains(rows, J, m, alpha, out):
    """a(i) of every rank: J rows (-1 unjudged), gains multiplied by (1 - alpha) per use."""
    g = np.ones(m)
    for i in range(rows.size):
        r = rows[i]
        s = 0.0
        if r >= 0:
            for j in range(m):
                if J[r, j]:
                    s += g[j]
                    g[j] *= (1.0 - alpha)
        out[i] = s


@nb.njit(cache=True, nogil=True)
def _ideal_rows(J, m, alpha):
    """ndeval's greedy ideal over the documents relevant to some aspect (the others add 0 and
    come last in ndeval too): at each rank the largest gain, ties to the later row (rows are in
    ascending docno order, ndeval breaks ties to the larger docno)."""
    n = J.shape[0]
    cand = np.empty(n, np.int64)
    c = 0
    for r in range(n):
        for j in range(m):
            if J[r, j]:
                cand[c] = r
                c += 1
                break
    g = np.ones(m)
    used = np.zeros(c, np.bool_)
    order = np.empty(c, np.int64)
    for rank in range(c):
        where = -1
        best = 0.0
        for k in range(c):
            if used[k]:
                continue
            r = cand[k]
            s = 0.0
            for j in range(m):
                if J[r, j]:
                    s += g[j]
            if where == -1 or s >= best:
                best = s
                where = k
        used[where] = True
        r = cand[where]
        order[rank] = r
        for j in range(m):
            if J[r, j]:
                g[j] *= (1.0 - alpha)
    return order


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _curves(a, n_act, alpha, beta, disc, depth, dcg, err):
    """ndeval's computeDCG / computeERR (cumulative, ideal-ideal normalised from index 1) and
    computeNRBP of gains ``a``; returns NRBP."""
    for i in range(depth):
        dcg[i] = 0.0
        err[i] = 0.0
    if n_act == 0:
        return 0.0
    L = min(depth, a.size)
    for i in range(L):
        dcg[i] = a[i] * disc[i]
        err[i] = a[i] / float(i + 1)
    idd = np.empty(depth)
    ide = np.empty(depth)
    gain = float(n_act)
    for i in range(depth):
        idd[i] = gain * disc[i]
        ide[i] = gain / float(i + 1)
        gain *= (1.0 - alpha)
    for i in range(1, depth):
        dcg[i] += dcg[i - 1]
        idd[i] += idd[i - 1]
        err[i] += err[i - 1]
        ide[i] += ide[i - 1]
    for i in range(1, depth):
        dcg[i] /= idd[i]
        err[i] /= ide[i]
    nrbp = 0.0
    decay = 1.0
    for i in range(a.size):
        nrbp += a[i] * decay
        decay *= beta
    return nrbp * ((1 - (1 - alpha) * beta) / n_act)


@nb.njit(cache=True, nogil=True)
def _ideal_pass(J, roff, m, alpha, beta, disc, depth, idcg, ierr, inrbp):
    for t in range(m.size):
        Jt = J[roff[t]:roff[t + 1]]
        order = _ideal_rows(Jt, m[t], alpha)
        a = np.empty(order.size)
        _gains(order, Jt, m[t], alpha, a)
        inrbp[t] = _curves(a, m[t], alpha, beta, disc, depth, idcg[t], ierr[t])


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _run_pass(rows, soff, stopic, J, roff, m, nrel, alpha, beta, disc, depth, idcg, ierr, inrbp,
              out):
    """One output row per segment (a topic of a run): rows are qrels rows local to the topic's
    block (-1 unjudged) in rank order."""
    w = 6 * depth
    for s in range(stopic.size):
        t = stopic[s]
        mt = m[t]
        Jt = J[roff[t]:roff[t + 1]]
        seg = rows[soff[s]:soff[s + 1]]
        o = out[s]
        for i in range(w + 3):
            o[i] = 0.0
        a = np.empty(seg.size)
        _gains(seg, Jt, mt, alpha, a)
        dcg = o[DCG * depth:(DCG + 1) * depth]
        err = o[ERR * depth:(ERR + 1) * depth]
        nrbp = _curves(a, mt, alpha, beta, disc, depth, dcg, err)
        o[w] = nrbp
        for i in range(depth):
            if dcg[i] != 0.0:
                o[NDCG * depth + i] = dcg[i] / idcg[t, i]
                o[NERR * depth + i] = err[i] / ierr[t, i]
        o[w + 1] = nrbp / inrbp[t]
        if mt == 0:
            continue
        seen = np.zeros(mt, np.bool_)
        cnt = np.zeros(mt, np.int64)
        tot = np.zeros(mt)
        covered = 0
        pairs = 0
        for i in range(seg.size):
            r = seg[i]
            if r >= 0:
                for j in range(mt):
                    if Jt[r, j]:
                        if i < depth:
                            pairs += 1
                            if not seen[j]:
                                seen[j] = True
                                covered += 1
                        cnt[j] += 1
                        tot[j] += cnt[j] / float(i + 1)
            if i < depth:
                o[PREC * depth + i] = float(pairs) / float((i + 1) * mt)
                o[STREC * depth + i] = float(covered) / float(mt)
        for i in range(min(seg.size, depth), depth):
            o[PREC * depth + i] = float(pairs) / float((i + 1) * mt)
            o[STREC * depth + i] = float(covered) / float(mt)
        mapia = 0.0
        for j in range(mt):
            if nrel[t, j]:
                mapia += tot[j] / float(nrel[t, j])
        o[w + 2] = mapia / mt


@dataclass
class NdevalQrels:
    """Qrels compiled for :func:`ndeval_scores`: topic ``qids`` (their order), per-topic blocks of
    binary judgments ``J`` (rows = judged docs ascending by bytes, columns = active aspects in
    subtopic order, padded), ``roff`` row offsets, ``m`` active aspects, ``nrel`` relevant
    judgments per aspect, ``docids`` per topic, and the greedy ideal's curves."""

    qids: list
    docids: list
    J: np.ndarray
    roff: np.ndarray
    m: np.ndarray
    nrel: np.ndarray
    alpha: float
    beta: float
    depth: int
    idcg: np.ndarray
    ierr: np.ndarray
    inrbp: np.ndarray
    join_index: tuple | None = None
    scan_table: tuple | None = None
    topic_numbers: tuple | None = None

    def index(self) -> dict:
        return {q: i for i, q in enumerate(self.qids)}

    def topic_index(self, topics: np.ndarray) -> np.ndarray:
        """Index of each topic number in ``qids`` (-1 when absent); the sorted numbers are kept."""
        if self.topic_numbers is None:
            num = np.array([int(q) for q in self.qids], np.int64)
            order = np.argsort(num, kind="stable")
            self.topic_numbers = (num[order], order)
        num, order = self.topic_numbers
        pos = np.minimum(np.searchsorted(num, topics), max(num.size - 1, 0))
        hit = num[pos] == topics if num.size else np.zeros(topics.size, bool)
        return np.where(hit, order[pos] if num.size else -1, -1).astype(np.int64)


def build_ndeval_qrels(topics, alpha: float = 0.5, beta: float = 0.5, depth: int = DEPTH,
                       rel_level: int = 1) -> NdevalQrels:
    """Compile ``{qid: Topic}`` (:func:`uefast.diversity.compile_qrels`) for ndeval; documents
    relevant means grade >= ``rel_level``; ``depth`` >= 20 is the deepest cutoff."""
    qids = list(topics)
    tl = [topics[q] for q in qids]
    mmax = max([t.m for t in tl] + [1])
    n = sum(t.n for t in tl)
    J = np.zeros((n, mmax), np.uint8)
    roff = np.zeros(len(tl) + 1, np.int64)
    nrel = np.zeros((len(tl), mmax), np.int64)
    m = np.zeros(len(tl), np.int64)
    for i, t in enumerate(tl):
        roff[i + 1] = roff[i] + t.n
        rel = t.grades >= rel_level
        keep = np.flatnonzero(rel.any(axis=0)) if rel_level != 1 else np.arange(t.m)
        m[i] = keep.size
        J[roff[i]:roff[i + 1], :keep.size] = rel[:, keep]
        nrel[i, :keep.size] = rel[:, keep].sum(axis=0) if rel_level != 1 else t.n_rel_pairs
    return ndeval_qrels_from_arrays(qids, [t.docids for t in tl], J, roff, m, nrel, alpha, beta, depth)


def ndeval_qrels_from_arrays(qids, docids, J, roff, m, nrel, alpha=0.5, beta=0.5,
                             depth=DEPTH) -> NdevalQrels:
    """:class:`NdevalQrels` from its arrays (the greedy ideals computed here)."""
    depth = max(int(depth), DEPTH)
    T = len(qids)
    idcg = np.zeros((T, depth))
    ierr = np.zeros((T, depth))
    inrbp = np.zeros(T)
    _ideal_pass(J, roff, m, float(alpha), float(beta), discounts(depth), depth, idcg, ierr, inrbp)
    return NdevalQrels(list(qids), docids, J, roff, m, nrel, float(alpha), float(beta), depth,
                       idcg, ierr, inrbp)


def ndeval_scores(nq: NdevalQrels, rows: np.ndarray, soff: np.ndarray,
                  stopic: np.ndarray) -> np.ndarray:
    """Per-segment ndeval values: ``rows`` (int64, topic-local qrels row per rank, -1 unjudged),
    segment ``s`` = rows[soff[s]:soff[s+1]] of topic index ``stopic[s]``. Returns (S, 6*depth+3):
    blocks ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG, P-IA, strec (index k-1 = cutoff k), then NRBP,
    nNRBP, MAP-IA."""
    out = np.empty((stopic.size, 6 * nq.depth + 3))
    with np.errstate(all="ignore"):
        _run_pass(np.ascontiguousarray(rows, np.int64), np.ascontiguousarray(soff, np.int64),
                  np.ascontiguousarray(stopic, np.int64), nq.J, nq.roff, nq.m, nq.nrel, nq.alpha,
                  nq.beta, discounts(nq.depth), nq.depth, nq.idcg, nq.ierr, nq.inrbp, out)
    return out


def column_index(name: str, depth: int) -> int:
    """Column of :func:`ndeval_scores`' output for an ndeval measure name (``ERR-IA@5``,
    ``NRBP``, ...)."""
    base, _, k = name.partition("@")
    tail = {"NRBP": 0, "nNRBP": 1, "MAP-IA": 2}
    if base in tail:
        return 6 * depth + tail[base]
    block = {"ERR-IA": ERR, "nERR-IA": NERR, "alpha-DCG": DCG, "alpha-nDCG": NDCG, "P-IA": PREC,
             "strec": STREC}[base]
    return block * depth + int(k) - 1


def join_rows(nq: NdevalQrels, topic_idx: np.ndarray, docids) -> np.ndarray:
    """Topic-local qrels row of each (topic index, docid) pair, -1 if not judged (vectorised:
    one sorted key array over all judged documents)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if nq.join_index is None:  # built once per qrels, reused by every run
        qd = pa.array(np.concatenate(nq.docids) if nq.docids else np.array([], object), pa.string())
        uniq = pc.unique(qd)
        qcode = np.asarray(pc.index_in(qd, value_set=uniq), np.int64)
        qtop = np.repeat(np.arange(len(nq.qids), dtype=np.int64), np.diff(nq.roff))
        U = max(len(uniq), 1)
        qkey = qtop * U + qcode
        local = np.arange(qkey.size, dtype=np.int64) - nq.roff[qtop]
        order = np.argsort(qkey, kind="stable")
        nq.join_index = (uniq, U, qkey[order], local[order])
    uniq, U, qkey, local = nq.join_index
    rc = pc.index_in(pa.array(docids, pa.string()) if not isinstance(docids, (pa.Array, pa.ChunkedArray))
                     else docids, value_set=uniq)
    rc = np.asarray(rc.fill_null(-1), np.int64)
    out = np.full(rc.size, -1, np.int64)
    ok = (rc >= 0) & (topic_idx >= 0)
    key = topic_idx[ok] * U + rc[ok]
    pos = np.searchsorted(qkey, key)
    pos = np.minimum(pos, max(qkey.size - 1, 0))
    hit = qkey[pos] == key if qkey.size else np.zeros(key.size, bool)
    res = np.where(hit, local[pos] if qkey.size else -1, -1)
    out[np.flatnonzero(ok)] = res
    return out
