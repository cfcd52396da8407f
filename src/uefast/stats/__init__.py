"""Significance tests for comparing IR systems over topics (SPEC_math §6).

* :func:`paired_test`: two systems; t, Wilcoxon, sign, Sakai's bootstrap, randomisation.
* :func:`all_pairs`: every pair (or every system vs a baseline), one Arrow row per pair.
* :func:`tukey_hsd`: Carterette's randomised Tukey HSD (family-wise).
* :func:`topic_system_matrix`: topics x systems matrix from the long per-query table.
* :func:`adjust_pvalues`: Holm, Bonferroni, Benjamini-Hochberg.
* :func:`difference_required`: Sakai's estimated difference required (bootstrap).

Resampling is driven by a counter-based generator: the p-values for a seed do not depend on the
number of threads or the batch size.
"""
from __future__ import annotations

from uefast.stats.matrix import TopicSystemMatrix, topic_system_matrix
from uefast.stats.paired import paired_test
from uefast.stats.pairs import (DifferenceRequired, adjust_pvalues, all_pairs, difference_required,
                                sakai_effect_size_e, tukey_hsd)
from uefast.stats.results import ConfidenceInterval, PairedTestResult

__all__ = [
    "paired_test",
    "all_pairs",
    "tukey_hsd",
    "topic_system_matrix",
    "adjust_pvalues",
    "sakai_effect_size_e",
    "difference_required",
    "DifferenceRequired",
    "TopicSystemMatrix",
    "PairedTestResult",
    "ConfidenceInterval",
]
