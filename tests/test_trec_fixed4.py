"""``trec_eval.fixed4`` (the ``%6.4f`` of trec_eval's per-topic lines, in Numba: ``fixed4_fits``
and ``put_fixed4``, written by ``per_topic_text``'s pass) against CPython's correctly rounded
``"%6.4f" % x``, which is glibc's printf: exact halves (round half to even), their neighbours,
subnormals, signed zeros, the 2**39 cut-over to Python, NaN and infinities."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.trec_eval.fixed4 import fixed4_fits
from uefast.trec_eval.output import _f, _fmt, per_topic_text
from uefast.trec_eval.evaluator import Slot


def _column_text(vals):
    qids = [f"q{i}" for i in range(len(vals))]
    return qids, per_topic_text(qids, [Slot("m", "m", "float", np.asarray(vals, np.float64), None)])


def _check(vals):
    for x in vals:  # the values the Numba pass takes: finite and below 2**39 in magnitude
        assert fixed4_fits(x) == (math.isfinite(x) and abs(x) < 2.0 ** 39), x
    # a column of only those: every value printed by put_fixed4 (a column holding any other
    # value is formatted in Python as a whole)
    fit = [x for x in vals if fixed4_fits(x)]
    _, text = _column_text(fit)
    out = [line.split("\t")[2] for line in text.split("\n")[:-1]]
    assert len(out) == len(fit)
    for x, got in zip(fit, out):
        assert got == "%6.4f" % x, (x, got)
    qids, text = _column_text(vals)
    assert text == "".join(f"{'m':<22}\t{q}\t{_f(float(x))}\n" for q, x in zip(qids, vals))


def _reference(qids, slots):
    """Every line by an f-string, topic by topic (what per_topic_text replaced)."""
    def value(s, i):
        v = s.per_query[i]
        return _fmt(s.fmt, "'" + v + "'" if s.measure == "relstring" else v)
    return "".join(f"{s.name:<22}\t{q}\t{value(s, i)}\n" for i, q in enumerate(qids) for s in slots)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.data())
def test_per_topic_text_mixes_columns(nq, data):
    """Real columns (some with NaN, infinities or huge values: formatted in Python), counts of
    several integer dtypes, relstring and other text, non-ASCII qids and measure names: the same
    bytes as one f-string per line."""
    qids = data.draw(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n"),
                                      min_size=1, max_size=4), min_size=nq, max_size=nq))
    slots = []
    for c in range(data.draw(st.integers(1, 6))):
        name = data.draw(st.sampled_from(["map", "P_5", "num_ret", "relstring", "runid", "ndcg_cut_10", "é_m"]))
        kind = data.draw(st.sampled_from(["float", "long8", "long64", "ulong32", "ulong64", "bool", "relstring", "str"]))
        if kind == "float":
            v = np.array(data.draw(st.lists(st.floats(width=64), min_size=nq, max_size=nq)), np.float64)
            slots.append(Slot(name, "m", "float", v, None))
        elif kind in ("long8", "long64", "ulong32", "ulong64", "bool"):
            dt = {"long8": np.int8, "long64": np.int64, "ulong32": np.uint32, "ulong64": np.uint64,
                  "bool": np.bool_}[kind]
            info = np.iinfo(dt) if dt is not np.bool_ else None
            lo, hi = (info.min, info.max) if info else (0, 1)
            v = np.array(data.draw(st.lists(st.integers(int(lo), int(hi)), min_size=nq, max_size=nq)), dt)
            slots.append(Slot(name, "m", "long", v, None))
        else:
            v = data.draw(st.lists(st.text(max_size=5), min_size=nq, max_size=nq))
            slots.append(Slot(name, "relstring" if kind == "relstring" else "m", "str", v, None))
    assert per_topic_text(qids, slots) == _reference(qids, slots)


def test_per_topic_text_refuses_a_short_column():
    with pytest.raises(ValueError, match="3 topics"):
        per_topic_text(["a", "b", "c"], [Slot("m", "m", "float", np.zeros(2), None)])
    with pytest.raises(ValueError, match="values for 2 topics"):
        per_topic_text(["a", "b"], [Slot("r", "relstring", "str", ["x"], None)])


def test_exact_halves_and_neighbours():
    # x * 10**4 ends in exactly .5 only for odd multiples of 1/32 (10**4 = 2**4 * 625)
    ties = [j / 32 for j in range(-4000, 4001) if j % 2] + [j / 32 * 2 ** -20 * 625 for j in range(1, 200, 2)]
    near = [np.nextafter(t, s) for t in ties[::7] for s in (-np.inf, np.inf)]
    _check(ties + near)


def test_edges():
    tiny = [5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 0.0, -0.0, 4.9999e-5, 5e-5, 5.0000001e-5, -5e-5,
            0.99995, 0.999949999, 9.99995, 2.0 ** 39 - 2.0 ** -14, 2.0 ** 39, -(2.0 ** 39), 2.0 ** 38 + 0.5,
            1e15, float("nan"), -float("nan"), float("inf"), -float("inf"), 1.0, 0.1, 0.5, 2 ** -14, 123456.78905]
    _check(tiny)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=50))
def test_any_double(vals):
    _check(vals)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-(10 ** 9), 10 ** 9).map(lambda k: k / 2 ** 14), max_size=50))
def test_dyadic_values_near_halves(vals):
    _check(vals)
