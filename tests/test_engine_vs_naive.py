"""Every kernel against the plain-Python reference (tests/naive.py): values, IUB, REB, tie policies."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive
import uefast
from conftest import letor_table, naive_value
from uefast import parse_measures

MEASURES = parse_measures([
    "nDCG@3", "nDCG", "nDCG(gain=exp)@5", "DCG@4", "DCG(gain=exp)", "P@3", "P@10", "R@2",
    "Rprec", "SP@3", "SP", "AP", "AP@3", "AP(norm=k)@3", "AP(norm=min)@3", "RR", "RR@2",
    "ERR@3", "ERR", "ERR(lmax=5)@4", "RBP(p=0.8)", "RBP(p=0.5)@3", "P(rel=2)@2", "AP(rel=2)",
    "R(rel=3)@4", "Success@1", "Success@3", "Success(rel=2)@2",
])

query = st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.lists(st.integers(-1, 4), min_size=n, max_size=n),        # labels (negatives clamp to 0)
    st.lists(st.integers(0, 3), min_size=n, max_size=n),         # scores with many ties
    st.permutations(list(range(100, 100 + n)) if n < 5 else [3, 20, 100, 9, 11, 1, 2, 40, 7][:n])
    | st.sampled_from([list(range(100, 100 + n)), list(range(100 + n, 100, -1))]),  # monotone
))


def _by_query(table, measure):
    rows = [r for r in table.to_pylist() if r["measure"] == str(measure)]
    return {r["qid"]: r for r in rows}


def _check(queries, ties, measures=MEASURES):
    """Every measure's value, IUB and Np on queries ``(labels, scores, docids)`` against the
    reference ranking of tie policy ``ties``."""
    t = letor_table([(l, {"s": s}, d) for l, s, d in queries])
    res = uefast.evaluate(t, measures=measures, ties=ties)
    lmax = max(max(0, max(l)) for l, _, _ in queries)
    for m in measures:
        got = _by_query(res, m)
        for qi, (labels, scores, docs) in enumerate(queries):
            row = got[qi + 1]
            judged = labels
            if ties == "trec_eval":
                order = naive.rank_trec_eval(scores, docs)
                want = naive_value(m, [labels[i] for i in order], judged, lmax)
            elif ties == "input":
                order = naive.rank_input(scores)
                want = naive_value(m, [labels[i] for i in order], judged, lmax)
            else:
                orders = list(itertools.islice(naive.tie_consistent_orders(scores), 5041))
                want = naive.expected_over_orders(lambda ls: naive_value(m, ls, judged, lmax),
                                                  labels, orders)
            iub = naive_value(m, sorted(labels, reverse=True), judged, lmax)
            assert row["value"] == pytest.approx(want, abs=1e-12), (m, qi, ties)
            assert row["iub"] == pytest.approx(iub, abs=1e-12), (m, qi)
            assert row["n_rel"] == sum(1 for x in labels if x >= (m.param("rel") if "rel" in m.definition.params and m.param("rel") else 1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(queries=st.lists(query, min_size=1, max_size=4), ties=st.sampled_from(["trec_eval", "input"]),
       strings=st.booleans())
def test_values_and_iub_match_reference(ranking_path, queries, ties, strings):
    if strings:  # the same docids as strings: the reference's order is unchanged (bytes of str)
        queries = [(lab, s, [str(d) for d in docs]) for lab, s, docs in queries]
    _check(queries, ties)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(query.filter(lambda q: math.prod(
    math.factorial(q[1].count(v)) for v in set(q[1])) <= 720), min_size=1, max_size=3))
def test_tie_aware_values_match_enumeration(queries):
    _check(queries, "expected")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 4), min_size=1, max_size=6))
def test_reb_is_the_mean_over_all_permutations(labels):
    """REB by brute-force enumeration of all n! orders (n <= 6), and REB == tie-aware value of a
    run whose scores are all equal."""
    t = letor_table([(labels, {"s": [0.5] * len(labels)}, None)])
    res = uefast.evaluate(t, measures=MEASURES, ties="expected")
    lmax = max(max(labels), 1)
    for m in MEASURES:
        row = _by_query(res, m)[1]
        want = naive.reb_bruteforce(lambda ls: naive_value(m, ls, labels, lmax), labels)
        assert row["reb"] == pytest.approx(want, abs=1e-12), m
        assert row["value"] == pytest.approx(row["reb"], abs=1e-12), m


@pytest.mark.parametrize("n,nrel", [(n, r) for n in (1, 2, 5, 30, 120) for r in range(0, n + 1, max(1, n // 6))])
@pytest.mark.parametrize("k", [1, 2, 5, 10, 40])
def test_reb_matches_spec_closed_forms(n, nrel, k):
    labels = [1] * nrel + [0] * (n - nrel)
    t = letor_table([(labels, {"s": list(range(n))}, None)])
    res = uefast.evaluate(t, measures=[f"SP@{k}", "AP", f"RR@{k}", "RR", f"DCG@{k}", f"P@{k}",
                                       f"R@{k}", "Rprec", f"RBP(p=0.7)@{k}"])
    reb = {r["measure"]: r["reb"] for r in res.to_pylist()}
    K = min(k, n)
    p = nrel / n
    assert reb[f"SP@{k}"] == pytest.approx(naive.reb_sp_closed(n, nrel, k) if nrel else 0, abs=1e-12)
    assert reb["AP"] == pytest.approx(naive.reb_ap_closed(n, nrel), abs=1e-12)
    assert reb[f"RR@{k}"] == pytest.approx(naive.reb_rr_closed(n, nrel, k), abs=1e-12)
    assert reb["RR"] == pytest.approx(naive.reb_rr_closed(n, nrel), abs=1e-12)
    assert reb[f"DCG@{k}"] == pytest.approx(naive.reb_dcg_closed(labels, k), abs=1e-12)
    assert reb[f"P@{k}"] == pytest.approx(K * nrel / (n * k), abs=1e-12)
    assert reb[f"R@{k}"] == pytest.approx(K / n if nrel else 0.0, abs=1e-12)
    assert reb["Rprec"] == pytest.approx(p, abs=1e-12)
    assert reb[f"RBP(p=0.7)@{k}"] == pytest.approx(p * (1 - 0.7 ** K), abs=1e-12)


@pytest.mark.parametrize("n,nrel,k,exact", [
    (120, 10, 10, 0.288646), (40, 5, 5, 0.320246), (10, 1, 10, 0.292897),
    (1000, 100, 10, 0.362970), (100, 50, 20, 5.858015), (30, 20, 10, 5.041142),
])
def test_spec_section3_reference_values(n, nrel, k, exact):
    labels = [1] * nrel + [0] * (n - nrel)
    t = letor_table([(labels, {"s": [0.0] * n}, None)])
    res = uefast.evaluate(t, measures=[f"SP@{k}"], reb="exact")
    assert res["reb"][0].as_py() == pytest.approx(exact, abs=5e-7)
    paper = uefast.evaluate(t, measures=[f"SP@{k}"], reb="paper")
    assert paper["reb"][0].as_py() == pytest.approx(k * (nrel / n) ** 2, abs=1e-12)


def test_paper_reb_dcg_sums_the_discount_to_k():
    """SPEC §1: labels [1, 0], k = 10: exact 0.815 vs the paper's 2.272 (exponential gain)."""
    t = letor_table([([1, 0], {"s": [1.0, 0.0]}, None)])
    exact = uefast.evaluate(t, measures=["DCG(gain=exp)@10"])["reb"][0].as_py()
    paper = uefast.evaluate(t, measures=["DCG(gain=exp)@10"], reb="paper")["reb"][0].as_py()
    assert exact == pytest.approx(0.5 * (1 + 1 / math.log2(3)), abs=1e-12)
    assert round(exact, 3) == 0.815
    assert round(paper, 3) == 2.272


