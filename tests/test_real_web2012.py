"""Real runs nobody on the team wrote, against pytrec_eval (trec_eval 9.0.8 compiled): the eight
Indri baselines of the TREC 2012 Web track (ClueWeb09, topics 151-200) with the track's ad hoc
qrels. What they exercise that the random differential tests do not: graded labels 0-4 *and* -2
(spam/junk: judged, never relevant), negative scores (Indri log-likelihoods), spam-filtered runs
whose rank column has gaps, 5-1,000 documents per topic, and one runid ("indri") in all eight files.

Data: ``$UEFAST_SHARED_DATA`` (default ``<repo>/../shared/data``); skipped when it is absent.
"""
from __future__ import annotations

import math

import pytest

import uefast
from conftest import SHARED_DATA, trec_eval_mismatches
from uefast.io import read_qrels, read_run
from uefast.trec_eval import evaluate_trec

pytrec_eval = pytest.importorskip("pytrec_eval")

RUNS_DIR = SHARED_DATA / "trec_web2012_baseline_runs"
QRELS = SHARED_DATA / "trec_web_diversity_2009_2014" / "2012" / "qrels.adhoc.txt"
RUNS = sorted(RUNS_DIR.glob("*/results-*.txt")) if RUNS_DIR.is_dir() else []
pytestmark = [pytest.mark.slow,  # data-heavy: `pytest -m slow` (.ci/run runs it)
              pytest.mark.skipif(not (RUNS and QRELS.is_file()),
                                 reason=f"TREC Web 2012 data not found under {SHARED_DATA}")]

CORE = {  # uefast measure -> trec_eval measure
    "nDCG@10": "ndcg_cut_10", "nDCG@20": "ndcg_cut_20", "nDCG": "ndcg", "AP": "map",
    "AP@100": "map_cut_100", "P@10": "P_10", "P@20": "P_20", "R@100": "recall_100",
    "RR": "recip_rank", "Rprec": "Rprec", "Success@1": "success_1", "Success@10": "success_10",
}


@pytest.fixture(scope="module")
def reference():
    """pytrec_eval's per-topic values of every run, every measure it supports."""
    with open(QRELS) as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    ev = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures)
    out = {}
    for path in RUNS:
        with open(path) as fh:
            out[path] = ev.evaluate(pytrec_eval.parse_run(fh))
    return out


def test_the_data_is_what_the_test_claims(reference):
    labels = set(read_qrels(QRELS)["label"].to_pylist())
    assert labels == {-2, 0, 1, 2, 3, 4}
    assert len(RUNS) == 8 and all(len(v) == 50 for v in reference.values())


@pytest.mark.parametrize("path", RUNS, ids=[f"{p.parent.name}/{p.stem}" for p in RUNS])
def test_trec_eval_path_matches_pytrec_eval(path, reference):
    """``evaluate_trec`` (the fast path of ``uefast trec_eval``), trec_eval 9.0.8 behaviour, every
    per-topic float value that pytrec_eval also reports (86 measures: map, bpref, ndcg*, P/recall/
    map_cut at all cutoffs, iprec_at_recall, Rprec_mult, infAP, ...): 0 mismatches above 1e-9."""
    res = evaluate_trec(path, QRELS, ["all_trec"], version="9.0.8")
    checked, bad = trec_eval_mismatches(res, reference[path])
    assert checked >= 80 * 50 and not bad[:5]


def test_core_engine_matches_pytrec_eval(reference):
    """``uefast.evaluate`` on the eight runs as one table (named per file: they share the runid
    'indri'), ties the trec_eval way: 0 mismatches above 1e-9."""
    names = [f"{p.parent.name}/{p.stem}" for p in RUNS]
    with pytest.raises(uefast.InputError, match="'indri' is also used by"):
        read_run(RUNS)
    table = uefast.evaluate(read_run(RUNS, system=names), read_qrels(QRELS), list(CORE), ue=True)
    by_name = dict(zip(names, RUNS))
    checked = 0
    bad = []
    for r in table.to_pylist():
        want = reference[by_name[r["system"]]][r["qid"]][CORE[r["measure"]]]
        checked += 1
        if not math.isclose(r["value"], want, rel_tol=0, abs_tol=1e-9):
            bad.append((r["system"], r["qid"], r["measure"], r["value"], want))
        assert r["iub"] >= r["value"] - 1e-12 and 0.0 <= r["reb"] <= r["iub"] + 1e-12
    assert checked == 8 * 50 * len(CORE) and not bad[:5]
