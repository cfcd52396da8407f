"""Readers for TREC runs, qrels and LETOR files: formats, gzip, and error messages."""
from __future__ import annotations

import gzip

import numpy as np
import pytest

from uefast.errors import InputError
from uefast.io import read_letor, read_qrels, read_run

RUN = (
    "# trec_eval 10 comment line\n"
    "301 Q0 d1 1 2.5 sysA\n"
    "301\tQ0\td2\t2\t  1.25\tsysA\n"
    "\n"
    "302  Q0  d1   1  -3e-1 sysA\r\n"
)


def _write(tmp_path, name, text, gz=False):
    p = tmp_path / name
    data = text.encode()
    p.write_bytes(gzip.compress(data) if gz else data)
    return p


@pytest.mark.parametrize("gz", [False, True])
def test_read_run_mixed_whitespace_comments_gzip(tmp_path, gz):
    t = read_run(_write(tmp_path, "run.txt", RUN, gz))
    assert t.column_names == ["qid", "docid", "score", "system", "rank"]
    assert t["qid"].to_pylist() == ["301", "301", "302"]
    assert t["docid"].to_pylist() == ["d1", "d2", "d1"]
    np.testing.assert_array_equal(t["score"].to_numpy(), [2.5, 1.25, -0.3])
    assert t["system"].to_pylist() == ["sysA"] * 3
    assert t["rank"].to_pylist() == [1, 2, 1]


def test_read_run_several_files_system_column(tmp_path):
    a = _write(tmp_path, "a.run", "1 Q0 x 1 1.0 A\n")
    b = _write(tmp_path, "b.run", "1 Q0 x 1 2.0 B\n")
    t = read_run([a, b])
    assert t["system"].to_pylist() == ["A", "B"]
    t = read_run([a, b], system=["s1", "s2"])
    assert t["system"].to_pylist() == ["s1", "s2"]
    with pytest.raises(InputError, match="also used by"):
        read_run([a, _write(tmp_path, "c.run", "1 Q0 y 1 2.0 A\n")])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("301 Q0 d1 1 2.5\n", r"run.txt:1: expected 6 whitespace-separated fields .* got 5: '301 Q0 d1 1 2.5'"),
        ("301 Q0 d1 1 2.5 s\n301 Q0 d2 2 abc s\n", r"run.txt:2: score 'abc' is not a number: '301 Q0 d2 2 abc s'"),
        ("301 Q0 d1 1 2.5 s\n301 Q0 d1 2 1.0 s\n", r"run.txt:2: docno repeated within a topic .*run.txt:1\)"),
        ("301 Q0 d1 x 2.5 s\n", r"run.txt:1: rank 'x' is not an integer"),
        ("\n# only a comment\n", r"run.txt: empty file"),
        ("301 Q0 d1 1 2.5 s junk\n", r"got 7"),
    ],
)
def test_read_run_errors_name_file_line_text(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        read_run(_write(tmp_path, "run.txt", text))


def test_invalid_utf8_names_file_line_and_text(tmp_path):
    """It was "run.txt: file is not valid UTF-8 text": now the first line with such a field,
    1-based, and its text (the bad bytes as \\xNN); a sequence cut by the field end is not
    completed by the next field's bytes."""
    r = tmp_path / "run.txt"
    r.write_bytes(b"1 Q0 a 1 0.5 r\n# \xff comment\n1 Q0 c\xc3 1 0.5 r\n1 Q0 \xa9d 1 0.5 r\n")
    with pytest.raises(InputError) as e:
        read_run(r)
    assert "run.txt:3: text is not valid UTF-8: '1 Q0 c\\xc3 1 0.5 r'" in str(e.value)  # one backslash
    q = tmp_path / "q.txt"
    q.write_bytes(b"1 0 a 1\n1 0 b\xe9 1\n")
    with pytest.raises(InputError, match=r"q.txt:2: text is not valid UTF-8: '1 0 b"):
        read_qrels(q)


def test_read_run_extra_columns_ignore(tmp_path):
    t = read_run(_write(tmp_path, "run.txt", "301 Q0 d1 1 2.5 s more junk\n"), extra_columns="ignore")
    assert t["system"].to_pylist() == ["s"]


def test_read_run_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_run(tmp_path / "nope.txt")


def test_read_qrels(tmp_path):
    t = read_qrels(_write(tmp_path, "q.txt", "301 0 d1 1\n301\t0\td2\t0\n# c\n302 0 d1 -1\n", gz=True))
    assert t.column_names == ["qid", "docid", "label"]
    assert t["label"].to_pylist() == [1, 0, -1]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("301 0 d1\n", r"q.txt:1: expected 4 whitespace-separated fields \(qid iter docno rel\), got 3: '301 0 d1'"),
        ("301 0 d1 1\n301 0 d2 high\n", r"q.txt:2: relevance label 'high' is not an integer"),
        ("301 0 d1 1\n301 0 d1 0\n", r"q.txt:2: docno judged twice"),
        ("", r"empty file"),
    ],
)
def test_read_qrels_errors(tmp_path, text, match):
    with pytest.raises(InputError, match=match):
        read_qrels(_write(tmp_path, "q.txt", text))


