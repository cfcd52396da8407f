"""`uefast ndeval` and the ndeval measures against pyndeval 0.0.8 (the compiled ndeval.c v4.5).

pyndeval returns values, not ndeval's text, so the expected text is built here from pyndeval's
per-topic values with ndeval's own output rules (outputMeasures in ndeval.c: header, one line per
run topic in numeric order with zeros for topics the qrels lack, amean over the topics in both,
every value %.6f, NaN printed as glibc prints it); pyndeval ranks by score, so it gets
score = -rank to see the rank-column order ndeval uses. With UEFAST_NDEVAL_BIN naming a compiled
ndeval binary, the bytes are also compared with it directly, options included."""
from __future__ import annotations

import math
import os
import subprocess

import numpy as np
import pytest

from uefast.cli import main
from uefast.diversity.ndeval import NDEVAL_COLUMNS, column_index
from uefast.diversity.ndeval_text import (evaluate_ndeval_run, ndeval_text, read_ndeval_qrels,
                                          read_ndeval_run)

pyndeval = pytest.importorskip("pyndeval")

RUNS = [f"{a}/results-{b}.txt" for a in ("ql", "rm")
        for b in ("cata", "cata-filtered", "catb", "catb-filtered")]


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return "%.6f" % x


def expected_text(qrels_rows, run_rows, runid, alpha=0.5, beta=0.5):
    """ndeval's output from pyndeval's values. qrels_rows: (topic, subtopic, docno, grade) with
    int topic/subtopic; run_rows: (topic, docno, rank)."""
    # subtopic ids unique per topic, first seen in numeric order: pyndeval then visits a topic's
    # aspects in ndeval's order (it numbers subtopic strings globally by first appearance)
    qr = sorted(qrels_rows, key=lambda r: (r[0], r[1]))
    ev = pyndeval.RelevanceEvaluator([(str(t), f"{t}-{s:06d}", d, g) for t, s, d, g in qr],
                                     measures=list(NDEVAL_COLUMNS), alpha=alpha, beta=beta)
    qtopics = {t for t, *_ in qrels_rows}
    lines = ["runid,topic," + ",".join(NDEVAL_COLUMNS)]
    totals = np.zeros(len(NDEVAL_COLUMNS))
    for topic in sorted({t for t, *_ in run_rows}):
        if topic in qtopics:
            docs = [(str(topic), d, -float(r)) for t, d, r in run_rows if t == topic]
            res = ev.evaluate(docs)[str(topic)]
            vals = [res[c] for c in NDEVAL_COLUMNS]
        else:
            vals = [0.0] * len(NDEVAL_COLUMNS)
        totals = [a + b for a, b in zip(totals, vals)]
        lines.append(f"{runid},{topic}," + ",".join(_fmt(v) for v in vals))
    actual = len(qtopics & {t for t, *_ in run_rows})
    with np.errstate(all="ignore"):
        means = [float(np.float64(t) / np.float64(actual)) for t in totals]
    lines.append(f"{runid},amean," + ",".join(_fmt(v) for v in means))
    return "\n".join(lines) + "\n"


def _read_rows(path, kind):
    rows = []
    for line in open(path):
        f = line.split()
        rows.append((int(f[0]), int(f[1]), f[2], int(f[3])) if kind == "q"
                    else (int(f[0]), f[2], int(f[3])))
    return rows


@pytest.fixture
def trec2012(shared_data):
    """The 2012 qrels-for-ndeval and the baseline runs' folder (data-heavy: marked slow by
    conftest through ``shared_data``)."""
    q = shared_data / "trec_web_diversity_2009_2014" / "2012" / "qrels-for-ndeval.txt"
    if not q.exists():
        pytest.skip(f"{q} not found")
    return q, shared_data / "trec_web2012_baseline_runs"


@pytest.mark.parametrize("run", RUNS)
def test_trec2012_bytes_equal_pyndeval(trec2012, run, capsys):
    """All 50 topics x 21 measures of each official 2012 baseline: the printed text of
    `uefast ndeval` equals ndeval's text built from pyndeval's values, byte for byte."""
    q, rdir = trec2012
    assert main(["ndeval", str(q), str(rdir / run)]) == 0
    out = capsys.readouterr().out
    want = expected_text(_read_rows(q, "q"), _read_rows(rdir / run, "r"), "indri")
    assert out == want


