"""``uefast trec_eval`` where the run and the qrels cover different topics, and ``-c``'s sums.

Expected outputs are derived by hand from trec_eval's source (``trec_eval.c``, ``m_num_rel.c``,
``m_iprec_at_recall.c`` of 10.0 and 9.0.8) and were checked against the C binaries built from it
(tests/test_trec_eval_c_reference.py does that wherever the source is at hand).
"""
from __future__ import annotations

import contextlib
import io

import pytest

from uefast.cli import main as cli_main

# topic 1: a=1 b=0 c=2; topic 2: c=1 d=2 e=3; topic 3: f=0; topic 4: g=2 g2=1
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 c 1\n2 0 d 2\n2 0 e 3\n3 0 f 0\n4 0 g 2\n4 0 g2 1\n"


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli_main(["trec_eval", *argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    def write(run_text):
        q, r = tmp_path / "qrels", tmp_path / "run"
        q.write_text(QRELS)
        r.write_text(run_text)
        return str(q), str(r)
    return write


@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
@pytest.mark.parametrize("level", ["2", "3", "0"])
def test_complete_num_rel_summary_counts_qrels_lines_above_zero(files, version, level):
    """m_num_rel.c te_calc_avg_num_rel: with -c the summary num_rel is the number of qrels lines
    with rel > 0 over every qrels topic (2 + 3 + 0 + 2 = 7), whatever -l says; per topic it
    stays num_rel at level -l.  uefast summed the per-topic values at -l (4 at -l 2)."""
    q, r = files("1 Q0 a 1 3.0 r\n2 Q0 d 1 2.0 r\n3 Q0 f 1 1.0 r\n4 Q0 g 1 1.0 r\n")
    rc, out, _ = _cli(["-q", "-c", "-l", level, "-m", "num_rel", q, r, "--trec-eval-version", version])
    assert rc == 0
    per_level = {"2": [1, 2, 0, 1], "3": [0, 1, 0, 0], "0": [3, 3, 1, 2]}[level]
    want = "".join(f"num_rel               \t{t}\t{n}\n" for t, n in zip("1234", per_level))
    assert out == want + "num_rel               \tall\t7\n"


def test_v10_stops_at_a_qrels_topic_without_results(files):
    """trec_eval 10.0 without -c: the first qrels topic the run has nothing for (2) ends the
    program with exit status 4, after the per-topic lines of the topics before it."""
    q, r = files("1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n4 Q0 g2 1 1.0 r\n")
    rc, out, err = _cli(["-q", "-m", "map", q, r])
    assert (rc, out) == (4, "map                   \t1\t0.5000\n")  # a at 1, c not retrieved
    assert "qrels topic '2' has no results" in err and "not found in qrels" in err
    rc, out, _ = _cli(["-m", "map", q, r, "--format", "tsv"])
    assert (rc, out) == (4, "")


def test_v908_skips_qrels_topics_without_results(files):
    """trec_eval 9.0.8 averages over the topics with results: map (1 + 1/2) / 2."""
    q, r = files("1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n4 Q0 g2 1 1.0 r\n")
    rc, out, _ = _cli(["-q", "-m", "num_q", "-m", "map", q, r, "--trec-eval-version", "9.0.8"])
    assert rc == 0
    # topic 1: a (rel) at 1, c (rel) not retrieved: AP = 1/2; topic 4: g2 at 1 of g, g2: AP 1/2
    assert out == ("map                   \t1\t0.5000\nmap                   \t4\t0.5000\n"
                   "num_q                 \tall\t2\nmap                   \tall\t0.5000\n")


@pytest.mark.parametrize(("version", "status"), [("10.0", 4), ("9.0.8", 7)])
def test_no_common_topic_exit_status(files, version, status):
    """No topic in common: 10.0 stops at the first qrels topic (4), 9.0.8 reports 'No queries
    with both results and relevance info' (7); nothing on stdout."""
    q, r = files("7 Q0 a 1 2.0 r\n")
    rc, out, err = _cli(["-m", "map", q, r, "--trec-eval-version", version])
    assert (rc, out) == (status, "")
    assert "no topics with both results and relevance info" in err


def test_v10_complete_judged_only_unretrieved_topic_is_minus_nan(files):
    """trec_eval 10.0 with -c gives a topic without results a one-document ranking
    ("ceci_nest_pas_un_docno", unjudged), which -J then throws out: num_ret 0, and
    m_iprec_at_recall.c divides 0 by 0 for the cutoffs lround(f * num_rel) <= 0 (f = 0, .1 with
    num_rel 3 at topic 2): "-nan", also in the mean."""
    q, r = files("1 Q0 a 1 2.0 r\n3 Q0 f 1 1.0 r\n4 Q0 g 1 1.0 r\n")
    rc, out, _ = _cli(["-q", "-c", "-J", "-m", "iprec_at_recall..0,.1,.2", "-m", "num_ret", q, r])
    assert rc == 0
    lines = [ln.split("\t") for ln in out.splitlines()]
    got = {(m.strip(), t): v for m, t, v in lines}
    assert got[("num_ret", "2")] == "0"
    assert got[("iprec_at_recall_0.00", "2")] == got[("iprec_at_recall_0.10", "2")] == "  -nan"
    assert got[("iprec_at_recall_0.20", "2")] == "0.0000"  # lround(.6) = 1 > num_rel_ret 0
    assert got[("iprec_at_recall_0.00", "all")] == "  -nan"
    assert got[("iprec_at_recall_0.20", "all")] == "0.5000"  # (1 + 0 + 0 + 1) / 4


def test_sort_by_score_is_a_stable_descending_sort():
    """The run ranker's score sort (``_sort_by_score``, replacing NumPy's merge sort to compile
    less) orders rows as ``np.argsort(-score, kind="mergesort")``: equal scores, many of them
    here, keep their input order."""
    import numpy as np

    from uefast.io._topics import _sort_by_score

    rng = np.random.default_rng(5)
    for _ in range(300):
        m = int(rng.integers(0, 70))
        score = np.round(rng.random(80) * 4) / 4
        score[rng.random(80) < 0.1] = -0.0
        seg = rng.permutation(80)[:m].astype(np.int64)
        want = seg[np.argsort(-score[seg], kind="mergesort")]
        got = seg.copy()
        _sort_by_score(got, score, np.empty(m + 2, np.int64))
        np.testing.assert_array_equal(got, want)
