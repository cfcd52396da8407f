"""``uefast.report`` / ``uefast report``: the table's numbers are uefast.stats' and aggregate's,
its markers are all_pairs' significance, and every export shows the same cells."""
from __future__ import annotations

import html.parser
import io

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from scipy import stats as sps

import uefast
from uefast.errors import InputError
from uefast.stats import all_pairs, topic_system_matrix


def _long(seed=0, n=30, systems=(("bm25", 0.30), ("dense", 0.36), ("x_rr", 0.45), ("bad", 0.22)),
          measures=("nDCG@10", "AP")):
    rng = np.random.default_rng(seed)
    rows = {k: [] for k in ("system", "qid", "measure", "value", "ue_v1", "ue_v2")}
    base = rng.uniform(0.1, 0.6, size=(len(measures), n))
    for s, shift in systems:
        for mi, m in enumerate(measures):
            v = np.clip(base[mi] + shift - 0.3 + rng.normal(0, 0.08, n), 0, 1)
            for q in range(n):
                rows["system"].append(s)
                rows["qid"].append(f"q{q}")
                rows["measure"].append(m)
                rows["value"].append(float(v[q]))
                rows["ue_v1"].append(float(v[q]) * 0.8)
                rows["ue_v2"].append(float(v[q]) - 0.2)
    return pa.table(rows)


def test_means_and_cis_are_aggregate_and_student_t():
    t = _long()
    rep = uefast.report(t, baseline="bm25", ue=True)
    agg = uefast.aggregate(t.append_column("iub", pa.array([1.0] * t.num_rows))
                           .append_column("reb", pa.array([0.0] * t.num_rows))).to_pylist()
    assert len(rep.cells) == 4 * 2 * 3
    for a in agg:
        for col in ("value", "ue_v1", "ue_v2"):
            c = rep.cells[(a["system"], (a["measure"], col))]
            assert c.mean == pytest.approx(a[col], rel=1e-13, abs=1e-15)
            x = topic_system_matrix(t, a["measure"], column=col).matrix[:, rep.systems.index(a["system"])]
            lo, hi = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
            assert (c.ci_low, c.ci_high) == pytest.approx((lo, hi), rel=1e-12)
            assert c.n_topics == 30


@pytest.mark.parametrize("method,correction", [("t", "holm"), ("wilcoxon", "bonferroni"),
                                               ("randomization", "bh"), ("tukey_hsd", "none")])
def test_markers_are_all_pairs_significance(method, correction):
    t = _long(seed=3)
    kw = dict(n_resamples=500, seed=7) if method in ("randomization", "tukey_hsd") else {}
    for baseline in ("bm25", None):
        rep = uefast.report(t, baseline=baseline, method=method, correction=correction, **kw)
        for m in ("nDCG@10", "AP"):
            ref = all_pairs(t, method, measure=m, baseline=baseline, correction=correction,
                            **kw).to_pylist()
            for r in ref:
                a, b = r["system_a"], r["system_b"]
                ca, cb = rep.cells[(a, (m, "value"))], rep.cells[(b, (m, "value"))]
                assert ca.mean == r["mean_a"] and cb.mean == r["mean_b"]
                win = r["significant"] and r["mean_difference"] > 0
                lose = r["significant"] and r["mean_difference"] < 0
                assert (b in ca.better_than) == win and (a in cb.worse_than) == win
                assert (b in ca.worse_than) == lose and (a in cb.better_than) == lose
                if baseline is not None:
                    assert ca.pvalue_adjusted == r["pvalue_adjusted"]
            arrow = rep.to_arrow().to_pylist()
            for row in arrow:
                if row["measure"] != m:
                    continue
                c = rep.cells[(row["system"], (m, "value"))]
                if baseline is None:
                    want = "".join(sorted(rep.letters[s] for s in c.better_than))
                elif row["system"] == baseline:
                    want = ""
                else:
                    want = "†" if c.better_than else ("‡" if c.worse_than else "")
                assert row["marker"] == want