def test_trec2012_values_bitwise(trec2012):
    """Beyond 6 decimals: every value of one run equals pyndeval's double exactly, all cutoffs
    1..20, two (alpha, beta) settings."""
    q, rdir = trec2012
    qrows = _read_rows(q, "q")
    rrows = _read_rows(rdir / "rm/results-catb-filtered.txt", "r")
    for alpha, beta in ((0.5, 0.5), (0.3, 0.8)):
        _compare_values(q, rdir / "rm/results-catb-filtered.txt", qrows, rrows, alpha, beta)


def _all_measures():
    ms = [f"{b}@{k}" for b in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
          for k in range(1, 21)]
    return ms + ["NRBP", "nNRBP", "MAP-IA"]


def _compare_values(qpath, rpath, qrows, rrows, alpha, beta):
    nq = read_ndeval_qrels(qpath, alpha, beta)
    run = read_ndeval_run(rpath)
    have, vals = evaluate_ndeval_run(nq, run)
    ms = _all_measures()
    qr = sorted(qrows, key=lambda r: (r[0], r[1]))
    ev = pyndeval.RelevanceEvaluator([(str(t), f"{t}-{s:06d}", d, g) for t, s, d, g in qr],
                                     measures=ms, alpha=alpha, beta=beta)
    # pyndeval groups consecutive rows of a topic: give them topic by topic
    ref = ev.evaluate([(str(t), d, -float(r)) for t, d, r in sorted(rrows, key=lambda x: x[0])])
    n = 0
    for s, topic in enumerate(run.topics[have]):
        for mname in ms:
            got = vals[s, column_index(mname, nq.depth)]
            exp = ref[str(int(topic))][mname]
            assert got == exp or (math.isnan(got) and math.isnan(exp)), (topic, mname, got, exp)
            n += 1
    assert n == len(ms) * int(have.sum())


def _random_case(rng, tmp_path, i):
    topics = rng.choice(np.arange(1, 9), size=rng.integers(1, 5), replace=False)
    qrows, rrows = [], []
    for t in topics:
        n_docs = int(rng.integers(1, 40))
        n_sub = int(rng.integers(1, 6))
        docs = [f"d{int(x):03d}" for x in rng.choice(200, n_docs, replace=False)]
        for s in range(n_sub):
            sub = s + int(rng.integers(0, 2))  # some subtopic ids skipped, 0 allowed
            for d in docs:
                if rng.random() < 0.8:
                    qrows.append((int(t), sub + s, d, int(rng.choice([0, 0, 0, 1, 2, 4]))))
    qrows = list({(t, s, d): g for t, s, d, g in qrows}.items())
    qrows = [(t, s, d, g) for (t, s, d), g in qrows]
    for t in set(topics) | {int(rng.integers(1, 12))}:  # perhaps a topic the qrels lack
        k = int(rng.integers(1, 45))
        docs = [f"d{int(x):03d}" for x in rng.choice(220, k, replace=False)]
        ranks = rng.choice(np.arange(1, 3 * k + 1), size=k, replace=False)  # gaps, any order
        rrows += [(int(t), d, int(r)) for d, r in zip(docs, ranks)]
    order = rng.permutation(len(rrows))
    rrows = [rrows[j] for j in order]
    qp, rp = tmp_path / f"q{i}.txt", tmp_path / f"r{i}.txt"
    qp.write_text("".join(f"{t} {s} {d} {g}\n" for t, s, d, g in qrows))
    rp.write_text("".join(f"{t} Q0 {d} {r} {-r / 7:.6f} run{i}\n" for t, d, r in rrows))
    return qp, rp, qrows, rrows


