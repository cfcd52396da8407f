"""``uefast trec_eval`` argument handling, errors, formats and the Python API."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from uefast.cli import cmd_trec_eval, main
from uefast.errors import InputError, MeasureParseError
from uefast.trec_eval import evaluate_trec, select_measures

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 0\n2 0 x 1\n"
UNRETRIEVED = "3 0 z 1\n"  # a qrels topic the run has no results for (``files_unretrieved``)
RUN = ("1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 d 3 2.0 r1\n1 Q0 c 4 1.0 r1\n"
       "2 Q0 x 1 1.0 r1\n2 Q0 y 2 1.0 r1\n9 Q0 a 1 1.0 r1\n")


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


@pytest.fixture
def files_unretrieved(tmp_path):
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text(QRELS + UNRETRIEVED)
    r.write_text(RUN)
    return str(q), str(r)


def _out(capsys, argv):
    assert main(["trec_eval", *argv]) == 0
    return capsys.readouterr().out


def test_default_output_and_topic_rules(files_unretrieved, capsys):
    files = files_unretrieved
    out = _out(capsys, ["-q", "-mnum_q", "-mnum_ret", "-mrelstring", *files, "--trec-eval-version", "9.0.8"])
    # topic 9 has no qrels: ignored; topic 3 has no results: skipped without -c (9.0.8; 10.0
    # stops there with exit status 4, tests/test_trec_eval_topics.py)
    assert out.splitlines() == [
        "num_ret               \t1\t4", "relstring             \t1\t'1-02'",
        "num_ret               \t2\t2", "relstring             \t2\t'-1'",
        "num_q                 \tall\t2", "num_ret               \tall\t6",
    ]


def test_ties_broken_by_docno_descending(files, capsys):
    # b and d tie at 2.0: d (greater docno) is ranked first
    assert "'1-02'" in _out(capsys, ["-q", "-mrelstring", *files])


def test_option_syntax_variants(files, capsys):
    a = _out(capsys, ["-mP.1,2", "-q", *files])
    b = _out(capsys, ["-q", "-m", "P.2,1", *files])
    c = _out(capsys, ["--measure=P.1,2", "--query_eval_wanted", *files])
    assert a == b == c
    assert "P_1 " in a and "P_2 " in a


def test_complete_and_max_docs(files_unretrieved, capsys):
    files = files_unretrieved
    out = _out(capsys, ["-c", "-M1", "-q", "-mnum_ret", "-mP.1", *files])
    assert "num_ret               \t3\t0" in out       # bogus topic printed (trec_eval 10)
    assert "P_1                   \tall\t0.3333" in out  # averaged over 3 qrels topics
    out9 = _out(capsys, ["-c", "-q", "-mP.1", "--trec-eval-version", "9.0.8", *files])
    assert "\t3\t" not in out9 and "P_1                   \tall\t0.3333" in out9


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["-m", "prefs_simp"], "illegal measure"),
        (["-m", "all_prefs"], "not supported"),
        (["-Z", "zfile"], "-Z"),
        (["-R", "prefs"], "-R prefs"),
        (["-x"], "invalid option"),
        (["-m", "P.5,5"], "duplicate cutoffs"),
        (["--format", "xml"], "--format"),
    ],
)
def test_unsupported_is_an_error(files, argv, match):
    with pytest.raises((InputError, MeasureParseError), match=match):
        cmd_trec_eval.main([*argv, *files])


def test_cli_reports_errors_with_exit_code_2(files, capsys):
    assert main(["trec_eval", "-m", "bogus", *files]) == 2
    assert "illegal measure 'bogus'" in capsys.readouterr().err


def test_wrong_file_count(files):
    with pytest.raises(InputError, match="expected rel_info_file and results_file"):
        cmd_trec_eval.main([files[0]])


def test_formats(files, capsys, tmp_path):
    tsv = _out(capsys, ["--format", "tsv", "-mmap", *files]).splitlines()
    assert tsv[0] == "runid\tmeasure\tqid\tvalue\ttext" and tsv[1].startswith("r1\tmap\tall\t")
    js = [json.loads(x) for x in _out(capsys, ["--format", "jsonl", "-q", "-mmap", *files]).splitlines()]
    assert js[-1]["qid"] == "all" and js[0]["measure"] == "map"
    # text-valued runid / relstring: in the text column, the value column stays numeric (empty)
    tsv = _out(capsys, ["--format", "tsv", "-q", "-m", "official", "-mrelstring", *files]).splitlines()
    rows = [line.split("\t") for line in tsv[1:]]
    assert ["r1", "runid", "all", "", "r1"] in rows and ["r1", "relstring", "1", "", "1-02"] in rows
    assert all(len(r) == 5 and (r[3] == "") == (r[1] in ("runid", "relstring")) for r in rows)
    assert {float(r[3]) for r in rows if r[1] == "num_q"} == {2.0}
    js = [json.loads(x) for x in _out(capsys, ["--format", "jsonl", "-mrunid", "-mmap", *files]).splitlines()]
    assert js[0] == {"runid": "r1", "measure": "runid", "qid": "all", "value": None, "text": "r1"}
    assert isinstance(js[1]["value"], float) and js[1]["text"] is None
    pq = tmp_path / "o.parquet"
    _out(capsys, ["--format", "parquet", "--output", str(pq), "-mmap", *files])
    import pyarrow.parquet as pqm

    assert pqm.read_table(pq).column_names == ["runid", "measure", "qid", "value", "text"]


def test_ue_lines(files, capsys):
    pytest.importorskip("uefast.evaluate", reason="engine not available")
    out = _out(capsys, ["--ue", "-q", "-mmap", "-mP.2", *files]).splitlines()
    names = [line.split("\t")[0].strip() for line in out if "\t1\t" in line]
    assert names == ["map", "map_iub", "map_reb", "map_ue_v1", "map_ue_v2",
                     "P_2", "P_2_iub", "P_2_reb", "P_2_ue_v1", "P_2_ue_v2"]
    out = _out(capsys, ["--ue", "-q", "-msuccess.1", *files]).splitlines()
    names = [line.split("\t")[0].strip() for line in out if "\t1\t" in line]
    assert names == ["success_1", "success_1_iub", "success_1_reb", "success_1_ue_v1",
                     "success_1_ue_v2"]


def test_python_api_and_measure_order():
    run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [2.0, 1.0], "system": ["s", "s"]})
    qrels = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "label": [0, 1]})
    res = evaluate_trec(run, qrels, ["P.1", "map"])
    assert [s.name for s in res.slots] == ["map", "P_1"]  # table order, as trec_eval
    assert res.slots[0].summary == pytest.approx(0.5)
    assert [s.spec.name for s in select_measures([], "10.0")][:3] == ["runid", "num_q", "num_ret"]
    assert "unj" not in [s.spec.name for s in select_measures(["all_trec"], "9.0.8")]


def test_float32_ties_in_9_0_8():
    # 1.00000001 and 1.0 differ as double but tie as float32: docno decides in 9.0.8
    run = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [1.00000001, 1.0], "system": ["s", "s"]})
    qrels = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "label": [1, 0]})
    assert evaluate_trec(run, qrels, ["P.1"]).slots[0].summary == 1.0
    assert evaluate_trec(run, qrels, ["P.1"], version="9.0.8").slots[0].summary == 0.0


def test_trec_eval_command_does_not_import_pandas(files):
    """`uefast trec_eval` (text output) builds its Arrow arrays from buffers: pyarrow imports
    pandas (~0.3 s of every call) as soon as pa.array() sees Python or NumPy values."""
    import subprocess
    import sys

    qrels, run = files
    code = ("import sys; from uefast.cli import main; "
            f"rc = main(['trec_eval', '-q', '-m', 'all_trec', {str(qrels)!r}, {str(run)!r}]); "
            "print(rc, 'pandas' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.split()[-2:] == ["0", "False"], out.stderr


@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_relative_p_is_zero_for_a_topic_without_relevant_docs(tmp_path, capsys, version):
    """m_rel_P.c returns 0 when num_rel == 0, m_set_rel_P.c when num_ret or num_rel is 0 (a
    plain division printed -nan for the topic and the mean; pytrec_eval gives 0.0 too)."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 0\n1 0 b 0\n2 0 x 1\n2 0 y 1\n")
    r.write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 2.0 r\n2 Q0 x 1 1.0 r\n")
    out = _out(capsys, ["-q", "-mrelative_P.1,4", "-mset_relative_P", "--trec-eval-version", version, str(q), str(r)])
    assert out.splitlines() == [
        "relative_P_1          \t1\t0.0000", "relative_P_4          \t1\t0.0000",
        "set_relative_P        \t1\t0.0000",
        "relative_P_1          \t2\t1.0000", "relative_P_4          \t2\t0.5000",
        "set_relative_P        \t2\t1.0000",
        "relative_P_1          \tall\t0.5000", "relative_P_4          \tall\t0.2500",
        "set_relative_P        \tall\t0.5000",
    ]
    # -l 2: no topic has a relevant document
    out = _out(capsys, ["-l2", "-mrelative_P.4", "-mset_relative_P", str(q), str(r)])
    assert "nan" not in out and "relative_P_4          \tall\t0.0000" in out


