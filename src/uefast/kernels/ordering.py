"""Ranking one query segment: sort by score descending with an explicit tie policy (Numba).

Tie policies (``tie_mode``):

* ``TIE_INPUT`` (0)   -- equal scores keep input order (a stable sort);
* ``TIE_DOCID`` (1)   -- equal scores ordered by docid **descending by bytes**, as trec_eval does
  (``strcmp`` on docnos: "9" ranks before "10"); integer docids compare as their decimal strings;
* ``TIE_EXPECTED`` (2) -- the order inside a tie group is irrelevant; the caller uses the groups.

:func:`rank_segment` sorts the float keys alone with a quicksort (median of three, Hoare partition,
insertion sort below 24 elements) whose comparisons are plain float comparisons, then re-orders
each run of equal scores by the tie policy with a stable merge sort (:func:`sort_segment`). All
work happens in caller-provided buffers: no allocation per query. Ranking without sorting (by
counting) is in :mod:`uefast.kernels.counting`.
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["TIE_INPUT", "TIE_DOCID", "TIE_EXPECTED", "DOC_NONE", "DOC_BYTES", "DOC_INT",
           "docid_compare", "rank_before", "sort_segment", "rank_segment", "tie_groups", "quicksort_desc"]

TIE_INPUT, TIE_DOCID, TIE_EXPECTED = 0, 1, 2
DOC_NONE, DOC_BYTES, DOC_INT = 0, 1, 2

_jit = nb.njit(cache=True, nogil=True)


_P10 = np.array([10 ** i for i in range(19)], dtype=np.int64)


@_jit
def _ndigits(u):
    """Number of decimal digits of u >= 0 (comparisons only: no division)."""
    d = 1
    while d < 19 and u >= _P10[d]:
        d += 1
    return d


@_jit
def _mag_str_compare(ua, ub):
    """strcmp of the decimal strings of two magnitudes ua, ub >= 0: left-align the shorter one
    (one integer division); a string that is a prefix of the other sorts first."""
    da = _ndigits(ua)
    db = _ndigits(ub)
    if da == db:
        return 0 if ua == ub else (1 if ua > ub else -1)
    if da < db:
        q = ub // _P10[db - da]
        return 1 if ua > q else -1  # ua == q: a is a prefix of b, so a sorts first
    q = ua // _P10[da - db]
    return -1 if q < ub else 1  # q == ub: b is a prefix of a, so b sorts first


@_jit
def _int_str_compare(a, b):
    """Compare two int64 values as their decimal strings, bytewise (strcmp semantics)."""
    if a == b:
        return 0
    if a < 0:
        if b >= 0:
            return -1  # '-' (0x2d) sorts before every digit
        # both negative: compare the digits after '-'. -2^63 has no int64 magnitude: it is
        # saturated to 2^63 - 1, whose digits differ from its own ("...808") in the last one only,
        # so only a tie with -(2^63 - 1) needs settling: "...808" > "...807"
        c = _mag_str_compare(-max(a, -9223372036854775807), -max(b, -9223372036854775807))
        if c == 0:
            return 1 if a < b else -1
        return c
    if b < 0:
        return 1
    return _mag_str_compare(a, b)


@_jit
def docid_compare(ra, rb, doc_mode, doc_int, doc_off, doc_data):
    """strcmp-style comparison of the docids of input rows ``ra`` and ``rb`` (-1, 0 or 1)."""
    if doc_mode == DOC_INT:
        return _int_str_compare(doc_int[ra], doc_int[rb])
    if doc_mode == DOC_BYTES:
        a0 = doc_off[ra]
        a1 = doc_off[ra + 1]
        b0 = doc_off[rb]
        b1 = doc_off[rb + 1]
        la = a1 - a0
        lb = b1 - b0
        for i in range(min(la, lb)):
            ca = doc_data[a0 + i]
            cb = doc_data[b0 + i]
            if ca != cb:
                return 1 if ca > cb else -1
        if la == lb:
            return 0
        return 1 if la > lb else -1
    return 0


@_jit
def rank_before(ka, ia, kb, ib, tie_mode, rows, doc_mode, doc_int, doc_off, doc_data):
    """True if (score ka, local index ia) ranks strictly before (kb, ib)."""
    if ka > kb:
        return True
    if ka < kb:
        return False
    if tie_mode == TIE_DOCID and doc_mode != DOC_NONE:
        c = docid_compare(rows[ia], rows[ib], doc_mode, doc_int, doc_off, doc_data)
        if c != 0:
            return c > 0
    return ia < ib


@_jit
def sort_segment(keys, idx, tk, ti, n, tie_mode, rows, doc_mode, doc_int, doc_off, doc_data):
    """Sort ``keys[0:n]`` descending, permuting ``idx`` alongside (stable merge sort).

    ``rows[idx]`` maps a local index to its input row (for docid look-ups). ``tk``/``ti`` are
    scratch of length >= n. On return ``keys``/``idx`` hold the sorted order.
    """
    run = 16
    for s in range(0, n, run):
        e = min(s + run, n)
        for i in range(s + 1, e):
            kv = keys[i]
            iv = idx[i]
            j = i - 1
            while j >= s and rank_before(kv, iv, keys[j], idx[j], tie_mode, rows, doc_mode,
                                     doc_int, doc_off, doc_data):
                keys[j + 1] = keys[j]
                idx[j + 1] = idx[j]
                j -= 1
            keys[j + 1] = kv
            idx[j + 1] = iv
    if n <= run:
        return
    sk = keys
    si = idx
    dk = tk
    di = ti
    width = run
    in_tmp = False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a = lo
            b = mid
            o = lo
            while a < mid and b < hi:
                # take from the right run only if it ranks strictly before (stability)
                if rank_before(sk[b], si[b], sk[a], si[a], tie_mode, rows, doc_mode,
                               doc_int, doc_off, doc_data):
                    dk[o] = sk[b]
                    di[o] = si[b]
                    b += 1
                else:
                    dk[o] = sk[a]
                    di[o] = si[a]
                    a += 1
                o += 1
            while a < mid:
                dk[o] = sk[a]
                di[o] = si[a]
                a += 1
                o += 1
            while b < hi:
                dk[o] = sk[b]
                di[o] = si[b]
                b += 1
                o += 1
        sk, dk = dk, sk
        si, di = di, si
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for i in range(n):
            keys[i] = sk[i]
            idx[i] = si[i]


@_jit
def tie_groups(keys, n, gend):
    """Write the end positions (exclusive) of runs of equal ``keys[0:n]`` into ``gend``; return
    the number of groups."""
    ng = 0
    for i in range(1, n):
        if keys[i] != keys[i - 1]:
            gend[ng] = i
            ng += 1
    if n > 0:
        gend[ng] = n
        ng += 1
    return ng


@_jit
def _insertion_desc(keys, idx, lo, hi):
    """Insertion sort of keys[lo:hi+1] descending (inclusive bounds), idx alongside."""
    for i in range(lo + 1, hi + 1):
        kv = keys[i]
        iv = idx[i]
        j = i - 1
        while j >= lo and keys[j] < kv:
            keys[j + 1] = keys[j]
            idx[j + 1] = idx[j]
            j -= 1
        keys[j + 1] = kv
        idx[j + 1] = iv


@_jit
def heapsort_desc(a, n):
    """Sort the integers a[0:n] descending in place: heapsort (Williams 1964) on a min-heap,
    O(n log n), no recursion and no scratch. For label lists too wide to count (labels >= 2^16);
    used instead of ``np.sort`` so that NumPy's sort is not compiled into the driver."""
    for start in range(n // 2 - 1, -1, -1):
        _sift_min(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]  # the smallest goes last
        _sift_min(a, 0, end)


@_jit
def _sift_min(a, i, n):
    """Restore the min-heap property below position i of a[0:n]."""
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and a[c + 1] < a[c]:
            c += 1
        if a[i] <= a[c]:
            return
        a[i], a[c] = a[c], a[i]
        i = c


@_jit
def quicksort_desc(keys, idx, n, stack):
    """Unstable in-place sort of keys[0:n] descending with idx alongside; ``stack`` is int64
    scratch of length >= 128 (the smaller side is always handled first: depth <= log2 n).

    Median-of-three pivot and Hoare partition, which splits runs of equal keys evenly (a
    branch-free Lomuto partition measured 25% faster on distinct keys but degrades to O(n^2) on
    heavily tied scores); insertion sort below 25 elements."""
    top = 0
    lo = 0
    hi = n - 1
    while True:
        while hi - lo > 24:
            mid = (lo + hi) >> 1
            a = keys[lo]
            b = keys[mid]
            c = keys[hi]
            if a < b:
                a, b = b, a
            if b < c:
                b = c
                if a < b:
                    b = a
            p = b  # median of the three
            i = lo - 1
            j = hi + 1
            while True:
                i += 1
                while keys[i] > p:
                    i += 1
                j -= 1
                while keys[j] < p:
                    j -= 1
                if i >= j:
                    break
                tk = keys[i]
                keys[i] = keys[j]
                keys[j] = tk
                ti = idx[i]
                idx[i] = idx[j]
                idx[j] = ti
            if j - lo < hi - j:
                stack[top] = j + 1
                stack[top + 1] = hi
                hi = j
            else:
                stack[top] = lo
                stack[top + 1] = j
                lo = j + 1
            top += 2
        _insertion_desc(keys, idx, lo, hi)
        if top == 0:
            return
        top -= 2
        lo = stack[top]
        hi = stack[top + 1]


@_jit
def rank_segment(keys, idx, tk, ti, stack, n, tie_mode, rows, doc_mode, doc_int, doc_off,
                 doc_data):
    """Sort keys[0:n] descending; order every run of equal keys by the tie policy (docid
    descending by bytes, else input position) unless ``tie_mode`` is TIE_EXPECTED."""
    quicksort_desc(keys, idx, n, stack)
    if tie_mode == TIE_EXPECTED:
        return
    i = 0
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i]:
            j += 1
        if j - i > 1:
            sort_segment(keys[i:j], idx[i:j], tk, ti, j - i, tie_mode, rows, doc_mode, doc_int,
                         doc_off, doc_data)
        i = j
