"""Dask adapter: ``uefast.evaluate`` over a Dask DataFrame or a partitioned Parquet dataset, and
means / paired tests reduced on the cluster (extra ``dask``: ``pip install "uefast[dask]"``).

* :func:`evaluate` -- a Dask DataFrame of per-query rows (the schema of ``uefast.evaluate``);
  each partition of whole queries goes through one call of the engine;
* :func:`aggregate` -- means per (system, measure) from exact, mergeable sums;
* :func:`compare` -- t / randomisation / bootstrap tests from mergeable sufficient statistics,
  draws keyed by ``(seed, qid, resample)``: identical for any partitioning and equal to
  :func:`uefast.distributed.compare` on the same table;
* :func:`swap_rate` -- :func:`uefast.meta.swap_rate` from mergeable subset sums, identical for
  any partitioning and equal to :func:`uefast.distributed.swap_rate`.

Works with any Dask scheduler (threads, processes, ``distributed``); tasks are pure functions of
their partition, so a task re-run after a lost worker gives the same rows.
"""
from __future__ import annotations

import os
from typing import Any

import pyarrow as pa

from uefast.errors import InputError, MissingDependencyError
from uefast.distributed._adapter import (PartSpec, check_disjoint, check_options, evaluate_part,
                                         part_spec, row_groups_disjoint, unique_qids)
from uefast.distributed._reduce import (aggregate_partial, compare_plan,
                                        finish_aggregate, merge_partials, run_compare)

__all__ = ["evaluate", "aggregate", "compare", "tukey_hsd", "swap_rate"]


def _dd():
    """``dask.dataframe``, or :class:`~uefast.errors.MissingDependencyError` (one line naming
    the ``dask`` extra) where Dask (or its DataFrame's own dependencies) cannot be imported."""
    try:
        import dask.dataframe as dd
    except ImportError:
        raise MissingDependencyError('uefast.dask needs Dask with its DataFrame, which could not '
                                     'be imported: pip install "uefast[dask]"') from None
    return dd


#: Default rows per partition of a Parquet path: consecutive row groups of one file are read by
#: one task up to this many rows (at least one row group). Per-task costs (scheduling, the engine
#: call's set-up, metadata) are then paid once per ~2 M rows instead of once per row group, and
#: one task's memory stays ~0.3 GB on MSLR-shaped data (benchmarks/RESULTS_distributed.md).
PARTITION_ROWS = 1 << 21


