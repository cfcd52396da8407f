"""``trec_eval.fixed4.fixed4_lines`` (the ``%6.4f`` of trec_eval's per-topic lines, in Numba)
against CPython's correctly rounded ``"%6.4f" % x``, which is glibc's printf: exact halves
(round half to even), their neighbours, subnormals, signed zeros, the 2**39 cut-over to Python,
NaN and infinities."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.trec_eval.fixed4 import fixed4_lines
from uefast.trec_eval.output import _column, _f
from uefast.trec_eval.evaluator import Slot


def _lines(vals):
    arr = np.asarray(vals, np.float64)
    txt, slow = fixed4_lines(arr)
    out = bytes(txt).decode().split("\n")[:-1]
    assert len(out) == arr.size
    return out, set(slow.tolist())


def _check(vals):
    out, slow = _lines(vals)
    for i, x in enumerate(vals):
        if i in slow:
            assert not math.isfinite(x) or abs(x) >= 2.0 ** 39
        else:
            assert out[i] == "%6.4f" % x, (x, out[i])
    col = _column(Slot("m", "m", "float", np.asarray(vals, np.float64), None))
    assert col == [_f(float(x)) for x in vals]


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
