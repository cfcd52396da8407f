"""uefast.spark on a local[2] session: per-query rows bit-identical to uefast.evaluate for 1, 4,
16 partitions, shuffled and clustered input, integer and string ids; statistics identical for
any partitioning. Skipped with a reason where pyspark or Java is absent. One Spark session per
module (start-up ~20 s); every test is marked slow."""
from __future__ import annotations

import os
import shutil
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import uefast
import uefast.distributed as udist
from uefast.errors import InputError
from uefast.streaming import NotClusteredError, cluster_parquet

from _distributed_helpers import MEASURES, assert_bit_identical, letor_run, trec_run

pytest.importorskip("pyspark", reason="pyspark is not installed (extra `spark`)")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java (no `java` on PATH, JAVA_HOME unset)", allow_module_level=True)

import uefast.spark as us  # noqa: E402

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter

    s = (SparkSession.builder.master("local[2]").appName("uefast-tests")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.sql.execution.arrow.maxRecordsPerBatch", "97")  # queries span batches
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _arrow(sdf) -> pa.Table:
    """``DataFrame.toArrow`` (pyspark >= 4.0), else through pandas (3.5)."""
    if hasattr(sdf, "toArrow"):
        return sdf.toArrow()
    return pa.Table.from_pandas(sdf.toPandas(), preserve_index=False)


def _sdf(spark, table: pa.Table, k: int):
    return spark.createDataFrame(table.to_pandas()).repartition(k)


@pytest.mark.parametrize("string_ids", [False, True])
def test_letor_bit_identical(spark, string_ids):
    t = letor_run(string_ids=string_ids)
    ref = uefast.evaluate(t, None, MEASURES)
    for k in (1, 4, 16):
        got = us.evaluate(_sdf(spark, t, 3), None, MEASURES, npartitions=k, batch_size=50)
        assert_bit_identical(_arrow(got), ref)


@pytest.mark.parametrize("string_ids", [False, True])
def test_trec_bit_identical(spark, string_ids):
    run, qrels = trec_run(string_ids=string_ids)
    ref = uefast.evaluate(run, qrels, MEASURES)
    for k in (1, 4, 16):
        got = us.evaluate(_sdf(spark, run, 2), qrels, MEASURES, npartitions=k)
        assert_bit_identical(_arrow(got), ref)


@pytest.mark.parametrize("string_ids", [False, True])
def test_clustered_parquet_no_shuffle(spark, tmp_path, string_ids):
    """cluster_parquet output: row groups cut at query boundaries are never split across tasks,
    so mapInArrow runs on the read DataFrame directly (many small splits here)."""
    t = letor_run(n_queries=50, string_ids=string_ids)
    pq.write_table(t, tmp_path / "raw.parquet")
    cluster_parquet(tmp_path / "raw.parquet", tmp_path / "c.parquet", row_group_size=60)
    ref = uefast.evaluate(t, None, MEASURES, ties="input")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2048")
    try:
        sdf = spark.read.parquet(str(tmp_path / "c.parquet"))
        assert sdf.rdd.getNumPartitions() >= 4
        got = us.evaluate(sdf, None, MEASURES, clustered=True, ties="input")
        assert_bit_identical(_arrow(got), ref)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_clustered_claim_is_checked(spark):
    t = letor_run()
    with pytest.raises(NotClusteredError, match="occurs in partitions"):
        us.evaluate(_sdf(spark, t, 4), None, MEASURES, clustered=True)


def test_ties_input_needs_order(spark):
    t = letor_run(n_queries=30)
    t = t.append_column("row", pa.array(range(t.num_rows), pa.int64()))
    sdf = _sdf(spark, t, 3)
    with pytest.raises(InputError, match="ties='input' after a shuffle"):
        us.evaluate(sdf, None, MEASURES, ties="input")
    ref = uefast.evaluate(t.drop_columns(["row"]), None, MEASURES, ties="input")
    got = us.evaluate(sdf, None, MEASURES, ties="input", order="row", npartitions=4)
    assert_bit_identical(_arrow(got), ref)


def test_statistics_identical_for_any_partitioning(spark):
    t = letor_run(n_queries=50, systems=("a", "b", "c"))
    per_query = uefast.evaluate(t, None, ["nDCG@10", "AP"])
    agg = udist.aggregate(per_query)
    refs = {m: udist.compare(per_query, m, n_resamples=200, seed=4)
            for m in ("t", "randomization", "bootstrap")}
    out = us.evaluate(_sdf(spark, t, 2), None, ["nDCG@10", "AP"], npartitions=4).cache()
    assert us.aggregate(out).equals(agg)
    assert us.compare(out, "t", clustered=True).equals(udist.compare(per_query, "t"))
    pq_sdf = spark.createDataFrame(per_query.to_pandas())
    for k, m in ((1, "randomization"), (16, "randomization"), (3, "bootstrap")):
        assert us.compare(pq_sdf, m, n_resamples=200, seed=4, npartitions=k).equals(refs[m])
    assert us.aggregate(pq_sdf.repartition(16)).equals(agg)


def test_rank_tests_and_tukey_identical_for_any_partitioning(spark):
    """Sign, Wilcoxon and randomised Tukey HSD: uefast.spark == uefast.distributed for 1/4/16
    partitions."""
    t = letor_run(n_queries=50, systems=("a", "b", "c"))
    per_query = uefast.evaluate(t, None, ["P@5", "AP"])
    refs = {m: udist.compare(per_query, m) for m in ("sign", "wilcoxon")}
    tukey = udist.tukey_hsd(per_query, n_resamples=200, seed=5)
    pq_sdf = spark.createDataFrame(per_query.to_pandas())
    for k in (1, 4, 16):
        for m, ref in refs.items():
            assert us.compare(pq_sdf, m, npartitions=k).equals(ref), (m, k)
        assert us.tukey_hsd(pq_sdf, n_resamples=200, seed=5, npartitions=k).equals(tukey), k


def test_swap_rate_identical_for_any_partitioning(spark):
    from test_distributed_swap import _same

    t = letor_run(n_queries=50, systems=("a", "b", "c"))
    per_query = uefast.evaluate(t, None, ["nDCG@10", "AP"])
    pq_sdf = spark.createDataFrame(per_query.to_pandas())
    for m in ("voorhees-buckley", "bootstrap"):
        ref = udist.swap_rate(per_query, method=m, measure="AP", n_trials=120, seed=3)
        for k in (1, 4, 16):
            got = us.swap_rate(pq_sdf, method=m, measure="AP", n_trials=120, seed=3,
                               npartitions=k)
            assert _same(got, ref), (m, k)


def _same_metadata(got: dict, ref: dict) -> int:
    """``got`` (the Spark aggregate's) is ``ref`` (``uefast.evaluate``'s on the whole input) plus
    ``distributed`` (returned: the number of engine calls); ``uefast.dropped`` in any order."""
    import json

    assert got is not None
    assert got[b"uefast.version"] == ref[b"uefast.version"]
    assert json.loads(got[b"uefast.settings"]) == json.loads(ref[b"uefast.settings"])
    info = json.loads(got[b"uefast.info"])
    parts = info.pop("distributed")["partitions"]
    assert info == json.loads(ref[b"uefast.info"])
    key = lambda d: sorted(map(str, d))  # noqa: E731
    assert key(json.loads(got[b"uefast.dropped"])) == key(json.loads(ref[b"uefast.dropped"]))
    return parts


@pytest.mark.parametrize("k", [1, 4, 16])
def test_aggregate_carries_the_table_metadata(spark, tmp_path, k):
    """uefast.spark.aggregate(uefast.spark.evaluate(...)): uefast.settings (options, measures as
    named, reb_universe, ...), uefast.info (row accounting), uefast.version and uefast.dropped
    equal uefast.evaluate's on the whole input, for 1/4/16 partitions, shuffled and clustered:
    TREC with unjudged queries, missing (system, query) pairs and ERR's global lmax; long LETOR
    with missing pairs and degenerate='drop'; wide LETOR with non-default options. The means are
    those of the per-query rows."""
    import pyarrow.compute as pc

    run, qrels = trec_run()
    run = run.filter(pc.invert(pc.and_(pc.equal(run.column("system"), "C"),
                                       pc.less(run.column("qid"), 9))))
    t = letor_run(n_queries=30, systems=("a", "b"))
    long = pa.concat_tables([
        t.select(["qid", "docid", "label", s]).rename_columns(["qid", "docid", "label", "score"])
        .append_column("system", pa.array([s] * t.num_rows)) for s in ("a", "b")])
    long = long.filter(pc.invert(pc.and_(pc.equal(long.column("system"), "b"),
                                         pc.less(long.column("qid"), 40))))
    cases = [(run, qrels, ["nDCG@10", "ERR", "AP"], {}),
             (long, None, ["nDCG@10", "P@5"], {"degenerate": "drop", "score": "score"}),
             (t, None, ["nDCG@10", "ERR@10"], {"ties": "expected", "reb_universe": "retrieved"})]
    for i, (data, qr, measures, kw) in enumerate(cases):
        per_query = uefast.evaluate(data, qr, measures, **kw)
        ref = per_query.schema.metadata
        # shuffled
        out = us.evaluate(_sdf(spark, data, 2), qr, measures, npartitions=k, batch_size=40,
                          **kw)
        agg = us.aggregate(out)
        assert agg.equals(udist.aggregate(per_query))
        assert agg.equals(us.aggregate(spark.createDataFrame(_arrow(out).to_pandas())))
        assert _same_metadata(agg.schema.metadata, ref) >= k
        # clustered: cluster_parquet output, row groups of ~60 rows
        pq.write_table(data, tmp_path / f"raw{i}.parquet")
        cluster_parquet(tmp_path / f"raw{i}.parquet", tmp_path / f"c{i}.parquet",
                        row_group_size=max(60, data.num_rows // k))
        sdf = spark.read.parquet(str(tmp_path / f"c{i}.parquet"))
        agg_c = us.aggregate(us.evaluate(sdf, qr, measures, clustered=True, **kw))
        assert agg_c.equals(agg)
        _same_metadata(agg_c.schema.metadata, ref)


def test_aggregate_metadata_where_it_cannot_be_carried(spark):
    """A frame derived from evaluate's (a filter, rows collected and re-created) gives the means
    without metadata rather than a partial count."""
    t = letor_run(n_queries=20)
    out = us.evaluate(_sdf(spark, t, 2), None, ["AP"], npartitions=3)
    assert us.aggregate(out).schema.metadata is not None
    assert us.aggregate(out.cache()).schema.metadata is not None  # cache() is the same frame
    assert us.aggregate(out.filter("value >= 0")).schema.metadata is None
    assert us.aggregate(out.filter("value >= 0")).equals(us.aggregate(out))
