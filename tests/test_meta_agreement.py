"""Oracles for uefast.meta.agreement: statsmodels (Cohen's κ with its standard errors, Fleiss'
κ) and the ``krippendorff`` package on random rating tables, textbook examples, and the
handling of pairs judged by some assessors only."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.errors import InputError
from uefast.meta import agreement
from uefast.meta import _kappa

statsmodels_ir = pytest.importorskip("statsmodels.stats.inter_rater")
krippendorff = pytest.importorskip("krippendorff")


def qrels_of(labels, qid="q1"):
    """One assessor's qrels: docid i gets labels[i]; None = not judged."""
    keep = [i for i, v in enumerate(labels) if v is not None]
    return pa.table({"qid": [qid] * len(keep), "docid": [f"d{i}" for i in keep],
                     "label": pa.array([int(labels[i]) for i in keep], pa.int64())})


def tables_of(matrix):
    """Assessor tables of a (raters x items) matrix (NaN = not judged)."""
    return [qrels_of([None if np.isnan(v) else int(v) for v in row]) for row in matrix]


ratings = st.integers(2, 4).flatmap(lambda k: st.integers(2, 40).flatmap(
    lambda n: st.tuples(st.just(k), st.lists(st.tuples(st.integers(0, k - 1),
                                                        st.integers(0, k - 1)),
                                             min_size=n, max_size=n))))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statsmodels' 0/0 when kappa is undefined
@settings(max_examples=60, deadline=None)
@given(ratings, st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_matches_statsmodels(data, weights):
    k, pairs = data
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    cats = list(range(k))
    r = agreement(qrels_of(a), qrels_of(b), weights=weights, categories=cats)
    table = np.zeros((k, k))
    np.add.at(table, (a, b), 1)
    ref = (statsmodels_ir.cohens_kappa(table, wt=weights) if weights
           else statsmodels_ir.cohens_kappa(table))
    assert r.n_items == len(pairs) and r.n_excluded == 0 and r.categories == tuple(cats)
    if len(set(a) | set(b)) == 1:
        assert r.statistic == 1.0  # one category for both: κ := 1 (SPEC_math §6.14)
        return
    assert r.statistic == pytest.approx(ref.kappa, abs=1e-12)
    # (variances: a true 0 comes out as +-1e-16, whose square root is 1e-8)
    assert r.standard_error ** 2 == pytest.approx(max(ref.var_kappa, 0), abs=1e-12)
    if ref.var_kappa0 > 1e-12:  # (a true 0 comes out of statsmodels as +-1e-16)
        assert r.pvalue == pytest.approx(ref.pvalue_two_sided, abs=1e-9)
    ci = r.confidence_interval(0.9)
    z = 1.6448536269514722
    assert ci.low == pytest.approx(r.statistic - z * r.standard_error, abs=1e-12)
    assert ci.high == pytest.approx(r.statistic + z * r.standard_error, abs=1e-12)


rating_matrices = st.tuples(st.integers(2, 5), st.integers(2, 4), st.integers(3, 30)).flatmap(
    lambda s: st.tuples(st.just(s[1]), st.lists(st.lists(st.integers(0, s[1] - 1), min_size=s[2],
                                                         max_size=s[2]),
                                                min_size=s[0], max_size=s[0])))


@settings(max_examples=60, deadline=None)
@given(rating_matrices)
def test_fleiss_matches_statsmodels(data):
    k, rows = data
    m = np.array(rows, float)
    counts = statsmodels_ir.aggregate_raters(m.T.astype(int), n_cat=k)[0]
    r = agreement(*tables_of(m), statistic="fleiss", n_resamples=50, seed=0)
    if np.count_nonzero(counts.sum(axis=0)) == 1:
        assert r.statistic == 1.0
        return
    assert r.statistic == pytest.approx(statsmodels_ir.fleiss_kappa(counts), abs=1e-12)
    assert r.n_items == m.shape[1] and r.n_assessors == m.shape[0]


@settings(max_examples=80, deadline=None)
@given(rating_matrices, st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
       st.integers(0, 2**32 - 1))
def test_krippendorff_matches_package_with_missing_values(data, level, mask_seed):
    k, rows = data
    m = np.array(rows, float) + 1.0  # values 1..k (ratio: no 0/0 distance ambiguity)
    m[np.random.default_rng(mask_seed).random(m.shape) < 0.3] = np.nan
    present = (~np.isnan(m)).sum(axis=0)
    tables = tables_of(m)
    if (present >= 2).sum() == 0 or any(t.num_rows == 0 for t in tables):
        return
    r = agreement(*tables, statistic="krippendorff", level=level, n_resamples=20, seed=1)
    pairable = m[:, present >= 2]
    assert r.n_items == pairable.shape[1]
    assert r.n_excluded == int((present == 1).sum())
    assert r.excluded_per_assessor == tuple(int(x) for x in (~np.isnan(m[:, present == 1])).sum(1))
    if np.unique(pairable[~np.isnan(pairable)]).size < 2:
        assert r.statistic == 1.0
        return
    ref = krippendorff.alpha(pairable, level_of_measurement=level,
                             value_domain=np.arange(1, k + 1, dtype=float))
    assert r.statistic == pytest.approx(ref, abs=1e-10)


def test_textbook_cohen_2x2():
    # SPEC_math §6.14: counts (20, 5; 10, 15) give κ = 0.4
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    r = agreement(qrels_of(a), qrels_of(b))
    assert r.statistic == pytest.approx(0.4, abs=1e-15)
    assert agreement(qrels_of(b), qrels_of(a)).statistic == pytest.approx(0.4, abs=1e-15)
    assert agreement(qrels_of(a), qrels_of(a)).statistic == 1.0


def test_textbook_fleiss_1971_table():
    # Fleiss' κ worked example (Wikipedia "Fleiss' kappa"): 10 items, 14 raters, κ = 0.210
    counts = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0],
                       [2, 2, 8, 1, 1], [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2],
                       [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    m = np.array([np.repeat(np.arange(5), row) for row in counts], float).T  # raters x items
    r = agreement(*tables_of(m), statistic="fleiss", n_resamples=200, seed=3)
    assert round(r.statistic, 3) == 0.210
    assert r.n_items == 10 and r.n_assessors == 14


KRIPPENDORFF_2011 = np.array([  # Krippendorff (2011), "Computing Krippendorff's alpha", §C
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan]])