def test_paper_reb_differs_only_where_the_paper_has_a_formula():
    t = letor_table([([2, 1, 0, 0, 1], {"s": [5, 4, 3, 2, 1]}, None)])
    ms = ["nDCG@3", "AP(norm=k)@3", "SP@3", "P@3", "RR", "ERR@3"]
    e = {r["measure"]: r["reb"] for r in uefast.evaluate(t, measures=ms).to_pylist()}
    p = {r["measure"]: r["reb"] for r in uefast.evaluate(t, measures=ms, reb="paper").to_pylist()}
    assert p["AP(norm=k)@3"] == pytest.approx((3 / 5) ** 2)
    assert p["SP@3"] == pytest.approx(3 * (3 / 5) ** 2)
    for m in ("P@3", "RR", "ERR@3"):
        assert p[m] == e[m]
    assert p["nDCG@3"] == pytest.approx(e["nDCG@3"])  # k <= n: the paper's DCG formula is exact


def test_ideal_and_worst_rankings():
    labels = [3, 0, 2, 0, 1, 0]
    best = [-x for x in range(6)]
    order = sorted(range(6), key=lambda i: -labels[i])
    scores = [0.0] * 6
    for rank, i in enumerate(order):
        scores[i] = 10.0 - rank
    t = letor_table([(labels, {"s": scores}, None)])
    res = uefast.evaluate(t, measures=MEASURES)
    for r in res.to_pylist():
        assert r["value"] == pytest.approx(r["iub"], abs=1e-12), r["measure"]
        assert r["ue_v2"] == pytest.approx(1.0) or r["iub"] == pytest.approx(r["reb"])
    assert best  # scores above are a strict ranking


