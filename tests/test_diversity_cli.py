"""`uefast evaluate --run ... --diversity-qrels ...`: the same per-query values as the Python API."""
from __future__ import annotations

import io

import pyarrow.csv as pacsv

from uefast.cli import main
from uefast.diversity import evaluate
from uefast.io import read_run


def test_evaluate_diversity_qrels_tsv(tmp_path, capsys):
    q = tmp_path / "q.txt"
    q.write_text("1 1 a 1\n1 2 b 2\n1 2 c 0\n2 1 x 1\n2 3 y -2\n2 3 z 1\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 c 1 3 s\n1 Q0 b 2 2 s\n1 Q0 a 3 1 s\n2 Q0 z 1 5 s\n2 Q0 q 2 4 s\n")
    assert main(["evaluate", "--run", str(r), "--diversity-qrels", str(q), "-m", "alpha-nDCG@5",
                 "RBU@5", "--per-query", "--format", "tsv"]) == 0
    got = pacsv.read_csv(io.BytesIO(capsys.readouterr().out.encode()),
                         parse_options=pacsv.ParseOptions(delimiter="\t"),
                         convert_options=pacsv.ConvertOptions(column_types={"qid": "string"}))
    want = evaluate(read_run(r), q, ["alpha-nDCG@5", "RBU@5"])
    assert got["value"].to_pylist() == want["value"].to_pylist()
    assert got["iub_exact"].to_pylist() == want["iub_exact"].to_pylist()


def test_evaluate_diversity_qrels_errors(tmp_path, capsys):
    q = tmp_path / "q.txt"
    q.write_text("1 1 a 1\n")
    assert main(["evaluate", "--diversity-qrels", str(q)]) == 2
    assert "needs --run" in capsys.readouterr().err
    assert main(["evaluate", "--run", str(q), "--qrels", str(q), "--diversity-qrels", str(q)]) == 2
    assert "not both" in capsys.readouterr().err
