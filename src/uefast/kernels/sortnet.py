"""Ranking one segment (up to 2,048 documents) with bitonic sorting networks over packed integer
keys, when that is exact; otherwise the routine declines and the caller counts instead.

Each document becomes one int32 ``key = (ord(score32) & ~7) | label``: ``ord`` maps the float32
score to a signed integer of the same order (``u ^ ((u >> 31) & 0x7FFFFFFF)`` on its bits, after
-0 is made +0), and the label (0..7; every label <= 0 counts as 0, as everywhere in ranking) takes
the low 3 bits. The keys are sorted descending by Batcher's bitonic network (K. E. Batcher,
"Sorting networks and their applications", AFIPS 1968): 16 keys per vector, min/max and constant
shuffles only, no branches, fully unrolled for 16 ... 256 keys (1 ... 16 vectors); longer
segments (257-2,048 documents) are sorted in such blocks, then merged. The position of a key is then its
rank and its low 3 bits its label.

Exactness: two documents are ordered by their keys' upper 29 bits, i.e. by their float32 scores
coarsened to buckets of 8 consecutive float32 values. When every two documents adjacent in the
sorted order lie in different buckets, every pair is ordered as their float64 scores are (rounding
to float32 and bucketing are monotone, and different buckets mean different scores), and no
tie needs breaking: the ranking is exact. Otherwise (a tie, or two scores within 8 float32 steps
of each other), or with a NaN score or a label > 7, :func:`rank_labels_sortnet` returns False and
the caller ranks the segment by counting, which handles all of that.

Tied segments whose tie order runs with position (input order; trec_eval's docid order where
same-width integer docids fall or rise with position, :func:`uefast.kernels.counting.tie_order`)
first go to :func:`rank_labels_sortnet_groups`: the same int32 networks on keys
``(ord(score32) & ~mask) | position`` (mask = 2^s - 1 for positions below 2^s; position
reversed as the tie order needs), exact where no bucket of 2^s float32 values holds two
different doubles. Other tied segments (:func:`rank_labels_sortnet_ties`, up to 512 documents):
one int64 key per document, ``ord(score32) * 2^32 + (2^23 - 1 - tie-break key) * 2^9 +
position``, 8 per vector (the same networks, blocks and merge); equal float32 scores come out
adjacent, in tie-break order, and a 32-bit fingerprint of the float64 bits tells exact ties from
float32 collisions (declined).

Cost: n log2(n)^2 / 4 compare-exchanges on 16 lanes, against float32 counting's n * N+ comparisons
(:mod:`uefast.kernels.counting`); on the MSLR-shaped benchmark (about half of the documents
relevant) the networks are the cheaper ones from ~8-12 positive documents up (see
:func:`sortnet_pays`). Written in LLVM IR through
``llvmlite`` (vector types, ``shufflevector``, integer min/max), which LLVM lowers for whatever
vector width the CPU has (AVX-512, AVX2, SSE, NEON).
"""
from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

from uefast._intrinsics import _f32_bits

__all__ = ["SORTNET_MAX_N", "SORTNET_LABEL_MAX", "SORTNET_TIES_MAX_N", "sort_keys_desc",
           "rank_labels_sortnet", "sortnet_pays", "SORTNET_TB_MAX",
           "sortnet_ties_pays", "rank_labels_sortnet_ties", "rank_labels_sortnet_groups"]

#: Longest segment the int32 networks rank (256-key blocks, merged). Was 512: raising it took the
#: MSLR-shaped benchmark's 110 segments of 513-1,210 documents from float32 counting (O(n N+)) to
#: the networks, 1.9 -> 0.9 ms of an untied system's ranking and 6.8 -> 4.6 ms of a tied one's
#: (single thread).
SORTNET_MAX_N = 2048
#: Largest label a key can carry (3 bits).
SORTNET_LABEL_MAX = 7
_PAD = np.int32(-2147483648)  # below every key of a non-NaN score


