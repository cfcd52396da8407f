"""Spark adapter: ``uefast.evaluate`` over a Spark DataFrame with ``mapInArrow`` into the
streaming carry-over reader, and means / paired tests reduced on the cluster (extra ``spark``:
``pip install "uefast[spark]"``).

* :func:`evaluate` -- ``repartition(n, qid)`` + ``sortWithinPartitions(qid)`` +
  ``mapInArrow``: each task's record batches go through
  :func:`uefast.streaming.iter_query_chunks` (whole queries, bounded memory, clustering checked)
  and each chunk through one call of the engine; no per-group UDF (``applyInPandas`` /
  ``applyInArrow`` are called once per query and measured ~3x slower);
* :func:`aggregate`, :func:`compare` -- as :mod:`uefast.dask`: per-partition mergeable
  statistics, merged with ``RDD.treeReduce``, identical for any partitioning and equal to
  :func:`uefast.distributed.aggregate` / :func:`uefast.distributed.compare`;
* :func:`swap_rate` -- :func:`uefast.meta.swap_rate` from mergeable subset sums (as
  :func:`uefast.distributed.swap_rate`, bit for bit, any partitioning).
"""
from __future__ import annotations

import pickle
from typing import Any

import pyarrow as pa

from uefast.distributed._adapter import (PartSpec, check_options, evaluate_part, part_spec)
from uefast.distributed._reduce import (aggregate_partial, compare_plan, finish_aggregate,
                                        merge_partials, run_compare)
from uefast.errors import InputError, MissingDependencyError

__all__ = ["evaluate", "aggregate", "compare", "tukey_hsd", "swap_rate"]


def _sql():
    """``pyspark.sql``, or :class:`~uefast.errors.MissingDependencyError` (one line naming the
    ``spark`` extra) where pyspark cannot be imported."""
    try:
        import pyspark.sql as sql
    except ImportError:
        raise MissingDependencyError('uefast.spark needs pyspark, which could not be imported: '
                                     'pip install "uefast[spark]"') from None
    return sql


def _arrow_schema(sdf) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(sdf.schema)


def _evaluate_batches(batches, spec: PartSpec, batch_size: int):
    """The mapInArrow function: whole queries from the carry-over reader, one engine call each
    chunk, record batches out."""
    from uefast.streaming import iter_query_chunks

    for chunk in iter_query_chunks(batches, spec.qid, batch_size):
        yield from evaluate_part(chunk, spec).to_batches()


def evaluate(sdf, qrels: Any = None, measures=("nDCG@10", "AP"), *, clustered: bool = False,
             order: str | None = None, npartitions: int | None = None,
             batch_size: int = 1 << 18, **options: Any):
    """Evaluate a run held as a Spark DataFrame; returns a Spark DataFrame of per-query rows
    (``data_schemas/evaluate_output.md``; qid ``bigint`` or ``string``), each row's values bit
    for bit those of :func:`uefast.evaluate` on the whole input.

    ``clustered=False`` (default): ``repartition(npartitions or the current count, qid)`` then
    ``sortWithinPartitions(qid[, order])``; ``ties="input"`` (and ``ties="trec_eval"`` without a
    docid column) needs ``order=`` (a column sorting each query's rows). ``clustered=True``: the
    DataFrame's partitions already hold whole queries with each query's rows contiguous (e.g.
    ``spark.read.parquet`` of :func:`uefast.streaming.cluster_parquet` output, whose row groups
    are cut at query boundaries and are never split across tasks): no shuffle; a qid in two
    partitions is found up front (one distinct pass over (partition, qid)) and a query whose
    rows are not contiguous within its task by the reader
    (:class:`~uefast.streaming.NotClusteredError` either way). ``batch_size``: rows per engine
    call (whole queries; the carry-over reader's chunk size). ``**options``: the keywords of
    :func:`uefast.evaluate` (``queries="qrels"`` and ``backend="cuda"`` refused). ``qrels`` is
    shipped whole with the task closure.
    """
    _sql()
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = _arrow_schema(sdf)
    qid = options.get("qid", "qid")
    check_options(options, shuffled=not clustered, order=order,
                  has_docid=options.get("docid", "docid") in schema.names)
    label = options.get("label", "label")

    def max_label() -> int:
        if label not in schema.names:
            raise InputError(f"run: missing column {label!r}; columns are {schema.names}")
        return int(sdf.agg(F.max(label)).collect()[0][0])

    spec = part_spec(measures, options, schema=schema, qrels=qrels, order=order,
                     max_label=max_label, shuffled=not clustered)
    if clustered:
        dup = (sdf.select(F.spark_partition_id().alias("_p"), F.col(qid)).distinct()
               .groupBy(qid).agg(F.min("_p").alias("a"), F.max("_p").alias("b"),
                                 F.count("*").alias("n"))
               .filter("n > 1").limit(1).collect())
        if dup:
            from uefast.streaming import NotClusteredError

            r = dup[0]
            raise NotClusteredError(
                f"clustered=True, but qid {r[0]!r} occurs in partitions {r['a']} and {r['b']}: a "
                "query's rows must all be in one partition; pass clustered=False (repartition on "
                "qid), or read uefast.streaming.cluster_parquet output")
    else:
        n = npartitions or sdf.rdd.getNumPartitions()
        keys = [qid] + ([order] if order is not None else [])
        sdf = sdf.repartition(n, qid).sortWithinPartitions(*keys)
    out_schema = from_arrow_schema(spec.schema)
    bs = int(batch_size)
    out = sdf.mapInArrow(lambda it: _evaluate_batches(it, spec, bs), out_schema)
    # for aggregate(): the plan's input and settings (Spark rows keep no Arrow metadata)
    setattr(out, _SOURCE, (sdf, spec, bs))
    return out


