"""uefast.streaming: exact equality with the in-memory path, carry-over, clustering checks."""
from __future__ import annotations

import io
import json

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uefast
import uefast.streaming as us
from uefast._progress import Progress
from uefast.errors import InputError

def _same(a: pa.Table, b: pa.Table) -> bool:
    """Same schema and values (NaN equal to NaN)."""
    return a.schema.equals(b.schema) and pl.from_arrow(a).equals(pl.from_arrow(b))


M = ["nDCG@10", "AP", "ERR@5", "RBP(p=0.8)", "P@5", "RR"]


def _table(n=3000, nq=200, seed=0, strq=False, big_query=0) -> pa.Table:
    rng = np.random.default_rng(seed)
    q = np.sort(rng.integers(0, nq, n))
    if big_query:  # one query larger than any batch
        q = np.concatenate([q[: n // 2], np.full(big_query, nq + 1), q[n // 2:] + nq + 2])
    m = len(q)
    return pa.table({"qid": q.astype(str) if strq else q, "docid": rng.permutation(m).astype(str),
                     "label": rng.integers(0, 5, m), "a": np.round(rng.random(m), 1),
                     "b": rng.random(m)})


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    t = _table(big_query=700)
    path = tmp_path_factory.mktemp("s") / "run.parquet"
    pq.write_table(t, path, row_group_size=97)  # row groups split many queries
    return t, str(path), uefast.evaluate(t, measures=M)


@pytest.mark.parametrize("bs", [3, 64, 500, 10_000])
def test_parquet_equals_in_memory(data, bs):
    t, path, ref = data
    got = us.evaluate_stream(path, measures=M, batch_size=bs)
    assert got.equals(ref)
    s = json.loads(ref.schema.metadata[b"uefast.settings"])
    assert json.loads(got.schema.metadata[b"uefast.settings"]) == s


def test_iterators_readers_and_empty_batches(data):
    t, _, ref = data
    batches = t.to_batches(max_chunksize=13)
    empty = t.schema.empty_table().to_batches() or [pa.RecordBatch.from_pylist([], t.schema)]
    mixed = [x for b in batches for x in (b, empty[0])]
    assert us.evaluate_stream(iter(mixed), measures=M, batch_size=25, max_label=4).equals(ref)
    rdr = pa.RecordBatchReader.from_batches(t.schema, batches)
    assert us.evaluate_stream(rdr, measures=M, batch_size=50, max_label=4).equals(ref)
    with pytest.raises(InputError, match="max_label"):
        us.evaluate_stream(iter(batches), measures=M)
    assert us.evaluate_stream(iter(batches), measures=["AP", "ERR(lmax=5)@5"],
                              batch_size=9).equals(
        uefast.evaluate(t, measures=["AP", "ERR(lmax=5)@5"]))


@pytest.mark.parametrize("kw", [{"ties": "expected"}, {"degenerate": "drop"},
                                {"degenerate": "nan", "ue": True}, {"ue": False},
                                {"reb": "paper", "ties": "input"}])
def test_settings_string_qids(kw):
    t = _table(1500, 120, seed=2, strq=True)
    ref = uefast.evaluate(t, measures=M, **kw)
    got = us.evaluate_stream(t, measures=M, batch_size=23, **kw)
    assert _same(got, ref)
    if kw.get("degenerate") == "drop":
        assert json.loads(got.schema.metadata[b"uefast.dropped"]) == \
            json.loads(ref.schema.metadata[b"uefast.dropped"])


def test_long_format_system_column():
    t = pl.from_arrow(_table(1200, 80, seed=3))
    long = t.unpivot(index=["qid", "docid", "label"], on=["a", "b"], variable_name="system",
                     value_name="score").sort("qid", maintain_order=True).to_arrow()
    ref = uefast.evaluate(long, measures=M)
    assert us.evaluate_stream(long, measures=M, batch_size=31).equals(ref)


def test_trec_style():
    rng = np.random.default_rng(5)
    n = 3000
    q = np.sort(rng.integers(0, 200, n)).astype(str)
    run = pl.DataFrame({"system": rng.choice(["x", "y"], n), "qid": q,
                        "docid": rng.integers(0, 60, n).astype(str), "score": rng.random(n)})
    run = run.unique(["system", "qid", "docid"], maintain_order=True).to_arrow()
    qrels = pl.DataFrame({"qid": rng.integers(0, 230, 900).astype(str),
                          "docid": rng.integers(0, 60, 900).astype(str),
                          "label": rng.integers(0, 4, 900)})
    qrels = qrels.unique(["qid", "docid"], maintain_order=True).to_arrow()
    ref = uefast.evaluate(run, qrels, measures=M)
    assert us.evaluate_stream(run, qrels, measures=M, batch_size=17).equals(ref)
    with pytest.raises(InputError, match="intersect"):
        us.evaluate_stream(run, qrels, measures=M, queries="qrels")


def test_not_clustered_detected_and_fixed(tmp_path, data):
    t, _, _ = data
    rng = np.random.default_rng(1)
    sh = t.take(pa.array(rng.permutation(t.num_rows)))
    src = tmp_path / "shuffled.parquet"
    pq.write_table(sh, src, row_group_size=100)
    for bs in (10, 100_000):  # across batches and inside one batch
        with pytest.raises(us.NotClusteredError, match=r"qid .* reappears at row \d+.*cluster_parquet"):
            us.evaluate_stream(str(src), measures=M, batch_size=bs)
    dst = tmp_path / "clustered.parquet"
    info = us.cluster_parquet(str(src), str(dst), row_group_size=150, memory_limit=4000)
    assert info["partitions"] > 1 and info["rows"] == t.num_rows
    pf = pq.ParquetFile(dst)
    seen = set()
    for i in range(pf.metadata.num_row_groups):  # row groups cut at query boundaries
        qs = pf.read_row_group(i, columns=["qid"])["qid"].unique().to_pylist()
        assert not seen & set(qs)
        seen |= set(qs)
    key = [("system", "ascending"), ("qid", "ascending"), ("measure", "ascending")]
    got = us.evaluate_stream(str(dst), measures=M, batch_size=41)
    assert got.sort_by(key).equals(uefast.evaluate(sh, measures=M).sort_by(key))


def test_out_and_aggregate(tmp_path, data):
    t, path, ref = data
    out = tmp_path / "res.parquet"
    summ = us.evaluate_stream(path, measures=M, batch_size=50, out=str(out))
    written = pq.read_table(out)
    key = [("system", "ascending"), ("qid", "ascending"), ("measure", "ascending")]
    assert written.sort_by(key).equals(ref.sort_by(key))
    agg = uefast.aggregate(ref)
    assert summ.select(["system", "measure", "n_queries"]).equals(
        agg.select(["system", "measure", "n_queries"]))
    for c in ("value", "iub", "reb", "ue_v1", "ue_v2"):
        np.testing.assert_allclose(summ[c].to_numpy(), agg[c].to_numpy(), rtol=1e-12)
    summ2 = us.evaluate_stream(path, measures=M, batch_size=50, aggregate=True)
    assert summ2.equals(summ)


def test_dataset_directory_and_dispatch_predicate(tmp_path, data):
    t, path, ref = data
    d = tmp_path / "ds"
    d.mkdir()
    for i, lo in enumerate(range(0, t.num_rows, 1000)):  # files split queries too
        pq.write_table(t.slice(lo, 1000), d / f"part-{i:03d}.parquet")
    assert us.evaluate_stream(str(d), measures=M, batch_size=77).equals(ref)
    assert us.is_streaming_source(str(d), threshold=0)
    assert not us.is_streaming_source(path)  # small file: in memory
    assert us.is_streaming_source(pq.ParquetFile(path))
    assert us.is_streaming_source(iter(t.to_batches()))
    assert us.is_streaming_source(pa.RecordBatchReader.from_batches(t.schema, t.to_batches()))
    assert not us.is_streaming_source(t) and not us.is_streaming_source({"a": [1]})


def test_errors():
    with pytest.raises(InputError, match="no rows"):
        us.evaluate_stream(iter([]), measures=["AP"])
    t = pa.table({"qid": pa.array([1, None, 2]), "label": [1, 0, 1], "s": [.1, .2, .3]})
    with pytest.raises(InputError, match="null"):
        us.evaluate_stream(t, measures=["AP"])
    with pytest.raises(InputError, match="batch_size"):
        us.evaluate_stream(t, measures=["AP"], batch_size=0)


def test_progress_line():
    buf = io.StringIO()
    p = Progress(total_rows=1000, stream=buf, interval=0)
    p.update(500, 12)
    p.close(1000, 20)
    text = buf.getvalue()
    assert "500 rows (50%)" in text and "20 queries" in text and "rows/s" in text
    assert text.endswith("\n")
    t = _table(300, 20)
    import contextlib

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        us.evaluate_stream(t, measures=["AP"], batch_size=50, progress=True)
    assert "queries" in err.getvalue()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), bs=st.integers(1, 60), chunk=st.integers(1, 40))
def test_property_any_batching(seed, bs, chunk):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    q = np.sort(rng.integers(0, int(rng.integers(1, 40)), n))
    t = pa.table({"qid": q, "label": rng.integers(0, 3, n), "s": np.round(rng.random(n), 1)})
    ref = uefast.evaluate(t, measures=["nDCG@5", "AP", "ERR@3"])
    got = us.evaluate_stream(iter(t.to_batches(max_chunksize=chunk)),
                             measures=["nDCG@5", "AP", "ERR@3"], batch_size=bs,
                             max_label=int(np.max(t["label"].to_numpy())))
    assert got.equals(ref)


def test_drop_and_system_order_when_chunks_yield_no_rows():
    """A chunk whose rows are all dropped (degenerate queries) or whose queries are not in the
    qrels still fixes where its systems come: the same table (rows and order) as in memory.
    (An all-dropped first chunk raised ArrowTypeError; a system first seen in such a chunk
    came last.)"""
    letor = pa.table(dict(qid=[1, 1, 2, 2], docid=["a", "b", "a", "b"], label=[0, 0, 1, 0],
                          score=[0.3, 0.2, 0.1, 0.9]))
    for bs in (1, 2, 1 << 20):
        for src in (letor, pa.RecordBatchReader.from_batches(letor.schema, letor.to_batches(max_chunksize=2))):
            got = us.evaluate_stream(src, measures=["AP"], degenerate="drop", batch_size=bs)
            assert got.equals(uefast.evaluate(letor, measures=["AP"], degenerate="drop"))
    every = pa.table(dict(qid=[1, 1], docid=["a", "b"], label=[1, 1], score=[0.3, 0.2]))
    got = uefast.evaluate(pa.RecordBatchReader.from_batches(every.schema, every.to_batches()),
                          measures=["P@2"], degenerate="drop")
    assert got.num_rows == 0 and len(json.loads(got.schema.metadata[b"uefast.dropped"])) == 1
    # system A comes first in the input, but its first rows are in a query without qrels
    run = pa.table(dict(qid=[9, 1, 1, 2, 2], docid=["x", "x", "y", "x", "y"],
                        score=[1.0, 1.0, 0.5, 1.0, 0.5], system=["A", "C", "C", "A", "C"]))
    qrels = pa.table(dict(qid=[1, 2], docid=["x", "x"], label=[1, 1]))
    ref = uefast.evaluate(run, qrels, measures=["AP"])
    assert ref["system"].to_pylist()[0] == "A"
    for bs in (1, 2, 1 << 20):
        assert us.evaluate_stream(run, qrels, measures=["AP"], batch_size=bs).equals(ref)


def test_string_view_qid_streams_as_in_memory():
    """A string_view qid (Polars' newest Arrow export, DuckDB) is accepted in memory; a stream
    of it was rejected ("must hold integers or strings, got string_view")."""
    sv = pa.table({"qid": pa.array(["a", "a", "b"]).cast(pa.string_view()), "docid": ["1", "2", "1"],
                   "label": [1, 0, 1], "s": [.1, .2, .3]})
    ref = uefast.evaluate(sv, measures=["P@1"])
    assert uefast.evaluate(sv.to_reader(), measures=["P@1"]).equals(ref)
    run = sv.drop_columns(["label"]).rename_columns(["qid", "docid", "score"])
    qrels = pa.table({"qid": ["a", "b"], "docid": ["1", "1"], "label": [1, 1]})
    assert us.evaluate_stream(run, qrels, ["P@1"], batch_size=1).equals(
        uefast.evaluate(run, qrels, ["P@1"]))


def _error(f) -> str:
    with pytest.raises(InputError) as e:
        f()
    return str(e.value)


_ROWS10 = dict(qid=[i // 2 for i in range(10)], docid=[str(i % 2) for i in range(10)],
               label=[1, 0] * 5, s=[.5] * 10)


@pytest.mark.parametrize("col, value, kw", [
    ("s", float("nan"), {}), ("label", None, {}), ("label", -1, {"negative_labels": "error"}),
    ("docid", "0", {}), ("docid", None, {})])
def test_error_rows_are_rows_of_the_input(col, value, kw):
    """A bad value in row 9 is reported at row 9 whatever the batching (streaming said "row 3",
    the row within its chunk, at batch_size=4)."""
    d = {k: list(v) for k, v in _ROWS10.items()}
    d[col][9] = value
    t = pa.table(d)
    ref = _error(lambda: uefast.evaluate(t, measures=["P@1"], **kw))
    assert "row" in ref and "9" in ref
    for bs in (1, 4, 1000):
        assert _error(lambda: us.evaluate_stream(t, measures=["P@1"], batch_size=bs, **kw)) == ref
    # TREC style: run rows, and qrels rows (the qrels is checked whole, as in memory)
    run = t.drop_columns(["label"]).rename_columns(["qid", "docid", "score"])
    qrels = pa.table({"qid": [0, 4, 4, 3], "docid": ["0", "1", "1", "0"], "label": [1, 1, 1, 1]})
    if col != "label":
        ok = qrels.slice(0, 2)
        ref = _error(lambda: uefast.evaluate(run, ok, ["P@1"], **kw))
        for bs in (1, 4, 1000):
            assert _error(lambda: us.evaluate_stream(run, ok, ["P@1"], batch_size=bs, **kw)) == ref
    good = pa.table({k: v for k, v in _ROWS10.items() if k != "label"}).rename_columns(
        ["qid", "docid", "score"])
    ref = _error(lambda: uefast.evaluate(good, qrels, ["P@1"]))
    assert "rows 1 and 2" in ref
    for bs in (1, 4):
        assert _error(lambda: us.evaluate_stream(good, qrels, ["P@1"], batch_size=bs)) == ref


def _info(t: pa.Table) -> dict:
    info = json.loads(t.schema.metadata[b"uefast.info"])
    info.pop("streaming", None)
    return info


def test_unjudged_queries_checked_and_no_judged_query_gives_empty_table():
    """Run rows of queries without qrels are checked as in memory whatever the batching (a
    chunk without a judged query was skipped unchecked: a NaN score passed at batch_size=2); a
    run with no judged query gives the in-memory empty table (a stream raised "no query of the
    run is in the qrels")."""
    run = pa.table({"qid": ["q1", "q1", "zz", "zz"], "docid": ["d1", "d2", "d1", "d2"],
                    "score": [1., 2., float("nan"), 3.]})
    qrels = pa.table({"qid": ["q1"], "docid": ["d1"], "label": [1]})
    ref = _error(lambda: uefast.evaluate(run, qrels, ["P@1"]))
    for bs in (1, 2, 1000):
        assert _error(lambda: us.evaluate_stream(run, qrels, ["P@1"], batch_size=bs)) == ref
    none = pa.table({"qid": ["x", "y"], "docid": ["1", "1"], "score": [1., 2.]})
    ref = uefast.evaluate(none, qrels, ["P@1"])
    assert ref.num_rows == 0
    for bs in (1, 1000):
        got = us.evaluate_stream(none, qrels, ["P@1"], batch_size=bs)
        assert got.equals(ref) and _info(got) == _info(ref)
    got = uefast.evaluate(none.to_reader(), qrels, ["P@1"])
    assert got.equals(ref) and _info(got) == _info(ref)
    agg = us.evaluate_stream(none, qrels, ["P@1"], aggregate=True)
    assert agg.num_rows == 0 and agg.schema.equals(uefast.aggregate(ref).schema)


def test_row_accounting_equals_in_memory():
    """uefast.info counts the (system, query) pairs without run rows over the whole input, as in
    memory (summed over chunks it depended on the batch size: 0, 1 or 3 for 3)."""
    run = pa.table({"system": ["A", "A", "A", "B"], "qid": ["q1", "q1", "q2", "q2"],
                    "docid": ["d1", "d2", "d1", "d1"], "score": [1., 2., 1., 1.]})
    qrels = pa.table({"qid": ["q1", "q2", "q3"], "docid": ["d1", "d1", "d1"], "label": [1, 1, 1]})
    unjudged = pa.table({"system": ["C"], "qid": ["q9"], "docid": ["d1"], "score": [1.]})
    long = pa.table({"qid": ["q1", "q1", "q2", "q2", "q2"], "label": [1, 0, 1, 0, 1],
                     "system": ["A", "A", "A", "B", "B"], "score": [1., 2., 1., 2., 3.],
                     "docid": ["a", "b", "a", "a", "b"]})
    for r, q in ((run, qrels), (pa.concat_tables([run, unjudged]), qrels), (long, None)):
        ref = _info(uefast.evaluate(r, q, ["P@1"]))
        assert ref.get("system_query_pairs_without_run_rows", ref.get("missing_system_queries"))
        for bs in (1, 2, 3, 1000):
            assert _info(us.evaluate_stream(r, q, ["P@1"], batch_size=bs)) == ref


def test_aggregate_order_with_drop():
    """aggregate=True orders (system, measure) as uefast.aggregate does, by first appearance:
    with degenerate="drop" query a's P@2 row is dropped, so nDCG@2 comes first (the stream
    gave measure order)."""
    t = pa.table({"qid": ["a", "a", "b", "b", "b"], "docid": ["1", "2", "1", "2", "3"],
                  "label": [1, 0, 1, 0, 2], "s": [.3, .2, .1, .5, .4]})
    kw = dict(measures=["P@2", "nDCG@2"], degenerate="drop")
    ref = uefast.aggregate(uefast.evaluate(t, **kw))
    assert ref["measure"].to_pylist() == ["nDCG@2", "P@2"]
    for bs in (1, 1000):
        got = us.evaluate_stream(t, batch_size=bs, aggregate=True, **kw)
        assert got.select(["system", "measure", "n_queries"]).equals(
            ref.select(["system", "measure", "n_queries"]))


@pytest.mark.parametrize("qids", [["a", "a", "b", "b"], [1, 1, 2, 2]])
def test_hive_partitioned_dataset(tmp_path, qids):
    """A dataset partitioned by qid (hive ``qid=a/``) streams with its partition column, as it
    is read in memory (the stream said "missing column 'qid'")."""
    import pyarrow.dataset as ds

    t = pa.table({"qid": qids, "docid": ["1", "2", "1", "2"], "label": [1, 0, 0, 1],
                  "s": [.1, .2, .3, .4]})
    pq.write_to_dataset(t, tmp_path / "hive", partition_cols=["qid"])
    path = str(tmp_path / "hive")
    ref = uefast.evaluate(path, measures=["P@1"])
    assert ref.num_rows == 2
    for src in (path, ds.dataset(path, partitioning="hive")):
        for bs in (1, 1000):
            assert us.evaluate_stream(src, measures=["P@1"], batch_size=bs).equals(ref)
    assert uefast.evaluate(ds.dataset(path, partitioning="hive"), measures=["P@1"]).equals(ref)


def test_directory_file_order_as_in_memory(tmp_path, monkeypatch):
    """A nested directory gives its rows in one file order, streamed or in memory (streaming
    listed a directory's own files before its subdirectories': q1 before q2)."""
    (tmp_path / "ds" / "a").mkdir(parents=True)
    one = {"docid": ["1", "2"], "label": [0, 1], "s": [.1, .2]}
    pq.write_table(pa.table({"qid": ["q1", "q1"], **one}), tmp_path / "ds" / "b.parquet")
    pq.write_table(pa.table({"qid": ["q2", "q2"], **one}), tmp_path / "ds" / "a" / "x.parquet")
    path = str(tmp_path / "ds")
    ref = uefast.evaluate(path, measures=["P@1"])
    assert us.evaluate_stream(path, measures=["P@1"]).equals(ref)
    monkeypatch.setenv("UEFAST_STREAMING_THRESHOLD", "0")
    assert us.is_streaming_source(path)
    assert uefast.evaluate(path, measures=["P@1"]).equals(ref)


def test_streamable_sources_with_queries_qrels(tmp_path):
    """queries="qrels" evaluates in memory: a batch iterator, ParquetFile or dataset is read
    whole (they raised "unsupported type list_iterator" / ParquetFile / FileSystemDataset)."""
    import pyarrow.dataset as ds

    run = pa.table({"qid": ["q", "q", "r"], "docid": ["1", "2", "1"], "score": [1., 2., 1.]})
    qrels = pa.table({"qid": ["q", "s"], "docid": ["1", "1"], "label": [1, 1]})
    path = tmp_path / "run.parquet"
    pq.write_table(run, path)
    ref = uefast.evaluate(run, qrels, ["P@1"], queries="qrels")
    assert ref.num_rows == 2
    for src in (iter(run.to_batches(max_chunksize=1)), pq.ParquetFile(path),
                ds.dataset(path), run.to_reader()):
        got = uefast.evaluate(src, qrels, ["P@1"], queries="qrels")
        assert got.equals(ref) and _info(got) == _info(ref)


def test_batches_of_different_schemas():
    """A batch whose schema differs from the first one's is an InputError naming the batch, its
    first row and the column (it was a raw ArrowInvalid, no row)."""
    a = pa.record_batch({"qid": [1, 1], "label": [1, 0], "s": [.1, .2]})
    b = pa.record_batch({"qid": ["2", "2"], "label": [1, 0], "s": [.1, .2]})
    c = pa.record_batch({"qid": [2, 2], "label": [1, 0]})
    with pytest.raises(InputError, match=r"batch 1 of the stream \(first row 2\): column 'qid' "
                                         r"is string, but int64 in batch 0"):
        uefast.evaluate(iter([a, b]), measures=["P@1"])
    with pytest.raises(InputError, match=r"batch 2 of the stream \(first row 4\) has no column 's'"):
        uefast.evaluate(iter([a, a, c]), measures=["P@1"])


def test_key_beyond_int64_is_named_at_its_input_row_when_streamed():
    t = pa.table({"qid": pa.array([1, 1, 2, 2**63 + 1], pa.uint64()), "label": [1, 0, 1, 0],
                  "s": [0.1, 0.2, 0.3, 0.4]})
    for bs in (2, 100):
        with pytest.raises(uefast.InputError, match="column 'qid' has 9223372036854775809 at row 3"):
            us.evaluate_stream(t, measures=["P@1"], batch_size=bs)


def test_stream_matches_memory_on_review_cases():
    """A dictionary listing a value twice (chunk queries were taken per index: a false
    duplicate-judgment error); the measures checked against the whole qrels (a chunk saw only
    its part: a label beyond exp gain's range passed); degenerate='drop' on a run without a
    system column (KeyError 'run')."""
    qa = pa.DictionaryArray.from_arrays(pa.array([0, 2, 1, 1], pa.int32()), pa.array(["a", "b", "a"]))
    run = pa.table({"qid": qa, "docid": ["1", "2", "1", "2"], "score": [0.1, 0.2, 0.3, 0.4]})
    qrels = pa.table({"qid": ["a", "b"], "docid": ["1", "1"], "label": [1, 1]})
    want = uefast.evaluate(run, qrels, ["P@2"])["value"].to_pylist()
    assert us.evaluate_stream(run, qrels, ["P@2"], batch_size=1)["value"].to_pylist() == want
    run2 = pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [1.0, 2.0]})
    big = pa.table({"qid": ["q1", "q9"], "docid": ["d1", "d1"], "label": [1, 1100]})
    with pytest.raises(uefast.InputError, match="the data has label 1100"):
        us.evaluate_stream(run2, big, ["DCG(gain=exp)@5"], batch_size=1)
    run3 = pa.table({"qid": ["a", "a", "b"], "docid": ["1", "2", "1"], "score": [1.0, 2.0, 1.0]})
    qrels3 = pa.table({"qid": ["a", "b"], "docid": ["1", "2"], "label": [1, 0]})
    a = uefast.evaluate(run3.to_reader(), qrels3, ["AP"], degenerate="drop")
    b = uefast.evaluate(run3, qrels3, ["AP"], degenerate="drop")
    assert a.replace_schema_metadata(None).equals(b.replace_schema_metadata(None))
    assert a.schema.metadata[b"uefast.dropped"] == b.schema.metadata[b"uefast.dropped"]
