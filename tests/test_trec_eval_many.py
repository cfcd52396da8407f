"""``uefast trec_eval qrels RUN RUN ... | DIR``: one process, each run printed byte for byte as a
separate ``uefast trec_eval qrels RUN`` prints it (which test_trec_eval_conformance checks
against C trec_eval)."""
from __future__ import annotations

import pytest

from uefast.cli import main

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 0\n2 0 x 1\n3 0 z 1\n3 0 y 0\n"
RUNS = {
    "r1": "1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 d 3 2.0 r1\n1 Q0 c 4 1.0 r1\n2 Q0 x 1 1.0 r1\n",
    "r2": "1 Q0 c 1 9 r2\n2 Q0 y 1 5 r2\n2 Q0 x 2 4 r2\n3 Q0 z 1 1 r2\n9 Q0 a 1 1 r2\n",
    "r3": "1 Q0 b 1 0.5 zz\n1 Q0 a 2 0.5 zz\n3 Q0 y 1 2 zz\n3 Q0 z 2 1 zz\n",
}
OPTIONS = [[], ["-q"], ["-q", "-c", "-m", "all_trec"], ["-m", "map", "-m", "P.1,2", "-l2"],
           ["--ue", "-q", "-m", "map"], ["--format", "tsv", "-q"], ["--format", "jsonl"],
           ["--trec-eval-version", "9.0.8", "-q", "-m", "all_trec"], ["-n", "-q", "-M1"]]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    d = tmp_path / "runs"
    d.mkdir()
    for name, text in RUNS.items():
        (d / name).write_text(text)
    return str(tmp_path / "qrels"), [str(d / n) for n in sorted(RUNS)], str(d)


def _out(capsys, argv, code=0):
    assert main(["trec_eval", *argv]) == code
    return capsys.readouterr()


def _alone(capsys, argv):
    """stdout and exit code of one separate invocation."""
    code = main(["trec_eval", *argv])
    return capsys.readouterr().out, code


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: " ".join(o) or "default")
def test_many_runs_equal_separate_invocations(files, capsys, opts):
    qrels, runs, folder = files
    alone = [_alone(capsys, [*opts, qrels, r]) for r in runs]
    separate = "".join(out for out, _ in alone)
    # a run that fails alone (trec_eval 10.0 stops at a qrels topic it lacks, exit 4) fails here
    # too, with its lines up to there, and the others go on: exit 2
    code = 2 if any(c for _, c in alone) else 0
    assert _out(capsys, [*opts, qrels, *runs], code).out == separate
    assert _out(capsys, [*opts, qrels, folder], code).out == separate   # a directory: sorted files
    mixed = _out(capsys, [*opts, qrels, runs[2], folder], code).out
    assert mixed == alone[2][0] + separate


def test_output_file_holds_all_runs(files, capsys, tmp_path):
    qrels, runs, _ = files
    separate = "".join(_out(capsys, ["-q", "-c", qrels, r]).out for r in runs)  # -c: all complete
    _out(capsys, ["-q", "-c", "--output", str(tmp_path / "all.txt"), qrels, *runs])
    assert (tmp_path / "all.txt").read_text() == separate


def test_a_failing_run_is_named_and_the_others_go_on(files, capsys, tmp_path):
    qrels, runs, _ = files
    bad = tmp_path / "bad"
    bad.write_text("1 Q0 a 1 notanumber r9\n")
    res = _out(capsys, ["-c", qrels, runs[0], str(bad), runs[1]], code=2)
    assert res.out == _out(capsys, ["-c", qrels, runs[0]]).out + _out(capsys, ["-c", qrels, runs[1]]).out
    assert res.err.count("uefast trec_eval: error:") == 1 and str(bad) in res.err


def test_bad_uses(files, capsys, tmp_path):
    qrels, runs, _ = files
    (tmp_path / "empty").mkdir()
    assert "holds no files" in _out(capsys, [qrels, str(tmp_path / "empty")], code=2).err
    err = _out(capsys, ["--format", "parquet", "--output", str(tmp_path / "x.parquet"), qrels,
                        *runs], code=2).err
    assert "parquet writes one results_file" in err
    assert "error" in _out(capsys, [str(tmp_path / "missing_qrels"), *runs], code=2).err


def test_robust_runs_in_one_process(shared_data, capsys):
    """The 2003 Robust runs (gzip), -q -c all_trec: one process = one process per run."""
    folder = shared_data / "trec2003_robust" / "runs"
    qrels = str(shared_data / "trec2003_robust" / "robust03_qrels.txt")
    runs = sorted(str(p) for p in folder.iterdir())[:4]
    if not runs:
        pytest.skip(f"no runs under {folder}")
    opts = ["-q", "-c", "-m", "all_trec"]
    separate = "".join(_out(capsys, [*opts, qrels, r]).out for r in runs)
    assert _out(capsys, [*opts, qrels, *runs]).out == separate
