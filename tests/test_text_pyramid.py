"""uefast.text.pyramid: hand-computed examples, IUB and REB against enumeration of every
same-size subset of the pyramid, Hypothesis properties, input forms and bad input."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError, MeasureParseError
from uefast.text.pyramid import (PyramidMeasure, expected_weight, parse_pyramid_measure, pyramid,
                                 top_weight)
from uefast.text.ue import text_ue

ALL = ["Pyramid", "Pyramid(variant=modified)", "Pyramid(variant=modified,x=exact)"]


def _pyr(weights, doc="d", n_refs=None):
    cols = {"doc_id": [doc] * len(weights), "scu": [f"u{i}" for i in range(len(weights))],
            "weight": list(weights)}
    if n_refs is not None:
        cols["n_refs"] = [n_refs] * len(weights)
    return pa.table(cols)


def _summ(units, system="s", doc="d"):
    return pa.table({"system": [system] * len(units), "doc_id": [doc] * len(units),
                     "scu": pa.array(units, pa.string())})


def _rows(out):
    return out.to_pylist()


# ---------------------------------------------------------------- hand-computed
def test_textbook_example_by_hand():
    # 4 reference summaries; tiers T4 = {a}, T3 = {b, c}, T2 = {d}, T1 = {e}; Σw = 13, N = 5.
    p = pa.table({"doc_id": ["t"] * 5, "scu": list("abcde"), "weight": [4, 3, 3, 2, 1],
                  "n_refs": [4] * 5})
    # summary 1: a, d and one unit matching no SCU: X = 3, D = 4 + 2 = 6.
    # original: Max(3) = 4 + 3 + 3 = 10 -> 0.6; E[D] = 3 * 13/5 = 7.8 -> REB 0.78.
    # modified: X̄ = 13/4 = 3.25; ceil -> Max(4) = 12 -> 0.5; exact -> 10 + 0.25*2 = 10.5.
    s = pa.table({"system": ["A"] * 3, "doc_id": ["t"] * 3, "scu": ["a", "d", None]})
    out = _rows(pyramid(s, p, ALL))
    assert [r["measure"] for r in out] == ALL
    o, m, e = out
    assert (o["value"], o["iub"], o["reb"]) == pytest.approx((0.6, 1.0, 0.78))
    assert (m["value"], m["iub"], m["reb"]) == pytest.approx((0.5, 10 / 12, 7.8 / 12))
    assert (e["value"], e["iub"], e["reb"]) == pytest.approx((6 / 10.5, 10 / 10.5, 7.8 / 10.5))
    assert (o["x"], m["x"], e["x"]) == (3.0, 4.0, 3.25)
    assert (o["n_units"], o["weight"], o["ideal_weight"], o["expected_weight"]) == \
        (3, 6.0, 10.0, pytest.approx(7.8))
    # V1 = (0.6/1)(0.6/1.38); V2 = (0.6 - 0.78)/0.78 (A < REB): the same for every variant
    for r in out:
        assert r["ue_v1"] == pytest.approx(0.6 * 0.6 / 1.38)
        assert r["ue_v2"] == pytest.approx(-0.18 / 0.78)


def test_optimal_summary_scores_one_and_ue_one():
    p = _pyr([4, 3, 3, 2, 1], n_refs=4)
    out = _rows(pyramid(_summ(["u0", "u1", "u2"]), p, ALL))
    assert out[0]["value"] == 1.0 and out[0]["ue_v2"] == 1.0
    assert out[0]["ue_v1"] == pytest.approx(1.0 / (1.0 + 0.78))
    for r in out:
        assert r["value"] == pytest.approx(r["iub"])


def test_max_weight_formula_of_the_paper():
    # Nenkova & Passonneau 2004: Max = Σ_{i=j+1}^{n} i|T_i| + j(X − Σ_{i=j+1}^{n} |T_i|),
    # j = the largest tier index with Σ_{t=j}^{n} |T_t| >= X.
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 6))
        w = rng.integers(1, n + 1, size=int(rng.integers(1, 9)))
        tiers = {i: int((w == i).sum()) for i in range(1, n + 1)}
        for x in range(1, len(w) + 1):
            j = max(i for i in range(1, n + 1) if sum(tiers[t] for t in range(i, n + 1)) >= x)
            above = sum(tiers[t] for t in range(j + 1, n + 1))
            paper = sum(i * tiers[i] for i in range(j + 1, n + 1)) + j * (x - above)
            assert top_weight(w, x) == paper


# ---------------------------------------------------------------- enumeration oracles
def _brute(weights, units, den):
    """IUB and REB by enumerating every subset of min(X, N) pyramid SCUs."""
    n, x = len(weights), len(units)
    k = min(x, n)
    subsets = list(itertools.combinations(range(n), k))
    ws = [sum(weights[i] for i in c) for c in subsets]
    den = Fraction(den)
    return float(max(ws) / den), float(sum(Fraction(w) / den for w in ws) / len(subsets))


@pytest.mark.parametrize("seed", range(25))
def test_iub_and_reb_against_enumeration(seed):
    rng = np.random.default_rng(seed)
    n_refs = int(rng.integers(1, 6))
    n = int(rng.integers(1, 8))
    weights = [int(v) for v in rng.integers(1, n_refs + 1, size=n)]
    picked = [f"u{i}" for i in rng.permutation(n)[:int(rng.integers(0, n + 1))]]
    units = picked + [None] * int(rng.integers(0 if picked else 1, 4))
    out = _rows(pyramid(_summ(units), _pyr(weights, n_refs=n_refs), ALL))
    d = sum(weights[int(u[1:])] for u in picked)
    xbar = sum(weights) / n_refs
    srt = sorted(weights, reverse=True)
    dens = [top_weight(weights, len(units)), top_weight(weights, math.ceil(xbar - 1e-12)),
            top_weight(weights, xbar)]
    # exact fractional X̄ interpolates between the integer neighbours
    lo, hi = math.floor(xbar), math.ceil(xbar)
    f = xbar - lo
    assert dens[2] == pytest.approx((1 - f) * sum(srt[:lo]) + f * sum(srt[:hi]))
    for r, den in zip(out, dens):
        iub, reb = _brute(weights, units, den)
        assert r["value"] == pytest.approx(d / den)
        assert r["iub"] == pytest.approx(iub)
        assert r["reb"] == pytest.approx(reb)
        v1, v2 = text_ue(d / den, iub, reb)
        np.testing.assert_allclose([r["ue_v1"], r["ue_v2"]], [v1, v2], equal_nan=True)


def test_expected_weight_by_enumeration_and_monte_carlo():
    w = [5, 3, 3, 2, 1, 1, 1]
    for x in range(0, 10):
        k = min(x, len(w))
        subs = [sum(c) for c in itertools.combinations(w, k)]
        assert expected_weight(w, x) == pytest.approx(np.mean(subs))
    rng = np.random.default_rng(0)
    draws = [sum(rng.choice(w, size=4, replace=False)) for _ in range(20000)]
    se = np.std(draws) / np.sqrt(len(draws))
    assert abs(np.mean(draws) - expected_weight(w, 4)) < 4 * se


# ---------------------------------------------------------------- properties
@st.composite
def cases(draw):
    n_refs = draw(st.integers(1, 6))
    weights = draw(st.lists(st.integers(1, n_refs), min_size=1, max_size=10))
    idx = draw(st.lists(st.integers(0, len(weights) - 1), unique=True))
    extra = draw(st.integers(0 if idx else 1, 5))
    return n_refs, weights, [f"u{i}" for i in idx] + [None] * extra


@settings(max_examples=150, deadline=None)
@given(cases())
def test_properties(case):
    n_refs, weights, units = case
    out = _rows(pyramid(_summ(units), _pyr(weights, n_refs=n_refs), ALL))
    o = out[0]
    assert 0.0 <= o["value"] <= 1.0 and o["iub"] == 1.0
    assert 0.0 <= o["reb"] <= o["iub"] + 1e-12
    for r in out:
        assert r["value"] <= r["iub"] + 1e-12          # no summary beats the optimal one
        assert r["reb"] <= r["iub"] + 1e-12
        den = r["weight"] / r["value"] if r["value"] else None
        if den is not None:                            # one denominator for A, IUB and REB
            assert r["iub"] * den == pytest.approx(r["ideal_weight"])
            assert r["reb"] * den == pytest.approx(r["expected_weight"])
        assert r["ideal_weight"] == top_weight(weights, len(units))
        assert -1.0 - 1e-12 <= r["ue_v2"] <= 1.0 + 1e-12 or math.isnan(r["ue_v2"])
        # scale invariance: UE is the same for every normalisation
        np.testing.assert_allclose([r["ue_v1"], r["ue_v2"]], [o["ue_v1"], o["ue_v2"]],
                                   rtol=1e-12, equal_nan=True)
    assert o["value"] * top_weight(weights, len(units)) == pytest.approx(o["weight"])


@settings(max_examples=40, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(case, rnd):
    n_refs, weights, units = case
    p = _pyr(weights, n_refs=n_refs)
    base = _rows(pyramid(_summ(units), p, ALL))
    order = list(range(p.num_rows))
    rnd.shuffle(order)
    uorder = list(range(len(units)))
    rnd.shuffle(uorder)
    shuffled = _rows(pyramid(_summ([units[i] for i in uorder]), p.take(order), ALL))
    for a, b in zip(base, shuffled):
        assert a == pytest.approx(b, nan_ok=True)


# ---------------------------------------------------------------- input forms
def test_list_form_pandas_polars_and_csv_agree(tmp_path):
    p = pa.table({"doc_id": ["d1", "d1", "d1", "d2", "d2"], "scu": ["a", "b", "c", "a", "x"],
                  "weight": [3, 2, 1, 2, 2], "n_refs": [3, 3, 3, 2, 2]})
    long = pa.table({"system": ["s1", "s1", "s2", "s1", "s1", "s1"],
                     "doc_id": ["d1", "d1", "d1", "d2", "d2", "d2"],
                     "scu": ["a", "c", "b", "x", None, None]})
    lists = pa.table({"system": ["s1", "s2", "s1"], "doc_id": ["d1", "d1", "d2"],
                      "scu": [["a", "c"], ["b"], ["x", None, None]]})
    ref = pyramid(long, p, ALL)
    assert ref.num_rows == 9
    assert pyramid(lists, p, ALL).equals(ref)
    pd = pytest.importorskip("pandas")
    assert pyramid(long.to_pandas(), p.to_pandas(), ALL).drop_columns(["system", "qid"]).equals(
        ref.drop_columns(["system", "qid"]))
    pl = pytest.importorskip("polars")
    assert pyramid(pl.from_arrow(long), pl.from_arrow(p), ALL).drop_columns(
        ["system", "qid"]).equals(ref.drop_columns(["system", "qid"]))
    pd.DataFrame(long.to_pydict()).to_csv(tmp_path / "s.csv", index=False)
    p.to_pandas().to_csv(tmp_path / "p.csv", index=False)
    got = pyramid(tmp_path / "s.csv", str(tmp_path / "p.csv"), ALL)
    assert got.column("value").to_pylist() == ref.column("value").to_pylist()
    assert got.column("qid").to_pylist() == ref.column("qid").to_pylist()


def test_integer_ids_match_string_ids_and_n_refs_argument():
    p = pa.table({"doc_id": [7, 7], "scu": [1, 2], "weight": [2, 1]})
    s = pa.table({"system": ["s"], "doc_id": ["7"], "scu": ["1"]})
    out = _rows(pyramid(s, p, "Pyramid(variant=modified)", n_refs=2))
    # X̄ = 3/2 -> ceil 2 -> Max(2) = 3; D = 2
    assert out[0]["x"] == 2.0 and out[0]["value"] == pytest.approx(2 / 3)


def test_measure_strings_round_trip():
    for s in ALL + ["pyramid()", "Pyramid(variant=original)"]:
        m = parse_pyramid_measure(s)
        assert parse_pyramid_measure(str(m)) == m
    assert str(parse_pyramid_measure("Pyramid(variant=original)")) == "Pyramid"
    assert parse_pyramid_measure("Pyramid(x=exact, variant=modified)") == \
        PyramidMeasure("modified", "exact")
    for bad in ["Pyramid(variant=foo)", "Pyramid(x=exact)", "Pyramid(k=1)", "ROUGE-1",
                "Pyramid(variant=modified,variant=modified)", "Pyramid(variant)"]:
        with pytest.raises(MeasureParseError):
            parse_pyramid_measure(bad)
    with pytest.raises(MeasureParseError, match="twice"):
        pyramid(_summ(["u0"]), _pyr([1]), ["Pyramid", "pyramid"])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("summ, pyr, kw, match", [
    (_summ(["u0", "zz"]), _pyr([2, 1]), {}, r"SCU 'zz' is not in the pyramid.*row 1"),
    (_summ(["u0"]), _pyr([2, -1]), {}, r"bad `weight` -1 .* row 1"),
    (_summ(["u0"]), _pyr([2, 0]), {}, r"bad `weight` 0 .* row 1"),
    (_summ(["u0"]), _pyr([2.0, float("nan")]), {}, r"bad `weight` nan .* row 1"),
    (_summ(["u0", "u1", "u0"]), _pyr([2, 1]), {}, r"duplicate SCU 'u0'.*rows 0 and 2"),
    (_summ(["u0"]), pa.table({"doc_id": ["d", "d"], "scu": ["a", "a"], "weight": [1, 1]}), {},
     r"duplicate SCU 'a' of doc_id 'd'.*rows 0 and 1"),
    (_summ(["u0"], doc="e"), _pyr([1]), {}, r"doc_id 'e' has no pyramid.*row 0"),
    (_summ(["u0", ""]), _pyr([1]), {}, r"empty `scu` at row 1"),
    (_summ(["u0"]), _pyr([3, 1], n_refs=2), {},
     r"`weight` 3 of SCU 'u0' exceeds n_refs = 2.*row 0"),
    (_summ(["u0"]), _pyr([1], n_refs=2), {"n_refs": 2}, r"do not also pass"),
    (_summ(["u0"]), pa.table({"doc_id": ["d"], "scu": ["a"]}), {}, r"missing column `weight`"),
    (_summ(["u0"]), pa.table({"doc_id": ["d"], "scu": ["a"], "weight": ["1"]}), {},
     r"`weight` must be numeric"),
    (pa.table({"system": ["s"], "doc_id": ["d"]}), _pyr([1]), {}, r"missing column `scu`"),
    (pa.table({"system": [None], "doc_id": ["d"], "scu": ["u0"]}), _pyr([1]), {},
     r"null `system` at row 0"),
])
def test_bad_input_names_the_row(summ, pyr, kw, match):
    with pytest.raises(InputError, match=match):
        pyramid(summ, pyr, **kw)


def test_bad_list_form_and_n_refs():
    p = _pyr([2, 1], n_refs=2)
    with pytest.raises(InputError, match=r"empty summary \(system 's', doc_id 'd'\).*row 1"):
        pyramid(pa.table({"system": ["s", "s"], "doc_id": ["c", "d"],
                          "scu": [["u0"], []]}), pa.concat_tables([p, _pyr([1], "c", 2)]))
    with pytest.raises(InputError, match=r"listed twice.*row 0"):
        pyramid(pa.table({"system": ["s"], "doc_id": ["d"], "scu": [["u0", "u0"]]}), p)
    with pytest.raises(InputError, match=r"duplicate summary.*rows 0 and 1"):
        pyramid(pa.table({"system": ["s", "s"], "doc_id": ["d", "d"],
                          "scu": [["u0"], ["u1"]]}), p)
    bad = pa.table({"doc_id": ["d", "d"], "scu": ["a", "b"], "weight": [1, 1], "n_refs": [2, 3]})
    with pytest.raises(InputError, match=r"`n_refs` of doc_id 'd' differs.*rows 0 and 1"):
        pyramid(_summ(["a"]), bad)
    for refs, match in [(["2", "2"], r"`n_refs` must hold integers"),
                        ([2, None], r"bad `n_refs` None.*row 1"),
                        ([2.5, 2.5], r"bad `n_refs` 2.5.*row 0")]:
        bad = pa.table({"doc_id": ["d", "d"], "scu": ["a", "b"], "weight": [1, 1],
                        "n_refs": refs})
        with pytest.raises(InputError, match=match):
            pyramid(_summ(["a"]), bad)
    with pytest.raises(InputError, match=r"needs the number of reference summaries"):
        pyramid(_summ(["u0"]), _pyr([2, 1]), "Pyramid(variant=modified)")
    with pytest.raises(InputError, match=r"n_refs must be an integer"):
        pyramid(_summ(["u0"]), _pyr([2, 1]), n_refs=0)


def test_csv_errors_name_the_line(tmp_path):
    (tmp_path / "p.csv").write_text("doc_id,scu,weight\nd,a,2\nd,b,-3\n")
    (tmp_path / "s.csv").write_text("system,doc_id,scu\ns,d,a\n")
    with pytest.raises(InputError, match=r"row 1 \(line 3\)"):
        pyramid(tmp_path / "s.csv", tmp_path / "p.csv")
    (tmp_path / "p.csv").write_text("doc_id,scu,weight\nd,a,2\n")
    (tmp_path / "s2.csv").write_text("system,doc_id,scu\ns,d,a\ns,d,\ns,d,b\n")
    with pytest.raises(InputError, match=r"SCU 'b' is not in the pyramid.*row 2 \(line 4\)"):
        pyramid(tmp_path / "s2.csv", tmp_path / "p.csv")
    assert pyramid(tmp_path / "s.csv", tmp_path / "p.csv").column("value").to_pylist() == [1.0]
    with pytest.raises(InputError, match="not found"):
        pyramid(tmp_path / "nope.csv", tmp_path / "p.csv")


def test_empty_summaries_table_gives_empty_output():
    out = pyramid(pa.table({"system": pa.array([], pa.string()),
                            "doc_id": pa.array([], pa.string()),
                            "scu": pa.array([], pa.string())}), _pyr([1]))
    assert out.num_rows == 0 and out.column_names[:8] == ["system", "qid", "measure", "value",
                                                          "iub", "reb", "ue_v1", "ue_v2"]


@pytest.mark.parametrize("seed", range(10))
def test_modified_score_from_reference_annotations(seed):
    """Build the pyramid from per-reference SCU sets, as SacreROUGE's modified_pyramid_score
    does: weight = number of references with the SCU, X = ⌈mean reference SCU count⌉, ideal
    weight filled tier by tier from the top."""
    rng = np.random.default_rng(100 + seed)
    n_refs, pool = int(rng.integers(1, 5)), [f"c{i}" for i in range(int(rng.integers(1, 9)))]
    refs = [set(rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False))
            for _ in range(n_refs)]
    weight = {u: sum(u in r for r in refs) for u in pool if any(u in r for r in refs)}
    peer = [u for u in pool if rng.random() < 0.5 and u in weight] or [next(iter(weight))]
    remaining = math.ceil(np.mean([len(r) for r in refs]))
    tiers = {}
    for w in weight.values():
        tiers[w] = tiers.get(w, 0) + 1
    ideal = 0
    for w in sorted(tiers, reverse=True):
        take = min(remaining, tiers[w])
        ideal += take * w
        remaining -= take
    p = pa.table({"doc_id": ["d"] * len(weight), "scu": list(weight),
                  "weight": list(weight.values()), "n_refs": [n_refs] * len(weight)})
    out = _rows(pyramid(_summ(peer), p, "Pyramid(variant=modified)"))
    assert out[0]["value"] == pytest.approx(sum(weight[u] for u in peer) / ideal)


@pytest.mark.parametrize("w, units", [([0.7] * 7, ["u0", "u1", "u2"]), ([0.1] * 3, ["u0", "u1"]),
                                      ([3, 1], ["u0", "u1", None])])
def test_reb_equals_iub_exactly_when_every_subset_is_optimal(w, units):
    # equal weights, or X_s >= N: every random summary is optimal, REB = IUB with no rounding
    # drift, so V2 at the optimum is NaN (SPEC_text §4), not ±1 or a huge ratio
    out = _rows(pyramid(_summ(units), _pyr(w), "Pyramid"))[0]
    assert out["reb"] == out["iub"] == 1.0
    assert out["expected_weight"] == out["ideal_weight"]
    assert math.isnan(out["ue_v2"]) == (out["value"] == 1.0)


def test_cli_pyramid_equals_the_python_api(tmp_path, capsys):
    """``uefast text pyramid SUMMARIES PYRAMIDS`` prints what :func:`pyramid` returns (per query,
    TSV), from CSV files; a bad file is an error naming the table, not a traceback."""
    from uefast.cli import main

    pyr = pa.table({"doc_id": ["t"] * 5, "scu": list("abcde"), "weight": [4, 3, 3, 2, 1],
                    "n_refs": [4] * 5})
    summ = pa.table({"system": ["s1"] * 3 + ["s2"] * 2, "doc_id": ["t"] * 5,
                     "scu": ["a", "d", None, "b", "c"]})
    import pyarrow.csv as pcsv
    pcsv.write_csv(pyr, tmp_path / "pyr.csv")
    pcsv.write_csv(summ, tmp_path / "summ.csv")
    ms = ["Pyramid", "Pyramid(variant=modified)"]
    code = main(["text", "pyramid", str(tmp_path / "summ.csv"), str(tmp_path / "pyr.csv"),
                 "-m", *ms, "--per-query", "--format", "tsv"])
    assert code == 0
    lines = capsys.readouterr().out.strip().split("\n")
    head = lines[0].split("\t")
    want = pyramid(summ, pyr, ms)
    got = [dict(zip(head, ln.split("\t"))) for ln in lines[1:]]
    assert len(got) == want.num_rows
    for g, w in zip(got, want.to_pylist()):
        assert (g["system"], g["measure"]) == (w["system"], w["measure"])
        assert float(g["value"]) == pytest.approx(w["value"], abs=1e-9)
        assert float(g["ue_v2"]) == pytest.approx(w["ue_v2"], abs=1e-9)
    code = main(["text", "pyramid", str(tmp_path / "summ.csv"), str(tmp_path / "missing.csv")])
    assert code != 0
