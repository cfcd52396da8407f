"""uefast.polars.evaluate: the long table, identical to uefast.evaluate."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import uefast
import uefast.polars as uep

M = ["nDCG@10", "AP", "ERR@5", "RBP(p=0.8)", "P@5", "RR"]


def _wide(n=2000, nq=150, seed=0, strq=False) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    q = np.sort(rng.integers(0, nq, n))
    rng.shuffle(q[:400])
    return pl.DataFrame({"qid": q.astype(str) if strq else q,
                         "docid": rng.permutation(n).astype(str),
                         "label": rng.integers(0, 5, n), "a": np.round(rng.random(n), 1),
                         "b": rng.random(n), "c": np.round(rng.random(n), 2)})


@pytest.mark.parametrize("strq", [False, True])
@pytest.mark.parametrize("kw", [{}, {"ties": "expected"}, {"ties": "input", "reb": "paper"},
                                {"degenerate": "nan"}, {"degenerate": "drop"}, {"ue": False},
                                {"rel_level": 2}])
def test_wide_equals_core(strq, kw):
    df = _wide(strq=strq)
    ref = pl.from_arrow(uefast.evaluate(df, measures=M, **kw))
    got = uep.evaluate(df, measures=M, **kw)
    assert got.equals(ref)


def test_long_system_column_and_lazy():
    df = _wide()
    long = df.unpivot(index=["qid", "docid", "label"], on=["a", "b", "c"], variable_name="system",
                      value_name="score").sample(fraction=0.9, seed=1, shuffle=True)
    ref = pl.from_arrow(uefast.evaluate(long, measures=M))
    got = uep.evaluate(long.lazy(), measures=M)
    assert isinstance(got, pl.LazyFrame)
    assert got.collect().equals(ref)
    assert uep.evaluate(long.lazy(), measures=M).collect(engine="streaming").equals(ref)


def test_trec_style_delegates():
    run = pl.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "a"], "score": [.3, .2, .1]})
    qrels = pl.DataFrame({"qid": ["1", "2"], "docid": ["b", "a"], "label": [1, 2]})
    got = uep.evaluate(run, qrels, measures=["AP"])
    assert got.equals(pl.from_arrow(uefast.evaluate(run, qrels, measures=["AP"])))


def test_frame_and_expression_checks_match_evaluate():
    """max_label below the data's top label was trusted (ERR@3 = 3.08, above 1); drop with
    ue=False must drop what evaluate drops (the degenerate rows, issue 28); a null qid or system became a group of its own;
    score_columns=[] gave a misleading message."""
    from uefast.errors import InputError

    df = pl.DataFrame({"qid": ["a", "a", "a", "b", "b"], "docid": ["x", "y", "z", "x", "y"],
                       "label": [3, 0, 1, 1, 0], "score": [.3, .2, .1, .5, .9]})
    for call in (lambda: df.group_by("qid").agg(uep.err("label", "score", k=3, max_label=1)),
                 lambda: uep.evaluate(df, measures=["ERR@3"], score_columns=["score"], max_label=1)):
        with pytest.raises(InputError, match="the data has label 3, above max_label=1"):
            call()
    deg = pl.DataFrame({"qid": [1, 1, 2, 2], "docid": ["a", "b", "a", "b"], "label": [0, 0, 1, 0],
                        "score": [.3, .2, .1, .9]})
    got = uep.evaluate(deg, measures=["AP"], degenerate="drop", ue=False)
    assert got["qid"].to_list() == uefast.evaluate(deg.to_arrow(), measures=["AP"], degenerate="drop",
                                                   ue=False)["qid"].to_pylist() == [2]  # 1: degenerate
    for col, row in (("qid", 2), ("system", 1)):
        bad = deg.with_columns(system=pl.Series(["s", None, "s", "s"])) if col == "system" else \
            deg.with_columns(qid=pl.Series([1, 1, None, 2]))
        with pytest.raises(InputError, match=f"column '{col}' has 1 null value\\(s\\); first at row {row}"):
            uep.evaluate(bad, measures=["AP"])
    with pytest.raises(InputError, match="`score_columns` is empty"):
        uep.evaluate(df, measures=["AP"], score_columns=[])


def test_frame_errors_name_the_users_column_and_row():
    """The kernel sees unpivoted groups; a DataFrame's bad value is still reported with the input's
    column and row, as uefast.evaluate reports it (was: column 'score', row 7 of the batch)."""
    import pyarrow as pa

    t = pa.table({"qid": ["b", "a", "a", "b"], "docid": ["1", "1", "2", "2"],
                  "label": [0, 1, -2, 1], "sys0": [0.1, 0.2, 0.3, 0.4],
                  "sys1": [0.1, 0.2, 0.3, float("nan")]})
    with pytest.raises(uefast.InputError, match="score column 'sys1' has NaN at row 3"):
        uep.evaluate(pl.from_arrow(t), measures=["P@1"])
    fixed = pl.from_arrow(t).with_columns(pl.col("sys1").fill_nan(0.0))
    with pytest.raises(uefast.InputError, match="negative label -2 at row 2"):
        uep.evaluate(fixed, measures=["P@1"], negative_labels="error")


def test_err_default_lmax_when_every_label_is_negative():
    """Labels <= 0 count as 0, so ERR's default lmax is 0 here, as in uefast.evaluate (was: an
    error about max_label = -1, which the user never passed)."""
    df = pl.DataFrame({"qid": ["a", "a"], "label": [-1, -2], "s": [0.1, 0.2]})
    got = uep.evaluate(df, measures=["ERR@5"])["value"].to_list()
    assert got == uefast.evaluate(df, measures=["ERR@5"])["value"].to_pylist() == [0.0]


def test_score_columns_rule_as_in_evaluate():
    """With a system column exactly one score column (Polars silently used the first)."""
    df = pl.DataFrame({"system": ["A", "A", "B", "B"], "qid": ["q"] * 4, "docid": ["1", "2", "1", "2"],
                       "label": [1, 0, 1, 0], "a": [0.1, 0.2, 0.3, 0.4], "b": [0.4, 0.3, 0.2, 0.1]})
    for frame in (df, df.lazy()):
        with pytest.raises(uefast.InputError, match="name exactly one score column"):
            uep.evaluate(frame, measures=["P@1"], score_columns=["a", "b"])
