"""Bad input to uefast.stats gets a clear InputError naming the parameter and the value."""
from __future__ import annotations

import numpy as np
import pytest

from uefast.errors import InputError
from uefast.stats import adjust_pvalues, all_pairs, paired_test, tukey_hsd

X = np.array([0.1, 0.2, 0.3, 0.4])
Y = np.array([0.2, 0.2, 0.5, 0.1])
M = np.random.default_rng(0).random((10, 3))


@pytest.mark.parametrize("kwargs, match", [
    (dict(x=X, y=Y[:3]), r"`x` and `y` must have the same length; got 4 and 3"),
    (dict(x=X[:1], y=Y[:1]), r"need at least 2 topics; got 1"),
    (dict(x=np.array([0.1, np.nan, 0.2, 0.3]), y=Y), r"`x` contains nan at index 1"),
    (dict(x=X, y=np.array([0.1, 0.2, np.inf, 0.3])), r"`y` contains inf at index 2"),
    (dict(x=[[0.1, 0.2]], y=[[0.1, 0.2]]), r"`x` must be 1-D; got an array of shape \(1, 2\)"),
    (dict(x=["a", "b"], y=Y[:2]), r"`x` must be numeric"),
    (dict(x=X, y=Y, method="ttest"), r"`method` must be one of \{'t', .*\}; got 'ttest'"),
    (dict(x=X, y=Y, alternative="both"), r"`alternative` must be one of .*; got 'both'"),
    (dict(x=X, y=Y, method="bootstrap", n_resamples=0), r"`n_resamples` must be a positive integer; got 0"),
    (dict(x=X, y=Y, method="randomization", exact=False, n_resamples=2.5), r"`n_resamples` must be a positive integer; got 2.5"),
    (dict(x=X, y=Y, method="bootstrap", seed=-1), r"`seed` must be an integer in \[0, 2\*\*64\) or None; got -1"),
    (dict(x=X, y=Y, method="bootstrap", seed="abc"), r"`seed` must be an integer"),
    (dict(x=X, y=Y, method="sign", epsilon=-0.1), r"`epsilon` must be a non-negative number; got -0.1"),
    (dict(x=X, y=Y, method="randomization", exact="yes"), r"`exact` must be True, False or None; got 'yes'"),
    (dict(x=np.arange(31.0), y=np.zeros(31), method="randomization", exact=True), r"`exact=True` .* n <= 30 topics; got n = 31"),
    (dict(x=X, y=Y, method="bootstrap", batch_size=0), r"`batch_size` must be a positive integer; got 0"),
])
def test_paired_test_iv(kwargs, match):
    kwargs = dict(kwargs)
    x, y = kwargs.pop("x"), kwargs.pop("y")
    with pytest.raises(InputError, match=match):
        paired_test(x, y, **kwargs)


@pytest.mark.parametrize("matrix, kwargs, match", [
    (M[:1], {}, r"`matrix` needs at least 2 topics \(rows\); got shape \(1, 3\)"),
    (M[:, :1], {}, r"`matrix` needs at least 2 systems \(columns\); got shape \(10, 1\)"),
    (np.where(np.eye(10, 3) > 0, np.nan, M), {}, r"`matrix` contains nan at row 0, column 0"),
    (M[0], {}, r"`matrix` must be 2-D"),
    (M, dict(method="anova"), r"`method` must be one of"),
    (M, dict(correction="fdr"), r"`correction` must be one of \{'none', 'bonferroni', 'holm', 'bh'\}; got 'fdr'"),
    (M, dict(alpha=1.5), r"`alpha` must be in \(0, 1\); got 1.5"),
    (M, dict(confidence_level=0), r"`confidence_level` must be in \(0, 1\); got 0"),
    (M, dict(baseline="zz"), r"`baseline` 'zz' is not one of the systems"),
    (M, dict(baseline=7), r"`baseline` index must be in \[0, 3\); got 7"),
    (M, dict(systems=["a", "b"]), r"`systems` must give 3 distinct names"),
    (M, dict(method="tukey_hsd", alternative="less"), r"`alternative` must be 'two-sided' for tukey_hsd"),
    (M, dict(method="bootstrap", n_resamples=-3), r"`n_resamples` must be a positive integer; got -3"),
    ("not a table", {}, r"expected a pyarrow.Table or polars.DataFrame; got str"),
])
def test_all_pairs_iv(matrix, kwargs, match):
    with pytest.raises(InputError, match=match):
        all_pairs(matrix, **kwargs)


def test_tukey_and_adjust_iv():
    with pytest.raises(InputError, match=r"`n_resamples` must be a positive integer; got 0"):
        tukey_hsd(M, n_resamples=0)
    with pytest.raises(InputError, match=r"`matrix` contains inf"):
        tukey_hsd(np.where(np.eye(10, 3) > 0, np.inf, M))
    with pytest.raises(InputError, match=r"`pvalues` must be a 1-D array of values in \[0, 1\]"):
        adjust_pvalues([0.1, 1.2])
    with pytest.raises(InputError, match=r"`method` must be one of .*; got 'sidak'"):
        adjust_pvalues([0.1], "sidak")  # the parameter is `method` (it said `correction`)


def test_confidence_level_iv():
    res = paired_test(X, Y, "t")
    with pytest.raises(InputError, match=r"`confidence_level` must be in \(0, 1\); got 95"):
        res.confidence_interval(95)
