"""Reading trec_eval's per-topic output (``trec_eval -q``) back for the significance tests."""
from __future__ import annotations

import numpy as np
import pytest

import uefast
from uefast.cli import main
from uefast.errors import InputError
from uefast.io import read_qrels, read_run, read_trec_eval_output

EVAL = (
    "runid                 \tall\tbm25\n"
    "num_ret               \t301\t10\n"
    "map                   \t301\t0.2500\n"
    "relstring             \t301\t'10-'\n"
    "map                   \t302\t0.7500\n"
    "num_q                 \tall\t2\n"
    "map                   \tall\t0.5000\n"
)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_per_topic_lines_named_by_runid_stem_or_argument(tmp_path):
    a = _write(tmp_path, "a.eval", EVAL)
    b = _write(tmp_path, "dense.eval", EVAL.replace("runid                 \tall\tbm25\n", "")
               .replace("0.2500", "0.5000"))
    t = read_trec_eval_output([a, b])
    assert t.column_names == ["system", "measure", "qid", "value"]
    rows = [(r["system"], r["measure"], r["qid"], r["value"]) for r in t.to_pylist()]
    assert rows == [("bm25", "num_ret", "301", 10.0), ("bm25", "map", "301", 0.25),
                    ("bm25", "relstring", "301", None), ("bm25", "map", "302", 0.75),
                    ("dense", "num_ret", "301", 10.0), ("dense", "map", "301", 0.5),
                    ("dense", "relstring", "301", None), ("dense", "map", "302", 0.75)]
    t = read_trec_eval_output([a, b], system=["A", "B"])
    assert t["system"].unique().to_pylist() == ["A", "B"]


