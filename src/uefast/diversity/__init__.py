"""Diversity evaluation (SPEC_diversity): intent-aware, novelty, coverage, NTCIR and utility
measures with IUB, exact REB and UE scores (:func:`evaluate`), an ndeval drop-in
(``uefast ndeval``), and the subtopic qrels reader (:func:`read_qrels`)."""
from uefast.diversity.qrels import DivQrels, Topic, compile_qrels, read_qrels, read_weights
from uefast.diversity.registry import DivMeasure, Family, families, parse_measure, parse_measures


def evaluate(*args, **kwargs):
    """See :func:`uefast.diversity.evaluation.evaluate` (the implementation module)."""
    from uefast.diversity.evaluation import evaluate as _evaluate

    return _evaluate(*args, **kwargs)


__all__ = ["read_qrels", "read_weights", "compile_qrels", "DivQrels", "Topic", "evaluate",
           "parse_measure", "parse_measures", "families", "DivMeasure", "Family"]