LETOR = (
    "2 qid:10 1:0.5 2:1.0 # docid = GX001 inc = 1\n"
    "0 qid:10 1:0.1 2:0.0 # docid = GX002\n"
    "1 qid:11 1:0.3 2:0.2 #docid=GX003\n"
)


def test_qrels_judged_twice_hints_at_diversity_qrels(tmp_path):
    """A diversity qrels file (second field: subtopic) judges a docno once per subtopic."""
    div = _write(tmp_path, "div.txt", "151 1 d1 1\n151 2 d1 0\n")
    with pytest.raises(InputError, match=r"div.txt:2: docno judged twice .*a diversity \(subtopic\)"):
        read_qrels(div)
    same = _write(tmp_path, "same.txt", "151 0 d1 1\n151 0 d1 0\n")
    with pytest.raises(InputError, match=r"same.txt:2: docno judged twice") as e:
        read_qrels(same)
    assert "diversity" not in str(e.value)


def test_read_run_ranks_ignore(tmp_path):
    """trec_eval never reads the rank field; ranks="ignore" accepts any token (rank column null),
    the default still rejects one that is not an integer (it catches swapped columns)."""
    p = _write(tmp_path, "r.txt", "301 Q0 d1 1.0 2.5 s\n301 Q0 d2 - 1.5 s\n")
    with pytest.raises(InputError, match=r"r.txt:1: rank '1.0' is not an integer"):
        read_run(p)
    t = read_run(p, ranks="ignore")
    assert t["rank"].null_count == 2 and t["score"].to_pylist() == [2.5, 1.5]
    assert read_run(_write(tmp_path, "ok.txt", "301 Q0 d1 1 2.5 s\n"), ranks="ignore")["rank"].null_count == 1
    with pytest.raises(InputError, match="`ranks` must be 'check' or 'ignore'"):
        read_run(p, ranks="skip")


def test_read_letor_with_score_files(tmp_path):
    p = _write(tmp_path, "test.txt", LETOR)
    s1 = _write(tmp_path, "lambdamart.txt", "0.5\n-1.25\n3\n")
    t = read_letor(p, score_files=[s1])
    assert t.column_names == ["qid", "label", "docid", "lambdamart"]
    assert t["qid"].to_pylist() == ["10", "10", "11"]
    assert t["label"].to_pylist() == [2, 0, 1]
    assert t["docid"].to_pylist() == ["GX001", "GX002", "GX003"]
    assert t["lambdamart"].to_pylist() == [0.5, -1.25, 3.0]


def test_read_letor_without_docids(tmp_path):
    t = read_letor(_write(tmp_path, "t.txt", "1 qid:1 1:0.2\n0 qid:1 1:0.1\n"))
    assert t.column_names == ["qid", "label"]


