"""Import handlers: bit manipulation (BitwiseAnd/Or/Xor/Not, BitShift, BitCast).

* BitwiseAnd/Or/Xor/Not map onto MXNet 1.9.1's numpy-interface ops ``_npi_bitwise_and``,
  ``_npi_bitwise_or``, ``_npi_bitwise_xor``, ``_npi_bitwise_not`` (gluonport/ops/math/bitwise).
* BitShift has no MXNet op; it is composed from integer arithmetic, which MXNet does in the
  dtype itself (C semantics: products wrap, integer division truncates):
  ``x << s = x * 2^s`` and, for ``x >= 0``, ``x >> s = x / 2^s``. A negative ``x`` shifts
  right arithmetically: ``x >> s = ~(~x >> s)`` with ``~x = -x - 1 >= 0``, spelled
  ``(x * (1 - 2n) - n)`` for ``n = (x < 0)``. The factor ``2^s`` (wrapped into the dtype)
  comes from a ``take`` in a constant table indexed by the shift; a shift that is negative or
  at least the bit width (ONNX: the sign fill alone, 0 or -1) indexes the table's last row,
  whose factor is 0 (left) or whose validity mask is 0 (right).
* BitCast between integer types of one width is MXNet's ``Cast`` (C's conversion keeps the
  bits); between floats and integers it reinterprets bits, which no MXNet op does: refused.
"""

from __future__ import annotations

import numpy as np

from .._import_build import cast
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

_BITWISE = {"BitwiseAnd": "_npi_bitwise_and", "BitwiseOr": "_npi_bitwise_or",
            "BitwiseXor": "_npi_bitwise_xor"}


def _binary(mx_op: str):
    def handler(ctx: ImportContext, a: Value, b: Value) -> object:
        return ctx.op(mx_op, a.sym, b.sym)

    return handler


for _onnx, _mx in _BITWISE.items():
    importer(_onnx, since=18)(_binary(_mx))


@importer("BitwiseNot", since=18)
def bitwise_not(ctx: ImportContext, x: Value) -> object:
    return ctx.op("_npi_bitwise_not", x.sym)


def _int_dtype(ctx: ImportContext, v: Value, what: str) -> np.dtype:
    if v.dtype is None or np.dtype(v.dtype).kind not in "iu":
        raise ctx.fail(f"{what} needs a known integer type, got {v.dtype}")
    return np.dtype(v.dtype)


def _tables(dtype: np.dtype, right: bool) -> tuple[np.ndarray, np.ndarray]:
    """(factor, valid) per shift 0..w-1 and a last row for out-of-range shifts. The factor is
    2^s wrapped into ``dtype``; for a signed right shift by w-1 the quotient of any
    non-negative operand is 0, so that row is marked invalid (its factor would be negative)."""
    width = dtype.itemsize * 8
    powers = [(1 << s) % (1 << width) for s in range(width)]
    signed = dtype.kind == "i"
    factor = np.array([p - (1 << width) if signed and p >= 1 << (width - 1) else p
                       for p in powers] + [0], dtype=dtype)
    valid = np.ones(width + 1, dtype=dtype)
    valid[width] = 0
    if right:
        factor[width] = 1  # a divisor; the mask zeroes the quotient
        if signed:
            factor[width - 1], valid[width - 1] = 1, 0
    return factor, valid


def _lookup(ctx: ImportContext, s: Value, table: np.ndarray, hint: str) -> object:
    """``table[s]`` with shifts outside [0, w) reading the last row."""
    width = len(table) - 1
    if s.const is not None:
        idx = np.asarray(s.const).astype(np.int64)
        idx = np.where((idx < 0) | (idx >= width), width, idx)
        return ctx.const(table[idx], dtype=table.dtype, hint=hint)
    idx = cast(ctx, s.sym, np.dtype(np.int64))  # a uint64 shift >= 2^63 turns negative: out
    neg = ctx.op("_lesser_scalar", idx, scalar=0.0, is_int=True)
    idx = ctx.op("broadcast_add", ctx.op("broadcast_mul", idx, ctx.op("_rminus_scalar", neg,
                                                                        scalar=1.0, is_int=True)),
                 ctx.op("_mul_scalar", neg, scalar=float(width), is_int=True))
    return ctx.op("take", ctx.const(table, dtype=table.dtype, hint=hint), idx, mode="clip")


@importer("BitShift", since=11)
def bit_shift(ctx: ImportContext, x: Value, s: Value, *, direction: str) -> object:
    dtype = _int_dtype(ctx, x, "BitShift")
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.fail(f"direction {direction!r} is not LEFT or RIGHT")
    right = direction == "RIGHT"
    factor, valid = _tables(dtype, right)
    f = _lookup(ctx, s, factor, "shift_factor")
    if not right:
        return ctx.op("broadcast_mul", x.sym, f)
    ok = _lookup(ctx, s, valid, "shift_valid")
    if dtype.kind == "u":
        return ctx.op("broadcast_mul", ctx.op("broadcast_div", x.sym, f), ok)
    n = ctx.op("_lesser_scalar", x.sym, scalar=0.0, is_int=True)  # 1 where x < 0
    sign = ctx.op("_rminus_scalar", ctx.op("_mul_scalar", n, scalar=2.0, is_int=True),
                  scalar=1.0, is_int=True)  # 1 - 2n
    flipped = ctx.op("broadcast_sub", ctx.op("broadcast_mul", x.sym, sign), n)  # x or ~x
    q = ctx.op("broadcast_mul", ctx.op("broadcast_div", flipped, f), ok)
    return ctx.op("broadcast_sub", ctx.op("broadcast_mul", q, sign), n)


@importer("BitCast", since=26)
def bit_cast(ctx: ImportContext, x: Value, *, to: int) -> object:
    want = ctx.out_dtype()
    have = x.dtype
    if want is None or have is None:
        raise ctx.fail("BitCast needs the input and output types")
    have, want = np.dtype(have), np.dtype(want)
    if have.kind in "iub" and want.kind in "iu" and have.itemsize == want.itemsize:
        return cast(ctx, x.sym, want)
    raise ctx.fail(f"BitCast {have.name} -> {want.name} reinterprets the bits of a float, "
                   "which no MXNet 1.x op does (only integer casts of one width keep the bits)")
