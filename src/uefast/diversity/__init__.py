"""Diversity evaluation (SPEC_diversity): intent-aware and novelty measures with IUB, exact REB
and UE scores, an ndeval drop-in, and the subtopic qrels reader."""
from uefast.diversity.qrels import DivQrels, Topic, compile_qrels, read_qrels, read_weights

__all__ = ["read_qrels", "read_weights", "compile_qrels", "DivQrels", "Topic"]