def test_repeated_docno_is_an_error_only_where_trec_eval_checks(tmp_path, capsys):
    """form_res_rels.c looks for a repeated docno among the first -M documents of a topic it
    evaluates (one with qrels), after ranking: a repeat beyond -M, or in a topic without qrels,
    is ranked like any row (the fast scan refused both files before)."""
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 x 1\n")
    run = tmp_path / "run"
    # topic 1 ranks a(5) b(4) c(3) c(2.9) a(0.1): 'a' repeats at ranks 1 and 5, 'c' at 3 and 4;
    # input order puts the 'a' pair first.  Topic 9 (no qrels) repeats 'z'.
    run.write_text("1 Q0 a 1 5 r\n1 Q0 a 2 0.1 r\n1 Q0 b 3 4 r\n1 Q0 c 4 3 r\n1 Q0 c 5 2.9 r\n"
                   "2 Q0 x 1 1 r\n9 Q0 z 1 1 r\n9 Q0 z 2 0.5 r\n")
    assert main(["trec_eval", "-M2", "-mnum_ret", "-mmap", str(q), str(run)]) == 0
    assert capsys.readouterr().out.splitlines() == ["num_ret               \tall\t3",
                                                    "map                   \tall\t0.7500"]
    # -M4: only 'c' repeats within the first 4; -M1000: both, the first pair in file order is
    # named, with the lines (as `--ue`, which reads the run as a table, names them)
    for m, doc, line, first in (("-M4", "c", 5, 4), ("-M1000", "a", 2, 1)):
        for ue in ([], ["--ue"]):
            assert main(["trec_eval", *ue, m, "-mmap", str(q), str(run)]) == 2
            err = capsys.readouterr().err
            assert (f"{run}:{line}: docno '{doc}' retrieved twice for topic '1' (trec_eval: "
                    f"\"duplicate docs\"), first seen at line {first}: ") in err, err
    assert main(["trec_eval", "-mmap", str(q), str(run)]) == 2
    # the Arrow-table API: the same rule
    t = pa.table({"qid": ["1", "1", "1", "1", "1"], "docid": ["a", "a", "b", "c", "c"],
                  "score": [5, 0.1, 4, 3, 2.9], "system": ["r"] * 5})
    assert evaluate_trec(t, str(q), ["num_ret"], max_docs=2).slots[0].summary == 2
    with pytest.raises(InputError, match="run: docno 'c' retrieved twice for topic '1'"):
        evaluate_trec(t, str(q), ["num_ret"], max_docs=4)
    from uefast.io import read_run
    with pytest.raises(InputError, match="repeated"):
        read_run(run)
    assert read_run(run, duplicates="keep").num_rows == 8


