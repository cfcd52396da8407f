"""Polars on TREC data: a run joined to its qrels and grouped misses unretrieved relevant docs.

Query 1 judges a, b relevant and c not; the run retrieves a (first) and c. AP = (1/1) / 2 = 0.5
(b, never retrieved, counts in the denominator); the joined frame grouped by qid has a and c only
and gives AP 1.0.
"""
from __future__ import annotations

import polars as pl
import pytest

import uefast.polars as uep
from uefast.errors import InputError

RUN = pl.DataFrame({"qid": ["1", "1"], "docid": ["a", "c"], "score": [2.0, 1.0]})
QRELS = pl.DataFrame({"qid": ["1", "1", "1"], "docid": ["a", "b", "c"], "label": [1, 1, 0]})


def test_evaluate_with_qrels_counts_unretrieved_relevant():
    got = uep.evaluate(RUN, QRELS, ["AP", "R@10"], ue=False)
    assert dict(zip(got["measure"], got["value"])) == {"AP": 0.5, "R@10": 0.5}


def test_joined_frame_is_refused_by_the_guard():
    joined = RUN.join(QRELS, on=["qid", "docid"], how="left")
    # what the mistake gives (the guard exists because of it)
    wrong = joined.group_by("qid").agg(uep.ap("label", "score").alias("ap"))["ap"][0]
    assert wrong == 1.0
    with pytest.raises(InputError, match=r"lacks 1 relevant document.*qid '1', docid 'b'.*uefast.polars.evaluate"):
        uep.require_all_relevant(joined, QRELS)
    with pytest.raises(InputError, match="lacks 1"):
        uep.require_all_relevant(joined.lazy(), QRELS.to_arrow())
    complete = pl.concat([joined, pl.DataFrame({"qid": ["1"], "docid": ["b"], "score": [0.5], "label": [1]})],
                         how="diagonal_relaxed")
    assert uep.require_all_relevant(complete, QRELS) is complete
    # ids compared as text: an integer qid column of the frame still matches "1"
    assert uep.require_all_relevant(complete.with_columns(pl.col("qid").cast(pl.Int64)), QRELS) is not None


def test_null_label_error_points_to_the_right_path():
    joined = pl.DataFrame({"qid": ["1", "1"], "docid": ["a", "x"], "score": [2.0, 1.0], "label": [1, None]})
    with pytest.raises(InputError, match=r"null.*unjudged.*uefast.polars.evaluate\(run, qrels\)"):
        joined.group_by("qid").agg(uep.ap("label", "score"))


def test_robust2003_inexpc2_join_vs_evaluate(shared_data):
    """The issue's numbers: TREC 2003 Robust InexpC2, mean AP 0.2249 (= trec_eval map) by
    evaluate(run, qrels), 0.2785 by the join-and-group mistake, which the guard refuses."""
    from uefast.io import read_qrels, read_run
    from uefast.trec_eval import evaluate_trec

    d = shared_data / "trec2003_robust"
    qrels = pl.from_arrow(read_qrels(d / "robust03_qrels.txt"))
    run = pl.from_arrow(read_run(d / "runs" / "input.InexpC2.gz")).select(["qid", "docid", "score"])
    right = uep.evaluate(run, qrels, ["AP"], ue=False)["value"].mean()
    te = evaluate_trec(run.to_arrow(), qrels.to_arrow(), ["map"])
    assert f"{right:.4f}" == f"{te.slots[-1].summary:.4f}" == "0.2249"
    joined = run.join(qrels, on=["qid", "docid"], how="left").with_columns(pl.col("label").fill_null(0))
    wrong = joined.group_by("qid").agg(uep.ap("label", "score", docid="docid").alias("ap"))["ap"].mean()
    assert f"{wrong:.4f}" == "0.2785"
    with pytest.raises(InputError, match="relevant document"):
        uep.require_all_relevant(joined, qrels)
