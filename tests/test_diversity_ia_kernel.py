"""The Numba pass of the intent-aware families (uefast.diversity.ia_fast / _ia_kernels) against
the NumPy reference path (each family's value/iub/reb in families_ia.py, themselves checked
against tests/naive_diversity.py and enumeration in test_diversity_measures.py): random batches
of topics and rankings (Hypothesis), the TREC 2012 qrels x baselines; REB over the
``retrieved`` and ``collection`` universes against the mean over every order of the universe
(naive reference values), and the refusals."""
from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_diversity as nd
from uefast.diversity import compile_qrels, evaluate, parse_measure
from uefast.diversity.ia_fast import FAST, flat_topics, ia_scores
from uefast.diversity.registry import Batch
from uefast.errors import InputError

MEASURES = ["RBU@3", "RBU(p=0.9,e=0.1)", "RBU(variant=java)", "RBU(p=0.6,e=0.0,gmax=topic)@2",
            "gERR-IA@3", "gERR-IA(gmax=topic)@10", "gERR-IA@1", "RBP-IA", "RBP-IA(p=0.5,gmax=topic)",
            "nDCG-IA@2", "nDCG-IA(gmax=topic)@10", "RR-IA", "AP-IA"]


def test_every_fast_family_is_tested():
    assert {parse_measure(s).fam.name for s in MEASURES} == set(FAST)


def _qrels(rng, n_topics, max_n=7, max_m=4, grades=(0, 0, 1, 2, 3), n=None):
    """A qrels table of random topics (some aspects may have no relevant document and are
    dropped; a topic may end with none), weights given for some topics; ``n`` fixes the number
    of judged documents of every topic."""
    rows = []
    fixed = n
    for q in range(n_topics):
        n, m = fixed or int(rng.integers(1, max_n + 1)), int(rng.integers(1, max_m + 1))
        G = rng.choice(grades, size=(n, m))
        w = rng.dirichlet(np.ones(m))
        for d in range(n):
            for t in range(m):
                rows.append((f"q{q}", str(t), f"d{d}", int(G[d, t]), float(w[t])))
    tab = pa.table(dict(zip(["qid", "subtopic", "docid", "label", "weight"], map(list, zip(*rows)))))
    if rng.random() < 0.5:
        tab = tab.drop_columns(["weight"])
    return compile_qrels(tab)


def _batch(rng, topics, per_topic=3):
    segs, st_ = [], []
    for ti, t in enumerate(topics):
        for _ in range(per_topic):
            extra = -np.ones(int(rng.integers(0, 3)), np.int64)
            r = rng.permutation(np.r_[np.arange(t.n), extra])[: int(rng.integers(0, t.n + 3))]
            segs.append(r.astype(np.int64))
            st_.append(ti)
    rows = np.concatenate(segs) if segs else np.zeros(0, np.int64)
    soff = np.r_[0, np.cumsum([len(r) for r in segs])].astype(np.int64)
    return Batch(topics, np.array(st_, np.int64), rows, soff), segs


def _close(a, b, tol=1e-11):
    return abs(a - b) <= tol * max(1.0, abs(b))


