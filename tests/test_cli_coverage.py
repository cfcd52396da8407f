"""``uefast evaluate`` with systems of different query coverage, and ``--no-ue`` output."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from uefast.cli import main as cli_main
from uefast.coverage import common_queries, query_coverage

QRELS = "1 0 a 1\n1 0 c 1\n1 0 z 0\n2 0 d 1\n4 0 g 1\n4 0 h 1\n"
RUN_A = "1 Q0 a 1 2.0 A\n1 Q0 c 2 1.0 A\n2 Q0 d 1 1 A\n4 Q0 g 1 1 A\n"   # topics 1, 2, 4
RUN_B = "1 Q0 z 1 2.0 B\n1 Q0 a 2 1.0 B\n4 Q0 g 1 1 B\n"                 # topics 1, 4


@pytest.fixture
def files(tmp_path):
    for name, text in (("q", QRELS), ("a", RUN_A), ("b", RUN_B)):
        (tmp_path / name).write_text(text)
    return [str(tmp_path / n) for n in ("q", "a", "b")]


def _means(capsys, argv):
    assert cli_main(["evaluate", *argv, "--format", "jsonl"]) == 0
    cap = capsys.readouterr()
    return {r["system"]: r for r in map(json.loads, cap.out.splitlines())}, cap.err


def test_different_coverage_is_noted_and_common_queries_averages_over_the_same_set(files, capsys):
    q, a, b = files
    means, err = _means(capsys, ["--run", a, b, "--qrels", q, "-m", "AP"])
    # A: AP 1, 1, 1/2 over topics 1, 2, 4 (topic 4: g at 1, h not retrieved)
    # B topic 1: z (judged non-rel) at 1, a (rel) at 2, c not retrieved: AP = (1/2) / 2 = 0.25
    # B topic 4: g at 1, h not retrieved: AP = 1 / 2 = 0.5
    assert (means["A"]["n_queries"], means["B"]["n_queries"]) == (3, 2)
    assert means["A"]["value"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert means["B"]["value"] == pytest.approx((0.25 + 0.5) / 2)
    assert "evaluated on different queries (AP: A 3, B 2; 2 common to all)" in err
    assert "--common-queries" in err
    means, err = _means(capsys, ["--run", a, b, "--qrels", q, "-m", "AP", "--common-queries"])
    assert (means["A"]["n_queries"], means["B"]["n_queries"]) == (2, 2)
    assert means["A"]["value"] == pytest.approx((1 + 0.5) / 2)   # topic 2 left out
    assert means["B"]["value"] == pytest.approx((0.25 + 0.5) / 2)
    assert "means over the 2 queries common to all systems" in err and "1 rows left out" in err


def test_same_coverage_no_note(files, capsys):
    q, a, _ = files
    _, err = _means(capsys, ["--run", a, "--qrels", q, "-m", "AP"])
    assert "different queries" not in err


def test_common_queries_helper_per_measure():
    t = pa.table({"system": ["A", "A", "B", "A", "B", "B"], "measure": ["m", "m", "m", "n", "n", "n"],
                  "qid": ["1", "2", "2", "1", "1", "3"], "value": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    cov = {c.measure: c for c in query_coverage(t)}
    assert cov["m"].per_system == {"A": 2, "B": 1} and cov["m"].n_common == 1 and cov["m"].differs
    assert common_queries(t)["value"].to_pylist() == [2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("fmt", ["text", "tsv", "jsonl"])
def test_no_ue_prints_no_ue_columns(files, capsys, fmt):
    q, a, _ = files
    assert cli_main(["evaluate", "--run", a, "--qrels", q, "-m", "AP", "--no-ue", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "ue_v1" not in out and "ue_v2" not in out and "reb" in out
    assert cli_main(["evaluate", "--run", a, "--qrels", q, "-m", "AP", "--format", fmt]) == 0
    assert "ue_v1" in capsys.readouterr().out
