"""uefast.diversity.exprs (Polars): the same numbers as uefast.diversity.evaluate on the same
judgments (the group's rows) and ranking."""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.diversity import evaluate
from uefast.diversity import exprs as dx
from uefast.errors import InputError

MEASURES = ["alpha-nDCG@5", "ERR-IA@3", "NRBP", "strec@2", "RBU@5", "gERR-IA@4", "S-RR", "EU"]


def _frame(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(5):
        m = int(rng.integers(1, 4))
        for d in range(int(rng.integers(2, 9))):
            rows.append({"qid": f"q{q}", "docid": f"d{int(rng.integers(0, 50)):02d}{d}",
                         "score": float(rng.integers(0, 4)), "grades": [int(x) for x in rng.choice([-2, 0, 0, 1, 2], m)]})
    return pl.DataFrame(rows)


@pytest.mark.parametrize("seed", range(3))
def test_exprs_equal_evaluate(seed):
    df = _frame(seed)
    out = df.group_by("qid", maintain_order=True).agg(
        [dx.measure(s, "grades", "score", docid="docid", stat=st) for s in MEASURES
         for st in ("value", "iub", "reb", "ue_v2")])
    q = df.with_columns(pl.col("grades").list.len().alias("m")).explode("grades").with_columns(
        (pl.int_range(pl.len()).over(["qid", "docid"])).cast(pl.String).alias("subtopic"))
    qrels = q.select("qid", "subtopic", "docid", pl.col("grades").alias("label")).to_arrow()
    ref = evaluate(df.select("qid", "docid", "score").to_arrow(), qrels, MEASURES)
    want = {(r["qid"], r["measure"]): r for r in ref.to_pylist()}
    checked = 0
    for row in out.iter_rows(named=True):
        for s in MEASURES:
            r = want.get((row["qid"], s))
            if r is None:  # a query without any relevant document is not in evaluate()'s qrels
                continue
            for st, col in (("value", s), ("iub", f"{s}:iub"), ("reb", f"{s}:reb"), ("ue_v2", f"{s}:ue_v2")):
                assert row[col] == pytest.approx(r[st], abs=1e-12), (row["qid"], s, st)
                checked += 1
    assert checked >= 4 * len(MEASURES) * 3


def test_bad_stat():
    with pytest.raises(InputError, match="stat"):
        dx.measure("RBU@5", stat="x")


# one measure string per registered family (every family goes through the expression path)
ALL = ["ERR-IA@3", "nERR-IA@2", "alpha-DCG@3", "alpha-nDCG(alpha=0.6)@4", "NRBP", "nNRBP(beta=0.9)",
       "MAP-IA", "P-IA@2", "strec@3", "RBU@3", "RBU(variant=java)", "gERR-IA@4", "RBP-IA",
       "nDCG-IA@3", "RR-IA", "AP-IA", "S-RR", "D-nDCG@3", "D#-nDCG@4", "EU", "CT@3", "CubeTest@3"]
STATS = ("value", "iub", "reb", "ue_v1", "ue_v2")


def test_every_family_listed():
    from uefast.diversity import families, parse_measure

    assert {parse_measure(s).fam.name for s in ALL} == set(families())


def _random_frame(rng, n_q):
    """Queries of 1-9 rows, 0-4 aspects (grades -2..3, some queries without a relevant
    document), tied scores, docids unique within a query (shared between queries)."""
    rows = []
    for q in range(n_q):
        m = int(rng.integers(0, 5))
        n = int(rng.integers(1, 10))
        for d in rng.permutation(20)[:n]:
            rows.append({"qid": f"q{q}", "docid": f"d{int(d):02d}", "score": float(rng.integers(0, 4)),
                         "grades": [int(x) for x in rng.choice([-2, 0, 0, 0, 1, 2, 3], m)]})
    return pl.DataFrame(rows, schema={"qid": pl.String, "docid": pl.String, "score": pl.Float64,
                                      "grades": pl.List(pl.Int64)})


def _evaluate_reference(df, ties="trec_eval", run=None):
    """uefast.diversity.evaluate on the same judgments (one qrels row per document and aspect;
    a document without aspects as judged on an inactive aspect)."""
    q = (df.with_columns(pl.when(pl.col("grades").list.len() == 0).then(pl.lit([0], pl.List(pl.Int64)))
                         .otherwise(pl.col("grades")).alias("grades"))
         .explode("grades").with_columns(pl.int_range(pl.len()).over(["qid", "docid"]).cast(pl.String)
                                         .alias("subtopic")))
    qrels = q.select("qid", "subtopic", "docid", pl.col("grades").alias("label")).to_arrow()
    run = df.select("qid", "docid", "score").to_arrow() if run is None else run
    ref = evaluate(run, qrels, ALL, ties=ties)
    return {(r["qid"], r["measure"]): r for r in ref.to_pylist()}


def _same(a, b):
    return (a is None and b is None) or a == b or (a != a and b != b)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_struct_expression_equals_evaluate_bit_for_bit(seed):
    """dx.measures (one pass, every family, every stat) = uefast.diversity.evaluate, value for
    value (the same code after the tables are built), on random frames."""
    rng = np.random.default_rng(seed)
    df = _random_frame(rng, int(rng.integers(1, 8)))
    out = df.group_by("qid", maintain_order=True).agg(
        dx.measures(ALL, "grades", "score", docid="docid", stats=STATS)).unnest("measures")
    want = _evaluate_reference(df)
    for row in out.iter_rows(named=True):
        for s in ALL:
            ref = want[(row["qid"], s)]
            for stat in STATS:
                assert _same(row[f"{s}:{stat}"], ref[stat]), (seed, row["qid"], s, stat, row[f"{s}:{stat}"], ref[stat])


def test_single_measure_expressions_equal_the_struct():
    df = _random_frame(np.random.default_rng(11), 6)
    one = df.group_by("qid", maintain_order=True).agg(
        [dx.measure(s, "grades", "score", docid="docid", stat=stat) for s in ALL[:8] for stat in STATS])
    many = df.group_by("qid", maintain_order=True).agg(
        dx.measures(ALL[:8], "grades", "score", docid="docid", stats=STATS)).unnest("measures")
    # measure(stat="value") is named after the measure; measures() with several stats adds ":value"
    names = [c if ":" in c else f"{c}:value" for c in one.columns[1:]]
    assert names == many.columns[1:]
    for c, d in zip(one.columns[1:], names):
        assert all(_same(a, b) for a, b in zip(one[c].to_list(), many[d].to_list())), c


def test_without_docid_ties_keep_row_order():
    """No docid: the ranking is score descending, ties in row order; values = the plain-Python
    references (tests/naive_diversity.py) on that ranking, REB/IUB = evaluate with that rank."""
    import naive_diversity as nd

    from uefast.diversity import compile_qrels, parse_measure

    rng = np.random.default_rng(5)
    df = _random_frame(rng, 6).with_columns(pl.int_range(pl.len()).over("qid").alias("row"))
    out = df.group_by("qid", maintain_order=True).agg(dx.measures(ALL, "grades", "score", stats=STATS)).unnest("measures")
    # the same frame with docids = zero-padded row positions and an explicit rank column
    df2 = df.with_columns(pl.col("row").cast(pl.String).str.zfill(12).alias("docid"))
    df2 = df2.with_columns(pl.struct(pl.col("score").neg(), "row").rank("ordinal").over("qid").alias("rank"))
    want = _evaluate_reference(df2, ties="rank", run=df2.select("qid", "docid", "score", "rank").to_arrow())
    for row in out.iter_rows(named=True):
        for s in ALL:
            for stat in STATS:
                assert _same(row[f"{s}:{stat}"], want[(row["qid"], s)][stat]), (row["qid"], s, stat)
    # values against the naive references on the stable score order
    qrels = compile_qrels(pl.DataFrame(
        [{"qid": r["qid"], "subtopic": str(j), "docid": r["docid"], "label": max(g, 0)}
         for r in df2.iter_rows(named=True) for j, g in enumerate(r["grades"] or [0])]).to_arrow())
    for row in out.iter_rows(named=True):
        g = df2.filter(pl.col("qid") == row["qid"]).sort("rank")
        top = qrels[row["qid"]]
        idx = {d: i for i, d in enumerate(top.docids)}
        ranking = [idx[d] for d in g["docid"]]
        for s in ALL:
            m = parse_measure(s)
            ref = getattr(nd, m.fam.naive)(top.grades.tolist(), top.weights.tolist(), ranking, m.params, m.k)
            assert abs(row[f"{s}:value"] - ref) <= 1e-11 * max(1.0, abs(ref)), (row["qid"], s)


def test_bad_input_is_named():
    ok = {"qid": ["a", "a"], "docid": ["x", "y"], "score": [1.0, 2.0], "grades": [[1, 0], [0, 1]]}
    for change, msg in [({"grades": [[1, 0], [1]]}, "lengths 2 and 1"),
                        ({"docid": ["x", "x"]}, "appears twice in group 0"),
                        ({"score": [1.0, None]}, "score is null"),
                        ({"score": [1.0, float("nan")]}, "NaN"),
                        ({"grades": [[1, None], [0, 1]]}, "grade is null")]:
        df = pl.DataFrame({**ok, **change})
        with pytest.raises(InputError, match=msg):
            df.group_by("qid").agg(dx.measure("alpha-nDCG@2", "grades", "score", docid="docid"))
    with pytest.raises(InputError, match="stat"):
        dx.measures(["RBU@5"], stats=["value", "x"])
