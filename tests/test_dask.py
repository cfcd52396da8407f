"""uefast.dask: per-query rows bit-identical to uefast.evaluate for 1, 4, 16 partitions,
clustered and shuffled input, integer and string ids; statistics identical for any partitioning;
threaded scheduler and a distributed LocalCluster (a worker killed mid-job)."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import json as json_

import pyarrow as pa
import pyarrow.compute as pc_
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import uefast
from uefast.errors import InputError

dd = pytest.importorskip("dask.dataframe", reason="dask is not installed (extra `dask`)")
import dask  # noqa: E402

import uefast.dask as ud  # noqa: E402
import uefast.distributed as udist  # noqa: E402
from uefast.streaming import NotClusteredError, cluster_parquet  # noqa: E402

from _distributed_helpers import MEASURES, assert_bit_identical, letor_run, trec_run  # noqa: E402


@pytest.fixture(autouse=True)
def _threads():
    with dask.config.set(scheduler="threads", num_workers=2):
        yield


def _collect(ddf) -> pa.Table:
    return pa.Table.from_pandas(ddf.compute(), preserve_index=False)


def _clustered(table: pa.Table, k: int):
    """A Dask DataFrame with every query's rows in one of ``k`` partitions (rows of a query keep
    their input order)."""
    import pandas as pd

    pdf = table.to_pandas()
    codes = pd.factorize(pdf["qid"])[0]
    pdf = pdf.assign(_p=codes % k).sort_values("_p", kind="stable")
    parts = [g.drop(columns="_p").reset_index(drop=True) for _, g in pdf.groupby("_p", sort=True)]
    return dd.from_delayed([dask.delayed(p) for p in parts], meta=parts[0].iloc[:0])


@pytest.mark.parametrize("string_ids", [False, True])
@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_letor_bit_identical(k, clustered, string_ids):
    t = letor_run(string_ids=string_ids)
    ref = uefast.evaluate(t, None, MEASURES)
    ddf = _clustered(t, k) if clustered else dd.from_pandas(t.to_pandas(), npartitions=k)
    assert ddf.npartitions == k
    assert_bit_identical(_collect(ud.evaluate(ddf, None, MEASURES, clustered=clustered)), ref)


@pytest.mark.parametrize("string_ids", [False, True])
@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_trec_bit_identical(k, clustered, string_ids):
    run, qrels = trec_run(string_ids=string_ids)
    ref = uefast.evaluate(run, qrels, MEASURES)
    ddf = _clustered(run, k) if clustered else dd.from_pandas(run.to_pandas(), npartitions=k)
    got = ud.evaluate(ddf, qrels, MEASURES, clustered=clustered)
    assert_bit_identical(_collect(got), ref)


@pytest.mark.parametrize("k", [1, 4, 16])
def test_ties_expected(k):
    """ties='expected' sums in row order (the engine's values differ in the last bits between
    row orders of a query): clustered input keeps the order (bit-identical); a shuffled part is
    sorted by (qid, docid) first, so it equals uefast.evaluate on the rows in that order, for
    any partitioning and any re-run."""
    run, qrels = trec_run(seed=4)
    ref = uefast.evaluate(run, qrels, MEASURES, ties="expected")
    got = ud.evaluate(_clustered(run, k), qrels, MEASURES, clustered=True, ties="expected")
    assert_bit_identical(_collect(got), ref)
    by_doc = run.sort_by([("qid", "ascending"), ("docid", "ascending")])
    ref2 = uefast.evaluate(by_doc, qrels, MEASURES, ties="expected")
    got = ud.evaluate(dd.from_pandas(run.to_pandas(), npartitions=k), qrels, MEASURES,
                      ties="expected")
    assert_bit_identical(_collect(got), ref2)


@pytest.mark.parametrize("string_ids", [False, True])
def test_clustered_parquet_path(tmp_path, string_ids):
    """cluster_parquet output read one partition per row group: no shuffle, same values."""
    t = letor_run(n_queries=50, string_ids=string_ids)
    pq.write_table(t, tmp_path / "raw.parquet")
    cluster_parquet(tmp_path / "raw.parquet", tmp_path / "c.parquet", row_group_size=60)
    ref = uefast.evaluate(t, None, MEASURES)
    got = ud.evaluate(tmp_path / "c.parquet", None, MEASURES, clustered=True, partition_rows=1)
    assert got.npartitions > 4  # one row group per partition
    assert_bit_identical(_collect(got), ref)
    # row groups read together (one task reads and evaluates a partition): same values
    n_rg = pq.ParquetFile(tmp_path / "c.parquet").metadata.num_row_groups
    for rows in (150, 700, None):
        got = ud.evaluate(tmp_path / "c.parquet", None, MEASURES, clustered=True,
                          partition_rows=rows)
        assert (got.npartitions < n_rg) if rows else got.npartitions == 1
        assert_bit_identical(_collect(got), ref)
    # the same path, not declared clustered: shuffled, same values
    assert_bit_identical(_collect(ud.evaluate(str(tmp_path / "c.parquet"), None, MEASURES)), ref)


def test_clustered_claim_is_checked():
    t = letor_run()
    ddf = dd.from_pandas(t.to_pandas(), npartitions=4)  # queries spread over partitions
    with pytest.raises(NotClusteredError, match="occurs in partitions"):
        ud.evaluate(ddf, None, MEASURES, clustered=True)


def test_ties_input_needs_an_order_column():
    t = letor_run(n_queries=30)
    t = t.append_column("row", pa.array(np.arange(t.num_rows)))
    ddf = dd.from_pandas(t.to_pandas(), npartitions=4)
    with pytest.raises(InputError, match="ties='input' after a shuffle.*order="):
        ud.evaluate(ddf, None, MEASURES, ties="input")
    no_doc = ddf.drop(columns=["docid"])
    with pytest.raises(InputError, match="without a docid column"):
        ud.evaluate(no_doc, None, MEASURES)
    # with order=: the input order of the original table, bit for bit
    ref = uefast.evaluate(t.drop_columns(["row"]), None, MEASURES, ties="input")
    got = ud.evaluate(ddf, None, MEASURES, ties="input", order="row")
    assert_bit_identical(_collect(got), ref)
    ref2 = uefast.evaluate(t.drop_columns(["row", "docid"]), None, MEASURES)
    assert_bit_identical(_collect(ud.evaluate(no_doc, None, MEASURES, order="row")), ref2)
    # clustered input keeps its order: ties="input" allowed without order=
    assert_bit_identical(_collect(ud.evaluate(_clustered(t.drop_columns(["row"]), 3), None,
                                              MEASURES, ties="input", clustered=True)), ref)


def test_refused_options():
    ddf = dd.from_pandas(letor_run().to_pandas(), npartitions=2)
    with pytest.raises(InputError, match="queries='intersect' only"):
        ud.evaluate(ddf, None, MEASURES, queries="qrels")
    with pytest.raises(InputError, match="missing order column"):
        ud.evaluate(ddf, None, MEASURES, order="nope")


def test_err_lmax_is_global():
    """ERR's default lmax is the largest label of the whole data, not of a partition."""
    t = letor_run(n_queries=40)
    lab = t.column("label").to_numpy().copy()
    q = t.column("qid").to_numpy()
    lab[q == q.max()] = 9  # one query holds the largest label
    t = t.set_column(2, "label", pa.array(lab))
    ref = uefast.evaluate(t, None, ["ERR@10", "ERR"])
    assert_bit_identical(_collect(ud.evaluate(dd.from_pandas(t.to_pandas(), npartitions=8),
                                              None, ["ERR@10", "ERR"])), ref)


