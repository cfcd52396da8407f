"""Core engine throughput vs pytrec_eval, ranx and ir_measures on the same Arrow table.

Workload (issue 2): nDCG@10 + AP per query with IUB, REB and UE V1/V2, one system, end-to-end
from an in-memory Arrow table; then all 8 systems. Peers are timed "convert + compute" from the
same table (their dict construction is part of what a user pays). Run:

    python -m pytest benchmarks/test_bench_core.py -s   # not --benchmark-only: it skips the report
    UEFAST_BENCH_SMALL=1 python -m pytest benchmarks --benchmark-disable   # smoke test

Ratios are printed at the end (``test_zz_report``) and written to ``benchmarks/RESULTS_core.md``
when the full-size suite runs.
"""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import uefast
from _data import LARGE, N_QUERIES, N_QUERIES_LARGE, SMALL, best_time, mslr_table

MEASURES = ["nDCG@10", "AP"]
# Every figure is the best of N rounds (the machine is shared: the minimum is the least disturbed
# estimate); peers take seconds per round, so fewer rounds, each averaging over its own noise.
ROUNDS = 3 if SMALL else 15
PEER_ROUNDS = 1 if SMALL else 3
TIMES: dict[str, float] = {}
ROWS: dict[str, int] = {}


def _one_system():
    t = mslr_table()
    return t.select(["qid", "docid", "label", "sys0"])


def _timed(name, fn, rows, rounds):
    TIMES[name] = best_time(fn, rounds)
    ROWS[name] = rows


def _run(benchmark, name, fn, rows, rounds=5):
    fn()  # warm-up (JIT is cached on disk; this also warms caches)
    benchmark.pedantic(lambda: _timed(name, fn, rows, rounds), rounds=1, iterations=1)
    benchmark.extra_info["rows"] = rows
    benchmark.extra_info["rows_per_s"] = rows / TIMES[name]


def test_uefast_one_system(benchmark):
    t = _one_system()
    _run(benchmark, "uefast 1 system", lambda: uefast.evaluate(t, measures=MEASURES), t.num_rows,
         ROUNDS)


def test_uefast_one_system_no_ue(benchmark):
    t = _one_system()
    _run(benchmark, "uefast 1 system, values only", lambda: uefast.evaluate(t, measures=MEASURES, ue=False),
         t.num_rows, ROUNDS)


def test_uefast_one_system_ndcg10_only(benchmark):
    """nDCG@10 alone: every measure has a cutoff, so only documents that can reach the top 10
    are ranked (the top-k path)."""
    t = _one_system()
    _run(benchmark, "uefast 1 system, nDCG@10 only", lambda: uefast.evaluate(t, measures=["nDCG@10"]),
         t.num_rows, ROUNDS)


@pytest.mark.skipif(not (LARGE or SMALL), reason="set UEFAST_BENCH_LARGE=1 for the 300,000-query run")
def test_uefast_one_system_300k_queries(benchmark):
    """The 300,000-query variant (~36 M rows), uefast only (peers need minutes and > 10 GB)."""
    t = mslr_table(N_QUERIES_LARGE, 1, seed=7)
    _run(benchmark, f"uefast 1 system, {N_QUERIES_LARGE:,} queries",
         lambda: uefast.evaluate(t, measures=MEASURES), t.num_rows, 3)


def test_uefast_all_systems(benchmark):
    t = mslr_table()
    # as many rounds as the one-system figure it is compared with (best of N on a shared machine)
    _run(benchmark, "uefast 8 systems", lambda: uefast.evaluate(t, measures=MEASURES), t.num_rows,
         ROUNDS)