def test_clear_winner_is_marked_and_bold_everywhere():
    t = _long(seed=1)
    rep = uefast.report(t, baseline="bm25")
    cell = rep.cells[("x_rr", ("nDCG@10", "value"))]
    assert cell.best and cell.better_than == ("bm25",)   # +0.15 over 30 topics, sd 0.11
    assert cell.n_better + cell.n_worse <= 30 and cell.n_better > cell.n_worse
    assert not rep.cells[("bm25", ("nDCG@10", "value"))].best
    mean = f"{cell.mean:.4f}"
    md = rep.to_markdown()
    assert f"| x\\_rr | **{mean}**† ± " in md
    assert f"\\textbf{{{mean}}}$^{{\\dagger}}$" in rep.to_latex()
    assert f"<b>{mean}</b><sup>†</sup>" in rep.to_html()
    assert "bm25 (baseline)" in md and "Holm correction over the 3 comparisons" in md
    letters = uefast.report(t)
    assert letters.letters == {"bm25": "a", "dense": "b", "x_rr": "c", "bad": "d"}
    assert "<sup>" in letters.to_markdown() and "(c) x\\_rr" in letters.to_markdown()


def test_ties_for_best_are_all_bold():
    t = _long(systems=(("a", 0.3), ("b", 0.3)), measures=("AP",), seed=2)
    vals = t["value"].to_pylist()
    t = t.set_column(t.column_names.index("value"), "value", pa.array(vals[:30] + vals[:30]))
    rep = uefast.report(t)
    assert rep.cells[("a", ("AP", "value"))].best and rep.cells[("b", ("AP", "value"))].best
    assert rep.cells[("a", ("AP", "value"))].better_than == ()


