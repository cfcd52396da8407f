"""uefast.curves: interpolated precision at recall levels against trec_eval's conformance
outputs, pytrec_eval (trec_eval 9.0.8 compiled), the trec_eval emulation and a brute-force
reading of the definition."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.curves import (STANDARD_RECALL_LEVELS, eleven_point_average, interpolated_precision,
                           mean_curve)
from uefast.errors import InputError


def naive_iprec(ranked_labels, n_rel, level, f, version):
    """max rsf(i)/i over ranks i with rsf(i) >= c(f); 0 if none (module docstring)."""
    c = math.floor(f * n_rel + 0.5) if version == "10.0" else int(f * n_rel + 0.9)
    best, rsf = None, 0
    for i, lab in enumerate(ranked_labels, 1):
        rsf += lab >= level
        if rsf >= c:
            best = rsf / i if best is None else max(best, rsf / i)
    return 0.0 if best is None or n_rel == 0 else best


def random_trec(rng, n_queries=5, n_systems=2):
    """Run / qrels tables with tied scores, unjudged and unretrieved documents, and the same
    data as pytrec_eval dicts."""
    q_rows, r_rows, qrels, runs = [], [], {}, {f"s{s}": {} for s in range(n_systems)}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"d{j}" for j in rng.choice(60, size=rng.integers(2, 25), replace=False)]
        labels = rng.choice([0, 0, 1, 1, 2, -1], size=len(pool))
        if q == 3:
            labels[:] = 0  # no relevant document
        qrels[qid] = {d: int(x) for d, x in zip(pool, labels)}
        q_rows += [(qid, d, int(x)) for d, x in zip(pool, labels)]
        for name in runs:
            docs = list(rng.choice(pool, size=rng.integers(1, len(pool) + 1), replace=False))
            docs += [f"x{j}" for j in range(rng.integers(0, 3))]
            scores = rng.integers(0, 6, size=len(docs)) / 4.0
            runs[name][qid] = {d: float(s) for d, s in zip(docs, scores)}
            r_rows += [(name, qid, d, float(s)) for d, s in zip(docs, scores)]
    run_t = pa.table({"system": [r[0] for r in r_rows], "qid": [r[1] for r in r_rows],
                      "docid": [r[2] for r in r_rows], "score": [r[3] for r in r_rows]})
    qrels_t = pa.table({"qid": [r[0] for r in q_rows], "docid": [r[1] for r in q_rows],
                        "label": [r[2] for r in q_rows]})
    return run_t, qrels_t, runs, qrels


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["10.0", "9.0.8"]), st.sampled_from([1, 2]))
def test_matches_brute_force(seed, version, level):
    rng = np.random.default_rng(seed)
    run_t, qrels_t, runs, qrels = random_trec(rng)
    levels = (0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 1.0)
    got = interpolated_precision(run_t, qrels_t, recall_levels=levels, version=version,
                                 relevance_level=level).to_pylist()
    expected = []
    for name, per_q in runs.items():
        for qid in sorted(per_q):  # trec_eval's topic order (byte order)
            ranked = sorted(per_q[qid].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
            labels = [qrels[qid].get(d, -1) for d, _ in ranked]  # unjudged: never relevant
            n_rel = sum(x >= level for x in qrels[qid].values())
            expected += [(name, qid, f, naive_iprec(labels, n_rel, level, f, version))
                         for f in levels]
    assert [(r["system"], r["qid"], r["recall"]) for r in got] == [e[:3] for e in expected]
    assert [r["precision"] for r in got] == pytest.approx([e[3] for e in expected], abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_pytrec_eval(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run_t, qrels_t, runs, qrels = random_trec(np.random.default_rng(seed), n_queries=12,
                                              n_systems=3)
    curves = interpolated_precision(run_t, qrels_t, version="9.0.8")
    got = {(r["system"], r["qid"], r["recall"]): r["precision"] for r in curves.to_pylist()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"})
    n = 0
    for name, run in runs.items():
        ref = evaluator.evaluate(run)
        for qid, vals in ref.items():
            for f in STANDARD_RECALL_LEVELS:
                assert got[(name, qid, f)] == pytest.approx(
                    vals[f"iprec_at_recall_{f:.2f}"], abs=1e-12), (name, qid, f)
                n += 1
        means = {r["recall"]: r["precision"] for r in mean_curve(curves).to_pylist()
                 if r["system"] == name}
        for f in STANDARD_RECALL_LEVELS:
            assert means[f] == pytest.approx(
                np.mean([v[f"iprec_at_recall_{f:.2f}"] for v in ref.values()]), abs=1e-12)
        avg = {r["qid"]: r["value"] for r in eleven_point_average(curves).to_pylist()
               if r["system"] == name}
        assert avg == pytest.approx({q: v["11pt_avg"] for q, v in ref.items()}, abs=1e-12)
    assert n == len(got) == 3 * 12 * 11


def test_same_values_as_trec_eval_emulation():
    from uefast.trec_eval import evaluate_trec

    run_t, qrels_t, runs, _ = random_trec(np.random.default_rng(9), n_queries=8)
    curves = interpolated_precision(run_t, qrels_t)
    for name in runs:
        res = evaluate_trec(run_t.filter(pa.compute.equal(run_t["system"], name)), qrels_t,
                            ["iprec_at_recall", "11pt_avg"])
        part = curves.filter(pa.compute.equal(curves["system"], name))
        per_q = np.asarray(part["precision"]).reshape(len(res.qids), 11)
        assert part["qid"].to_pylist()[::11] == res.qids
        for j, slot in enumerate(res.slots[:11]):
            assert np.array_equal(per_q[:, j], slot.per_query)
        avg = eleven_point_average(part)
        assert np.array_equal(np.asarray(avg["value"]), res.slots[11].per_query)


def _printed(path):
    """``{(measure, topic): text}`` of a trec_eval -q output."""
    out = {}
    for ln in path.read_text().splitlines():
        m, q, v = ln.split()
        out[(m, q)] = v
    return out


@pytest.fixture
def suite(shared_data):
    d = shared_data / "trec_eval_test"
    if not d.is_dir():
        pytest.skip(f"trec_eval test suite not found under {d}")
    return d


@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
@pytest.mark.parametrize("out, qrels, level", [("out.test.aq", "qrels.test", 1),
                                               ("out.test.aql", "qrels.rel_level", 2)])
def test_trec_eval_conformance_outputs(suite, version, out, qrels, level):
    d = suite / "v10.0"
    expected = _printed(suite / f"v{version}" / out)
    curves = interpolated_precision(d / "results.test", d / qrels, version=version,
                                    relevance_level=level)
    checked = 0
    for r in curves.to_pylist():
        assert f"{r['precision']:6.4f}" == expected[(f"iprec_at_recall_{r['recall']:.2f}",
                                                     r["qid"])]
        checked += 1
    for r in mean_curve(curves).to_pylist():
        assert f"{r['precision']:6.4f}" == expected[(f"iprec_at_recall_{r['recall']:.2f}", "all")]
    avg = eleven_point_average(curves).to_pylist()
    for r in avg:
        assert f"{r['value']:6.4f}" == expected[("11pt_avg", r["qid"])]
    assert f"{np.mean([r['value'] for r in avg]):6.4f}" == expected[("11pt_avg", "all")]
    assert checked == 33


def test_trec_eval_custom_levels(suite):
    """``-miprec_at_recall..10,.20,.25,.75,.50 -m 11pt_avg..25,.5,.75`` (out.test.meas_params)."""
    d = suite / "v10.0"
    expected = _printed(d / "out.test.meas_params")
    curves = interpolated_precision(d / "results.test", d / "qrels.test",
                                    recall_levels=[0.1, 0.2, 0.25, 0.75, 0.5])
    assert curves["recall"].to_pylist()[:5] == [0.1, 0.2, 0.25, 0.5, 0.75]
    for r in curves.to_pylist():
        assert f"{r['precision']:6.4f}" == expected[(f"iprec_at_recall_{r['recall']:.2f}",
                                                     r["qid"])]
    three = interpolated_precision(d / "results.test", d / "qrels.test",
                                   recall_levels=[0.25, 0.5, 0.75])
    for r in eleven_point_average(three).to_pylist():
        assert f"{r['value']:6.4f}" == expected[("11pt_avg_.25,.5,.75", r["qid"])]


def test_inputs_and_order(tmp_path):
    import polars as pl

    run_t, qrels_t, _, _ = random_trec(np.random.default_rng(4))
    ref = interpolated_precision(run_t, qrels_t)
    assert ref.column_names == ["system", "qid", "recall", "precision"]
    assert ref.schema.field("precision").type == pa.float64()
    assert interpolated_precision(pl.from_arrow(run_t), qrels_t.to_pandas()).equals(ref)
    one = interpolated_precision(run_t.drop_columns(["system"]).filter(
        pa.compute.equal(run_t["system"], "s1")), qrels_t)
    assert set(one["system"].to_pylist()) == {"run"}
    paths = []
    for name in ("s1", "s0"):
        rows = run_t.filter(pa.compute.equal(run_t["system"], name)).to_pylist()
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{r['qid']} Q0 {r['docid']} 0 {r['score']} {name}\n" for r in rows))
        paths.append(p)
    from_files = interpolated_precision(paths, qrels_t)
    assert from_files["system"].to_pylist()[0] == "s1"
    assert sorted(from_files.to_pylist(), key=str) == sorted(ref.to_pylist(), key=str)
    mc = mean_curve(ref)
    assert mc.column_names == ["system", "recall", "precision", "n_queries"]
    assert mc["system"].to_pylist() == ["s0"] * 11 + ["s1"] * 11
    assert mc["recall"].to_pylist()[:11] == list(STANDARD_RECALL_LEVELS)


def test_errors():
    run_t, qrels_t, _, _ = random_trec(np.random.default_rng(5))
    for bad, msg in (([0.5, 1.5], r"in \[0, 1\]; got 1.5"), ([], "non-empty"),
                     ([0.1, 0.1], "without repeats"), (0.5, "must be a sequence")):
        with pytest.raises(InputError, match=msg):
            interpolated_precision(run_t, qrels_t, recall_levels=bad)
    with pytest.raises(InputError, match="`version` must be one of"):
        interpolated_precision(run_t, qrels_t, version="8")
    with pytest.raises(InputError, match="`relevance_level` must be an integer"):
        interpolated_precision(run_t, qrels_t, relevance_level=1.5)
    with pytest.raises(InputError, match="mismatched dtypes"):
        interpolated_precision(run_t, qrels_t.set_column(0, "qid", pa.array(
            list(range(qrels_t.num_rows)))))
    with pytest.raises(InputError, match="run: missing column 'score'"):
        interpolated_precision(run_t.drop_columns(["score"]), qrels_t)
    other = run_t.set_column(1, "qid", pa.array(["zz"] * run_t.num_rows))
    with pytest.raises(InputError, match="system 's0' has no topic with both results and qrels"):
        interpolated_precision(other, qrels_t)
    with pytest.raises(InputError, match="curves: missing column 'recall'"):
        mean_curve(run_t)