@pytest.mark.parametrize("level, expected", [("nominal", 0.743), ("ordinal", 0.815),
                                             ("interval", 0.849), ("ratio", 0.797)])
def test_textbook_krippendorff_2011(level, expected):
    r = agreement(*tables_of(KRIPPENDORFF_2011), statistic="krippendorff", level=level,
                  n_resamples=100, seed=0)
    assert round(r.statistic, 3) == expected
    assert (r.n_items, r.n_excluded, r.excluded_per_assessor) == (11, 1, (0, 1, 0, 0))
    assert np.isnan(r.pvalue)


@pytest.mark.parametrize("statistic, option", [
    ("cohen", None), ("cohen", "linear"), ("cohen", "quadratic"), ("fleiss", None),
    ("krippendorff", "nominal"), ("krippendorff", "ordinal"), ("krippendorff", "interval")])
def test_pattern_weights_equal_expanded_items(statistic, option):
    """The bootstrap evaluates each coefficient on weighted rating patterns: integer weights
    must give the oracle's coefficient of the items repeated that many times."""
    from uefast.meta.agreement import pattern_statistic

    rng = np.random.default_rng(5)
    m = 2 if statistic == "cohen" else 4
    rows = rng.integers(0, 3, size=(40, m))
    if statistic == "krippendorff":
        rows[rng.random(rows.shape) < 0.2] = -1
        rows = rows[(rows >= 0).sum(axis=1) >= 2]
    cats = np.array([1, 2, 4])
    weights = option if statistic == "cohen" else None
    level = option if statistic == "krippendorff" else None
    pats, counts, stat = pattern_statistic(statistic, rows, cats, weights, level)
    assert counts.sum() == rows.shape[0]
    w = rng.integers(0, 4, size=(5, pats.shape[0])).astype(float)
    w[:, 0] += 1
    got = stat(np.vstack([counts, w]))
    for b, wb in enumerate(np.vstack([counts, w])):
        if statistic == "cohen":
            table = np.zeros((3, 3))
            table[pats[:, 0], pats[:, 1]] = wb
            ref = (statsmodels_ir.cohens_kappa(table, wt=weights).kappa if weights
                   else statsmodels_ir.cohens_kappa(table).kappa)
        elif statistic == "fleiss":
            ref = statsmodels_ir.fleiss_kappa(np.repeat(pats, wb.astype(int), axis=0))
        else:
            ref = krippendorff.alpha(value_counts=np.repeat(pats, wb.astype(int), axis=0),
                                     value_domain=cats.astype(float), level_of_measurement=level)
        assert got[b] == pytest.approx(ref, abs=1e-12)