def test_zero_relevant_and_all_relevant_queries():
    t = letor_table([([0, 0, 0], {"s": [3, 2, 1]}, None), ([1, 1, 1], {"s": [3, 2, 1]}, None)])
    res = uefast.evaluate(t, measures=["AP", "P@2", "RR", "nDCG@2", "P@5"])
    for r in res.to_pylist():
        if r["qid"] == 1:
            assert (r["value"], r["iub"], r["reb"], r["ue_v1"], r["ue_v2"]) == (0, 0, 0, 0, 0)
        elif r["measure"] != "P@5":
            assert r["iub"] == pytest.approx(r["reb"]) and r["ue_v2"] == 0.0
        else:  # k > n: P@5 = 3/5 on every order, still degenerate
            assert r["value"] == pytest.approx(0.6) and r["ue_v2"] == 0.0


def test_kernels_agree_across_thread_counts_and_layouts(ranking_path):
    """Clustered vs shuffled rows, string vs integer ids: identical numbers."""
    from uefast.sample import mslr_like

    t = mslr_like(200, 3, seed=5)
    ms = ["nDCG@10", "AP", "ERR@20", "RR@5", "RBP(p=0.9)"]
    base = uefast.evaluate(t, measures=ms)
    rng = np.random.default_rng(0)
    shuffled = t.take(rng.permutation(t.num_rows))
    other = uefast.evaluate(shuffled, measures=ms)
    key = lambda tab: sorted(zip(tab["system"].to_pylist(), tab["qid"].to_pylist(),  # noqa: E731
                                 tab["measure"].to_pylist(), tab["value"].to_pylist(),
                                 tab["reb"].to_pylist(), tab["iub"].to_pylist()))
    assert key(other) == key(base)
    assert other["qid"].to_pylist() != base["qid"].to_pylist()  # first-appearance order differs
    s = mslr_like(200, 3, seed=5, string_ids=True)
    strs = uefast.evaluate(s, measures=ms, ties="input")
    ints = uefast.evaluate(t, measures=ms, ties="input")
    assert strs.column("value").to_pylist() == ints.column("value").to_pylist()


@pytest.mark.parametrize("seed", range(6))
def test_closed_form_reb_equals_the_all_tied_run_on_large_queries(seed):
    """measure_reb (closed forms) and measure_tied with one tie group are independent code paths:
    they must agree for every measure on queries far too large to enumerate."""
    rng = np.random.default_rng(seed)
    queries = []
    for _ in range(5):
        n = int(rng.integers(1, 300))
        labels = rng.choice([0, 0, 0, 1, 1, 2, 3, 4], size=n).tolist()
        queries.append((labels, {"s": [1.0] * n}, None))
    res = uefast.evaluate(letor_table(queries), measures=MEASURES, ties="expected")
    for r in res.to_pylist():
        assert r["value"] == pytest.approx(r["reb"], rel=1e-12, abs=1e-12), r["measure"]