def test_huge_label_is_an_error_not_a_memory_error(tmp_path, capsys):
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("".join(f"{t} 0 d{t} {10 ** 8 if t == 7 else 1}\n" for t in range(300)))
    r.write_text("1 Q0 d1 1 1.0 r\n")
    assert main(["trec_eval", "-mmap", str(q), str(r)]) == 2
    err = capsys.readouterr().err
    assert "label 100000000 (topic '7', docno 'd7') is too large" in err and "labels up to 111847" in err


def test_nan_score_refused_in_an_evaluated_topic(tmp_path, capsys):
    """trec_eval's comparator is false both ways for NaN, so its ranking is undefined: refused
    (a number came out before) -- but only in topics that have qrels."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    r.write_text("# c\n9 Q0 z 1 nan r\n1 Q0 a 1 1.0 r\n\n1 Q0 b 2 nan r\n")
    for ue in ([], ["--ue"]):
        assert main(["trec_eval", *ue, "-mmap", str(q), str(r)]) == 2
        err = capsys.readouterr().err
        assert f"{r}:5: score NaN (or missing) for docno 'b' in topic '1' (1 such rows" in err, err
        assert err.rstrip().endswith("drop those lines: '1 Q0 b 2 nan r'"), err
    r.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n9 Q0 z 1 nan r\n")
    assert main(["trec_eval", "-mmap", str(q), str(r)]) == 0
    assert capsys.readouterr().out == "map                   \tall\t1.0000\n"


def test_ue_lines_with_repeats_trec_eval_never_looks_at(tmp_path, capsys):
    """--ue read run and qrels with the strict readers: a repeat beyond -M, in a topic without
    qrels, or a judgment repeated in a topic not evaluated stopped it where plain output works."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 x 1\n7 0 y 1\n7 1 y 0\n")
    r.write_text("1 Q0 a 1 5 r\n1 Q0 a 2 0.1 r\n1 Q0 b 3 4 r\n1 Q0 c 4 3 r\n2 Q0 x 1 1 r\n9 Q0 z 1 1 r\n"
                 "9 Q0 z 2 0.5 r\n")
    v9 = ["--trec-eval-version", "9.0.8"]  # 10.0 stops at topic 7 (no results; exit status 4)
    assert main(["trec_eval", "-M3", "-mmap", str(q), str(r), *v9]) == 0
    plain = capsys.readouterr().out
    assert main(["trec_eval", "--ue", "-M3", "-mmap", str(q), str(r), *v9]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == plain.splitlines()[0] and "map_ue_v1" in out


def test_ue_lines_rank_what_trec_eval_ranks(tmp_path, capsys):
    """--ue handed the whole run to the engine: a NaN score in a topic without qrels stopped it,
    -c in 9.0.8 mode looked at a judgment repeated in a topic without results, and 9.0.8's float32
    ties were ignored (recip_rank 0.5 printed beside recip_rank_ue_v2 1.0)."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 1\n1 0 b 0\n3 0 k 1\n3 0 k 0\n")
    r.write_text("1 Q0 a 1 1.00000001 r\n1 Q0 b 2 1.0 r\n9 Q0 z 1 nan r\n")
    assert main(["trec_eval", "--ue", "-c", "--trec-eval-version", "9.0.8", "-mrecip_rank", str(q), str(r)]) == 0
    out = dict(line.split("\t")[0::2] for line in capsys.readouterr().out.splitlines())
    assert out["recip_rank            "] == "0.2500"  # b first (float32 tie, docno descending); -c: /2
    assert out["recip_rank_ue_v2      "] == "-0.3333"  # that ranking: (0.5 - 0.75) / 0.75 (was 1.0)


def test_integers_beyond_64_bits_are_clamped_as_strtol_does(files, capsys):
    """trec_eval reads -l/-M/-N, long cutoffs and gain levels with atol/strtol, which glibc
    clamps to LONG_MIN/LONG_MAX: a wider value acts as the clamped one (it was a Numba
    TypingError or an OverflowError traceback)."""
    big, lmax, lmin = "9" * 20, str(2 ** 63 - 1), str(-(2 ** 63))

    def values(argv):
        return [line.split("\t")[1:] for line in _out(capsys, [*argv, *files]).splitlines()]

    for wide, clamped in ((["-l", big], ["-l", lmax]), (["-l", "-" + big], ["-l", lmin]),
                          (["-M", big], ["-M", lmax]),
                          (["-N", big, "-mutility.0,0,0,1"], ["-N", lmax, "-mutility.0,0,0,1"]),
                          (["-mP." + big], ["-mP." + lmax]), (["-mndcg_cut.5," + big], ["-mndcg_cut.5," + lmax]),
                          (["-msuccess." + big], ["-msuccess." + lmax]),
                          (["-mndcg." + big + "=2"], ["-mndcg." + lmax + "=2"])):
        assert values(wide) == values(clamped), wide
    assert "P_9223372036854775807 \tall\t" in _out(capsys, ["-mP." + big, *files])
    # doubles cast to long / int as C does on x86-64 ((long) 1e400 == LONG_MIN): no traceback
    assert "relstring_1e400       \t1\t''" in _out(capsys, ["-q", "-mrelstring.1e400", *files])
    assert "ndcg_rel_1=1e400" in _out(capsys, ["-mndcg_rel.1=1e400", *files])


def test_9_0_8_float_overflow_is_inf_without_a_warning(tmp_path, capsys):
    """9.0.8 keeps scores as C float: 1e300 and 1e39 both become inf and tie (docno decides);
    NumPy printed "RuntimeWarning: overflow encountered in cast" on stderr."""
    import warnings

    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    r.write_text("1 Q0 a 1 1e300 r\n1 Q0 b 2 1e39 r\n")
    t = pa.table({"qid": ["1", "1"], "docid": ["a", "b"], "score": [1e300, 1e39], "system": ["r", "r"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert _out(capsys, ["-q", "-mrelstring", "--trec-eval-version", "9.0.8", str(q), str(r)]) == \
            "relstring             \t1\t'01'\n"
        assert evaluate_trec(t, str(q), ["P.1"], version="9.0.8").slots[0].summary == 0.0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("m", ["rbp", "rbp_resid", "dcg", "ideal_dcg", "unj.5"])
def test_measures_trec_eval_10_added_are_illegal_in_9_0_8(files, capsys, m):
    """9.0.8's measure table (as compiled into pytrec_eval) has none of them: trec_eval 9.0.8
    says "illegal measure" (uefast computed rbp, rbp_resid, dcg, ideal_dcg in 9.0.8 mode)."""
    with pytest.raises(MeasureParseError, match=rf"illegal measure '{m}' for trec_eval 9.0.8 \(a trec_eval 10.0 measure"):
        cmd_trec_eval.main(["--trec-eval-version", "9.0.8", "-m", m, *files])
    assert _out(capsys, ["-m", m, *files]).startswith(m.replace(".", "_"))


def test_measure_parameters_checked_as_trec_eval_checks_them(files, capsys):
    """trec_eval.c keeps any measure's parameters and only the measures that take some read
    them (``-m map.5`` prints map; uefast refused it); meas_init.c's get_param_pairs wants each
    comma-separated parameter to be one name=value (``1=2=3`` was read as 1=2; ``=3``, an
    empty name that no label matches, was refused); an empty parameter list after any ``-m
    name.`` is an error."""
    assert _out(capsys, ["-mmap.5", "-mrecip_rank.10", "-mnum_q.3", *files]) == \
        _out(capsys, ["-mmap", "-mrecip_rank", "-mnum_q", *files])
    assert _out(capsys, ["-mndcg.=3", *files]).replace("ndcg_=3  ", "ndcg     ") == _out(capsys, ["-mndcg", *files])
    for bad in ("1=2=3", "1=2,", "1=2,3", ",1=2", "1=2,,3=4"):
        with pytest.raises(MeasureParseError, match=f"malformed pair parameters in '{bad}'"):
            cmd_trec_eval.main([f"-mndcg.{bad}", *files])
    for arg in (["-mP.5", "-mP."], ["-mofficial."], ["-mmap."]):
        with pytest.raises(MeasureParseError, match=r"improper measure parameters in '\w+\.'"):
            cmd_trec_eval.main([*arg, *files])


def test_long_options_take_unambiguous_prefixes(files, capsys):
    """trec_eval parses with getopt_long: ``--query`` is ``--query_eval_wanted`` (uefast said
    "unknown option"); an ambiguous prefix or a value given to a flag is an error."""
    full = _out(capsys, ["--query_eval_wanted", "--measure=P.1", "--level_for_rel", "2", *files])
    assert _out(capsys, ["--query", "--meas=P.1", "--lev", "2", *files]) == full
    assert _out(capsys, ["--q", "--m", "P.1", "--level_for_rel=2", *files]) == full
    with pytest.raises(InputError, match="option '--R' is ambiguous; possibilities: '--Rel_info_format' "
                                         "'--Results_format'"):
        cmd_trec_eval.main(["--R", "qrels", *files])
    with pytest.raises(InputError, match="option '--query_eval_wanted' doesn't allow an argument"):
        cmd_trec_eval.main(["--query=1", *files])
    with pytest.raises(InputError, match="unknown option '--queries'"):
        cmd_trec_eval.main(["--queries", *files])


def test_cutoffs_printed_in_trec_evals_qsort_order():
    """trec_eval sorts long cutoffs with (int)(a - b): cutoffs 2^32 or more apart compare as the
    low 32 bits of their difference, so P.4294967301,5 prints P_4294967301 first (as pytrec_eval
    does); an ordinary list is sorted."""
    names = lambda m: select_measures([m])[0].names  # noqa: E731
    assert names("P.4294967301,5") == ["P_4294967301", "P_5"]
    assert names("P.99999999999999999999,5") == ["P_9223372036854775807", "P_5"]
    assert names("P.5,10,3") == ["P_3", "P_5", "P_10"]