def test_fleiss_null_se_against_simulation():
    """Fleiss, Nee & Landis' null SE against the spread of κ under random rating (N=80 items,
    m=4 raters, marginals p): within 10% of the simulated SD over 4000 replications."""
    rng = np.random.default_rng(11)
    p = np.array([0.5, 0.3, 0.2])
    n, m, reps = 80, 4, 4000
    counts = rng.multinomial(m, p, size=(reps, n))
    kappas = np.array([_kappa.fleiss_from_counts(c, np.ones((1, n)))[0] for c in counts])
    se0 = np.mean([_kappa.fleiss_null_se(c, np.ones(n)) for c in counts[:200]])
    assert abs(kappas.std() / se0 - 1) < 0.1


def test_bootstrap_seeded_and_reported():
    a, b = [0, 1, 2, 1, 0, 2, 1, 1, 0, 2] * 3, [0, 1, 2, 2, 0, 1, 1, 0, 0, 2] * 3
    r1 = agreement(qrels_of(a), qrels_of(b), ci="bootstrap", n_resamples=500, seed=7)
    r2 = agreement(qrels_of(a), qrels_of(b), ci="bootstrap", n_resamples=500, seed=7)
    assert r1.confidence_interval() == r2.confidence_interval()
    assert (r1.ci_method, r1.n_resamples, r1.seed) == ("bootstrap", 500, 7)
    ci = r1.confidence_interval(0.9)
    assert ci.low < r1.statistic < ci.high
    assert np.array_equal(np.quantile(r1.bootstrap_distribution, [0.05, 0.95]), [ci.low, ci.high])
    r3 = agreement(qrels_of(a), qrels_of(b), ci="bootstrap", n_resamples=500)
    assert isinstance(r3.seed, int)


def test_unmatched_pairs_counted_or_refused():
    a = qrels_of([1, 0, 1, None, 2])
    b = qrels_of([1, 0, None, 1, 2, 0])
    r = agreement(a, b)
    assert (r.n_items, r.n_excluded, r.excluded_per_assessor) == (3, 3, (1, 2))
    with pytest.raises(InputError, match=r"qid 'q1', docid 'd2' is judged only in qrels \[1\]"):
        agreement(a, b, unmatched="error")
    c = qrels_of([1, 0, 1, 1, 2, 0])
    f = agreement(a, b, c, statistic="fleiss", seed=0, n_resamples=10)
    assert (f.n_items, f.n_excluded, f.excluded_per_assessor) == (3, 3, (1, 2, 3))
    k = agreement(a, b, c, statistic="krippendorff", seed=0, n_resamples=10)
    assert (k.n_items, k.n_excluded) == (6, 0)
    with pytest.raises(InputError, match="do not overlap"):
        agreement(qrels_of([1, None]), qrels_of([None, 1]))


def test_categories_fix_the_scale():
    a, b = [0, 1, 3, 3, 0, 1], [0, 3, 3, 1, 0, 0]
    free = agreement(qrels_of(a), qrels_of(b), weights="linear")
    scale = agreement(qrels_of(a), qrels_of(b), weights="linear", categories=[0, 1, 2, 3])
    assert free.categories == (0, 1, 3) and scale.categories == (0, 1, 2, 3)
    table = np.zeros((4, 4))
    np.add.at(table, (a, b), 1)
    ref = statsmodels_ir.cohens_kappa(table, wt="linear").kappa
    assert scale.statistic == pytest.approx(ref, abs=1e-12)
    assert free.statistic != pytest.approx(ref)
    with pytest.raises(InputError, match=r"label 3 .*docid 'd2'.* is not in `categories` \[0, 1\]"):
        agreement(qrels_of(a), qrels_of(b), categories=[0, 1])


def test_input_formats(tmp_path):
    import pandas as pd
    import polars as pl
    import pyarrow.parquet as pq

    a, b = qrels_of([1, 0, 2, 1, 0]), qrels_of([1, 0, 1, 1, 0])
    ref = agreement(a, b).statistic
    trec = tmp_path / "b.qrels"
    trec.write_text("".join(f"q1 0 {d} {v}\n" for d, v in zip(b["docid"].to_pylist(),
                                                                 b["label"].to_pylist())))
    pq.write_table(a, tmp_path / "a.parquet")
    assert agreement(str(tmp_path / "a.parquet"), trec).statistic == ref
    assert agreement(pl.from_arrow(a), b.to_pandas()).statistic == ref
    assert agreement(a.to_pydict(), pd.DataFrame(b.to_pydict())).statistic == ref
    cat = pd.DataFrame(b.to_pydict()).astype({"qid": "category", "docid": "category"})
    assert agreement(a, cat).statistic == ref
    renamed = a.rename_columns(["topic", "doc", "rel"])
    assert agreement(renamed, b.rename_columns(["topic", "doc", "rel"]), qid="topic",
                     docid="doc", label="rel").statistic == ref


