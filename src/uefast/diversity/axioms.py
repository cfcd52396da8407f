"""The ten formal constraints of Amigó, Spina & Carrillo-de-Albornoz (SIGIR'18 §3) as executable
checks on uefast's diversity measures (SPEC_diversity §3, our reading of each generator).

A *case* is a pair of ranked relevance matrices (better, worse): row i = r(d_i, t) in [0, 1] for
each aspect, plus aspect weights. A measure satisfies a constraint iff Q(better) - Q(worse) >
1e-12 * max(1, |Q|) on every case (>= for Sat); the relevance values are used as given (the
constraint analysis is about r, not grades), through :class:`RelTopic`. Generators take a NumPy
``Generator`` (the tests draw its seed with Hypothesis); ``deep`` thresholds (DeepTh, CloseTh)
use their closed families A_n = (r_c, 2n-1 non-relevant), B_n = (n non-relevant, n x r_c).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from uefast.diversity.registry import Batch, parse_measure

__all__ = ["RelTopic", "score", "CONSTRAINTS", "verdict", "case"]

TINY = (0.001, 0.002, 0.004, 0.006, 0.008, 0.01)


@dataclass
class RelTopic:
    """A topic whose documents are the rows of a relevance matrix ``r`` (n x m) used as r(d,t)
    by every grade map; ``grades`` = [r > 0] for the binary (ndeval) measures."""

    r: np.ndarray
    weights: np.ndarray
    cache: dict = field(default_factory=dict)

    def __post_init__(self):
        self.r = np.asarray(self.r, float)
        self.grades = (self.r > 0).astype(np.int64)
        self.n_rel_pairs = self.grades.sum(axis=0)
        self.docids = np.array([f"d{i:07d}" for i in range(self.r.shape[0])], object)
        self.aspects = [str(t) for t in range(self.r.shape[1])]

    @property
    def n(self) -> int:
        return self.r.shape[0]

    @property
    def m(self) -> int:
        return self.r.shape[1]

    def rel(self, grade_map: str = "binary", gmax: str = "aspect") -> np.ndarray:
        return self.grades.astype(float) if grade_map == "binary" else self.r


def score(measure, r: np.ndarray, w) -> float:
    """Q of the ranking whose i-th document has relevance row r[i]."""
    m = parse_measure(measure)
    t = RelTopic(np.asarray(r, float), np.asarray(w, float))
    rows = np.arange(t.n, dtype=np.int64)
    return float(m.fam.value(Batch([t], np.zeros(1, np.int64), rows, np.array([0, t.n], np.int64)), m)[0])


def _single(rng, L):
    return rng.choice((0.0,) + TINY, size=(L, 1))


def case(name: str, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One random (better, worse, weights) instance of constraint ``name``."""
    if name == "Pri":  # swapping a less relevant document below a more relevant one
        if rng.random() < 0.3:  # adversarial (SPEC §3): (0, b x L, lo) -> (lo, b x L, 0)
            lo, b = float(rng.choice([0.001, 0.002])), float(rng.choice([0.006, 0.01]))
            L = int(rng.integers(1, 13))
            worse = np.array([[0.0]] + [[b]] * L + [[lo]])
            better = np.array([[lo]] + [[b]] * L + [[0.0]])
            return better, worse, np.ones(1)
        L = int(rng.integers(2, 11))
        r = _single(rng, L)
        i, j = sorted(rng.choice(L, 2, replace=False))
        r[i, 0], r[j, 0] = sorted(rng.choice(TINY, 2, replace=False))
        if rng.random() < 0.3:
            r[i, 0] = 0.0
        better = r.copy()
        better[[i, j]] = better[[j, i]]
        return better, r, np.ones(1)
    if name == "Deep":  # the same swap is worth more at the top
        r = _single(rng, 10)
        i = int(rng.integers(0, 6))
        j = int(rng.integers(i + 2, 9))
        a, b = sorted(rng.choice(TINY, 2, replace=False))
        r[[i, j], 0] = a
        r[[i + 1, j + 1], 0] = b
        better, worse = r.copy(), r.copy()
        better[[i, i + 1]] = better[[i + 1, i]]
        worse[[j, j + 1]] = worse[[j + 1, j]]
        return better, worse, np.ones(1)
    if name == "Conf":  # a non-relevant document appended costs something
        m = int(rng.integers(1, 4))
        L = int(rng.integers(1, 10))
        r = rng.choice((0.0,) + TINY, size=(L, m))
        return r, np.vstack([r, np.zeros((1, m))]), np.full(m, 1.0 / m)
    if name == "AspDiv":  # a Pareto-dominating replacement
        if rng.random() < 0.3:  # adversarial: d_i gains a little on an aspect covered later
            lo, L = float(rng.choice([0.001, 0.002])), int(rng.integers(1, 8))
            worse = np.array([[0.01, 0.0]] + [[0.0, 0.01]] * L)
            better = worse.copy()
            better[0, 1] = lo
            return better, worse, np.full(2, 0.5)
        m = int(rng.integers(2, 5))
        L = int(rng.integers(1, 8))
        r = rng.choice((0.0,) + TINY, size=(L, m))
        i = int(rng.integers(0, L))
        better = r.copy()
        t = int(rng.integers(0, m))
        up = [x for x in TINY if x > r[i, t]]
        if not up:
            r[i, t] = 0.004
            up = [0.006, 0.008, 0.01]
            better = r.copy()
        better[i, t] = float(rng.choice(up))
        return better, r, np.full(m, 1.0 / m)
    if name == "Red":  # the next document should go to the less covered aspect
        rc = float(rng.choice([0.01, 0.3, 0.7]))
        ca = int(rng.integers(1, 5))
        cb = int(rng.integers(0, ca))
        rows = [[rc, 0.0]] * ca + [[0.0, rc]] * cb
        prefix = np.array(rows, float)[rng.permutation(ca + cb)]
        return (np.vstack([prefix, [[0.0, rc]]]), np.vstack([prefix, [[rc, 0.0]]]), np.full(2, 0.5))
    if name == "MRed":  # ... also when the prefix favours t by degree only
        L = int(rng.integers(1, 6))
        hi = rng.choice(TINY[1:], size=L)
        lo = np.array([float(rng.choice([0.0] + [x for x in TINY if x < h])) for h in hi])
        prefix = np.column_stack([hi, lo])
        v = float(rng.choice([0.005, 0.01, 0.5, 1.0]))
        return np.vstack([prefix, [[0.0, v]]]), np.vstack([prefix, [[v, 0.0]]]), np.full(2, 0.5)
    if name == "AspRel":  # the heavier aspect first
        m = int(rng.integers(3, 5))
        w = rng.dirichlet(np.ones(m))
        t, u = np.argsort(-w)[:2]
        L = int(rng.integers(1, 6))
        i = int(rng.integers(0, L))
        r = np.zeros((L, m))
        others = [x for x in range(m) if x not in (t, u)]
        for k in range(L):
            if k != i:
                r[k, int(rng.choice(others))] = float(rng.choice(TINY))
        v = float(rng.choice(TINY))
        better, worse = r.copy(), r.copy()
        better[i, t] = v
        worse[i, u] = v
        return better, worse, w
    raise KeyError(name)


