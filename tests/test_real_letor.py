"""LETOR-style files nobody on the team wrote: LightGBM's lambdarank example (no qid: fields,
queries from its ``.query`` group file), an MSLR-WEB10K prefix and LETOR 4.0 MQ2008 S1 (with
docids). Read with :func:`uefast.io.read_letor`, checked against the statistics in each folder's
SOURCE.md, then evaluated with a "system" that ranks by one feature (many tied scores: LightGBM's
features are rounded to 2 decimals) and compared with the plain-Python reference (tests/naive.py).

Data: ``$UEFAST_SHARED_DATA`` (default ``<repo>/../shared/data``); skipped when it is absent.
"""
from __future__ import annotations

from collections import Counter, defaultdict

import pytest

import naive
import uefast
from conftest import SHARED_DATA, naive_value
from uefast import parse_measures
from uefast.io import read_letor

pytestmark = pytest.mark.slow  # data-heavy: `pytest -m slow` (.ci/run runs it)

MEASURES = parse_measures(["nDCG@10", "nDCG(gain=exp)@5", "AP", "ERR@10", "P@5", "RR", "RBP(p=0.8)"])

CASES = {  # file, feature used as the score, rows, queries, label counts (SOURCE.md)
    "lightgbm-test": ("lightgbm_lambdarank_example/rank.test", 1, 768, 50,
                      {0: 206, 1: 256, 2: 252, 3: 44, 4: 10}),
    "lightgbm-train": ("lightgbm_lambdarank_example/rank.train", 6, 3005, 201,
                       {0: 645, 1: 1211, 2: 858, 3: 222, 4: 69}),
    "mslr-test": ("mslr_web10k_sample/msn1.fold1.test.5k.txt", 130, 5000, 43,
                  {0: 2847, 1: 1442, 2: 579, 3: 98, 4: 34}),
    "mq2008-S1": ("letor4_mq2008/S1.txt", 25, 2933, 157, {0: 2316, 1: 427, 2: 190}),
}


def _plain_read(path, feature):
    """(labels, feature values, docids or None) per line, in plain Python."""
    labels, values, docids = [], [], []
    for line in open(path):
        body, _, comment = line.partition("#")
        tok = body.split()
        labels.append(int(tok[0]))
        feats = dict(t.split(":", 1) for t in tok[1:] if not t.startswith("qid:"))
        values.append(float(feats.get(str(feature), 0.0)))
        docids.append(comment.split("=", 1)[1].split()[0] if "docid" in comment else None)
    return labels, values, (docids if all(d is not None for d in docids) else None)


@pytest.mark.parametrize("case", list(CASES))
def test_real_letor_file_read_and_evaluated(case, tmp_path):
    rel, feature, n_rows, n_queries, label_counts = CASES[case]
    path = SHARED_DATA / rel
    if not path.is_file():
        pytest.skip(f"{path} not found (set UEFAST_SHARED_DATA)")
    labels, values, docids = _plain_read(path, feature)
    score_file = tmp_path / f"f{feature}.txt"
    score_file.write_text("".join(f"{v!r}\n" for v in values))
    table = read_letor(path, score_files=[score_file])  # LightGBM: groups from <file>.query
    assert table.num_rows == n_rows == len(labels)
    assert table["label"].to_pylist() == labels
    assert Counter(labels) == label_counts
    assert len(set(table["qid"].to_pylist())) == n_queries
    assert ("docid" in table.column_names) == (docids is not None)

    res = uefast.evaluate(table, measures=MEASURES)  # ties="trec_eval": docid, else input order
    rows = defaultdict(list)
    for i, q in enumerate(table["qid"].to_pylist()):
        rows[q].append(i)
    got = {(r["qid"], r["measure"]): r for r in res.to_pylist()}
    lmax = max(labels)
    checked = 0
    for q, idx in rows.items():
        lab = [labels[i] for i in idx]
        sc = [values[i] for i in idx]
        order = (naive.rank_trec_eval(sc, [docids[i] for i in idx]) if docids is not None
                 else naive.rank_input(sc))
        for m in MEASURES:
            row = got[(q, str(m))]
            assert row["value"] == pytest.approx(naive_value(m, [lab[i] for i in order], lab, lmax),
                                                 abs=1e-12), (case, q, m)
            assert row["iub"] == pytest.approx(naive_value(m, sorted(lab, reverse=True), lab, lmax),
                                               abs=1e-12), (case, q, m)
            checked += 1
    assert checked == n_queries * len(MEASURES)
