"""The faster routines behind Q-measure and nERR (issue 23's speed target) against the routines
they replace and against brute force:

* ``err_reb_gf`` (ERR's REB by generating functions over blocks of equal labels) equals the
  expectation over every order (exact rationals, n <= 7) and the per-document DP ``err_tied`` on
  long lists, tiny stop probabilities (lmax = 60) included; ``err_reb`` takes it where it applies;
* ``q_plain_pos`` (Q's ranking walk over the relevant ranks only) gives the bits of ``q_plain``
  for integer gains and agrees to rounding otherwise;
* ``q_reb`` equals the tie-aware routine's sum (``_br_positions``) it was, to 1e-13 (its flat
  tail by a closed form in the digamma function)."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from uefast.kernels.err import err_reb, err_reb_gf, err_tied
from uefast.kernels.metrics import gain
from uefast.kernels.sakai import _br_positions, q_plain, q_plain_pos, q_reb


def _blocks(lab):
    starts = [0] + [j for j in range(1, len(lab)) if lab[j] != lab[j - 1]] + [len(lab)]
    return np.array(starts, np.int64), len(starts) - 1


def _theta(label, lmax, gtype):
    if label <= 0:
        return Fraction(0)
    return Fraction(label, lmax + 1) if gtype == 0 else Fraction(2**label - 1, 2**lmax)


def _err_over_all_orders(lab, lmax, gtype, k):
    """E[ERR@k] over every order of ``lab``, exact."""
    th = [_theta(v, lmax, gtype) for v in lab]
    total, count = Fraction(0), 0
    for perm in itertools.permutations(range(len(lab))):
        stay, v = Fraction(1), Fraction(0)
        for r, j in enumerate(perm[:k], start=1):
            v += stay * th[j] / r
            stay *= 1 - th[j]
        total += v
        count += 1
    return total / count


@pytest.mark.parametrize("seed", [0, 1])
def test_err_reb_gf_equals_the_mean_over_all_orders(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(2, 7))
        top = int(rng.integers(1, 5))
        lab = np.sort(rng.integers(0, top + 1, n))[::-1].astype(np.int64).copy()
        lmax = top if rng.random() < 0.6 else 60
        gtype = int(rng.integers(0, 2))
        k = int(rng.integers(1, n + 1))
        starts, nb = _blocks(lab)
        got = err_reb_gf(lab, n, k, float(lmax), gtype, starts, nb, np.empty(6 * k + 2))
        want = _err_over_all_orders(lab.tolist(), lmax, gtype, k)
        if want == 0:
            assert got == 0.0
        else:  # relative: with lmax = 60 the values are ~1e-18
            assert abs(Fraction(got) - want) <= 1e-14 * want, (lab.tolist(), lmax, gtype, k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_err_reb_on_long_lists_equals_the_per_document_dp(seed):
    """Lists long enough for the generating-function path (n >= 4 kg + 2 b - 2), shallow and
    deep cutoffs, both grade scales, coarse and fine (lmax = 60) stop probabilities."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        n = int(rng.integers(40, 400))
        top = int(rng.integers(1, 6))
        lab = np.where(rng.random(n) < rng.random(), 0, rng.integers(1, top + 1, n))
        lab = np.sort(lab)[::-1].astype(np.int64).copy()
        lmax = float(top) if rng.random() < 0.7 else 60.0
        gtype = int(rng.integers(0, 2))
        k = int(rng.choice([1, 3, 5, 10, 20]))
        gend = np.empty(n + 1, np.int64)
        got = err_reb(lab, n, k, lmax, gtype, gend, np.empty(n + 2))
        direct = err_reb_gf(lab, n, k, lmax, gtype, *_blocks(lab), np.empty(6 * k + 2))
        gend[0] = n
        want = err_tied(lab, gend, 1, n, k, lmax, gtype, np.empty(n + 2))
        assert got == pytest.approx(want, rel=1e-13, abs=1e-300), (lab.tolist(), lmax, gtype, k)
        assert direct == pytest.approx(want, rel=1e-13, abs=1e-300), (lab.tolist(), lmax, gtype, k)


def test_q_plain_pos_gives_the_bits_of_q_plain():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(1, 60))
        top = int(rng.integers(1, 6))
        lab = np.where(rng.random(n) < rng.random(), 0, rng.integers(1, top + 1, n)).astype(np.int64)
        ni = int(rng.integers(0, n + 20))  # a judged set shorter or longer than the ranking
        ideal = np.where(rng.random(ni) < rng.random(), rng.integers(-1, 1, ni),
                         rng.integers(1, top + 1, ni))
        ideal = np.sort(ideal)[::-1].astype(np.int64).copy()
        nrel = int((ideal >= 1).sum()) or int(rng.integers(0, 3))
        k = int(rng.choice([0, 0, 1, 3, 10, 100]))
        gtype = int(rng.choice([0, 1, 3]))  # 3: exponential gains scaled by 2^-2 (fractions)
        beta = float(rng.choice([1.0, 2.0, 0.3]))
        want = q_plain(lab, n, k, gtype, beta, nrel, ideal)
        got = q_plain_pos(lab, n, k, gtype, beta, nrel, ideal, np.empty(n, np.int64))
        if gtype < 2:
            assert got == want, (lab.tolist(), ideal.tolist(), k, gtype, beta)
        else:
            assert got == pytest.approx(want, rel=1e-14, abs=0), (lab.tolist(), ideal.tolist())


def test_q_reb_equals_the_positions_sum():
    """q_reb against the tie-aware routine's sum over positions (``_br_positions``), which it
    was: the same bits over the blocks of relevant labels, the flat tail by its closed form where
    well conditioned (long lists: n up to 2,000) and summed where not (exponential gains of
    labels up to 40: cg* far above the ranks)."""
    rng = np.random.default_rng(1)
    for _ in range(3000):
        n = int(rng.integers(1, 2000 if rng.random() < 0.5 else 80))
        top = int(rng.integers(1, 6)) if rng.random() < 0.8 else int(rng.integers(1, 40))
        lab = np.where(rng.random(n) < rng.random(), rng.integers(-1, 1, n),
                       rng.integers(1, top + 1, n))
        lab = np.sort(lab)[::-1].astype(np.int64).copy()
        k = int(rng.choice([0, 0, 1, 3, 10, 100, 1000]))
        gtype = int(rng.choice([0, 1, 3]))
        beta = float(rng.choice([1.0, 2.0, 0.3, 0.0, 10.0]))
        nrel = int((lab >= 1).sum())
        gsum = sum(gain(int(v), gtype) for v in lab)
        got = q_reb(lab, n, k, gtype, beta, nrel, gsum)
        if nrel == 0:
            assert got == 0.0
            continue
        S = nrel + beta * gsum
        a = S / n
        b = (nrel - 1.0) * S / (n * (n - 1.0)) if n > 1 else 0.0
        K = n if k <= 0 or k > n else k
        s, _ = _br_positions(0, K, a, b, beta, lab, gtype, 0.0)
        want = s / (min(nrel, k) if k > 0 else nrel)
        assert got == pytest.approx(want, rel=1e-13, abs=0), (lab.tolist(), k, gtype, beta)