def _row_group_items(path: str, partition_rows: int):
    """``(schema, items)``: the Parquet files under ``path`` (``pyarrow.dataset`` order), each
    item ``(file, [row groups])`` consecutive non-empty row groups of one file holding at most
    ``partition_rows`` rows (at least one row group)."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    if not isinstance(partition_rows, int) or isinstance(partition_rows, bool) \
            or partition_rows < 1:
        raise InputError(f"`partition_rows` must be a positive integer, got {partition_rows!r}")
    items: list = []
    schema = None
    for f in ds.dataset(path, format="parquet").files:
        md = pq.ParquetFile(f).metadata
        schema = schema or pq.ParquetFile(f).schema_arrow
        group, rows = [], 0
        for i in range(md.num_row_groups):
            n = md.row_group(i).num_rows
            if not n:
                continue
            if group and rows + n > partition_rows:
                items.append((f, group))
                group, rows = [], 0
            group.append(i)
            rows += n
        if group:
            items.append((f, group))
    if schema is None:
        raise InputError(f"run: no Parquet file under {path!r}")
    if not items:
        raise InputError("run: the input has no rows")
    return schema, items


def _read_arrow(item) -> pa.Table:
    import pyarrow.parquet as pq

    path, groups = item
    return pq.ParquetFile(path, pre_buffer=False).read_row_groups(groups, use_threads=True)


def _read_row_groups(item):
    return _read_arrow(item).to_pandas()


def _read_parquet(schema: pa.Schema, items: list):
    """A Parquet file or dataset directory as a Dask DataFrame, one partition per item of
    :func:`_row_group_items` (``dask.dataframe.from_map`` over ``ParquetFile.read_row_groups``).
    Measured: ~5x less time per task than ``read_parquet(..., split_row_groups=True)`` on 80 row
    groups (dask 2026.8)."""
    return _dd().from_map(_read_row_groups, items, meta=schema.empty_table().to_pandas(),
                       enforce_metadata=False)


def _read_eval(item, spec: PartSpec):
    """Read one partition of a clustered Parquet path and evaluate it in the same task: the run's
    rows stay Arrow (no pandas round trip); only the per-query rows become pandas."""
    return _to_pandas(evaluate_part(_read_arrow(item), spec))


def _to_pandas(res: pa.Table):
    out = res.to_pandas()
    out.attrs = {k.decode(): v.decode() for k, v in (res.schema.metadata or {}).items()}
    return out


def _eval_pandas(pdf, spec: PartSpec):
    """One partition through the engine; the table metadata goes to the pandas ``attrs``
    (strings), where :func:`aggregate` finds it."""
    return _to_pandas(evaluate_part(pa.Table.from_pandas(pdf, preserve_index=False), spec))


def _unique_qids(pdf, qid: str):
    return unique_qids(pa.Array.from_pandas(pdf[qid]) if len(pdf) else pa.array([], pa.int64()))


def evaluate(data: Any, qrels: Any = None, measures=("nDCG@10", "AP"), *,
             clustered: bool = False, order: str | None = None, npartitions: int | None = None,
             partition_rows: int | None = None, **options: Any):
    """Evaluate a run held as a Dask DataFrame (or a Parquet path) partition by partition with
    :func:`uefast.evaluate`.

    Parameters
    ----------
    data
        Dask DataFrame, or a Parquet file/directory path, read in partitions of whole row groups
        (:func:`uefast.streaming.cluster_parquet` cuts row groups at query boundaries). A
        clustered path is read and evaluated in one task per partition (the run's rows never
        become pandas).
    qrels
        TREC style: any table ``uefast.evaluate`` takes; sent whole to every task, each task
        keeping its queries' rows.
    clustered
        ``True``: every query's rows are already in one partition: no shuffle. This is checked
        up front: for a Parquet path from the row groups' qid statistics when their [min, max]
        intervals are disjoint (footers only), else by one pass over the qid column
        (:class:`~uefast.streaming.NotClusteredError` names a qid found in two partitions).
        ``False`` (default): shuffle on qid first (``DataFrame.shuffle(on=qid)``); rows then
        lose their order, so ``ties="input"`` (and ``ties="trec_eval"`` without a docid column)
        needs ``order=``.
    order
        A column to sort each query's rows by (ascending, stable) before evaluating; it is
        dropped before the engine sees the rows.
    npartitions
        Partitions after the shuffle (default: as many as the input).
    partition_rows
        Parquet path: consecutive row groups of one file are read as one partition of at most
        this many rows (at least one row group; default :data:`PARTITION_ROWS`, 2**21).
        Memory per task grows with it.
    **options
        ``uefast.evaluate``'s keywords, passed through (``queries="qrels"`` and
        ``backend="cuda"`` are refused; ERR's default lmax is the global maximum label).

    Returns
    -------
    dask.dataframe.DataFrame
        Per-query rows, columns and types of ``data_schemas/evaluate_output.md`` (qid ``int64``
        or string); the values of each row are bit for bit ``uefast.evaluate``'s on the whole
        input. Row order follows the partitions. Each partition's pandas ``attrs`` hold its
        engine call's table metadata (``uefast.info`` etc., strings), which :func:`aggregate`
        merges into the metadata of the whole evaluation.
    """
    _dd()
    qid = options.get("qid", "qid")
    proven, items = False, None
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        pschema, items = _row_group_items(
            path, PARTITION_ROWS if partition_rows is None else partition_rows)
        data = _read_parquet(pschema, items)
        proven = clustered and row_groups_disjoint(path, qid)
    schema = pa.Schema.from_pandas(data._meta, preserve_index=False)
    check_options(options, shuffled=not clustered, order=order,
                  has_docid=options.get("docid", "docid") in schema.names)
    label = options.get("label", "label")

    def max_label() -> int:
        if label not in schema.names:
            raise InputError(f"run: missing column {label!r}; columns are {schema.names}")
        return int(data[label].max().compute())

    spec = part_spec(measures, options, schema=schema, qrels=qrels, order=order,
                     max_label=max_label, shuffled=not clustered)
    if not clustered:
        data = data.shuffle(on=qid, npartitions=npartitions)
    elif not proven:
        import dask

        parts = [dask.delayed(_unique_qids)(p, qid) for p in data[[qid]].to_delayed()]
        check_disjoint(list(dask.compute(*parts)))
    import dask

    meta = spec.schema.empty_table().to_pandas()
    if items is not None and clustered:  # read + evaluate in one task: no pandas run rows
        return _dd().from_map(_read_eval, items, args=[spec], meta=meta, enforce_metadata=False)
    # one graph key for the spec (it holds the qrels), not a copy inside every task
    # enforce_metadata=False: the parts already have meta's columns and types, and Dask would
    # replace an empty part by `meta`, losing its attrs (the row accounting of a part whose
    # queries are all unjudged)
    return data.map_partitions(_eval_pandas, dask.delayed(spec, pure=True), meta=meta,
                               enforce_metadata=False)


def _reduce_with(parts):
    """``reduce(fn)`` for :func:`run_compare`: ``fn`` on every partition, pairwise merges as
    Dask tasks, the merged partial computed."""
    import dask

    def reduce(fn, merge=merge_partials):
        objs = [dask.delayed(fn)(p) for p in parts]
        if not objs:
            return {}
        while len(objs) > 1:
            objs = [dask.delayed(merge)(objs[i], objs[i + 1]) if i + 1 < len(objs)
                    else objs[i] for i in range(0, len(objs), 2)]
        return objs[0].compute()

    return reduce


def aggregate(per_query) -> pa.Table:
    """Means per (system, measure) of a per-query Dask DataFrame (e.g. :func:`evaluate`'s),
    reduced on the cluster from exact, mergeable sums; equal to
    :func:`uefast.distributed.aggregate` on the collected table (bit for bit, any
    partitioning). Returns a pyarrow Table (``data_schemas/evaluate_output.md``, aggregate)
    whose metadata is that of ``uefast.evaluate`` on the whole input (``uefast.version``,
    ``uefast.settings``, ``uefast.info`` with the row counters summed over the partitions and
    ``distributed: {partitions}``, ``uefast.dropped``) when every partition of ``per_query``
    carries its :func:`evaluate` metadata (pandas ``attrs``); none where a partition lost it
    (an operation that drops ``attrs``, e.g. a concat of different partitions, a shuffle)."""
    _dd()
    stats = _reduce_with(per_query.to_delayed())(aggregate_partial)
    return finish_aggregate(stats)


def compare(per_query, method: str = "randomization", *, clustered: bool = False,
            measure=None, column: str = "value", systems=None, baseline: str | None = None,
            alternative: str = "two-sided", n_resamples: int | None = None,
            seed: int = 0, epsilon: float = 0.0, exact: bool | None = None) -> pa.Table:
    """Paired tests between the systems of a per-query Dask DataFrame, reduced on the cluster;
    the settings and result of :func:`uefast.distributed.compare` (identical p-values for every
    partitioning). The frame is shuffled on qid first unless ``clustered=True`` (every query's
    rows in one partition, as :func:`evaluate` returns them); it is persisted for the two passes
    (means, then resamples)."""
    _dd()
    plan = compare_plan(method, measure=measure, column=column, systems=systems,
                        baseline=baseline, alternative=alternative, n_resamples=n_resamples,
                        seed=seed, epsilon=epsilon, exact=exact)
    if not clustered:
        per_query = per_query.shuffle(on="qid")
    per_query = per_query.persist()
    return run_compare(_reduce_with(per_query.to_delayed()), plan)



def tukey_hsd(per_query, *, clustered: bool = False, measure=None, column: str = "value",
              systems=None, n_resamples: int | None = None, seed: int = 0) -> pa.Table:
    """Carterette's randomised Tukey HSD test of a per-query Dask DataFrame, reduced on the
    cluster from exact per-resample column sums (permutations keyed by ``(seed, qid,
    resample)``): bit for bit :func:`uefast.distributed.tukey_hsd` on the collected table, for
    every partitioning. Shuffled on qid first unless ``clustered=True``; persisted for the two
    passes (the systems of each measure, then the sums)."""
    from uefast.distributed._tukey import run_tukey, tukey_plan

    _dd()
    plan = tukey_plan(measure=measure, column=column, systems=systems, n_resamples=n_resamples,
                      seed=seed)
    if not clustered:
        per_query = per_query.shuffle(on="qid")
    per_query = per_query.persist()
    return run_tukey(_reduce_with(per_query.to_delayed()), plan)


def swap_rate(per_query, *, clustered: bool = False, method: str = "voorhees-buckley",
              subset_size: int | None = None, n_trials: int | None = None,
              bin_width: float = 0.01, n_bins: int = 21, binning: str = "d1",
              ties: str = "strict", alpha: float = 0.05, seed: int = 0,
              measure: str | None = None, column: str = "value", systems=None):
    """The swap rate of :func:`uefast.meta.swap_rate` (same settings, same
    :class:`~uefast.meta.SwapResult`) of a per-query Dask DataFrame, reduced on the cluster from
    exact per-partition subset sums, the subsets drawn by the counter-based generator keyed by
    ``(seed, qid, trial)``: bit for bit :func:`uefast.distributed.swap_rate` on the collected
    table, for every partitioning (:mod:`uefast.distributed._swap`). Shuffled on qid first unless
    ``clustered=True`` (every query's rows in one partition, as :func:`evaluate` returns them);
    persisted for the two passes (topic census, then subset sums)."""
    from uefast.distributed._swap import run_swap, swap_plan

    _dd()
    plan = swap_plan(method=method, subset_size=subset_size, n_trials=n_trials,
                     bin_width=bin_width, n_bins=n_bins, binning=binning, ties=ties, alpha=alpha,
                     seed=seed, measure=measure, column=column, systems=systems)
    if not clustered:
        per_query = per_query.shuffle(on="qid")
    per_query = per_query.persist()
    return run_swap(_reduce_with(per_query.to_delayed()), plan)
