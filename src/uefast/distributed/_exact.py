"""Exact, mergeable floating-point sums: Shewchuk expansions, rounded as ``math.fsum`` rounds.

A sum of doubles is carried as its *expansion*: non-overlapping partials of increasing magnitude
whose exact (real) sum is the exact sum of every value added so far (Shewchuk, "Adaptive
precision floating-point arithmetic and fast robust geometric predicates", DCG 18, 1997; the
``msum`` loop of CPython's ``math.fsum``). Adding the partials of one expansion to another is
exact, so partial sums of any partitioning of the values merge to the same expansion value, and
:meth:`Ragged.rounded` (CPython's final rounding step, round-half-even) gives the correctly rounded
sum, bit for bit the same for every partitioning and equal to ``math.fsum`` of all the values.

Storage: ``cells`` expansions at once, dense ``(cells, CAP)`` partials + ``lens`` while
accumulating, ragged ``(lens, flat)`` when shipped between processes. An expansion longer than
``CAP`` partials (values spread over more than ~3,000 bits of exponent range, or engineered
cancellation) is refused (the kernels return -1 and the caller raises).
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["CAP", "grow", "round_one", "compact", "merge_ragged", "Ragged"]

CAP = 64  # partials per expansion (sums of measure values need 1-3)


@njit(inline="always", cache=True)
def grow(p, n, x):
    """Add the double ``x`` exactly to the expansion ``p[:n]``; return its new length, or -1 when
    it would exceed ``len(p)`` or overflow (CPython ``msum``)."""
    i = 0
    for j in range(n):
        y = p[j]
        if abs(x) < abs(y):
            t = x
            x = y
            y = t
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            p[i] = lo
            i += 1
        x = hi
    if i >= p.shape[0] or not np.isfinite(x):
        return -1
    p[i] = x
    return i + 1


@njit(cache=True)
def round_one(p, n):
    """The expansion ``p[:n]`` rounded to the nearest double, ties to even (CPython
    ``math_fsum``'s final loop)."""
    hi = 0.0
    if n > 0:
        n -= 1
        hi = p[n]
        lo = 0.0
        while n > 0:
            x = hi
            n -= 1
            y = p[n]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and p[n - 1] < 0.0) or (lo > 0.0 and p[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    return hi


@njit(cache=True)
def _round_ragged(lens, offs, flat, out):
    for c in range(lens.shape[0]):
        out[c] = round_one(flat[offs[c]:offs[c] + lens[c]], lens[c])


@njit(cache=True)
def _compact(dense, lens, offs, flat):
    for c in range(lens.shape[0]):
        flat[offs[c]:offs[c] + lens[c]] = dense[c, :lens[c]]


@njit(cache=True)
def _merge(la, oa, fa, lb, ob, fb, dense, lens):
    for c in range(la.shape[0]):
        n = la[c]
        dense[c, :n] = fa[oa[c]:oa[c] + n]
        for j in range(lb[c]):
            n = grow(dense[c], n, fb[ob[c] + j])
            if n < 0:
                return c
        lens[c] = n
    return -1


class Ragged:
    """``cells`` expansions packed as lengths + partials (what a partition ships)."""

    __slots__ = ("lens", "flat")

    def __init__(self, lens: np.ndarray, flat: np.ndarray) -> None:
        self.lens = lens
        self.flat = flat

    @property
    def offsets(self) -> np.ndarray:
        off = np.zeros(len(self.lens) + 1, np.int64)
        np.cumsum(self.lens, out=off[1:])
        return off

    @classmethod
    def zeros(cls, cells: int) -> "Ragged":
        return cls(np.zeros(cells, np.int64), np.empty(0))

    def take(self, idx: np.ndarray) -> "Ragged":
        """The expansions of cells ``idx``, in that order."""
        idx = np.asarray(idx, np.int64)
        lens = self.lens[idx]
        starts = self.offsets[idx]
        skip = np.zeros(len(lens), np.int64)
        np.cumsum(lens[:-1], out=skip[1:])
        flat_idx = np.repeat(starts - skip, lens) + np.arange(int(lens.sum()), dtype=np.int64)
        return Ragged(lens, self.flat[flat_idx])

    def rounded(self) -> np.ndarray:
        """Each expansion rounded to the nearest double."""
        out = np.empty(len(self.lens))
        _round_ragged(self.lens, self.offsets[:-1], self.flat, out)
        return out


def compact(dense: np.ndarray, lens: np.ndarray) -> Ragged:
    """Dense ``(cells, CAP)`` partials + lengths -> :class:`Ragged`."""
    lens = lens.astype(np.int64)
    r = Ragged(lens, np.empty(int(lens.sum())))
    _compact(dense, lens, r.offsets[:-1], r.flat)
    return r


def merge_ragged(a: Ragged, b: Ragged) -> Ragged:
    """The expansions of ``a`` plus those of ``b``, cell by cell (exact); at most ``_BLOCK``
    cells held dense at once (memory ``_BLOCK * CAP`` doubles, whatever the cell count)."""
    if len(a.lens) != len(b.lens):
        raise ValueError(f"merging {len(a.lens)} cells with {len(b.lens)}")
    n = len(a.lens)
    if n <= _BLOCK:
        return _merge_block(a, b)
    lens, flats = [], []
    for c0 in range(0, n, _BLOCK):
        idx = np.arange(c0, min(n, c0 + _BLOCK))
        r = _merge_block(a.take(idx), b.take(idx))
        lens.append(r.lens)
        flats.append(r.flat)
    return Ragged(np.concatenate(lens), np.concatenate(flats))


_BLOCK = 1 << 16


def _merge_block(a: Ragged, b: Ragged) -> Ragged:
    dense = np.empty((len(a.lens), CAP))
    lens = np.zeros(len(a.lens), np.int64)
    bad = _merge(a.lens, a.offsets[:-1], a.flat, b.lens, b.offsets[:-1], b.flat, dense, lens)
    if bad >= 0:
        raise_overflow()
    return compact(dense, lens)


def raise_overflow() -> None:
    from uefast.errors import InputError

    raise InputError(f"an exact sum needs more than {CAP} partials (values spread over an extreme "
                     "exponent range, or an overflowing sum); these values cannot be summed "
                     "exactly here")
