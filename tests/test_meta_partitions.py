"""uefast.meta.partitions on tiny hand-made tables."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from uefast.errors import InputError
from uefast.meta import (
    apply_document_split,
    broad_focused_queries,
    query_types,
    random_document_splits,
    uninformative_ideal_queries,
)


def long_table():
    # 6 queries x 2 systems; per query (values s1, s2, iub, reb)
    q = {
        "q1": (0.30, 0.32, 1.0, 0.31),  # gap 0.0  -> uninformative-hard
        "q2": (0.90, 0.80, 1.0, 0.20),  # gap 0.65 -> informative, largest gap
        "q3": (0.00, 0.00, 0.0, 0.00),  # degenerate (no relevant doc)
        "q4": (0.99, 0.97, 1.0, 0.97),  # gap 0.01 -> uninformative-easy
        "q5": (1.00, 0.98, 1.0, 0.40),  # gap 0.59 -> ideal type
        "q6": (0.50, 0.60, 1.0, 0.30),  # gap 0.25 -> informative
    }
    rows = []
    for s in (0, 1):
        for qid, (a, b, iub, reb) in q.items():
            rows.append((f"sys{s}", qid, "nDCG@10", (a, b)[s], iub, reb))
    rows.append(("sys0", "q1", "AP", 0.1, 1.0, 0.1))  # another measure, filtered out
    cols = ("system", "qid", "measure", "value", "iub", "reb")
    return pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)})


def test_uninformative_ideal_top_n():
    t = uninformative_ideal_queries(long_table(), "nDCG@10", top_n=2)
    got = dict(zip(t["qid"].to_pylist(), t["query_set"].to_pylist()))
    assert got == {"q1": "uninformative", "q4": "uninformative", "q2": "ideal", "q5": "ideal",
                   "q3": "degenerate", "q6": "middle"}
    assert t["gap"].to_pylist()[0] == pytest.approx(0.0)
    assert t["gap_rank"].to_pylist()[2] is None
    with pytest.raises(InputError, match="`top_n`"):
        uninformative_ideal_queries(long_table(), "nDCG@10", top_n=3)
    # keeping degenerate queries: q3 (gap 0, tied with q1) joins the uninformative set, q4 leaves
    t2 = uninformative_ideal_queries(long_table(), "nDCG@10", top_n=2, exclude_degenerate=False)
    got2 = dict(zip(t2["qid"].to_pylist(), t2["query_set"].to_pylist()))
    assert got2["q1"] == got2["q3"] == "uninformative" and got2["q4"] == "middle"


def test_query_types():
    t = query_types(long_table(), "nDCG@10", tol=0.05)
    got = dict(zip(t["qid"].to_pylist(), t["query_type"].to_pylist()))
    assert got == {"q1": "uninformative-hard", "q2": "informative", "q3": "degenerate",
                   "q4": "uninformative-easy", "q5": "ideal", "q6": "informative"}
    with pytest.raises(InputError, match="several measures"):
        query_types(long_table())


def test_broad_focused_balanced():
    labels = {
        1: [2, 2, 0],      # share 2/3 -> broad
        2: [2, 2, 1, 0],   # 2/4 -> broad (>= 0.5)
        3: [1, 0, 0],      # focused
        4: [2, 0, 0, 0],   # focused
        5: [1, 1, 0],      # focused
        6: [0, 0],         # no relevant document -> none
    }
    qid = [q for q, ls in labels.items() for _ in ls]
    lab = [l for ls in labels.values() for l in ls]
    t = pa.table({"qid": pa.array(qid, pa.int64()), "label": lab})
    un = broad_focused_queries(t, balanced=False)
    assert un["group"].to_pylist() == ["broad", "broad", "focused", "focused", "focused", "none"]
    assert un["qid"].type == pa.int64()
    assert un["share"].to_pylist()[1] == pytest.approx(0.5)
    bal = broad_focused_queries(t, balanced=True, seed=1)
    g = bal["group"].to_pylist()
    assert g.count("broad") == g.count("focused") == 2
    assert g[:2] == ["broad", "broad"] and g[5] == "none"
    med = broad_focused_queries(t, min_label=1, threshold="median", balanced=False)
    assert med["group"].to_pylist()[1] == "broad"
    with pytest.raises(InputError, match=r"`seed` must be an integer in \[0, 2\*\*64\) or None; got -1"):
        broad_focused_queries(t, seed=-1)  # a numpy ValueError before


def test_random_document_splits():
    t = pa.table({"qid": ["a"] * 5 + ["b"] * 4, "docid": [f"d{i}" for i in range(9)], "label": [0, 1, 2, 0, 1, 0, 0, 1, 1]})
    s = random_document_splits(t, n_replicates=3, seed=7)
    assert s.num_rows == 27
    for r in range(3):
        left = apply_document_split(t, s, replicate=r, half="left")
        right = apply_document_split(t, s, replicate=r, half="right")
        assert left.num_rows + right.num_rows == 9
        assert left["qid"].to_pylist().count("a") == 3 and left["qid"].to_pylist().count("b") == 2
        assert not set(left["docid"].to_pylist()) & set(right["docid"].to_pylist())
    # deterministic, and replicates differ
    assert s.equals(random_document_splits(t, n_replicates=3, seed=7))
    halves = [tuple(s.filter(np.asarray(s["replicate"]) == r)["half"].to_pylist()) for r in range(3)]
    assert len(set(halves)) > 1
    with pytest.raises(InputError, match=r"`seed` must be an integer in \[0, 2\*\*64\); got -1"):
        random_document_splits(t, seed=-1)