def test_statistics_identical_for_any_partitioning():
    t = letor_run(n_queries=50, systems=("a", "b", "c"))
    per_query = uefast.evaluate(t, None, ["nDCG@10", "AP"])
    refs = {m: udist.compare(per_query, m, n_resamples=200, seed=4)
            for m in ("t", "randomization", "bootstrap")}
    agg = udist.aggregate(per_query)
    for k in (1, 4, 16):
        pq_ddf = ud.evaluate(dd.from_pandas(t.to_pandas(), npartitions=k), None,
                             ["nDCG@10", "AP"])
        assert ud.aggregate(pq_ddf).equals(agg)
        for m, ref in refs.items():
            assert ud.compare(pq_ddf, m, n_resamples=200, seed=4).equals(ref), (m, k)
    # a per-query frame already split by query: no shuffle
    pq_ddf = ud.evaluate(dd.from_pandas(t.to_pandas(), npartitions=3), None, ["nDCG@10", "AP"])
    assert ud.compare(pq_ddf, "bootstrap", clustered=True, n_resamples=200,
                      seed=4).equals(refs["bootstrap"])


def _same_metadata(got: dict, ref: dict, partitions: int) -> None:
    """``got`` (an adapter aggregate's) is ``ref`` (``uefast.evaluate``'s on the whole input)
    plus ``distributed``; ``uefast.dropped`` in any order."""
    import json

    assert got[b"uefast.version"] == ref[b"uefast.version"]
    assert json.loads(got[b"uefast.settings"]) == json.loads(ref[b"uefast.settings"])
    info = json.loads(got[b"uefast.info"])
    assert info.pop("distributed") == {"partitions": partitions}
    assert info == json.loads(ref[b"uefast.info"])
    key = lambda d: sorted(map(str, d))  # noqa: E731
    assert key(json.loads(got[b"uefast.dropped"])) == key(json.loads(ref[b"uefast.dropped"]))


