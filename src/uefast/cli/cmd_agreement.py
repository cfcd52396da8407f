"""``uefast agreement``: inter-assessor agreement (Cohen's / Fleiss' κ, Krippendorff's α) of
two or more qrels files."""
from __future__ import annotations

import json
import math
import sys

NAME = "agreement"
HELP = "assessor agreement of qrels files: Cohen's κ (weighted), Fleiss' κ, Krippendorff's α"
DESCRIPTION = """\
Agreement between assessors who judged the same (qid, docid) pairs: one qrels file (TREC qrels
text, or a Parquet/Arrow/CSV/TSV table with qid, docid, label) per assessor, aligned on
(qid, docid). Pairs judged by too few assessors (κ: not by every one; α: by one only) are left
out and counted (--unmatched error refuses them instead)."""
EPILOG = """\
examples:
  uefast agreement qrels.nist qrels.secondary                       # Cohen's κ, 95% Wald CI
  uefast agreement qrels.a qrels.b --weights quadratic --categories 0 1 2 3
  uefast agreement a.qrels b.qrels c.qrels --statistic krippendorff --level ordinal --seed 1
  uefast agreement a.qrels b.qrels c.qrels --statistic fleiss --format json

exit codes: 0 success; 2 bad usage or bad input (one line on stderr naming the problem)"""


def add_arguments(p) -> None:
    p.add_argument("qrels", nargs="+", metavar="QRELS", help="qrels files, one per assessor")
    p.add_argument("--statistic", default="cohen", choices=("cohen", "fleiss", "krippendorff"))
    p.add_argument("--weights", default=None, choices=("linear", "quadratic"),
                   help="weighted Cohen's κ (default: unweighted)")
    p.add_argument("--level", default=None, choices=("nominal", "ordinal", "interval", "ratio"),
                   help="Krippendorff's level of measurement (default: nominal)")
    p.add_argument("--categories", nargs="+", type=int, default=None, metavar="LABEL",
                   help="the label scale (default: the labels that occur)")
    p.add_argument("--ci", default=None, choices=("asymptotic", "bootstrap"),
                   help="interval (default: asymptotic for Cohen's κ, bootstrap otherwise)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--n-resamples", type=int, default=9999)
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default: random, reported)")
    p.add_argument("--unmatched", default="exclude", choices=("exclude", "error"))
    p.add_argument("--format", default="text", choices=("text", "json"))


def _fields(res, ci) -> dict:
    def num(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    return {"statistic": res.method, "weights": res.weights, "level": res.level,
            "value": res.statistic, "pvalue": num(res.pvalue),
            "standard_error": num(res.standard_error), "ci_method": res.ci_method,
            "ci_low": ci.low, "ci_high": ci.high, "n_items": res.n_items,
            "n_assessors": res.n_assessors, "categories": list(res.categories),
            "n_excluded": res.n_excluded,
            "excluded_per_assessor": list(res.excluded_per_assessor),
            "n_resamples": res.n_resamples, "seed": res.seed}


def run(args) -> int:
    from uefast.meta.agreement import agreement

    res = agreement(*args.qrels, statistic=args.statistic, weights=args.weights, level=args.level,
                    categories=args.categories, ci=args.ci, n_resamples=args.n_resamples,
                    seed=args.seed, unmatched=args.unmatched)
    ci = res.confidence_interval(args.confidence_level)
    row = _fields(res, ci)
    if args.format == "json":
        print(json.dumps(row))
        return 0
    name = {"cohen": "Cohen's kappa", "fleiss": "Fleiss' kappa",
            "krippendorff": "Krippendorff's alpha"}[res.method]
    detail = res.weights or res.level
    out = sys.stdout
    print(f"{name}{f' ({detail})' if detail else ''}: {res.statistic:.4f}", file=out)
    print(f"{args.confidence_level:.0%} CI ({res.ci_method}"
          f"{f', {res.n_resamples} resamples, seed {res.seed}' if res.seed is not None else ''}): "
          f"[{ci.low:.4f}, {ci.high:.4f}]", file=out)
    if row["pvalue"] is not None:
        print(f"p-value (H0: kappa = 0, two-sided): {res.pvalue:.4g}", file=out)
    print(f"items (qid, docid) used: {res.n_items}; assessors: {res.n_assessors}; "
          f"categories: {list(res.categories)}", file=out)
    print(f"pairs left out (too few assessors): {res.n_excluded}; judged by each assessor among "
          f"them: {list(res.excluded_per_assessor)}", file=out)
    return 0