@pytest.mark.parametrize(
    ("letor", "scores", "match"),
    [
        ("1 1:0.2\n", None, r"t.txt: no line has a 'qid:' field and no group file"),
        ("1 qid:1 1:0.2\n1 1:0.2\n", None, r"t.txt:2: expected 'label qid:<id> ...'"),
        ("x qid:1 1:0.2\n", None, r"t.txt:1: label 'x' is not an integer"),
        ("1 qid:1 1:0.2\n", "0.1\n0.2\n", r"2 scores but .*t.txt has 1 lines"),
        ("1 qid:1 1:0.2\n", "abc\n", r"s.txt:1: score 'abc' is not a number"),
        # was "run: score column 's' has NaN at row 1" at evaluation (0-based, no file)
        ("1 qid:1 1:0.2\n0 qid:1 1:0.1\n", "0.5\n NaN\n", r"s.txt:2: score 'NaN' is NaN .*: ' NaN'$"),
    ],
)
def test_read_letor_errors(tmp_path, letor, scores, match):
    p = _write(tmp_path, "t.txt", letor)
    sf = [_write(tmp_path, "s.txt", scores)] if scores else None
    with pytest.raises(InputError, match=match):
        read_letor(p, score_files=sf)


GROUPED = "2 1:0.5 2:1.0\n0 1:0.1\n1 2:0.2 # docid = GX3\n0 1:0.7\n1 1:0.9\n"


def test_read_letor_query_groups(tmp_path):
    """LightGBM / XGBoost ranking data: no qid: fields, one group size per line in a side file
    (found next to the data as <name>.query or <name>.group, or given)."""
    p = _write(tmp_path, "rank.test", GROUPED)
    with pytest.raises(InputError, match=r"rank.test: no line has a 'qid:' field and no group file"):
        read_letor(p)
    for suffix in (".query", ".group"):
        g = _write(tmp_path, "rank.test" + suffix, "2\n\n3\n")
        t = read_letor(p)
        assert t["qid"].to_pylist() == ["0", "0", "1", "1", "1"]
        assert t["label"].to_pylist() == [2, 0, 1, 0, 1]
        assert "docid" not in t.column_names  # not every line names its docid
        g.unlink()
    other = _write(tmp_path, "sizes.txt", "1\n4\n")
    s = _write(tmp_path, "lgbm.txt", "0.1\n0.2\n0.3\n0.4\n0.5\n")
    t = read_letor(p, group_file=other, score_files=[s])
    assert t["qid"].to_pylist() == ["0", "1", "1", "1", "1"] and t["lgbm"].to_pylist()[-1] == 0.5


@pytest.mark.parametrize(("letor", "groups", "match"), [
    (GROUPED, "2\n2\n", r"group sizes add up to 4 rows but .*t.txt has 5 lines"),
    (GROUPED, "2\n0\n3\n", r"g.txt:2: group size 0 is not positive"),
    (GROUPED, "2\nthree\n", r"g.txt:2: group size 'three' is not an integer"),
    (GROUPED, "2 3\n", r"g.txt:1: expected one group size per line"),
    (GROUPED, "", r"g.txt: empty group file"),
    ("1 qid:1 1:0.2\n0 1:0.1\n", "2\n", r"t.txt:2: expected 'label qid:<id> ...'"),
    ("1 qid:1 1:0.2\n0 qid:2 1:0.1\n", "2\n", r"t.txt:2: qid '2' inside group 0 of .*g.txt"),
    ("1 qid:1 1:0.2\n0 qid:2 1:0.1\n1 qid:1 1:0\n", "1\n1\n1\n",
     r"g.txt: groups 0 and 2 both hold qid '1'"),
])
def test_read_letor_group_errors(tmp_path, letor, groups, match):
    p = _write(tmp_path, "t.txt", letor)
    g = _write(tmp_path, "g.txt", groups)
    with pytest.raises(InputError, match=match):
        read_letor(p, group_file=g)