@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_aggregate_carries_the_table_metadata(k, clustered):
    """uefast.info (row accounting), uefast.settings, uefast.version and uefast.dropped of the
    aggregate equal uefast.evaluate's on the whole input: TREC with unjudged queries, missing
    (system, query) pairs and ERR's global lmax; long LETOR with missing pairs and
    degenerate='drop'; wide LETOR."""
    run, qrels = trec_run()
    keep = pc_.invert(pc_.and_(pc_.equal(run.column("system"), "C"),
                               pc_.less(run.column("qid"), 9)))
    run = run.filter(keep)  # system C misses queries 0..8: pairs without run rows
    t = letor_run(n_queries=30, systems=("a", "b"))
    long = pa.concat_tables([
        t.select(["qid", "docid", "label", s]).rename_columns(["qid", "docid", "label", "score"])
        .append_column("system", pa.array([s] * t.num_rows)) for s in ("a", "b")])
    long = long.filter(pc_.invert(pc_.and_(pc_.equal(long.column("system"), "b"),
                                           pc_.less(long.column("qid"), 40))))
    cases = [(run, qrels, ["nDCG@10", "ERR", "AP"], {}),
             (long, None, ["nDCG@10", "P@5"], {"degenerate": "drop", "score": "score"}),
             (t, None, ["nDCG@10", "ERR@10"], {})]
    for data, qr, measures, kw in cases:
        ref = uefast.evaluate(data, qr, measures, **kw).schema.metadata
        ddf = _clustered(data, k) if clustered else dd.from_pandas(data.to_pandas(),
                                                                   npartitions=k)
        out = ud.evaluate(ddf, qr, measures, clustered=clustered, **kw)
        agg = ud.aggregate(out)
        # evaluated partitions (a part of unjudged queries has no output row but counts)
        n_parts = sum("uefast.info" in p.attrs for p in dask.compute(*out.to_delayed()))
        assert n_parts >= min(k, 2)
        _same_metadata(agg.schema.metadata, ref, n_parts)
        if "degenerate" in kw:  # rows were dropped: the check compares non-empty lists
            assert json_.loads(ref[b"uefast.dropped"])


