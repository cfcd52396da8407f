"""The same measure string, the same number as ir_measures (its providers: pytrec_eval, gdeval),
per query, on random TREC-style data with graded labels 0-4 and distinct scores (providers break
ties differently). Where uefast's default differs on purpose, the documented spelling that
reproduces ir_measures is checked instead: ERR's top grade (gdeval fixes it at 4, uefast's default
is the collection's largest label, SPEC_math §7.1): ir_measures ``ERR@k`` = uefast ``ERR(lmax=4)@k``.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import uefast

ir_measures = pytest.importorskip("ir_measures")

SAME = ["nDCG@10", "nDCG", "nDCG(dcg='exp-log2')@10", "P@10", "P(rel=2)@5", "R@20", "Rprec", "AP",
        "AP(rel=2)", "AP@10", "RR", "RR(rel=3)", "Success@1", "Success@5"]
RENAMED = {"ERR@10": "ERR(lmax=4)@10", "ERR@20": "ERR(lmax=4)@20"}
TOL = {"nDCG(dcg='exp-log2')@10": 1e-5, "ERR@10": 1e-5, "ERR@20": 1e-5}  # gdeval prints rounded


def _data(seed=0, nq=25, nd=40):
    rng = np.random.default_rng(seed)
    qrels, run, q_rows, r_rows = [], [], [], []
    for q in range(nq):
        scores = rng.permutation(nd * 3)[:nd] / 7.0  # distinct
        for d in range(nd):
            if rng.random() < 0.7:
                lab = int(rng.choice([0, 0, 1, 2, 3, 4]))
                qrels.append(ir_measures.Qrel(str(q), f"d{d}", lab))
                q_rows.append((str(q), f"d{d}", lab))
            run.append(ir_measures.ScoredDoc(str(q), f"d{d}", float(scores[d])))
            r_rows.append((str(q), f"d{d}", float(scores[d])))
    run_t = pa.table({"qid": [r[0] for r in r_rows], "docid": [r[1] for r in r_rows],
                      "score": [r[2] for r in r_rows]})
    qrels_t = pa.table({"qid": [r[0] for r in q_rows], "docid": [r[1] for r in q_rows],
                        "label": [r[2] for r in q_rows]})
    return qrels, run, qrels_t, run_t


@pytest.mark.parametrize("seed", [0, 1])
def test_same_string_same_value_as_ir_measures(seed):
    qrels, run, qrels_t, run_t = _data(seed)
    pairs = {s: s for s in SAME} | RENAMED
    ours = uefast.evaluate(run_t, qrels_t, list(pairs.values()), ue=False)
    got = {(r["qid"], r["measure"]): r["value"] for r in ours.to_pylist()}
    checked = 0
    for theirs, mine in pairs.items():
        m = ir_measures.parse_measure(theirs)
        canon = str(uefast.parse_measure(mine))
        for res in ir_measures.iter_calc([m], qrels, run):
            assert got[(res.query_id, canon)] == pytest.approx(res.value, abs=TOL.get(theirs, 1e-9)), \
                (theirs, res.query_id)
            checked += 1
    assert checked >= 25 * len(pairs)


def test_err_default_top_grade_is_the_collections():
    """On a 0-2 scale uefast's ERR@k uses lmax = 2; ir_measures' (gdeval's) uses 4."""
    qrels = [ir_measures.Qrel("1", "a", 2), ir_measures.Qrel("1", "b", 1), ir_measures.Qrel("1", "c", 0)]
    run = [ir_measures.ScoredDoc("1", d, s) for d, s in (("a", 3.0), ("b", 2.0), ("c", 1.0))]
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure("ERR@10")], qrels, run)
    run_t = pa.table({"qid": ["1"] * 3, "docid": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels_t = pa.table({"qid": ["1"] * 3, "docid": ["a", "b", "c"], "label": [2, 1, 0]})
    ours = {r["measure"]: r["value"] for r in
            uefast.evaluate(run_t, qrels_t, ["ERR@10", "ERR(lmax=4)@10"], ue=False).to_pylist()}
    assert ours["ERR@10"] == pytest.approx(0.75 + 0.25 * 0.25 / 2)          # theta = 3/4, 1/4
    assert ours["ERR(lmax=4)@10"] == pytest.approx(3 / 16 + 13 / 16 * 1 / 16 / 2)
    assert list(theirs.values())[0] == pytest.approx(ours["ERR(lmax=4)@10"], abs=1e-5)
