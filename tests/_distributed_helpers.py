"""Shared helpers of tests/test_dask.py and tests/test_spark.py: data, and the bit-for-bit check
of an adapter's per-query table against ``uefast.evaluate``."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEYS = ["system", "qid", "measure"]
FLOATS = ["value", "iub", "reb", "ue_v1", "ue_v2"]
INTS = ["n_docs", "n_judged", "n_rel"]
MEASURES = ["nDCG@10", "AP", "P@5", "RR", "ERR@10", "R@20"]


def canon(table: pa.Table) -> pa.Table:
    """Strings as ``string``, sorted by (system, qid, measure), no metadata."""
    cols = {}
    for name in KEYS + FLOATS + INTS:
        c = table.column(name)
        if pa.types.is_large_string(c.type) or pa.types.is_string_view(c.type):
            c = c.cast(pa.string())
        cols[name] = c
    t = pa.table(cols)
    return t.sort_by([(k, "ascending") for k in KEYS])


def assert_bit_identical(got: pa.Table, ref: pa.Table) -> None:
    """Same rows (keys), the floats equal bit for bit (NaN payload-blind), the counts equal."""
    a, b = canon(got), canon(ref)
    assert a.num_rows == b.num_rows, (a.num_rows, b.num_rows)
    for k in KEYS + INTS:
        assert a.column(k).equals(b.column(k)), k
    for f in FLOATS:
        x = a.column(f).to_numpy(zero_copy_only=False).astype(np.float64)
        y = b.column(f).to_numpy(zero_copy_only=False).astype(np.float64)
        same = (x.view(np.uint64) == y.view(np.uint64)) | (np.isnan(x) & np.isnan(y))
        assert same.all(), (f, np.flatnonzero(~same)[:5], x[~same][:5], y[~same][:5])


def letor_run(n_queries: int = 40, seed: int = 0, string_ids: bool = False,
              systems=("bm25", "lm")) -> pa.Table:
    """LETOR-style table, rows *not* clustered (queries interleaved), tied scores, graded
    labels 0..4, docids unique per query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, n_queries)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, sizes)
    docid = np.concatenate([rng.permutation(s) * 3 + 1 for s in sizes])
    n = len(qid)
    cols = {"qid": qid, "docid": docid, "label": rng.integers(0, 5, n) * (rng.random(n) < 0.6)}
    for s in systems:
        cols[s] = rng.integers(0, 6, n).astype(np.float64) / 5  # many ties
    t = pa.table(cols).take(pa.array(rng.permutation(n)))
    if string_ids:
        t = t.set_column(0, "qid", pc.cast(t.column("qid"), pa.string()))
        t = t.set_column(1, "docid", pc.binary_join_element_wise(
            "d", pc.cast(t.column("docid"), pa.string()), ""))
    return t


def trec_run(n_queries: int = 30, seed: int = 1, string_ids: bool = False):
    """TREC-style (run with a system column, qrels); some queries unjudged, some judged docs
    unretrieved."""
    rng = np.random.default_rng(seed)
    runs = {"qid": [], "docid": [], "score": [], "system": []}
    qrels = {"qid": [], "docid": [], "label": []}
    for q in range(n_queries):
        pool = rng.permutation(60)[:rng.integers(5, 40)]
        if q % 7 != 3:
            for d in pool[: max(1, len(pool) * 2 // 3)]:
                qrels["qid"].append(q)
                qrels["docid"].append(int(d))
                qrels["label"].append(int(rng.integers(0, 3)))
        for s in ("A", "B", "C"):
            docs = rng.permutation(pool)[: rng.integers(1, len(pool) + 1)]
            for d in docs:
                runs["qid"].append(q)
                runs["docid"].append(int(d))
                runs["score"].append(float(rng.integers(0, 8)))
                runs["system"].append(s)
    run, qr = pa.table(runs), pa.table(qrels)
    run = run.take(pa.array(rng.permutation(run.num_rows)))
    if string_ids:
        def s(t, c, pre):
            i = t.schema.get_field_index(c)
            return t.set_column(i, c, pc.binary_join_element_wise(
                pre, pc.cast(t.column(c), pa.string()), ""))
        run, qr = s(s(run, "qid", "q"), "docid", "doc"), s(s(qr, "qid", "q"), "docid", "doc")
    return run, qr
