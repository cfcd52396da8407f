"""The one-pass scan-join-rank of a run file (:func:`uefast.io._fused.scan_rank_run`, taken by
``ScannedRun.read(...).prepare``) against the staged path (``ScannedRun.scan``: scan, group,
join, rank) and against the plain-Python reference of ``form_res_rels.c``: same ranked relevance
lists, and for every input the pass declines, the staged path's result or error."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uefast.errors import InputError
from uefast.io import _fast
from uefast.io._fused import scan_rank_run
from uefast.trec_eval import QrelsIndex, ScannedRun, evaluate_trec, evaluate_trec_files, format_text

from test_trec_fastpath import _reference, _write

DOCS = ([f"D{i}" for i in range(40)] + [f"DOC{i:05d}" for i in range(20)]
        + [f"ABCDEFGHIJKLMN{i:02d}" for i in range(20)] + [f"ABCDEFGHIJKLMNOP-{i}-tail" for i in range(30)])


def _fused(buf, qi, f32=False):
    return scan_rank_run(buf, f32, _fast._POW5, qi.t_data, qi.t_start, qi.t_end, qi.t_slots, qi.t_keys, qi.table,
                         qi.slot_start, qi.doc_data, qi.doc_start, qi.doc_end, qi.row_label)


def _grouped(seed: int, *, big: int = 0):
    """Qrels and a run whose topics each come as one block of lines (what the pass takes):
    topics in an order that is not strcmp order, one without qrels, labels from -7 to 1000, scores sorted or not, with
    ties and float32-only ties, short / 8- / 16-byte / long docnos, comments, blank lines, extra
    columns; ``big``: one more topic of that many lines (past the 1024-row scratch)."""
    rng = random.Random(seed)
    topics = [str(t) for t in rng.sample(range(5, 40), 8)] + ["x9", "100"]
    docs = DOCS + [f"B{i}" for i in range(big)]
    qrels = []
    for t in topics[1:]:
        for d in rng.sample(docs if t == "100" else DOCS, rng.randint(1, 40 if t != "100" else big + 1)):
            # labels past a table slot's relevance byte (252 is the last kept there) as well
            qrels.append(f"{t} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3] * 3 + [-7, 252, 253, 254, 1000])}")
    rng.shuffle(qrels)
    run = ["# a comment line", ""]
    for t in topics:  # topics[0] has no qrels
        n = big if t == "100" else rng.randint(1, 60)
        pool = docs if t == "100" else DOCS
        scores = [rng.choice([1.0, 2.0, 0.5, rng.random(), rng.uniform(-5, 5), 1.0000000001, 1.00000000001,
                              1 + 2 ** -30, rng.uniform(100, 101), -0.0, 0.0]) for _ in range(n)]
        if rng.random() < 0.6:
            scores.sort(reverse=True)
        for k, (d, score) in enumerate(zip(rng.sample(pool, n), scores)):
            s = rng.choice([repr(score), f"{score:.3f}", f"{score:.17g}", f"{score:e}"])
            sep = rng.choice([" ", "\t", "  ", " \t"])
            run.append(sep.join([t, "Q0", d, str(k), s, "sysA"]) + rng.choice(["", " extra", "\r", "", ""]))
        if rng.random() < 0.2:
            run.append("")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _staged_prepare(path, qi, **kw):
    return ScannedRun.scan(path).prepare(qi, **kw)


def _same_prepared(a, b):
    assert a.qids == b.qids
    assert a.rel.tolist() == b.rel.tolist()
    assert a.off.tolist() == b.off.tolist()
    assert a.bogus.tolist() == b.bogus.tolist()
    assert np.array_equal(a.rel_levels, b.rel_levels) and np.array_equal(a.nrl, b.nrl)


def _like_staged(rp, qi, opt):
    """``ScannedRun.read`` then ``prepare``: the staged path's result, or its error message."""
    try:
        want = _staged_prepare(rp, qi, **opt)
    except InputError as exc:
        with pytest.raises(InputError) as got:
            ScannedRun.read(rp).prepare(qi, **opt)
        assert str(got.value) == str(exc)
        return
    _same_prepared(ScannedRun.read(rp).prepare(qi, **opt), want)


