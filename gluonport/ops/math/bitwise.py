"""MXNet 1.9.1's bitwise ops of the numpy interface: ``_npi_bitwise_and``, ``_npi_bitwise_or``,
``_npi_bitwise_xor`` (broadcasting, inputs ``lhs``/``rhs``) and ``_npi_bitwise_not`` (input
``x``) -- what ``mx.np.bitwise_and`` etc. call.

MXNet computes each element as ``static_cast<int64_t>(a) & static_cast<int64_t>(b)`` cast back
to the dtype, which keeps every bit for every integer width, so numpy's same-dtype bitwise
ufuncs give the same values. Types, as MXNet checks them: the binary ops take one integer
dtype on both sides (``ElemwiseIntType``; bool is refused by the compute: "does not support
boolean type"); ``bitwise_not`` takes integers and bool (logical not). MXNet 1.9.1 computes
int8/uint8/int32/int64; gluonport also computes the int16/uint16/uint32/uint64 of its dtype
table (which MXNet 1.9.1 cannot load from a file). Gradients are zero (``MakeZeroGradNodes``).

ONNX: BitwiseAnd/BitwiseOr/BitwiseXor/BitwiseNot (opset 18; ``Not`` for bool).
"""

from __future__ import annotations

import numpy as np

from ...errors import DTypeError
from ..infer import broadcast_shapes, same_shape
from ..lowering import LoweringContext, deliver, lowering
from ..registry import define, zero_gradient

__all__: list[str] = []

_INT_KINDS = "iu"


def _int_dtype(name: str, dtype, allow_bool: bool) -> None:
    if dtype is None:
        return
    dtype = np.dtype(dtype)
    if dtype.kind in _INT_KINDS or (allow_bool and dtype.kind == "b"):
        return
    if dtype.kind == "b":
        raise DTypeError(f"Operator {name} does not support boolean type")
    raise DTypeError(f"{name}: Only supports integer types, got {dtype.name}")


def _binary(name: str, ufunc: np.ufunc, onnx_op: str) -> None:
    def infer_type(p, in_types):
        known = [t for t in in_types if t is not None]
        for t in known:
            _int_dtype(name, t, allow_bool=False)
        if len({np.dtype(t) for t in known}) > 1:
            raise DTypeError(f"{name}: the operands' dtypes differ "
                             f"({', '.join(np.dtype(t).name for t in known)}); MXNet needs one")
        t = known[0] if known else None
        return [t, t], [t]

    def compute(p, a, b):
        infer_type(p, [a.dtype, b.dtype])
        broadcast_shapes(a.shape, b.shape)  # ShapeError naming both shapes
        return ufunc(a, b)

    def shape(p, in_shapes):
        return in_shapes, [broadcast_shapes(in_shapes[0], in_shapes[1])]

    op = define(name, compute, shape, inputs=("lhs", "rhs"), infer_type=infer_type,
                gradient=zero_gradient, fresh_outputs=True,
                doc=f"Elementwise bitwise {onnx_op[7:].lower()} of two integer arrays, "
                    "broadcasting (``mx.np.bitwise_" + onnx_op[7:].lower() + "``).")

    @lowering(op, since=18)
    def _onnx(ctx: LoweringContext) -> None:
        deliver(ctx, ctx.make(onnx_op, [ctx.inputs[0], ctx.inputs[1]]))


_binary("_npi_bitwise_and", np.bitwise_and, "BitwiseAnd")
_binary("_npi_bitwise_or", np.bitwise_or, "BitwiseOr")
_binary("_npi_bitwise_xor", np.bitwise_xor, "BitwiseXor")


def _not_type(p, in_types):
    _int_dtype("_npi_bitwise_not", in_types[0], allow_bool=True)
    return in_types, [in_types[0]]


def _not(p, x):
    _int_dtype("_npi_bitwise_not", x.dtype, allow_bool=True)
    return np.invert(x)  # bool: logical not, as MXNet's bool overload


_NOT = define("_npi_bitwise_not", _not, lambda p, s: same_shape(s, 1), inputs=("x",),
              infer_type=_not_type, gradient=zero_gradient, fresh_outputs=True,
              doc="Elementwise bitwise not (``~x``; logical not for bool), "
                  "``mx.np.bitwise_not`` / ``mx.np.invert``.")


@lowering(_NOT, since=18)
def _not_onnx(ctx: LoweringContext) -> None:
    is_bool = np.dtype(ctx.in_dtypes[0]).kind == "b"
    deliver(ctx, ctx.make("Not" if is_bool else "BitwiseNot", [ctx.inputs[0]]))
