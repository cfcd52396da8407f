"""``uefast trec_eval`` against NIST trec_eval's own test suite and the TREC 2003 Robust track.

Data: ``$UEFAST_SHARED_DATA`` (default ``<repo>/../shared/data``); tests skip when it is absent.
"""
from __future__ import annotations

import contextlib
import io
import os
import shlex
from pathlib import Path

import pytest

from uefast.cli import cmd_trec_eval

pytestmark = pytest.mark.slow  # data-heavy (C trec_eval's suite, Robust 2003): `pytest -m slow`

DATA = Path(os.environ.get("UEFAST_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
SUITE = DATA / "trec_eval_test"
ROBUST = DATA / "trec2003_robust"
UNSUPPORTED = {"-R": "-R prefs / qrels_prefs / qrels_jg input is not supported",
               "-Z": "-Z z-score output is not supported"}


def _rows():
    path = SUITE / "commands.tsv"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        ver, expected, args = line.split("\t")
        out.append(pytest.param(ver.lstrip("v"), expected, args, id=f"{ver}:{expected}:{args[:50]}"))
    return out


def _run(argv: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cmd_trec_eval.main(argv) == 0
    return buf.getvalue()


@pytest.mark.skipif(not SUITE.exists(), reason=f"trec_eval test suite not found under {SUITE}")
@pytest.mark.parametrize(("version", "expected", "args"), _rows())
def test_trec_eval_suite_byte_for_byte(version, expected, args, monkeypatch):
    argv = shlex.split(args)
    for opt, why in UNSUPPORTED.items():
        if opt in argv:
            pytest.skip(why)
    monkeypatch.chdir(SUITE)
    got = _run(argv + ["--trec-eval-version", version])
    assert got == (SUITE / expected).read_text()


def _nist():
    path = ROBUST / "nist_official_summary.tsv"
    rows = []
    for line in path.read_text().splitlines():
        if not line.startswith("#") and line.strip():
            run, _label, value, measure = line.split("\t")
            rows.append((run, measure, value))
    return rows


# NIST's 2003 values that today's trec_eval (9.0.8 and 10.0) does not reproduce (SOURCE.md: tie
# handling of the 2003 trec_eval); uefast matches today's trec_eval there: 0.2296 and 0.2853.
_KNOWN_2003_DIFF = {("SABIR03BASE", "Rprec"): "0.2296", ("THUIRr0301", "Rprec"): "0.2853"}


@pytest.mark.skipif(not ROBUST.exists(), reason=f"TREC 2003 Robust data not found under {ROBUST}")
@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_robust2003_nist_official_values(version):
    import pyarrow.compute as pc

    from uefast.io import read_qrels, read_run
    from uefast.trec_eval import QrelsIndex, evaluate_trec

    qi = QrelsIndex.build(read_qrels(ROBUST / "robust03_qrels.txt"))
    runs = read_run(sorted((ROBUST / "runs").glob("input.*.gz")))
    expected = _nist()
    assert len(expected) == 85
    got = {}
    for name in sorted(set(runs["system"].to_pylist())):
        res = evaluate_trec(runs.filter(pc.equal(runs["system"], name)), qi, ["map", "Rprec", "P.15,100,1000"],
                            version=version, complete=True, max_docs=1000)
        for s in res.slots:
            got[(name, s.name)] = f"{s.summary:6.4f}"
    mismatches = [(r, m, v, got[(r, m)]) for r, m, v in expected
                  if got[(r, m)] != _KNOWN_2003_DIFF.get((r, m), v)]
    assert mismatches == []
