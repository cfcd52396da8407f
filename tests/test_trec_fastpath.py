"""The fused fast path (``ScannedRun`` / ``QrelsIndex.from_file``) against the general Arrow path:
same results on tricky inputs, same errors (it falls back to the general readers for anything odd),
and a correctly rounded float parser."""
from __future__ import annotations

import gzip
import random
import re
import struct

import numpy as np
import pytest

from uefast.errors import InputError
from uefast.io import _fast, read_qrels, read_run
from uefast.trec_eval import QrelsIndex, ScannedRun, evaluate_trec, evaluate_trec_files, format_text


def _write(tmp_path, name, text, gz=False):
    p = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    p.write_bytes(gzip.compress(data) if gz else data)
    return p


def _synthetic(seed: int):
    rng = random.Random(seed)
    topics = [str(t) for t in rng.sample(range(11, 60), 12)] + ["x9", "10", "1"]
    # docnos: short, exactly 8 / 16 bytes, long ones sharing 16-byte prefixes (byte-verify path)
    docs = [f"D{i}" for i in range(40)] + [f"DOC{i:05d}" for i in range(20)]
    docs += [f"ABCDEFGHIJKLMN{i:02d}" for i in range(20)] + [f"ABCDEFGHIJKLMNOP-{i}-tail" for i in range(30)]
    qrels, run = [], []
    for t in topics[:-2]:
        for d in rng.sample(docs, rng.randint(3, 40)):
            qrels.append(f"{t} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
    rng.shuffle(qrels)
    for t in topics[2:]:
        n = rng.randint(1, 60)
        for k, d in enumerate(rng.sample(docs, n)):
            score = rng.choice([1.0, 2.0, 0.5, rng.random(), rng.uniform(-5, 5), 1.0000000001, 1.00000000001,
                                rng.uniform(100, 101)])
            s = rng.choice([repr(score), f"{score:.3f}", f"{score:.17g}", f"{score:e}"])
            sep = rng.choice([" ", "\t", "  ", " \t"])
            run.append(sep.join([t, "Q0", d, str(k), s, "sysA"]) + rng.choice(["", " extra", "\r"]))
    rng.shuffle(run)
    run.insert(3, "# a comment line")
    run.insert(5, "")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


OPTIONS = [dict(), dict(version="9.0.8"), dict(max_docs=7), dict(judged_only=True), dict(complete=True),
           dict(complete=True, version="9.0.8"), dict(relevance_level=2), dict(max_docs=0)]


@pytest.mark.parametrize("seed", range(6))
def test_fast_path_equals_arrow_path(tmp_path, seed):
    qtext, rtext = _synthetic(seed)
    qp = _write(tmp_path, "q.txt", qtext)
    rp = _write(tmp_path, "r.txt.gz", rtext, gz=True)
    qi_fast = QrelsIndex.from_file(qp)
    scanned = ScannedRun.scan(rp)
    assert scanned.table is None  # took the fast path
    qt = read_qrels(qp)
    rt = read_run(rp, extra_columns="ignore")
    for opt in OPTIONS:
        a = evaluate_trec(scanned, qi_fast, ["all_trec"], **opt)
        b = evaluate_trec(rt, qt, ["all_trec"], **opt)
        assert format_text(a, per_query=True) == format_text(b, per_query=True), opt
    files = evaluate_trec_files(qp, [rp, rp], ["official"], workers=2)
    assert [format_text(r, per_query=True) for r in files] == \
        [format_text(evaluate_trec(rt, qt, ["official"]), per_query=True)] * 2


def _same_error(fast, general):
    with pytest.raises(InputError) as e1:
        fast()
    with pytest.raises(InputError) as e2:
        general()
    assert str(e1.value) == str(e2.value)
    return str(e1.value)


@pytest.mark.parametrize(
    "text",
    [
        "301 Q0 d1 1 2.5\n",
        "301 Q0 d1 1 2.5 s\n301 Q0 d2 2 abc s\n",
        "301 Q0 d1 1 2.5e s\n",
        "301 Q0 d1 1 0x1p3 s\n",
        "\n# only a comment\n",
        "",
        b"301 Q0 d\xff 1 2.5 s\n",
    ],
)
def test_run_errors_identical(tmp_path, text):
    p = _write(tmp_path, "run.txt", text)
    _same_error(lambda: ScannedRun.scan(p), lambda: read_run(p, extra_columns="ignore", ranks="ignore"))


@pytest.mark.parametrize("text", ["301 Q0 d1 1 2.5 s\n302 Q0 d1 1 2.5 s\n301 Q0 d1 2 1.0 s\n",
                                  "301 Q0 d\xe9 1 2.5 s\n301 Q0 d\xe9 2 1.5 s\n"])
def test_run_repeated_docno_left_to_the_evaluation(tmp_path, text):
    """A repeated docno is judged where trec_eval judges it (among the first -M documents of an
    evaluated topic, :func:`uefast.trec_eval.prepare.prepare`): the scan keeps every row."""
    p = _write(tmp_path, "run.txt", text)
    with pytest.raises(InputError, match="repeated"):
        read_run(p, extra_columns="ignore", ranks="ignore")
    assert ScannedRun.scan(p).num_rows == 3 if "302" in text else 2
    q = _write(tmp_path, "qrels.txt", "301 0 x 1\n")
    with pytest.raises(InputError, match=r"retrieved twice for topic '301' \(trec_eval: \"duplicate docs\"\)"):
        evaluate_trec(p, q, ["map"])
    assert evaluate_trec(p, q, ["num_ret"], max_docs=1).slots[0].summary == 1


def test_run_missing_file(tmp_path):
    p = tmp_path / "nope.txt"
    _same_error(lambda: ScannedRun.scan(p), lambda: read_run(p, extra_columns="ignore", ranks="ignore"))


@pytest.mark.parametrize(
    "text",
    [
        "301 0 d1 x\n",
        "301 0 d1 0.5\n",
        "301 0 d1\n",
        "301 0 d1 1 x\n",
        "# nothing\n",
        b"301 0 d\xff 1\n",
    ],
)
def test_qrels_errors_identical(tmp_path, text):
    p = _write(tmp_path, "q.txt", text)
    _same_error(lambda: QrelsIndex.from_file(p), lambda: QrelsIndex.build(read_qrels(p)))


@pytest.mark.parametrize("doc", ["d1", "d\u00e9"])  # fast scan, and the general reader (non-ASCII)
def test_qrels_judged_twice_refused_only_in_an_evaluated_topic(tmp_path, doc):
    """trec_eval's form_res_rels.c looks for a docno judged twice only in the topic it is
    evaluating: the same here, with read_qrels's error (file, both lines, the subtopic hint)."""
    q = _write(tmp_path, "q.txt", f"301 0 {doc} 1\n301 1 {doc} 0\n302 0 x 1\n")
    r302 = _write(tmp_path, "r302.txt", "302 Q0 x 1 1.0 s\n")
    r301 = _write(tmp_path, "r301.txt", "301 Q0 y 1 1.0 s\n302 Q0 x 1 1.0 s\n")
    assert evaluate_trec(r302, q, ["num_rel"]).slots[0].summary == 1
    with pytest.raises(InputError) as e:
        read_qrels(q)
    for run in (r301, r302):  # r302 with -c (trec_eval 10 evaluates topic 301 too)
        with pytest.raises(InputError) as e2:
            evaluate_trec(run, q, ["num_rel"], complete=run == r302)
        assert str(e2.value) == str(e.value)
        assert f"{q}:2: docno judged twice" in str(e.value) and "diversity (subtopic)" in str(e.value)
    evaluate_trec(r302, q, ["num_rel"], complete=True, version="9.0.8")  # 9.0.8 -c: 301 only counted
    with pytest.raises(InputError, match=f"qrels: topic '301' judges docno '{doc}' twice"):
        evaluate_trec(r301, read_qrels(q, duplicates="keep"), ["num_rel"])


def test_qrels_integral_decimal_labels(tmp_path):
    """Labels written as "+1", "1.0" or "2.00" are those integers on both paths (trec_eval's atol
    reads them so); the evaluation equals the one with plain integers."""
    qp = _write(tmp_path, "q.txt", "1 0 a +1\n1 0 b 0.0\n1 0 c 2.00\n1 0 d -1.0\n")
    plain = _write(tmp_path, "p.txt", "1 0 a 1\n1 0 b 0\n1 0 c 2\n1 0 d -1\n")
    assert read_qrels(qp)["label"].to_pylist() == [1, 0, 2, -1]
    rp = _write(tmp_path, "r.txt", "1 Q0 a 1 3 s\n1 Q0 b 2 2 s\n1 Q0 c 3 1 s\n1 Q0 e 4 0 s\n")
    want = format_text(evaluate_trec(rp, plain, ["all_trec"]), per_query=True)
    assert format_text(evaluate_trec(rp, qp, ["all_trec"]), per_query=True) == want


@pytest.mark.parametrize(
    "run_text",
    [
        # numbers the fused parser leaves to Arrow: inf, 25 significant digits, hex rank, 1e400
        "1 Q0 a 0x10 inf s\n1 Q0 b 007 1.2345678901234567890123456 s\n1 Q0 c -0 1e400 s\n1 Q0 d 1 -inf s\n",
        # NaN scores: general path (its ordering)
        "1 Q0 a 1 nan s\n1 Q0 b 2 1.0 s\n1 Q0 c 3 nan s\n",
        # non-ASCII (valid UTF-8) docnos and qids: general path
        "1 Q0 \u00e9a 1 1.0 s\n1 Q0 \u00e9b 2 1.0 s\n\u00e9 Q0 a 1 1 s\n",
        # the same (topic, docno) under two runids: read_run accepts it, prepare's -M check decides
        "1 Q0 a 1 3.0 s\n1 Q0 b 2 2.0 s\n1 Q0 c 3 1.0 s\n1 Q0 c 4 0.5 t\n",
        # long docnos sharing a 16-byte prefix, ties broken by docno
        "1 Q0 ABCDEFGHIJKLMNOPq 1 1.0 s\n1 Q0 ABCDEFGHIJKLMNOPr 2 1.0 s\n1 Q0 ABCDEFGHIJKLMNOP 3 1.0 s\n",
        # ranks trec_eval never reads: any token, on the fast and on the general path
        "1 Q0 a 1.0 3.0 s\n1 Q0 b - 2.0 s\n1 Q0 c x 1.0 s\n",
        "1 Q0 \u00e9a 1.0 3.0 s\n1 Q0 b - 2.0 s\n1 Q0 c 99999999999999999999999 1.0 s\n",
    ],
)
@pytest.mark.parametrize("opt", [dict(), dict(max_docs=3), dict(version="9.0.8")])
def test_fallbacks_give_the_general_results(tmp_path, run_text, opt):
    qp = _write(tmp_path, "q.txt", "1 0 a 1\n1 0 c 1\n1 0 ABCDEFGHIJKLMNOPr 1\n1 0 \u00e9b 1\n\u00e9 0 a 1\n")
    rp = _write(tmp_path, "r.txt", run_text)
    rt = read_run(rp, extra_columns="ignore", ranks="ignore")
    try:
        b = format_text(evaluate_trec(rt, read_qrels(qp), ["all_trec"], **opt), per_query=True)
    except InputError as exc:
        with pytest.raises(InputError) as e1:
            evaluate_trec(rp, qp, ["all_trec"], **opt)
        # the same error; from a file it names the file, line and text where the table gives "run"
        m = re.fullmatch(re.escape(str(rp)) + r":\d+: (.*?)(, first seen at line \d+)?: '[^']*'", str(e1.value))
        assert m and f"run: {m.group(1)}" == str(exc), str(e1.value)
        return
    assert format_text(evaluate_trec(rp, qp, ["all_trec"], **opt), per_query=True) == b


def test_float_parser_correctly_rounded():
    rng = random.Random(7)
    strs = []
    for _ in range(20000):
        k = rng.random()
        if k < 0.3:
            s = repr(rng.uniform(-1000, 1000))
        elif k < 0.5:
            s = repr(struct.unpack("d", struct.pack("Q", rng.getrandbits(63)))[0])
            if "n" in s:
                continue
        elif k < 0.8:
            nd = rng.randint(1, 19)
            s = "".join(rng.choice("0123456789") for _ in range(nd))
            p = rng.randint(0, nd)
            s = s[:p] + "." + s[p:] + rng.choice(["", f"e{rng.randint(-340, 320)}"])
        else:  # exact halfway cases between two doubles
            nb = rng.randint(1, 53)
            m = rng.getrandbits(nb) | (1 << (nb - 1))
            s = str((2 * m + 1) << rng.randint(0, 10))
            if len(s) > 19:
                continue
        strs.append(s)
    strs += ["0", "-0", "0.0", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
             "1.7976931348623157e308", "1.7976931348623159e308", "9007199254740993", "5.", "+.5", "1e-400"]
    data = np.frombuffer("\n".join(strs).encode(), np.uint8)
    lens = np.array([len(s) for s in strs])
    starts = np.concatenate(([0], np.cumsum(lens + 1)[:-1]))
    ok, v = _fast.parse_float_bytes(data, starts, starts + lens)
    assert ok.all()
    ref = np.array([float(s) for s in strs])
    assert (v.view(np.uint64) == ref.view(np.uint64)).all()


@pytest.mark.parametrize("extra", ["error", "ignore"])
@pytest.mark.parametrize("seed", range(3))
def test_read_run_fused_equals_general(tmp_path, monkeypatch, seed, extra):
    from uefast.io import trec

    _, rtext = _synthetic(seed)
    if extra == "error":
        rtext = rtext.replace(" extra", "")
    rtext += "x1 Q0 a 0000000000000000000016 inf other\nx1 Q0 b 007 nan other\nx1 Q0 c -3 1.2345678901234567890123 other\n"
    p = _write(tmp_path, "r.txt", rtext)
    fast = trec._read_run_fast(p, None, extra)
    assert fast is not None
    monkeypatch.setattr(trec, "_read_run_fast", lambda *a: None)
    for system in (None, "S"):
        general = read_run(p, system=system, extra_columns=extra)
        monkeypatch.undo()
        fast = read_run(p, system=system, extra_columns=extra)
        monkeypatch.setattr(trec, "_read_run_fast", lambda *a: None)
        for col in ("qid", "docid", "system", "rank"):
            assert fast[col].equals(general[col]), col
        assert (fast["score"].to_numpy().view(np.uint64) == general["score"].to_numpy().view(np.uint64)).all()
        assert fast.schema == general.schema


def _reference(run_text, qrels_text, *, float32=False, max_docs=None, judged_only=False):
    """trec_eval's ranked relevance lists, in plain Python (form_res_rels.c semantics)."""
    judged = {}
    for line in qrels_text.splitlines():
        q, _, d, lab = line.split()
        judged[(q, d)] = int(lab)
    topics = sorted({q for q, _ in judged}, key=str.encode)
    rows: dict[str, list] = {}
    for line in run_text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        s = float(f[4])
        if float32:
            s = float(np.float32(s))
        rows.setdefault(f[0], []).append((s, f[2]))
    qids, rel, off = [], [], [0]
    for t in topics:
        if t not in rows:
            continue
        r = sorted(rows[t], key=lambda x: x[1].encode(), reverse=True)
        r.sort(key=lambda x: -x[0])
        r = r[:max_docs] if max_docs is not None else r
        vals = [-1 if (t, d) not in judged else (-2 if judged[(t, d)] < 0 else judged[(t, d)]) for _, d in r]
        if judged_only:
            vals = [v for v in vals if v >= 0]
        qids.append(t)
        rel.extend(vals)
        off.append(len(rel))
    return qids, rel, off


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("opt", [dict(), dict(float32=True), dict(max_docs=5), dict(judged_only=True)])
def test_prepare_matches_python_reference(tmp_path, seed, opt):
    from uefast.trec_eval.prepare import prepare

    qtext, rtext = _synthetic(seed)
    qp, rp = _write(tmp_path, "q.txt", qtext), _write(tmp_path, "r.txt", rtext)
    want = _reference(rtext, qtext, **opt)
    kw = dict(float32_scores=opt.get("float32", False), max_docs=opt.get("max_docs"),
              judged_only=opt.get("judged_only", False))
    for run, qi in [(ScannedRun.scan(rp), QrelsIndex.from_file(qp)),
                    (read_run(rp, extra_columns="ignore"), QrelsIndex.build(read_qrels(qp)))]:
        got = prepare(run, qi, **kw)
        assert (got.qids, got.rel.tolist(), got.off.tolist()) == want


@pytest.mark.parametrize("workers", [1, 2])
def test_evaluate_trec_files_error_order(tmp_path, workers):
    """The qrels are indexed while the first runs are scanned (workers > 1); a bad qrels file is
    still the error reported, before any bad run, and a bad run is named when the qrels are fine."""
    qtext, rtext = _synthetic(0)
    good_q = _write(tmp_path, "q.txt", qtext)
    bad_q = _write(tmp_path, "bad_q.txt", "1 0 d1 1\n2 0 d2 x\n")
    good_r = _write(tmp_path, "r.txt", rtext)
    bad_r = _write(tmp_path, "bad_r.txt", "1 Q0 d1 1 1.0\n")
    with pytest.raises(InputError, match="bad_q.txt"):
        evaluate_trec_files(bad_q, [bad_r, good_r], ["official"], workers=workers)
    with pytest.raises(InputError, match="bad_r.txt"):
        evaluate_trec_files(good_q, [good_r, bad_r], ["official"], workers=workers)
    # larger files are processed first; still the first bad file in the list is the one named
    big_bad = _write(tmp_path, "big_bad.txt", rtext + "1 Q0 d1 1\n")
    with pytest.raises(InputError, match="bad_r.txt"):
        evaluate_trec_files(good_q, [good_r, bad_r, big_bad], ["official"], workers=workers)
    with pytest.raises(InputError, match="big_bad.txt"):
        evaluate_trec_files(good_q, [big_bad, bad_r], ["official"], workers=workers)
    res = evaluate_trec_files(good_q, [good_r, good_r], ["official"], workers=workers)
    ref = evaluate_trec(read_run(good_r, extra_columns="ignore"), read_qrels(good_q), ["official"])
    assert [format_text(r, per_query=True) for r in res] == [format_text(ref, per_query=True)] * 2


def test_run_without_judged_topics_is_named(tmp_path):
    """evaluate_trec_files with one run of another track failed without saying which."""
    q = _write(tmp_path, "q.txt", "301 0 a 1\n")
    ok = _write(tmp_path, "ok.txt", "301 Q0 a 1 1.0 s\n")
    other = _write(tmp_path, "other.txt", "999 Q0 a 1 1.0 s\n")
    with pytest.raises(InputError, match=r"other.txt: no topics with both results and relevance info"):
        evaluate_trec_files(q, [ok, other], ["map"])


@pytest.mark.parametrize("seed", range(3))
def test_qrels_grouped_by_topic_same_as_shuffled(tmp_path, seed):
    """A qrels file that lists topics together in byte order is indexed without regrouping (its
    docnos stay in the file's buffer); the results are those of the same lines shuffled."""
    qtext, rtext = _synthetic(seed)
    grouped = "".join(sorted(qtext.splitlines(keepends=True), key=lambda line: line.split()[0].encode()))
    qs = _write(tmp_path, "shuffled.txt", qtext)
    qg = _write(tmp_path, "grouped.txt", grouped)
    rp = _write(tmp_path, "r.txt", rtext)
    qi_s, qi_g = QrelsIndex.from_file(qs), QrelsIndex.from_file(qg)
    assert qi_g.doc_data.size == len(grouped.encode())  # the file's own buffer: not regrouped
    assert qi_s.doc_data.size < len(qtext.encode())     # regrouped: the docnos only
    for opt in OPTIONS:
        got = [format_text(evaluate_trec(ScannedRun.read(rp), qi, ["all_trec"], **opt), per_query=True)
               for qi in (qi_s, qi_g)]
        assert got[0] == got[1]