class _Cells(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th") and self.rows:
            self.rows[-1] += 1

    def handle_endtag(self, tag):
        assert self.stack.pop() == tag  # well nested


def test_exports_have_one_row_per_system_and_round_trip():
    t = _long()
    rep = uefast.report(t, measures=["AP", "nDCG@10"], ue=True, digits=3)
    assert [k[0] for k in rep.keys] == ["AP"] * 3 + ["nDCG@10"] * 3
    p = _Cells()
    p.feed(rep.to_html())
    assert p.stack == [] and p.rows == [7] * 5
    md = rep.to_markdown().split("\n\n")[0].splitlines()
    assert len(md) == 2 + 4 and all(line.count(" | ") == 6 for line in md if "---" not in line)
    tex = rep.to_latex(caption="Runs 100% new_stuff.", label="tab:x")
    assert r"Runs 100\% new\_stuff." in tex and r"\label{tab:x}" in tex
    assert tex.count(r" \\") == 5 and r"x\_rr" in tex
    back = pacsv.read_csv(io.BytesIO(rep.to_csv().encode()))
    arrow = rep.to_arrow()
    assert back.num_rows == arrow.num_rows == 4 * 6
    assert back["mean"].to_pylist() == arrow["mean"].to_pylist()   # full precision
    assert rep.to_polars().height == 24


def test_display_options_change_the_text_not_the_numbers():
    t = _long()
    plain = uefast.report(t, baseline="bm25")
    shown = uefast.report(t, baseline="bm25", percent=True, digits=1, ci=False, bold=False)
    c = plain.cells[("x_rr", ("AP", "value"))]
    md = shown.to_markdown()
    assert f"| {100 * c.mean:.1f}† |" in md and "**" not in md and "±" not in md.split("\n\n")[0]
    assert "(×100)" in shown.legend()
    assert shown.to_arrow().equals(plain.to_arrow().replace_schema_metadata(
        shown.to_arrow().schema.metadata))


def test_save_by_suffix(tmp_path):
    rep = uefast.report(_long(), baseline="dense")
    for suffix, start in ((".md", "| System"), (".tex", "% needs"), (".html", "<table>"),
                          (".csv", '"system"')):
        rep.save(tmp_path / f"t{suffix}")
        assert (tmp_path / f"t{suffix}").read_text(encoding="utf-8").startswith(start)
    with pytest.raises(InputError, match="suffix"):
        rep.save(tmp_path / "t.docx")


def test_evaluated_run_matches_aggregate():
    """A LETOR table evaluated by report() itself: means are aggregate's of the same evaluation."""
    from uefast.sample import letor_sample

    run = letor_sample()
    rep = uefast.report(run, measures=["nDCG@10", "AP"], ue=True)
    res = uefast.evaluate(run, None, ["nDCG@10", "AP"])
    for a in uefast.aggregate(res).to_pylist():
        for col in ("value", "ue_v1", "ue_v2"):
            assert rep.cells[(a["system"], (a["measure"], col))].mean == pytest.approx(
                a[col], rel=1e-12)


def test_missing_topics_are_said():
    t = _long()
    keep = [not (s == "bad" and q == "q0") for s, q in zip(t["system"].to_pylist(), t["qid"].to_pylist())]
    t = t.filter(pa.array(keep))
    rep = uefast.report(t)
    assert rep.cells[("bm25", ("AP", "value"))].n_topics == 29
    assert "missing=intersect dropped 1 topic(s)" in rep.legend()


@pytest.mark.parametrize("kw,msg", [
    (dict(baseline="nope"), "not one of the systems"),
    (dict(columns=["score"]), "columns"),
    (dict(measures=["P@5"]), "not in the table"),
    (dict(digits=-1), "digits"),
    (dict(method="ttest"), "method"),
])
def test_bad_arguments(kw, msg):
    with pytest.raises(InputError, match=msg):
        uefast.report(_long(), **kw)


def test_empty_ue_columns_are_named():
    t = _long()
    t = t.set_column(t.column_names.index("ue_v1"), "ue_v1", pa.nulls(t.num_rows, pa.float64()))
    with pytest.raises(InputError, match=r"\['ue_v1'\] hold no values"):
        uefast.report(t, ue=True)


def test_one_system_is_refused():
    with pytest.raises(InputError, match="at least 2"):
        uefast.report(_long(systems=(("a", 0.3),)))


def test_cli(tmp_path, capsys):
    from uefast.cli import main

    import pyarrow.parquet as pq

    pq.write_table(_long(), tmp_path / "pq.parquet")
    assert main(["report", str(tmp_path / "pq.parquet"), "--baseline", "bm25", "-m", "AP"]) == 0
    out = capsys.readouterr().out
    want = uefast.report(_long(), baseline="bm25", measures=["AP"]).to_markdown()
    assert out == want
    assert main(["report", str(tmp_path / "pq.parquet"), "-o", str(tmp_path / "t.tex"),
                 "--caption", "C."]) == 0
    assert (tmp_path / "t.tex").read_text(encoding="utf-8").startswith("% needs")
    assert main(["report", str(tmp_path / "pq.parquet"), "--baseline", "zzz"]) == 2
    assert "not one of the systems" in capsys.readouterr().err


def test_cli_runs(tmp_path, capsys):
    from uefast.cli import main

    qrels = "".join(f"{q} 0 d{d} {int(d < 3)}\n" for q in (1, 2, 3) for d in range(6))
    (tmp_path / "qrels").write_text(qrels)
    for name, order in (("good", range(6)), ("poor", range(5, -1, -1))):
        (tmp_path / name).write_text("".join(f"{q} Q0 d{d} {r} {10 - r} {name}\n" for q in (1, 2, 3)
                                             for r, d in enumerate(order)))
    assert main(["report", "--run", str(tmp_path / "good"), str(tmp_path / "poor"), "--qrels",
                 str(tmp_path / "qrels"), "-m", "P@3", "--format", "csv"]) == 0
    rows = pacsv.read_csv(io.BytesIO(capsys.readouterr().out.encode())).to_pylist()
    assert [(r["system"], r["mean"]) for r in rows] == [("good", 1.0), ("poor", 0.0)]


def test_cli_choices_are_the_librarys():
    from uefast.cli import cmd_report
    from uefast.paper.table import COLUMNS
    from uefast.stats.pairs import CORRECTIONS, PAIR_METHODS

    assert (cmd_report.COLUMNS, cmd_report.CORRECTIONS, cmd_report.PAIR_METHODS) == (
        COLUMNS, CORRECTIONS, PAIR_METHODS)


def test_robust_table_means_are_trec_evals(shared_data):
    """On four TREC 2003 Robust runs the table's AP and P@10 means are the `map` and `P_10` that
    `uefast trec_eval` prints (an independent code path, byte-identical to C trec_eval)."""
    from uefast.io import read_qrels, read_run
    from uefast.trec_eval import evaluate_trec

    robust = shared_data / "trec2003_robust"
    runs = sorted((robust / "runs").iterdir())[:4]
    qrels = robust / "robust03_qrels.txt"
    res = uefast.evaluate(read_run([str(r) for r in runs]), read_qrels(str(qrels)), ["AP", "P@10"])
    rep = uefast.report(res, baseline=res["system"][0].as_py())
    for r in runs:
        te = evaluate_trec(str(r), str(qrels), ["map", "P.10"])
        got = {s.name: s.summary for s in te.slots}
        assert rep.cells[(te.runid, ("AP", "value"))].mean == pytest.approx(got["map"], abs=1e-12)
        assert rep.cells[(te.runid, ("P@10", "value"))].mean == pytest.approx(got["P_10"], abs=1e-12)