#: The attribute of :func:`evaluate`'s DataFrame naming its input, :class:`PartSpec` and batch
#: size; a DataFrame derived from it (``filter``, ``select``, ...) is a new object without it.
_SOURCE = "_uefast_evaluated"


def _aggregate_batches(batches, spec: PartSpec, batch_size: int):
    """:func:`aggregate`'s task over :func:`evaluate`'s input: each chunk of whole queries is
    evaluated (:func:`evaluate_part`: the engine's values *and* metadata) and reduced to its
    partial, merged over the task."""
    from uefast.streaming import iter_query_chunks

    acc: dict = {}
    for chunk in iter_query_chunks(batches, spec.qid, batch_size):
        acc = merge_partials(acc, aggregate_partial(evaluate_part(chunk, spec)))
    return acc


def _reduce_with(sdf, whole_part: bool):
    """``reduce(fn)`` for :func:`run_compare`: ``fn`` on each partition (its batches as one
    table when ``whole_part``, else batch by batch merged; ``stream(batches)`` instead, when
    given, makes the task's partial), partials pickled into one binary row per task and merged
    with ``treeReduce`` on the executors."""
    def reduce(fn, merge=merge_partials, stream=None):
        def task(batches):
            acc: dict = {}
            if stream is not None:
                acc = stream(batches)
            elif whole_part:
                bl = list(batches)
                if bl:
                    acc = fn(pa.Table.from_batches(bl))
            else:
                for b in batches:
                    acc = merge(acc, fn(pa.Table.from_batches([b])))
            yield pa.RecordBatch.from_pydict({"blob": [pickle.dumps(acc)]},
                                             schema=pa.schema([("blob", pa.binary())]))

        blobs = sdf.mapInArrow(task, "blob binary").rdd.map(lambda r: pickle.loads(r[0]))
        if blobs.getNumPartitions() == 0:
            return {}
        return blobs.treeReduce(merge)  # every task yields one blob: never empty

    return reduce


def aggregate(per_query) -> pa.Table:
    """Means per (system, measure) of a per-query Spark DataFrame, from exact mergeable sums;
    equal to :func:`uefast.distributed.aggregate` on the collected rows (any partitioning).

    Metadata: when ``per_query`` is :func:`evaluate`'s DataFrame itself (or ``.cache()`` of it,
    the same object), the table carries the metadata of :func:`uefast.evaluate` on the whole
    input (``uefast.version``, ``uefast.settings``, ``uefast.info`` with the row counters summed
    over the engine calls and ``distributed: {partitions}`` = the number of engine calls,
    ``uefast.dropped``), as :func:`uefast.dask.aggregate`'s does. Spark rows keep no Arrow
    metadata, so the reduction then runs over :func:`evaluate`'s *input*: each task evaluates its
    chunks and reduces each result with its engine metadata in one pass (as
    ``uefast.streaming.evaluate_stream(..., aggregate=True)``); the per-query values are those
    of ``per_query``'s rows, bit for bit. A task's partial is its result row, so a retried task
    counts once (an accumulator would count it twice). Any other frame (``filter``, ``select``,
    a union, rows from elsewhere): the means, with no metadata.
    """
    _sql()
    src = getattr(per_query, _SOURCE, None)
    if src is None:
        return finish_aggregate(_reduce_with(per_query, False)(aggregate_partial))
    sdf, spec, bs = src
    return finish_aggregate(_reduce_with(sdf, False)(
        aggregate_partial, stream=lambda it: _aggregate_batches(it, spec, bs)))


