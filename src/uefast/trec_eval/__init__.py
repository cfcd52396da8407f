"""trec_eval-compatible evaluation (``uefast trec_eval``): exact trec_eval 10.0 / 9.0.8 numbers."""
from __future__ import annotations

from uefast.trec_eval.evaluator import VERSIONS, TrecEvalResult, evaluate_trec, evaluate_trec_files
from uefast.trec_eval.output import format_jsonl, format_text, format_tsv, to_table
from uefast.trec_eval.prepare import QrelsIndex, ScannedRun
from uefast.trec_eval.registry import MEASURES, NICKNAMES, select_measures

__all__ = ["evaluate_trec", "evaluate_trec_files", "TrecEvalResult", "QrelsIndex", "ScannedRun", "format_text", "format_tsv",
           "format_jsonl", "to_table", "select_measures", "MEASURES", "NICKNAMES", "VERSIONS"]