@pytest.mark.parametrize("ties", ["trec_eval", "input"])
def test_scores_equal_in_float32_but_not_float64(ties, ranking_path):
    """The counting path compares float32-rounded scores first; scores that differ only beyond
    float32 precision (and true ties beside them) must still rank exactly as in float64."""
    eps = 2.0 ** -40
    scores = [1.0, 1.0 + eps, 1.0 + 2 * eps, 1.0, 0.5, 1.0 + eps, 2.0, 1e-50, 0.0, 3e39, 2e39]
    labels = [1, 2, 0, 3, 1, 1, 0, 2, 1, 1, 2]
    docs = [5, 3, 9, 1, 2, 7, 4, 8, 6, 11, 10]
    t = letor_table([(labels, {"s": scores}, docs)])
    res = {r["measure"]: r["value"] for r in uefast.evaluate(t, measures=MEASURES, ties=ties).to_pylist()}
    order = naive.rank_trec_eval(scores, docs) if ties == "trec_eval" else naive.rank_input(scores)
    for m in MEASURES:
        assert res[str(m)] == pytest.approx(naive_value(m, [labels[i] for i in order], labels, 3),
                                            abs=1e-12), m


# 70,000: labels beyond int8 compile the engine once more (~30 s cold), so that case is slow
@pytest.mark.parametrize("max_label", [1, 6, 7, 12, pytest.param(70_000, marks=pytest.mark.slow)])
def test_judged_label_counting_for_every_label_range(max_label):
    """The judged pass counts labels three ways (packed 16-bit counters for <= 8 label values,
    histograms up to 65,536 values, a sort beyond); each must give the reference value, IUB and
    Np."""
    rng = np.random.default_rng(max_label)
    queries = []
    for _ in range(30):
        n = int(rng.integers(1, 60))
        labels = rng.integers(-2, max_label + 1, size=n).tolist()
        labels[0] = max_label
        queries.append((labels, rng.standard_normal(n).tolist(), None))
    measures = parse_measures(["nDCG@5", "nDCG(gain=exp)@5", "AP", "P(rel=2)@3", "ERR@4"])
    if max_label == 70_000:
        measures = parse_measures(["nDCG@5", "AP", "P(rel=2)@3"])  # 2^70000 overflows exp gains
    _check(queries, "input", measures)


CUTOFF_MEASURES = parse_measures(["nDCG@10", "nDCG(gain=exp)@3", "P@5", "AP@10", "SP@4", "R@10",
                                  "RR@10", "ERR@5", "RBP(p=0.8)@10", "P(rel=2)@10"])


@pytest.mark.parametrize("ties", ["trec_eval", "input"])
@pytest.mark.parametrize("top_k", [True, False])
def test_cutoff_only_measures_rank_only_the_top(ties, top_k, ranking_path, monkeypatch):
    """With every measure cut off at k <= 10 the kernel ranks only the documents that can reach
    the top 10; values must equal the reference, with ties, near-ties and lists shorter than k."""
    from uefast import engine

    assert engine.top_k(engine.plan_measures(list(CUTOFF_MEASURES))) == 10
    assert engine.top_k(engine.plan_measures(list(CUTOFF_MEASURES) + parse_measures(["AP"]))) == 0
    monkeypatch.setattr(engine, "TOP_K", top_k)
    rng = np.random.default_rng(11)
    eps = 2.0 ** -40
    pool = [1.0, 1.0 + eps, 2.0, 0.5, 0.5, 3.0, -1.0, 0.0, -0.0]
    queries = []
    for qi in range(60):
        n = int(rng.integers(1, 90))
        if qi % 3 == 0:
            scores = rng.choice(pool, size=n).tolist()
        else:
            scores = rng.standard_normal(n).tolist()
        labels = rng.integers(-1, 4, size=n).tolist()
        docs = (rng.permutation(9000)[:n] + 1000).tolist()
        queries.append((labels, scores, docs))
    _check(queries, ties, CUTOFF_MEASURES)


