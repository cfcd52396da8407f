"""UE normalisation for text generation (SPEC_text): ROUGE-N/L/Lsum with rouge-score 0.1.2
semantics, exact expected ROUGE under the source's unigram model (REB), ideal upper bounds
(IUB), UE V1/V2, and :func:`evaluate` over Arrow/Parquet/JSONL tables of texts."""
from __future__ import annotations

from uefast.text.rouge import rouge_scores
from uefast.text.tokenize import Tokenized, Tokenizer, tokenize

__all__ = ["rouge_scores", "tokenize", "Tokenizer", "Tokenized"]
