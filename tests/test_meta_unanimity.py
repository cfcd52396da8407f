"""Metric unanimity (uefast.meta.metric_unanimity, SPEC_diversity §5): the paper's example, a
brute-force count over pairs, and Hypothesis properties (constant metric, duplicated reference
metric, MU <= 1)."""
from __future__ import annotations

import itertools
import math

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from uefast.errors import InputError
from uefast.meta import metric_unanimity, metric_unanimity_table

PAPER = {"m1": [1, .5, .2], "m2": [.8, .3, .4], "m3": [1, .2, .5]}


def test_paper_example():
    assert round(metric_unanimity(PAPER, "m1"), 4) == 0.4150
    assert metric_unanimity(PAPER, "m1") == pytest.approx(math.log2((2 / 6) / ((3 / 6) * (3 / 6))))
    assert metric_unanimity(PAPER, "m2") == pytest.approx(1.0)
    assert metric_unanimity(PAPER, "m3") == pytest.approx(1.0)


def _brute(x, R):
    pm = pM = pj = n = 0
    for i, j in itertools.permutations(range(len(x)), 2):
        m = 1.0 if x[i] > x[j] else 0.5 if x[i] == x[j] else 0.0
        M = all(r[i] >= r[j] for r in R)
        pm, pM, pj, n = pm + m, pM + M, pj + m * M, n + 1
    if pM == 0:
        return math.nan
    return -math.inf if pj == 0 else math.log2((pj / n) / ((pm / n) * (pM / n)))


vals = st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=7)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.lists(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=n, max_size=n), min_size=2, max_size=4)))
def test_against_brute_force_and_properties(cols):
    scores = {f"m{i}": c for i, c in enumerate(cols)}
    mu = metric_unanimity(scores, "m0")
    ref = _brute(cols[0], cols[1:])
    assert (math.isnan(mu) and math.isnan(ref)) or mu == pytest.approx(ref)
    assert math.isnan(mu) or mu <= 1 + 1e-12
    # duplicating a reference metric changes nothing
    dup = {**scores, "dup": cols[1]}
    mu2 = metric_unanimity(dup, "m0")
    assert (math.isnan(mu) and math.isnan(mu2)) or mu2 == pytest.approx(mu)
    # a constant metric has MU 0 (where the reference ever agrees)
    const = {**scores, "c": [0.3] * len(cols[0])}
    mc = metric_unanimity(const, "c")
    assert math.isnan(mc) or mc == pytest.approx(0.0, abs=1e-12)


def test_table_groups_pairs_by_query():
    t = pa.table({"system": ["a", "b", "c"] * 2, "qid": ["1"] * 3 + ["2"] * 3,
                  "measure": ["x"] * 6, "value": [1, .5, .2, .1, .2, .3]})
    t2 = pa.table({"system": ["a", "b", "c"] * 2, "qid": ["1"] * 3 + ["2"] * 3,
                   "measure": ["y"] * 6, "value": [.8, .3, .4, .3, .2, .1]})
    out = metric_unanimity_table(pa.concat_tables([t, t2]))
    x = {"x": [1, .5, .2, .1, .2, .3], "y": [.8, .3, .4, .3, .2, .1]}
    assert out["x"] == pytest.approx(metric_unanimity(x, "x", groups=[1, 1, 1, 2, 2, 2]))
    assert out["x"] != pytest.approx(metric_unanimity(x, "x"))


def test_errors():
    with pytest.raises(InputError, match="no scores for metric"):
        metric_unanimity(PAPER, "zz")
    with pytest.raises(InputError, match="reference set is empty"):
        metric_unanimity({"a": [1, 2]}, "a")