@pytest.mark.parametrize(("text", "match"), [
    ("map\t301\n", r"e.txt:1: expected 3 fields \(measure qid value\) as trec_eval prints them, got 2"),
    ("map\t301\t0.25\nmap\t302\tx\n", r"e.txt:2: value 'x' is not a number"),
    ("map\t301\t0.25\nP_5\t301\t0.2\nmap\t301\t0.5\n", r"e.txt:3: measure 'map' of topic '301' printed "
                                                      r"twice \(first at line 1\)"),
    ("map\tall\t0.25\n", r"e.txt: no per-topic lines .* was trec_eval run with -q\?"),
    ("", r"e.txt: empty file"),
])
def test_errors_name_file_and_line(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        read_trec_eval_output(_write(tmp_path, "e.txt", text))


def test_same_runid_twice_needs_names(tmp_path):
    a = _write(tmp_path, "a.eval", EVAL)
    b = _write(tmp_path, "b.eval", EVAL)
    with pytest.raises(InputError, match="'bm25' is also used by .*a.eval.*--names"):
        read_trec_eval_output([a, b])


@pytest.fixture
def robust_pair(shared_data):
    """The Robust 2003 qrels and two of its runs (skipped where the data is absent; through
    ``shared_data``, the tests using it are marked slow, see conftest)."""
    robust = shared_data / "trec2003_robust"
    if not robust.is_dir():
        pytest.skip(f"Robust 2003 data not found under {shared_data}")
    return (robust / "robust03_qrels.txt",
            [robust / "runs" / "input.Sel50.gz", robust / "runs" / "input.aplrob03a.gz"])


def test_compare_trec_eval_outputs_matches_compare_on_the_runs(tmp_path, capsys, robust_pair):
    """`uefast compare --trec-eval` on `uefast trec_eval -q` outputs of two Robust runs gives the
    per-topic AP of `uefast.evaluate` rounded as trec_eval prints it, and the same test result
    as comparing those rounded values directly."""
    qrels, runs = robust_pair
    outs = []
    for r in runs:
        assert main(["trec_eval", "-q", "-m", "runid", "-m", "map", str(qrels), str(r)]) == 0
        outs.append(_write(tmp_path, r.name + ".eval", capsys.readouterr().out))
    t = read_trec_eval_output(outs)
    ref = uefast.evaluate(read_run(runs), read_qrels(qrels), ["AP"], ue=False)
    got = {(r["system"], r["qid"]): r["value"] for r in t.to_pylist() if r["measure"] == "map"}
    want = {(r["system"], r["qid"]): float(f"{r['value']:.4f}") for r in ref.to_pylist()}
    assert got == want and len(got) == 200
    assert main(["compare", "--trec-eval", *map(str, outs), "--measure", "map", "--format", "tsv"]) == 0
    line = capsys.readouterr().out.splitlines()[1].split("\t")
    a = np.array([want[("Sel50", q)] for q in sorted({q for _, q in want})])
    b = np.array([want[("aplrob03a", q)] for q in sorted({q for _, q in want})])
    res = uefast.stats.paired_test(a, b, method="t")
    assert line[:2] == ["Sel50", "aplrob03a"] and float(line[9]) == pytest.approx(res.pvalue, rel=1e-12)


def test_compare_cli_input_checks(tmp_path, capsys):
    a = _write(tmp_path, "a.eval", EVAL)
    for argv, msg in [(["--trec-eval", str(a)], "--trec-eval needs --measure"),
                      (["--trec-eval", str(a), "--qrels", "q.txt", "--measure", "map"],
                       "--qrels goes with --run, not with --trec-eval"),
                      (["x.tsv", "--trec-eval", str(a), "--measure", "map"],
                       "give one input: a per-query table or --trec-eval, not both"),
                      (["--trec-eval", str(a), "--names", "A", "B", "--measure", "map"],
                       "--names: 1 trec_eval output files but 2 names"),
                      (["--trec-eval", str(a), "--measure", "AP"],
                       "--measure 'AP': trec_eval prints it as 'map'; use --measure map")]:
        assert main(["compare", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert msg in err and len(err.splitlines()) == 1, err


def test_trec_eval_names_of_engine_measures():
    from uefast.trec_eval.ue import engine_measure, trec_eval_name

    for m, te in [("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("P@5", "P_5"), ("RR", "recip_rank"),
                  ("R@100", "recall_100"), ("AP@10", "map_cut_10"), ("Success@1", "success_1"),
                  ("Rprec", "Rprec")]:
        assert trec_eval_name(m) == te and engine_measure(te) == m
    assert trec_eval_name("nDCG") == "ndcg"
    assert trec_eval_name("ERR@20") is None and trec_eval_name("not a measure") is None


def test_compare_reads_uefast_trec_eval_tsv(tmp_path, capsys, robust_pair):
    """`uefast trec_eval -q --format tsv` outputs (runid column, summary rows with qid 'all'),
    concatenated, are a `uefast compare` input: the same test as on the runs themselves."""
    qrels, runs = robust_pair
    lines = []
    for r in runs:
        assert main(["trec_eval", "-q", "-m", "map", "--format", "tsv", str(qrels), str(r)]) == 0
        out = capsys.readouterr().out.splitlines()
        lines += out if not lines else out[1:]
    path = _write(tmp_path, "both.tsv", "\n".join(lines) + "\n")
    assert main(["compare", str(path), "--measure", "map", "--format", "tsv"]) == 0
    via_tsv = capsys.readouterr().out.splitlines()[1].split("\t")
    assert main(["compare", "--run", *map(str, runs), "--qrels", str(qrels), "--measure", "AP",
                 "--format", "tsv"]) == 0
    via_runs = capsys.readouterr().out.splitlines()[1].split("\t")
    assert via_tsv[:3] == via_runs[:3] == ["Sel50", "aplrob03a", "100"]
    assert float(via_tsv[9]) == pytest.approx(float(via_runs[9]), rel=1e-9)


def test_relstring_with_a_cutoff_is_text(tmp_path):
    """trec_eval prints `relstring_20` for -m relstring.20: a text value, not a number."""
    from uefast.io import read_trec_eval_output

    p = tmp_path / "x.eval"
    p.write_text("relstring_20          \t301\t'0000011000000--10101'\nmap                   \t301\t0.5000\n"
                 "runid                 \tall\tr\n")
    t = read_trec_eval_output(p)
    import pyarrow.compute as pc

    assert t.filter(pc.equal(t["measure"], "map"))["value"].to_pylist() == [0.5]
    assert t.filter(pc.equal(t["measure"], "relstring_20"))["value"].to_pylist() == [None]
