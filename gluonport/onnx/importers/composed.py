"""Import handlers composed from MXNet 1.x elementwise ops: CumProd, ReverseSequence,
DequantizeLinear, QuantizeLinear.

* ``CumProd``: a running product of the slices along the (static) axis, concatenated back:
  exact for integers too (MXNet 1.x has no cumulative product).
* ``ReverseSequence``: MXNet's ``SequenceReverse`` (time axis 0, batch axis 1; the other
  layout is transposed there and back).
* ``DequantizeLinear``: ``(x - zero_point) * scale`` in float32, the scale and zero point
  broadcast along ``axis`` (repeated ``block_size`` times for blocked quantization).
* ``QuantizeLinear``: ``clip(round_half_even(x / scale) + zero_point)`` cast to the integer
  type (8 and 16 bit); rounding half to even is composed from ``floor`` and ``_mod_scalar``.
  Float8 / 4-bit outputs have no MXNet type and stay refused.
"""

from __future__ import annotations

import numpy as np

from .._import_build import cast, norm_axis, reshape
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

_MAX_STEPS = 1024  # slices a CumProd multiplies one by one


@importer("CumProd", since=26)
def cumprod(ctx: ImportContext, x: Value, axis_in: Value, *, exclusive: int = 0,
            reverse: int = 0) -> object:
    a = norm_axis(axis_in.ints()[0], x.rank, ctx)
    n = x.shape[a] if x.shape is not None else None
    if not isinstance(n, int) or not 0 < n <= _MAX_STEPS:
        raise ctx.fail(f"CumProd needs the static size of the axis (at most {_MAX_STEPS}), "
                       f"got {n}")
    parts = [ctx.op("slice_axis", x.sym, axis=a, begin=k, end=k + 1) for k in range(n)]
    order = parts[::-1] if reverse else parts
    outs, acc = [], None
    for p in order:
        if exclusive:
            outs.append(acc if acc is not None else ctx.op("ones_like", p))
        acc = p if acc is None else ctx.op("elemwise_mul", acc, p)
        if not exclusive:
            outs.append(acc)
    if reverse:
        outs = outs[::-1]
    return outs[0] if n == 1 else ctx.op("Concat", *outs, dim=a)


@importer("ReverseSequence", since=10)
def reverse_sequence(ctx: ImportContext, x: Value, lens: Value, *, batch_axis: int = 1,
                     time_axis: int = 0) -> object:
    if {batch_axis, time_axis} != {0, 1}:
        raise ctx.fail(f"batch_axis={batch_axis}, time_axis={time_axis}: the two must be "
                       "axes 0 and 1")
    s = x.sym
    if time_axis == 1:
        s = ctx.op("swapaxes", s, dim1=0, dim2=1)
    y = ctx.op("SequenceReverse", s, cast(ctx, lens.sym, np.dtype(x.dtype or np.float32)),
               use_sequence_length=True)
    return ctx.op("swapaxes", y, dim1=0, dim2=1) if time_axis == 1 else y


def _along(ctx: ImportContext, v: Value, x: Value, axis: int, block: int, hint: str):
    """``v`` (a scalar, or 1-D along ``axis``; blocked: x's shape with ``axis`` divided by
    ``block``) as a Symbol broadcastable against x."""
    rank = x.rank
    if v.rank in (None, 0) or v.shape in ((1,), ()):
        return reshape(ctx, v.sym, (1,) * max(rank or 1, 1))
    if block:
        shape = x.static_shape
        if shape is None:
            raise ctx.fail("blocked quantization needs the input's static shape")
        s = ctx.op("repeat", v.sym, repeats=block, axis=axis)
        return ctx.op("slice_axis", s, axis=axis, begin=0, end=shape[axis])
    return reshape(ctx, v.sym, tuple(-1 if d == axis else 1 for d in range(rank)))


def _float(ctx: ImportContext, s, dtype) -> object:
    return s if np.dtype(dtype) == np.float32 else cast(ctx, s, np.float32)


@importer("DequantizeLinear", since=10)
def dequantize_linear(ctx: ImportContext, x: Value, scale: Value, zero: Value | None = None,
                      *, axis: int = 1, block_size: int = 0, output_dtype: int = 0
                      ) -> object:
    a = norm_axis(axis, x.rank, ctx) if x.rank else 0
    y = _float(ctx, x.sym, x.dtype)
    if zero is not None:
        y = ctx.op("broadcast_sub", y, _float(ctx, _along(ctx, zero, x, a, block_size, "zp"),
                                               zero.dtype))
    sc = _along(ctx, scale, x, a, block_size, "scale")
    y = ctx.op("broadcast_mul", y, _float(ctx, sc, scale.dtype))
    out = ctx.out_dtype(0) or scale.dtype
    return y if np.dtype(out) == np.float32 else cast(ctx, y, np.dtype(out))


_QRANGE = {np.dtype(t): (np.iinfo(t).min, np.iinfo(t).max)
           for t in (np.int8, np.uint8, np.int16, np.uint16)}


@importer("QuantizeLinear", since=10)
def quantize_linear(ctx: ImportContext, x: Value, scale: Value, zero: Value | None = None,
                    *, axis: int = 1, block_size: int = 0, output_dtype: int = 0,
                    saturate: int = 1, precision: int = 0) -> object:
    out = np.dtype(ctx.out_dtype(0) or (zero.dtype if zero is not None else np.uint8))
    if out not in _QRANGE:
        raise ctx.fail(f"output type {out}: MXNet 1.x has no such integer type")
    a = norm_axis(axis, x.rank, ctx) if x.rank else 0
    v = ctx.op("broadcast_div", _float(ctx, x.sym, x.dtype),
               _float(ctx, _along(ctx, scale, x, a, block_size, "scale"), scale.dtype))
    low = ctx.op("floor", v)
    frac = ctx.op("elemwise_sub", v, low)
    odd = ctx.op("_mod_scalar", ctx.op("abs", low), scalar=2.0)
    half = ctx.op("_equal_scalar", frac, scalar=0.5)
    up = ctx.op("_greater_scalar", frac, scalar=0.5)
    r = ctx.op("elemwise_add", low, ctx.op("elemwise_add", up, ctx.op("elemwise_mul", half,
                                                                      odd)))
    if zero is not None:
        r = ctx.op("broadcast_add", r, _float(ctx, _along(ctx, zero, x, a, block_size, "zp"),
                                              zero.dtype))
    lo, hi = _QRANGE[out]
    return cast(ctx, ctx.op("clip", r, a_min=float(lo), a_max=float(hi)), out)