def _check_against_reference(batch, mlist):
    val, iub, exact, reb = ia_scores(batch, mlist)
    for j, m in enumerate(mlist):
        ref = m.fam.value(batch, m)
        for s, t in enumerate(batch.seg_topic):
            assert _close(val[s, j], ref[s]), (str(m), s, val[s, j], ref[s])
            top = batch.topics[t]
            iv, ex = m.fam.iub(top, m)
            assert _close(iub[s, j], iv) and exact[s, j] == ex, (str(m), t, iub[s, j], iv, exact[s, j], ex)
            assert _close(reb[s, j], m.fam.reb(top, m)), (str(m), t, reb[s, j], m.fam.reb(top, m))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_kernel_equals_reference_on_random_batches(seed):
    rng = np.random.default_rng(seed)
    topics = list(_qrels(rng, int(rng.integers(1, 6))).values())
    batch, _ = _batch(rng, topics)
    _check_against_reference(batch, [parse_measure(s) for s in MEASURES])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_kernel_equals_reference_on_larger_topics(seed):
    """Topics of up to 40 documents, 6 aspects and grades up to 5: the greedy ideals' early
    stops and the survival recurrence over the relevant documents only."""
    rng = np.random.default_rng(seed)
    topics = list(_qrels(rng, 3, max_n=40, max_m=6, grades=(0, 0, 0, 1, 2, 5)).values())
    batch, _ = _batch(rng, topics, per_topic=2)
    _check_against_reference(batch, [parse_measure(s) for s in MEASURES])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_kernel_equals_reference_with_large_grades(seed):
    """Grades up to 70 (beyond the 64 grade blocks of the cascade REB and the 4096 grade-row
    classes of the greedy: the per-document fallbacks; r(1) = 2^-70 rounds y to 1)."""
    rng = np.random.default_rng(seed)
    topics = list(_qrels(rng, 3, max_n=30, max_m=5, grades=(0, 0, 1, 2, 9, 70)).values())
    batch, _ = _batch(rng, topics, per_topic=2)
    _check_against_reference(batch, [parse_measure(s) for s in MEASURES])


def _naive(m, topic, ranking):
    return getattr(nd, m.fam.naive)(topic.grades.tolist(), topic.weights.tolist(), list(ranking),
                                    m.params, m.k)


@pytest.mark.parametrize("s", MEASURES)
def test_retrieved_universe_against_enumeration(s):
    """REB over reb_universe='retrieved' = mean of the value over every order of the run's own
    documents (unjudged ones included)."""
    m = parse_measure(s)
    rng = np.random.default_rng(zlib.crc32(s.encode()))
    topics = list(_qrels(rng, 3, max_n=5).values())
    batch, segs = _batch(rng, topics, per_topic=2)
    _, _, _, reb = ia_scores(batch, [m], "retrieved")
    for sg, (rows, t) in enumerate(zip(segs, batch.seg_topic)):
        vals = [_naive(m, topics[t], p) for p in itertools.permutations(rows.tolist())]
        want = math.fsum(vals) / len(vals) if vals else 0.0
        assert _close(reb[sg, 0], want), (s, rows, reb[sg, 0], want)


@pytest.mark.parametrize("s", [x for x in MEASURES if not x.startswith(("RR-IA", "RBU(p=0.9", "RBU(variant"))])
def test_collection_universe_against_enumeration(s):
    """REB over reb_universe='collection' (N documents, the N - n unjudged ones non-relevant) =
    mean of the value over every order of the N documents."""
    m = parse_measure(s)
    rng = np.random.default_rng(zlib.crc32(s.encode()))
    topics = list(_qrels(rng, 2, max_n=4).values())
    N = max(t.n for t in topics) + 3
    batch, _ = _batch(rng, topics, per_topic=1)
    _, _, _, reb = ia_scores(batch, [m], "collection", N)
    for sg, t in enumerate(batch.seg_topic):
        top = topics[t]
        universe = list(range(top.n)) + [-1] * (N - top.n)
        vals = [_naive(m, top, p) for p in set(itertools.permutations(universe))]
        want = math.fsum(vals) / len(vals)
        assert _close(reb[sg, 0], want), (s, top.n, N, reb[sg, 0], want)


