"""ir_measures measure *objects* passed where uefast takes measures: the same number as
ir_measures computes for them (ERR objects translated to lmax=4), or a clear refusal."""
from __future__ import annotations

import pytest

import uefast
from uefast.errors import MeasureParseError

ir_measures = pytest.importorskip("ir_measures")

from test_ir_measures import TOL, _data  # noqa: E402

M = ir_measures.measures


def _objects():
    return [M.nDCG @ 10, M.nDCG, M.nDCG(dcg="exp-log2") @ 10, M.P @ 10, M.P(rel=2) @ 5, M.R @ 20,
            M.Rprec, M.AP, M.AP(rel=2), M.AP @ 10, M.RR, M.RR(rel=3), M.Success @ 5, M.ERR @ 10,
            M.nDCG(judged_only=False) @ 5]
# RBP(p, rel) maps to uefast's RBP(p, rel) (both binary at rel); ir_measures computes RBP only
# through its cwl_eval provider, which the dev extra does not install, so it is not compared here


def test_objects_give_ir_measures_values():
    qrels, run, qrels_t, run_t = _data(3)
    objs = _objects()
    ours = uefast.evaluate(run_t, qrels_t, objs, ue=False)
    got = {(r["qid"], r["measure"]): r["value"] for r in ours.to_pylist()}
    checked = 0
    for obj in objs:
        canon = str(uefast.parse_measure(obj))
        tol = 1e-5 if obj.NAME == "ERR" else TOL.get(str(obj), 1e-9)
        for res in ir_measures.iter_calc([obj], qrels, run):
            assert got[(res.query_id, canon)] == pytest.approx(res.value, abs=tol), (obj, res.query_id)
            checked += 1
    assert checked >= 25 * len(objs)


def test_translations_and_single_object():
    assert str(uefast.parse_measure(M.ERR @ 20)) == "ERR(lmax=4)@20"
    assert str(uefast.parse_measure(M.nDCG(dcg="exp-log2") @ 10)) == "nDCG(gain=exp)@10"
    assert [str(m) for m in uefast.parse_measures(M.AP @ 100)] == ["AP@100"]
    assert str(uefast.parse_measure(M.RBP(p=0.5, rel=2) @ 10)) == "RBP(p=0.5,rel=2)@10"
    # a string keeps uefast's meaning (ERR's top grade: the data's largest label)
    assert str(uefast.parse_measure("ERR@20")) == "ERR@20"


@pytest.mark.parametrize("obj,msg", [
    (lambda: M.RBP(p=0.8), "graded in ir_measures"),
    (lambda: M.P(judged_only=True) @ 5, "judged_only"),
    (lambda: M.nDCG(gains={0: 0, 1: 1, 2: 5}) @ 10, "gain"),
    (lambda: M.Bpref, "no uefast equivalent"),
    (lambda: M.Judged @ 10, "no uefast equivalent"),
])
def test_refused_with_reason(obj, msg):
    with pytest.raises(MeasureParseError, match=msg):
        uefast.parse_measure(obj())


def test_report_takes_objects():
    _, _, qrels_t, run_t = _data(1)
    two = uefast.evaluate(run_t.append_column("system", [["a"] * run_t.num_rows]), qrels_t, ["AP"])
    other = uefast.evaluate(run_t.append_column("system", [["b"] * run_t.num_rows])
                            .set_column(2, "score", [[-x for x in run_t["score"].to_pylist()]]),
                            qrels_t, ["AP"])
    import pyarrow as pa

    both = pa.concat_tables([two, other])
    rep = uefast.report(both, measures=[M.AP])
    assert rep.keys == [("AP", "value")]
