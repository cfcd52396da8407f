"""Bit-level Numba intrinsics shared by the byte scanners and the kernels: unaligned loads, byte
swap, trailing-zero count and IEEE-754 bit patterns, each one LLVM instruction."""
from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

__all__ = ["_load_le64", "_cttz64", "_ctlz64", "_f64_bits", "_bits_f64", "_f32_bits", "_bswap64", "_mulhi64"]


@intrinsic
def _load_le64(typingctx, arr, idx):
    """The 8 bytes at ``arr[idx:idx + 8]`` as a little-endian uint64 (unaligned load, no bounds
    check: callers go through :func:`_ld`)."""
    sig = types.uint64(arr, types.int64)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        return builder.load(builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=1)
    return sig, codegen


@intrinsic
def _cttz64(typingctx, x):
    """Number of trailing zero bits of a nonzero uint64 (one TZCNT/BSF)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))
    return sig, codegen


@intrinsic
def _f64_bits(typingctx, x):
    """The IEEE-754 bit pattern of a float64, as uint64."""
    sig = types.uint64(types.float64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return sig, codegen


@intrinsic
def _bits_f64(typingctx, x):
    """The float64 whose IEEE-754 bit pattern is the uint64 ``x`` (inverse of :func:`_f64_bits`)."""
    sig = types.float64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return sig, codegen


@intrinsic
def _bswap64(typingctx, x):
    """Byte-reversed uint64 (one BSWAP)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.bswap(args[0])
    return sig, codegen


@intrinsic
def _f32_bits(typingctx, x):
    """The IEEE-754 bit pattern of a float32, as int32."""
    sig = types.int32(types.float32)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


@intrinsic
def _ctlz64(typingctx, x):
    """Number of leading zero bits of a nonzero uint64 (one LZCNT/BSR)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))
    return sig, codegen


@intrinsic
def _mulhi64(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one MUL)."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(p, ir.Constant(i128, 64)), ir.IntType(64))
    return sig, codegen
