"""Sakai's measures (Q, nERR, O, P+, P-measure, AP, ERR, and the cumulative-gain variants: original nDCG with
log base b, MSnDCG, NCUgu,BR, NCUgu,P, NCUrb,BR, NCUrb,P) against NTCIREVAL's semantics (the pyNTCIREVAL package as the oracle), on
random TREC-style runs and qrels with tied scores (broken by uefast's ``ties="input"`` order, the
same ranked list handed to pyNTCIREVAL), unjudged retrieved documents and relevant documents the
run never retrieved. Gains are NTCIREVAL's defaults, grade = level (``gain=lin``), and nERR's
top grade is the largest level of the data."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import uefast

nt = pytest.importorskip("pyNTCIREVAL.metrics", reason="pyNTCIREVAL (dev extra) not installed")


def _data(seed: int, nq: int = 40):
    rng = np.random.default_rng(seed)
    run = {"qid": [], "docid": [], "score": []}
    qrels = {"qid": [], "docid": [], "label": []}
    for q in range(nq):
        ndocs = int(rng.integers(1, 25))
        for d in range(ndocs):
            if rng.random() < 0.8:  # judged
                qrels["qid"].append(str(q))
                qrels["docid"].append(f"d{d}")
                qrels["label"].append(int(rng.integers(0, 4)))
            if rng.random() < 0.7:  # retrieved
                run["qid"].append(str(q))
                run["docid"].append(f"d{d}")
                run["score"].append(float(rng.integers(0, 5)))  # many ties
        if not any(x == str(q) for x in qrels["qid"]):
            qrels["qid"].append(str(q))
            qrels["docid"].append("dx")
            qrels["label"].append(1)
    return pa.table(run), pa.table(qrels)


def _ranked(run: pa.Table, qrels: pa.Table):
    """qid -> the ranked list [(docid, level or None)] in uefast's ``ties="input"`` order, and
    qid -> judged levels."""
    judged: dict = {}
    for q, d, lab in zip(*(qrels[c].to_pylist() for c in ("qid", "docid", "label"))):
        judged.setdefault(q, {})[d] = lab
    lists: dict = {}
    rows = list(zip(*(run[c].to_pylist() for c in ("qid", "docid", "score"))))
    for i, (q, d, s) in enumerate(rows):
        lists.setdefault(q, []).append((-s, i, d))
    out = {q: [(d, judged.get(q, {}).get(d)) for _, _, d in sorted(v)] for q, v in lists.items()}
    return out, judged


def _oracle(name: str, cutoff, beta, ranked, levels, top):
    xrelnum = [0] * (top + 1)
    for v in levels.values():
        xrelnum[v] += 1
    grades = list(range(1, top + 1))
    if name == "Q":
        m = nt.QMeasure(xrelnum, grades, beta, cutoff)
    elif name == "O":
        m = nt.OMeasure(xrelnum, grades, beta)
    elif name == "nERR":
        m = nt.nERR(xrelnum, grades, cutoff)
    elif name == "ERR":  # NTCIREVAL prints it without a cutoff; a cutoff truncates the list
        m = nt.ERR(xrelnum, grades)
        m.cutoff = cutoff
    elif name == "Pplus":
        m = nt.PPlusMeasure(xrelnum, grades, beta)
    elif name == "Pmeasure":
        m = nt.PMeasure(xrelnum, grades, beta)
    elif name in ("JKnDCG", "MSnDCG"):  # normalised by the ideal ranking: 0 when it scores 0
        if sum(xrelnum[1:]) == 0:
            return 0.0
        m = nt.nDCG(xrelnum, grades, beta, cutoff) if name == "JKnDCG" else \
            nt.MSnDCG(xrelnum, grades, cutoff)
    elif name == "NCUguBR":  # stop values = gain values (NTCIREVAL's default)
        m = nt.NCUguBR(xrelnum, grades, grades, beta)
        m.cutoff = cutoff
    elif name == "NCUrbBR":  # the third field is gamma; beta 1
        m = nt.NCUrbBR(xrelnum, grades, beta, 1.0)
        m.cutoff = cutoff
    elif name == "NCUrbP":
        m = nt.NCUrbP(xrelnum, grades, beta)
        m.cutoff = cutoff
    elif name == "NCUguP":
        m = nt.NCUguP(xrelnum, grades, grades)
        m.cutoff = cutoff
    else:
        m = nt.AP(xrelnum, grades, cutoff)
    lst = ranked if cutoff is None or name not in ("O",) else ranked[:cutoff]
    if name == "nERR" and sum(xrelnum[1:]) == 0:
        return 0.0
    return m.compute(lst)


CASES = [("Q", None, 1.0, "Q"), ("Q", 10, 1.0, "Q@10"), ("Q", 5, 2.0, "Q(beta=2)@5"),
         ("Q", None, 0.5, "Q(beta=0.5)"), ("nERR", 10, None, "nERR@10"), ("nERR", 3, None, "nERR@3"),
         ("O", None, 1.0, "O"), ("O", 5, 3.0, "O(beta=3)@5"), ("AP", None, None, "AP"),
         ("AP", 10, None, "AP(norm=min)@10"), ("Pplus", None, 1.0, "P+"),
         ("Pplus", None, 2.0, "Pplus(beta=2)"), ("Pmeasure", None, 1.0, "P-measure"),
         ("Pmeasure", None, 3.0, "Pmeasure(beta=3)"),
         # NTCIREVAL's cumulative-gain variants (for nDCG the third field is the log base)
         ("JKnDCG", 10, 2.0, "nDCG-orig@10"), ("JKnDCG", 5, 3.0, "JKnDCG(logb=3)@5"),
         ("JKnDCG", None, 2.0, "JKnDCG"), ("JKnDCG", 4, 5.0, "JKnDCG(logb=5)@4"),
         ("MSnDCG", 10, None, "MSnDCG@10"), ("MSnDCG", None, None, "MSnDCG"),
         ("NCUguBR", None, 1.0, "NCUguBR"), ("NCUguBR", None, 2.0, "NCU(beta=2)"),
         ("NCUguP", None, None, "NCUguP"), ("NCUguBR", 5, 1.0, "NCU@5"),
         ("NCUrbBR", None, 0.95, "NCUrbBR"), ("NCUrbP", None, 0.95, "NCUrbP"),
         ("NCUrbBR", None, 0.5, "NCUrb(gamma=0.5)"), ("NCUrbP", None, 1.0, "NCUrb(gamma=1,nu=p)"),
         ("NCUrbBR", 5, 0.8, "NCUrb(gamma=0.8)@5"),
         ("ERR", None, None, "ERR(gain=lin)"), ("ERR", 5, None, "ERR(gain=lin)@5")]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sakai_measures_match_ntcireval(seed):
    run, qrels = _data(seed)
    res = uefast.evaluate(run, qrels, measures=[c[3] for c in CASES], ties="input",
                          queries="intersect").to_pylist()
    got = {(r["qid"], r["measure"]): r["value"] for r in res}
    ranked, judged = _ranked(run, qrels)
    top = max(qrels["label"].to_pylist())
    bad = []
    for q, lst in ranked.items():
        levels = judged.get(q)
        if levels is None:
            continue
        for name, cutoff, beta, text in CASES:
            want = _oracle(name, cutoff, beta, lst, levels, top)
            have = got[(q, str(uefast.parse_measure(text)))]
            if abs(have - want) > 1e-9:
                bad.append((q, text, have, want))
    assert not bad, bad[:5]


@pytest.mark.parametrize("ties", ["input", "expected"])
def test_ncurb_with_gamma_one_is_q_measure(ties):
    """Uniform stops (gamma = 1): NCUrb,BR is Q-measure and NCUrb,P is Q(beta=0), i.e. AP, for
    values, tie-aware values, IUB and REB (Sakai & Robertson 2008)."""
    run, qrels = _data(5)
    res = uefast.evaluate(run, qrels, measures=["NCUrb(gamma=1)", "Q", "NCUrb(gamma=1,nu=p)",
                                                "Q(beta=0)"], ties=ties,
                          queries="intersect").to_pylist()
    got = {(r["qid"], r["measure"]): r for r in res}
    pairs = [("NCUrb(gamma=1.0)", "Q"), ("NCUrb(gamma=1.0,nu=p)", "Q(beta=0.0)")]
    qids = {r["qid"] for r in res}
    for q in qids:
        for a, b in pairs:
            for col in ("value", "iub", "reb"):
                assert got[(q, a)][col] == pytest.approx(got[(q, b)][col], abs=1e-12), (q, a, col)