OPTS = [dict(), dict(float32_scores=True), dict(max_docs=5), dict(judged_only=True),
        dict(complete=True, bogus_missing=True), dict(level=2)]


@pytest.mark.parametrize("seed,big", [(s, 0) for s in range(8)] + [(8, 2500), (9, 1025)])
def test_pass_taken_and_equal_to_reference_and_staged(tmp_path, seed, big):
    qtext, rtext = _grouped(seed, big=big)
    qp, rp = _write(tmp_path, "q.txt", qtext), _write(tmp_path, "r.txt.gz", rtext, gz=True)
    qi = QrelsIndex.from_file(qp)
    for f32 in (False, True):
        ok, rel, counts, rows, rs, re_, _ = _fused(_fast.read_bytes(rp), qi, f32)
        assert ok  # the pass took the file: the comparisons below test it, not the fallback
        assert rows == sum(1 for ln in rtext.splitlines() if ln.strip() and not ln.startswith("#"))
    for opt in OPTS:
        sr = ScannedRun.read(rp)
        got = sr.prepare(qi, **opt)
        assert sr.qs is None and sr.table is None  # no staged scan ran
        _same_prepared(got, _staged_prepare(rp, qi, **opt))
        if set(opt) <= {"float32_scores", "max_docs", "judged_only"}:
            want = _reference(rtext, qtext, float32=opt.get("float32_scores", False), max_docs=opt.get("max_docs"),
                              judged_only=opt.get("judged_only", False))
            assert (got.qids, got.rel.tolist(), got.off.tolist()) == want
        assert sr.runid == "sysA" and sr.num_rows == rows


@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_evaluate_trec_text_equal(tmp_path, version):
    qtext, rtext = _grouped(3)
    qp, rp = _write(tmp_path, "q.txt", qtext), _write(tmp_path, "r.txt", rtext)
    qi = QrelsIndex.from_file(qp)
    for opt in [dict(), dict(complete=True), dict(max_docs=9, judged_only=True)]:
        a = evaluate_trec(ScannedRun.read(rp), qi, ["all_trec"], version=version, **opt)
        b = evaluate_trec(ScannedRun.scan(rp), qi, ["all_trec"], version=version, **opt)
        assert format_text(a, per_query=True) == format_text(b, per_query=True)
    res = evaluate_trec_files(qp, [rp, rp], ["official"], workers=2, version=version)
    assert [format_text(r, per_query=True) for r in res] == \
        [format_text(evaluate_trec(ScannedRun.scan(rp), qi, ["official"], version=version), per_query=True)] * 2


QRELS = "1 0 a 1\n1 0 b 0\n2 0 a 2\n2 0 c -1\n10 0 z 1\n"


@pytest.mark.parametrize("text,why", [
    ("1 Q0 a 1 1.0 s\n2 Q0 a 1 1.0 s\n1 Q0 b 2 0.5 s\n", "a topic with qrels in two blocks"),
    ("1 Q0 a 1 1.0 s\n1 Q0 a 2 0.5 s\n", "a docno repeated in a topic"),
    ("1 Q0 zz 1 1.0 s\n1 Q0 a 2 0.7 s\n1 Q0 zz 2 0.5 s\n", "an unjudged docno repeated in a topic"),
    ("7 Q0 a 1 1.0 s\n7 Q0 a 2 0.5 s\n1 Q0 a 1 1.0 s\n", "a docno repeated in a topic without qrels"),
    ("1 Q0 a 1 inf s\n1 Q0 b 2 0.5 s\n", "a score Arrow parses"),
    ("1 Q0 a 1 0x1p3 s\n", "a score nobody parses"),
    ("1 Q0 a 1 nan s\n1 Q0 b 2 0.5 s\n", "a NaN score"),
    ("1 Q0 a 1 1.0\n", "too few fields"),
    ("1 Q0 a 1 1.0 s\n1 Q0 b\n", "too few fields, later"),
    ("1 Q0 d\u00e9 1 1.0 s\n", "non-ASCII"),
    ("1 Q0 a 1 1.0 s\x00\n", "a control byte"),
    ("", "an empty file"),
    ("# only a comment\n\n", "no content line"),
    ("1 Q0 a 1 1.0 s extra\n1 Q0 b 1 2.0 s\n", "extra columns (taken: trec_eval ignores them)"),
    ("10 Q0 z 1 1.0 s\n1 Q0 a 1 1.0 s\n2 Q0 c 2 3.0 s\n2 Q0 a 2 3.0 s\n", "topics out of strcmp order (taken)"),
])
def test_declined_or_odd_inputs_match_staged(tmp_path, text, why):
    qp, rp = _write(tmp_path, "q.txt", QRELS), _write(tmp_path, "r.txt", text)
    qi = QrelsIndex.from_file(qp)
    ok = _fused(_fast.read_bytes(rp), qi)[0]
    assert ok == ("(taken" in why), why
    for opt in [dict(), dict(float32_scores=True), dict(max_docs=1)]:
        _like_staged(rp, qi, opt)


