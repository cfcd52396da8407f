"""`uefast evaluate` end to end: embedded sample, files, formats, streaming, exit codes."""
from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest

from uefast.cli import main
from uefast.sample import letor_sample


def test_no_input_evaluates_the_embedded_sample(capsys):
    assert main(["evaluate"]) == 0
    out = capsys.readouterr().out
    assert "embedded sample" in out and "per query:" in out and "mean over queries:" in out
    assert "nDCG@10" in out and "AP" in out and "ue_v2" in out and "reb" in out


def test_parquet_table_tsv_and_jsonl(tmp_path, capsys):
    path = tmp_path / "s.parquet"
    pq.write_table(letor_sample(), path)
    assert main(["evaluate", str(path), "-m", "P@5", "ERR@10", "--format", "tsv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split("\t")[:3] == ["system", "measure", "n_queries"]
    assert len(lines) == 1 + 4 * 2
    assert main(["evaluate", str(path), "-m", "AP", "--per-query", "--format", "jsonl"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(rows) == 4 * 60 and {"value", "iub", "reb", "ue_v1", "ue_v2"} <= set(rows[0])


def test_parquet_output(tmp_path):
    out = tmp_path / "o.parquet"
    assert main(["evaluate", "--per-query", "--format", "parquet", "-o", str(out)]) == 0
    assert pq.read_table(out).num_rows == 4 * 60 * 2


def test_large_parquet_is_streamed(tmp_path, capsys, monkeypatch):
    path = tmp_path / "s.parquet"
    pq.write_table(letor_sample(), path, row_group_size=100)
    assert main(["evaluate", str(path), "--format", "tsv"]) == 0
    in_memory = capsys.readouterr().out
    monkeypatch.setenv("UEFAST_STREAMING_THRESHOLD", "1")
    assert main(["evaluate", str(path), "--format", "tsv"]) == 0
    streamed = capsys.readouterr().out
    assert streamed.splitlines()[0] == in_memory.splitlines()[0]
    a = [line.split("\t")[:3] for line in in_memory.splitlines()]
    b = [line.split("\t")[:3] for line in streamed.splitlines()]
    assert a == b
    for fmt in ("jsonl",):  # every --format of the in-memory path, streamed too
        monkeypatch.delenv("UEFAST_STREAMING_THRESHOLD")
        assert main(["evaluate", str(path), "--format", fmt]) == 0
        in_memory = capsys.readouterr().out
        monkeypatch.setenv("UEFAST_STREAMING_THRESHOLD", "1")
        assert main(["evaluate", str(path), "--format", fmt]) == 0
        streamed = capsys.readouterr().out
        rows = [json.loads(x) for x in streamed.splitlines()]
        assert len(rows) == 4 * 2 and {"system", "measure", "value", "ue_v2"} <= set(rows[0])
        assert [(r["system"], r["measure"]) for r in rows] == \
            [(r["system"], r["measure"]) for r in map(json.loads, in_memory.splitlines())]


def test_jsonl_is_valid_json_with_nan_as_null(capsys):
    """JSON has no NaN: degenerate queries' NaN UE scores are written as null."""
    assert main(["evaluate", "-m", "P@1000", "--degenerate", "nan", "--per-query", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(x, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}")) for x in lines]
    assert len(rows) == 4 * 60 and any(r["ue_v2"] is None for r in rows)


@pytest.mark.parametrize("argv,msg", [
    (["evaluate", "/nonexistent.parquet"], "file not found"),
    (["evaluate", "-m", "Foo@10"], "unknown measure 'Foo'"),
    (["evaluate", "--run", "x.run"], "--run needs --qrels"),
    (["evaluate", "--scores", "a.txt"], "--scores needs --letor"),
])
def test_bad_input_exits_2_with_one_line(argv, msg, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1


def test_list_measures(capsys):
    assert main(["evaluate", "--list-measures"]) == 0
    assert "nDCG" in capsys.readouterr().out


class _Tty(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


@pytest.mark.parametrize("tty", [True, False])
def test_first_use_notice_only_on_a_terminal_and_once(tty):
    """A Numba compile inside the CLI's notice scope prints one line on a terminal, nothing
    elsewhere; no compile, no line."""
    import numba

    from uefast.cli import FIRST_USE_NOTICE, first_use_notice

    stream = _Tty(tty)
    with first_use_notice(stream):
        pass
    assert stream.getvalue() == ""
    with first_use_notice(stream):
        f = numba.njit(lambda x: x + 1)  # a fresh function: compiled here
        g = numba.njit(lambda x: x * 2)
        assert f(1) == 2 and g(2) == 4
    assert stream.getvalue() == (FIRST_USE_NOTICE + "\n" if tty else "")


def test_backend_cuda(capsys, monkeypatch):
    """--backend cuda: the same output as the CPU (emulated here); without a GPU, exit 2 with
    one line naming the reason."""
    import uefast.gpu.ranking as gpu_ranking

    assert main(["evaluate", "--format", "tsv", "--per-query"]) == 0
    cpu = capsys.readouterr().out
    monkeypatch.setenv(gpu_ranking.EMULATE_ENV, "1")
    assert main(["evaluate", "--format", "tsv", "--per-query", "--backend", "cuda"]) == 0
    emulated = capsys.readouterr().out
    assert emulated == cpu
    monkeypatch.delenv(gpu_ranking.EMULATE_ENV)
    if gpu_ranking._device_reason() is None:
        return  # a real GPU: nothing to refuse
    assert main(["evaluate", "--backend", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cuda" in err and "cannot run here" in err and len(err.splitlines()) == 1


def _two_runs_one_runid(tmp_path):
    """Two run files whose lines carry the same runid ('indri'), as toolkits write them."""
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d % 3 == 0)}\n" for q in range(1, 4) for d in range(6)))
    paths = []
    for name, order in (("ql", range(6)), ("rm", range(5, -1, -1))):
        path = tmp_path / f"{name}.txt"
        path.write_text("".join(f"{q} Q0 d{d} {r + 1} {-float(r)} indri\n"
                                for q in range(1, 4) for r, d in enumerate(order)))
        paths.append(str(path))
    return str(qrels), paths


def test_run_files_sharing_a_runid_need_names(tmp_path, capsys):
    qrels, (ql, rm) = _two_runs_one_runid(tmp_path)
    assert main(["evaluate", "--run", ql, rm, "--qrels", qrels]) == 2
    err = capsys.readouterr().err.strip()
    assert "'indri' is also used by" in err and "--names" in err and len(err.splitlines()) == 1
    assert main(["evaluate", "--run", ql, rm, "--names", "QL", "RM", "--qrels", qrels, "-m", "RR",
                 "--format", "tsv", "--per-query"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    head = rows[0]
    got = {(r[head.index("system")], r[head.index("qid")]): float(r[head.index("value")]) for r in rows[1:]}
    # QL ranks d0 (relevant) first; RM ranks d5, d4, then d3 (relevant) third
    assert got == {("QL", q): 1.0 for q in "123"} | {("RM", q): 1 / 3 for q in "123"}


@pytest.mark.parametrize("extra,msg", [
    (["--names", "A"], "--names: 2 run files but 1 names"),
    (["--names", "A", "A"], "--names: 'A' given twice"),
])
def test_bad_names(tmp_path, capsys, extra, msg):
    qrels, runs = _two_runs_one_runid(tmp_path)
    assert main(["evaluate", "--run", *runs, "--qrels", qrels, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert msg in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["evaluate", "compare", "reproduce"])
def test_names_without_run(command, capsys):
    assert main([command, "--names", "A"]) == 2
    assert "--names needs --run" in capsys.readouterr().err


def test_reproduce_takes_names(tmp_path, capsys):
    qrels, runs = _two_runs_one_runid(tmp_path)
    assert main(["reproduce", "--qrels", qrels, "--run", *runs, "--names", "A"]) == 2
    assert "--names: 2 run files but 1 names" in capsys.readouterr().err


def test_tsv_refuses_a_tab_inside_a_value(tmp_path, capsys):
    import pyarrow as pa

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"qid": ["a\tb", "a\tb"], "label": [1, 0], "s": [0.5, 0.1]}), path)
    assert main(["evaluate", str(path), "--format", "tsv", "--per-query"]) == 2
    err = capsys.readouterr().err
    assert "--format tsv: column 'qid' holds 'a\\tb', with a tab, a line break or a double quote" in err


def test_tsv_keeps_full_precision_for_compare(tmp_path, capsys):
    """TSV is read back (e.g. by `uefast compare`): every value must survive the round trip,
    so the tests run on the engine's numbers, not on 4-decimal roundings of them."""
    import uefast

    ref = uefast.evaluate(letor_sample(), measures=["AP"])
    assert main(["evaluate", "-m", "AP", "--per-query", "--format", "tsv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split("\t")
    got = [line.split("\t") for line in lines[1:]]
    for col in ("value", "iub", "reb", "ue_v1", "ue_v2"):
        assert [float(r[head.index(col)]) for r in got] == ref[col].to_pylist()
    path = tmp_path / "pq.tsv"
    path.write_text("\n".join(lines) + "\n")
    pq.write_table(ref, tmp_path / "pq.parquet")
    outs = []
    for src in (path, tmp_path / "pq.parquet"):
        assert main(["compare", str(src), "--method", "wilcoxon", "--format", "tsv"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


def test_letor_with_lightgbm_group_file(tmp_path, capsys):
    data = tmp_path / "rank.test"
    data.write_text("2 1:0.5\n0 1:0.1\n1 1:0.2\n0 1:0.7\n1 1:0.9\n")
    (tmp_path / "pred.txt").write_text("0.5\n0.1\n0.2\n0.9\n0.7\n")
    argv = ["evaluate", "--letor", str(data), "--scores", str(tmp_path / "pred.txt"), "-m", "RR",
            "--per-query", "--format", "tsv"]
    assert main(argv) == 2
    assert "no group file was found" in capsys.readouterr().err
    (tmp_path / "rank.test.query").write_text("2\n3\n")
    assert main(argv) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [(r[1], float(r[3])) for r in rows[1:]] == [("0", 1.0), ("1", 0.5)]
    (tmp_path / "one.txt").write_text("5\n")
    assert main(argv + ["--group", str(tmp_path / "one.txt")]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [(r[1], float(r[3])) for r in rows[1:]] == [("0", 0.5)]
    assert main(["evaluate", "--group", "g.txt"]) == 2
    assert "--group needs --letor" in capsys.readouterr().err


def test_run_queries_without_qrels_are_reported(tmp_path, capsys):
    """Run rows of topics the qrels never judged are skipped, as trec_eval skips them: the CLI
    says so on stderr (stdout stays a clean table), and fails when nothing is left."""
    qrels, (ql, _) = _two_runs_one_runid(tmp_path)  # topics 1-3
    extra = tmp_path / "extra.run"
    extra.write_text(open(ql).read() + "7 Q0 dx 1 5.0 indri\n8 Q0 dy 1 5.0 indri\n8 Q0 dz 2 4.0 indri\n")
    assert main(["evaluate", "--run", str(extra), "--qrels", qrels, "-m", "RR", "--format", "tsv"]) == 0
    cap = capsys.readouterr()
    assert cap.err.strip() == ("uefast: note: 3 run rows of 2 queries not in the qrels not evaluated "
                               "(as in trec_eval); the table metadata 'uefast.info' counts every row")
    assert cap.out.splitlines()[1].split("\t")[:3] == ["indri", "RR", "3"]
    other = tmp_path / "other.run"
    other.write_text("7 Q0 dx 1 5.0 r\n")
    assert main(["evaluate", "--run", str(other), "--qrels", qrels]) == 2
    err = capsys.readouterr().err.strip()
    assert "no query of the run is in the qrels (1 run row of 1 query, none judged)" in err
    assert len(err.splitlines()) == 1
    # every qrels query (trec_eval -c): the qrels' 3 queries, scored 0, and the note
    assert main(["evaluate", "--run", str(other), "--qrels", qrels, "--queries", "qrels", "-m", "RR",
                 "--format", "tsv"]) == 0
    cap = capsys.readouterr()
    row = cap.out.splitlines()[1].split("\t")
    assert row[:3] == ["r", "RR", "3"] and float(row[3]) == 0.0 and "note" in cap.err


def test_degenerate_drop_is_reported(capsys):
    """--degenerate drop leaves rows out: the CLI says how many (P@k with k >= every query's
    length is degenerate on every query: every order has the same precision)."""
    assert main(["evaluate", "-m", "P@1000", "AP", "--degenerate", "drop", "--format", "tsv"]) == 0
    cap = capsys.readouterr()
    assert cap.err.startswith("uefast: note: 240 of 480 (system, query, measure) rows dropped as degenerate")
    assert [line.split("\t")[1] for line in cap.out.splitlines()[1:]] == ["AP"] * 4
    assert main(["evaluate", "-m", "AP", "--degenerate", "drop", "--format", "tsv"]) == 0
    assert capsys.readouterr().err == ""


def _trec_files(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("301 0 d1 1\n301 0 d2 0\n302 0 d3 2\n302 0 d4 0\n")
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("301 Q0 d1 1 2.0 a\n301 Q0 d2 2 1.0 a\n302 Q0 d4 1 2.0 a\n302 Q0 d3 2 1.0 a\n")
    b.write_text("301 Q0 d2 1 2.0 b\n301 Q0 d1 2 1.0 b\n302 Q0 d3 1 2.0 b\n302 Q0 d4 2 1.0 b\n")
    return str(q), str(a), str(b)


def test_repeated_list_options_accumulate(tmp_path, capsys):
    """`--run a --run b` and `-m AP -m P@1` kept only the last (argparse's default)."""
    q, a, b = _trec_files(tmp_path)
    assert main(["evaluate", "--run", a, "--run", b, "--qrels", q, "-m", "AP", "-m", "P@1",
                 "--format", "tsv"]) == 0
    rows = [ln.split("\t")[:2] for ln in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["a", "AP"], ["a", "P@1"], ["b", "AP"], ["b", "P@1"]]


@pytest.mark.parametrize("extra,match", [
    (["TABLE"], "give one input: TABLE or --run, not both"),
    (["--letor", "x.txt"], "give one input: --run or --letor, not both"),
    (["--limit", "-1"], "--limit must be >= 0"),
])
def test_conflicting_or_bad_options_refused(tmp_path, capsys, extra, match):
    q, a, b = _trec_files(tmp_path)
    extra = [str(tmp_path / "t.parquet") if e == "TABLE" else e for e in extra]
    pq.write_table(letor_sample(), tmp_path / "t.parquet")
    assert main(["evaluate", *extra, "--run", a, "--qrels", q]) == 2
    assert match in capsys.readouterr().err


def test_output_into_a_missing_directory_is_one_line(tmp_path, capsys):
    for fmt in ("tsv", "parquet"):
        assert main(["evaluate", "--format", fmt, "-o", str(tmp_path / "no" / "x.out")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "uefast evaluate: error:" in err and "Traceback" not in err


def test_integer_qid_table_with_trec_qrels_and_table_qrels(tmp_path, capsys):
    """A run table with integer qids against a TREC qrels file (text qids) was a dtype error the
    command line could not fix; a Parquet qrels given with --run was parsed as TREC text."""
    import pyarrow as pa

    q, a, b = _trec_files(tmp_path)
    run = pa.table({"qid": [301, 301, 302, 302], "docid": ["d1", "d2", "d4", "d3"],
                    "score": [2.0, 1.0, 2.0, 1.0]})
    pq.write_table(run, tmp_path / "run.parquet")
    assert main(["evaluate", str(tmp_path / "run.parquet"), "--qrels", q, "-m", "AP", "--format", "tsv"]) == 0
    out, err = capsys.readouterr()
    assert "qrels column 'qid' read as int64 to match the run" in err
    assert main(["evaluate", "--run", a, "--qrels", q, "-m", "AP", "--format", "tsv"]) == 0
    want = capsys.readouterr().out.splitlines()[1].split("\t")[2:]
    assert out.splitlines()[1].split("\t")[2:] == want
    qrels = pa.table({"qid": ["301", "301", "302", "302"], "docid": ["d1", "d2", "d3", "d4"], "label": [1, 0, 2, 0]})
    pq.write_table(qrels, tmp_path / "qrels.bin")  # Parquet found by its magic bytes
    assert main(["evaluate", "--run", a, "--qrels", str(tmp_path / "qrels.bin"), "-m", "AP", "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[2:] == want
    # qrels ids that are not all integers: the run's integers are compared as text instead
    (tmp_path / "qx.txt").write_text(open(q).read() + "q9 0 d1 1\n")
    assert main(["evaluate", str(tmp_path / "run.parquet"), "--qrels", str(tmp_path / "qx.txt"),
                 "-m", "AP", "--format", "tsv"]) == 0
    out, err = capsys.readouterr()
    assert "compared as decimal text" in err and out.splitlines()[1].split("\t")[2:] == want


def test_nan_score_in_a_run_file_names_file_and_line(tmp_path, capsys):
    q, a, b = _trec_files(tmp_path)
    with open(b, "a") as fh:
        fh.write("302 Q0 d9 3 nan b\n")
    assert main(["evaluate", "--run", a, b, "--qrels", q]) == 2
    assert f"{b}:5: score is NaN" in capsys.readouterr().err


def test_streamed_input_reports_rows_not_in_qrels(tmp_path, capsys, monkeypatch):
    import pyarrow as pa

    q, a, b = _trec_files(tmp_path)
    run = pa.table({"qid": ["301", "301", "999"], "docid": ["d1", "d2", "d1"], "score": [2.0, 1.0, 1.0]})
    pq.write_table(run, tmp_path / "run.parquet")
    for threshold in (None, "1"):
        if threshold:
            monkeypatch.setenv("UEFAST_STREAMING_THRESHOLD", threshold)
        assert main(["evaluate", str(tmp_path / "run.parquet"), "--qrels", q, "--format", "tsv"]) == 0
        assert "1 run row of 1 query not in the qrels" in capsys.readouterr().err


def test_streamed_table_gets_the_in_memory_checks(tmp_path, capsys, monkeypatch):
    """The streamed TABLE path skipped what the in-memory one does: integer run qids against
    TREC qrels (a dtype error), --scores/--group ignored, -o ignored for text/tsv/jsonl, a
    non-Parquet file a traceback; a tab-separated TREC qrels (MS MARCO's qrels.dev.tsv) was taken
    for a table with a header; an empty path evaluated the embedded sample."""
    import pyarrow as pa

    q, a, b = _trec_files(tmp_path)
    run = pa.table({"qid": [301, 301, 302, 302], "docid": ["d1", "d2", "d4", "d3"], "score": [2.0, 1.0, 2.0, 1.0]})
    pq.write_table(run, tmp_path / "run.parquet")
    assert main(["evaluate", "--run", a, "--qrels", q, "-m", "AP", "--format", "tsv"]) == 0
    want = capsys.readouterr().out.splitlines()[1].split("\t")[2:]
    (tmp_path / "qrels.dev.tsv").write_text(open(q).read().replace(" ", "\t"))
    assert main(["evaluate", "--run", a, "--qrels", str(tmp_path / "qrels.dev.tsv"), "-m", "AP", "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[2:] == want
    monkeypatch.setenv("UEFAST_STREAMING_THRESHOLD", "1")
    out = tmp_path / "o.tsv"
    assert main(["evaluate", str(tmp_path / "run.parquet"), "--qrels", q, "-m", "AP", "--format", "tsv", "-o", str(out)]) == 0
    assert capsys.readouterr().out == "" and out.read_text().splitlines()[1].split("\t")[2:] == want
    assert main(["evaluate", str(tmp_path / "run.parquet"), "--qrels", q, "--scores", a]) == 2
    assert "--scores needs --letor" in capsys.readouterr().err
    (tmp_path / "bad.parquet").write_bytes(b"garbagegarbage")
    assert main(["evaluate", str(tmp_path / "bad.parquet")]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "Traceback" not in err
    monkeypatch.delenv("UEFAST_STREAMING_THRESHOLD")
    assert main(["evaluate", "", "-m", "AP"]) == 2
    assert "file not found: ''" in capsys.readouterr().err


def test_csv_ids_stay_text_and_integer_score_columns_count(tmp_path, capsys):
    """CSV type inference made docid 0001 the integer 1 (no longer the qrels' 0001: AP 0, exit
    0), merged LETOR qids 01 and 1, and dropped a score column whose values are whole numbers."""
    (tmp_path / "run.csv").write_text("qid,docid,score\n1,0001,3.0\n1,0002,2.0\n1,0003,1.0\n")
    (tmp_path / "qrels.txt").write_text("1 0 0001 1\n1 0 0002 0\n1 0 0003 1\n")
    assert main(["evaluate", str(tmp_path / "run.csv"), "--qrels", str(tmp_path / "qrels.txt"),
                 "-m", "AP", "--format", "tsv"]) == 0
    row = capsys.readouterr().out.splitlines()[1].split("\t")
    assert float(row[3]) == pytest.approx(5 / 6)
    (tmp_path / "l.csv").write_text("qid,label,bm25,rankscore\n01,1,1.5,3\n01,0,2.5,1\n"
                                    "1,1,0.5,2\n1,0,0.1,1\n")
    assert main(["evaluate", str(tmp_path / "l.csv"), "-m", "P@1", "--per-query",
                 "--format", "jsonl"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {(r["system"], r["qid"]) for r in rows} == {
        ("bm25", "01"), ("bm25", "1"), ("rankscore", "01"), ("rankscore", "1")}
    assert main(["evaluate", str(tmp_path / "l.csv"), "-m", "P@1", "--score-columns",
                 "rankscore", "--format", "jsonl"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["system"], r["value"]) for r in rows] == [("rankscore", 1.0)]


def test_integer_run_ids_against_text_qrels_alike_in_memory_and_streamed(tmp_path, capsys,
                                                                         monkeypatch):
    """One rule for both paths (the qrels read as the run's kind): the same input gave exit 2 in
    memory and AP 0.6667 streamed, and a string qid column in one, int64 in the other."""
    import pyarrow as pa

    run = tmp_path / "ri.parquet"
    pq.write_table(pa.table({"qid": [1, 1, 1, 2, 2], "docid": ["a", "b", "c", "a", "b"],
                             "score": [3.0, 2, 1, 1, 2]}), run)
    (tmp_path / "q.txt").write_text("001 0 a 1\n001 0 b 0\n001 0 c 1\n002 0 a 1\n002 0 b 0\n")
    outs = []
    for threshold in (None, "1"):
        if threshold:
            monkeypatch.setenv("UEFAST_STREAMING_THRESHOLD", threshold)
        out = tmp_path / f"o{threshold}.parquet"
        assert main(["evaluate", str(run), "--qrels", str(tmp_path / "q.txt"), "-m", "AP",
                     "--per-query", "--format", "parquet", "-o", str(out)]) == 0
        assert "read as int64 to match the run" in capsys.readouterr().err
        outs.append(pq.read_table(out))
    for t in outs:
        assert t.schema.field("qid").type == pa.int64()
        assert t["value"].to_pylist() == pytest.approx([(1 + 2 / 3) / 2, 0.5])
    # a streamed per-query file carries the same metadata as the in-memory one
    assert set(outs[1].schema.metadata) == set(outs[0].schema.metadata)


def test_tsv_refuses_tabs_without_leaving_a_file_and_options_that_do_nothing(tmp_path, capsys):
    import pyarrow as pa

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"qid": ["a\tb", "a\tb"], "label": [1, 0], "s": [0.1, 0.2]}), path)
    out = tmp_path / "x.tsv"
    assert main(["evaluate", str(path), "--per-query", "--format", "tsv", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "column 'qid' holds 'a\\tb'" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert main(["evaluate", "--format", "tsv", "--limit", "3"]) == 2
    assert "--limit applies to --format text" in capsys.readouterr().err
    assert main(["evaluate", "--queries", "qrels"]) == 2
    assert "--queries applies to TREC-style input" in capsys.readouterr().err


def test_csv_qrels_with_a_quoted_header_is_a_table(tmp_path, capsys):
    """pyarrow's CSV writer quotes the header; it was taken for TREC qrels text and refused."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    q, a, b = _trec_files(tmp_path)
    qrels = pa.table({"qid": ["301", "301", "302", "302"], "docid": ["d1", "d2", "d3", "d4"],
                      "label": [1, 0, 2, 0]})
    pacsv.write_csv(qrels, tmp_path / "qr.csv")
    assert open(tmp_path / "qr.csv").readline().startswith('"qid"')
    assert main(["evaluate", "--run", a, "--qrels", str(tmp_path / "qr.csv"), "-m", "AP",
                 "--format", "tsv"]) == 0
    got = capsys.readouterr().out
    assert main(["evaluate", "--run", a, "--qrels", q, "-m", "AP", "--format", "tsv"]) == 0
    assert got == capsys.readouterr().out


def test_review_cases_for_tsv_quotes_csv_labels_and_bom(tmp_path, capsys):
    """A double quote in a value crashed --format tsv (Arrow's unquoted writer refuses it); CSV
    qrels labels were typed by Arrow ('0x10' -> 16, '1e1' -> 10) where TREC qrels refuse them;
    a UTF-8 byte-order mark hid a CSV qrels header."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "r.txt").write_text('1 Q0 d1 1 2.0 a"b\n')
    assert main(["evaluate", "--run", str(tmp_path / "r.txt"), "--qrels", str(tmp_path / "q.txt"),
                 "-m", "P@1", "--format", "tsv"]) == 2
    assert "column 'system' holds 'a\"b', with a tab, a line break or a double quote" in \
        capsys.readouterr().err
    (tmp_path / "r2.txt").write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    run = str(tmp_path / "r2.txt")
    for label in ("0x10", "1e1"):
        (tmp_path / "q.csv").write_text(f"qid,docid,label\n1,d1,{label}\n1,d2,0\n")
        assert main(["evaluate", "--run", run, "--qrels", str(tmp_path / "q.csv"), "-m", "P@1"]) == 2
        assert f"q.csv:2: label '{label}' is not an integer: '1,d1,{label}'" in capsys.readouterr().err
    (tmp_path / "b.csv").write_bytes(b"\xef\xbb\xbfqid,docid,label\n1,d1,2.0\n1,d2,0\n")
    assert main(["evaluate", "--run", run, "--qrels", str(tmp_path / "b.csv"), "-m", "P@1",
                 "--rel-level", "2", "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[3] == "1"


def test_backend_auto(capsys):
    """--backend auto: without CuPy and a GPU (or on this small input) the CPU's output."""
    assert main(["evaluate", "--format", "tsv", "--per-query"]) == 0
    cpu = capsys.readouterr().out
    assert main(["evaluate", "--format", "tsv", "--per-query", "--backend", "auto"]) == 0
    assert capsys.readouterr().out == cpu
