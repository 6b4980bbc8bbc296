"""Transformer attention helpers: ``_contrib_div_sqrt_dim`` and the ``interleaved_matmul_*`` ops
(``src/operator/contrib/transformer.cc``), with their ONNX lowerings.

Gradients: ``div_sqrt_dim`` is linear (the output gradient divided the same way); each
``interleaved_matmul_*`` op backward through one ``_backward_interleaved_matmul_*`` kernel (two
batched matmuls, the untouched blocks zero), lowered to ONNX with MatMuls as the forward is.

The ``interleaved_matmul_*`` ops read projections laid out ``(seq, batch, heads * k * dim)`` with
each head's query/key/value blocks interleaved; attention maps are ``(batch * heads, seq_q,
seq_k)`` with batch-major, head-minor rows; scores are scaled by ``1 / sqrt(head_dim)``. MXNet's
CPU kernels take float32 only; these take any float.
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.attr_fields import Int
from ...errors import ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, const_as, deliver, lowering
from ..lowering.dims import Dims
from ..registry import OpDef, define, register

__all__: list[str] = []


# --- elementwise -----------------------------------------------------------------------------
def _div_sqrt_dim(p, x):
    """``x / sqrt(x.shape[-1])`` with the divisor cast to ``x``'s dtype (1 for int dim < 4)."""
    divisor = np.asarray(math.sqrt(x.shape[-1]) if x.ndim else 1.0).astype(x.dtype)
    if np.issubdtype(x.dtype, np.integer):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.trunc(np.true_divide(x, divisor)).astype(x.dtype)
    return (x / divisor).astype(x.dtype, copy=False)


def _grad_div_sqrt_dim(F, p, inputs, outputs, ograds):
    """Linear: the output gradient divided the same way."""
    return [F.contrib.div_sqrt_dim(ograds[0])]


register(OpDef("_contrib_div_sqrt_dim", compute=_div_sqrt_dim, gradient=_grad_div_sqrt_dim,
               doc="Divide by the square root of the last dimension.", lists_input_names=False))


# --- interleaved attention matmuls -----------------------------------------------------------
def _heads(p, proj: int, parts: int, op: str) -> int:
    """Head size of a ``(seq, batch, heads * parts * dim)`` projection."""
    if p.heads < 1 or proj % (parts * p.heads):
        raise ShapeError(f"{op}: projection size {proj} must split into heads={p.heads} x "
                         f"{parts} blocks")
    return proj // (parts * p.heads)


def _split(p, x: np.ndarray, parts: int, op: str) -> np.ndarray:
    """``(seq, batch, heads*parts*dim)`` -> ``(parts, batch*heads, seq, dim)``."""
    seq, batch, proj = x.shape
    dim = _heads(p, proj, parts, op)
    return x.reshape(seq, batch * p.heads, parts, dim).transpose(2, 1, 0, 3)


def _merge_heads(p, att_out: np.ndarray, batch: int) -> np.ndarray:
    """``(batch*heads, seq, dim)`` -> ``(seq, batch, heads*dim)``."""
    bh, seq, dim = att_out.shape
    return att_out.transpose(1, 0, 2).reshape(seq, batch, p.heads * dim)


def _scale(dim: int) -> np.float32:
    return np.float32(1.0 / math.sqrt(np.float32(dim)))


def _selfatt_qk(p, qkv):
    q, k, _ = _split(p, qkv, 3, "interleaved_matmul_selfatt_qk")
    return ((q @ k.transpose(0, 2, 1)) * _scale(q.shape[-1])).astype(qkv.dtype)


def _selfatt_valatt(p, qkv, att):
    v = _split(p, qkv, 3, "interleaved_matmul_selfatt_valatt")[2]
    return _merge_heads(p, att @ v, qkv.shape[1]).astype(qkv.dtype)


