"""The registry drives the tests: every registered measure family, with its parameters varied, is
checked by one test body against the plain-Python reference (tests/naive.py):

* values of tie-broken runs, and tie-aware values against enumeration of all tie orders;
* IUB against the reference on the ideal ranking and, where the family claims it exact, against
  the maximum over all orders of the judged documents;
* REB against the mean over all n! orders of the judged documents (n <= 6);
* value == REB for a run whose scores are all tied, under ``ties="expected"``.

A family registered without a reference in ``naive.REFERENCE`` fails
:func:`test_every_family_has_a_reference`; the contract's refusals are tested here too.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import naive
import uefast
from conftest import letor_table, naive_value
from uefast.errors import MeasureRegistrationError
from uefast.kernels import routines as r
from uefast.measures import FAMILIES, Family, KernelParams, parse_measure, register, unregister
from uefast.measures._codegen import render, target
from uefast.measures._family import REALS

# non-default values tried for each parameter kind (choices: every allowed value)
_TRY = {"rel": 2, "p": 0.5, "beta": 2.0, "h": 20.0, "length": 50.0, "pc0": 0.9, "logb": 3.0,
        "gamma": 0.5}


def family_measures(fam: Family) -> list:
    """Measures of family ``fam``: each cutoff its rule allows, each parameter varied once."""
    cuts = {"required": [2, 5], "optional": [None, 3], "none": [None]}[fam.cutoff]
    variants = [{}]
    for key, default in fam.params.items():
        if key in fam.choices:
            variants += [{key: v} for v in fam.choices[key] if v != default]
        elif key in _TRY:
            variants.append({key: _TRY[key]})
    out = []
    for cut in cuts:
        for v in variants:
            text = fam.name + ("(" + ",".join(f"{k}={x}" for k, x in v.items()) + ")" if v else "")
            text += "" if cut is None else f"@{cut}"
            try:
                m = parse_measure(text)
            except uefast.MeasureParseError:  # e.g. AP(norm=k) without a cutoff
                continue
            if m not in out:
                out.append(m)
    return out


ALL = [m for fam in FAMILIES.values() for m in family_measures(fam)]


def _queries(seed: int, count: int = 10, max_n: int = 6):
    """Random queries (labels -1..3, scores 0..2: many ties), docids 0..n-1."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(1, max_n + 1))
        out.append((rng.integers(-1, 4, n).tolist(), rng.integers(0, 3, n).tolist()))
    return out


def _rows(queries, ties, measures=ALL):
    t = letor_table([(lab, {"s": s}, None) for lab, s in queries])
    res = uefast.evaluate(t, measures=measures, ties=ties).to_pylist()
    return {(row["qid"], row["measure"]): row for row in res}


def _lmax(queries):
    return max(max(0, *lab) for lab, _ in queries)


def test_every_family_has_a_reference():
    missing = sorted(set(FAMILIES) - naive.REFERENCE)
    assert not missing, f"registered measure families without a reference in tests/naive.py: {missing}"


def test_every_family_is_tested_with_its_parameters():
    for fam in FAMILIES.values():
        assert family_measures(fam), fam.name


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ties", ["input", "expected"])
def test_values_match_the_reference(seed, ties):
    queries = _queries(seed)
    rows = _rows(queries, ties)
    lmax = _lmax(queries)
    for qi, (lab, sc) in enumerate(queries):
        lab0 = [max(x, 0) for x in lab]
        for m in ALL:
            row = rows[(qi + 1, str(m))]
            fn = lambda ls, m=m, lab0=lab0: naive_value(m, ls, lab0, lmax)  # noqa: E731
            if ties == "input":
                want = fn([lab0[i] for i in naive.rank_input(sc)])
            else:
                want = naive.expected_over_orders(fn, lab0, naive.tie_consistent_orders(sc))
            assert row["value"] == pytest.approx(want, abs=1e-12), (str(m), qi, lab, sc)


