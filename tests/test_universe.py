"""REB universes (``reb_universe``): judged, retrieved, collection -- each against enumeration."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pyarrow as pa
import pytest

import uefast
from conftest import naive_value
from uefast.errors import InputError

CLOSED = ["nDCG@3", "nDCG", "DCG(gain=exp)@2", "P@3", "R@2", "Rprec", "SP@3", "AP", "AP@2",
          "RBP(p=0.6)", "RBP(p=0.5,gain=lin)@3", "RR@3", "Success@2", "F@3", "E(beta=2)@2"]


def _trec(seed: int):
    rng = np.random.default_rng(seed)
    qrels = {"qid": [], "docid": [], "label": []}
    run = {"qid": [], "docid": [], "score": []}
    for q in range(6):
        n = int(rng.integers(2, 6))
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


def _judged(qrels, q):
    return [l for qq, l in zip(qrels["qid"].to_pylist(), qrels["label"].to_pylist()) if qq == q]


@pytest.mark.parametrize("seed", [0, 1])
def test_retrieved_universe_is_the_mean_over_orders_of_the_run(seed):
    run, qrels = _trec(seed)
    res = uefast.evaluate(run, qrels, measures=CLOSED + ["ERR@3", "Q", "Pplus", "NCU",
                                                     "NCU(nu=p)@2", "JKnDCG(logb=3)@3", "Pmeasure",
                                                     "NCUrb", "NCUrb(nu=p,gamma=0.5)@2",
                                                     "ERR(gain=lin)@3"],
                          reb_universe="retrieved").to_pylist()
    lab = {(q, d): l for q, d, l in zip(*(qrels[c].to_pylist() for c in ("qid", "docid", "label")))}
    lmax = max(qrels["label"].to_pylist())
    for r in res:
        q = r["qid"]
        m = uefast.parse_measure(r["measure"])
        got = [lab.get((q, d), 0) for qq, d in zip(run["qid"].to_pylist(), run["docid"].to_pylist())
               if qq == q]
        judged = _judged(qrels, q)
        vals = [naive_value(m, list(p), judged, lmax) for p in itertools.permutations(got)]
        assert r["reb"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (q, str(m))


@pytest.mark.parametrize("N", [6, 8])
def test_collection_universe_is_the_mean_over_orders_of_the_collection(N):
    run, qrels = _trec(2)
    res = uefast.evaluate(run, qrels, measures=CLOSED + ["JKnDCG(logb=3)@3"],
                          reb_universe="collection", collection_size=N)
    settings = json.loads(res.schema.metadata[b"uefast.settings"])
    assert settings["reb_universe"] == "collection" and settings["collection_size"] == N
    lmax = max(qrels["label"].to_pylist())
    for r in res.to_pylist():
        m = uefast.parse_measure(r["measure"])
        judged = _judged(qrels, r["qid"])
        coll = judged + [0] * (N - len(judged))
        # every order of N documents: the mean over the distinct orders of the label multiset
        # (each appears equally often)
        orders = set(itertools.permutations(coll))
        want = sum(naive_value(m, list(o), judged, lmax) for o in orders) / len(orders)
        assert r["reb"] == pytest.approx(want, abs=1e-12), (r["qid"], str(m))


def test_collection_universe_closed_forms_for_a_large_collection():
    run, qrels = _trec(3)
    N = 25_000_000
    res = uefast.evaluate(run, qrels, measures=["P@10", "AP", "nDCG", "R@1000", "RR@100"],
                          reb_universe="collection", collection_size=N).to_pylist()
    for r in res:
        judged = _judged(qrels, r["qid"])
        nrel = sum(1 for x in judged if x >= 1)
        if r["measure"] == "P@10":
            assert r["reb"] == pytest.approx(10 * nrel / (N * 10), rel=1e-12)
        if r["measure"] == "R@1000":
            assert r["reb"] == pytest.approx(1000 / N, rel=1e-12)
        if r["measure"] == "AP":  # p + (1 - p)(H_N - 1)/(N - 1)
            p = nrel / N
            h = float(np.sum(1.0 / np.arange(1, N + 1, dtype=np.float64)))
            assert r["reb"] == pytest.approx(p + (1 - p) * (h - 1) / (N - 1), rel=1e-9)
        if r["measure"] == "nDCG":
            g = sum(judged) / N
            d = float(np.sum(1.0 / np.log2(np.arange(2, N + 2, dtype=np.float64))))
            ideal = sorted(judged, reverse=True)
            idcg = sum(x / np.log2(i + 2) for i, x in enumerate(ideal))
            assert r["reb"] == pytest.approx(g * d / idcg, rel=1e-9)
        assert 0.0 <= r["reb"] <= r["iub"]


@pytest.mark.parametrize("kw,match", [
    (dict(reb_universe="collection"), "needs `collection_size`"),
    (dict(reb_universe="collection", collection_size=0), "needs `collection_size`"),
    (dict(reb_universe="judged", collection_size=10), "is for reb_universe='collection'"),
    (dict(reb_universe="pool"), "must be one of"),
    (dict(reb_universe="collection", collection_size=100, measures=["ERR@10"]),
     "'ERR@10': REB over a collection"),
    (dict(reb_universe="collection", collection_size=100, measures=["RR"]), "with a cutoff"),
    (dict(reb_universe="collection", collection_size=2, measures=["P@5"]), "smaller than"),
])
def test_universe_errors(kw, match):
    run, qrels = _trec(0)
    kw.setdefault("measures", ["P@5"])
    with pytest.raises(InputError, match=match):
        uefast.evaluate(run, qrels, **kw)


def test_judged_is_the_default_and_recorded():
    run, qrels = _trec(0)
    a = uefast.evaluate(run, qrels, measures=["AP"])
    b = uefast.evaluate(run, qrels, measures=["AP"], reb_universe="judged")
    assert a.equals(b)
    assert json.loads(a.schema.metadata[b"uefast.settings"])["reb_universe"] == "judged"


@pytest.mark.parametrize("ties", ["trec_eval", "expected"])
def test_judged_only_is_the_measure_on_the_condensed_run(ties):
    """AP(judged=only) etc. equal the plain measures on the run with its unjudged rows removed
    (the condensed list of Sakai 2007), for every tie policy; bpref is always condensed."""
    run, qrels = _trec(4)
    judged = set(zip(qrels["qid"].to_pylist(), qrels["docid"].to_pylist()))
    keep = [(q, d) in judged for q, d in zip(run["qid"].to_pylist(), run["docid"].to_pylist())]
    condensed = run.filter(pa.array(keep))
    base = ["AP", "nDCG@3", "Q", "P@2", "RR"]
    got = uefast.evaluate(run, qrels, measures=[f"{m.split('@')[0]}(judged=only)"
                                                + ("@" + m.split("@")[1] if "@" in m else "")
                                                for m in base] + ["bpref"], ties=ties).to_pylist()
    want = uefast.evaluate(condensed, qrels, measures=base + ["bpref"], ties=ties).to_pylist()
    w = {(r["qid"], r["measure"]): r for r in want}
    plain = {(r["qid"], r["measure"]): r for r in uefast.evaluate(
        run, qrels, measures=base, ties=ties).to_pylist()}
    differs = 0
    for r in got:
        name = r["measure"].replace("(judged=only)", "")
        ref = w[(r["qid"], name)]
        assert r["value"] == pytest.approx(ref["value"], abs=1e-12), (r["qid"], r["measure"])
        assert r["iub"] == ref["iub"] and r["reb"] == ref["reb"]
        if name != "bpref":
            differs += abs(plain[(r["qid"], name)]["value"] - r["value"]) > 1e-12
    assert differs > 0  # unjudged documents matter on this data


@pytest.mark.parametrize("ties", ["trec_eval", "expected"])
def test_judged_at_k_counts_judged_documents_of_the_top_k(ties):
    run, qrels = _trec(5)
    judged = set(zip(qrels["qid"].to_pylist(), qrels["docid"].to_pylist()))
    res = uefast.evaluate(run, qrels, measures=["Judged@2", "Judged@4", "P@2"], ties=ties)
    # the same as P@k of a qrels judging every judged document relevant (label 1), unjudged 0
    ones = qrels.set_column(2, "label", pa.array([1] * qrels.num_rows))
    ref = uefast.evaluate(run, ones, measures=["P@2", "P@4"], ties=ties).to_pylist()
    want = {(r["qid"], r["measure"].replace("P", "Judged")): r for r in ref}
    n = 0
    for r in res.to_pylist():
        if r["measure"].startswith("Judged"):
            w = want[(r["qid"], r["measure"])]
            assert (r["value"], r["iub"], r["reb"]) == pytest.approx((w["value"], w["iub"], w["reb"]))
            n += 1
    assert n == 12
    assert any((q, d) not in judged for q, d in zip(run["qid"].to_pylist(), run["docid"].to_pylist()))