def _string_docids(t, shuffled=False):
    """The same table with docids written as strings ("LA" + number), as TREC runs carry them:
    trec_eval's tie order is then byte order, not numeric. The generator's docids rise with
    position in every query, which the tie paths exploit (a best case); ``shuffled`` scrambles
    the numbers (x * 2654435761 mod 2^32, a bijection: still unique in a query) so that docid
    order is unrelated to position and the strings differ in width, as real runs' docids are."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    num = t["docid"]
    if shuffled:
        x = num.to_numpy().astype(np.uint64)
        num = pa.array((x * np.uint64(2654435761)) % np.uint64(2**32))
    ds = pc.binary_join_element_wise(pa.scalar("LA"), pc.cast(num, pa.string()), "")
    return t.set_column(t.column_names.index("docid"), "docid", ds.combine_chunks()
                        if isinstance(ds, pa.ChunkedArray) else ds)


@pytest.mark.parametrize("system,docs", [("sys3", "int"), ("sys0", "string"), ("sys3", "string"),
                                         ("sys3", "shuffled string")])
def test_uefast_one_system_docid_kinds(benchmark, system, docs):
    """One untied (sys0) or heavily tied (sys3) system with integer or string docids: trec_eval's
    tie order by docid bytes is the case that string docids make expensive; "shuffled string"
    docids do not rise with position (no shortcut)."""
    t = mslr_table().select(["qid", "docid", "label", system])
    if docs != "int":
        t = _string_docids(t, shuffled=docs.startswith("shuffled"))
    tied = " tied" if system == "sys3" else ""
    _run(benchmark, f"uefast 1{tied} system ({system}), {docs} docids",
         lambda: uefast.evaluate(t, measures=MEASURES), t.num_rows, ROUNDS)


def _dicts(t):
    qid = [str(x) for x in t["qid"].to_numpy()]
    doc = [str(x) for x in t["docid"].to_numpy()]
    lab = t["label"].to_numpy().tolist()
    score = t["sys0"].to_numpy().tolist()
    qrels: dict = {}
    run: dict = {}
    for q, d, lab_, s in zip(qid, doc, lab, score):
        qrels.setdefault(q, {})[d] = lab_
        run.setdefault(q, {})[d] = s
    return qrels, run


def _assert_same_values(peer: dict, t) -> None:
    """The peer computed what uefast computed: ``peer[(qid, "nDCG@10" | "AP")]`` equals uefast's
    value for every query (to 1e-9), so the timings compare the same work."""
    out = uefast.evaluate(t, measures=MEASURES, ue=False)
    ours = {(str(q), m): v for q, m, v in zip(out["qid"].to_pylist(), out["measure"].to_pylist(),
                                              out["value"].to_pylist())}
    assert peer.keys() == ours.keys()
    worst = max(abs(peer[k] - ours[k]) for k in ours)
    assert worst <= 1e-9, worst


def test_peer_pytrec_eval(benchmark):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    t = _one_system()

    def go():
        qrels, run = _dicts(t)
        return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"}).evaluate(run)

    _run(benchmark, "pytrec_eval", go, t.num_rows, PEER_ROUNDS)
    _assert_same_values({(q, m): v[k] for q, v in go().items()
                         for m, k in (("nDCG@10", "ndcg_cut_10"), ("AP", "map"))}, t)


def test_peer_ir_measures(benchmark):
    ir_measures = pytest.importorskip("ir_measures")
    t = _one_system()
    names = {str(ir_measures.nDCG @ 10): "nDCG@10", str(ir_measures.AP): "AP"}

    def go():
        qrels, run = _dicts(t)
        return list(ir_measures.iter_calc([ir_measures.nDCG @ 10, ir_measures.AP], qrels, run))

    _run(benchmark, "ir_measures", go, t.num_rows, PEER_ROUNDS)
    _assert_same_values({(r.query_id, names[str(r.measure)]): r.value for r in go()}, t)


def test_peer_ranx_dict(benchmark):
    ranx = pytest.importorskip("ranx")
    t = _one_system()

    def go():
        qrels, run = _dicts(t)
        return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["ndcg@10", "map"],
                             return_mean=False, save_results_in_run=False)

    _run(benchmark, "ranx (dict)", go, t.num_rows, PEER_ROUNDS)
    qids = list(ranx.Qrels(_dicts(t)[0]).keys())  # ranx's per-query arrays follow its Qrels order
    res = go()
    _assert_same_values({(q, m): float(res[k][i]) for i, q in enumerate(qids)
                         for m, k in (("nDCG@10", "ndcg@10"), ("AP", "map"))}, t)


_PEAK = r"""
import os, sys, threading, time
sys.path.insert(0, {bench!r})
import pyarrow.parquet as pq, uefast
t = pq.read_table({path!r})
uefast.evaluate(t.slice(0, 20000), measures={measures!r})  # JIT load
page = os.sysconf("SC_PAGE_SIZE")
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * page
base = rss(); peak = [base]; stop = [False]
def poll():
    while not stop[0]:
        peak[0] = max(peak[0], rss()); time.sleep(0.0005)
th = threading.Thread(target=poll); th.start()
uefast.evaluate(t, measures={measures!r})
stop[0] = True; th.join(); peak[0] = max(peak[0], rss())
print(t.nbytes, peak[0] - base)
"""


def test_peak_memory(tmp_path):
    """Extra memory used by one evaluate call, relative to the input table (target <= 1.5x)."""
    import pyarrow.parquet as pq

    path = tmp_path / "one.parquet"
    pq.write_table(_one_system(), path)
    code = _PEAK.format(bench=str(Path(__file__).parent), path=str(path), measures=MEASURES)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    nbytes, extra = map(int, out.stdout.split())
    TIMES["_input_bytes"] = nbytes
    TIMES["_extra_bytes"] = extra


def test_zz_report():
    """Print (and, at full size, write) the ratio table."""
    if "uefast 1 system" not in TIMES:
        pytest.skip("run the whole module to get the report")
    base = TIMES["uefast 1 system"]
    lines = ["| engine | time (s) | rows/s | ratio to uefast 1 system |", "|---|---|---|---|"]
    for name, sec in TIMES.items():
        if name.startswith("_"):
            continue
        # a time ratio means something only on the same table (the large variant is another)
        ratio = f"{sec / base:.1f}x" if ROWS[name] == ROWS["uefast 1 system"] else "– (other table)"
        lines.append(f"| {name} | {sec:.3f} | {ROWS[name] / sec / 1e6:.1f} M | {ratio} |")
    if "_input_bytes" in TIMES:
        lines.append("")
        lines.append(f"Peak extra memory during one evaluate call: {TIMES['_extra_bytes'] / 2**20:.0f} MiB "
                     f"for a {TIMES['_input_bytes'] / 2**20:.0f} MiB input table "
                     f"({TIMES['_extra_bytes'] / TIMES['_input_bytes']:.2f}x).")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    head = (f"Measured {datetime.date.today()} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}; {N_QUERIES} queries, {ROWS['uefast 1 system']} rows, "
            f"measures {' + '.join(MEASURES)} (uefast with IUB, REB, UE V1/V2). Best of {ROUNDS} "
            f"rounds for uefast, {PEER_ROUNDS} for peers; load average at the end: {load}.")
    text = head + "\n\n" + "\n".join(lines) + "\n"
    print("\n" + text)
    if not SMALL:
        (Path(__file__).parent / "RESULTS_core.md").write_text(text)
