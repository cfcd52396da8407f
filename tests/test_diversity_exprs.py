"""uefast.diversity.exprs (Polars): the same numbers as uefast.diversity.evaluate on the same
judgments (the group's rows) and ranking."""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

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