def test_cutoffs_far_beyond_every_query():
    """A cutoff of 10^12 reads no more than the query (K = min(k, n)): the same values as a
    cutoff just above the longest query, and no table of k entries is allocated (it would need
    terabytes). reb="paper" sums DCG's discounts to k, so it refuses k above its limit."""
    from uefast.engine import PAPER_DCG_MAX_CUTOFF
    from uefast.sample import letor_sample

    t = letor_sample()
    big, small = 10**12, 5000
    names = ["nDCG@{}", "DCG(gain=exp)@{}", "AP@{}", "SP@{}", "RR@{}", "ERR@{}", "RBP(p=0.8)@{}",
             "R@{}", "Success@{}", "AP(norm=min)@{}"]
    a = uefast.evaluate(t, measures=[n.format(big) for n in names])
    b = uefast.evaluate(t, measures=[n.format(small) for n in names])
    for col in ("value", "iub", "reb", "ue_v1", "ue_v2"):
        assert a[col].to_pylist() == b[col].to_pylist(), col
    p = uefast.evaluate(t, measures=[f"P@{big}"])["value"].to_pylist()
    q = uefast.evaluate(t, measures=[f"P@{small}"])["value"].to_pylist()
    assert p == pytest.approx([v * small / big for v in q], rel=1e-12)
    uefast.evaluate(t, measures=[f"nDCG@{PAPER_DCG_MAX_CUTOFF}"], reb="paper")
    with pytest.raises(uefast.InputError, match="reb='paper'.*cutoffs above 4,194,304"):
        uefast.evaluate(t, measures=[f"nDCG@{PAPER_DCG_MAX_CUTOFF + 1}"], reb="paper")


def _exact_err_reb(labels, lmax, k):
    """E[ERR@k] over every order of ``labels``, in exact rational arithmetic (SPEC_math §2)."""
    from fractions import Fraction

    theta = [Fraction(2**lab - 1, 2**lmax) for lab in labels]
    total, count = Fraction(0), 0
    for perm in itertools.permutations(range(len(labels))):
        stay, v = Fraction(1), Fraction(0)
        for r, j in enumerate(perm[:k], start=1):
            v += stay * theta[j] / r
            stay *= 1 - theta[j]
        total += v
        count += 1
    return total / count


@pytest.mark.parametrize("lmax", [4, 30, 53, 60])
def test_err_reb_keeps_its_precision_for_small_stopping_probabilities(lmax):
    """θ = (2^l - 1)/2^lmax is tiny on a fine label scale: REB (and the all-tied value) subtract
    nothing near 1, so they keep full relative precision (was: REB 0 at lmax = 60, 41% off at 53)."""
    import pyarrow as pa

    labels = [0, 0, 1, 1, 2, 3, 0]
    want = float(_exact_err_reb(labels, lmax, 5))
    n = len(labels)
    t = pa.table({"qid": [1] * n, "docid": list(range(n)), "label": labels,
                  "s": [float(i) for i in range(n)], "tied": [1.0] * n})
    out = uefast.evaluate(t, measures=[f"ERR(lmax={lmax})@5"], ties="expected").to_pylist()
    for row in out:  # abs=0: the values are ~1e-18, below approx's default absolute 1e-12
        assert row["reb"] == pytest.approx(want, rel=1e-12, abs=0)
    assert out[1]["value"] == pytest.approx(want, rel=1e-12, abs=0)  # the all-tied system


def test_tie_aware_sp_of_a_group_deep_in_a_long_ranking_is_exact():
    """A tie group after 30,000 distinct non-relevant scores: SP summed term by term (the closed
    form over harmonic-number differences was 1.8e-8 off), checked in exact arithmetic."""
    from fractions import Fraction

    import pyarrow as pa

    depth, t_g, r_g = 30_000, 10, 5
    n = depth + t_g
    labels = [0] * depth + [1] * r_g + [0] * (t_g - r_g)
    scores = [float(n - i) for i in range(depth)] + [0.0] * t_g
    t = pa.table({"qid": [1] * n, "docid": list(range(n)), "label": labels, "s": scores})
    got = uefast.evaluate(t, measures=["SP"], ties="expected")["value"][0].as_py()
    a = Fraction(r_g, t_g)
    b = Fraction(r_g * (r_g - 1), t_g * (t_g - 1))
    want = sum((a + (m - 1) * b) / (depth + m) for m in range(1, t_g + 1))
    assert got == pytest.approx(float(want), rel=1e-14, abs=0)


def test_simple_ap_values_are_exact():
    """AP 1/1 + 2/4 over 2 relevant = 0.75 exactly, as trec_eval and pytrec_eval give it (was
    0.7499999999999998: 1/i read as a difference of harmonic numbers)."""
    import pyarrow as pa

    t = pa.table({"qid": [1] * 4, "docid": [1, 2, 3, 4], "label": [1, 0, 0, 1],
                  "s": [4.0, 3.0, 2.0, 1.0]})
    assert uefast.evaluate(t, measures=["AP"])["value"].to_pylist() == [0.75]
