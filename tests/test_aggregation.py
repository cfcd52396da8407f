"""``uefast.aggregate(mean=...)``: arithmetic, geometric (trec_eval's gm_map) and harmonic means,
against trec_eval's conformance outputs, the trec_eval emulation, pytrec_eval and scipy."""
from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import uefast
from uefast.aggregation import MIN_GEO_MEAN
from uefast.errors import InputError


def long_table(values, iub=None, reb=None, ue=None):
    """A per-query table of one system and one measure (the columns aggregate reads)."""
    n = len(values)
    iub = [1.0] * n if iub is None else iub
    reb = [0.1] * n if reb is None else reb
    ue = [0.0] * n if ue is None else ue
    return pa.table({"system": ["s"] * n, "qid": [str(i) for i in range(n)], "measure": ["AP"] * n,
                     "value": pa.array(values, pa.float64()), "iub": pa.array(iub, pa.float64()),
                     "reb": pa.array(reb, pa.float64()), "ue_v1": pa.array(ue, pa.float64()),
                     "ue_v2": pa.array(ue, pa.float64())})


values = st.lists(st.one_of(st.just(0.0), st.floats(0.0, 1.0), st.floats(1e-9, 1e-4)),
                  min_size=1, max_size=30)


@settings(max_examples=100, deadline=None)
@given(values, st.one_of(st.none(), st.floats(0.0, 0.5)))
def test_means_match_scipy(xs, floor):
    x = np.array(xs)
    t = long_table(xs, iub=list(x[::-1]), reb=list(x / 2))
    geo = uefast.aggregate(t, mean="geometric", floor=floor).to_pylist()[0]
    har = uefast.aggregate(t, mean="harmonic", floor=floor).to_pylist()[0]
    ari = uefast.aggregate(t).to_pylist()[0]
    gf = MIN_GEO_MEAN if floor is None else floor
    hf = 0.0 if floor is None else floor
    for col, v in (("value", x), ("iub", x[::-1]), ("reb", x / 2)):
        with np.errstate(divide="ignore"):
            assert geo[col] == pytest.approx(scipy.stats.gmean(np.maximum(v, gf)), rel=1e-12, abs=0)
        h = np.maximum(v, hf)
        assert har[col] == pytest.approx(0.0 if (h == 0).any() else scipy.stats.hmean(h),
                                         rel=1e-12, abs=0)
        assert ari[col] == pytest.approx(v.mean(), rel=1e-12, abs=1e-300)
    assert geo["ue_v1"] is None and har["ue_v2"] is None and ari["ue_v1"] == 0.0
    assert geo["n_queries"] == har["n_queries"] == len(xs)


def test_nan_skipped_or_kept_and_metadata():
    t = long_table([0.5, float("nan"), 0.2]).replace_schema_metadata({"uefast.version": "x"})
    g = uefast.aggregate(t, mean="geometric")
    assert g["value"][0].as_py() == pytest.approx(math.sqrt(0.1), rel=1e-14)
    assert g["n_queries"][0].as_py() == 3
    assert math.isnan(uefast.aggregate(t, mean="geometric", skip_nan=False)["value"][0].as_py())
    meta = g.schema.metadata
    assert meta[b"uefast.version"] == b"x"
    assert json.loads(meta[b"uefast.aggregate"]) == {
        "mean": "geometric", "floor": 1e-05, "columns": ["value", "iub", "reb"],
        "null_columns": ["ue_v1", "ue_v2"]}
    assert b"uefast.aggregate" not in uefast.aggregate(t).schema.metadata
    assert g.schema == uefast.aggregate(t).schema.with_metadata(g.schema.metadata)


def test_groups_in_first_appearance_order():
    a, b = long_table([0.1, 0.4]), long_table([0.9, 0.0])
    b = b.set_column(0, "system", pa.array(["r", "r"]))
    t = pa.concat_tables([b, a])
    g = uefast.aggregate(t, mean="geometric").to_pylist()
    assert [r["system"] for r in g] == ["r", "s"]
    assert g[0]["value"] == pytest.approx(math.sqrt(0.9 * MIN_GEO_MEAN), rel=1e-14)
    assert g[1]["value"] == pytest.approx(0.2, rel=1e-14)