def test_prepared_twice_with_other_precision(tmp_path):
    """A read run is scanned again for each prepare (float32 ties differ from float64 ones)."""
    qp = _write(tmp_path, "q.txt", "1 0 a 1\n1 0 b 0\n")
    rp = _write(tmp_path, "r.txt", "1 Q0 a 1 1.00000001 s\n1 Q0 b 2 1.0 s\n")
    qi = QrelsIndex.from_file(qp)
    sr = ScannedRun.read(rp)
    assert sr.prepare(qi).rel.tolist() == [1, 0]
    assert sr.prepare(qi, float32_scores=True).rel.tolist() == [0, 1]  # tied: docno descending
    assert sr.prepare(qi).rel.tolist() == [1, 0]


_line = st.tuples(st.sampled_from(["1", "2", "10", "7"]), st.sampled_from(DOCS[:12] + DOCS[-4:]),
                  st.sampled_from(["1", "1.0", "2", "0.5", "-0", "1e2", "100", "3.25", "1.00000001"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_line, min_size=1, max_size=40), sort_topics=st.booleans())
def test_hypothesis_same_as_staged(tmp_path, lines, sort_topics):
    if sort_topics:  # mostly blocks (taken), otherwise interleaved topics (declined)
        lines = sorted(lines, key=lambda x: x[0])
    qtext = "".join(f"{t} 0 {d} {k % 3 - (k % 7 == 0)}\n" for k, (t, d) in
                    enumerate((t, d) for t in ["1", "2", "10"] for d in DOCS[::3]))
    rtext = "".join(f"{t} Q0 {d} {k} {s} run\n" for k, (t, d, s) in enumerate(lines))
    qp, rp = _write(tmp_path, "q.txt", qtext), _write(tmp_path, "r.txt", rtext)
    qi = QrelsIndex.from_file(qp)
    for opt in [dict(), dict(float32_scores=True)]:
        _like_staged(rp, qi, opt)


@pytest.mark.parametrize("text,taken", [
    ("1 Q0 a 1 1.0 s\n1 Q0  b 2 0.5 s\n", True),        # a separator more after Q0
    ("1 Q0 a 1 1.0 s\n1 Q0 \tb 2 0.5 s\n", True),
    ("1 Q0 a 1 1.0 s\n1 Q0 b 2 0.5  s\n", True),        # ... before the runid
    ("1 Q0 a 1 1.0 s\n1 Q0 b 2 0.5 s2\n", True),        # a longer runid
    ("1 Q0 a 1 1.0 s2\n1 Q0 b 2 0.5 s\n", True),        # a shorter one
    ("1 Q0 a 1 1.0 s\n1 Q0 b 2 0.5 s x\n1 Q0 c 3 0.2 s\n", True),  # extra columns, then none
    ("1 Q0 a 1 1.0 s\n1 Q0 b 2 0.5 s", True),            # no final newline
    ("1 Q0 a 1 1.0 s\r\n1 Q0 b 2 0.5 s\r\n1 Q0 c 3 0.2 s\n", True),
    ("1 Q0 a 1 1.0 s\n\n1 Q0 b 2 0.5 s\n# c\n1 Q0 c 3 0.2 s\n", True),
    ("1 Q0 a 1 1.0 s\n 1 Q0 b 2 0.5 s\n", True),        # a leading blank
    ("1 Q0 a 1 1.0 s\n10 Q0 b 2 0.5 s\n", True),        # a longer qid: a new topic
    ("10 Q0 a 1 1.0 s\n1 Q0 b 2 0.5 s\n", True),
    ("1 Q0 a 1 1.0 s\n1 Q0 \n", False),                 # the docno missing
    ("1 Q0 a 1 1.0 s\n1 Q0 b 2\n", False),              # the score missing
    ("1 Q0 a 1 1.0 s\n1 Q0 b 2 0.5\n", False),          # the runid missing
    ("1 Q0 a 1 1.0 s\n1 Q0 a 2 0.5 s\n", False),        # a repeat
])
def test_repeated_prefix_and_suffix_cases(tmp_path, text, taken):
    """Lines that nearly repeat the previous line's ``qid Q0`` prefix or its suffix after the
    score (the bytes the line loop skips by comparison) are parsed as the staged path parses
    them."""
    qp, rp = _write(tmp_path, "q.txt", QRELS), _write(tmp_path, "r.txt", text)
    qi = QrelsIndex.from_file(qp)
    assert _fused(_fast.read_bytes(rp), qi)[0] == taken
    for opt in [dict(), dict(max_docs=1)]:
        _like_staged(rp, qi, opt)


_piece = st.sampled_from(["1", "10", "1 ", "Q0", "Q0 ", "Q", "a", "DOC00001", "ABCDEFGHIJKLMN01", "2.5",
                           "1.0", "-3", " run", "\trun", " run x", " run\r", "run", " ", "\t", "  ", "#"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.tuples(st.sampled_from(["1", "10"]), st.sampled_from([" ", "\t", "  "]),
                      st.sampled_from([" run\n", "\trun\n", " run x\n", " run\r\n"])),
       lines=st.lists(st.tuples(st.sampled_from(DOCS[:6] + DOCS[-3:]), st.sampled_from(["1", "2.5", "0.75", "-3"]),
                                st.integers(0, 9), st.lists(_piece, max_size=3)), min_size=1, max_size=30),
       last_newline=st.booleans())
def test_hypothesis_repeated_prefix_and_suffix(tmp_path, base, lines, last_newline):
    """The line loop skips a line's ``qid Q0`` prefix and its suffix after the score when they
    repeat an earlier line's bytes: lines that repeat them, nearly repeat them (a separator more,
    a longer qid, another runid, extra columns, a CR) or break them (random pieces spliced in),
    with or without a final newline, give the staged path's result or error."""
    qid, sep, suffix = base
    out = []
    for d, score, how, junk in lines:
        q, sfx = qid, suffix
        if how == 1:
            q = qid + "0"
        elif how == 2:
            sfx = sep + suffix
        elif how == 3:
            sfx = "".join(junk) + "\n"
        parts = [q, "Q0", d, "7", score]
        if how == 4 and junk:
            parts.insert(len(junk) % 5, "".join(junk))
        out.append((sep * 2 if how == 5 else sep).join(parts) + sfx)
    rtext = "".join(out)
    if not last_newline:
        rtext = rtext.rstrip("\n")
    qtext = "".join(f"{t} 0 {d} {k % 3}\n" for k, (t, d) in enumerate((t, d) for t in ["1", "10"] for d in DOCS[::2]))
    qp, rp = _write(tmp_path, "q.txt", qtext), _write(tmp_path, "r.txt", rtext)
    qi = QrelsIndex.from_file(qp)
    _like_staged(rp, qi, dict())


def _tie_sort_is_stable_strcmp_order(docs):
    """``_topics._sort_ties`` of rows 0..n-1 with these docnos (by packed words, and by bytes
    alone) gives Python's stable sort by bytes, descending."""
    from uefast.io._hashtab import dkey_rows
    from uefast.io._topics import _sort_ties

    data = np.frombuffer(b"".join(docs) + b"x", np.uint8)  # a byte after the last docno
    ends = np.cumsum([len(d) for d in docs]).astype(np.int64)
    starts = ends - np.array([len(d) for d in docs], np.int64)
    _, w0, w1 = dkey_rows(data, starts, ends)
    want = sorted(range(len(docs)), key=lambda i: docs[i], reverse=True)
    for words in [(w0, w1), (np.zeros(0, np.uint64), np.zeros(0, np.uint64))]:
        seg = np.arange(len(docs), dtype=np.int64)
        _sort_ties(seg, np.empty(len(docs), np.int64), data, starts, ends, *words)
        assert seg.tolist() == want


@settings(max_examples=200, deadline=None)
@given(docs=st.lists(st.sampled_from(b"\x00AZz"), max_size=17).map(bytes).flatmap(  # a shared prefix
    lambda pre: st.lists(st.lists(st.sampled_from(b"\x00AZz"), min_size=1, max_size=6).map(lambda b: pre + bytes(b)),
                         min_size=1, max_size=40, unique=True)))
def test_tie_sort_by_words_is_strcmp_order(docs):
    """The tie sort's packed-word comparison (``_topics._cmpw``) orders docnos as their bytes do,
    NUL bytes, shared 16-byte prefixes and prefixes of each other included."""
    _tie_sort_is_stable_strcmp_order(docs)


@settings(max_examples=300, deadline=None)
@given(docs=st.lists(st.sampled_from([b"A", b"B", b"AB", b"LA01-0001", b"LA01-0002", b"FBIS3-10", b"FBIS3-9",
                                      b"ABCDEFGHIJKLMNOPQ1", b"ABCDEFGHIJKLMNOPQ2", b"ABCDEFGHIJKLMNOP"]),
                     max_size=60),
       chunks=st.lists(st.tuples(st.integers(1, 20), st.sampled_from(["asc", "desc", "as is"])), max_size=6))
def test_tie_sort_of_runs_is_stable_strcmp_order(docs, chunks):
    """The natural merge sort of tied rows: groups made of ascending, descending and unordered
    runs, repeated docnos among them, come out in docno-descending order, equal docnos in their
    original order (Python's stable sort)."""
    out, rest = [], list(docs)
    for size, how in chunks:
        part, rest = rest[:size], rest[size:]
        out += sorted(part) if how == "asc" else sorted(part, reverse=True) if how == "desc" else part
    docs = out + rest
    _tie_sort_is_stable_strcmp_order(docs)


@pytest.mark.parametrize("run_text", ["1 Q0 a 1 x r\n", "", "1 Q0 a 1\n"])
@pytest.mark.parametrize("bad", [dict(measures=["nosuch"]), dict(measures=["P.abc"]), dict(version="8")])
def test_run_errors_before_option_errors(tmp_path, capsys, run_text, bad):
    """The run is scanned when prepared, after the options are checked; a bad run file is still
    the error reported, as when it was scanned on reading (helper review finding)."""
    from uefast.cli import main

    qp, rp = _write(tmp_path, "q.txt", QRELS), _write(tmp_path, "r.txt", run_text)
    with pytest.raises(InputError) as want:
        ScannedRun.scan(rp)
    kw = dict(bad)
    measures = kw.pop("measures", ["official"])
    for call in [lambda: evaluate_trec(rp, qp, measures, **kw),
                 lambda: evaluate_trec(ScannedRun.read(rp), QrelsIndex.from_file(qp), measures, **kw),
                 lambda: evaluate_trec_files(qp, [rp, rp], measures, workers=1, **kw),
                 lambda: evaluate_trec_files(qp, [rp, rp], measures, workers=2, **kw)]:
        with pytest.raises(InputError) as got:
            call()
        assert str(got.value) == str(want.value)
    if "measures" in bad:
        assert main(["trec_eval", "-m", measures[0], str(qp), str(rp)]) == 2
        assert str(want.value) in capsys.readouterr().err


@pytest.mark.slow  # ~12 s cold: the staged readers' strided-buffer (layout "A") variants
def test_strided_buffer_takes_the_staged_path(tmp_path):
    """The one-pass scan loads 8-byte words from a contiguous buffer: a strided one (same bytes)
    goes to the staged path, with the same result (slow: compiles the staged readers for a
    strided buffer, which only this test passes them)."""
    qtext, rtext = _grouped(3)
    qp, rp = _write(tmp_path, "q.txt", qtext), _write(tmp_path, "r.txt", rtext)
    qi = QrelsIndex.from_file(qp)
    want = ScannedRun.read(rp).prepare(qi)
    sr = ScannedRun.read(rp)
    wide = np.zeros(2 * sr.buf.size, np.uint8)
    wide[::2] = sr.buf
    sr.buf = wide[::2]
    assert not sr.buf.flags.c_contiguous
    _same_prepared(sr.prepare(qi), want)
    assert sr._staged()
