"""Ranking one segment with a bitonic sorting network over packed 32-bit keys (segments of up to
:data:`SORTNET_MAX_N` documents), when that is exact; otherwise it declines and the caller counts.

Each document becomes one int32 ``key = (ord(score32) & ~7) | label``: ``ord`` maps the float32
score to a signed integer of the same order (``u ^ ((u >> 31) & 0x7FFFFFFF)`` on its bits, after
-0 is made +0), and the label (0..7; every label <= 0 counts as 0, as everywhere in ranking) takes
the low 3 bits. The keys are sorted descending by Batcher's bitonic network (K. E. Batcher,
"Sorting networks and their applications", AFIPS 1968): 16 keys per vector, min/max and constant
shuffles only, no branches, fully unrolled for 1, 2, 4, ..., 32 vectors (16 ... 512 keys). The
position of a key is then its rank and its low 3 bits its label.

Exactness: two documents are ordered by their keys' upper 29 bits, i.e. by their float32 scores
coarsened to buckets of 8 consecutive float32 values. When every two documents adjacent in the
sorted order lie in different buckets, every pair is ordered as their float64 scores are (rounding
to float32 and bucketing are monotone, and different buckets mean different scores), and no
tie needs breaking: the ranking is exact. Otherwise (a tie, or two scores within 8 float32 steps
of each other), or with a NaN score or a label > 7, :func:`rank_labels_sortnet` returns False and
the caller ranks the segment by counting, which handles all of that.

Cost: n log2(n)^2 / 4 compare-exchanges on 16 lanes, against float32 counting's n * N+ comparisons
(:mod:`uefast.kernels.counting`); on the MSLR-shaped benchmark (about half of the documents
relevant) the network is the cheaper one above ~32 documents. Written in LLVM IR through
``llvmlite`` (vector types, ``shufflevector``, integer min/max), which LLVM lowers for whatever
vector width the CPU has (AVX-512, AVX2, SSE, NEON).
"""
from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

__all__ = ["SORTNET_MAX_N", "SORTNET_LABEL_MAX", "sort_keys_desc", "rank_labels_sortnet",
           "sortnet_pays"]

_W = 16  # keys per vector
#: Longest segment the network sorts (32 vectors of 16 keys).
SORTNET_MAX_N = 512
#: Largest label a key can carry (3 bits).
SORTNET_LABEL_MAX = 7
_PAD = np.int32(-2147483648)  # below every key of a non-NaN score


