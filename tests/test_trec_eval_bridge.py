"""Every measure both worlds share -- the trec_eval names a family declares in the registry
(``external["trec_eval"]``, ``external["trec_eval_cut"]``) -- gives the same per-topic values in
``uefast.trec_eval`` (trec_eval's C-order loops) and in the engine (:func:`uefast.evaluate`,
``ties="trec_eval"``) on random runs with tied scores, unjudged and unretrieved documents."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import uefast
from uefast.measures import FAMILIES
from uefast.trec_eval.evaluator import evaluate_trec
from uefast.trec_eval.ue import engine_measure, trec_eval_name

CUTS = (1, 5, 10)


def _shared() -> list[tuple[str, str, str]]:
    """(trec_eval -m argument, printed name, engine measure) for every bridged family."""
    out = []
    for name, f in FAMILIES.items():
        if "trec_eval" in f.external:
            te = f.external["trec_eval"]
            out.append((te, te, name))
        tpl = f.external.get("trec_eval_cut")
        if tpl is not None:
            prefix = tpl.replace("_{k}", "")
            for k in CUTS:
                out.append((f"{prefix}.{','.join(map(str, CUTS))}", tpl.format(k=k), f"{name}@{k}"))
    return out


def _data(seed: int):
    rng = np.random.default_rng(seed)
    run = {"qid": [], "docid": [], "score": []}
    qrels = {"qid": [], "docid": [], "label": []}
    for q in range(30):
        n = int(rng.integers(1, 30))
        for d in range(n):
            if rng.random() < 0.75:
                qrels["qid"].append(f"q{q}")
                qrels["docid"].append(f"d{d}")
                qrels["label"].append(int(rng.integers(0, 4)))
            if rng.random() < 0.7:
                run["qid"].append(f"q{q}")
                run["docid"].append(f"d{d}")
                run["score"].append(float(rng.integers(0, 6)))
    return pa.table(run), pa.table(qrels)


def test_the_bridge_covers_every_declared_name():
    shared = _shared()
    assert {s[2].split("@")[0] for s in shared} >= {"AP", "P", "R", "RR", "Rprec", "nDCG",
                                                     "Success"}
    for _, printed, measure in shared:
        assert engine_measure(printed) == measure and trec_eval_name(measure) == printed


@pytest.mark.parametrize("seed", [0, 1])
def test_shared_measures_agree_per_topic(seed):
    run, qrels = _data(seed)
    shared = _shared()
    res = evaluate_trec(run, qrels, sorted({s[0] for s in shared}))
    slots = {s.name: s for s in res.slots}
    eng = uefast.evaluate(run, qrels, measures=[s[2] for s in shared], ties="trec_eval").to_pylist()
    got = {(r["qid"], r["measure"]): r["value"] for r in eng}
    checked = 0
    for _, printed, measure in shared:
        per = slots[printed].per_query
        for qi, q in enumerate(res.qids):
            assert got[(q, measure)] == pytest.approx(float(per[qi]), abs=1e-12), (q, printed)
            checked += 1
    assert checked > 100