def test_read_letor_groups_checked_against_qids(tmp_path):
    p = _write(tmp_path, "t.txt", "1 qid:a 1:0.2\n0 qid:a 1:0.1\n1 qid:b 1:0\n")
    t = read_letor(p, group_file=_write(tmp_path, "g.txt", "2\n1\n"))
    assert t["qid"].to_pylist() == ["a", "a", "b"]  # the file's own qids are kept


@pytest.mark.parametrize("engine", ["default", "zlib"])
def test_gzip_truncated_is_refused_multi_member_is_read(tmp_path, monkeypatch, engine):
    """A cut .gz (an interrupted download or copy) is an error naming the file, never half a run
    read silently; a multi-member .gz (files concatenated) is read whole. Same with or without
    the optional ISA-L inflate."""
    import zlib

    from uefast.io import _fast
    from uefast.trec_eval.prepare import ScannedRun

    if engine == "zlib":
        monkeypatch.setattr(_fast, "_zlib", zlib)
    text = "".join(f"301 Q0 d{i} {i + 1} {1.0 / (i + 1)!r} r\n" for i in range(5000)).encode()
    g = gzip.compress(text)
    for cut in (len(g) // 2, len(g) - 1):
        p = tmp_path / f"cut{cut}.gz"
        p.write_bytes(g[:cut])
        with pytest.raises(InputError, match=rf"cut{cut}.gz: truncated gzip data"):
            read_run(p)
        with pytest.raises(InputError, match=rf"cut{cut}.gz: truncated gzip data"):
            ScannedRun.scan(p)
    half = len(text) // 2
    half = text.index(b"\n", half) + 1
    p = tmp_path / "two.gz"
    p.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    assert read_run(p).num_rows == 5000


def test_bzip2_and_xz_read_zstd_refused(tmp_path):
    """bzip2 and xz files are read like gzip ones (magic bytes, not the name); a truncated one is
    an error; zstd asks to be decompressed first; a text file starting with "BZh" stays text."""
    import bz2
    import lzma

    text = "".join(f"301 Q0 d{i} {i + 1} {1.0 / (i + 1)!r} r\n" for i in range(300)).encode()
    want = read_run(_write(tmp_path, "plain.txt", text.decode()))
    for name, data in (("r.bz2", bz2.compress(text)), ("r.xz", lzma.compress(text)),
                       ("r.data", bz2.compress(text))):
        p = tmp_path / name
        p.write_bytes(data)
        assert read_run(p).equals(want)
        p.write_bytes(data[:-20])
        with pytest.raises(InputError, match=rf"{name}: corrupt or truncated (bzip2|xz) data"):
            read_run(p)
    z = tmp_path / "r.zst"
    z.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    with pytest.raises(InputError, match=r"r.zst: zstd-compressed; decompress it first"):
        read_run(z)
    assert read_run(_write(tmp_path, "bzh.txt", "BZh9 Q0 d1 1 2.5 r\n"))["qid"].to_pylist() == ["BZh9"]


def test_isal_sized_inflate_beyond_its_size_hint():
    """The ISA-L path sizes its buffer from the gzip trailer (the length mod 2^32); a stream
    longer than that (beyond 4 GiB; here a short hint) is read on to its end, not cut."""
    from uefast.io import _fast

    if not hasattr(_fast._igzip_lib, "IgzipDecompressor"):
        pytest.skip("python-isal with IgzipDecompressor not installed")
    text = "".join(f"301 Q0 d{i} {i + 1} {i / 7!r} r\n" for i in range(20000)).encode()
    g = gzip.compress(text)
    for hint in (None, 0, 10, len(text) - 1, len(text)):
        assert _fast._isal_gunzip(g, hint) == text
    assert _fast._isal_gunzip(g[:-20]) is None  # truncated: left to zlib, which refuses it
    assert _fast._isal_gunzip(g + gzip.compress(b"x\n")) is None  # multi-member: zlib's path


def test_plus_signs_integral_labels_and_ranges(tmp_path):
    """'+1' (SVMlight's classic label; a rank or group size too) was 'out of range for int64'
    without a line; LETOR labels written 1.0 are 1 as in qrels; a qrels label beyond 2^53
    written as an integer stays exact next to a '1.0'; a number beyond int64 names its line."""
    let = _write(tmp_path, "l.txt", "+1 qid:1 1:0.5\n1.0 qid:1 1:0.2\n-1 qid:2 1:0.1\n")
    assert read_letor(let)["label"].to_pylist() == [1, 1, -1]
    g = _write(tmp_path, "g.txt", "+2\n1\n")
    assert read_letor(let, group_file=g)["qid"].to_pylist() == ["1", "1", "2"]
    run = _write(tmp_path, "r.txt", "301 Q0 d1 +1 2.0 r\n301 Q0 d2 2 1.0 r\n")
    assert read_run(run)["rank"].to_pylist() == [1, 2]
    q = _write(tmp_path, "q.txt", "1 0 a 123456789012345678\n1 0 b 1.0\n1 0 c +2\n")
    assert read_qrels(q)["label"].to_pylist() == [123456789012345678, 1, 2]
    big = _write(tmp_path, "q2.txt", "1 0 a 1\n1 0 b 99999999999999999999\n")
    with pytest.raises(InputError, match=r"q2.txt:2: relevance label '99999999999999999999' is out of the int64 range"):
        read_qrels(big)
    with pytest.raises(InputError, match=r"l2.txt:1: label '0.5' is not an integer"):
        read_letor(_write(tmp_path, "l2.txt", "0.5 qid:1 1:0.5\n"))


def test_letor_group_sizes_that_wrap_around_in_int64(tmp_path):
    """Sizes summing to 2^64 + 3 "matched" 3 rows in int64 and np.repeat wrote out of bounds
    (a segfault)."""
    data = _write(tmp_path, "nq.txt", "1 1:0.5\n0 1:0.2\n0 1:0.1\n")
    g = _write(tmp_path, "g.txt", f"{2**63 - 1}\n{2**63 - 1}\n5\n")
    with pytest.raises(InputError, match="group sizes add up to 18446744073709551619 rows"):
        read_letor(data, group_file=g)


def test_letor_cr_only_line_ends_and_one_score_file_as_a_string(tmp_path):
    """CR-only line ends (old Mac) made one row of three, silently; score_files="s.txt" was
    taken character by character."""
    p = tmp_path / "cr.txt"
    p.write_bytes(b"1 qid:1 1:0.5\r0 qid:1 1:0.2\r2 qid:2 1:0.1\r")
    s = _write(tmp_path, "s.txt", "0.3\n0.2\n0.1\n")
    t = read_letor(p, score_files=str(s))
    assert t["label"].to_pylist() == [1, 0, 2] and t["s"].to_pylist() == [0.3, 0.2, 0.1]


def test_labels_in_hex_or_exponent_form_are_refused(tmp_path):
    """Arrow read '0x10' as 16 and '1e1' as 10, where trec_eval's atol reads 0 and 1: refused,
    naming the line, instead of a silently different relevance."""
    from uefast.io import read_qrels

    for text in ("0x1", "0x10", "1e1"):
        p = tmp_path / "q.txt"
        p.write_text(f"1 0 d1 {text}\n1 0 d2 1\n")
        with pytest.raises(InputError, match=f"q.txt:1: relevance label '{text}' is not an integer"):
            read_qrels(p)
    p.write_text("1 0 d1 1.0\n1 0 d2 +1\n")
    assert read_qrels(p)["label"].to_pylist() == [1, 1]


def test_hex_rank_refused_by_both_readers(tmp_path, monkeypatch):
    """The fused reader cast its slow ranks with Arrow, which reads '0x10' as 16; both readers
    now refuse it (ranks are decimal), and ranks='ignore' does not read them at all."""
    from uefast.io import trec

    p = tmp_path / "r.txt"
    p.write_text("1 Q0 a 0x10 1.0 r\n1 Q0 b 2 0.5 r\n")
    with pytest.raises(InputError, match="r.txt:1: rank '0x10' is not an integer"):
        read_run(p)
    monkeypatch.setattr(trec, "_read_run_fast", lambda *a, **k: None)
    with pytest.raises(InputError, match="r.txt:1: rank '0x10' is not an integer"):
        read_run(p)
    assert read_run(p, ranks="ignore").num_rows == 2


def test_letor_docid_is_a_whole_word_and_read_run_system_checked(tmp_path):
    """'# mydocid = X' was read as docid X; read_run(system=5) raised a TypeError."""
    p = tmp_path / "l.txt"
    p.write_text("1 qid:1 1:0.5 # mydocid = X docid = D1\n0 qid:1 1:0.2 # docid=D2\n")
    assert read_letor(p)["docid"].to_pylist() == ["D1", "D2"]
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 1.0 r\n")
    with pytest.raises(InputError, match="`system` must be a name or a list of names, got 5"):
        read_run(r, system=5)


def test_exponent_labels_read_as_atol_reads_them(tmp_path, capsys):
    """'1.000e+00' is 1 for atol and as a number (np.savetxt writes labels so): accepted, as
    before; '1e1' (atol: 1, number: 10) and hex stay refused, by uefast trec_eval too."""
    from uefast.cli import main

    q = tmp_path / "q.txt"
    q.write_text("1 0 d1 1.000000000000000000e+00\n1 0 d2 0.000000000000000000e+00\n")
    assert read_qrels(q)["label"].to_pylist() == [1, 0]
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    assert main(["trec_eval", "-m", "num_rel_ret", str(q), str(r)]) == 0
    assert capsys.readouterr().out.split() == ["num_rel_ret", "all", "1"]
    q.write_text("1 0 d1 0x10\n1 0 d2 0\n")
    assert main(["trec_eval", "-m", "P.1", str(q), str(r)]) == 2
    assert "relevance label '0x10' is not an integer" in capsys.readouterr().err


def test_read_run_takes_any_list_of_names(tmp_path):
    """An array of names, and None for "the file's runid", as before the type check."""
    p = tmp_path / "r.txt"
    p.write_text("1 Q0 a 1 1.0 x\n")
    assert read_run([p], system=np.array(["A"]))["system"].to_pylist() == ["A"]
    assert read_run([p], system=[None])["system"].to_pylist() == ["x"]


def test_label_forms_atol_reads_the_same_and_csv_label_cells(tmp_path):
    """'.0' is 0 for atol and as a number (was refused by the leading-integer rule); CSV label
    cells are trimmed as Arrow's inference trimmed them, and an error names the data line past a
    blank line; a set or dict of system names has no order to pair with files."""
    from uefast.cli._tables import read_delimited

    q = tmp_path / "q.txt"
    q.write_text("1 0 d1 .0\n1 0 d2 -.0\n1 0 d3 +1.0\n")
    assert read_qrels(q)["label"].to_pylist() == [0, 0, 1]
    c = tmp_path / "q.csv"
    c.write_text("qid,docid,label\n1,d1, 1\n1,d2,0 \n")
    assert read_delimited(c, ",", labels=True)["label"].to_pylist() == [1, 0]
    c.write_text("qid,docid,label,s\n1,a,1,1\n\n1,c,1,2\n1,d,x,3\n")
    with pytest.raises(InputError, match=r"q.csv:5: label 'x' is not an integer: '1,d,x,3'"):
        read_delimited(c, ",", labels=True)
    assert read_delimited(c, ",")["label"].to_pylist() == ["1", "1", "x"]  # not a label table
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 1.0 x\n")
    for bad in ({"A"}, {str(r): "A"}):
        with pytest.raises(InputError, match="`system` must be a name or a list of names"):
            read_run([r], system=bad)
