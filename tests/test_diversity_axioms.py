"""The ten constraints of Amigó et al. (SIGIR'18) as Hypothesis properties (uefast.diversity.axioms):
each measure satisfies the constraints SPEC_diversity §3.1's table credits it with on random
instances (seeds drawn by Hypothesis), fails the ones it does not (a counterexample exists), and
RBU satisfies all ten, including the closed DeepTh/CloseTh families and Sat."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from uefast.diversity.axioms import CONSTRAINTS, case, score, verdict

DEEP = {  # regime "deep" of SPEC §3.1: alpha = .1, beta = p = .9, e = .05, no cutoff binding
    "gERR-IA": "gERR-IA@1000000",
    "RBU": "RBU(p=0.9,e=0.05)",
    "RBU-java": "RBU(p=0.9,e=0.05,variant=java)",
    "RBP-IA": "RBP-IA(p=0.9)",
    "EU": "EU(alpha=0.1,e=0.05)",
    "RR-IA": "RR-IA",
    "S-RR": "S-RR",
}
SATISFIED = {  # the random-instance constraints the SPEC table marks Y
    "gERR-IA": ["Pri", "Deep", "AspDiv", "Red", "MRed", "AspRel"],
    "RBU": ["Pri", "Deep", "Conf", "AspDiv", "Red", "MRed", "AspRel"],
    "RBU-java": ["Pri", "Deep", "Conf", "AspDiv", "Red", "MRed", "AspRel"],
    "RBP-IA": ["Pri", "Deep", "AspDiv", "AspRel"],
    "EU": ["Deep", "Conf", "Red", "AspRel"],
    "RR-IA": ["AspRel"],
}
VIOLATED = {  # marked "." in the SPEC table: a counterexample must exist
    "gERR-IA": ["Conf"], "RBP-IA": ["Conf", "Red", "MRed"], "EU": ["Pri", "AspDiv", "MRed"],
    "RR-IA": ["Pri", "Deep", "Conf", "Red"], "S-RR": ["Pri", "Deep", "Conf", "AspRel"],
}


@pytest.mark.parametrize("mk, con", [(m, c) for m, cs in SATISFIED.items() for c in cs])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_constraint_holds(mk, con, seed):
    better, worse, w = case(con, np.random.default_rng(seed))
    qb, qw = score(DEEP[mk], better, w), score(DEEP[mk], worse, w)
    assert qb - qw > 1e-12 * max(1.0, abs(qb)), (better.tolist(), worse.tolist(), qb, qw)


@pytest.mark.parametrize("mk, con", [(m, c) for m, cs in VIOLATED.items() for c in cs])
def test_constraint_violated(mk, con):
    assert not verdict(DEEP[mk], con, np.random.default_rng(0), 300)


@pytest.mark.parametrize("mk", ["RBU", "RBU-java"])
def test_rbu_satisfies_all_ten(mk):
    """The paper's claim (SPEC §3.1): RBU satisfies every constraint, DeepTh for every large n,
    CloseTh for some n (p = .9 > .755), Sat at r_max = 1."""
    rng = np.random.default_rng(11)
    assert all(verdict(DEEP[mk], c, rng, 100) for c in CONSTRAINTS)


@pytest.mark.slow
def test_threshold_rows_match_spec():
    """DeepTh / CloseTh / Sat of the fast rows against SPEC §3.1's deep-regime cells."""
    spec = {"gERR-IA": (True, False, True), "RBP-IA": (True, True, False), "EU": (True, True, False),
            "RR-IA": (True, False, True), "S-RR": (True, False, True)}
    for mk, (deep_th, close_th, sat) in spec.items():
        rng = np.random.default_rng(5)
        assert verdict(DEEP[mk], "DeepTh", rng) == deep_th, mk
        assert verdict(DEEP[mk], "CloseTh", rng) == close_th, mk
        assert verdict(DEEP[mk], "Sat", rng) == sat, mk


def test_closeth_threshold_of_rbp_ia():
    """SPEC §3.1: RBP satisfies CloseTh iff max_m p^m (1 - p^m) > 1 - p, i.e. p >~ 0.755."""
    rng = np.random.default_rng(3)
    assert verdict("RBP-IA(p=0.76)", "CloseTh", rng)
    assert not verdict("RBP-IA(p=0.75)", "CloseTh", rng)
