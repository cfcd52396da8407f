"""End-to-end: `uefast reproduce` on the embedded sample (small and fast)."""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from uefast.cli import main
from uefast.errors import InputError
from uefast.meta.report import reproduce

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep")
    return reproduce(out_dir=out, ks=(5, 10), n_splits=1, swap_trials=10, bootstrap_swap=20, progress=False)


def test_report_files_and_tables(report):
    out = report.out_dir
    md = report.report.read_text()
    for section in ("Exact vs paper REB", "Kendall's tau-b", "Conflicts at k=10", "Discriminative power",
                    "PAD at k=10", "Swap rates at k=10", "left/right document splits"):
        assert section in md
    for fig in ("fig1_actual_vs_expected.png", "fig2_3_expected_hist.png", "asl_k10_exact.png", "asl_k10_paper.png"):
        assert (out / "figures" / fig).stat().st_size > 1000
    for name in ("means", "power", "tau", "conflicts", "pad", "swap", "partitions", "reb_compare",
                 "split_consistency", "diff_power", "diff_tau"):
        t = pq.read_table(out / "tables" / f"{name}.parquet")
        assert t.num_rows > 0, name
        assert (out / "tables" / f"{name}.csv").exists()


def test_report_contents_consistent(report):
    t = report.tables
    # both REB modes for every statistic; original metrics' means do not depend on REB
    assert set(t["power"]["reb_mode"].to_pylist()) == {"exact", "paper"}
    means = t["means"].to_pandas()
    orig = means[means.metric.isin(["nDCG@10", "MAP@10"]) & (means.query_set == "all")]
    piv = orig.pivot_table(index=["metric", "system"], columns="reb_mode", values="mean")
    np.testing.assert_allclose(piv["exact"], piv["paper"])
    # the paper's MAP@k REB (p^2) is never above the exact one when k <= n (SPEC_math §2)
    rc = t["reb_compare"].to_pandas()
    ap = rc[rc.measure.str.startswith("AP(norm=k)")]
    k = ap.measure.str.extract(r"@(\d+)")[0].astype(int)
    full = ap[ap.n_judged >= k]
    assert len(full) > 0 and (full.reb_paper <= full.reb_exact + 1e-12).all()
    tau = t["tau"].to_pandas()
    assert tau.tau_b.between(-1, 1).all()


def test_cli_reproduce_sample(tmp_path, capsys):
    rc = main(["reproduce", "--out", str(tmp_path), "--k", "10", "--splits", "0", "--swap-trials", "5",
               "--bootstrap-swap", "0", "--quiet"])
    assert rc == 0
    assert (tmp_path / "report.md").exists()
    assert main(["reproduce", "--qrels", "x.txt", "--quiet"]) == 2
    assert "--qrels and --run go together" in capsys.readouterr().err


@pytest.mark.parametrize("argv,match", [(["--top-frac", "-1"], "`top_frac` must be in (0, 0.5]"),
                                        (["--top-frac", "2"], "`top_frac` must be in (0, 0.5]"),
                                        (["--top-n", "0"], "`top_n` must be >= 1"),
                                        # a numpy traceback / silently skipped before
                                        (["--seed", "-3"], "`seed` must be an integer in [0, 2**64); got -3"),
                                        (["--splits", "-1"], "`n_splits` must be a non-negative integer; got -1"),
                                        (["--swap-trials", "-5"], "`swap_trials` must be a non-negative integer; got -5"),
                                        (["--bootstrap-swap", "-2"], "`bootstrap_swap` must be a non-negative integer; got -2"),
                                        # a repeated cutoff multiplied every table's rows
                                        (["--k", "5", "5"], "`ks` lists a cutoff twice; got [5, 5]")])
def test_reproduce_set_sizes_checked(tmp_path, capsys, argv, match):
    import pyarrow.parquet as pq

    from uefast.cli import main
    from uefast.sample import letor_sample

    pq.write_table(letor_sample(), tmp_path / "s.parquet")
    assert main(["reproduce", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "r"), "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1


def test_trec_runs_with_a_query_one_run_lacks(tmp_path):
    """A query one run did not answer was in the query sets but out of the statistics (sets one
    short, "balanced" groups unequal, the header counting it): it is left out, and said so."""
    import pyarrow as pa

    rng = np.random.default_rng(3)
    q_rows, r_rows = [], []
    for q in range(20):
        docs = [f"d{q}_{j}" for j in range(12)]
        labels = rng.integers(0, 3, 12)
        labels[0] = 2
        q_rows += [(f"q{q}", d, int(lab)) for d, lab in zip(docs, labels)]
        for s in range(3):
            if s == 2 and q == 5:
                continue  # run 2 returned nothing for q5
            r_rows += [(f"q{q}", d, float(rng.random()), f"run{s}") for d in docs]
    qrels = pa.table({"qid": [r[0] for r in q_rows], "docid": [r[1] for r in q_rows],
                      "label": [r[2] for r in q_rows]})
    run = pa.table({"qid": [r[0] for r in r_rows], "docid": [r[1] for r in r_rows],
                    "score": [r[2] for r in r_rows], "system": [r[3] for r in r_rows]})
    res = reproduce(run, qrels=qrels, out_dir=tmp_path, ks=(5,), n_splits=0, swap_trials=5, bootstrap_swap=5,
                    progress=False, formats=("parquet",))
    parts = res.tables["partitions"]
    assert "q5" not in set(parts["qid"].to_pylist())
    md = res.report.read_text()
    assert "19 queries" in md and "1 run query not answered by every system left out" in md
    with pytest.raises(InputError, match="`top_n` 100 is more than half"):
        reproduce(run, qrels=qrels, out_dir=tmp_path / "b", ks=(5,), n_splits=0, top_n=100, progress=False)


def test_headline_leaves_undefined_tau_out():
    """tau-b is NaN where every system ties; NaN >= 0.05 is True in Polars, so such cells were
    counted as "moved" (60 of 60, max nan)."""
    import pyarrow as pa

    from uefast.meta._markdown import _headline

    reb = pa.table({"measure": ["AP"], "reb_exact": [0.0], "reb_paper": [0.0], "rel_diff": [0.0]})
    dt = pa.table({"delta_tau_b": [float("nan"), float("nan"), 0.1, 0.01]})
    lines = _headline({"reb_compare": reb, "diff_tau": dt}, {"alpha": 0.05})
    assert any("moves by >= 0.05 in 1 of 2 cells (max |delta| 0.100; 2 cells undefined" in ln for ln in lines), lines
