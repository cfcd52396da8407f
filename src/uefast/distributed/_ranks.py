"""The sign test and the Wilcoxon signed-rank test from mergeable counts (no per-query data on
the driver, no global sort).

* **Sign test.** A part counts, per pair of systems, ``n+ = #{z > cut}`` and
  ``n- = #{z < -cut}`` (``z = x_a - x_b``); counts add. ``cut = 0`` for ``epsilon = 0``, else
  ``epsilon + 1e-12·max(1, max|x_a|, max|x_b|)`` with the maximum over the pair's common queries
  from the first pass (:func:`uefast.stats.paired_test`'s tolerance, SPEC §6.2).
* **Wilcoxon.** The ranks of ``|z|`` over *all* queries are needed, but the statistic depends on
  them only through the multiset of ``(|z|, sign)``. A part sends, per pair, the sorted distinct
  nonzero values ``v`` of ``|z|`` with ``pos(v)``, ``neg(v)`` (how many queries have
  ``z = +v`` / ``-v``): an exact histogram, merged by a sorted union adding counts. The driver
  then has, for each ``v`` in ascending order, ``c(v) = pos + neg`` and ``below(v) = Σ_{u<v}
  c(u)``: the average rank of ``v`` is ``below + (c + 1)/2`` (scipy's ``rankdata`` "average"),
  ``2·W+ = Σ pos(v)·(2·below(v) + c(v) + 1)`` in integers (exact), the tie groups are the
  ``c(v)``, and zeros are ``n - N``. These are exactly what :func:`uefast.stats.paired_test`
  computes from the gathered differences (its float sum of half-integer ranks is exact below
  2^53), and :func:`uefast.stats.parametric.wilcoxon_from_ranks` finishes both, so the p-values
  are identical.

  Why a histogram rather than a distributed sort or gathering the differences: it is exact,
  needs no second pass or range partitioning (a sort would need splitters and a pass to learn
  them), and it is never larger than gathering (one value and two counts per distinct ``|z|``
  per part, at most one per query), while it shrinks to a few values for discrete measures
  (P@k, success@k, nDCG@k of short lists: differences take few values), where gathering stays
  one float per query per pair. Memory on the driver: the distinct ``|z|`` values of a pair.
  The exact null (``N <= 50`` without ties or zeros, or ``exact=True``) rebuilds the ``N``
  ranks from the histogram.
"""
from __future__ import annotations

import numpy as np

__all__ = ["RankStats", "rank_partial", "finish_sign", "finish_wilcoxon"]


class RankStats:
    """Sorted distinct nonzero ``|z|`` values with the counts of ``+v`` and ``-v``."""

    __slots__ = ("values", "pos", "neg")

    def __init__(self, values: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> None:
        self.values, self.pos, self.neg = values, pos, neg

    @classmethod
    def of(cls, z: np.ndarray) -> "RankStats":
        """The histogram of one column of differences (NaN = absent, zeros left out)."""
        z = z[~np.isnan(z) & (z != 0)]
        values, inv = np.unique(np.abs(z), return_inverse=True)
        pos = np.bincount(inv[z > 0], minlength=len(values)).astype(np.int64)
        neg = np.bincount(inv[z < 0], minlength=len(values)).astype(np.int64)
        return cls(values, pos, neg)

    def merge(self, o: "RankStats") -> "RankStats":
        values, inv = np.unique(np.concatenate([self.values, o.values]), return_inverse=True)
        pos = np.bincount(inv, np.concatenate([self.pos, o.pos]).astype(np.float64),
                          minlength=len(values))
        neg = np.bincount(inv, np.concatenate([self.neg, o.neg]).astype(np.float64),
                          minlength=len(values))
        return RankStats(values, np.rint(pos).astype(np.int64), np.rint(neg).astype(np.int64))


def rank_partial(z: np.ndarray, keys: list, method: str, cut: dict) -> dict:
    """Per pair key: the sign test's ``KeyStats(ints=[n+, n-])`` or Wilcoxon's
    :class:`RankStats` of the part's differences ``z`` (one column per key)."""
    from uefast.distributed._exact import Ragged
    from uefast.distributed._reduce import KeyStats

    out: dict = {}
    for p, key in enumerate(keys):
        col = z[:, p]
        if method == "sign":
            c = cut.get(key, 0.0)
            n_pos = int(np.count_nonzero(col > c))  # NaN compares False: absent rows skipped
            n_neg = int(np.count_nonzero(col < -c))
            out[key] = KeyStats(np.array([n_pos, n_neg], np.int64), Ragged.zeros(0),
                                np.zeros(0))
        else:
            out[key] = RankStats.of(col)
    return out


def finish_sign(stats, alternative: str) -> tuple[float, float]:
    """``(n+, p)`` of the merged counts (:func:`uefast.stats.parametric.sign_from_counts`)."""
    from uefast.stats.parametric import sign_from_counts

    stat, p, _ = sign_from_counts(int(stats.ints[0]), int(stats.ints[1]), alternative)
    return stat, p


def finish_wilcoxon(r: RankStats, n: int, alternative: str, exact: bool | None
                    ) -> tuple[float, float]:
    """``(statistic, p)`` of the merged histogram over ``n`` common queries (module
    docstring; :func:`uefast.stats.parametric.wilcoxon_from_ranks`)."""
    from uefast.stats.parametric import wilcoxon_from_ranks

    c = r.pos + r.neg
    big_n = int(c.sum())
    if big_n == 0:
        return 0.0, 1.0
    below = np.cumsum(c) - c
    rank2 = 2 * below + c + 1  # twice the average rank of each distinct |z|, exact integers
    w_plus = int(np.dot(r.pos, rank2)) / 2
    w_minus = int(np.dot(r.neg, rank2)) / 2
    stat, p, _ = wilcoxon_from_ranks(float(w_plus), float(w_minus), c, n > big_n, alternative,
                                     exact, lambda: np.repeat(rank2 / 2.0, c))
    return stat, p
