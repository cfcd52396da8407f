"""The SummEval protocol of SPEC_text §7: correlations of raw and UE-normalised metrics with the
four expert dimensions (coherence, consistency, fluency, relevance).

* Summary level (BARTScore ``analysis.py`` ``evaluate_summary``): per document, scipy's Kendall
  τ-b / Pearson r / Spearman ρ over the systems; a document where the metric or the human score is
  constant is skipped; the mean over documents.
* System level: τ-b / r of the systems' means over the documents.

Data: BARTScore's unified SummEval file (``summeval_bartscore/data.json``, SOURCE.md there).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from uefast.errors import InputError

__all__ = ["DIMENSIONS", "ABSTRACTIVE", "load_summeval", "summeval_table", "summary_level",
           "system_level", "PUBLISHED_VALIDATION"]

DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
ABSTRACTIVE = ("M8", "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M17", "M20", "M22", "M23")

#: SPEC_text §7.1: published summary-level correlations (16 systems, 11-reference mean, Porter
#: stemming), BARTScore / G-Eval: {metric: {"spearman"/"kendall": (coh, con, flu, rel)}}.
PUBLISHED_VALIDATION = {
    "ROUGE-1": {"spearman": (0.167, 0.160, 0.115, 0.326), "kendall": (0.126, 0.130, 0.094, 0.252)},
    "ROUGE-2": {"spearman": (0.184, 0.187, 0.159, 0.290), "kendall": (0.139, 0.155, 0.128, 0.219)},
}


def load_summeval(path) -> dict:
    """BARTScore's SummEval object from ``data.json`` (or a folder holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / "data.json"
    if not p.is_file():
        raise InputError(f"SummEval data not found at {str(p)!r} (expected BARTScore's data.json, "
                         "e.g. shared/data/summeval_bartscore/data.json)")
    return json.loads(p.read_text(encoding="utf-8"))


def summeval_table(data: dict, *, references: str = "one",
                   systems=None) -> tuple[pa.Table, dict[str, np.ndarray]]:
    """The evaluate() input (doc_id, system, candidate, reference, source) and the human scores
    per dimension in the same row order. ``references``: ``"one"`` (the CNN/DM highlight
    ``ref_summ``) or ``"all"`` (the 11 ``ref_summs``)."""
    cols = {k: [] for k in ("doc_id", "system", "candidate", "reference", "source")}
    human = {d: [] for d in DIMENSIONS}
    for doc, v in data.items():
        for sys_name, s in v["sys_summs"].items():
            if systems is not None and sys_name not in systems:
                continue
            cols["doc_id"].append(doc)
            cols["system"].append(sys_name)
            cols["candidate"].append(s["sys_summ"])
            cols["reference"].append(v["ref_summ"] if references == "one" else list(v["ref_summs"]))
            cols["source"].append(v["src"])
            for d in DIMENSIONS:
                human[d].append(float(s["scores"][d]))
    return pa.table(cols), {d: np.array(x) for d, x in human.items()}


def _groups(doc_ids):
    docs = {}
    for i, d in enumerate(doc_ids):
        docs.setdefault(d, []).append(i)
    return [np.array(ix) for ix in docs.values()]


def _corr(kind, a, b):
    from scipy import stats

    if kind == "kendall":
        return stats.kendalltau(a, b).statistic  # tau-b
    if kind == "spearman":
        return stats.spearmanr(a, b).statistic
    return stats.pearsonr(a, b).statistic


def summary_level(metric, human, doc_ids, kind: str = "kendall") -> float:
    """Mean over documents of the correlation over systems (constant documents skipped)."""
    metric = np.asarray(metric, dtype=float)
    human = np.asarray(human, dtype=float)
    vals = []
    for ix in _groups(doc_ids):
        a, b = metric[ix], human[ix]
        if np.ptp(a) == 0 or np.ptp(b) == 0 or np.isnan(a).any():
            continue
        vals.append(_corr(kind, a, b))
    return float(np.mean(vals)) if vals else float("nan")


def system_level(metric, human, systems, kind: str = "kendall") -> float:
    """Correlation of the per-system means."""
    metric = np.asarray(metric, dtype=float)
    human = np.asarray(human, dtype=float)
    names = list(dict.fromkeys(systems))
    sys_arr = np.asarray(systems, dtype=object)
    a = np.array([np.nanmean(metric[sys_arr == s]) for s in names])
    b = np.array([human[sys_arr == s].mean() for s in names])
    return float(_corr(kind, a, b))
