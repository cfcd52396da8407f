"""`uefast compare` on Parquet / TSV input."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uefast.cli import main


def _long(tmp_path, fmt):
    rng = np.random.default_rng(0)
    rows = []
    for s, shift in (("bm25", 0.0), ("dense", 0.05), ("rerank", 0.2)):
        for q in range(30):
            rows.append({"system": s, "qid": q, "measure": "nDCG@10",
                         "value": float(np.clip(rng.random() * 0.6 + shift, 0, 1)), "ue_v2": 0.0})
            rows.append({"system": s, "qid": q, "measure": "AP", "value": 0.3, "ue_v2": 0.0})
    table = pa.Table.from_pylist(rows)
    if fmt == "parquet":
        path = tmp_path / "pq.parquet"
        pq.write_table(table, path)
    else:
        path = tmp_path / "scores.tsv"
        nd = [r for r in rows if r["measure"] == "nDCG@10" and not (r["system"] == "dense" and r["qid"] == 5)]
        path.write_text("qid\tsystem\tvalue\n" + "".join(f"{r['qid']}\t{r['system']}\t{r['value']}\n" for r in nd))
    return path


def test_compare_text_parquet(tmp_path, capsys):
    path = _long(tmp_path, "parquet")
    assert main(["compare", str(path), "--measure", "nDCG@10", "--method", "bootstrap",
                 "--n-resamples", "500"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["system", "A", "system", "B"]
    assert len([ln for ln in lines if ln.startswith(("bm25", "dense"))]) == 3
    assert "method=bootstrap" in out and "correction=holm" in out and "B=500, seed=0" in out
    assert "CI=95% bootstrap-percentile" in out
    assert main(["compare", str(path), "--measure", "nDCG@10", "--confidence-level", "0.999"]) == 0
    assert "CI=99.9% t" in capsys.readouterr().out  # was "CI=100%" (format .0%)


def test_compare_tsv_baseline_jsonl(tmp_path, capsys):
    path = _long(tmp_path, "tsv")
    assert main(["compare", str(path), "--method", "randomization", "--baseline", "bm25",
                 "--n-resamples", "999", "--format", "jsonl"]) == 0
    rows = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [(r["system_a"], r["system_b"]) for r in rows] == [("dense", "bm25"), ("rerank", "bm25")]
    assert rows[0]["n_topics"] == 29  # qid 5 missing for dense -> intersect
    assert rows[1]["significant"] is True


def test_compare_jsonl_is_valid_json(tmp_path, capsys):
    """A constant non-zero difference has t = +inf: JSON has no Infinity, so it is null."""
    path = tmp_path / "c.tsv"
    path.write_text("qid\tsystem\tvalue\n" + "".join(
        f"{q}\ta\t{q}.5\n{q}\tb\t{q}.25\n" for q in range(1, 5)))
    assert main(["compare", str(path), "--format", "jsonl"]) == 0
    out = capsys.readouterr().out
    row = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert row["statistic"] is None and row["mean_difference"] == 0.25


def test_compare_text_reports_missing(tmp_path, capsys):
    path = _long(tmp_path, "tsv")
    assert main(["compare", str(path), "--method", "tukey_hsd", "--correction", "none",
                 "--n-resamples", "300"]) == 0
    assert "missing=intersect: dropped 1 queries" in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["compare", "/nonexistent.tsv"], "input file not found"),
    (["compare", "{pq}"], "holds 2 measures"),
    (["compare", "{pq}", "--measure", "nDCG@10", "--column", "zz"], "`--column` 'zz' not in the input"),
    (["compare", "{pq}", "--measure", "nDCG@10", "--baseline", "zz"], "`baseline` 'zz'"),
    (["compare", "{pq}", "--measure", "nDCG@10", "--missing", "error", "--alpha", "2"], "`alpha`"),
])
def test_compare_bad_input_exit_2(tmp_path, capsys, argv, match):
    path = _long(tmp_path, "parquet")
    argv = [a.replace("{pq}", str(path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1


def test_compare_trec_runs_directly(tmp_path, capsys):
    """`uefast compare --run A B --qrels Q` evaluates the runs, then tests every pair."""
    from uefast.cli import main as cli_main

    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d % 3 == 0)}\n" for q in range(1, 9) for d in range(10)))
    for name, shift in (("a", 0), ("b", 1)):
        lines = [f"{q} Q0 d{d} {r} {10 - r - shift * (d % 3 == 0)} {name}\n"
                 for q in range(1, 9) for r, d in enumerate(range(10))]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    argv = ["compare", "--run", str(tmp_path / "a.run"), str(tmp_path / "b.run"),
            "--qrels", str(qrels), "--measure", "AP", "--method", "t", "--format", "tsv"]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1].split("\t")[:2] == ["a", "b"]
    assert cli_main(argv[:4] + ["--measure", "AP"]) == 2  # --run without --qrels
    assert "--run needs --qrels" in capsys.readouterr().err
    # files that share a runid are told apart by --names
    for name in ("a", "b"):
        path = tmp_path / f"{name}.run"
        path.write_text(path.read_text().replace(f" {name}\n", " indri\n"))
    assert cli_main(argv) == 2
    assert "--names" in capsys.readouterr().err
    assert cli_main(argv[:4] + ["--names", "A", "B"] + argv[4:]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1].split("\t")[:2] == ["A", "B"]


def test_compare_input_errors_and_notes(tmp_path, capsys):
    """A non-numeric value column was a 28-line traceback; `nan` in a TSV was read as missing
    (a Parquet NaN is an error); the missing-query note was lost with --format tsv|jsonl."""
    p = tmp_path / "s.tsv"
    p.write_text("qid\tsystem\tvalue\n1\ta\t0.5\n1\tb\tx\n2\ta\t0.1\n2\tb\t0.2\n")
    assert main(["compare", str(p)]) == 2
    assert "column `value` must hold numbers, got string; row 1 holds 'x'" in capsys.readouterr().err
    p.write_text("qid\tsystem\tvalue\n1\ta\t0.5\n1\tb\tnan\n2\ta\t0.1\n2\tb\t0.2\n3\ta\t0.3\n3\tb\t0.9\n")
    assert main(["compare", str(p)]) == 2
    assert "column `value` is NaN for system 'b', qid '1'" in capsys.readouterr().err
    p.write_text("qid\tsystem\tvalue\n1\ta\t0.5\n1\tb\t\n2\ta\t0.1\n2\tb\t0.2\n3\ta\t0.3\n3\tb\t0.9\n")
    for fmt in ("tsv", "jsonl"):
        assert main(["compare", str(p), "--format", fmt]) == 0
        out, err = capsys.readouterr()
        assert "dropped 1 queries" in err and "dropped" not in out


def test_compare_tukey_not_corrected_twice(tmp_path, capsys):
    path = _long(tmp_path, "parquet")
    assert main(["compare", str(path), "--measure", "nDCG@10", "--method", "tukey_hsd",
                 "--n-resamples", "200", "--format", "jsonl"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert all(r["pvalue_adjusted"] == r["pvalue"] for r in rows)
    assert main(["compare", str(path), "--measure", "nDCG@10", "--method", "tukey_hsd",
                 "--n-resamples", "200", "--correction", "holm", "--format", "jsonl"]) == 0
    assert "on top of tukey_hsd" in capsys.readouterr().err


def test_compare_reads_trec_eval_tsv_with_its_runid_rows(tmp_path, capsys):
    """`uefast trec_eval -q --format tsv` writes a `runid ... all <name>` row: the value column
    was read as text and refused, though the doc names this input."""
    q = tmp_path / "q.txt"
    q.write_text("301 0 d1 1\n301 0 d2 0\n302 0 d3 1\n")
    outs = []
    for name, docs in (("a", "d1 d2"), ("b", "d2 d1")):
        r = tmp_path / f"{name}.run"
        d1, d2 = docs.split()
        r.write_text(f"301 Q0 {d1} 1 2 {name}\n301 Q0 {d2} 2 1 {name}\n302 Q0 d3 1 1 {name}\n")
        assert main(["trec_eval", "-q", "--format", "tsv", str(q), str(r)]) == 0
        outs.append(capsys.readouterr().out)
    both = tmp_path / "both.tsv"
    both.write_text(outs[0] + "".join(outs[1].splitlines(keepends=True)[1:]))
    assert main(["compare", str(both), "--measure", "map", "--format", "jsonl"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["system_a"], row["system_b"], row["mean_a"], row["mean_b"]) == ("a", "b", 1.0, 0.75)


def test_compare_reads_csv_ids_as_text(tmp_path, capsys):
    """qid 1.1 and 1.10 (or 001 and 1) are different topics: type inference merged them into a
    'duplicate rows' error, while uefast evaluate writes them apart."""
    p = tmp_path / "q.tsv"
    p.write_text("qid\tsystem\tvalue\n1.1\ta\t0.5\n1.1\tb\t0.4\n1.10\ta\t0.1\n1.10\tb\t0.2\n"
                 "2\ta\t0.3\n2\tb\t0.1\n3\ta\t0.3\n3\tb\t0.2\n")
    assert main(["compare", str(p), "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["n_topics"] == 4


def test_compare_ignores_a_text_label_column(tmp_path, capsys):
    """Only relevance tables parse `label`: compare's per-query table may carry any label."""
    p = tmp_path / "c.csv"
    p.write_text("system,qid,measure,value,label\nA,1,ndcg,0.5,baseline\nA,2,ndcg,0.6,baseline\n"
                 "B,1,ndcg,0.4,new\nB,2,ndcg,0.7,new\n")
    assert main(["compare", str(p), "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out)["n_topics"] == 2