def test_errors():
    t = long_table([0.5, 0.2])
    with pytest.raises(InputError, match="`mean` must be one of"):
        uefast.aggregate(t, mean="median")
    with pytest.raises(InputError, match="`floor`=0.1 applies to mean='geometric' or 'harmonic'"):
        uefast.aggregate(t, floor=0.1)
    for bad in (-1.0, float("inf"), "0", True):
        with pytest.raises(InputError, match="`floor` must be a finite number >= 0"):
            uefast.aggregate(t, mean="harmonic", floor=bad)
    neg = long_table([0.5, -0.2])
    with pytest.raises(InputError, match=r"column 'value' has -0.2 at row 1 \(system 's', qid '1'"):
        uefast.aggregate(neg, mean="geometric")
    # negative UE scores are fine: those columns are not averaged geometrically
    assert uefast.aggregate(long_table([0.5, 0.2], ue=[-0.5, 0.1]), mean="harmonic").num_rows == 1


@pytest.fixture
def suite(shared_data):
    d = shared_data / "trec_eval_test" / "v10.0"
    if not d.is_dir():
        pytest.skip(f"trec_eval test suite not found under {d}")
    return d


def test_gm_map_equals_trec_eval_suite(suite):
    from uefast.io import read_qrels, read_run
    from uefast.trec_eval import evaluate_trec

    res = uefast.evaluate(read_run(suite / "results.test"), read_qrels(suite / "qrels.test"), ["AP"])
    gm = uefast.aggregate(res, mean="geometric")["value"][0].as_py()
    emu = {s.name: s.summary for s in evaluate_trec(suite / "results.test", suite / "qrels.test",
                                                    ["gm_map"]).slots}
    assert gm == pytest.approx(emu["gm_map"], rel=1e-14)
    printed = [ln.split() for ln in (suite / "out.test.a").read_text().splitlines()
               if ln.startswith("gm_map")]
    assert printed == [["gm_map", "all", f"{gm:6.4f}"]]


def test_gm_map_equals_trec_eval_complete_robust2003(shared_data):
    """``-c`` (every qrels topic, a topic without results counts as AP 0, floored): 3 Robust
    2003 runs, against the trec_eval emulation."""
    import pyarrow.compute as pc

    from uefast.io import read_qrels, read_run
    from uefast.trec_eval import QrelsIndex, evaluate_trec

    d = shared_data / "trec2003_robust"
    if not d.is_dir():
        pytest.skip(f"TREC 2003 Robust data not found under {d}")
    qrels = read_qrels(d / "robust03_qrels.txt")
    runs = read_run(sorted((d / "runs").glob("input.*.gz"))[:3])
    res = uefast.evaluate(runs, qrels, ["AP"], queries="qrels")
    got = {r["system"]: r["value"] for r in uefast.aggregate(res, mean="geometric").to_pylist()}
    qi = QrelsIndex.build(qrels)
    for name, value in got.items():
        ref = evaluate_trec(runs.filter(pc.equal(runs["system"], name)), qi, ["gm_map"],
                            complete=True).slots[0].summary
        assert value == pytest.approx(ref, rel=1e-13), name


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_gm_map_equals_pytrec_eval(seed):
    """pytrec_eval's per-query gm_map is log(max(AP, 1e-5)); GMAP is exp of their mean."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(seed)
    qrels, run, rows = {}, {}, {"qid": [], "docid": [], "score": []}
    for q in range(6):
        docs = [f"d{i}" for i in range(rng.integers(3, 12))]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs}
        ret = rng.choice(docs, size=rng.integers(1, len(docs) + 1), replace=False)
        run[f"q{q}"] = {str(d): float(rng.integers(0, 4)) for d in ret}  # ties
        for d, s in run[f"q{q}"].items():
            rows["qid"].append(f"q{q}")
            rows["docid"].append(d)
            rows["score"].append(s)
    qt = pa.table({"qid": [q for q in qrels for _ in qrels[q]],
                   "docid": [d for q in qrels for d in qrels[q]],
                   "label": [v for q in qrels for v in qrels[q].values()]})
    res = uefast.evaluate(pa.table(rows), qt, ["AP"], queries="qrels")
    gm = uefast.aggregate(res, mean="geometric")["value"][0].as_py()
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"}).evaluate(run)
    assert gm == pytest.approx(math.exp(np.mean([v["gm_map"] for v in ref.values()])), rel=1e-12)


def test_cli_mean(tmp_path, capsys, suite):
    from uefast.cli import main

    args = ["evaluate", "--run", str(suite / "results.test"), "--qrels", str(suite / "qrels.test"),
            "-m", "AP", "--format", "jsonl"]
    assert main(args + ["--mean", "geometric"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert f"{row['value']:6.4f}" == "0.1051" and row["ue_v1"] is None
    assert main(args) == 0
    assert f"{json.loads(capsys.readouterr().out)['value']:6.4f}" == "0.1785"
    assert main(args + ["--mean", "geometric", "--per-query"]) == 2
    assert "--mean applies to the means" in capsys.readouterr().err
