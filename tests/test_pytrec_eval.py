"""Differential test against pytrec_eval (trec_eval 9.0.8 compiled) on random TREC-style data.

Scores are multiples of 1/4 (exact in float32, which pytrec_eval uses) with many ties, docnos of
different lengths ("d9" vs "d10"), unjudged retrieved documents and relevant documents that were
never retrieved; ties resolved the trec_eval way. Every shared measure: 0 mismatches above 1e-9.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import uefast
from conftest import trec_eval_mismatches

pytrec_eval = pytest.importorskip("pytrec_eval")

PAIRS = {  # trec_eval measure -> uefast measure
    "map": "AP", "recip_rank": "RR", "Rprec": "Rprec", "ndcg": "nDCG",
    "P_5": "P@5", "P_10": "P@10", "P_30": "P@30", "recall_5": "R@5", "recall_100": "R@100",
    "ndcg_cut_5": "nDCG@5", "ndcg_cut_10": "nDCG@10", "ndcg_cut_30": "nDCG@30",
    "map_cut_5": "AP@5", "map_cut_100": "AP@100",
    "success_1": "Success@1", "success_5": "Success@5", "success_10": "Success@10",
}


def _random_trec(seed: int, n_queries: int = 40, n_systems: int = 3):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {f"sys{s}": {} for s in range(n_systems)}
    q_rows, r_rows = [], []
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"d{j}" for j in rng.choice(400, size=rng.integers(5, 60), replace=False)]
        judged = pool[: rng.integers(1, len(pool) + 1)]
        labels = rng.choice([0, 0, 0, 1, 1, 2, 3], size=len(judged))
        if q % 7 == 0:
            labels[:] = 0  # a query with no relevant document
        qrels[qid] = {d: int(lab) for d, lab in zip(judged, labels)}
        q_rows += [(qid, d, int(lab)) for d, lab in zip(judged, labels)]
        for s, name in enumerate(runs):
            if q % 11 == s + 1:
                continue  # this system did not answer this query
            docs = list(rng.choice(pool, size=rng.integers(1, len(pool) + 1), replace=False))
            docs += [f"x{j}" for j in range(rng.integers(0, 5))]  # unjudged
            scores = rng.integers(0, 12, size=len(docs)) / 4.0
            runs[name][qid] = {d: float(sc) for d, sc in zip(docs, scores)}
            r_rows += [(name, qid, d, float(sc)) for d, sc in zip(docs, scores)]
    run_t = pa.table({"system": [r[0] for r in r_rows], "qid": [r[1] for r in r_rows],
                      "docid": [r[2] for r in r_rows], "score": [r[3] for r in r_rows]})
    qrels_t = pa.table({"qid": [r[0] for r in q_rows], "docid": [r[1] for r in q_rows],
                        "label": [r[2] for r in q_rows]})
    return qrels, runs, qrels_t, run_t


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_mismatches_against_pytrec_eval(seed, ranking_path):
    qrels, runs, qrels_t, run_t = _random_trec(seed)
    ours = uefast.evaluate(run_t, qrels_t, list(PAIRS.values()), ue=False)
    got = {(r["system"], r["qid"], r["measure"]): r["value"] for r in ours.to_pylist()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PAIRS))
    checked = mismatches = 0
    for name, run in runs.items():
        theirs = evaluator.evaluate(run)
        assert {q for (s, q, _m) in got if s == name} == set(theirs)
        for qid, vals in theirs.items():
            for te, ue_name in PAIRS.items():
                checked += 1
                if abs(vals[te] - got[(name, qid, ue_name)]) > 1e-9:
                    mismatches += 1
    assert checked > 1000
    assert mismatches == 0


def test_queries_qrels_mode_scores_missing_queries_zero():
    qrels, runs, qrels_t, run_t = _random_trec(3, n_queries=12)
    inter = uefast.evaluate(run_t, qrels_t, ["AP"], ue=False)
    full = uefast.evaluate(run_t, qrels_t, ["AP"], ue=False, queries="qrels")
    assert full.num_rows == 3 * 12
    assert inter.num_rows < full.num_rows
    extra = {(r["system"], r["qid"]) for r in full.to_pylist()} - {
        (r["system"], r["qid"]) for r in inter.to_pylist()}
    for r in full.to_pylist():
        if (r["system"], r["qid"]) in extra:
            assert r["value"] == 0.0 and r["n_docs"] == 0


@pytest.mark.parametrize("level", [1, 2, 3])
def test_trec_eval_path_every_pytrec_eval_measure(level):
    """``evaluate_trec`` (``uefast trec_eval --trec-eval-version 9.0.8``) on the same random data:
    every per-topic float value pytrec_eval reports, at relevance levels 1..3 (so that many topics
    have no relevant document: every 7th always, most at -l 3).  Scores are multiples of 1/4,
    exact in float32."""
    from uefast.trec_eval import evaluate_trec

    qrels, runs, qrels_t, run_t = _random_trec(10 + level)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures, relevance_level=level)
    checked = 0
    bad = []
    for name, run in runs.items():
        theirs = evaluator.evaluate(run)
        mine = run_t.filter(pa.compute.equal(run_t["system"], name))
        res = evaluate_trec(mine, qrels_t, ["all_trec"], version="9.0.8", relevance_level=level)
        assert set(res.qids) == set(theirs)
        n, mism = trec_eval_mismatches(res, theirs)  # a NaN fails too
        checked += n
        bad += [(name, *m) for m in mism]
    assert checked > 3 * 30 * 80
    assert not bad[:5]
