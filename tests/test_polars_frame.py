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