def test_collection_equals_judged_when_n_is_the_collection():
    """collection_size = n (every topic has n judged documents): the judged universe's REB."""
    rng = np.random.default_rng(3)
    topics = list(_qrels(rng, 4, n=6).values())
    batch, _ = _batch(rng, topics)
    ms = [parse_measure(s) for s in MEASURES if not s.startswith(("RR-IA", "RBU(p=0.9", "RBU(variant"))]
    a = ia_scores(batch, ms)[3]
    b = ia_scores(batch, ms, "collection", 6)[3]
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)
    # a collection of 10^9 documents: finite, and below the judged REB for the measures >= 0
    big = ia_scores(batch, ms, "collection", 10**9)[3]
    assert np.isfinite(big).all()
    pos = [j for j, m in enumerate(ms) if m.fam.name != "RBU"]
    assert (big[:, pos] <= a[:, pos] + 1e-12).all()


@pytest.mark.parametrize("seed", range(4))
def test_compiled_flat_arrays_equal_the_topics(seed):
    """compile_qrels' flat arrays (read by the kernel in place of flattening the topics) hold
    exactly the topics' grades, weights and relevant counts, with weights given or uniform,
    and a run scored through them equals one scored through the topics."""
    rng = np.random.default_rng(seed)
    topics = _qrels(rng, 6, max_n=9, max_m=4)
    assert topics.flat is not None
    for x, y in zip(topics.flat, flat_topics(list(topics.values()))):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    batch, _ = _batch(rng, list(topics.values()))
    ms = [parse_measure(s) for s in MEASURES]
    via_flat = ia_scores(Batch(batch.topics, batch.seg_topic, batch.rows, batch.soff,
                               flat=topics.flat), ms)
    for x, y in zip(via_flat, ia_scores(batch, ms)):
        assert np.array_equal(x, y)


def _run_and_qrels():
    q = pa.table({"qid": ["1"] * 6, "subtopic": ["1", "2"] * 3, "docid": ["a", "a", "b", "b", "c", "c"],
                  "label": [1, 0, 0, 2, 1, 1]})
    r = pa.table({"qid": ["1"] * 3, "docid": ["a", "x", "b"], "score": [3.0, 2.0, 1.0]})
    return r, q


def test_evaluate_reb_universe_and_refusals():
    r, q = _run_and_qrels()
    out = evaluate(r, q, ["RBP-IA", "AP-IA"], reb_universe="retrieved").to_pydict()
    m = parse_measure("RBP-IA")
    topic = compile_qrels(q)["1"]
    rows = [0, -1, 1]
    want = np.mean([_naive(m, topic, p) for p in itertools.permutations(rows)])
    assert _close(out["reb"][0], want)
    out = evaluate(r, q, ["nDCG-IA@2"], reb_universe="collection", collection_size=10).to_pydict()
    assert 0 < out["reb"][0] < 1
    for kw, msg in [(dict(reb_universe="pool"), "reb_universe"),
                    (dict(reb_universe="collection"), "collection_size"),
                    (dict(reb_universe="collection", collection_size=2), "smaller than"),
                    (dict(collection_size=5), "collection_size")]:
        with pytest.raises(InputError, match=msg):
            evaluate(r, q, ["RBP-IA"], **kw)
    with pytest.raises(InputError, match="all N ranks"):
        evaluate(r, q, ["RR-IA"], reb_universe="collection", collection_size=10)
    with pytest.raises(InputError, match="all N ranks"):
        evaluate(r, q, ["RBU"], reb_universe="collection", collection_size=10)
    with pytest.raises(InputError, match="all N ranks"):
        evaluate(r, q, ["EU"], reb_universe="collection", collection_size=10)
    with pytest.raises(InputError, match="all N ranks"):
        evaluate(r, q, ["NRBP"], reb_universe="collection", collection_size=10)


NDEVAL = ["ERR-IA@3", "ERR-IA(alpha=0.3)@1", "nERR-IA@2", "alpha-DCG@3", "alpha-nDCG(alpha=0.6)@4",
          "NRBP", "nNRBP(beta=0.9)", "MAP-IA", "P-IA@2", "strec@3"]