@pytest.mark.parametrize("seed", range(12))
def test_random_runs_bytes_and_values(tmp_path, seed):
    rng = np.random.default_rng(seed)
    qp, rp, qrows, rrows = _random_case(rng, tmp_path, seed)
    assert ndeval_text(qp, rp) == expected_text(qrows, rrows, f"run{seed}")
    alpha, beta = float(rng.choice([0.5, 0.25, 0.7, 1.0])), float(rng.choice([0.5, 0.9, 0.3]))
    assert ndeval_text(qp, rp, alpha=alpha, beta=beta) == expected_text(qrows, rrows, f"run{seed}",
                                                                         alpha, beta)
    _compare_values(qp, rp, qrows, rrows, alpha, beta)


def test_topic_without_relevant_document_prints_nan(tmp_path, capsys):
    q = tmp_path / "q"
    q.write_text("1 1 a 0\n2 1 b 1\n")
    r = tmp_path / "r"
    r.write_text("1 Q0 a 1 1 r\n")
    assert main(["ndeval", str(q), str(r)]) == 0
    out = capsys.readouterr().out
    assert out == expected_text([(1, 1, "a", 0), (2, 1, "b", 1)], [(1, "a", 1)], "r")
    assert ",-nan," in out


@pytest.mark.parametrize("qtext, rtext, msg", [
    ("1 1 a -2\n", "1 Q0 a 1 1 r\n", r"q:1: syntax error: judgment '-2'"),
    ("1 x a 1\n", "1 Q0 a 1 1 r\n", r"q:1: syntax error: subtopic 'x'"),
    ("1 1 a 1\n", "1 Q0 a 1 1 r\n1 Q0 b 1 0 r\n", r"r:2: duplicate rank \(1\) for topic 1"),
    ("1 1 a 1\n", "1 Q0 a 1 1 r\n1 Q0 a 2 0 r\n", r"r:2: docno repeated within a topic"),
    ("1 1 a 1\n", "1 Q0 a 1 1 r\nwt-1 Q0 a 2 0 r\n", r"r:2: duplicate docno \(a\) for topic 1"),
    ("1 1 a 1\n", "1 Q0 a -1 1 r\n", r"r:1: syntax error"),
    ("1 1 a 1\n1 1 a 0\n", "1 Q0 a 1 1 r\n", r"q:2: .*judged twice"),
])
def test_input_errors(tmp_path, capsys, qtext, rtext, msg):
    (tmp_path / "q").write_text(qtext)
    (tmp_path / "r").write_text(rtext)
    assert main(["ndeval", str(tmp_path / "q"), str(tmp_path / "r")]) == 2
    import re

    assert re.search(msg, capsys.readouterr().err)