def compare(per_query, method: str = "randomization", *, clustered: bool = False,
            measure=None, column: str = "value", systems=None, baseline: str | None = None,
            alternative: str = "two-sided", n_resamples: int | None = None,
            seed: int = 0, npartitions: int | None = None, epsilon: float = 0.0,
            exact: bool | None = None) -> pa.Table:
    """Paired tests between the systems of a per-query Spark DataFrame (settings and result of
    :func:`uefast.distributed.compare`, identical p-values for any partitioning). Repartitioned
    on qid first (into ``npartitions``, default the current count) unless ``clustered=True``
    (every query's rows in one partition, as :func:`evaluate` returns them); cached for the two
    passes (means, then resamples)."""
    _sql()
    plan = compare_plan(method, measure=measure, column=column, systems=systems,
                        baseline=baseline, alternative=alternative, n_resamples=n_resamples,
                        seed=seed, epsilon=epsilon, exact=exact)
    if not clustered:
        n = npartitions or per_query.rdd.getNumPartitions()
        per_query = per_query.repartition(n, "qid")
    per_query = per_query.cache()
    try:
        return run_compare(_reduce_with(per_query, True), plan)
    finally:
        per_query.unpersist()


def tukey_hsd(per_query, *, clustered: bool = False, npartitions: int | None = None,
              measure=None, column: str = "value", systems=None,
              n_resamples: int | None = None, seed: int = 0) -> pa.Table:
    """Carterette's randomised Tukey HSD test of a per-query Spark DataFrame from exact
    per-resample column sums merged with ``treeReduce`` (permutations keyed by ``(seed, qid,
    resample)``): bit for bit :func:`uefast.distributed.tukey_hsd` on the collected rows, for
    every partitioning. Repartitioned on qid first (into ``npartitions``, default the current
    count) unless ``clustered=True``; cached for the two passes."""
    from uefast.distributed._tukey import run_tukey, tukey_plan

    _sql()
    plan = tukey_plan(measure=measure, column=column, systems=systems, n_resamples=n_resamples,
                      seed=seed)
    if not clustered:
        n = npartitions or per_query.rdd.getNumPartitions()
        per_query = per_query.repartition(n, "qid")
    per_query = per_query.cache()
    try:
        return run_tukey(_reduce_with(per_query, True), plan)
    finally:
        per_query.unpersist()


def swap_rate(per_query, *, clustered: bool = False, npartitions: int | None = None,
              method: str = "voorhees-buckley", subset_size: int | None = None,
              n_trials: int | None = None, bin_width: float = 0.01, n_bins: int = 21,
              binning: str = "d1", ties: str = "strict", alpha: float = 0.05, seed: int = 0,
              measure: str | None = None, column: str = "value", systems=None):
    """The swap rate of :func:`uefast.meta.swap_rate` (same settings and result type) of a
    per-query Spark DataFrame, from exact per-partition subset sums merged with ``treeReduce``;
    bit for bit :func:`uefast.distributed.swap_rate` on the collected rows, for every
    partitioning. Repartitioned on qid first (into ``npartitions``, default the current count)
    unless ``clustered=True``; cached for the two passes."""
    from uefast.distributed._swap import run_swap, swap_plan

    _sql()
    plan = swap_plan(method=method, subset_size=subset_size, n_trials=n_trials,
                     bin_width=bin_width, n_bins=n_bins, binning=binning, ties=ties, alpha=alpha,
                     seed=seed, measure=measure, column=column, systems=systems)
    if not clustered:
        n = npartitions or per_query.rdd.getNumPartitions()
        per_query = per_query.repartition(n, "qid")
    per_query = per_query.cache()
    try:
        return run_swap(_reduce_with(per_query, True), plan)
    finally:
        per_query.unpersist()
