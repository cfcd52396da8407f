"""Time-biased gain (Smucker & Clarke, SIGIR 2012) beyond the registry's test body
(tests/test_registry.py checks value, tie-aware value, IUB and REB against tests/naive.py on
n <= 6): hand-computed values from the paper's formula and defaults, REB against enumeration at
n = 7 and against an independent hypergeometric sum on large lists and collections (where the
DP's depth bound is active), the reb universes, the parameters' parsing and the plan's limits."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
import uefast
from conftest import letor_table, naive_value
from uefast.errors import InputError, MeasureParseError
from uefast.measures._builtin import tbg_factors

# the paper's calibrated defaults (Smucker & Clarke 2012, Table 1 and section 4), length 1000
T1 = 4.4 + 0.64 * (0.018 * 1000 + 7.8)  # a relevant document: 20.912 s
T0 = 4.4 + 0.39 * (0.018 * 1000 + 7.8)  # a non-relevant one: 14.462 s
G = 0.64 * 0.77  # 0.4928


def _eval(labels_list, scores_list, measures, **kw):
    t = letor_table([(lab, {"s": sc}, None) for lab, sc in zip(labels_list, scores_list)])
    return {(r["qid"], r["measure"]): r for r in uefast.evaluate(t, measures=measures, **kw).to_pylist()}


def test_hand_computed_values_with_the_papers_defaults():
    # ranking: relevant, non-relevant, relevant, relevant (scores descending)
    rows = _eval([[1, 0, 1, 1]], [[4, 3, 2, 1]], ["TBG", "TBG@2", "TBG(h=100)@3"])
    d = lambda t, h=224.0: 2.0 ** (-t / h)  # noqa: E731  exp(-t ln2 / h) = 2^(-t/h)
    want = G * (1 + d(T1 + T0) + d(2 * T1 + T0))
    assert rows[(1, "TBG")]["value"] == pytest.approx(want, rel=1e-14)
    assert rows[(1, "TBG")]["value"] == pytest.approx(0.4928 * (1 + 0.89631 + 0.84015), abs=1e-5)
    assert rows[(1, "TBG@2")]["value"] == pytest.approx(G, rel=1e-14)
    assert rows[(1, "TBG(h=100.0)@3")]["value"] == pytest.approx(G * (1 + d(T1 + T0, 100)), rel=1e-14)
    # IUB: the three relevant documents first
    assert rows[(1, "TBG")]["iub"] == pytest.approx(G * (1 + d(T1) + d(2 * T1)), rel=1e-14)
    # REB over the 4!/(3!1!) = 4 distinct orders (the non-relevant document at rank 1..4)
    orders = [[0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]
    reb = sum(naive.tbg(o) for o in orders) / 4
    assert rows[(1, "TBG")]["reb"] == pytest.approx(reb, rel=1e-14)


def test_graded_labels_are_binary_at_rel():
    rows = _eval([[3, 1, 2]], [[3, 2, 1]], ["TBG", "TBG(rel=2)"])
    assert rows[(1, "TBG")]["value"] == pytest.approx(naive.tbg([1, 1, 1]), rel=1e-14)
    assert rows[(1, "TBG(rel=2)")]["value"] == pytest.approx(naive.tbg([1, 0, 1]), rel=1e-14)


@pytest.mark.parametrize("text", ["TBG", "TBG@3", "TBG(h=30,pc0=0.9)@5", "TBG(ts=0,length=10)"])
def test_reb_and_iub_match_enumeration_at_seven_documents(text):
    rng = np.random.default_rng(7)
    m = uefast.parse_measure(text)
    for _ in range(3):
        lab = rng.integers(0, 3, 7).tolist()
        rows = _eval([lab], [[1.0] * 7], [text], ties="expected")
        row = rows[(1, str(m))]
        vals = [naive_value(m, list(p), lab, 2) for p in itertools.permutations(lab)]
        assert row["reb"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), lab
        assert row["value"] == pytest.approx(row["reb"], abs=1e-12)  # all tied: value = REB
        assert row["iub"] == pytest.approx(max(vals), abs=1e-12), lab


def _reb_by_pmf(n, R, K, g, d1, d0):
    """g (R/n) sum_{p<K} sum_j P(J_p = j) d1^j d0^(p-j), J_p ~ Hypergeometric(n-1, R-1, p), the
    pmf of each j built along p by its own ratio (independent of the kernel's joint DP)."""
    A, B = R - 1, n - R
    total = 0.0
    for j in range(0, min(A, K - 1) + 1):
        # P(J_j = j) = [A]_j / [n-1]_j, then P_{p+1}(j) / P_p(j) = (p+1)/(p+1-j) (B-p+j)/(n-1-p)
        pj = 1.0
        for i in range(j):
            pj *= (A - i) / (n - 1 - i)
        ps = [pj]
        for p in range(j, K - 1):
            pj *= (p + 1) / (p + 1 - j) * max(B - p + j, 0) / (n - 1 - p)
            ps.append(pj)
        p_idx = np.arange(j, j + len(ps))
        total += float(np.sum(np.array(ps) * d1 ** j * d0 ** (p_idx - j)))
    return g * R / n * total


@pytest.mark.parametrize("text,n,R", [("TBG(h=20)", 3000, 40), ("TBG(h=20)@50", 3000, 40),
                                      ("TBG", 2000, 3), ("TBG(pc0=0.9)@700", 900, 300)])
def test_reb_of_long_lists_matches_an_independent_hypergeometric_sum(text, n, R):
    m = uefast.parse_measure(text)
    g, d1, d0 = tbg_factors(m)
    lab = [1] * R + [0] * (n - R)
    rows = _eval([lab], [list(range(n, 0, -1))], [text])
    K = min(m.cutoff or n, n, 1500)  # beyond 1500 positions the terms are below 1e-30
    want = _reb_by_pmf(n, R, K, g, d1, d0)
    assert rows[(1, str(m))]["reb"] == pytest.approx(want, rel=1e-11)
    assert rows[(1, str(m))]["value"] == pytest.approx(naive_value(m, lab, lab, 1), rel=1e-12)


def _trec(seed):
    rng = np.random.default_rng(seed)
    qrels = {"qid": [], "docid": [], "label": []}
    run = {"qid": [], "docid": [], "score": []}
    for q in range(5):
        n = int(rng.integers(2, 5))
        labels = rng.integers(0, 3, n).tolist()
        labels[0] = max(labels[0], 1)
        qrels["qid"] += [q] * n
        qrels["docid"] += list(range(n))
        qrels["label"] += labels
        docs = [d for d in range(n + 2) if rng.random() < 0.7] or [0]  # n, n+1: unjudged
        run["qid"] += [q] * len(docs)
        run["docid"] += docs
        run["score"] += rng.random(len(docs)).tolist()
    return pa.table(run), pa.table(qrels)


MEASURES = ["TBG", "TBG(h=20)@3", "TBG(rel=2,pc0=0.9)"]


@pytest.mark.parametrize("universe,N", [("retrieved", None), ("collection", 7)])
def test_reb_universes_match_enumeration(universe, N):
    run, qrels = _trec(3)
    kw = {"collection_size": N} if N else {}
    res = uefast.evaluate(run, qrels, measures=MEASURES, reb_universe=universe, **kw).to_pylist()
    lab = {(q, d): l for q, d, l in zip(*(qrels[c].to_pylist() for c in ("qid", "docid", "label")))}
    for r in res:
        q = r["qid"]
        m = uefast.parse_measure(r["measure"])
        judged = [l for (qq, _), l in lab.items() if qq == q]
        if universe == "retrieved":
            pool = [lab.get((q, d), 0) for qq, d in zip(run["qid"].to_pylist(),
                                                        run["docid"].to_pylist()) if qq == q]
        else:
            pool = judged + [0] * (N - len(judged))
        vals = [naive_value(m, list(p), judged, 2) for p in itertools.permutations(pool)]
        assert r["reb"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (q, str(m))


def test_collection_reb_of_a_large_collection():
    run, qrels = _trec(4)
    N = 25_000_000
    res = uefast.evaluate(run, qrels, measures=["TBG", "TBG@10"], reb_universe="collection",
                          collection_size=N).to_pylist()
    for r in res:
        m = uefast.parse_measure(r["measure"])
        g, d1, d0 = tbg_factors(m)
        R = sum(1 for (q, l) in zip(qrels["qid"].to_pylist(), qrels["label"].to_pylist())
                if q == r["qid"] and l >= 1)
        want = _reb_by_pmf(N, R, min(m.cutoff or N, 1500), g, d1, d0)
        assert r["reb"] == pytest.approx(want, rel=1e-11)
        assert 0.0 < r["reb"] < r["iub"]


@pytest.mark.parametrize("text,match", [
    ("TBG(h=0)", "`h` must be a finite number > 0"),
    ("TBG(pc1=1.5)", r"`pc1` must be in \[0, 1\]"),
    ("TBG(ts=-1)", "`ts` must be a finite number >= 0"),
    ("TBG(length=x)", "`length` must be a number"),
    ("TBG(halflife=3)", "unknown parameter `halflife`"),
])
def test_bad_parameters_are_refused(text, match):
    with pytest.raises(MeasureParseError, match=match):
        uefast.parse_measure(text)


def test_measure_strings_parse_back():
    for text in ["TBG", "TBG@10", "TBG(h=224)@10", "tbg(length=500,pc0=0.2)@5", "TBG(rel=2)"]:
        m = uefast.parse_measure(text)
        assert uefast.parse_measure(str(m)) == m
    assert str(uefast.parse_measure("TBG(h=224,ts=4.4)@10")) == "TBG@10"  # the defaults


def test_decay_beyond_float64_is_refused_when_planning():
    t = letor_table([([1, 0], {"s": [2.0, 1.0]}, None)])
    with pytest.raises(InputError, match=r"TBG\(h=0.01\).*half-lives"):
        uefast.evaluate(t, measures=["TBG(h=0.01)"])


# ------------------------------------------------------------------ per-document lengths (step 2)
# The engine computes TBG with one constant length. These tests settle the mathematics of the
# per-document version (docs/tbg.md, "Not done"): which order is ideal, and an exact O(n M) REB.
def _docs(rng, n):
    return [(int(rng.integers(0, 3)), int(rng.integers(0, 3000))) for _ in range(n)]


def _tbg_docs(docs, k=None, **kw):
    return naive.tbg([l for l, _ in docs], k, lengths=[x for _, x in docs], **kw)


@pytest.mark.parametrize("k", [None, 1, 3])
@pytest.mark.parametrize("kw", [{}, {"h": 20.0}, {"pc0": 0.95, "pc1": 0.1}])
def test_ideal_order_with_document_lengths_is_relevant_by_length_ascending(k, kw):
    """An exchange argument, checked by brute force: swapping adjacent relevant documents a, b
    changes the pair's gain from W g (1 + delta_b) to W g (1 + delta_a) and leaves the weight of
    everything after them (W delta_a delta_b) alone, so the shorter (larger delta) goes first; a
    non-relevant document before a relevant one turns W g into W delta_x g <= W g."""
    rng = np.random.default_rng(11)
    for _ in range(6):
        docs = _docs(rng, 6)
        best = max(_tbg_docs(list(p), k, **kw) for p in itertools.permutations(docs))
        ideal = sorted(docs, key=lambda d: (d[0] < 1, d[1]))  # relevant first, shortest first
        assert _tbg_docs(ideal, k, **kw) == pytest.approx(best, rel=1e-13), docs


def _reb_by_document_dp(docs, k=None, rel=1, h=224.0, ts=4.4, alpha=0.018, beta=7.8, pc1=0.64,
                        pc0=0.39, ps1=0.77):
    """E[TBG@k] over uniformly random orders, documents with their own decay factors delta_d:
    g sum_{p<K} F_n(p), F_j(m) = (1/j) sum_{d<=j relevant} e_m(delta of the other j-1) /
    C(j-1, m), E_j(m) = e_m(delta_1..delta_j) / C(j, m), one document at a time:
    F_{j+1}(m) = [(j-m) F_j(m) + m x F_j(m-1) + r E_j(m)] / (j+1),
    E_{j+1}(m) = [(j+1-m) E_j(m) + m x E_j(m-1)] / (j+1): convex combinations, O(n K)."""
    n = len(docs)
    K = cut(k, n)
    E = [1.0] + [0.0] * K
    F = [0.0] * (K + 1)
    for j, (lab, size) in enumerate(docs):
        r = lab >= rel
        x = math.exp(-(ts + (pc1 if r else pc0) * (alpha * size + beta)) * math.log(2) / h)
        for m in range(min(j + 1, K), -1, -1):
            F[m] = ((j - m) * F[m] + (m * x * F[m - 1] if m else 0.0) + (E[m] if r else 0.0)) / (j + 1)
            E[m] = ((j + 1 - m) * E[m] + (m * x * E[m - 1] if m else 0.0)) / (j + 1)
    return pc1 * ps1 * sum(F[:K])


def cut(k, n):
    return n if k is None or k > n else k


@pytest.mark.parametrize("k", [None, 2, 4])
def test_reb_with_document_lengths_by_the_document_dp_matches_enumeration(k):
    rng = np.random.default_rng(12)
    for n in (1, 2, 5, 7):
        docs = _docs(rng, n)
        vals = [_tbg_docs(list(p), k) for p in itertools.permutations(docs)]
        assert _reb_by_document_dp(docs, k) == pytest.approx(sum(vals) / len(vals), rel=1e-12,
                                                             abs=1e-15), docs


# ------------------------------------------------------------------ TBG(lengths=doc) in the engine
DOC = ["TBG(lengths=doc)", "TBG(lengths=doc)@3", "TBG(lengths=doc,h=20,rel=2)",
       "TBG(lengths=doc,pc0=0.9,length=10)@2"]


def _doc_queries(seed, count=8, max_n=6):
    """Random queries: labels 0..2, scores 0..2 (many ties), lengths 0..3000 or null."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(1, max_n + 1))
        lens = [None if rng.random() < 0.2 else int(rng.integers(0, 3000)) for _ in range(n)]
        out.append((rng.integers(0, 3, n).tolist(), rng.integers(0, 3, n).tolist(), lens))
    return out


def _doc_table(queries):
    cols = {"qid": [], "docid": [], "label": [], "doc_len": [], "s": []}
    for qi, (lab, sc, lens) in enumerate(queries):
        cols["qid"] += [qi + 1] * len(lab)
        cols["docid"] += list(range(len(lab)))
        cols["label"] += lab
        cols["doc_len"] += lens
        cols["s"] += [float(x) for x in sc]
    return pa.table(cols)


def _doc_value(m, docs):
    """The reference on ranked (label, length or None) pairs."""
    kw = {k: m.param(k) for k in ("h", "ts", "alpha", "beta", "pc1", "pc0", "ps1")}
    L = m.param("length")
    return naive.tbg([l for l, _ in docs], m.cutoff, m.param("rel") or 1,
                     lengths=[L if x is None else x for _, x in docs], **kw)


@pytest.mark.parametrize("ties", ["input", "expected"])
def test_per_document_lengths_value_iub_reb_against_enumeration(ties):
    queries = _doc_queries(21)
    res = uefast.evaluate(_doc_table(queries), measures=DOC, ties=ties).to_pylist()
    rows = {(r["qid"], r["measure"]): r for r in res}
    for qi, (lab, sc, lens) in enumerate(queries):
        docs = list(zip(lab, lens))
        for text in DOC:
            m = uefast.parse_measure(text)
            row = rows[(qi + 1, str(m))]
            if ties == "input":
                want = _doc_value(m, [docs[i] for i in naive.rank_input(sc)])
            else:
                orders = list(naive.tie_consistent_orders(sc))
                want = sum(_doc_value(m, [docs[i] for i in o]) for o in orders) / len(orders)
            assert row["value"] == pytest.approx(want, abs=1e-12), (text, docs, sc)
            vals = [_doc_value(m, list(p)) for p in itertools.permutations(docs)]
            assert row["reb"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (text, docs)
            assert row["iub"] == pytest.approx(max(vals), abs=1e-12), (text, docs)


def test_per_document_lengths_all_tied_scores_reb_and_long_lists():
    rng = np.random.default_rng(22)
    n = 1200  # above the depth bound M (about 900 with the defaults, 85 with h=20)
    lab = rng.integers(0, 2, n).tolist()
    lens = rng.integers(0, 4000, n).tolist()
    t = _doc_table([(lab, [1] * n, lens)])
    for text in ["TBG(lengths=doc)", "TBG(lengths=doc,h=20)", "TBG(lengths=doc)@40"]:
        m = uefast.parse_measure(text)
        (row,) = uefast.evaluate(t, measures=[text], ties="expected").to_pylist()
        kw = {k: m.param(k) for k in ("h", "ts", "alpha", "beta", "pc1", "pc0", "ps1")}
        want = _reb_by_document_dp(list(zip(lab, lens)), m.cutoff, **kw)  # full depth, no bound
        assert row["reb"] == pytest.approx(want, rel=1e-11)
        assert row["value"] == pytest.approx(row["reb"], rel=1e-11)


def _doc_trec(seed):
    rng = np.random.default_rng(seed)
    qrels = {"qid": [], "docid": [], "label": [], "doc_len": []}
    run = {"qid": [], "docid": [], "score": []}
    for q in range(5):
        n = int(rng.integers(2, 5))
        qrels["qid"] += [q] * n
        qrels["docid"] += list(range(n))
        qrels["label"] += rng.integers(0, 3, n).tolist()
        qrels["doc_len"] += [None if rng.random() < 0.2 else int(rng.integers(0, 3000))
                             for _ in range(n)]
        docs = [d for d in range(n + 2) if rng.random() < 0.75] or [0]  # n, n+1: unjudged
        run["qid"] += [q] * len(docs)
        run["docid"] += docs
        run["score"] += rng.integers(0, 3, len(docs)).astype(float).tolist()
    return pa.table(run), pa.table(qrels)


@pytest.mark.parametrize("universe", ["judged", "retrieved"])
@pytest.mark.parametrize("ties", ["trec_eval", "expected"])
def test_per_document_lengths_trec_style(universe, ties):
    """Lengths from the qrels; an unjudged document is non-relevant and `length` words long."""
    run, qrels = _doc_trec(23)
    measures = ["TBG(lengths=doc)", "TBG(lengths=doc,h=30)@2", "TBG(lengths=doc,judged=only)"]
    res = uefast.evaluate(run, qrels, measures=measures, ties=ties,
                          reb_universe=universe).to_pylist()
    # the same runs through the constant-length engine, each document's length made explicit:
    # one query at a time, judged documents by their lengths
    qd = {(q, d): (l, x) for q, d, l, x in zip(*(qrels[c].to_pylist()
                                                   for c in ("qid", "docid", "label", "doc_len")))}
    for r in res:
        m = uefast.parse_measure(r["measure"])
        q = r["qid"]
        rows = [(d, s) for qq, d, s in zip(*(run[c].to_pylist() for c in ("qid", "docid", "score")))
                if qq == q]
        if m.param("judged") == "only":
            rows = [(d, s) for d, s in rows if (q, d) in qd]
        docs = [qd.get((q, d), (0, None)) for d, _ in rows]
        judged = [v for (qq, _), v in qd.items() if qq == q]
        if ties == "expected":
            orders = list(naive.tie_consistent_orders([s for _, s in rows]))
        else:  # trec_eval: score descending, then docid descending as strings
            orders = [naive.rank_trec_eval([s for _, s in rows], [d for d, _ in rows])]
        want = sum(_doc_value(m, [docs[i] for i in o]) for o in orders) / len(orders)
        assert r["value"] == pytest.approx(want, abs=1e-12), (q, str(m))
        pool = docs if universe == "retrieved" else judged
        vals = [_doc_value(m, list(p)) for p in itertools.permutations(pool)]
        assert r["reb"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (q, str(m))
        best = max(_doc_value(m, list(p)) for p in itertools.permutations(judged))
        assert r["iub"] == pytest.approx(best, abs=1e-12), (q, str(m))


def test_per_document_lengths_refusals_and_fallback():
    run, qrels = _doc_trec(24)
    with pytest.raises(InputError, match="REB over a collection is not available"):
        uefast.evaluate(run, qrels, measures=["TBG(lengths=doc)"], reb_universe="collection",
                        collection_size=100)
    bad = qrels.set_column(3, "doc_len", pa.array([5, -1] + [1] * (qrels.num_rows - 2)))
    with pytest.raises(uefast.errors.RowError, match="finite lengths >= 0, got -1.0 at row 1"):
        uefast.evaluate(run, qrels=bad, measures=["TBG(lengths=doc)"])
    text = qrels.set_column(3, "doc_len", pa.array(["x"] * qrels.num_rows))
    with pytest.raises(InputError, match="must hold numbers"):
        uefast.evaluate(run, qrels=text, measures=["TBG(lengths=doc)"])
    with pytest.raises(InputError, match="reads each document's length"):
        uefast.engine.plan_measures([uefast.parse_measure("TBG(lengths=doc)")])
    # no doc_len column: a warning, and every document takes the constant length
    plain = qrels.drop_columns(["doc_len"])
    with pytest.warns(UserWarning, match="no column 'doc_len'"):
        a = uefast.evaluate(run, plain, measures=["TBG(lengths=doc)"]).to_pylist()
    b = uefast.evaluate(run, plain, measures=["TBG"]).to_pylist()
    for x, y in zip(a, b):
        assert (x["value"], x["iub"], x["reb"]) == pytest.approx((y["value"], y["iub"], y["reb"]),
                                                                 abs=1e-12)


def test_streamed_input_gives_the_same_tbg_and_refuses_per_document_lengths():
    queries = _doc_queries(25)
    t = _doc_table(queries).drop_columns(["doc_len"])
    measures = ["TBG", "TBG(h=20)@3"]
    want = uefast.evaluate(t, measures=measures).to_pylist()
    got = uefast.evaluate(pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=7)),
                          measures=measures).to_pylist()
    key = lambda r: (r["qid"], r["measure"])  # noqa: E731
    for a, b in zip(sorted(want, key=key), sorted(got, key=key)):
        assert (a["value"], a["iub"], a["reb"]) == pytest.approx((b["value"], b["iub"], b["reb"]),
                                                                 abs=1e-12)
    with pytest.raises(InputError, match="streamed input does not carry it"):
        uefast.evaluate(pa.RecordBatchReader.from_batches(t.schema, t.to_batches()),
                        measures=["TBG(lengths=doc)"])
