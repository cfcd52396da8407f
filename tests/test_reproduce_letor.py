"""``uefast reproduce --letor FILE --scores FILE...``: SVMlight/LETOR input, as ``evaluate``."""
from __future__ import annotations

import re

import pytest

from uefast.cli import main as cli_main

LETOR = "2 qid:1 1:0.1\n0 qid:1 1:0.2\n1 qid:1 1:0.3\n1 qid:2 1:0.1\n0 qid:2 1:0.5\n"


@pytest.fixture
def letor(tmp_path):
    (tmp_path / "t.txt").write_text(LETOR)
    (tmp_path / "lm.txt").write_text("0.9\n0.1\n0.5\n0.2\n0.8\n")
    (tmp_path / "rf.txt").write_text("0.1\n0.9\n0.5\n0.7\n0.3\n")
    return tmp_path


def test_reproduce_reads_letor_with_score_files(letor, monkeypatch, tmp_path):
    from uefast.meta import report

    seen = {}

    def fake(data, **kw):
        seen["data"], seen["kw"] = data, kw
        raise SystemExit(0)

    monkeypatch.setattr(report, "reproduce", fake)
    with pytest.raises(SystemExit):
        cli_main(["reproduce", "--letor", str(letor / "t.txt"), "--scores", str(letor / "lm.txt"),
                  str(letor / "rf.txt"), "--out", str(tmp_path / "o"), "--quiet"])
    t = seen["data"]
    assert t.column_names == ["qid", "label", "lm", "rf"]
    assert t["qid"].to_pylist() == ["1", "1", "1", "2", "2"] and t["rf"].to_pylist()[1] == 0.9


@pytest.mark.parametrize(("argv", "match"), [
    (["--scores", "x"], "--scores and --group go with --letor"),
    (["--letor", "t.txt"], "--letor needs --scores"),
    (["--letor", "t.txt", "--scores", "a", "--qrels", "q", "--run", "r", "s"], "give one input"),
    (["t.txt"], r"SVMlight/LETOR file: --letor t.txt --scores"),
])
def test_reproduce_letor_argument_errors(argv, match, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.txt").write_text(LETOR)
    assert cli_main(["reproduce", *argv, "--quiet"]) == 2
    assert re.search(match, capsys.readouterr().err)
