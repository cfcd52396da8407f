"""The CPU driver's kernels built for the families a call asks for
(:func:`uefast.kernels.driver.chunk_kernels`, ``UEFAST_KERNEL_FAMILIES=requested``) give the same
numbers, bit for bit, as the kernels of every family (the suite's setting, tests/conftest.py), and
the other families' lines are gone from them (NaN, the dispatch's unknown-code answer)."""
from __future__ import annotations

import numpy as np
import pytest

import uefast
from conftest import letor_table
from uefast.kernels import dispatch
from uefast.measures._family import REALS
from uefast.kernels.driver import chunk_kernels, kernel_set


def _table(seed):
    rng = np.random.default_rng(seed)
    queries = []
    for _ in range(12):
        n = int(rng.integers(1, 30))
        labels = [int(v) for v in rng.integers(0, 4, n)]
        # rounded scores: ties, so that the tie-aware paths run too
        scores = {"a": [float(v) for v in np.round(rng.random(n), 1)],
                  "b": [float(v) for v in rng.random(n)]}
        queries.append((labels, scores, None))
    return letor_table(queries, systems=("a", "b"))


def _values(res):
    """Every column of a result table as a NumPy array."""
    return {c: res[c].to_numpy(zero_copy_only=False) for c in res.column_names}


@pytest.mark.slow
@pytest.mark.parametrize("measures", [["nDCG@10", "AP"], ["P@5", "RR", "Q"]])
@pytest.mark.parametrize("ties", ["trec_eval", "expected"])
def test_requested_families_equal_all_families(monkeypatch, measures, ties):
    table = _table(7)
    monkeypatch.setenv("UEFAST_KERNEL_FAMILIES", "all")
    full = _values(uefast.evaluate(table, measures=measures, ties=ties))
    monkeypatch.setenv("UEFAST_KERNEL_FAMILIES", "requested")
    part = _values(uefast.evaluate(table, measures=measures, ties=ties))
    assert full.keys() == part.keys() and full
    for c in full:
        np.testing.assert_array_equal(part[c], full[c], err_msg=c)  # NaN equals NaN here


def test_kernel_set(monkeypatch):
    kinds = np.array([dispatch.K_NDCG, dispatch.K_AP, dispatch.K_AP])
    monkeypatch.setenv("UEFAST_KERNEL_FAMILIES", "requested")
    assert kernel_set(kinds) == dispatch.F_NDCG | dispatch.F_AP
    monkeypatch.setenv("UEFAST_KERNEL_FAMILIES", "all")
    assert kernel_set(kinds) == dispatch.ALL_FAMILIES
    monkeypatch.setenv("UEFAST_KERNEL_FAMILIES", "some")
    with pytest.raises(ValueError, match="UEFAST_KERNEL_FAMILIES='some'"):
        kernel_set(kinds)


def test_family_set_is_in_the_cache_key():
    """Numba keys its disk cache of a closure by its closure's values: the family set must be
    the kernels' only one, or two sets would share a cache entry."""
    for kernel in chunk_kernels(dispatch.F_P):
        assert kernel.py_func.__code__.co_freevars == ("fams",)
        assert [c.cell_contents for c in kernel.py_func.__closure__] == [dispatch.F_P]


def test_pruned_dispatch_drops_other_families():
    """The dispatch rebound to P alone answers NaN (unknown code) for AP: its line is gone; the
    whole dispatch answers both."""
    import numba

    from uefast.kernels.driver import _inlined

    only_p = _inlined(dispatch.measure_iub, {"FAMS": dispatch.F_P})

    @numba.njit
    def iub_p(kind, lab, tabs, fp):
        return only_p(kind, lab, 3, 2, 0, 1, fp, 0, 2, tabs)

    lab = np.array([2, 1, 0], np.int64)
    from uefast.engine import tables

    tabs = tables(8)
    fp = np.zeros(REALS)  # the measure's row of reals
    assert iub_p(dispatch.K_P, lab, tabs, fp) == 1.0
    assert np.isnan(iub_p(dispatch.K_AP, lab, tabs, fp))
    assert dispatch.measure_iub(dispatch.K_AP, lab, 3, 2, 0, 1, fp, 0, 2, tabs) == 1.0
