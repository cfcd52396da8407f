"""Input defects of issue 28 item 9: integer scores beyond 2**53, ``ue=False`` with
``degenerate="drop"``, integer qids of a Parquet run against text qrels with ``1`` and ``01``."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import uefast
from uefast.cli import main as cli_main
from uefast.errors import RowError
from uefast.trec_eval import evaluate_trec

BIG = 2 ** 53 + 1


@pytest.mark.parametrize("type_", [pa.int64(), pa.uint64()])
def test_integer_scores_beyond_2_53_name_column_and_row(type_):
    letor = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "label": [1, 0],
                      "s": pa.array([3, BIG], type_)})
    with pytest.raises(RowError, match=rf"column 's' holds the integer {BIG} at row 1, beyond 2\*\*53"):
        uefast.evaluate(letor, measures="AP", score_columns=["s"])
    run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": pa.array([BIG, 3], type_)})
    qrels = pa.table({"qid": ["1"], "docid": ["a"], "label": [1]})
    with pytest.raises(RowError, match=r"run: column 'score' holds the integer .* at row 0"):
        uefast.evaluate(run, qrels, measures="AP")
    with pytest.raises(RowError, match=r"column 'score' holds the integer .* at row 0"):
        evaluate_trec(run, qrels, ["map"])
    # 2**53 itself is exact: accepted
    ok = letor.set_column(3, "s", pa.array([3, 2 ** 53], type_))
    assert uefast.evaluate(ok, measures="AP", score_columns=["s"]).num_rows == 1


def test_integer_score_beyond_2_53_in_csv_names_the_line(tmp_path, capsys):
    (tmp_path / "t.csv").write_text(f"qid,docid,label,s\n1,a,1,3\n1,b,0,-{BIG}\n")
    assert cli_main(["evaluate", str(tmp_path / "t.csv")]) == 2
    assert f"t.csv: column 's' holds the integer -{BIG} at line 3" in capsys.readouterr().err


def test_drop_without_ue_drops_what_the_metadata_says():
    """Query 2 (both documents relevant) is degenerate: IUB = REB for AP."""
    t = pa.table({"qid": ["1", "1", "2", "2"], "docid": ["a", "b", "c", "d"], "label": [1, 0, 1, 1],
                  "s": [0.1, 0.2, 0.3, 0.4]})
    for ue in (True, False):
        r = uefast.evaluate(t, measures="AP", ue=ue, degenerate="drop")
        assert r["qid"].to_pylist() == ["1"]
        assert json.loads(r.schema.metadata[b"uefast.dropped"]) == [["s", "2", "AP"]]
        assert json.loads(r.schema.metadata[b"uefast.info"])["dropped_degenerate_rows"] == 1


def _per_query(capsys, argv):
    assert cli_main(["evaluate", *argv, "-m", "nDCG@3", "--per-query", "--format", "jsonl", "--no-ue"]) == 0
    cap = capsys.readouterr()
    return [json.loads(x) for x in cap.out.splitlines()], cap.err


def test_integer_qids_never_merge_topics_1_and_01(tmp_path, capsys):
    """A Parquet run with integer qid 1 and TREC qrels judging topics '1' (a) and '01' (b, c):
    as with the same run as a text file, only topic 1 is evaluated, with one judged document
    (nDCG@3 = 1); casting the qrels to integers merged both into 1 (n_judged 3, nDCG@3 0.882)."""
    pq.write_table(pa.table({"qid": [1, 1, 1], "docid": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}),
                   tmp_path / "run.parquet")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n")
    (tmp_path / "q").write_text("1 0 a 1\n01 0 b 1\n01 0 c 1\n")
    q = str(tmp_path / "q")
    rows, err = _per_query(capsys, [str(tmp_path / "run.parquet"), "--qrels", q])
    assert [(r["qid"], r["n_judged"], r["value"]) for r in rows] == [("1", 1, 1.0)]
    assert "'01' and another id of the same integer" in err
    text_rows, _ = _per_query(capsys, ["--run", str(tmp_path / "run.txt"), "--qrels", q])
    assert [(r["qid"], r["n_judged"], r["value"]) for r in text_rows] == [("1", 1, 1.0)]


def test_integer_qids_still_matched_to_canonical_text(tmp_path, capsys):
    pq.write_table(pa.table({"qid": [7, 7], "docid": ["a", "b"], "score": [1.0, 2.0]}), tmp_path / "r.parquet")
    (tmp_path / "q").write_text("7 0 a 1\n-3 0 z 1\n")
    rows, err = _per_query(capsys, [str(tmp_path / "r.parquet"), "--qrels", str(tmp_path / "q")])
    assert [(r["qid"], r["n_judged"]) for r in rows] == [(7, 1)]  # qrels read as integers
    assert "qrels column 'qid' read as int64" in err