def _ab(n: int, rc: float):
    a = np.zeros((2 * n, 1))
    a[0, 0] = rc
    b = np.zeros((2 * n, 1))
    b[n:, 0] = rc
    return a, b


def verdict(measure: str, name: str, rng, n_cases: int = 200) -> bool:
    """Whether ``measure`` satisfies constraint ``name`` on ``n_cases`` random instances (and,
    for DeepTh / CloseTh / Sat, their closed families)."""
    if name == "DeepTh":  # for all large n: one early relevant beats n late ones
        return all(score(measure, *_ab(n, rc)[:1], np.ones(1)) - score(measure, _ab(n, rc)[1], np.ones(1))
                   > 1e-12 for n in (20000, 50000, 100000) for rc in (0.001, 0.01))
    if name == "CloseTh":  # for some n: n adjacent late relevant beat one early
        grid = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100, 200, 500, 1000, 10000, 100000]
        return all(any(score(measure, _ab(n, rc)[1], np.ones(1)) - score(measure, _ab(n, rc)[0], np.ones(1))
                       > 1e-12 for n in grid) for rc in (0.001, 0.01))
    if name == "Sat":  # some r_max after which a redundant document adds nothing
        for rmax in (0.25, 0.5, 0.75, 1.0):
            ok = True
            for _ in range(max(n_cases // 10, 5)):
                L = int(rng.integers(0, 4))
                prefix = np.column_stack([np.zeros(L), rng.choice(TINY, size=L)])
                base = np.vstack([prefix, [[rmax, 0.0]]])
                extra = float(rng.choice([0.01, 0.3, 1.0]))
                if score(measure, base, [0.5, 0.5]) - score(measure, np.vstack([base, [[extra, 0.0]]]),
                                                            [0.5, 0.5]) < -1e-12:
                    ok = False
                    break
            if ok:
                return True
        return False
    for _ in range(n_cases):
        better, worse, w = case(name, rng)
        qb, qw = score(measure, better, w), score(measure, worse, w)
        if not qb - qw > 1e-12 * max(1.0, abs(qb)):
            return False
    return True


CONSTRAINTS = ("Pri", "Deep", "DeepTh", "CloseTh", "Conf", "AspDiv", "Red", "MRed", "Sat", "AspRel")