def _div_tables(rng, max_n=4, per_topic=2):
    """(run table, qrels table, compiled qrels): random topics and runs with unjudged documents."""
    topics = _qrels(rng, 3, max_n=max_n)
    rows = [(q, t.aspects[a], t.docids[d], int(t.grades[d, a]))
            for q, t in topics.items() for d in range(t.n) for a in range(t.m)]
    rows += [(q, "99", t.docids[d], 0) for q, t in topics.items() for d in range(t.n) if t.m == 0]
    qt = pa.table(dict(zip(["qid", "subtopic", "docid", "label"], map(list, zip(*rows)))))
    run = []
    for q, t in topics.items():
        for s in range(per_topic):
            docs = list(t.docids) + [f"u{i}" for i in range(int(rng.integers(0, 3)))]
            docs = [docs[i] for i in rng.permutation(len(docs))][: int(rng.integers(1, len(docs) + 1))]
            run += [(f"s{s}", q, d, float(len(docs) - i)) for i, d in enumerate(docs)]
    rt = pa.table(dict(zip(["system", "qid", "docid", "score"], map(list, zip(*run)))))
    return rt, qt, compile_qrels(qt)


# the families outside the IA kernel and ndeval's names (uefast.diversity.universe_div)
OTHER = ["S-RR@100%", "D-nDCG@3", "D#-nDCG(gamma=0.3)@2", "EU(alpha=0.2,e=0.1)", "CT(h=2.0)@3",
         "CubeTest(gamma=0.8,max_height=0.7)@3"]
NO_COLLECTION = ("NRBP", "nNRBP", "EU")


@pytest.mark.parametrize("s", NDEVAL + ["nDCG-IA@2", "RBU@2"] + OTHER)
def test_evaluate_universes_against_enumeration(s):
    """evaluate(reb_universe=...) for ndeval's names, two kernel families and every other
    family: REB = the mean of the plain-Python reference over every order of the retrieved
    documents, or of the judged documents plus N - n non-relevant ones."""
    m = parse_measure(s)
    rng = np.random.default_rng(zlib.crc32(s.encode()))
    rt, qt, topics = _div_tables(rng)
    out = evaluate(rt, topics, [s], reb_universe="retrieved").to_pydict()
    seen = 0
    for sysname, qid, reb in zip(out["system"], out["qid"], out["reb"]):
        top = topics[qid]
        sel = [d for ss, q, d in zip(rt["system"].to_pylist(), rt["qid"].to_pylist(),
                                     rt["docid"].to_pylist()) if ss == sysname and q == qid]
        idx = {d: i for i, d in enumerate(top.docids)}
        rows = [idx.get(d, -1) for d in sel]
        vals = [_naive(m, top, p) for p in itertools.permutations(rows)]
        assert _close(reb, math.fsum(vals) / len(vals)), (s, qid, rows, reb)
        seen += 1
    assert seen
    if m.fam.name in NO_COLLECTION:
        with pytest.raises(InputError, match="all N ranks"):
            evaluate(rt, topics, [s], reb_universe="collection", collection_size=10)
        return
    N = max(t.n for t in topics.values()) + 2
    out = evaluate(rt, topics, [s], reb_universe="collection", collection_size=N).to_pydict()
    for qid, reb in zip(out["qid"], out["reb"]):
        top = topics[qid]
        universe = list(range(top.n)) + [-1] * (N - top.n)
        vals = [_naive(m, top, p) for p in set(itertools.permutations(universe))]
        assert _close(reb, math.fsum(vals) / len(vals)), (s, qid, top.n, N, reb)


