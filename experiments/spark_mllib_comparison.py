"""Spark MLlib's RankingMetrics / RankingEvaluator against uefast on the same small queries:
per-query values, graded labels, ties, and MLlib's ideal-DCG pitfall (its IDCG walks the
ground-truth array in the caller's order instead of sorting it by relevance).

Run (needs pyspark and Java; ~1 min on local[1]):

    PYTHONPATH=src python experiments/spark_mllib_comparison.py            # print the table
    PYTHONPATH=src python experiments/spark_mllib_comparison.py --update docs/distributed.md

``--update`` replaces the text between the ``<!-- mllib-table -->`` markers of that file.
MLlib takes (predicted ranking, ground truth[, relevance]) arrays, not scores: the caller sorts
and truncates, so ties are whatever order the caller's sort left; per-query values need one
``RankingMetrics`` per query (it only returns means).
"""
from __future__ import annotations

import argparse
import re
import sys

import pyarrow as pa

import uefast

K = 3
# case -> (docs: (docid, label, score) in input order, ground-truth order for MLlib: "input" =
# the relevant docs in input (docid) order, "by_label" = sorted by label descending, as MLlib
# needs for a correct IDCG; the caller's ranking: "stable" = stable sort by score descending)
CASES = {
    "A graded, truth in docid order": ([("a", 1, 0.8), ("b", 3, 0.9), ("c", 0, 0.1)], "input"),
    "A2 as A, system ranks a first": ([("a", 1, 0.9), ("b", 3, 0.8), ("c", 0, 0.1)], "input"),
    "B graded, truth by label": ([("a", 1, 0.8), ("b", 3, 0.9), ("c", 0, 0.1)], "by_label"),
    "C tie (d1, d2 same score)": ([("d1", 2, 0.5), ("d2", 0, 0.5), ("d3", 1, 0.2)], "by_label"),
    "D same tie, rows swapped": ([("d2", 0, 0.5), ("d1", 2, 0.5), ("d3", 1, 0.2)], "by_label"),
    "E binary labels": ([("x", 1, 0.9), ("y", 0, 0.8), ("z", 1, 0.7), ("w", 1, 0.1)], "input"),
    "F no relevant doc": ([("p", 0, 0.9), ("q", 0, 0.3)], "input"),
}


def _mllib_inputs(docs, truth_order):
    ranked = [d for d, _, _ in sorted(docs, key=lambda r: -r[2])]  # stable: ties keep input
    rel = [(d, lab) for d, lab, _ in docs if lab > 0]
    if truth_order == "by_label":
        rel = sorted(rel, key=lambda r: -r[1])
    return ranked, [d for d, _ in rel], [float(lab) for _, lab in rel]


def mllib_values(sc) -> dict:
    from pyspark.mllib.evaluation import RankingMetrics

    def values(rows):
        graded = RankingMetrics(sc.parallelize([r for r in rows], 1))
        binary = RankingMetrics(sc.parallelize([r[:2] for r in rows], 1))
        return {"nDCG(gain=exp)@3": graded.ndcgAt(K), "nDCG@3 (binary)": binary.ndcgAt(K),
                "P@3": binary.precisionAt(K), "AP": binary.meanAveragePrecision,
                "R@3": binary.recallAt(K)}

    out = {}
    helper = None
    for case, (docs, order) in CASES.items():
        ranked, truth, rel = _mllib_inputs(docs, order)
        if truth:
            out[case] = values([(ranked, truth, rel)])
            helper = (case, (ranked, truth, rel))
        else:  # an empty ground truth alone defeats RankingMetrics' schema inference: score it
            # beside the previous query and take it out of the mean of two (exact here)
            pair = values([helper[1], (ranked, truth, rel)])
            out[case] = {m: 2 * v - out[helper[0]][m] for m, v in pair.items()}
        out[case].update(_ranked=ranked, _truth=list(zip(truth, rel)))
    return out


