"""Eight Monte Carlo draws of the ROUGE-L REB at once, in LLVM vector registers.

The scalar loop of a draw spends ~14 instructions per drawn token (a splitmix64 half-step, a
multiply-shift to a source position, the load of that position's match mask, the bit-parallel
LCS update ``b = v & pm; v = (v + b) | (v & ~b)`` of Allison-Dix / Hyyro) and is bound by their
throughput. The draws of one (source, reference) group run over the same lengths, so their
control flow is identical and eight of them can share each instruction: lane k of a
``<8 x i64>`` vector holds draw ``d0 + k``. LLVM does not vectorise Numba's loop over lanes
itself (the 8-trip loop is unrolled first; the mask loads are gathers), so the two vector loops
are written as LLVM IR in Numba ``@intrinsic`` functions; the mask loads between them are a plain
scalar loop (``gather_masks``), which on x86 beats both gather instructions and lane extracts.

1. :func:`draw_positions_x8`: positions of steps 0..2*npairs-1 of the eight draws,
   ``pos[8 t + k]``. Step t of a draw: for even t the generator advances
   (``st += 0x9E3779B97F4A7C15; z = mix(st)``, splitmix64) and the position is
   ``(hi32(z) * n) >> 32``; for odd t it is ``(lo32(z) * n) >> 32`` (n < 2**32 source tokens).
2. ``M[8 t + k] = pos_mask[pos[8 t + k]]`` (scalar loop).
3. :func:`lcs_lengths_1w` / :func:`lcs_lengths_2w`: the LCS state of each lane over the steps,
   and at every length of the group the lane's LCS ``m - popcount(v & top)`` and its square
   added to per-(length, lane) int64 tallies (lanes k >= ``nvalid`` add 0).

Each lane performs exactly the integer operations of the scalar kernels of
:mod:`uefast.text._mc_kernels` (wrapping 64-bit arithmetic, the same order), so every draw's LCS
values are theirs; integer tallies sum them exactly (the float sums of the scalar loop are exact
too while below 2**53). ``tests/test_text_mc_simd.py`` checks draw for draw.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["LANES", "draw_positions_x8", "lcs_lengths_1w", "lcs_lengths_2w"]

LANES = 8
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VEC = ir.VectorType(_I64, LANES)
_V32 = ir.VectorType(_I32, LANES)


def _c(x):
    return ir.Constant(_I64, x)


def _splat(x):
    return ir.Constant(_VEC, [_c(x)] * LANES)


def _bcast(b, x):
    """A scalar i64 in every lane."""
    v = b.insert_element(ir.Constant(_VEC, ir.Undefined), x, ir.Constant(_I32, 0))
    return b.shuffle_vector(v, ir.Constant(_VEC, ir.Undefined),
                            ir.Constant(_V32, [0] * LANES))


def _data(context, builder, ty, val):
    """Data pointer of a Numba array argument."""
    return context.make_array(ty)(context, builder, val).data


def _vec_at(b, ptr, index):
    """Pointer to the LANES elements of ``ptr`` from ``index`` on, as one vector."""
    return b.bitcast(b.gep(ptr, [index], inbounds=True), _VEC.as_pointer())


def _loop(b, start, stop, init, body):
    """Emit ``for i in range(start, stop): state = body(b, i, state)``; return the final state
    (a tuple of values carried in phi nodes)."""
    fn = b.function
    pre = b.block
    head = fn.append_basic_block("loop.head")
    blk = fn.append_basic_block("loop.body")
    done = fn.append_basic_block("loop.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(_I64)
    i.add_incoming(start, pre)
    phis = []
    for s in init:
        p = b.phi(s.type)
        p.add_incoming(s, pre)
        phis.append(p)
    b.cbranch(b.icmp_signed("<", i, stop), blk, done)
    b.position_at_end(blk)
    new = body(b, i, tuple(phis))
    end = b.block
    i.add_incoming(b.add(i, _c(1)), end)
    for p, s in zip(phis, new):
        p.add_incoming(s, end)
    b.branch(head)
    b.position_at_end(done)
    return tuple(phis)


def _mix(b, x):
    """splitmix64's output function (``_mc_kernels._splitmix``) of each lane."""
    z = b.mul(b.xor(x, b.lshr(x, _splat(30))), _splat(0xBF58476D1CE4E5B9))
    z = b.mul(b.xor(z, b.lshr(z, _splat(27))), _splat(0x94D049BB133111EB))
    return b.xor(z, b.lshr(z, _splat(31)))


def _scale(b, h, n32):
    """(h * n) >> 32 for h, n < 2**32 (both known to have zero high halves, so the backend can
    use a 32 x 32 -> 64-bit multiply; the product is the same as in 64 bits)."""
    return b.lshr(b.mul(h, n32), _splat(32))


@intrinsic
def draw_positions_x8(typingctx, st, npairs, n, pos):
    """Advance the generator states ``st[0:8]`` (uint64, in place) by ``npairs`` splitmix64
    steps and write the positions of draw steps 0..2*npairs-1 to ``pos[8 t + k]`` (uint64) for a
    source of ``n`` < 2**32 tokens (see the module docstring)."""
    sig = types.void(st, types.int64, types.uint64, pos)

    def codegen(context, builder, signature, args):
        st_a, npairs_, n_, pos_a = args
        stp = _vec_at(builder, _data(context, builder, signature.args[0], st_a), _c(0))
        pp = _data(context, builder, signature.args[3], pos_a)
        n32 = _bcast(builder, builder.zext(builder.trunc(n_, _I32), _I64))

        def body(b, j, state):
            (s,) = state
            s = b.add(s, _splat(0x9E3779B97F4A7C15))
            z = _mix(b, s)
            base = b.mul(j, _c(2 * LANES))
            b.store(_scale(b, b.lshr(z, _splat(32)), n32), _vec_at(b, pp, base), align=8)
            b.store(_scale(b, b.and_(z, _splat(0xFFFFFFFF)), n32),
                    _vec_at(b, pp, b.add(base, _c(LANES))), align=8)
            return (s,)

        (s1,) = _loop(builder, _c(0), npairs_, (builder.load(stp, align=8),), body)
        builder.store(s1, stp, align=8)
        return context.get_dummy_value()

    return sig, codegen


