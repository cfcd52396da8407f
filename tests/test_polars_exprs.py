"""uefast.polars expressions: exact equality with uefast.evaluate on the same rows."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest

import uefast
import uefast.polars as uep
from uefast.errors import InputError

MEASURES = ["nDCG@10", "nDCG(gain=exp)@5", "DCG@3", "AP", "AP(norm=k)@5", "SP@5", "P@5", "R@10",
            "Rprec", "RR", "ERR(lmax=4)@5", "RBP(p=0.8)", "P(rel=2)@3"]


def _frame(n=1500, nq=90, seed=0, ties=True) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    q = np.sort(rng.integers(0, nq, n))
    rng.shuffle(q[: n // 4])  # not clustered at the start
    score = np.round(rng.random(n), 1) if ties else rng.random(n)
    return pl.DataFrame({"qid": q, "docid": rng.permutation(n).astype(str),
                         "label": rng.integers(0, 5, n), "score": score})


def _ref(df: pl.DataFrame, measures, stat="value", **kw) -> pl.DataFrame:
    t = pl.from_arrow(uefast.evaluate(df, measures=measures, score_columns=["score"], **kw))
    return t.pivot(on="measure", index="qid", values=stat)


@pytest.fixture(scope="module")
def df():
    return _frame()


@pytest.mark.parametrize("stat", ["value", "iub", "reb", "ue_v1", "ue_v2"])
def test_group_by_each_stat_exact(df, stat):
    exprs = []
    for m in MEASURES:
        if stat in ("iub", "reb"):
            exprs.append(getattr(uep, stat)(m, "label"))
        elif stat == "value":
            exprs.append(uep.measure(m, "label", "score", docid="docid"))
        else:
            exprs.append(getattr(uep, stat)(m, "label", "score", docid="docid"))
    got = df.group_by("qid", maintain_order=True).agg(exprs)
    ref = _ref(df, MEASURES, stat)
    for m in MEASURES:
        name = m if stat == "value" else f"{uefast.parse_measure(m)}:{stat}"
        assert np.array_equal(got[name].to_numpy(), ref[str(uefast.parse_measure(m))].to_numpy())


def test_named_functions_match_measure_strings(df):
    pairs = [(uep.ndcg("label", "score", k=10), "nDCG@10"),
             (uep.ndcg("label", "score", k=5, gain="exp"), "nDCG(gain=exp)@5"),
             (uep.dcg("label", "score", k=3), "DCG@3"), (uep.ap("label", "score"), "AP"),
             (uep.ap("label", "score", k=5, norm="k"), "AP(norm=k)@5"),
             (uep.sp("label", "score", k=5), "SP@5"), (uep.precision("label", "score", 5), "P@5"),
             (uep.recall("label", "score", 10), "R@10"), (uep.rprec("label", "score"), "Rprec"),
             (uep.rr("label", "score"), "RR"), (uep.err("label", "score", k=5, lmax=4), "ERR(lmax=4)@5"),
             (uep.rbp("label", "score", p=0.8), "RBP(p=0.8)"),
             (uep.precision("label", "score", 3, rel=2), "P(rel=2)@3"),
             (uep.success("label", "score", 5), "Success@5")]
    got = df.group_by("qid", maintain_order=True).agg(
        [e.alias(f"c{i}") for i, (e, _) in enumerate(pairs)])
    ref = _ref(df, [m for _, m in pairs], ties="input")
    for i, (_, m) in enumerate(pairs):
        assert np.array_equal(got[f"c{i}"].to_numpy(), ref[m].to_numpy()), m


def test_stat_keyword_and_ue_v2(df):
    got = df.group_by("qid", maintain_order=True).agg(
        uep.ndcg("label", "score", k=10, stat="ue_v2", docid="docid").alias("x"))
    ref = _ref(df, ["nDCG@10"], "ue_v2")
    assert np.array_equal(got["x"].to_numpy(), ref["nDCG@10"].to_numpy())


@pytest.mark.parametrize("stat", ["value", "iub", "reb", "ue_v1", "ue_v2", "n_rel"])
def test_measure_takes_the_stat_keyword(df, stat):
    """``measure(m, label, score, stat=...)``, as data_schemas/polars.md documents it."""
    got = df.group_by("qid", maintain_order=True).agg(
        uep.measure("AP@10", "label", "score", stat=stat, docid="docid").alias("x"))
    ref = _ref(df, ["AP@10"], stat)
    assert np.array_equal(got["x"].to_numpy(), ref["AP@10"].to_numpy())


def test_struct_shares_one_sort(df):
    ms = ["nDCG@10", "AP", "RR"]
    got = df.group_by("qid", maintain_order=True).agg(
        uep.measures("label", "score", ms, stats=("value", "iub", "reb", "ue_v1", "ue_v2", "n_rel"),
                     docid="docid")).unnest("measures")
    full = pl.from_arrow(uefast.evaluate(df, measures=ms, score_columns=["score"]))
    for m in ms:
        sub = full.filter(pl.col("measure") == m)
        for st in ("value", "iub", "reb", "ue_v1", "ue_v2", "n_rel"):
            assert np.array_equal(got[f"{m}:{st}"].to_numpy(), sub[st].to_numpy()), (m, st)
    only = df.group_by("qid", maintain_order=True).agg(
        uep.measures("label", "score", ms, docid="docid")).unnest("measures")
    assert only.columns == ["qid", *ms]


def test_engines_select_and_over(df):
    ref = _ref(df, ["AP"], ties="input")
    e = uep.ap("label", "score").alias("ap")
    eager = df.group_by("qid", maintain_order=True).agg(e)
    lazy = df.lazy().group_by("qid", maintain_order=True).agg(e).collect()
    stream = df.lazy().group_by("qid").agg(e).collect(engine="streaming").sort("qid")
    srt = ref.sort("qid")
    assert np.array_equal(eager["ap"].to_numpy(), ref["AP"].to_numpy())
    assert np.array_equal(lazy["ap"].to_numpy(), ref["AP"].to_numpy())
    assert np.array_equal(stream["ap"].to_numpy(), srt["AP"].to_numpy())
    over = df.with_columns(e.over("qid"))
    joined = over.join(ref, on="qid", how="left")
    assert np.array_equal(joined["ap"].to_numpy(), joined["AP"].to_numpy())
    one = df.filter(pl.col("qid") == df["qid"][0])
    sel = one.select(e)
    assert sel.height == 1
    assert sel["ap"][0] == _ref(one, ["AP"], ties="input")["AP"][0]


def test_err_needs_explicit_lmax(df):
    with pytest.raises(InputError, match="lmax"):
        uep.err("label", "score", k=5)
    got = df.group_by("qid", maintain_order=True).agg(
        uep.err("label", "score", k=5, max_label=4).alias("e"))
    ref = _ref(df, ["ERR@5"], ties="input")  # data max label is 4
    assert np.array_equal(got["e"].to_numpy(), ref["ERR@5"].to_numpy())


def test_expressions_as_inputs_and_nulls():
    df = _frame(300, 20, seed=3)
    got = df.group_by("qid", maintain_order=True).agg(
        uep.ap(pl.col("label").cast(pl.Float64), pl.col("score").cast(pl.Float32)).alias("x"))
    ref = pl.from_arrow(uefast.evaluate(df.with_columns(pl.col("score").cast(pl.Float32)),
                                        measures="AP", score_columns=["score"], ties="input"))
    assert np.array_equal(got["x"].to_numpy(), ref["value"].to_numpy())
    bad = df.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(None)
                          .otherwise(pl.col("score")).alias("score"))
    with pytest.raises(Exception, match="null"):
        bad.group_by("qid").agg(uep.ap("label", "score"))


def test_duplicate_docid_rejected():
    df = pl.DataFrame({"qid": [1, 1], "docid": ["a", "a"], "label": [1, 0], "score": [.1, .2]})
    with pytest.raises(Exception, match="duplicate docid"):
        df.group_by("qid").agg(uep.ap("label", "score", docid="docid"))


def test_empty_frame():
    df = pl.DataFrame({"qid": [], "label": [], "score": []},
                      schema={"qid": pl.Int64, "label": pl.Int64, "score": pl.Float64})
    out = df.group_by("qid").agg(uep.ndcg("label", "score", k=10))
    assert out.height == 0


def test_bad_arguments():
    with pytest.raises(InputError):
        uep.ap("label", "score", ties="random")
    with pytest.raises(InputError):
        uep.ue_v2("AP", "label", "score", degenerate="drop")
    with pytest.raises(InputError):
        uep.measure("nDCG@10 AP", "label", "score")


def test_namespace_alias(df):
    uep.register_namespace()
    got = df.group_by("qid", maintain_order=True).agg(
        pl.col("label").uefast.ndcg("score", k=10).alias("a"),
        pl.col("label").uefast.reb("AP").alias("b"))
    assert np.array_equal(got["a"].to_numpy(), _ref(df, ["nDCG@10"], ties="input")["nDCG@10"].to_numpy())
    assert np.array_equal(got["b"].to_numpy(), _ref(df, ["AP"], "reb")["AP"].to_numpy())


def test_concurrent_calls_from_threads():
    frames = [_frame(2000, 120, seed=s) for s in range(4)]
    refs = [f.group_by("qid", maintain_order=True).agg(
        uep.measures("label", "score", ["nDCG@10", "AP"], docid="docid")) for f in frames]

    def job(i):
        f = frames[i % 4]
        out = f.lazy().with_columns(  # several kernels entered from Polars' own threads at once
            uep.ndcg("label", "score", k=10, docid="docid").over("qid").alias("n"),
            uep.ap("label", "score", docid="docid").over("qid").alias("a"),
        ).group_by("qid", maintain_order=True).agg(
            uep.measures("label", "score", ["nDCG@10", "AP"], docid="docid")).collect()
        return i, out

    with ThreadPoolExecutor(8) as ex:
        for i, out in ex.map(job, range(24)):
            assert out.equals(refs[i % 4])


def test_empty_stats_refused_when_the_expression_is_built():
    """Was a Polars ComputeError about aggregation lengths at collect."""
    with pytest.raises(uefast.InputError, match="`stats` must name at least one of"):
        uep.measures("label", "score", ["AP"], stats=())
