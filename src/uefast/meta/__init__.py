"""Meta-evaluation of IR metrics: discriminative power, swap rates, rank correlation, PAD, query
partitions, and the ``uefast reproduce`` report of Santu & Feng's experiment (arXiv 2209.05007).

Assessor agreement on qrels (Cohen's / Fleiss' κ, Krippendorff's α): :func:`agreement`.
Matrices are topics x systems (2-D numpy arrays), or the long table of :func:`uefast.evaluate`
with ``measure=`` and ``column=``. Formulas and oracles: SPEC_math §6.7-§6.14.
"""
from __future__ import annotations

from uefast.meta._matrix import TopicSystemMatrix, as_matrix
from uefast.meta.agreement import AgreementResult, agreement
from uefast.meta.correlation import kendall_tau, ranking_swap_rate, tau_ap
from uefast.meta.pad import pad, pad_table
from uefast.meta.partitions import (
    apply_document_split,
    broad_focused_queries,
    query_summary,
    query_types,
    random_document_splits,
    uninformative_ideal_queries,
)
from uefast.meta.power import (
    DiscriminativePower,
    asl_curves,
    cohen_kappa,
    compare_discriminative_power,
    conflict_counts,
    conflicts,
    discriminative_power,
)
from uefast.meta.swap import SwapResult, swap_rate
from uefast.meta.unanimity import metric_unanimity, metric_unanimity_table

__all__ = [
    "agreement",
    "AgreementResult",
    "TopicSystemMatrix",
    "as_matrix",
    "kendall_tau",
    "tau_ap",
    "ranking_swap_rate",
    "pad",
    "pad_table",
    "DiscriminativePower",
    "discriminative_power",
    "compare_discriminative_power",
    "asl_curves",
    "conflicts",
    "conflict_counts",
    "cohen_kappa",
    "SwapResult",
    "swap_rate",
    "metric_unanimity",
    "metric_unanimity_table",
    "query_summary",
    "uninformative_ideal_queries",
    "query_types",
    "broad_focused_queries",
    "random_document_splits",
    "apply_document_split",
    "reproduce",
]


def __getattr__(name: str):
    # the report generator pulls in the evaluation engine; load it only when asked for
    if name == "reproduce":
        from uefast.meta.report import reproduce

        return reproduce
    raise AttributeError(f"module 'uefast.meta' has no attribute {name!r}")