def scala_graded_ndcg() -> dict:
    """``ndcgAt(3)`` of the Scala ``RankingMetrics`` with the relevance array (Spark >= 3.4),
    through ``spark-shell`` (the PySpark wrapper drops the relevance array: measured, see
    docs/distributed.md)."""
    import os
    import subprocess
    import tempfile

    import pyspark

    lines = ["import org.apache.spark.mllib.evaluation.RankingMetrics"]
    for i, (docs, order) in enumerate(CASES.values()):
        ranked, truth, rel = _mllib_inputs(docs, order)
        if not truth:
            continue
        arr = lambda xs: "Array[String](" + ", ".join(f'"{x}"' for x in xs) + ")"  # noqa: E731
        lines.append(f"println(\"RESULT {i} \" + new RankingMetrics(sc.parallelize(Seq(("
                     f"{arr(ranked)}, {arr(truth)}, Array[Double]({', '.join(map(str, rel))}))), "
                     f"1)).ndcgAt({K}))")
    lines.append("System.exit(0)")
    with tempfile.NamedTemporaryFile("w", suffix=".scala", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    shell = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-shell")
    out = subprocess.run([shell, "--master", "local[1]", "-i", f.name], capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=600).stdout
    os.unlink(f.name)
    names = list(CASES)
    got = {names[int(m.group(1))]: float(m.group(2))
           for m in re.finditer(r"RESULT (\d+) (\S+)", out)}
    return {c: got.get(c, 0.0) for c in names}  # empty truth: 0 (and a logged warning)


def evaluator_mean(spark) -> float:
    """RankingEvaluator (DataFrame API) over all cases: one mean, binary relevance only."""
    from pyspark.ml.evaluation import RankingEvaluator

    rows = []
    for docs, order in CASES.values():
        ranked, truth, _ = _mllib_inputs(docs, order)
        ids = {d: float(i) for i, (d, _, _) in enumerate(docs)}
        rows.append(([ids[d] for d in ranked], [ids[d] for d in truth]))
    df = spark.createDataFrame(rows, "prediction array<double>, label array<double>")
    return RankingEvaluator(metricName="ndcgAtK", k=K).evaluate(df)


def uefast_values() -> dict:
    out = {}
    for case, (docs, _) in CASES.items():
        t = pa.table({"qid": [1] * len(docs), "docid": [d for d, _, _ in docs],
                      "label": [lab for _, lab, _ in docs], "s": [s for _, _, s in docs]})
        tb = t.set_column(2, "label", pa.array([int(lab > 0) for _, lab, _ in docs]))
        vals = {}
        for ties in ("trec_eval", "expected"):
            r = uefast.evaluate(t, None, ["nDCG(gain=exp)@3", "P@3", "AP", "R@3"], ties=ties)
            rb = uefast.evaluate(tb, None, ["nDCG@3"], ties=ties)
            d = dict(zip(r.column("measure").to_pylist(), r.column("value").to_pylist()))
            d["nDCG@3 (binary)"] = rb.column("value")[0].as_py()
            vals[ties] = d
        out[case] = vals
    return out


def table(ml: dict, ue: dict, mean: float, scala: dict) -> str:
    lines = ["| case | MLlib input (ranked; truth:rel) | measure | PySpark RankingMetrics | "
             "Scala RankingMetrics (with relevance) | uefast ties=trec_eval | "
             "uefast ties=expected |", "|---|---|---|---|---|---|---|"]
    for case in CASES:
        first = True
        for m in ("nDCG(gain=exp)@3", "nDCG@3 (binary)", "P@3", "AP", "R@3"):
            inp = (f"[{', '.join(ml[case]['_ranked'])}]; "
                   f"{', '.join(f'{d}:{r:g}' for d, r in ml[case]['_truth']) or '(empty)'}"
                   if first else "")
            sc_v = f"{scala[case]:.4f}" if m == "nDCG(gain=exp)@3" else ""
            lines.append(f"| {case if first else ''} | {inp} | {m} | {ml[case][m]:.4f} | {sc_v} | "
                         f"{ue[case]['trec_eval'][m]:.4f} | {ue[case]['expected'][m]:.4f} |")
            first = False
    lines.append(f"| all cases | | mean nDCG@3 via `RankingEvaluator(metricName='ndcgAtK')` "
                 f"(binary, means only) | {mean:.4f} | | "
                 f"{sum(ue[c]['trec_eval']['nDCG@3 (binary)'] for c in CASES) / len(CASES):.4f} "
                 f"| {sum(ue[c]['expected']['nDCG@3 (binary)'] for c in CASES) / len(CASES):.4f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", help="markdown file whose <!-- mllib-table --> block is replaced")
    args = ap.parse_args(argv)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        ml, mean = mllib_values(spark.sparkContext), evaluator_mean(spark)
    finally:
        spark.stop()
    md = table(ml, uefast_values(), mean, scala_graded_ndcg())
    if args.update:
        text = open(args.update, encoding="utf-8").read()
        new = re.sub(r"(<!-- mllib-table -->\n).*?(\n<!-- /mllib-table -->)",
                     lambda m: m.group(1) + md + m.group(2), text, flags=re.S)
        if new == text and md not in text:
            print(f"no <!-- mllib-table --> block in {args.update}", file=sys.stderr)
            return 1
        open(args.update, "w", encoding="utf-8").write(new)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