def _encdec_qk(p, q, kv):
    qh = _split(p, q, 1, "interleaved_matmul_encdec_qk")[0]
    kh = _split(p, kv, 2, "interleaved_matmul_encdec_qk")[0]
    return ((qh @ kh.transpose(0, 2, 1)) * _scale(qh.shape[-1])).astype(q.dtype)


def _encdec_valatt(p, kv, att):
    v = _split(p, kv, 2, "interleaved_matmul_encdec_valatt")[1]
    return _merge_heads(p, att @ v, kv.shape[1]).astype(kv.dtype)


def _agree(a: int, b: int) -> bool:
    """Two dims that may still be unknown (0) do not contradict each other."""
    return a == 0 or b == 0 or a == b


def _need3(shape, what: str, op: str) -> None:
    if shape is not None and len(shape) != 3:
        raise ShapeError(f"{op}: {what} must be 3-d (seq, batch, projection), got {fmt(shape)}")


def _selfatt_qk_shape(p, in_shapes):
    qkv = in_shapes[0]
    _need3(qkv, "queries_keys_values", "interleaved_matmul_selfatt_qk")
    if qkv is None:
        return in_shapes, [None]
    return in_shapes, [(qkv[1] * p.heads, qkv[0], qkv[0])]


def _selfatt_valatt_shape(p, in_shapes):
    qkv, att = in_shapes
    op = "interleaved_matmul_selfatt_valatt"
    _need3(qkv, "queries_keys_values", op)
    if qkv is None:
        return in_shapes, [None]
    if qkv[2] % 3:
        raise ShapeError(f"{op}: queries_keys_values {fmt(qkv)} last dim must divide by 3")
    att = merge(att, (qkv[1] * p.heads, qkv[0], qkv[0]), f"{op} attention: ")
    return [qkv, att], [(qkv[0], qkv[1], qkv[2] // 3)]


def _encdec_qk_shape(p, in_shapes):
    q, kv = in_shapes
    op = "interleaved_matmul_encdec_qk"
    _need3(q, "queries", op)
    _need3(kv, "keys_values", op)
    if q is None or kv is None:
        return in_shapes, [None]
    if not (_agree(q[2] * 2, kv[2]) and _agree(q[1], kv[1])):
        raise ShapeError(f"{op}: keys_values {fmt(kv)} must be (seq_k, batch, 2 * proj) for "
                         f"queries {fmt(q)}")
    return in_shapes, [(q[1] * p.heads, q[0], kv[0])]


def _encdec_valatt_shape(p, in_shapes):
    kv, att = in_shapes
    op = "interleaved_matmul_encdec_valatt"
    _need3(kv, "keys_values", op)
    _need3(att, "attention", op)
    if kv is None or att is None:
        return in_shapes, [None]
    if not (_agree(kv[0], att[2]) and _agree(kv[1] * p.heads, att[0])):
        raise ShapeError(f"{op}: attention {fmt(att)} must be (batch * heads, seq_q, seq_k) "
                         f"for keys_values {fmt(kv)} and heads={p.heads}")
    return in_shapes, [(att[1], kv[1], kv[2] // 2)]


# --- gradients: _backward_interleaved_matmul_* (MXNet's names), one kernel each -------------
def _unsplit(p, parts: list, seq: int, batch: int) -> np.ndarray:
    """The inverse of :func:`_split`: ``parts`` (each (batch*heads, seq, dim)) interleaved back
    into ``(seq, batch, heads*len(parts)*dim)``."""
    stacked = np.stack(parts, axis=2)  # (BH, seq, parts, dim)
    return stacked.transpose(1, 0, 2, 3).reshape(seq, batch, -1)


def _unmerge(p, og: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_merge_heads`: ``(seq, batch, heads*dim)`` -> ``(BH, seq, dim)``."""
    seq, batch, width = og.shape
    return og.reshape(seq, batch * p.heads, width // p.heads).transpose(1, 0, 2)


def _selfatt_qk_backward(p, og, qkv):
    q, k, v = _split(p, qkv, 3, "interleaved_matmul_selfatt_qk")
    g = og * _scale(q.shape[-1])
    return _unsplit(p, [g @ k, g.transpose(0, 2, 1) @ q, np.zeros_like(v)],
                    *qkv.shape[:2]).astype(qkv.dtype)


def _selfatt_valatt_backward(p, og, qkv, att):
    q, k, v = _split(p, qkv, 3, "interleaved_matmul_selfatt_valatt")
    g = _unmerge(p, og)
    zeros = np.zeros_like(q)
    d_qkv = _unsplit(p, [zeros, zeros, att.transpose(0, 2, 1) @ g], *qkv.shape[:2])
    return d_qkv.astype(qkv.dtype), (g @ v.transpose(0, 2, 1)).astype(att.dtype)


def _encdec_qk_backward(p, og, q, kv):
    qh = _split(p, q, 1, "interleaved_matmul_encdec_qk")[0]
    kh, vh = _split(p, kv, 2, "interleaved_matmul_encdec_qk")
    g = og * _scale(qh.shape[-1])
    d_q = _unsplit(p, [g @ kh], *q.shape[:2])
    d_kv = _unsplit(p, [g.transpose(0, 2, 1) @ qh, np.zeros_like(vh)], *kv.shape[:2])
    return d_q.astype(q.dtype), d_kv.astype(kv.dtype)


def _encdec_valatt_backward(p, og, kv, att):
    kh, vh = _split(p, kv, 2, "interleaved_matmul_encdec_valatt")
    g = _unmerge(p, og)
    d_kv = _unsplit(p, [np.zeros_like(kh), att.transpose(0, 2, 1) @ g], *kv.shape[:2])
    return d_kv.astype(kv.dtype), (g @ vh.transpose(0, 2, 1)).astype(att.dtype)


def _grad_rule(name: str):
    def rule(F, p, inputs, outputs, ograds):
        back = getattr(F._internal, f"_backward_interleaved_matmul_{name}")(
            ograds[0], *inputs, heads=p.heads)
        return [back] if len(inputs) == 1 else [back[i] for i in range(len(inputs))]
    return rule


_HEADS = {"heads": Int()}
for _name, _fn, _inputs in (("selfatt_qk", _selfatt_qk_backward, ("queries_keys_values",)),
                            ("selfatt_valatt", _selfatt_valatt_backward,
                             ("queries_keys_values", "attention")),
                            ("encdec_qk", _encdec_qk_backward, ("queries", "keys_values")),
                            ("encdec_valatt", _encdec_valatt_backward,
                             ("keys_values", "attention"))):
    register(OpDef(
        f"_backward_interleaved_matmul_{_name}", params=_HEADS, compute=_fn,
        inputs=("ograd",) + _inputs, num_outputs=len(_inputs),
        infer_shape=lambda p, s: (list(s), [None if v is None else tuple(v) for v in s[1:]]),
        infer_type=lambda p, t: (list(t), list(t[1:])),
        no_gradient="a backward kernel (MXNet 1.9.1 registers no gradient for it either)",
        doc=f"interleaved_matmul_{_name}'s gradients. Inputs: the output gradient, then the "
            "forward inputs; outputs: one gradient per forward input."))

for _name, _fn, _inputs, _rule in (
        ("selfatt_qk", _selfatt_qk, ("queries_keys_values",), _selfatt_qk_shape),
        ("selfatt_valatt", _selfatt_valatt, ("queries_keys_values", "attention"),
         _selfatt_valatt_shape),
        ("encdec_qk", _encdec_qk, ("queries", "keys_values"), _encdec_qk_shape),
        ("encdec_valatt", _encdec_valatt, ("keys_values", "attention"), _encdec_valatt_shape)):
    define(f"_contrib_interleaved_matmul_{_name}", params=_HEADS, compute=_fn, inputs=_inputs,
           infer_shape=_rule, doc="Multi-head attention product on interleaved projections.",
           check_shapes=True, lists_output_names=True, gradient=_grad_rule(_name))


# --- elementwise -----------------------------------------------------------------------------
def _div_sqrt_dim_onnx(ctx: LoweringContext) -> None:
    """``x / sqrt(d)`` with the divisor cast to ``x``'s dtype (integer ``Div`` truncates, as
    MXNet's integer kernel does)."""
    dt = np.dtype(ctx.dtype)
    dims = Dims(ctx)
    last = len(dims.static) - 1
    if last < 0:
        return deliver(ctx, ctx.make("Identity", [ctx.inputs[0]]))
    if not dims.dyn[last]:
        divisor = const_as(ctx, np.asarray(math.sqrt(dims.static[last])).astype(dt), dt, "sqrt_dim")
    else:
        d = ctx.cast_to(dims.scalar(last), np.float64)
        divisor = ctx.cast_to(ctx.make("Sqrt", [d]), dt)
    deliver(ctx, ctx.make("Div", [ctx.inputs[0], divisor]))


# --- interleaved attention matmuls -----------------------------------------------------------
def _head_dim(ctx: LoweringContext, i: int, parts: int) -> int:
    dims = Dims(ctx, i)
    if dims.dyn[2]:
        raise ctx.fail("the projection (last) dimension must be fixed, not dynamic")
    return dims.static[2] // (parts * ctx.params.heads)


def _split_heads(ctx: LoweringContext, i: int, parts: int, part: int, perm: list[int]) -> str:
    """Block ``part`` of input ``i`` as ``(batch*heads, ...)`` in ``perm`` order of
    ``(seq, batch*heads, dim)``."""
    dim = _head_dim(ctx, i, parts)
    x = ctx.make("Reshape", [ctx.inputs[i], ctx.ints([0, -1, parts, dim], "heads")])
    x = ctx.make("Gather", [x, ctx.const(np.asarray(part, np.int64), "part")], axis=2)
    return ctx.make("Transpose", [x], perm=perm)


def _scaled(ctx: LoweringContext, qk: str, dim: int) -> str:
    scale = np.float32(1.0 / math.sqrt(np.float32(dim)))
    return ctx.make("Mul", [qk, const_as(ctx, scale, ctx.dtype, "scale")])


def _qk_onnx(parts: int, k_input: int):
    """``q @ k^T / sqrt(dim)``: q is block 0 of input 0, k the first block after the queries."""
    def handler(ctx: LoweringContext) -> None:
        q = _split_heads(ctx, 0, parts, 0, [1, 0, 2])                          # (BH, Sq, D)
        k_parts, k_part = (parts, 1) if k_input == 0 else (2, 0)
        k = _split_heads(ctx, k_input, k_parts, k_part, [1, 2, 0])             # (BH, D, Sk)
        deliver(ctx, _scaled(ctx, ctx.make("MatMul", [q, k]), _head_dim(ctx, 0, parts)))
    return handler


def _valatt_onnx(parts: int):
    """``att @ v`` back to ``(seq, batch, heads * dim)``: v is the last block of input 0."""
    def handler(ctx: LoweringContext) -> None:
        v = _split_heads(ctx, 0, parts, parts - 1, [1, 0, 2])                  # (BH, Sk, D)
        out = ctx.make("Transpose", [ctx.make("MatMul", [ctx.inputs[1], v])], perm=[1, 0, 2])
        width = _head_dim(ctx, 0, parts) * ctx.params.heads
        deliver(ctx, ctx.make("Reshape", [out, ctx.ints([0, -1, width], "merged")]))
    return handler


def _zeros_like(ctx: LoweringContext, x: str) -> str:
    zero = ctx.const(np.zeros((), ctx.dtype), "zero")
    return ctx.make("Expand", [zero, ctx.make("Shape", [x])])


def _unsplit_onnx(ctx: LoweringContext, parts: list[str], width: int) -> str:
    """(BH, seq, dim) blocks interleaved back into ``(seq, batch, width)``."""
    cols = [ctx.make("Unsqueeze", [ctx.make("Transpose", [t], perm=[1, 0, 2]),
                                   ctx.ints([2], "axis2")]) for t in parts]
    x = cols[0] if len(cols) == 1 else ctx.make("Concat", cols, axis=2)
    return ctx.make("Reshape", [x, ctx.ints([0, -1, width], "width")])


def _unmerge_onnx(ctx: LoweringContext, dim: int) -> str:
    g = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([0, -1, dim], "per_head")])
    return ctx.make("Transpose", [g], perm=[1, 0, 2])


def _out(ctx: LoweringContext, k: int, y: str) -> None:
    ctx.make("Identity", [y], outputs=[ctx.outputs[k]])


def _width(ctx: LoweringContext, i: int) -> int:
    return int(Dims(ctx, i).static[2])


def _t(ctx: LoweringContext, x: str) -> str:
    return ctx.make("Transpose", [x], perm=[0, 2, 1])


def _qk_backward_onnx(self_att: bool):
    """``dq = s og @ k``, ``dk = s og^T @ q`` (v: zeros), interleaved back."""
    def handler(ctx: LoweringContext) -> None:
        parts = 3 if self_att else 1
        dim = _head_dim(ctx, 1, parts)
        q = _split_heads(ctx, 1, parts, 0, [1, 0, 2])
        k_in, k_parts, k_part = (1, 3, 1) if self_att else (2, 2, 0)
        k = _split_heads(ctx, k_in, k_parts, k_part, [1, 0, 2])
        g = _scaled(ctx, ctx.inputs[0], dim)
        dq, dk = ctx.make("MatMul", [g, k]), ctx.make("MatMul", [_t(ctx, g), q])
        if self_att:
            _out(ctx, 0, _unsplit_onnx(ctx, [dq, dk, _zeros_like(ctx, q)], _width(ctx, 1)))
            return
        _out(ctx, 0, _unsplit_onnx(ctx, [dq], _width(ctx, 1)))
        _out(ctx, 1, _unsplit_onnx(ctx, [dk, _zeros_like(ctx, k)], _width(ctx, 2)))
    return handler


def _valatt_backward_onnx(parts: int):
    """``g`` = the output gradient per head; ``datt = g @ v^T``, ``dv = att^T @ g`` (the
    other blocks: zeros), interleaved back."""
    def handler(ctx: LoweringContext) -> None:
        dim = _head_dim(ctx, 1, parts)
        v = _split_heads(ctx, 1, parts, parts - 1, [1, 0, 2])
        g = _unmerge_onnx(ctx, dim)
        dv = ctx.make("MatMul", [_t(ctx, ctx.inputs[2]), g])
        zeros = [_zeros_like(ctx, v)] * (parts - 1)
        _out(ctx, 0, _unsplit_onnx(ctx, zeros + [dv], _width(ctx, 1)))
        _out(ctx, 1, ctx.make("MatMul", [g, _t(ctx, v)]))
    return handler


lowering("_backward_interleaved_matmul_selfatt_qk")(_qk_backward_onnx(True))
lowering("_backward_interleaved_matmul_encdec_qk")(_qk_backward_onnx(False))
lowering("_backward_interleaved_matmul_selfatt_valatt")(_valatt_backward_onnx(3))
lowering("_backward_interleaved_matmul_encdec_valatt")(_valatt_backward_onnx(2))
lowering("_contrib_div_sqrt_dim")(_div_sqrt_dim_onnx)
lowering("_contrib_interleaved_matmul_selfatt_qk")(_qk_onnx(3, 0))
lowering("_contrib_interleaved_matmul_selfatt_valatt")(_valatt_onnx(3))
lowering("_contrib_interleaved_matmul_encdec_qk")(_qk_onnx(1, 1))
lowering("_contrib_interleaved_matmul_encdec_valatt")(_valatt_onnx(2))
