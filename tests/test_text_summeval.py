"""The SummEval study (SPEC_text §7): the published ROUGE-1/2 summary-level correlations (§7.1)
and the team's independently computed §7.2 numbers for every row with an exact REB; the CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

from uefast.cli import main
from uefast.text.summeval import summary_level, system_level

pytest.importorskip("nltk")

# SPEC_text §7.2 (12 abstractive systems): label -> (summary tau, system tau, summary r, system r)
SPEC_72 = {
    ("ROUGE-1", "ROUGE-1 F, 1 ref", "one"): (".088 .153 .103 .204", ".364 .303 .576 .545",
                                   ".139 .252 .181 .298", ".211 .663 .610 .668"),
    ("ROUGE-1", "V1, IUB=1", "one"): (".104 .159 .115 .207", ".303 .242 .515 .485", ".166 .252 .194 .291",
                           ".281 .661 .624 .710"),
    ("ROUGE-1", "V2, IUB=len", "one"): (".136 .140 .107 .181", ".364 .303 .515 .545", ".205 .258 .194 .255",
                             ".262 .655 .610 .708"),
    ("ROUGE-1", "V2, IUB=1, REB at L0=\\|ref\\|", "one"): (".088 .153 .103 .204", ".273 .273 .545 .455",
                                               ".129 .259 .181 .297", ".141 .662 .596 .618"),
    ("ROUGE-2", "ROUGE-2 F, 1 ref", "one"): (".080 .176 .102 .148", ".303 .364 .515 .545",
                                   ".133 .246 .152 .239", ".266 .695 .649 .700"),
    ("ROUGE-L", "ROUGE-L F, 1 ref", "one"): (".132 .152 .139 .169", ".333 .273 .545 .576",
                                   ".172 .233 .194 .248", ".438 .703 .699 .791"),
    ("ROUGE-1", "V2, IUB=1", "one"): (".118 .156 .121 .188", ".242 .242 .455 .485",
                                      ".190 .271 .216 .285", ".245 .664 .621 .686"),
    ("ROUGE-2", "V2, IUB=1", "one"): (".081 .177 .103 .148", ".212 .212 .424 .455",
                                      ".121 .247 .157 .230", ".185 .627 .553 .658"),
    ("ROUGE-1", "V2, IUB=1", "all"): (".178 .143 .137 .236", ".273 .455 .485 .455",
                                      ".235 .236 .203 .340", ".060 .638 .537 .562"),
    ("ROUGE-1", "ROUGE-1 F, 11 refs", "all"): (".126 .142 .109 .264", ".333 .515 .606 .576",
                                     ".161 .231 .161 .380", ".002 .643 .530 .522"),
}
LEVELS = ("summary_kendall", "system_kendall", "summary_pearson", "system_pearson")
DIMS = ("coherence", "consistency", "fluency", "relevance")


def test_correlation_protocol_on_a_toy_case():
    docs = ["a", "a", "a", "b", "b", "b", "c", "c", "c"]
    metric = np.array([1, 2, 3, 1, 2, 3, 5, 5, 5.0])  # doc c constant: skipped
    human = np.array([1, 2, 3, 3, 2, 1, 1, 2, 3.0])
    assert summary_level(metric, human, docs) == pytest.approx(0.0)
    assert summary_level(metric, human, docs, "pearson") == pytest.approx(0.0)
    systems = ["x", "y", "z"] * 3
    assert system_level(metric, human, systems) == pytest.approx(1.0)


@pytest.mark.slow
def test_validation_and_main_table(shared_data):
    from uefast.text.reproduce import study, validation
    from uefast.text.summeval import load_summeval

    data = load_summeval(shared_data / "summeval_bartscore")
    valid = validation(data)
    assert len(valid) == 16
    # published values have 3 decimals: within 0.002 of a value that rounds to them
    bad = [r for r in valid if abs(r["difference"]) > 0.002 + 0.0005]
    assert bad == []
    assert sum(abs(r["difference"]) <= 0.002 for r in valid) >= 15
    rows, notes, _ = study(data, samples=50, bertscore=False)
    found = 0
    for r in rows:
        key = (r["measure"], r["_label"].strip(), r["references"])
        if key not in SPEC_72:
            continue
        found += 1
        for level, want in zip(LEVELS, SPEC_72[key]):
            got = [r[f"{level}_{d}"] for d in DIMS]
            assert np.allclose(got, [float(x) for x in want.split()], atol=0.0005 + 1e-9), \
                (key, level, got, want)
    assert found == len(SPEC_72)
    l0 = next(r for r in rows if r["_label"].strip().startswith("V2, IUB=1, REB at L0"))
    assert l0["doc_constant"]


def _jsonl(tmp_path):
    rows = [dict(doc_id="d1", system="s1", candidate="the cat sat", reference="a cat sat on the mat",
                 source="the cat sat on the mat and the dog"),
            dict(doc_id="d1", system="s2", candidate="a dog", reference=["a cat sat", "the dog"],
                 source="the cat sat on the mat and the dog")]
    p = tmp_path / "in.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_cli_evaluate(tmp_path, capsys):
    p = _jsonl(tmp_path)
    assert main(["text", "evaluate", str(p), "-m", "ROUGE-1", "ROUGE-L(score=recall)",
                 "--per-query", "--format", "jsonl"]) == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(o["system"], o["measure"]) for o in out] == [
        ("s1", "ROUGE-1"), ("s1", "ROUGE-L(score=recall)"), ("s2", "ROUGE-1"),
        ("s2", "ROUGE-L(score=recall)")]
    assert out[0]["value"] == pytest.approx(2 / 3)
    assert main(["text", "evaluate", str(p), "-m", "ROUGE-1", "--format", "parquet", "-o",
                 str(tmp_path / "o.parquet")]) == 0
    import pyarrow.parquet as pq
    assert pq.read_table(tmp_path / "o.parquet").num_rows == 2
    assert main(["text", "evaluate", str(p), "-m", "ROUGE-9x"]) == 2
    assert "ROUGE-9x" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_reproduce(shared_data, tmp_path):
    out = tmp_path / "rep"
    assert main(["text", "reproduce", str(shared_data / "summeval_bartscore"), "--out", str(out),
                 "--samples", "20", "--no-bertscore"]) == 0
    text = (out / "report.md").read_text()
    assert "(= raw, §4)" in text and "| ROUGE-1 F | kendall | .126 [.126]" in text
    import pyarrow.csv as pacsv
    corr = pacsv.read_csv(out / "tables" / "correlations.csv")
    assert corr.num_rows == 13
