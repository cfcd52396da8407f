"""Benchmarks of uefast.text (ROUGE with exact REB and UE) against rouge-score 0.1.2.

Run:   UEFAST_SHARED_DATA=... pytest benchmarks/test_bench_text.py --benchmark-json=out.json -s
Smoke: UEFAST_BENCH_SMALL=1 pytest benchmarks/test_bench_text.py --benchmark-disable

Data: SummEval-length texts made distinct. Each of the 100 SummEval documents is copied into
N_PAIRS/16 documents whose source, reference and 16 candidates are the originals with their words
shuffled (seeded): the same lengths and vocabularies, but every text differs, so nothing is shared
between documents (no text, no (source, reference, L) task); a document's source and reference
are shared by its 16 systems, as in SummEval. rouge-score (no REB) is timed on a subset of the
same pairs and its rate is compared with ours (ROUGE-1/2/L values + exact REB for ROUGE-1/2,
Monte Carlo REB for ROUGE-L, IUB and UE).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from uefast.text import evaluate
from uefast.text.expected import SourceIndex, expected_overlaps
from uefast.text.rouge import Variant
from uefast.text.tokenize import Tokenizer

SMALL = os.environ.get("UEFAST_BENCH_SMALL") == "1"
N_PAIRS = 2_000 if SMALL else 100_000
N_BASELINE = 200 if SMALL else 2_000
SHARED = Path(os.environ.get("UEFAST_SHARED_DATA",
                             Path(__file__).resolve().parents[1].parent / "shared" / "data"))
DATA = SHARED / "summeval_bartscore" / "data.json"


def _shuffle(text: str, rng) -> str:
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def make_pairs(n_pairs: int = N_PAIRS) -> pa.Table:
    """The benchmark table of ``n_pairs`` distinct SummEval-length pairs (see the module doc)."""
    data = json.loads(DATA.read_text())
    rng = np.random.default_rng(20261127)
    docs = list(data.values())
    cols = {k: [] for k in ("doc_id", "system", "candidate", "reference", "source")}
    copy = 0
    while len(cols["doc_id"]) < n_pairs:
        v = docs[copy % len(docs)]
        src, ref = _shuffle(v["src"], rng), _shuffle(v["ref_summ"], rng)
        for name, s in v["sys_summs"].items():
            if len(cols["doc_id"]) == n_pairs:
                break
            cols["doc_id"].append(f"doc{copy}")
            cols["system"].append(name)
            cols["candidate"].append(_shuffle(s["sys_summ"], rng))
            cols["reference"].append(ref)
            cols["source"].append(src)
        copy += 1
    return pa.table(cols)


@pytest.fixture(scope="module")
def pairs():
    if not DATA.is_file():
        pytest.skip(f"SummEval data not found at {DATA} (set UEFAST_SHARED_DATA)")
    table = make_pairs()
    evaluate(table.slice(0, 64), ["ROUGE-1", "ROUGE-2", "ROUGE-L"])  # compile outside timings
    return table


def _timed(fn, *args, **kw):
    """(result, CPU seconds of this process -- all threads --, wall seconds)."""
    c0, w0 = time.process_time(), time.perf_counter()
    res = fn(*args, **kw)
    return res, time.process_time() - c0, time.perf_counter() - w0


def _rouge_score_times(table) -> tuple[float, float]:
    """rouge-score (no REB) on the first N_BASELINE pairs: (CPU s, wall s)."""
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    refs = table["reference"].to_pylist()[:N_BASELINE]
    cands = table["candidate"].to_pylist()[:N_BASELINE]

    def run():
        for r, c in zip(refs, cands):
            sc.score(r, c)

    _, cpu, wall = _timed(run)
    return cpu, wall


def _rouge_score_rate(table) -> float:
    return N_BASELINE / _rouge_score_times(table)[1]


ROUNDS = 1 if SMALL else 3


@pytest.mark.parametrize("samples", [200, 32])
def test_rouge_with_reb_and_ue_vs_rouge_score(benchmark, pairs, samples):
    """Pairs/s of evaluate(ROUGE-1, ROUGE-2, ROUGE-L) with REB, IUB and UE (the whole call:
    tokenising, counting, expected values) against rouge-score's pairs/s without REB, the two
    interleaved (rouge-score, uefast, rouge-score, ... ROUNDS times) in this process; CPU time
    (all threads) and wall time both recorded, the best round of each reported."""
    pytest.importorskip("rouge_score")
    benchmark.group = "text-rouge"
    rounds = []
    for _ in range(ROUNDS):
        rs_cpu, rs_wall = _rouge_score_times(pairs)
        res, cpu, wall = _timed(evaluate, pairs, ["ROUGE-1", "ROUGE-2", "ROUGE-L"],
                                samples=samples)
        assert res.num_rows == 3 * pairs.num_rows
        rounds.append({"uefast_cpu_s": cpu, "uefast_wall_s": wall,
                       "rouge_score_cpu_s": rs_cpu, "rouge_score_wall_s": rs_wall,
                       "load_avg_1min": os.getloadavg()[0]})
    benchmark.pedantic(lambda: None, rounds=1, warmup_rounds=0)
    n = pairs.num_rows
    best = {k: min(r[k] for r in rounds) for k in rounds[0] if k.endswith("_s")}
    ours_wall, ours_cpu = n / best["uefast_wall_s"], n / best["uefast_cpu_s"]
    rs_wall, rs_cpu = N_BASELINE / best["rouge_score_wall_s"], N_BASELINE / best["rouge_score_cpu_s"]
    benchmark.extra_info.update({"pairs": n, "mc_samples_rouge_l": samples, "rounds": rounds,
                                 "rouge_score_pairs_timed": N_BASELINE,
                                 "uefast_pairs_per_s_wall": ours_wall,
                                 "uefast_pairs_per_s_cpu": ours_cpu,
                                 "rouge_score_pairs_per_s_wall": rs_wall,
                                 "rouge_score_pairs_per_s_cpu": rs_cpu,
                                 "speedup_wall": ours_wall / rs_wall,
                                 "speedup_cpu": ours_cpu / rs_cpu})
    for i, r in enumerate(rounds):
        print(f"\n[text-rouge S={samples} round {i}] uefast {n} pairs cpu {r['uefast_cpu_s']:.2f} s "
              f"wall {r['uefast_wall_s']:.2f} s; rouge-score {N_BASELINE} pairs cpu "
              f"{r['rouge_score_cpu_s']:.2f} s wall {r['rouge_score_wall_s']:.2f} s; "
              f"load {r['load_avg_1min']:.1f}")
    print(f"[text-rouge S={samples} best] uefast {ours_wall:,.0f} pairs/s wall, {ours_cpu:,.0f} "
          f"pairs/s cpu; rouge-score {rs_wall:,.0f} wall, {rs_cpu:,.0f} cpu; "
          f"x{ours_wall / rs_wall:.1f} wall, x{ours_cpu / rs_cpu:.1f} cpu")


def test_rouge_values_only_vs_rouge_score(benchmark, pairs):
    """ROUGE-1/2/L P/R/F only (REB through the exact n-gram kernels, the cheap part; ROUGE-L's
    Monte Carlo at 1 draw): what the counting costs against rouge-score's."""
    pytest.importorskip("rouge_score")
    from uefast.text import rouge_scores

    benchmark.group = "text-rouge-values"
    refs = pairs["reference"].to_pylist()
    cands = pairs["candidate"].to_pylist()
    t0 = time.perf_counter()
    benchmark.pedantic(rouge_scores, args=(refs, cands, ["rouge1", "rouge2", "rougeL"]),
                       rounds=1, warmup_rounds=0)
    ours_s = time.perf_counter() - t0
    theirs = _rouge_score_rate(pairs)
    ours = len(refs) / ours_s
    benchmark.extra_info.update({"uefast_pairs_per_s": ours, "rouge_score_pairs_per_s": theirs,
                                 "speedup": ours / theirs})
    print(f"\n[text-rouge-values] {ours:,.0f} pairs/s; rouge-score {theirs:,.0f} pairs/s; "
          f"x{ours / theirs:.1f}")