def _bitonic(builder, vecs):
    """Sort the keys held in ``vecs`` (a list of <16 x i32>, in order) descending, in place.

    Batcher's network on N = 16 * len(vecs) keys: for block sizes k = 2, 4, ..., N and strides
    j = k/2, ..., 1, key i and key i ^ j (i < i ^ j) are put in order, the larger first when
    i & k == 0 (descending blocks), the smaller first otherwise. Strides >= 16 pair whole vectors
    (smax/smin); smaller ones pair lanes of one vector through a constant shuffle, each lane then
    taking the max or the min (a constant blend)."""
    vt = vecs[0].type
    i32 = ir.IntType(32)
    bt = ir.VectorType(ir.IntType(1), _W)
    undef = ir.Constant(vt, ir.Undefined)

    def smax(a, b):
        return builder.select(builder.icmp_signed(">", a, b), a, b)

    def smin(a, b):
        return builder.select(builder.icmp_signed("<", a, b), a, b)

    n = _W * len(vecs)
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            if j >= _W:
                for a in range(len(vecs)):
                    b = a ^ (j // _W)
                    if b > a:
                        x, y = vecs[a], vecs[b]
                        hi, lo = smax(x, y), smin(x, y)
                        vecs[a], vecs[b] = (hi, lo) if (_W * a) & k == 0 else (lo, hi)
            else:
                perm = ir.Constant(ir.VectorType(i32, _W), [lane ^ j for lane in range(_W)])
                for a in range(len(vecs)):
                    take_max = [int(((lane & j) == 0) == (((_W * a + lane) & k) == 0))
                                for lane in range(_W)]
                    x = vecs[a]
                    p = builder.shuffle_vector(x, undef, perm)
                    vecs[a] = builder.select(ir.Constant(bt, take_max), smax(x, p), smin(x, p))
            j //= 2
        k *= 2


def _make_sort(nvec):
    @intrinsic
    def sort(typingctx, keys):
        sig = types.void(keys)

        def codegen(context, builder, sig, args):
            vt = ir.VectorType(ir.IntType(32), _W)
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            ptrs = [builder.bitcast(builder.gep(data, [ir.Constant(ir.IntType(64), _W * a)]),
                                    vt.as_pointer()) for a in range(nvec)]
            vecs = [builder.load(p, align=4) for p in ptrs]
            _bitonic(builder, vecs)
            for p, v in zip(ptrs, vecs):
                builder.store(v, p, align=4)
            return context.get_dummy_value()
        return sig, codegen
    return sort


_sort1, _sort2, _sort4, _sort8, _sort16, _sort32 = (_make_sort(v) for v in (1, 2, 4, 8, 16, 32))

_jit = nb.njit(cache=True, nogil=True)


@intrinsic
def _f32_bits(typingctx, x):
    """The IEEE-754 bit pattern of a float32, as int32."""
    sig = types.int32(types.float32)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


@_jit
def sort_keys_desc(keys, n):
    """Sort ``keys[0:n]`` (int32, n <= :data:`SORTNET_MAX_N`) descending with the smallest
    network that holds them: ``keys[n:m]`` are set to the smallest int32 first (m = n rounded up
    to 16, 32, ..., 512; ``keys`` must have room for m). Returns m."""
    m = _W
    while m < n:
        m *= 2
    for i in range(n, m):
        keys[i] = _PAD
    if m == 16:
        _sort1(keys)
    elif m == 32:
        _sort2(keys)
    elif m == 64:
        _sort4(keys)
    elif m == 128:
        _sort8(keys)
    elif m == 256:
        _sort16(keys)
    else:
        _sort32(keys)
    return m


@_jit
def sortnet_pays(n, npos):
    """True when sorting a segment of n documents with N+ = ``npos`` positive labels is expected
    to be cheaper than float32 counting: N+ at least 8 (networks of up to 128 keys), 10, 14 or
    22 (128, 256, 512 keys), the break-even points measured on random segments (AVX-512 host:
    a 128-key network ~0.19 us, 512 keys ~1.1 us; counting ~0.1 ns per document pair)."""
    if n > SORTNET_MAX_N or n < 2:
        return False
    if n <= 32:
        return npos >= 8
    if n <= 128:
        return npos >= 10
    if n <= 256:
        return npos >= 14
    return npos >= 22


@_jit
def rank_labels_sortnet(k32, lraw, n, keys, lab):
    """Ranked labels of one segment by :func:`sort_keys_desc`, or False (``lab`` unspecified)
    when that cannot be exact: a NaN score, a label > 7, two scores in one 8-value float32 bucket
    (a tie, or too close), or n > :data:`SORTNET_MAX_N`.

    ``k32[0:n]`` float32 scores, ``lraw[0:n]`` labels clamped at 0; ``keys`` int32 scratch of
    length >= 512. On success ``lab[r]`` is the label of the document ranked r (0-based)."""
    if n > SORTNET_MAX_N:
        return False
    bad = 0
    for i in range(n):
        u = _f32_bits(k32[i] + np.float32(0.0))  # -0 -> +0
        o = u ^ ((u >> 31) & np.int32(0x7FFFFFFF))
        lv = lraw[i]
        keys[i] = (o & np.int32(-8)) | np.int32(lv & 7)
        bad += (k32[i] != k32[i]) | (lv > SORTNET_LABEL_MAX)
    if bad:
        return False
    sort_keys_desc(keys, n)
    close = 0
    for i in range(n - 1):
        close += (keys[i] >> 3) == (keys[i + 1] >> 3)
    if close:
        return False
    for i in range(n):
        lab[i] = keys[i] & 7
    return True
