"""UE V1/V2 (SPEC_math §4): formulas, ranges and properties on every ordering of small queries."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uefast
from conftest import letor_table
from uefast.ue import ue_scores


def test_formulas_by_hand():
    v1, v2 = ue_scores(np.array([0.5, 0.1, 0.0, 0.3]), np.array([1.0, 1.0, 1.0, 0.3]),
                       np.array([0.25, 0.25, 0.25, 0.3]))
    assert v1[0] == pytest.approx(0.5 * 0.5 / 0.75)
    assert v2[0] == pytest.approx(0.25 / 0.75)
    assert v2[1] == pytest.approx((0.1 - 0.25) / 0.25)
    assert v2[2] == -1.0 and v1[2] == 0.0
    assert v2[3] == 0.0  # degenerate IUB == REB


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=6).filter(lambda l: any(l)))
def test_properties_over_every_ordering(labels):
    n = len(labels)
    ms = ["nDCG@3", "AP", "P@2", "RR", "ERR@3", "SP@3"]
    queries = [(labels, {"s": [n - perm.index(i) for i in range(n)]}, None)
               for perm in itertools.permutations(range(n))]
    res = uefast.evaluate(letor_table(queries), measures=ms, ties="input").to_pylist()
    for m in ms:
        rows = [r for r in res if r["measure"] == m]
        a = np.array([r["value"] for r in rows])
        reb = rows[0]["reb"]
        iub = rows[0]["iub"]
        assert a.mean() == pytest.approx(reb, abs=1e-12)  # E[A - REB] = 0 over all orderings
        assert a.max() == pytest.approx(iub, abs=1e-12)  # the ideal ranking is the maximum
        for r in rows:
            assert 0.0 <= r["ue_v1"] <= 1.0 and -1.0 <= r["ue_v2"] <= 1.0
            if iub - reb > 1e-9:
                if abs(r["value"] - iub) < 1e-12:
                    assert r["ue_v2"] == pytest.approx(1.0)
                    assert r["ue_v1"] == pytest.approx(iub / (iub + reb))  # V1 < 1 when REB > 0
                if r["value"] == 0.0:
                    assert r["ue_v2"] == -1.0


def _ue_reference(a, iub, reb, nan_degenerate):
    """SPEC_math §4 for one query, plain Python."""
    deg = iub - reb <= 1e-12 * max(1.0, iub)
    if deg and nan_degenerate:
        return float("nan"), float("nan")
    v1 = (a / iub) * (a / (a + reb)) if iub > 0 and a > 0 else 0.0
    v1 = min(1.0, max(0.0, v1))
    if deg:
        return v1, 0.0
    v2 = (a - reb) / (iub - reb) if a >= reb else (a - reb) / reb
    return v1, min(1.0, max(-1.0, v2))


_unit = st.floats(0.0, 3.0, allow_nan=False) | st.sampled_from([0.0, 1e-13, 0.25, 1.0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_unit, _unit, _unit), min_size=1, max_size=30),
       st.sampled_from(["zero", "nan"]))
def test_ue_scores_match_scalar_reference(triples, policy):
    """Values A <= IUB, REB <= IUB as the kernels produce them (incl. IUB == REB, A == 0,
    A == IUB, tiny gaps at the degenerate threshold); the 2-D shape is kept."""
    rows = [(min(a, i), i, min(r, i)) for a, i, r in triples]
    a, iub, reb = (np.array(c).reshape(-1, 1) for c in zip(*rows))
    v1, v2 = ue_scores(a, iub, reb, policy)
    assert v1.shape == a.shape and v2.shape == a.shape
    for k, (x, i, r) in enumerate(rows):
        w1, w2 = _ue_reference(x, i, r, policy == "nan")
        np.testing.assert_equal((v1[k, 0], v2[k, 0]), (w1, w2))
