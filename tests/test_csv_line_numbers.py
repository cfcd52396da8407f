"""``uefast evaluate`` on CSV/TSV files: every error names file line numbers (header = line 1),
never 0-based table rows next to line numbers of other messages."""
from __future__ import annotations

import pytest

from uefast.cli import main as cli_main


@pytest.mark.parametrize(("name", "text", "extra", "want"), [
    ("dup.csv", "qid,docid,label,s1\n1,a,1,0.5\n1,b,0,0.3\n1,a,1,0.2\n", [],
     "dup.csv: duplicate docid 'a' within one qid group: lines 2 and 4"),
    ("badl.csv", "qid,docid,label,s1\n1,a,1,0.5\n1,b,x,0.3\n", [], "badl.csv:3: label 'x' is not an integer"),
    ("null.csv", "qid,docid,label,s1\n1,a,1,0.5\n\n1,b,0,\n", [], "null.csv: column 's1' has 1 null value(s); first at line 4"),
    ("run.tsv", "qid\tdocid\tscore\n1\ta\t0.5\n1\ta\t0.1\n", ["--qrels", "QRELS"],
     "run.tsv: duplicate docid 'a' within one (system, qid) group: lines 2 and 3"),
])
def test_csv_errors_name_lines(tmp_path, capsys, name, text, extra, want):
    (tmp_path / name).write_text(text)
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    extra = [str(tmp_path / "q.txt") if a == "QRELS" else a for a in extra]
    assert cli_main(["evaluate", str(tmp_path / name), *extra]) == 2
    err = capsys.readouterr().err
    assert want in err, err
    assert " row " not in err and "rows" not in err


def test_csv_qrels_errors_name_lines(tmp_path, capsys):
    (tmp_path / "r.csv").write_text("qid,docid,score\n1,a,0.5\n")
    (tmp_path / "q.csv").write_text("qid,docid,label\n1,a,1\n\n1,a,0\n")
    assert cli_main(["evaluate", str(tmp_path / "r.csv"), "--qrels", str(tmp_path / "q.csv")]) == 2
    assert "q.csv: duplicate judgment for qid '1' docid 'a': lines 2 and 4" in capsys.readouterr().err