def _tally(b, lanes_ok, m, ones, x, lo, a1, a2):
    """acc1[8 (x - lo) + k] += LCS, acc2[...] += LCS**2 with LCS = m - ones, valid lanes only."""
    val = b.mul(b.sub(m, ones), lanes_ok)
    off = b.mul(b.sub(x, lo), _c(LANES))
    p1 = _vec_at(b, a1, off)
    p2 = _vec_at(b, a2, off)
    b.store(b.add(b.load(p1, align=8), val), p1, align=8)
    b.store(b.add(b.load(p2, align=8), b.mul(val, val)), p2, align=8)


def _lengths_codegen(words):
    """Code generator of :func:`lcs_lengths_1w` (words=1) / :func:`lcs_lengths_2w` (2)."""

    def codegen(context, builder, signature, args):
        A = signature.args
        args = list(args)
        mp = [_data(context, builder, A[i], args[i]) for i in range(words)]
        len_a, lo, hi = args[words:words + 3]
        v_a = args[words + 3:2 * words + 3]
        top, m, nvalid, a1_a, a2_a = args[2 * words + 3:]
        lp = _data(context, builder, A[words], len_a)
        vp = [_vec_at(builder, _data(context, builder, A[words + 3 + i], v_a[i]), _c(0))
              for i in range(words)]
        a1 = _data(context, builder, A[-2], a1_a)
        a2 = _data(context, builder, A[-1], a2_a)
        lanes = ir.Constant(_VEC, [_c(k) for k in range(LANES)])
        lanes_ok = builder.zext(builder.icmp_signed("<", lanes, _bcast(builder, nvalid)), _VEC)
        topv = _bcast(builder, top)
        mv = _bcast(builder, m)
        ctpop = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_VEC, [_VEC]),
                                               "llvm.ctpop.v8i64")

        def step(b, t, state):
            at = b.mul(t, _c(LANES))
            if words == 1:
                (v,) = state
                u = b.and_(v, b.load(_vec_at(b, mp[0], at), align=8))
                return (b.or_(b.add(v, u), b.and_(v, b.not_(u))),)
            v0, v1 = state  # as _mc_kernels._lcs_prefixes_2w: carry of the low word's add
            u0 = b.and_(v0, b.load(_vec_at(b, mp[0], at), align=8))
            u1 = b.and_(v1, b.load(_vec_at(b, mp[1], at), align=8))
            a0 = b.add(v0, u0)
            carry = b.zext(b.icmp_unsigned("<", a0, v0), _VEC)
            w1 = b.or_(b.add(b.add(v1, u1), carry), b.and_(v1, b.not_(u1)))
            return (b.or_(a0, b.and_(v0, b.not_(u0))), w1)

        def per_length(b, x, state):
            t, vs = state[0], state[1:]
            L = b.load(b.gep(lp, [x], inbounds=True))
            vs = _loop(b, t, L, vs, step)
            t = b.select(b.icmp_signed(">", L, t), L, t)
            if words == 1:
                ones = b.call(ctpop, [b.and_(vs[0], topv)])
            else:
                ones = b.add(b.call(ctpop, [vs[0]]), b.call(ctpop, [b.and_(vs[1], topv)]))
            _tally(b, lanes_ok, mv, ones, x, lo, a1, a2)
            return (t,) + tuple(vs)

        init = (_c(0),) + tuple(builder.load(p, align=8) for p in vp)
        _loop(builder, lo, hi, init, per_length)
        return context.get_dummy_value()

    return codegen


@intrinsic
def lcs_lengths_1w(typingctx, masks, lengths, lo, hi, v, top, m, nvalid, acc1, acc2):
    """One-word LCS (reference of m <= 64 tokens, ``top`` its mask of m bits) of the eight
    lanes: starting from the states ``v[0:8]``, step t applies the match masks
    ``masks[8 t:8 t + 8]``; at each length L = lengths[x], x in lo..hi-1 (sorted), the lanes'
    LCS m - popcount(v & top) and its square are added to ``acc1``/``acc2[8 (x - lo) + k]``
    for lanes k < nvalid. ``v`` itself is not written back (each call starts a fresh block)."""
    sig = types.void(masks, lengths, types.int64, types.int64, v, types.uint64, types.int64,
                     types.int64, acc1, acc2)
    return sig, _lengths_codegen(1)


@intrinsic
def lcs_lengths_2w(typingctx, masks0, masks1, lengths, lo, hi, v0, v1, top, m, nvalid, acc1,
                   acc2):
    """:func:`lcs_lengths_1w` for a two-word state (m = 65..128; ``top`` masks the high word):
    the add carried from the low word into the high one."""
    sig = types.void(masks0, masks1, lengths, types.int64, types.int64, v0, v1, types.uint64,
                     types.int64, types.int64, acc1, acc2)
    return sig, _lengths_codegen(2)
