"""Diversity qrels reader (uefast.diversity.read_qrels / compile_qrels): the loader pitfalls of
SPEC_diversity §6 on small files, errors naming file and line, and the real TREC 2009-2014 counts
of the data's SOURCE.md."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from uefast.diversity import compile_qrels, read_qrels
from uefast.errors import InputError


def _write(tmp_path, text, name="q.txt"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_negative_grades_zero_subtopic_zero_and_dropped_aspects(tmp_path):
    p = _write(tmp_path, "1 0 d0 0\n1 1 d1 -2\n1 1 d2 2\n1 2 d1 0\n1 3 d3 1\n"
                         "2 0 a 1\n2 0 b 0\n")
    t = read_qrels(p)
    assert t.column_names == ["qid", "subtopic", "docid", "label"]
    assert t["label"].to_pylist() == [0, 0, 2, 0, 1, 1, 0]
    assert t["qid"].type == pa.string()
    q = compile_qrels(t)
    t1 = q["1"]
    # subtopic 0 (2009: judged non-relevant only) and 2 (no relevant doc) are dropped as aspects,
    # their documents stay judged
    assert t1.aspects == ["1", "3"] and list(t1.docids) == ["d0", "d1", "d2", "d3"]
    assert t1.grades.tolist() == [[0, 0], [0, 0], [2, 0], [0, 1]]
    assert np.allclose(t1.weights, [0.5, 0.5])
    # 2014 single-facet topics: subtopic 0 is the only aspect
    assert q["2"].aspects == ["0"] and q["2"].weights.tolist() == [1.0]
    assert read_qrels(p, negative="keep")["label"][1].as_py() == -2
    with pytest.raises(InputError, match=r"q\.txt:2: negative grade -2"):
        read_qrels(p, negative="error")


def test_numeric_aspect_order(tmp_path):
    p = _write(tmp_path, "7 10 a 1\n7 9 b 1\n7 2 c 1\n")
    assert compile_qrels(read_qrels(p))["7"].aspects == ["2", "9", "10"]


@pytest.mark.parametrize("text, line, what", [
    ("1 1 a 1\n1 1 b\n", 2, "expected 4 fields"),
    ("1 1 a 1\n1 1 b 1 extra\n", 2, "expected 4 fields"),
    ("1 1 a 1\n\n1 1 b x\n", 3, "grade 'x' is not an integer"),
    ("1 1 a 1\n1 2 a 0\n1 1 a 0\n", 3, r".*judged twice \(first at .*q\.txt:1\)"),
])
def test_errors_name_file_and_line(tmp_path, text, line, what):
    p = _write(tmp_path, text)
    with pytest.raises(InputError, match=rf"q\.txt:{line}: {what}"):
        read_qrels(p)


def test_duplicates_keep(tmp_path):
    p = _write(tmp_path, "1 1 a 1\n1 1 a 0\n")
    assert read_qrels(p, duplicates="keep").num_rows == 2


def test_evall_format_and_weights(tmp_path):
    rows = ['"5"\t"d1"\t"1"\t"1"\t"0.25"', '"5"\t"d2"\t"2"\t"2"\t"0.75"', '"5"\t"d1"\t"0"\t"2"\t"0.75"']
    p = _write(tmp_path, "\r\n".join(rows) + "\r\n")
    t = read_qrels(p)
    assert t.column_names == ["qid", "subtopic", "docid", "label", "weight"]
    top = compile_qrels(t)["5"]
    assert top.aspects == ["1", "2"] and top.weights.tolist() == [0.25, 0.75]
    assert top.grades.tolist() == [[1, 0], [0, 2]]
    bad = _write(tmp_path, '"5"\t"d1"\t"1"\t"1"\t"0.25"\r\n"5"\t"d2"\t"1"\t"2"\t"0.5"\r\n', "b.txt")
    with pytest.raises(InputError, match=r"b\.txt:1: .*sum to 0.75, not 1"):
        read_qrels(bad)
    with pytest.raises(InputError, match="sum to 0.75, not 1"):  # a table: no lines to name
        compile_qrels(pa.table(
            {"qid": ["5", "5"], "subtopic": ["1", "2"], "docid": ["d1", "d2"], "label": [1, 1],
             "weight": [0.25, 0.5]}))
    unq = _write(tmp_path, '"5"\t"d1"\t"1"\t"1"\t"1"\n"5"\td2\t"1"\t"1"\t"1"\n', "u.txt")
    with pytest.raises(InputError, match=r"u\.txt:2: EvALL field 2 'd2' is not double-quoted"):
        read_qrels(unq)


def test_weights_file(tmp_path):
    q = _write(tmp_path, "1 1 a 1\n1 2 b 1\n1 3 c 0\n")
    w = _write(tmp_path, "1 1 0.2\n1 2 0.6\n1 3 0.2\n", "w.txt")
    top = compile_qrels(read_qrels(q), weights=w)["1"]
    # aspect 3 has no relevant document: dropped, the rest renormalised
    assert np.allclose(top.weights, [0.25, 0.75])
    w2 = _write(tmp_path, "1 1 0.2\n1 2 0.6\n", "w2.txt")
    with pytest.raises(InputError, match="topic '1' sum to 0.8"):
        compile_qrels(read_qrels(q), weights=w2)


def test_judged_set_from_adhoc(tmp_path):
    div = _write(tmp_path, "51 1 a 1\n51 2 b 1\n")
    adhoc = _write(tmp_path, "51 0 a 1\n51 0 c 0\n51 0 d 0\n52 0 e 0\n", "adhoc.txt")
    t = read_qrels(div, judged=adhoc)
    q = compile_qrels(t)
    assert list(q["51"].docids) == ["a", "b", "c", "d"] and q["51"].m == 2
    assert q["52"].m == 0 and q["52"].n == 1


@pytest.mark.parametrize("rel, aspects, docs", [
    ("2009/qrels.diversity", 199, 26407),
    ("2010/10.diversity-qrels.final.txt", 200, 6553),
    ("2011/qrels.diversity.txt", 164, 19381),
    ("2012/qrels.diversity.txt", 187, 16055),
    ("2012/qrels-for-ndeval.txt", 187, 16055),
    ("2013/qrels.all.txt", 152, 14474),
    ("2014/qrels.ndeval.txt", 156, 14432),
])
def test_real_trec_counts(shared_data, rel, aspects, docs):
    """Active aspects and judged documents as counted in the data's SOURCE.md."""
    q = compile_qrels(read_qrels(shared_data / "trec_web_diversity_2009_2014" / rel))
    assert len(q) in (48, 50)
    assert sum(t.m for t in q.values()) == aspects
    assert sum(t.n for t in q.values()) == docs


def test_real_evall_equals_ndeval_file(shared_data):
    a = compile_qrels(read_qrels(shared_data / "trec2014_web_diversity_rbu" / "qrels.all_EvALL_FORMAT.txt"))
    b = compile_qrels(read_qrels(shared_data / "trec_web_diversity_2009_2014" / "2014" / "qrels.ndeval.txt"))
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].aspects == b[k].aspects and (a[k].grades == b[k].grades).all()
        assert np.allclose(a[k].weights, b[k].weights)