def test_trec2012_kernel_equals_reference(shared_data):
    """The 2012 diversity qrels x the first two official baselines: every value, IUB and REB of
    the kernel equals the NumPy path."""
    from uefast.diversity import read_qrels
    from uefast.diversity.evaluation import rank_run
    from uefast.io.trec import read_run

    q = shared_data / "trec_web_diversity_2009_2014" / "2012" / "qrels-for-ndeval.txt"
    runs = sorted((shared_data / "trec_web2012_baseline_runs").glob("*/*.txt"))[:2]
    if not q.exists() or not runs:
        pytest.skip("TREC 2012 diversity data not found")
    topics = compile_qrels(read_qrels(q))
    mlist = [parse_measure(s) for s in ["RBU@20", "RBU(variant=java)", "gERR-IA@20", "RBP-IA",
                                        "nDCG-IA@20", "RR-IA", "AP-IA"]]
    for path in runs:
        _, _, batch, _ = rank_run(read_run(path), topics)
        _check_against_reference(batch, mlist)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_novelty_batch_iub_reb_equal_per_topic_functions(seed):
    """uefast.diversity.novelty_fast (all topics at once) = the per-topic IUB/REB functions of
    families_ndeval (novelty, coverage, precision), on random topics of up to 30 documents."""
    from uefast.diversity.novelty_fast import NOVELTY, novelty_scores

    rng = np.random.default_rng(seed)
    topics = list(_qrels(rng, 4, max_n=30, max_m=5, grades=(0, 0, 0, 1, 2)).values())
    batch, _ = _batch(rng, topics, per_topic=1)
    for s in ["ERR-IA@1", "ERR-IA@5", "ERR-IA(alpha=0.3)@20", "nERR-IA@10", "alpha-DCG@1",
              "alpha-DCG@20", "alpha-nDCG(alpha=0.7)@5", "NRBP", "NRBP(alpha=0.2,beta=0.9)",
              "nNRBP", "P-IA@1", "P-IA@5", "P-IA@40", "strec@1", "strec@3", "strec@20", "MAP-IA"]:
        m = parse_measure(s)
        assert m.fam.name in NOVELTY
        m.fam.value(batch, m)
        iub, exact, reb = novelty_scores(batch, m)
        for t, top in enumerate(topics):
            iv, ex = m.fam.iub(top, m)
            assert _close(iub[t], iv) and exact[t] == ex, (s, t, iub[t], iv)
            assert _close(reb[t], m.fam.reb(top, m)), (s, t, reb[t], m.fam.reb(top, m))


def test_first_hit_closed_form_against_enumeration():
    """RR-IA's REB per aspect: E[1/rank of the first of r relevant among N in random order] =
    r (H_N - H_{r-1}) / (N - r + 1) (the kernel's closed form, in place of the O(N) sum), against
    the mean over every placement of the r relevant documents (exact rationals)."""
    from fractions import Fraction

    for N in range(1, 9):
        H = [Fraction(0)]
        for i in range(1, N + 1):
            H.append(H[-1] + Fraction(1, i))
        for r in range(1, N + 1):
            subsets = list(itertools.combinations(range(1, N + 1), r))
            want = sum(Fraction(1, min(s)) for s in subsets) / len(subsets)
            assert r * (H[N] - H[r - 1]) / (N - r + 1) == want, (N, r)