def test_usage_and_topic_prefix(tmp_path, capsys):
    (tmp_path / "q").write_text("12 1 a 1\n")
    (tmp_path / "r").write_text("wt09-12 Q0 a 1 1 r\n")
    assert main(["ndeval", "-alpha", "2", str(tmp_path / "q"), str(tmp_path / "r")]) == 1
    assert capsys.readouterr().err.startswith("Usage: ndeval")
    assert main(["ndeval", str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("r,12,0.726172,")


NDEVAL_BIN = os.environ.get("UEFAST_NDEVAL_BIN")


@pytest.mark.skipif(not NDEVAL_BIN, reason="set UEFAST_NDEVAL_BIN to a compiled ndeval v4.5")
@pytest.mark.parametrize("opts", [[], ["-traditional"], ["-alpha", "0.3", "-beta", "0.7"],
                                  ["-M", "10"], ["-c"], ["-alpha", "0.1", "-traditional", "-M", "7"],
                                  ["-baseline", "BASE", "-riskAlpha", "1"], ["-c", "-baseline", "BASE"]])
def test_bytes_equal_ndeval_binary(trec2012, opts, capsys):
    q, rdir = trec2012
    opts = [str(rdir / "ql/results-cata-filtered.txt") if o == "BASE" else o for o in opts]
    for run in RUNS:
        want = subprocess.run([NDEVAL_BIN, *opts, str(q), str(rdir / run)], capture_output=True,
                              check=True).stdout.decode()
        assert main(["ndeval", *opts, str(q), str(rdir / run)]) == 0
        assert capsys.readouterr().out == want, (opts, run)


def _same_qrels(a, b):
    assert a.qids == b.qids
    assert all((x == y).all() for x, y in zip(a.docids, b.docids))
    for f in ("J", "roff", "m", "nrel", "idcg", "ierr", "inrbp"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


@pytest.mark.parametrize("seed", range(6))
def test_fast_qrels_reader_equals_general(tmp_path, seed):
    """The one-pass qrels reader builds the same arrays as read_qrels + compile_qrels."""
    qp, _, _, _ = _random_case(np.random.default_rng(100 + seed), tmp_path, seed)
    _same_qrels(read_ndeval_qrels(qp, fast=True), read_ndeval_qrels(qp, fast=False))


def test_fast_qrels_reader_equals_general_trec2012(trec2012):
    q, _ = trec2012
    _same_qrels(read_ndeval_qrels(q, fast=True), read_ndeval_qrels(q, fast=False))


def test_fast_run_reader_equals_general(tmp_path):
    for seed in range(6):
        qp, rp, _, _ = _random_case(np.random.default_rng(200 + seed), tmp_path, seed)
        nq = read_ndeval_qrels(qp)
        for depth_m in (0, 3):
            a = evaluate_ndeval_run(nq, read_ndeval_run(rp, depth_m=depth_m, nq=nq))
            b = evaluate_ndeval_run(nq, read_ndeval_run(rp, depth_m=depth_m))
            assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1], equal_nan=True)


def test_evaluate_api_equals_pyndeval(trec2012):
    """uefast.diversity.evaluate(ties="pyndeval") gives pyndeval's doubles for its measures."""
    from uefast.diversity import evaluate
    from uefast.io import read_run

    q, rdir = trec2012
    run = read_run(rdir / "ql/results-cata-filtered.txt")
    ms = ["alpha-nDCG@20", "ERR-IA@5", "nERR-IA@10", "NRBP", "nNRBP", "MAP-IA", "P-IA@20", "strec@10"]
    t = evaluate(run, q, ms, ties="pyndeval")
    qrows = _read_rows(q, "q")
    ev = pyndeval.RelevanceEvaluator([(str(a), f"{a}-{s:06d}", d, g) for a, s, d, g in sorted(qrows)],
                                     measures=ms)
    ref = ev.evaluate(list(zip(run["qid"].to_pylist(), run["docid"].to_pylist(), run["score"].to_pylist())))
    got = {(r["qid"], r["measure"]): r["value"] for r in t.to_pylist()}
    assert len(got) == 50 * len(ms)
    for (qid, mname), v in got.items():
        assert v == ref[qid][mname], (qid, mname)


def test_evaluate_every_qrels_query(tmp_path):
    from uefast.diversity import evaluate
    import pyarrow as pa

    q = tmp_path / "q"
    q.write_text("1 1 a 1\n2 1 b 1\n")
    t = evaluate(pa.table({"qid": ["1"], "docid": ["a"], "score": [1.0]}), q,
                 ["alpha-nDCG@5", "RBU@5", "S-RR", "EU"], queries="qrels")
    rows = {(r["qid"], r["measure"]): r for r in t.to_pylist()}
    assert rows[("2", "alpha-nDCG@5")]["value"] == 0.0 and rows[("2", "RBU@5")]["n_docs"] == 0
    assert rows[("1", "alpha-nDCG@5")]["value"] == 1.0


def _scan_reference(text: str, qdocs: dict) -> tuple:
    """Plain-Python reading of run lines under ndeval's rules: (topic, rank, judged row or -1)
    per line, None when a docno repeats within a topic."""
    out, seen = [], set()
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        t = int(f[0].rsplit("-", 1)[-1])
        if (t, f[2]) in seen:
            return None
        seen.add((t, f[2]))
        out.append((t, int(f[3]), qdocs.get((t, f[2]), -1)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_run_scan_tables(tmp_path, seed):
    """The one-pass run scan's per-topic duplicate table: blocks of thousands of lines (the table
    grows), topics whose lines are split over several blocks (the scan then falls back to one
    table for the file), a docno repeated only across two blocks of one topic (found), and
    docnos of every length against a plain-Python reading."""
    from uefast.diversity import _ndeval_scan as sc
    from uefast.diversity.ndeval_text import _scan_table
    from uefast.io._scan import read_bytes

    rng = np.random.default_rng(seed)
    names = [("x" * int(rng.integers(0, 30))) + f"d{k}" for k in range(6000)]
    qrows = [(t, 1, names[k], 1) for t in (3, 7) for k in rng.choice(6000, 300, replace=False)]
    qp = tmp_path / "q"
    qp.write_text("".join(f"{t} {s} {d} {g}\n" for t, s, d, g in qrows))
    nq = read_ndeval_qrels(qp)
    qdocs = {(int(q), d): i for q, docs in zip(nq.qids, nq.docids) for i, d in enumerate(docs)}
    lines = []
    for t, n in ((3, 5000), (7, 40), (9, 3000)):
        lines += [(t, names[k], r + 1) for r, k in enumerate(rng.choice(6000, n, replace=False))]
    if seed % 2:  # topics split into several blocks
        lines = [lines[j] for j in rng.permutation(len(lines))]
    if seed == 3:  # the same docno twice in topic 7, far apart
        lines.append((7, lines[[x[0] for x in lines].index(7)][1], 99999))
    if seed == 2:  # the same docno twice within topic 3's block, after the table grew
        lines.insert(4000, (3, lines[5][1], 99999))
    text = "".join(f"{t} Q0 {d} {r} 0.5 run\n" for t, d, r in lines)
    rp = tmp_path / "r"
    rp.write_text(text)
    tab, nm, local = _scan_table(nq)
    st, n, topic, rank, row, in_order, rs, re_ = sc.scan(read_bytes(rp), tab, nm, local, True)
    if st == sc.RESCAN:
        assert seed % 2
        st, n, topic, rank, row, in_order, rs, re_ = sc.scan(read_bytes(rp), tab, nm, local, False)
    ref = _scan_reference(text, qdocs)
    if ref is None:
        assert st == sc.FAIL
        return
    assert st == sc.OK and in_order == (seed % 2 == 0)
    assert list(zip(topic[:n].tolist(), rank[:n].tolist(), row[:n].tolist())) == ref
    nq.scan_table = None  # the table built from the docids gives the same rows
    tab2 = _scan_table(nq)
    st2, n2, _, _, row2, _, _, _ = sc.scan(read_bytes(rp), *tab2, False)
    assert st2 == sc.OK and np.array_equal(row2[:n2], row[:n])


@pytest.mark.parametrize("variant", ["crlf", "control", "utf8", "comments", "tabs"])
def test_fast_run_reader_odd_bytes(tmp_path, variant):
    """Files the word-at-a-time field scanner does not take as plain (a control byte in a docno:
    byte-by-byte fields; non-ASCII: the general reader) or that it must skip (blank and '#'
    lines, CRLF, tabs): the one-pass reader gives the general reader's result."""
    qp, rp, _, _ = _random_case(np.random.default_rng(300), tmp_path, 0)
    text = rp.read_text()
    qtext = qp.read_text()
    if variant == "crlf":
        text = text.replace("\n", "\r\n")
    elif variant == "control":
        text = text.replace("d0", "d\x070")
        qtext = qtext.replace("d0", "d\x070")
    elif variant == "utf8":
        text = text.replace("d1", "d\u00e91")
        qtext = qtext.replace("d1", "d\u00e91")
    elif variant == "comments":
        text = "# a comment\n\n" + text.replace("\n", "\n   \n", 3)
    else:
        text = text.replace(" ", "\t")
    rp.write_text(text)
    qp.write_text(qtext)
    from uefast.io._scan import read_bytes
    from uefast.io._words import _plain

    assert _plain(read_bytes(rp)) == (variant not in ("control", "utf8"))
    from uefast.diversity.ndeval_text import _read_fast

    nq = read_ndeval_qrels(qp)
    _same_qrels(nq, read_ndeval_qrels(qp, fast=False))
    assert (_read_fast(rp, 0, nq) is None) == (variant == "utf8")  # the scan takes the others
    a = evaluate_ndeval_run(nq, read_ndeval_run(rp, nq=nq))
    b = evaluate_ndeval_run(nq, read_ndeval_run(rp))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1], equal_nan=True)
    assert a[1].size and np.nansum(a[1]) > 0
