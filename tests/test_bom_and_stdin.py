"""A UTF-8 byte-order mark at the start of an input file, and ``uefast trec_eval qrels -``.

A BOM (``EF BB BF``, written by some Windows editors) used to become part of the first field:
the first topic read as ``\\ufeff301``, its lines were dropped from the evaluation and AP moved.
Every reader drops it now (uefast.io._fast.read_bytes, under all TREC-text fast paths, the
general readers, LETOR and trec_eval-output files; Arrow's CSV reader drops it itself).
"""
from __future__ import annotations

import contextlib
import gzip
import io
import sys

import pytest

from uefast.cli import main as cli_main
from uefast.io import read_letor, read_qrels, read_run, read_trec_eval_output
from uefast.trec_eval import evaluate_trec
from uefast.trec_eval.prepare import QrelsIndex, ScannedRun

BOM = b"\xef\xbb\xbf"
QRELS = b"301 0 a 1\n301 0 b 0\n302 0 c 1\n"
RUN = b"301 Q0 b 1 2.0 r\n301 Q0 a 2 1.0 r\n302 Q0 c 1 1.0 r\n"


def _write(tmp_path, name, data, gz=False):
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if gz else data)
    return p


@pytest.mark.parametrize("gz", [False, True])
def test_trec_readers_drop_a_bom(tmp_path, gz):
    q = _write(tmp_path, "q", BOM + QRELS, gz)
    r = _write(tmp_path, "r", BOM + RUN, gz)
    assert read_qrels(q)["qid"].to_pylist() == ["301", "301", "302"]
    assert read_run(r)["qid"].to_pylist() == ["301", "301", "302"]
    assert read_run(r, extra_columns="ignore", ranks="ignore")["qid"].to_pylist()[0] == "301"
    assert QrelsIndex.from_file(q).qid_list == ["301", "302"]
    # the fused fast path (ScannedRun) and the general reader (a repeated docno sends the run
    # there) give topic 301 map 0.5 (a at rank 2), topic 302 1.0
    for run_bytes in (RUN, RUN + b"303 Q0 z 1 1 r\n303 Q0 z 2 1 r\n"):
        r = _write(tmp_path, "r2", BOM + run_bytes, gz)
        res = evaluate_trec(ScannedRun.read(r), QrelsIndex.from_file(q), ["map"], complete=False)
        assert res.qids == ["301", "302"]
        assert [s.summary for s in res.slots if s.name == "map"] == [0.75]


def test_letor_and_trec_eval_output_readers_drop_a_bom(tmp_path):
    letor = _write(tmp_path, "l.txt", BOM + b"2 qid:7 1:0.5\n0 qid:7 1:0.25\n")
    assert read_letor(letor)["qid"].to_pylist() == ["7", "7"]
    # score files and group files (LightGBM's .query) too
    plain = _write(tmp_path, "g.txt", b"2 1:0.5\n0 1:0.25\n1 1:0.1\n")
    _write(tmp_path, "g.txt.query", BOM + b"2\n1\n")
    scores = _write(tmp_path, "sys.txt", BOM + b"0.5\n0.25\n1\n")
    t = read_letor(plain, score_files=[scores])
    assert t["qid"].to_pylist() == ["0", "0", "1"] and t["sys"].to_pylist() == [0.5, 0.25, 1.0]
    out = _write(tmp_path, "o.txt", BOM + b"map                   \t301\t0.5000\nmap                   \tall\t0.5000\n")
    assert read_trec_eval_output(out)["measure"].to_pylist() == ["map"]


def test_cli_trec_eval_with_bom_files(tmp_path):
    q = _write(tmp_path, "q", BOM + QRELS)
    r = _write(tmp_path, "r", BOM + RUN)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli_main(["trec_eval", "-q", "-m", "map", str(q), str(r)]) == 0
    assert buf.getvalue() == ("map                   \t301\t0.5000\nmap                   \t302\t1.0000\n"
                              "map                   \tall\t0.7500\n")


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
@pytest.mark.parametrize("extra", [[], ["--ue"]])
def test_trec_eval_reads_the_run_from_stdin(tmp_path, monkeypatch, version, extra):
    """trec_eval 10.0: "If results_file is '-', then results_file is read from stdin"."""
    q = _write(tmp_path, "q", QRELS)
    r = _write(tmp_path, "r", RUN)

    def run(path_arg, stdin=b""):
        monkeypatch.setattr(sys, "stdin", _Stdin(stdin))
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert cli_main(["trec_eval", *extra, "-q", "-m", "map", str(q), path_arg,
                             "--trec-eval-version", version]) == 0
        return buf.getvalue()

    from_file = run(str(r))
    assert "map                   \tall\t0.7500\n" in from_file
    assert run("-", RUN) == from_file
    assert run("-", gzip.compress(BOM + RUN)) == from_file


def test_trec_eval_stdin_errors_name_it(monkeypatch, tmp_path, capsys):
    q = _write(tmp_path, "q", QRELS)
    monkeypatch.setattr(sys, "stdin", _Stdin(b"301 Q0 a 1 2.0 r\n301 Q0 a 2 1.0 r\n"))
    assert cli_main(["trec_eval", "-m", "map", str(q), "-"]) == 2
    assert "-:2: docno 'a' retrieved twice" in capsys.readouterr().err