def test_expected_rouge2_per_source_reference(benchmark, pairs):
    """E[ROUGE-2] by the automaton DP: time per (source, reference) pair, each at the 16
    candidate lengths of its document."""
    benchmark.group = "text-expected-rouge2"
    n_docs = min(100 if SMALL else 1000, pairs.num_rows // 16)
    sub = pairs.slice(0, n_docs * 16)
    src_texts = sub["source"].to_pylist()[::16]
    ref_texts = sub["reference"].to_pylist()[::16]
    tok = Tokenizer()(src_texts + ref_texts + sub["candidate"].to_pylist())
    lens = np.diff(tok.text_offsets)[2 * n_docs:]
    sources = SourceIndex.build(tok, np.arange(n_docs))
    doc = np.repeat(np.arange(n_docs), 16)
    args = (tok, sources, doc, n_docs + doc, lens, Variant("N", 2))
    expected_overlaps(*args)  # compiled
    t0 = time.perf_counter()
    benchmark.pedantic(expected_overlaps, args=args, rounds=1, warmup_rounds=0)
    per_pair_ms = (time.perf_counter() - t0) / n_docs * 1e3
    benchmark.extra_info.update({"source_reference_pairs": n_docs, "lengths_per_pair": 16,
                                 "ms_per_source_reference": per_pair_ms})
    print(f"\n[expected ROUGE-2] {per_pair_ms:.3f} ms per (source, reference) at 16 lengths")