def test_harmonic_difference_every_branch():
    """_hdiff(N, r) = H_N - H_{r-1} to 1e-13 relative in each branch (direct sum of <= 16 terms,
    HN minus a short sum, log1p + Euler-Maclaurin tails) with and without the 1/i table, r up to
    N (where the difference is 1/N and cancellation would show), N up to 10^9."""
    from uefast.diversity._ia_reb import _harmonic, _hdiff

    def exact(N, r):  # sum_{i=r}^{N} 1/i, the short side summed exactly
        if N - r < 200_000:
            return math.fsum(1.0 / i for i in range(r, N + 1))
        return math.fsum([_harmonic(N, np.zeros(1)), -math.fsum(1.0 / i for i in range(1, r))])

    RC = 1.0 / np.maximum(np.arange(402, dtype=np.float64), 1.0)
    small = np.zeros(1)
    cases = [(N, r) for N in range(1, 401) for r in sorted({1, 2, 15, 16, 17, 18, N // 2, N - 17, N - 16, N - 15, N})
             if 1 <= r <= N]
    cases += [(10**6, r) for r in (1, 15, 17, 1000, 500_000, 10**6 - 17, 10**6 - 16, 10**6)]
    cases += [(10**9, r) for r in (1, 20, 10**9 - 100, 10**9 - 16, 10**9 - 17, 10**9)]
    for N, r in cases:
        HN = _harmonic(N, RC if N < RC.size else small)
        for table in (RC, small):
            if N >= 10**6 and table is RC:
                continue
            got, want = _hdiff(N, r, table, HN), exact(N, r)
            assert abs(got - want) <= 1e-13 * want, (N, r, got, want)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_kernel_equals_reference_on_deep_topics(seed):
    """Topics of 60-90 documents (every grade block of the cascade REB longer than the cutoff,
    RR-IA's harmonic differences through their log1p branch) and cutoffs up to 20."""
    rng = np.random.default_rng(seed)
    topics = list(_qrels(rng, 2, max_m=5, n=int(rng.integers(60, 91)), grades=(0, 0, 1, 1, 2, 3)).values())
    batch, _ = _batch(rng, topics, per_topic=1)
    ms = ["gERR-IA@20", "RBU(p=0.9)@20", "RBU@10", "gERR-IA(gmax=topic)@7", "RR-IA", "AP-IA"]
    _check_against_reference(batch, [parse_measure(s) for s in ms])


@pytest.mark.parametrize("case", ["large_blocks", "four_blocks", "five_blocks", "tiny", "collection",
                                  "deep_cutoff", "all_relevant"])
def test_cascade_survival_from_histograms(case):
    """E[S_c] of every aspect from grade histograms (the P'D = PQ recurrence where it is known
    exact, else truncated products per grade block) = the reference document-by-document
    recurrence (uefast.diversity.reb.cascade_survival) on the explicit y = 1 - r vector, to
    1e-11 relative, c = 0..K."""
    from uefast.diversity._ia_common import GERR
    from uefast.diversity._ia_reb import _inv_binoms, _survival_hist
    from uefast.diversity.reb import cascade_survival

    rng = np.random.default_rng(zlib.crc32(case.encode()))
    m, K, extra, top = 6, 10, 0, 2
    if case == "four_blocks":
        top = 3
    elif case == "five_blocks":
        top = 4
    elif case == "deep_cutoff":
        K = 30
    elif case == "collection":
        extra = 5000
    for _ in range(20):
        if case == "tiny":
            H = rng.integers(0, 4, size=(m, 64))
        elif case == "all_relevant":
            H = rng.integers(12, 40, size=(m, 64))
        else:
            H = rng.integers(10, 60, size=(m, 64))
        H[:, top + 1:] = 0
        amax = np.full(m, top, np.int64)
        amax[0] = 1  # an aspect with a lower largest grade (its own gmax)
        H[0, 2:] = 0
        if case == "all_relevant":
            H[:, 0] = 0
        gm = 1.0 / 2.0 ** amax
        N = int(H.sum(axis=1).max()) + extra
        Kc = min(K, N)
        RC = 1.0 / np.maximum(np.arange(N + 2, dtype=np.float64), 1.0)
        FR = np.empty(3 * (Kc + 2))
        _inv_binoms(N, Kc, RC, FR[:Kc + 1])
        Ec = np.empty((m, Kc + 1))
        _survival_hist(GERR, H, amax, gm, m, N, Kc, RC, FR, Ec)
        for a in range(m):
            y = np.ones(N)
            pos = 0
            for g in range(1, amax[a] + 1):
                y[pos:pos + H[a, g]] = 1.0 - (2.0 ** g - 1.0) * gm[a]
                pos += H[a, g]
            want = cascade_survival(rng.permutation(y), Kc)
            np.testing.assert_allclose(Ec[a], want, rtol=1e-11, atol=0, err_msg=f"{case} aspect {a}")