def _bitonic(builder, vecs):
    """Sort the keys held in ``vecs`` (a list of integer vectors of W lanes, in order) descending,
    in place.

    Batcher's network on N = W * len(vecs) keys: for block sizes k = 2, 4, ..., N and strides
    j = k/2, ..., 1, key i and key i ^ j (i < i ^ j) are put in order, the larger first when
    i & k == 0 (descending blocks), the smaller first otherwise. Strides >= W pair whole vectors
    (signed max/min); smaller ones pair lanes of one vector through a constant shuffle, each lane
    then taking the max or the min (a constant blend)."""
    w = vecs[0].type.count
    i32 = ir.IntType(32)
    bt = ir.VectorType(ir.IntType(1), w)

    def smax(x, y):
        return builder.select(builder.icmp_signed(">", x, y), x, y)

    def smin(x, y):
        return builder.select(builder.icmp_signed("<", x, y), x, y)

    n = w * len(vecs)
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            if j >= w:
                for a in range(len(vecs)):
                    b = a ^ (j // w)
                    if b > a:
                        x, y = vecs[a], vecs[b]
                        hi, lo = smax(x, y), smin(x, y)
                        vecs[a], vecs[b] = (hi, lo) if (w * a) & k == 0 else (lo, hi)
            else:
                perm = ir.Constant(ir.VectorType(i32, w), [lane ^ j for lane in range(w)])
                for a in range(len(vecs)):
                    take_max = ir.Constant(bt, [int(((lane & j) == 0) == (((w * a + lane) & k) == 0))
                                               for lane in range(w)])
                    x = vecs[a]
                    p = builder.shuffle_vector(x, ir.Constant(x.type, ir.Undefined), perm)
                    vecs[a] = builder.select(take_max, smax(x, p), smin(x, p))
            j //= 2
        k *= 2


#: Longest block one network sorts: 256 int32 keys (16 vectors), 128 int64 keys (16 vectors);
#: longer segments are sorted in such blocks, then merged. (Full 512-key networks ranked the
#: benchmark's systems 3-10% faster but added ~8 s to the first call's compile time. The int64
#: networks, used only for tied segments of up to 512 documents, stop at 128 keys: the 256-key
#: one was a third of the networks' compile time, 2026-11-27, benchmarks/RESULTS_startup.md.)
NET_MAX_32 = 256
NET_MAX_64 = 128


def _network_function(module, bits, size):
    """The LLVM function ``void(iN* keys)`` sorting ``size`` keys descending in place (defined
    once per module, ``linkonce_odr`` so that linked modules share it, ``noinline`` so that the
    unrolled network is compiled once rather than again inside every caller)."""
    name = f"uefast_sortnet_i{bits}_{size}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.IntType(bits).as_pointer()]), name)
    fn.linkage = "linkonce_odr"
    fn.attributes.add("noinline")
    builder = ir.IRBuilder(fn.append_basic_block())
    w = 512 // bits
    vt = ir.VectorType(ir.IntType(bits), w)
    ptrs = [builder.bitcast(builder.gep(fn.args[0], [ir.Constant(ir.IntType(64), w * a)]),
                            vt.as_pointer()) for a in range(size // w)]
    vecs = [builder.load(p, align=bits // 8) for p in ptrs]
    _bitonic(builder, vecs)
    for p, v in zip(ptrs, vecs):
        builder.store(v, p, align=bits // 8)
    builder.ret_void()
    return fn


@intrinsic
def _network_sort(typingctx, keys, off, m):
    """Sort ``keys[off:off + m]`` descending in place by the bitonic network for m keys, m a
    power of two from 16 to :data:`NET_MAX_32` (int32) or :data:`NET_MAX_64` (int64); other m:
    nothing. int32 keys go 16 per vector, int64 keys 8 (512-bit vectors; LLVM splits them where
    the CPU's are narrower). One unrolled network per size (:func:`_network_function`)."""
    def codegen(context, builder, sig, args):
        bits = sig.args[0].dtype.bitwidth
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        ptr = builder.gep(data, [args[1]])
        size = 16
        while size <= (NET_MAX_32 if bits == 32 else NET_MAX_64):
            with builder.if_then(builder.icmp_signed("==", args[2], ir.Constant(args[2].type, size))):
                builder.call(_network_function(builder.module, bits, size), [ptr])
            size *= 2
        return context.get_dummy_value()
    return types.void(keys, types.int64, types.int64), codegen


_jit = nb.njit(cache=True, nogil=True)
# sort_keys_desc and the three rank_labels_sortnet* routines (one call site each in the ranking
# kernel) are inlined at Numba IR level: as separate functions each was optimised and compiled to
# machine code with the unrolled networks linked into it, and again in every caller (the
# networks went through LLVM 4 times for int32 keys, 3 for int64); inlined, only the kernel
# compiles them. First-ever `uefast evaluate` ~2 s less CPU (benchmarks/RESULTS_startup.md).
_inl = nb.njit(cache=True, nogil=True, inline="always")


@nb.njit(cache=True, nogil=True, inline="always")
def _ord32(x):
    """int32 of the same order as the float32 x (not NaN), -0 taken as +0: its bit pattern with
    the magnitude bits flipped when the sign bit is set."""
    u = _f32_bits(x + np.float32(0.0))
    return u ^ ((u >> 31) & np.int32(0x7FFFFFFF))


@_jit
def _merge_desc(src, lo, mid, hi, dst):
    """dst[lo:hi] = the descending runs src[lo:mid] and src[mid:hi] merged (branch-free step)."""
    i, j, k = lo, mid, lo
    while i < mid and j < hi:
        x = src[i]
        y = src[j]
        t = x >= y
        dst[k] = x if t else y
        i += t
        j += 1 - t
        k += 1
    while i < mid:
        dst[k] = src[i]
        i += 1
        k += 1
    while j < hi:
        dst[k] = src[j]
        j += 1
        k += 1


@_inl
def sort_keys_desc(keys, n, pad, tmp):
    """Sort ``keys[0:n]`` (int32 or int64) descending: by one network when n fits one
    block (:data:`NET_MAX_32` / :data:`NET_MAX_64` keys), else by network-sorted blocks merged
    bottom-up through ``tmp`` (same dtype, length >= n rounded up to whole blocks). ``keys[n:m]`` are set to ``pad``
    first (the dtype's smallest value; m = n rounded up to a power of two >= 16, or to whole
    blocks; ``keys`` must have room for m). Returns m."""
    block = NET_MAX_32 if keys.itemsize == 4 else NET_MAX_64
    m = 16
    while m < n and m < block:
        m *= 2
    if n > block:
        m = (n + block - 1) // block * block
    for i in range(n, m):
        keys[i] = pad
    if m <= block:
        _network_sort(keys, 0, m)
        return m
    for b in range(0, m, block):
        _network_sort(keys, b, block)
    width = block
    flip = False  # False: the runs are in keys, True: in tmp
    while width < m:
        for lo in range(0, m, 2 * width):
            if flip:
                _merge_desc(tmp, lo, min(lo + width, m), min(lo + 2 * width, m), keys)
            else:
                _merge_desc(keys, lo, min(lo + width, m), min(lo + 2 * width, m), tmp)
        flip = not flip
        width *= 2
    if flip:
        for i in range(m):
            keys[i] = tmp[i]
    return m


@_jit
def sortnet_pays(n, npos):
    """True when sorting a segment of n documents with N+ = ``npos`` positive labels is expected
    to be cheaper than float32 counting: N+ at least 8 (up to 32 documents), 10 (128), 14 (256)
    or 48 (512: two blocks and a merge), the break-even points measured on random segments
    (AVX-512 host: a 128-key network ~0.19 us, 256 keys ~0.39 us, 512 keys as blocks ~2-3 us;
    counting ~0.1 ns per document pair); beyond 512 documents, N+ >= n / 16 (each doubling adds
    a merge level, ~2 ns per key, against counting's n N+ * 0.1 ns)."""
    if n > SORTNET_MAX_N or n < 2:
        return False
    if n <= 32:
        return npos >= 8
    if n <= 128:
        return npos >= 10
    if n <= 256:
        return npos >= 14
    return npos >= max(48, n // 16)


@_inl
def rank_labels_sortnet(k32, lraw, n, keys, tmp, lab):
    """Ranked labels of one segment by :func:`sort_keys_desc`, or False (``lab`` unspecified)
    when that cannot be exact: a NaN score, a label > 7, two scores in one 8-value float32 bucket
    (a tie, or too close), or n > :data:`SORTNET_MAX_N`.

    ``k32[0:n]`` float32 scores, ``lraw[0:n]`` labels clamped at 0; ``keys``, ``tmp`` int32
    scratch of length >= :data:`SORTNET_MAX_N`. On success ``lab[r]`` is the label of the document ranked r
    (0-based)."""
    if n > SORTNET_MAX_N:
        return False
    bad = 0
    for i in range(n):
        o = _ord32(k32[i])
        lv = lraw[i]
        keys[i] = (o & np.int32(-8)) | np.int32(lv & 7)
        bad += (k32[i] != k32[i]) | (lv > SORTNET_LABEL_MAX)
    if bad:
        return False
    sort_keys_desc(keys, n, _PAD, tmp)
    close = 0
    for i in range(n - 1):
        close += (keys[i] >> 3) == (keys[i + 1] >> 3)
    if close:
        return False
    for i in range(n):
        lab[i] = keys[i] & 7
    return True


#: Longest segment :func:`rank_labels_sortnet_ties` sorts (two network-sorted blocks, merged).
SORTNET_TIES_MAX_N = 512
#: Largest tie-break key :func:`rank_labels_sortnet_ties` can pack (23 bits).
SORTNET_TB_MAX = (1 << 23) - 1
_PAD64 = np.int64(-9223372036854775808)


@_jit
def sortnet_ties_pays(n, npos):
    """:func:`sortnet_pays` for tied segments, against tie-aware float32 counting (dearer per
    pair): N+ at least 12 up to 128 documents, 24 up to 256, 48 up to 512 (measured
    break-even on random tied segments: a 128-key int64 network ~0.7 us, 256 keys ~1.8 us)."""
    if n > SORTNET_TIES_MAX_N or n < 2:
        return False
    return npos >= (12 if n <= 128 else 24 if n <= 256 else 48)


@_inl
def rank_labels_sortnet_ties(k32, fp, tb, lraw, n, keys, tmp, lab):
    """Ranked labels of a segment with tied scores by :func:`sort_keys_desc`, or False when
    that cannot be exact: n > :data:`SORTNET_TIES_MAX_N`, a tie-break key > 2^23 - 1, or two
    different doubles with one float32 value.

    Inputs as for :func:`uefast.kernels.counting.rank_labels_f32_ties` (``k32`` float32 scores,
    ``fp`` fingerprints of the float64 bits, ``tb`` tie-break keys >= 0, distinct, smaller
    first; from :func:`~uefast.kernels.counting.tie_keys_f32`). Document i becomes the int64 key
    ``ord(score32) * 2^32 + (2^23 - 1 - tb) * 2^9 + i``: one descending sort orders by float32
    score, equal ones by tie-break key, and the low 9 bits give the document back. Documents with
    equal float32 scores are then adjacent; where two adjacent ones differ in ``fp`` their
    doubles differ (a float32 collision the order cannot see): declined. ``keys``, ``tmp``:
    int64 scratch of length >= 512."""
    if n > SORTNET_TIES_MAX_N:
        return False
    big = 0
    for i in range(n):
        o = np.int64(_ord32(k32[i]))
        t = np.int64(tb[i])
        big += t > SORTNET_TB_MAX
        keys[i] = (o << 32) | ((SORTNET_TB_MAX - t) << 9) | i
    if big:
        return False
    sort_keys_desc(keys, n, _PAD64, tmp)
    bad = 0
    for r in range(n - 1):
        same32 = (keys[r] >> 32) == (keys[r + 1] >> 32)
        bad += same32 & (fp[keys[r] & 511] != fp[keys[r + 1] & 511])
    if bad:
        return False
    for r in range(n):
        lab[r] = lraw[keys[r] & 511]
    return True


@_jit
def _pos_bits(n):
    """Bits that hold a position 0..n-1 (at least 4)."""
    s = 4
    while (1 << s) < n:
        s += 1
    return s


@_inl
def rank_labels_sortnet_groups(k32, scores, order, lraw, n, skeys, stmp, lab, sv):
    """Ranked labels of a segment with tied scores through the int32 network, or False.

    For ties broken by position -- ascending (``order`` 1: input order, or trec_eval's docid
    descending where docids fall with position) or descending (``order`` -1: docids rise with
    position; :func:`uefast.kernels.counting.tie_order`) -- document i becomes the int32 key
    ``(ord(score32) & ~mask) | t_i``, mask = 2^s - 1 (s: the bits of a position,
    :func:`_pos_bits`), t_i = mask - i or i.
    One descending sort orders by float32 score coarsened to buckets of 2^s values, and within a
    bucket in tie order. That is the exact ranking iff no bucket holds two different scores: any
    two neighbours sharing a bucket must have equal float64 scores (``scores[0:n]``), else False.
    (Different buckets are different scores, ordered as their doubles are, since rounding and
    bucketing are monotone; one score is one bucket.)

    Half the key width of :func:`rank_labels_sortnet_ties` (16 keys per vector instead of 8), no
    fingerprints or tie-break keys to prepare, no branches. ``k32`` float32 scores, ``lraw``
    labels clamped at 0, ``skeys``/``stmp`` int32 scratch of length >= :data:`SORTNET_MAX_N`,
    ``sv`` float64 scratch of length >= n (the scores in rank order: each document's score and
    label are fetched once, by unsigned position, then neighbours are compared in a vectorised
    pass; two fetches per neighbour pair ran ~20% slower). False also for a NaN score, ``order`` 0 or
    n > :data:`SORTNET_MAX_N`; ``lab`` is then unspecified."""
    if n > SORTNET_MAX_N or order == 0:
        return False
    s = _pos_bits(n)
    mask = np.int32((1 << s) - 1)
    flip = mask if order > 0 else np.int32(0)  # key low bits = position ^ flip
    bad = 0
    for i in range(n):
        skeys[i] = (_ord32(k32[i]) & ~mask) | (np.int32(i) ^ flip)
        bad += k32[i] != k32[i]
    if bad:
        return False
    sort_keys_desc(skeys, n, _PAD, stmp)
    for r in range(n):
        p = np.uint64((skeys[r] & mask) ^ flip)
        sv[r] = scores[p]
        lab[r] = lraw[p]
    for r in range(n - 1):
        bad += ((skeys[r] >> s) == (skeys[r + 1] >> s)) & (sv[r] != sv[r + 1])
    return bad == 0