def test_rank_tests_and_tukey_identical_for_any_partitioning():
    """Sign, Wilcoxon (exactly uefast.stats.paired_test's, tests/test_distributed_ranktests.py)
    and the randomised Tukey HSD: uefast.dask == uefast.distributed for 1/4/16 partitions,
    shuffled and clustered."""
    t = letor_run(n_queries=50, systems=("a", "b", "c"))
    per_query = uefast.evaluate(t, None, ["P@5", "AP"])
    refs = {m: udist.compare(per_query, m, **kw) for m, kw in
            (("sign", {"epsilon": 0.1}), ("wilcoxon", {}))}
    tukey = udist.tukey_hsd(per_query, n_resamples=200, seed=5)
    for k in (1, 4, 16):
        pq_ddf = ud.evaluate(dd.from_pandas(t.to_pandas(), npartitions=k), None, ["P@5", "AP"])
        assert ud.compare(pq_ddf, "sign", epsilon=0.1).equals(refs["sign"]), k
        assert ud.compare(pq_ddf, "wilcoxon", clustered=True).equals(refs["wilcoxon"]), k
        assert ud.tukey_hsd(pq_ddf, clustered=True, n_resamples=200, seed=5).equals(tukey), k
        split = dd.from_pandas(per_query.to_pandas(), npartitions=k)  # queries split: shuffle
        assert ud.tukey_hsd(split, n_resamples=200, seed=5).equals(tukey), k
        assert ud.compare(split, "wilcoxon").equals(refs["wilcoxon"]), k


def test_aggregate_metadata_where_it_cannot_be_carried():
    """An in-memory table keeps its own metadata (as uefast.aggregate); a Dask frame whose
    partitions lost their attrs gives no metadata rather than a partial count."""
    t = letor_run(n_queries=20)
    per_query = uefast.evaluate(t, None, ["AP"])
    assert udist.aggregate(per_query).schema.metadata == per_query.schema.metadata
    assert udist.aggregate(per_query.replace_schema_metadata(None)).schema.metadata is None
    plain = dd.from_pandas(per_query.to_pandas(), npartitions=3)  # no attrs
    assert ud.aggregate(plain).schema.metadata is None


def test_swap_rate_identical_for_any_partitioning():
    """uefast.dask.swap_rate == uefast.distributed.swap_rate for 1/4/16 partitions (shuffled and
    clustered), both methods."""
    from test_distributed_swap import _same

    t = letor_run(n_queries=50, systems=("a", "b", "c"))
    per_query = uefast.evaluate(t, None, ["nDCG@10", "AP"])
    kw = dict(measure="AP", n_trials=120, seed=3)
    refs = {m: udist.swap_rate(per_query, method=m, **kw)
            for m in ("voorhees-buckley", "bootstrap")}
    for k in (1, 4, 16):
        pq_ddf = dd.from_pandas(per_query.to_pandas(), npartitions=k)  # queries split: shuffled
        for m, ref in refs.items():
            assert _same(ud.swap_rate(pq_ddf, method=m, **kw), ref), (m, k)
        out = ud.evaluate(_clustered(t, k), None, ["nDCG@10", "AP"], clustered=True)
        assert _same(ud.swap_rate(out, clustered=True, method="bootstrap", **kw),
                     refs["bootstrap"]), k


@pytest.mark.slow
def test_local_cluster_and_a_killed_worker():
    """distributed.LocalCluster (2 worker processes): identical rows; a worker process killed
    (SIGKILL) while tasks run is restarted by its nanny and its tasks re-run: identical again."""
    distributed = pytest.importorskip("distributed")
    t = letor_run(n_queries=120, seed=3)
    ref = uefast.evaluate(t, None, MEASURES)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        ddf = dd.from_pandas(t.to_pandas(), npartitions=16)
        assert_bit_identical(pa.Table.from_pandas(
            client.compute(ud.evaluate(ddf, None, MEASURES)).result(), preserve_index=False), ref)

        def slow(pdf):  # keeps tasks running long enough to kill a worker among them
            time.sleep(0.4)
            return pdf

        slowed = ddf.map_partitions(slow, meta=ddf._meta)
        fut = client.compute(ud.evaluate(slowed, None, MEASURES))
        time.sleep(1.0)
        pids = client.run(os.getpid)
        victim = sorted(pids)[0]
        os.kill(pids[victim], signal.SIGKILL)
        got = fut.result(timeout=300)
        assert pids[victim] not in client.run(os.getpid).values()  # the killed one is gone
        assert_bit_identical(pa.Table.from_pandas(got, preserve_index=False), ref)
        per_query = uefast.evaluate(t, None, ["AP"])
        got_p = ud.compare(ud.evaluate(ddf, None, ["AP"]), "randomization", n_resamples=100)
        assert got_p.equals(udist.compare(per_query, "randomization", n_resamples=100))
        # the metadata travels between worker processes (pickled pandas attrs), and so does
        # the swap rate's census / subset sums
        agg = ud.aggregate(ud.evaluate(ddf, None, ["AP"]))
        ref_md = per_query.schema.metadata
        info = json_.loads(agg.schema.metadata[b"uefast.info"])
        assert info.pop("distributed")["partitions"] >= 2
        assert info == json_.loads(ref_md[b"uefast.info"])
        from test_distributed_swap import _same

        assert _same(ud.swap_rate(ud.evaluate(ddf, None, ["AP"]), n_trials=30, seed=2),
                     udist.swap_rate(per_query, n_trials=30, seed=2))