@pytest.mark.parametrize("seed", [2, 3])
def test_iub_and_reb_match_enumeration(seed):
    queries = _queries(seed)
    rows = _rows(queries, "input")
    lmax = _lmax(queries)
    for qi, (lab, _) in enumerate(queries):
        lab0 = [max(x, 0) for x in lab]
        perms = list(itertools.permutations(lab0))
        for m in ALL:
            row = rows[(qi + 1, str(m))]
            vals = [naive_value(m, list(p), lab0, lmax) for p in perms]
            assert row["reb"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (str(m), lab)
            ideal = naive_value(m, sorted(lab0, reverse=True), lab0, lmax)
            assert row["iub"] == pytest.approx(ideal, abs=1e-12), (str(m), lab)
            if m.definition.iub_exact:
                assert row["iub"] == pytest.approx(max(vals), abs=1e-12), (str(m), lab)


@pytest.mark.parametrize("seed", [4, 5])
def test_all_tied_run_scores_its_reb(seed):
    queries = [(lab, [1.0] * len(lab)) for lab, _ in _queries(seed, max_n=9)]
    rows = _rows(queries, "expected")
    for key, row in rows.items():
        assert row["value"] == pytest.approx(row["reb"], rel=1e-12, abs=1e-12), key


# ------------------------------------------------------------------ the contract's refusals
def _family(**kw) -> Family:
    base = dict(name="Qm", code=99, description="test", formula="f", source="s",
                plain=r.q_plain_r, tied=r.q_tied_r, iub=r.one_iub_r, reb=r.q_reb_r,
                kernel_params=lambda m, ctx: KernelParams())
    base.update(kw)
    return Family(**base)


def test_registering_without_a_reb_names_what_is_missing():
    with pytest.raises(MeasureRegistrationError, match=r"'Qm' cannot be registered: missing reb"):
        register(_family(reb=None))
    with pytest.raises(MeasureRegistrationError, match=r"missing formula, source, tied"):
        register(_family(formula=None, source=None, tied=None))
    with pytest.raises(MeasureRegistrationError, match=r"unknown: \['histogram'\]"):
        register(_family(state=("histogram",)))
    with pytest.raises(MeasureRegistrationError, match=r"missing reals \(1 to 3, got 4\)"):
        register(_family(reals=4))
    assert "Qm" not in FAMILIES


def test_registering_a_kernel_code_the_dispatch_lacks_is_refused():
    with pytest.raises(MeasureRegistrationError, match="kernel code 99 has no branch"):
        register(_family())
    with pytest.raises(MeasureRegistrationError, match="kernel code 11 is Q's"):
        register(_family(code=11))
    with pytest.raises(MeasureRegistrationError, match="the name 'AP' is taken"):
        register(_family(name="AP", code=11))
    assert "Qm" not in FAMILIES


def test_a_registered_plugin_parses_and_unregisters(monkeypatch):
    """A family registered with a dispatched code (here Q's routines under a new name is
    impossible: codes are unique) -- so a plug-in is shown by re-registering Q itself."""
    q = FAMILIES["Q"]
    unregister("Q")
    try:
        with pytest.raises(uefast.MeasureParseError, match="unknown measure 'Q'"):
            parse_measure("Q@5")
        register(q)
        assert str(parse_measure("Q-measure(beta=2)@5")) == "Q(beta=2.0)@5"
    finally:
        if "Q" not in FAMILIES:
            register(q)


def test_dispatch_module_is_generated_from_the_registry():
    assert Path(target()).read_text() == render(FAMILIES), (
        "src/uefast/kernels/dispatch.py is stale: UEFAST_CODEGEN=1 python -m uefast.measures._codegen")


def test_unknown_kernel_code_gives_nan_not_another_measure():
    from uefast.kernels.dispatch import measure_iub, measure_reb

    lab = np.array([2, 1, 0], np.int64)
    tabs = uefast.engine.tables(4)
    gend = np.zeros(4, np.int64)
    scratch = np.zeros(5)
    fp = np.zeros(REALS)  # the measure's row of reals
    assert np.isnan(measure_iub(99, lab, 3, 3, 0, 1, fp, 0, 2, tabs))
    assert np.isnan(measure_reb(99, lab, 3, 3, 0, 1, fp, 0, 2, tabs, 3.0, gend, scratch))


def test_every_measure_string_parses_back():
    for m in ALL:
        assert parse_measure(str(m)) == m, str(m)


@pytest.mark.parametrize("text,canonical", [
    ("Q", "Q"), ("Q(beta=2)@10", "Q(beta=2.0)@10"), ("Q-measure@5", "Q@5"), ("nERR@10", "nERR@10"),
    ("nERR(gain=exp)@5", "nERR(gain=exp)@5"), ("Pplus", "Pplus"), ("P+", "Pplus"),
    ("P+(beta=2)", "Pplus(beta=2.0)"), ("P-measure", "Pmeasure"),
    ("P-measure(beta=2)", "Pmeasure(beta=2.0)"), ("ERR(gain=lin)", "ERR(gain=lin)"),
    ("ERR(gain=exp,lmax=4)@5", "ERR(lmax=4)@5"), ("NCUrbBR", "NCUrb"),
    ("NCUrbP@5", "NCUrb(nu=p)@5"), ("NCUrb(gamma=0.5,beta=2)", "NCUrb(beta=2.0,gamma=0.5)"), ("O", "O"), ("O-measure(beta=3)@5", "O(beta=3.0)@5"),
])
def test_new_measure_strings(text, canonical):
    assert str(parse_measure(text)) == canonical


@pytest.mark.parametrize("text,match", [
    ("Pplus@10", "Pplus takes no cutoff"), ("NCUrb(gamma=1.5)", r"`gamma` must be in \(0, 1\]"),
    ("NCUrb(gamma=0)", r"`gamma` must be in \(0, 1\]"), ("P-measure@10", "Pmeasure takes no cutoff"), ("Q(beta=-1)", r"`beta` must be a finite number >= 0"),
    ("Q(beta=x)", "`beta` must be a number"), ("nERR(gain=cubic)@3", "`gain` must be one of"),
])
def test_new_measure_parse_errors(text, match):
    with pytest.raises(uefast.MeasureParseError, match=match):
        parse_measure(text)