def test_input_errors():
    a, b = qrels_of([1, 0, 1]), qrels_of([1, 1, 0])
    cases = [
        (dict(statistic="scott"), "`statistic` must be one of"),
        (dict(weights="cubic"), "`weights` must be one of"),
        (dict(statistic="fleiss", weights="linear"), "applies to statistic='cohen'"),
        (dict(level="ordinal"), "applies to statistic='krippendorff'"),
        (dict(statistic="krippendorff", level="log"), "`level` must be one of"),
        (dict(statistic="fleiss", ci="asymptotic"), "Cohen's κ only"),
        (dict(ci="bootstrap", n_resamples=0), "`n_resamples` must be a positive integer"),
        (dict(ci="bootstrap", seed=-1), "`seed` must be an integer"),
        (dict(unmatched="drop"), "`unmatched` must be one of"),
        (dict(categories=[0.5, 1]), "`categories` must be a non-empty sequence of integer"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(InputError, match=msg):
            agreement(a, b, **kwargs)
    with pytest.raises(InputError, match="at least 2 qrels tables"):
        agreement(a)
    with pytest.raises(InputError, match="Cohen's κ compares 2 assessors; got 3"):
        agreement(a, b, a)
    with pytest.raises(InputError, match="`confidence_level` must be in"):
        agreement(a, b).confidence_interval(1.5)
    dup = pa.concat_tables([a, a.slice(0, 1)])
    with pytest.raises(InputError, match="qrels 2: qid 'q1', docid 'd0' is judged more than once"):
        agreement(a, dup)
    with pytest.raises(InputError, match="qrels 2: missing column 'label'"):
        agreement(a, b.drop_columns(["label"]))
    with pytest.raises(InputError, match="mismatched dtypes"):
        agreement(a, b.set_column(0, "qid", pa.array([1, 1, 1])))
    with pytest.raises(InputError, match="must hold integer labels"):
        agreement(a, b.set_column(2, "label", pa.array([0.5, 1.0, 0.0])))


def test_cli(tmp_path, capsys):
    import json

    from uefast.cli import main

    paths = []
    for i, labels in enumerate(([1, 0, 2, 1, 0, 2], [1, 0, 1, 1, 0], [1, 1, 2, 1, 0, 2])):
        path = tmp_path / f"a{i}.qrels"
        path.write_text("".join(f"q1 0 d{j} {v}\n" for j, v in enumerate(labels)))
        paths.append(str(path))
    assert main(["agreement", paths[0], paths[1], "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)
    ref = agreement(*paths[:2])
    ci = ref.confidence_interval()
    assert row["value"] == ref.statistic and (row["ci_low"], row["ci_high"]) == (ci.low, ci.high)
    assert (row["n_items"], row["n_excluded"], row["excluded_per_assessor"]) == (5, 1, [1, 0])
    assert main(["agreement", *paths, "--statistic", "krippendorff", "--level", "ordinal",
                 "--seed", "3", "--n-resamples", "200"]) == 0
    out = capsys.readouterr().out
    expect = agreement(*paths, statistic="krippendorff", level="ordinal", seed=3, n_resamples=200)
    assert f"Krippendorff's alpha (ordinal): {expect.statistic:.4f}" in out
    assert "200 resamples, seed 3" in out and "pairs left out (too few assessors): 0" in out
    assert main(["agreement", *paths]) == 2
    assert "Cohen's κ compares 2 assessors; got 3" in capsys.readouterr().err


def test_bootstrap_interval_close_to_asymptotic_on_many_items():
    """Two independent constructions of the interval (FCE 1969's SE; resampled items) agree
    to within 0.01 on 4000 items."""
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, 4000)
    b = np.where(rng.random(4000) < 0.6, a, rng.integers(0, 3, 4000))
    for weights in (None, "quadratic"):
        wald = agreement(qrels_of(a), qrels_of(b), weights=weights).confidence_interval()
        boot = agreement(qrels_of(a), qrels_of(b), weights=weights, ci="bootstrap", seed=4,
                         n_resamples=2000).confidence_interval()
        assert abs(wald.low - boot.low) < 0.01 and abs(wald.high - boot.high) < 0.01
