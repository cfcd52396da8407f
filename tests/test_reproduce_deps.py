"""``uefast reproduce`` without matplotlib: one line naming the extra, before any work."""
from __future__ import annotations

import sys

import pytest

from uefast.cli import main as cli_main
from uefast.errors import MissingDependencyError


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError


def test_reproduce_refuses_before_work(no_matplotlib, tmp_path, monkeypatch):
    from uefast.meta import report

    def no_work(*a, **k):
        raise AssertionError("evaluation started before the dependency check")

    monkeypatch.setattr(report, "_prepare", no_work)
    with pytest.raises(MissingDependencyError, match=r'pip install "uefast\[report\]"'):
        report.reproduce(out_dir=tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_cli_reproduce_one_line(no_matplotlib, tmp_path, capsys, monkeypatch):
    from uefast.io import trec

    monkeypatch.setattr(trec, "read_run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read")))
    rc = cli_main(["reproduce", "--qrels", "q", "--run", "a", "b", "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and 'pip install "uefast[report]"' in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
