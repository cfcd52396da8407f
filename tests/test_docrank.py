"""Byte-order docid ranks (uefast.kernels.docrank) against Python's own ``sorted`` on bytes, the
repeated docid it reports against a plain scan, and the evaluation that uses them (trec_eval tie
order with string docids) against the plain-Python reference ranking."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive
import uefast
from conftest import letor_table, naive_value
from uefast import parse_measures
from uefast.engine import Grouping, docid_ranks, duplicate_docid, group_keys
from uefast.inputs import docids
from uefast.kernels.docrank import RANK_BASE

# bytes that stress the key packing: NUL (= the padding byte), 0xFF, shared prefixes of every
# length around the 8- and 16-byte word boundaries, proper prefixes of each other
_ALPHABET = ["\x00", "0", "1", "9", "A", "a", "z", "\u00e9", "\u00ff"]
_PREFIXES = ["", "LA", "FBIS3-10", "FBIS3-100", "doc-0000000000", "doc-00000000000000",
             "doc-000000000000000x"]
docid_text = st.tuples(st.sampled_from(_PREFIXES),
                       st.text(st.sampled_from(_ALPHABET), max_size=20)).map("".join)


def _oracle(groups):
    """Per group: rank of each docid among the group's distinct docids in byte order; whether
    they strictly rise with position; the first repeat (position, earlier position) or None."""
    out = []
    for docs in groups:
        b = [d.encode() for d in docs]
        distinct = sorted(set(b))
        ranks = [distinct.index(x) for x in b]
        rising = all(b[i] < b[i + 1] for i in range(len(b) - 1))
        dup, seen = None, {}
        for i, x in enumerate(b):
            if x in seen:
                dup = (i, seen[x])
                break
            seen.setdefault(x, i)
        out.append((ranks, rising, dup))
    return out


def _layout(groups, shuffle_seed, large):
    """Rows of all groups, clustered or shuffled (then grouped through a permutation)."""
    qid = [g for g, docs in enumerate(groups) for _ in docs]
    doc = [d for docs in groups for d in docs]
    order = np.arange(len(doc))
    if shuffle_seed is not None:
        order = np.random.default_rng(shuffle_seed).permutation(len(doc))
    qa = pa.array([qid[i] for i in order], pa.int64())
    da = pa.array([doc[i] for i in order], pa.large_string() if large else pa.string())
    return qa, da, order


def _first_repeat(g, da):
    """(row, earlier row) of the first docid repeated within a group, scanning groups in order
    and each group's rows in position order; (-1, -1) if none."""
    perm = g.perm if g.has_perm else np.arange(len(da))
    for gi in range(g.n_groups):
        seen = {}
        for p in range(g.offsets[gi], g.offsets[gi + 1]):
            row = int(perm[p])
            x = da[row].as_py()
            if x in seen:
                return row, seen[x]
            seen[x] = row
    return -1, -1


def _check_groups(groups, shuffle_seed=None, large=False):
    qa, da, order = _layout(groups, shuffle_seed, large)
    g = group_keys(qa)
    rising = np.zeros(g.n_groups, np.uint8)
    ranked, r, o = docid_ranks(g, docids(da, "docid", "run"), rising)
    want = _oracle(groups)
    # the repeat reported: first group with one, first position in it, its earlier row
    assert (r, o) == _first_repeat(g, da)
    assert duplicate_docid(g, docids(da, "docid", "run")) == (r, o)
    if any(w[2] is not None for w in want):
        assert r >= 0
        return
    assert (r, o) == (-1, -1)
    where = np.empty(len(order), np.int64)
    where[order] = np.arange(len(order))  # input row of each (group, position)
    row = 0
    for gi, (ranks, rises, _) in enumerate(want):
        got = [int(ranked.ints[where[row + i]]) - RANK_BASE for i in range(len(ranks))]
        assert got == ranks, gi
        if shuffle_seed is None:
            assert bool(rising[gi]) == (rises and len(ranks) > 0), gi
        row += len(ranks)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.lists(st.lists(docid_text, max_size=40, unique=True), min_size=1, max_size=5),
       shuffle=st.none() | st.integers(0, 9), large=st.booleans())
def test_ranks_are_byte_order(groups, shuffle, large):
    groups = [g for g in groups if g] or [["x"]]
    _check_groups(groups, shuffle, large)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.lists(st.lists(docid_text, min_size=2, max_size=30), min_size=1, max_size=4),
       shuffle=st.none() | st.integers(0, 9))
def test_repeated_docid_reported_like_the_hash_check(groups, shuffle):
    _check_groups(groups, shuffle)


@pytest.mark.parametrize("n", [17, 255, 256, 257, 511, 512, 513, 1000, 3000])
@pytest.mark.parametrize("kind", ["random", "shared16", "mslr", "trec", "rising", "falling",
                                  "one_prefix"])
