"""RBP's residual (``RBP-residual(p=..)``; Moffat & Zobel 2008) on TREC-style runs with unjudged
documents, against a naive reference that makes the unjudged documents and the tail fully
relevant and takes the difference of plain RBP values, for binary and graded RBP; tie-aware
values against enumeration of tie orders; the retrieved-universe REB of judged-flag measures
(the residual, Judged@k) against enumeration of the run's orders."""
from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

import naive
import uefast


def _data(seed: int, nq: int = 12, max_docs: int = 7):
    rng = np.random.default_rng(seed)
    run = {"qid": [], "docid": [], "score": []}
    qrels = {"qid": [], "docid": [], "label": []}
    for q in range(nq):
        n = int(rng.integers(1, max_docs + 1))
        for d in range(n):
            if rng.random() < 0.6 or d == 0:  # judged (query has a qrels row)
                qrels["qid"].append(str(q))
                qrels["docid"].append(f"d{d}")
                qrels["label"].append(int(rng.integers(0, 4)))
            if rng.random() < 0.8 or d == 0:  # retrieved
                run["qid"].append(str(q))
                run["docid"].append(f"d{d}")
                run["score"].append(float(rng.integers(0, 3)))  # ties
    return pa.table(run), pa.table(qrels)


def _per_query(run, qrels):
    """qid -> [(label or None, score)] in run row order."""
    lab = {(q, d): v for q, d, v in zip(*(qrels[c].to_pylist() for c in ("qid", "docid", "label")))}
    out: dict = {}
    for q, d, s in zip(*(run[c].to_pylist() for c in ("qid", "docid", "score"))):
        out.setdefault(q, []).append((lab.get((q, d)), s))
    return out


def _residual_by_difference(ranked, p, k, graded, top):
    """Upper RBP (unjudged -> fully relevant) minus RBP as judged, plus the tail p^K."""
    K = naive.cut(k, len(ranked))
    if graded:
        up = [top if v is None else v for v in ranked]
        low = [0 if v is None else v for v in ranked]
        diff = naive.rbp(up, p, k, gtype="lin", lmax=top) - naive.rbp(low, p, k, gtype="lin", lmax=top)
    else:
        up = [1 if v is None else int(v >= 1) for v in ranked]
        low = [0 if v is None else int(v >= 1) for v in ranked]
        diff = naive.rbp(up, p, k) - naive.rbp(low, p, k)
    return diff + p ** K


MEASURES = [("RBP-residual(p=0.8)", 0.8, None), ("RBP-residual(p=0.5)@3", 0.5, 3),
            ("RBPres(p=0.95)@10", 0.95, 10)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_residual_equals_the_naive_reference(seed):
    run, qrels = _data(seed)
    top = max(qrels["label"].to_pylist())
    res = uefast.evaluate(run, qrels, measures=[m for m, _, _ in MEASURES], ties="input",
                          queries="intersect").to_pylist()
    got = {(r["qid"], r["measure"]): r["value"] for r in res}
    for q, docs in _per_query(run, qrels).items():
        order = naive.rank_input([s for _, s in docs])
        ranked = [docs[i][0] for i in order]
        flags = [v is not None for v in ranked]
        for text, p, k in MEASURES:
            have = got[(q, str(uefast.parse_measure(text)))]
            want = naive.rbp_residual(flags, p, k)
            assert have == pytest.approx(want, abs=1e-12), (q, text, ranked)
            for graded in (False, True):  # the same bound for binary and graded RBP
                alt = _residual_by_difference(ranked, p, k, graded, top)
                assert have == pytest.approx(alt, abs=1e-12), (q, text, ranked, graded)


def test_residual_bounds_rbp_from_above():
    """RBP(p)@k <= RBP of any completion <= RBP(p)@k + residual: the residual is what remains."""
    run, qrels = _data(3)
    res = uefast.evaluate(run, qrels, measures=["RBP(p=0.8)", "RBP-residual(p=0.8)",
                                                "RBP(p=0.8,gain=lin)"], ties="input").to_pylist()
    by = {}
    for r in res:
        by.setdefault(r["qid"], {})[r["measure"]] = r["value"]
    for q, v in by.items():
        for name in map(str, uefast.parse_measures(["RBP(p=0.8)", "RBP(p=0.8,gain=lin)"])):
            assert 0.0 <= v[name] <= v[name] + v["RBP-residual(p=0.8)"] <= 1.0 + 1e-12, (q, v)


@pytest.mark.parametrize("seed", [0, 1])
def test_tie_aware_residual_and_retrieved_universe(seed):
    run, qrels = _data(seed)
    texts = ["RBP-residual(p=0.8)", "RBP-residual(p=0.5)@3", "Judged@3"]
    exp = uefast.evaluate(run, qrels, measures=texts, ties="expected",
                          reb_universe="retrieved").to_pylist()
    got = {(r["qid"], r["measure"]): r for r in exp}
    fns = {"RBP-residual(p=0.8)": lambda f: naive.rbp_residual(f, 0.8),
           "RBP-residual(p=0.5)@3": lambda f: naive.rbp_residual(f, 0.5, 3),
           "Judged@3": lambda f: sum(f[:3]) / 3}
    for q, docs in _per_query(run, qrels).items():
        flags = [int(v is not None) for v, _ in docs]
        scores = [s for _, s in docs]
        for text, fn in fns.items():
            row = got[(q, text)]
            tied = naive.expected_over_orders(fn, flags, naive.tie_consistent_orders(scores))
            assert row["value"] == pytest.approx(tied, abs=1e-12), (q, text, flags, scores)
            orders = itertools.permutations(range(len(flags)))
            reb = naive.expected_over_orders(fn, flags, orders)
            assert row["reb"] == pytest.approx(reb, abs=1e-12), (q, text, flags)


def test_residual_name_and_parameters():
    m = uefast.parse_measure("RBPres(p=0.9)@5")
    assert str(m) == "RBP-residual(p=0.9)@5" and uefast.parse_measure(str(m)) == m
    assert str(uefast.parse_measure("RBP-residual")) == "RBP-residual(p=0.8)"
    with pytest.raises(uefast.MeasureParseError, match="must be in"):
        uefast.parse_measure("RBP-residual(p=1.5)")


def test_collection_universe_reb():
    """reb_universe="collection": REB is the mean residual over the orders of a collection of N
    documents, the query's judged ones and N - J unjudged ones."""
    run, qrels = _data(4)
    N = 8
    res = uefast.evaluate(run, qrels, measures=["RBP-residual(p=0.5)@3", "RBP-residual(p=0.8)"],
                          reb_universe="collection", collection_size=N).to_pylist()
    n_judged: dict = {}
    for q in qrels["qid"].to_pylist():
        n_judged[q] = n_judged.get(q, 0) + 1
    for r in res:
        m = uefast.parse_measure(r["measure"])
        J = n_judged[r["qid"]]
        orders = set(itertools.permutations([1] * J + [0] * (N - J)))
        want = sum(naive.rbp_residual(list(o), m.param("p"), m.cutoff) for o in orders) / len(orders)
        assert r["reb"] == pytest.approx(want, abs=1e-12), (r["qid"], str(m), J)