def test_parquet_partitions_of_whole_row_groups(tmp_path):
    """partition_rows groups consecutive row groups of one file (never across files, at least
    one row group each, at most partition_rows rows otherwise); a bad value is refused."""
    from uefast.dask import _row_group_items

    t = letor_run(n_queries=40).sort_by([("qid", "ascending")])
    half = t.num_rows // 2
    pq.write_table(t.slice(0, half), tmp_path / "a.parquet", row_group_size=100)
    pq.write_table(t.slice(half), tmp_path / "b.parquet", row_group_size=100)
    sizes = {f: [pq.ParquetFile(f).metadata.row_group(i).num_rows
                 for i in range(pq.ParquetFile(f).metadata.num_row_groups)]
             for f in (str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"))}
    for limit in (1, 99, 100, 250, 10**9):
        _, items = _row_group_items(str(tmp_path), limit)
        seen = {f: [] for f in sizes}
        for f, groups in items:
            assert groups == list(range(groups[0], groups[0] + len(groups)))  # consecutive
            rows = sum(sizes[f][g] for g in groups)
            assert len(groups) == 1 or rows <= limit
            seen[f] += groups
        assert all(seen[f] == list(range(len(sizes[f]))) for f in sizes)  # each once, in order
        if limit == 10**9:
            assert len(items) == 2  # one per file
    for bad in (0, -5, 1.5, True):
        with pytest.raises(InputError, match="partition_rows"):
            ud.evaluate(tmp_path, None, MEASURES, clustered=True, partition_rows=bad)


@pytest.mark.parametrize("rows", [1, 300, None])
def test_clustered_trec_path_read_and_evaluated_in_one_task(tmp_path, rows):
    """A clustered TREC Parquet path (qrels sent to every task, unjudged queries, ERR's global
    lmax): per-query rows and the aggregate's metadata are uefast.evaluate's."""
    run, qrels = trec_run()
    pq.write_table(run, tmp_path / "raw.parquet")
    cluster_parquet(tmp_path / "raw.parquet", tmp_path / "c.parquet", row_group_size=100)
    measures = ["nDCG@10", "ERR", "AP"]
    ref = uefast.evaluate(run, qrels, measures)
    got = ud.evaluate(tmp_path / "c.parquet", qrels, measures, clustered=True,
                      partition_rows=rows)
    assert_bit_identical(_collect(got), ref)
    n_parts = sum("uefast.info" in p.attrs for p in dask.compute(*got.to_delayed()))
    _same_metadata(ud.aggregate(got).schema.metadata, ref.schema.metadata, n_parts)


def test_clustered_path_checked_from_statistics(tmp_path):
    """Row groups with disjoint qid [min, max] statistics prove the clustering from the footers;
    overlapping intervals fall back to the column pass, which finds a qid in two files."""
    from uefast.distributed._adapter import row_groups_disjoint

    t = letor_run(n_queries=40).sort_by([("qid", "ascending")])
    q = t.column("qid").to_numpy()
    lo, hi = t.filter(pa.array(q < 150)), t.filter(pa.array(q >= 150))
    pq.write_table(lo, tmp_path / "a.parquet")
    pq.write_table(hi, tmp_path / "b.parquet")
    assert row_groups_disjoint(str(tmp_path), "qid")
    ref = uefast.evaluate(t, None, MEASURES)
    assert_bit_identical(_collect(ud.evaluate(tmp_path, None, MEASURES, clustered=True)), ref)
    # interleaved ranges, still disjoint sets of qids: the column pass accepts them
    odd = pa.array(q % 2 == 1)
    d2 = tmp_path / "interleaved"
    d2.mkdir()
    pq.write_table(t.filter(odd), d2 / "a.parquet")
    pq.write_table(t.filter(pc_invert(odd)), d2 / "b.parquet")
    assert not row_groups_disjoint(str(d2), "qid")
    assert_bit_identical(_collect(ud.evaluate(d2, None, MEASURES, clustered=True)), ref)
    # a query split over two files
    d3 = tmp_path / "split"
    d3.mkdir()
    pq.write_table(t.slice(0, t.num_rows // 2 + 1), d3 / "a.parquet")
    pq.write_table(t.slice(t.num_rows // 2 + 1), d3 / "b.parquet")
    with pytest.raises(NotClusteredError, match="occurs in partitions"):
        ud.evaluate(d3, None, MEASURES, clustered=True)


def pc_invert(mask):
    import pyarrow.compute as pc

    return pc.invert(mask)


def test_clustered_input_is_not_shuffled(tmp_path):
    """clustered=True (proven from statistics or checked) builds no shuffle into the graph."""
    from uefast.streaming import ClusteredWriter

    t = letor_run(n_queries=30).sort_by([("qid", "ascending")])
    with ClusteredWriter(tmp_path / "a.parquet", t.schema, row_group_size=100) as w:
        w.write(t)
    for data in (tmp_path / "a.parquet", _clustered(t, 3)):
        g = ud.evaluate(data, None, MEASURES, clustered=True)
        names = " ".join(str(k) for k in dict(g.__dask_graph__()))
        assert "shuffle" not in names.lower(), names[:300]
    g = ud.evaluate(tmp_path / "a.parquet", None, MEASURES)
    assert "shuffle" in " ".join(str(k) for k in dict(g.__dask_graph__())).lower()


@st.composite
def _letor_tables(draw):
    n_q = draw(st.integers(1, 8))
    sizes = draw(st.lists(st.integers(1, 12), min_size=n_q, max_size=n_q))
    string_ids = draw(st.booleans())
    rows = {"qid": [], "docid": [], "label": [], "s1": [], "s2": []}
    for q, size in enumerate(sizes):
        docs = draw(st.permutations(range(size)))
        for d in docs:
            rows["qid"].append(f"q{q * 3}" if string_ids else q * 3)
            rows["docid"].append(f"d{d}" if string_ids else d)
            rows["label"].append(draw(st.integers(0, 3)))
            rows["s1"].append(draw(st.sampled_from([0.0, 0.5, 1.0, 2.5])))
            rows["s2"].append(draw(st.floats(-5, 5, allow_nan=False)))
    t = pa.table(rows)
    order = draw(st.permutations(range(t.num_rows)))
    return t.take(pa.array(order, pa.int64()))


@settings(max_examples=25, deadline=None)
@given(_letor_tables(), st.integers(1, 6), st.booleans())
def test_property_any_table_any_partitioning(t, k, clustered):
    """Hypothesis: random tables (ties, graded labels, int/string ids, unclustered rows), any
    partition count, shuffled or clustered: bit-identical to uefast.evaluate."""
    ms = ["nDCG@5", "AP", "RR", "ERR"]
    ref = uefast.evaluate(t, None, ms)
    ddf = _clustered(t, k) if clustered else dd.from_pandas(t.to_pandas(), npartitions=k)
    assert_bit_identical(_collect(ud.evaluate(ddf, None, ms, clustered=clustered)), ref)
