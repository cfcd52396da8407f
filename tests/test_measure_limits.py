"""Numerical limits of the measure kernels (issue 28, item 9): exponential gains of large labels,
and full-depth ERR's REB / tie-aware ERR on long lists."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import uefast
from uefast.errors import InputError
from uefast.kernels.err import err_depth


def _table(labels, scores):
    return pa.table({"qid": [1] * len(labels), "docid": list(range(len(labels))),
                     "label": labels, "s": [float(x) for x in scores]})


def test_exp_gain_of_large_labels_stays_finite():
    t = _table([1023, 1023, 1023, 0], [4, 3, 2, 1])
    rows = {r["measure"]: r for r in uefast.evaluate(
        t, measures=["nDCG(gain=exp)@4", "nDCG(gain=exp)@1", "nDCG(gain=exp)"]).to_pylist()}
    d = [1 / math.log2(i + 2) for i in range(4)]
    reb4 = 0.75 * sum(d) / sum(d[:3])  # mean gain 3g/4 times the discounts, over IDCG = g(d1+d2+d3)
    r4 = rows["nDCG(gain=exp)@4"]
    assert r4["value"] == pytest.approx(1.0, abs=1e-12)
    assert r4["reb"] == pytest.approx(reb4, abs=1e-12) and reb4 == pytest.approx(0.9016, abs=1e-4)
    assert r4["ue_v2"] == pytest.approx(1.0, abs=1e-12)
    r1 = rows["nDCG(gain=exp)@1"]
    assert r1["iub"] == 1.0 and r1["reb"] == pytest.approx(0.75, abs=1e-12)
    assert all(math.isfinite(r[c]) for r in rows.values() for c in ("value", "iub", "reb",
                                                                       "ue_v1", "ue_v2"))


def test_scaled_exp_gain_is_exact_against_fractions():
    """Labels beyond float64's 2^1023: nDCG(gain=exp) against exact rational arithmetic."""
    from fractions import Fraction

    labels, scores = [2000, 1990, 5, 2000, 0], [5, 4, 3, 2, 1]
    t = _table(labels, scores)
    got = uefast.evaluate(t, measures=["nDCG(gain=exp)@3"]).to_pylist()[0]
    g = [Fraction(2) ** x - 1 if x > 0 else Fraction(0) for x in labels]
    d = [1 / math.log2(i + 2) for i in range(5)]
    dcg = sum(float(g[i] / g[0]) * d[i] for i in range(3))
    ideal = sorted(g, reverse=True)
    idcg = sum(float(ideal[i] / g[0]) * d[i] for i in range(3))
    assert got["value"] == pytest.approx(dcg / idcg, rel=1e-12)


@pytest.mark.parametrize("measure", ["DCG(gain=exp)@3", "Q(gain=exp)", "O(gain=exp)"])
def test_raw_exp_gain_of_overflowing_labels_is_refused(measure):
    t = _table([1000, 3, 0], [3, 2, 1])
    with pytest.raises(InputError, match=r"label 1000.*above 960"):
        uefast.evaluate(t, measures=[measure])


def test_err_dp_depth_is_bounded_on_long_lists():
    # 60,000 documents, half relevant, smallest stop probability 1/16 (labels 1..4, lmax 4)
    depth = err_depth(60_000, 30_000, 1 / 16, 60_000)
    assert 0 < depth < 2_000
    assert err_depth(100, 0, 1.0, 100) == 0  # nothing can stop the user: no DP at all
    assert err_depth(10, 10, 1.0, 10) == 1  # every document stops the user


def _err_reb_full_dp(theta: np.ndarray, K: int) -> float:
    """E[ERR@K] over random orders by the untruncated normalised DP (SPEC_math §2), numpy."""
    n = len(theta)
    f = np.zeros(K + 1)
    f[0] = 1.0
    for j in range(1, n + 1):
        y = 1.0 - theta[j - 1]
        m = np.arange(min(j, K), 0, -1)
        f[m] = ((j - m) / j) * f[m] + (m / j) * y * f[m - 1]
    return float(sum((f[r - 1] - f[r]) / r for r in range(1, K + 1)))


@pytest.mark.parametrize("seed,p_rel", [(0, 0.5), (1, 0.05), (2, 0.9)])
def test_truncated_err_reb_equals_the_full_dp(seed, p_rel):
    rng = np.random.default_rng(seed)
    n = 2_500
    labels = np.where(rng.random(n) < p_rel, rng.integers(1, 5, n), 0)
    t = _table(labels.tolist(), rng.random(n).tolist())
    got = uefast.evaluate(t, measures=["ERR(lmax=4)", "ERR(lmax=4)@3000"], ties="expected")
    theta = (2.0 ** labels - 1) / 16.0
    want = _err_reb_full_dp(theta, n)
    for r in got.to_pylist():
        assert r["reb"] == pytest.approx(want, rel=1e-13), r["measure"]
    # the all-tied run (one group of n): the tie-aware path at full depth
    tied = uefast.evaluate(_table(labels.tolist(), [1.0] * n), measures=["ERR(lmax=4)"],
                           ties="expected").to_pylist()[0]
    assert tied["value"] == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize("seed", [0, 1])
def test_err_reb_by_grade_blocks_equals_the_per_document_dp(seed):
    """ERR's REB merges blocks of equal grade (kernels/err.py: err_reb); it must equal the
    per-document normalised DP (err_tied with one group) on random sorted label lists, for both
    grade scales, fine stop probabilities (lmax = 60) and cutoffs shallow and deep."""
    from uefast.kernels.err import err_reb, err_tied

    rng = np.random.default_rng(seed)
    for _ in range(400):
        n = int(rng.integers(1, 90))
        top = int(rng.integers(1, 6))
        lab = np.sort(rng.integers(0, top + 1, n))[::-1].astype(np.int64).copy()
        lmax = float(top) if rng.random() < 0.7 else 60.0
        gtype = int(rng.integers(0, 2))
        k = int(rng.choice([0, 1, 3, 10, 20, 200]))
        gend = np.empty(n + 1, np.int64)
        got = err_reb(lab, n, k, lmax, gtype, gend, np.empty(n + 2))
        gend[0] = n
        want = err_tied(lab, gend, 1, n, k, lmax, gtype, np.empty(n + 2))
        assert got == pytest.approx(want, rel=1e-13, abs=1e-300), (lab.tolist(), lmax, gtype, k)
