"""UE normalisation for text generation (SPEC_text): ROUGE-N/L/Lsum with rouge-score 0.1.2
semantics, exact expected ROUGE under the source's unigram model (REB), ideal upper bounds
(IUB), UE V1/V2, and :func:`evaluate` over Arrow/Parquet/JSONL tables of texts (BERTScore is
dispatched to :mod:`uefast.text.bertscore`), and :func:`pyramid`, the Pyramid score from tables of
summary content units."""
from __future__ import annotations

from uefast.text.evaluate import evaluate
from uefast.text.expected import overlap1_distribution
from uefast.text.measures import TextMeasure, parse_text_measure, parse_text_measures
from uefast.text.pyramid import pyramid
from uefast.text.rouge import rouge_scores
from uefast.text.tokenize import Tokenized, Tokenizer, tokenize
from uefast.text.ue import text_ue

__all__ = ["evaluate", "rouge_scores", "tokenize", "Tokenizer", "Tokenized", "TextMeasure",
           "parse_text_measure", "parse_text_measures", "text_ue", "overlap1_distribution",
           "pyramid"]