def test_large_groups(n, kind):
    """Sizes around the network's block and padding boundaries, keys with long shared prefixes
    (the packed bits cannot separate them: the comparison runs finish the order)."""
    rng = np.random.default_rng(n)
    if kind == "random":
        docs = {"".join(rng.choice(list("ab\x00\u00e9"), rng.integers(0, 12))) for _ in range(n)}
    elif kind == "shared16":
        docs = {"doc-000000000000" + str(int(x)) for x in rng.integers(0, 10 * n, n)}
    elif kind == "mslr":
        docs = {"LA" + str(int(x)) for x in rng.integers(0, 10 ** 7, n)}
    elif kind == "trec":  # TREC docnos: shared prefixes longer than one packed key
        docs = {rng.choice(["FBIS3-", "FBIS4-", "LA0101", "FT921-", "FR940104-0-"]) + str(int(x))
                for x in rng.integers(0, 10 ** 6, n)}
    elif kind == "one_prefix":
        docs = {"same" * 5 + chr(97 + int(x) % 26) * int(x % 7) for x in range(n)}
    else:
        docs = {f"FBIS3-{x:06d}" for x in range(n)}
    docs = sorted(docs)
    if kind == "falling":
        docs = docs[::-1]
    elif kind not in ("rising",):
        docs = [docs[i] for i in rng.permutation(len(docs))]
    _check_groups([docs, docs[: len(docs) // 3]])
    _check_groups([docs], shuffle_seed=1)


def test_rows_outside_every_group_are_left_alone():
    da = pa.array(["b", "a", "zz", "c"])
    g = Grouping(np.array([0, 2]), np.array([3, 1]), True, pa.array([1]))  # rows 3 and 1 only
    ranked, r, o = docid_ranks(g, docids(da, "docid", "run"))
    assert (r, o) == (-1, -1)
    assert ranked.ints.tolist() == [0, RANK_BASE, 0, RANK_BASE + 1]


MEASURES = parse_measures(["nDCG@3", "AP", "P@2", "RR", "ERR@3", "Rprec"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data(), nq=st.integers(1, 4))
def test_trec_eval_ties_with_string_docids(ranking_path, data, nq):
    """Scores with many ties, string docids: every ranking path orders ties by docid descending
    by bytes, as the reference does."""
    queries = []
    for _ in range(nq):
        n = data.draw(st.integers(1, 40))
        labels = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        scores = data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5]), min_size=n,
                                    max_size=n))
        docs = data.draw(st.lists(docid_text, min_size=n, max_size=n, unique=True))
        queries.append((labels, scores, docs))
    t = letor_table([(lab, {"s": s}, d) for lab, s, d in queries])
    res = uefast.evaluate(t, measures=MEASURES, ties="trec_eval")
    rows = {(r["qid"], r["measure"]): r["value"] for r in res.to_pylist()}
    lmax = max(max(lab) for lab, _, _ in queries) or 1
    for qi, (labels, scores, docs) in enumerate(queries):
        order = naive.rank_trec_eval(scores, docs)
        for m in MEASURES:
            want = naive_value(m, [labels[i] for i in order], labels, lmax)
            assert rows[(qi + 1, str(m))] == pytest.approx(want, abs=1e-12), (m, qi)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), kind=st.sampled_from(["str", "int"]))
def test_trec_style_join(data, kind):
    """TREC style: every run row finds the qrels row judging its (qid, docid) -- against a plain
    dict join -- including run topics missing from the qrels, unjudged and long (> 16 byte)
    docids, unclustered qrels, dictionary-encoded and large_string columns; integer docids
    (negative and huge ones too) through the (topic, docid) hash table."""
    from uefast.engine import group_keys as gk
    from uefast.evaluate import _int_join_rows, _string_join_rows

    if kind == "str":
        pool = data.draw(st.lists(docid_text, min_size=1, max_size=25, unique=True))
    else:
        pool = data.draw(st.lists(st.integers(-2**62, 2**62) | st.integers(0, 40), min_size=1,
                                  max_size=25, unique=True))
    topics = ["1", "2", "10", "x"]
    judged = data.draw(st.dictionaries(st.tuples(st.sampled_from(topics[:3]), st.sampled_from(pool)),
                                       st.integers(0, 3), min_size=1, max_size=40))
    run = data.draw(st.lists(st.tuples(st.sampled_from(topics), st.sampled_from(pool)),
                             min_size=1, max_size=60, unique=True))
    q_items = list(judged)
    q_qid = pa.array([q for q, _ in q_items])
    qg = gk(q_qid)
    keys = qg.keys.to_pylist()
    qcodes = np.array([keys.index(q) if q in keys else -1 for q, _ in run], np.int64)
    if kind == "str":
        q_doc = pa.array([d for _, d in q_items])
        if data.draw(st.booleans()):
            q_doc = q_doc.dictionary_encode()
        large = data.draw(st.booleans())
        r_doc = pa.array([d for _, d in run], pa.large_string() if large else pa.string())
        hit = _string_join_rows(qcodes, docids(r_doc, "docid", "run"), qg,
                                docids(q_doc, "docid", "qrels"))
    else:
        hit = _int_join_rows(qcodes, np.array([d for _, d in run], np.int64), qg,
                             np.array([d for _, d in q_items], np.int64))
    want = [q_items.index((q, d)) if (q, d) in judged else -1 for q, d in run]
    assert hit.tolist() == want
