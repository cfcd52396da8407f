"""``uefast.paper.plots`` / ``uefast plot``: the curves' numbers are trec_eval's (pytrec_eval as
the oracle) and the figures are written at the promised resolution and formats."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from test_paper_table import _long
from uefast.errors import InputError

pytest.importorskip("matplotlib")


def _trec_files(tmp_path):
    rng = np.random.default_rng(5)
    qrels, runs = [], {}
    for q in range(1, 6):
        for d in range(40):
            qrels.append(f"{q} 0 d{d} {int(rng.random() < 0.25)}\n")
    (tmp_path / "qrels").write_text("".join(qrels))
    for name in ("alpha", "beta", "gamma"):
        lines = []
        for q in range(1, 6):
            docs = rng.permutation(40)[:25]
            lines += [f"{q} Q0 d{d} {r + 1} {100 - r} {name}\n" for r, d in enumerate(docs)]
        runs[name] = tmp_path / name
        runs[name].write_text("".join(lines))
    return tmp_path / "qrels", runs


def test_pr_curves_are_trec_eval_iprec_at_recall(tmp_path):
    """trec_eval 9.0.8's values are pytrec_eval's; 10.0's are those `uefast trec_eval` prints
    (checked byte for byte against C trec_eval 10.0 in test_trec_eval_conformance)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from uefast.paper.plots import pr_curves

    qrels_path, runs = _trec_files(tmp_path)
    qrels = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    t = pr_curves([str(p) for p in runs.values()], str(qrels_path), version="9.0.8").to_pylist()
    assert len(t) == 3 * 11
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"})
    for name, path in runs.items():
        run = {}
        for line in path.read_text().splitlines():
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
        per_q = ev.evaluate(run)
        for row in (r for r in t if r["system"] == name):
            key = f"iprec_at_recall_{row['recall']:.2f}"
            want = np.mean([v[key] for v in per_q.values()])
            assert row["precision"] == pytest.approx(want, rel=1e-12, abs=1e-15)
    from uefast.trec_eval import evaluate_trec

    t10 = pr_curves([str(runs["beta"])], str(qrels_path), names=["b"]).to_pylist()
    res = evaluate_trec(str(runs["beta"]), str(qrels_path), ["iprec_at_recall"])
    want = {float(s.name.rsplit("_", 1)[1]): s.summary for s in res.slots}
    assert {r["recall"]: r["precision"] for r in t10} == want and {r["system"] for r in t10} == {"b"}


def test_figures_written_at_dpi_and_formats(tmp_path):
    from PIL import Image

    import uefast
    from uefast.paper import plots

    qrels, runs = _trec_files(tmp_path)
    files = [str(p) for p in runs.values()]
    t = _long()
    plots.plot_pr_curves(files, str(qrels), tmp_path / "pr.png", dpi=150)
    plots.plot_topic_differences(t, "AP", "bm25", "x_rr", tmp_path / "d.svg")
    plots.plot_means(t, ["nDCG@10", "AP"], tmp_path / "m.pdf")
    fig = plots.plot_asl_curves(t, None, tmp_path / "a.png", n_resamples=200)
    with Image.open(tmp_path / "pr.png") as im:
        assert round(im.info["dpi"][0]) == 150
    with Image.open(tmp_path / "a.png") as im:
        assert round(im.info["dpi"][0]) == 200
    assert (tmp_path / "d.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "m.pdf").read_bytes()[:5] == b"%PDF-"
    # the ASL curve is all_pairs' sorted p-values
    from uefast.stats import all_pairs

    line = fig.axes[0].get_lines()[1]  # AP
    p = np.sort(all_pairs(t, "bootstrap", measure="AP", n_resamples=200, seed=0)["pvalue"].to_numpy())
    assert np.array_equal(line.get_ydata(), p)
    # the means panel shows uefast.report's intervals
    rep = uefast.report(t, measures=["AP"])
    fig = plots.plot_means(t, ["AP"])
    lo, hi = rep.cells[("bm25", ("AP", "value"))].ci_low, rep.cells[("bm25", ("AP", "value"))].ci_high
    segs = [c for c in fig.axes[0].collections if hasattr(c, "get_segments")][0].get_segments()
    assert segs[0][0][0] == pytest.approx(lo) and segs[0][1][0] == pytest.approx(hi)


def test_bad_figure_arguments(tmp_path):
    from uefast.paper import plots

    with pytest.raises(InputError, match="suffix"):
        plots.plot_means(_long(), None, tmp_path / "m.jpg")
    with pytest.raises(InputError, match="dpi"):
        plots.plot_means(_long(), None, tmp_path / "m.png", dpi=72)


def test_missing_matplotlib_is_one_line_before_work(tmp_path, monkeypatch, capsys):
    from uefast.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    qrels, runs = _trec_files(tmp_path)
    assert main(["plot", "means", "--run", *map(str, runs.values()), "--qrels", str(qrels),
                 "-o", str(tmp_path / "m.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == 'uefast plot: error: plots need matplotlib: pip install "uefast[report]"'


def test_cli_plots(tmp_path):
    import pyarrow.parquet as pq

    from uefast.cli import main

    qrels, runs = _trec_files(tmp_path)
    files = [str(p) for p in runs.values()]
    assert main(["plot", "pr", "--run", *files, "--qrels", str(qrels), "-o",
                 str(tmp_path / "pr.svg")]) == 0
    pq.write_table(_long(), tmp_path / "t.parquet")
    assert main(["plot", "diff", str(tmp_path / "t.parquet"), "-m", "AP", "--baseline", "bm25",
                 "--system", "dense", "-o", str(tmp_path / "d.png")]) == 0
    assert main(["plot", "asl", str(tmp_path / "t.parquet"), "--method", "t",
                 "-o", str(tmp_path / "a.pdf")]) == 0
    assert main(["plot", "diff", str(tmp_path / "t.parquet"), "-m", "AP",
                 "-o", str(tmp_path / "d.png")]) == 2
    for f in ("pr.svg", "d.png", "a.pdf"):
        assert (tmp_path / f).stat().st_size > 1000
