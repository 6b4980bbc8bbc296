"""Variable-length sequence ops: ``SequenceMask``, ``SequenceReverse``, ``SequenceLast``.

Each takes ``data`` laid out with the sequence (time) axis at ``axis`` and the batch axis next
to it (``[T, N, ...]`` for ``axis=0``, ``[N, T, ...]`` for ``axis=1``) and, with
``use_sequence_length=True``, a second input ``sequence_length`` of shape ``(N,)`` giving each
batch item's valid length. MXNet 1.9.1 semantics kept here:

* lengths are truncated toward zero (MXNet casts them to an index type: ``1.7`` means 1), and
  may have any dtype; a missing ``sequence_length`` dtype is inferred as ``data``'s.
* ``SequenceMask`` writes ``value`` (cast to ``data``'s dtype, so ``-2.7`` is ``-2`` for int
  data) at steps ``t >= length``; it is the identity without lengths. ``axis`` is 0 or 1.
* ``SequenceReverse`` reverses the first ``length`` steps of each item and keeps the padding
  in place; ``axis`` must be 0 (MXNet refuses 1).
* ``SequenceLast`` picks step ``length - 1`` of each item (the last step without lengths);
  the output drops ``axis``. ``axis`` is 0 or 1.
* Lengths outside ``[0, T]`` (``[1, T]`` for ``SequenceLast``) make MXNet's kernels read or
  write outside the array; here they are clipped into that range.
* Gradients (MXNet's): SequenceMask masks the head gradient with 0, SequenceReverse reverses
  it alike, SequenceLast scatters it to the last valid step (``_backward_SequenceLast``; without
  lengths MXNet 1.9.1 reads uninitialised indices and crashes, here it is the last step);
  ``sequence_length`` gets none.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Float, Int
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, lowering
from ..lowering.dims import INT64_MIN, Dims
from ..registry import OpDef, register

__all__: list[str] = []


def _inputs(p) -> tuple[str, ...]:
    return ("data", "sequence_length") if p.use_sequence_length else ("data",)


def _check_axis(op: str, axis: int, allowed: tuple[int, ...]) -> None:
    if axis not in allowed:
        only = " or ".join(str(a) for a in allowed)
        raise OpAttributeError(f"{op}: axis={axis} is not supported; MXNet's implementation "
                               f"expects axis to be {only}")


def _check_rank(op: str, shape: tuple) -> None:
    if len(shape) < 2:
        raise ShapeError(f"{op}: data must have rank 2 or greater, got {fmt(shape)}")


def _check(op: str, p, data: np.ndarray, allowed: tuple[int, ...]) -> None:
    _check_axis(op, p.axis, allowed)
    _check_rank(op, data.shape)


def _seq_shape(op: str, allowed: tuple[int, ...], drop_axis: bool):
    """Shape rule: ``sequence_length`` is ``(batch,)``; the output is ``data``'s shape, minus
    the sequence axis when ``drop_axis``."""

    def rule(p, in_shapes):
        _check_axis(op, p.axis, allowed)
        ins = list(in_shapes)
        data = ins[0]
        if data is None:
            return ins, [None]
        _check_rank(op, data)
        if p.use_sequence_length:
            batch = data[1 - p.axis]
            ins[1] = merge(ins[1], (batch,), f"{op}: sequence_length: ")
        out = data[:p.axis] + data[p.axis + 1:] if drop_axis else data
        return ins, [tuple(out)]

    return rule


def _seq_type(p, in_types):
    """The output has ``data``'s dtype; an unknown ``sequence_length`` dtype is taken to be
    ``data``'s (lengths of any dtype are accepted, as in MXNet)."""
    dt = in_types[0]
    if dt is None:
        return list(in_types), [None]
    return [dt if t is None else t for t in in_types], [dt]


def _lengths(p, data: np.ndarray, rest: tuple, low: int) -> np.ndarray | None:
    """Per-item lengths as int64 (truncated toward zero, clipped to ``[low, T]``), or None."""
    if not p.use_sequence_length:
        return None
    lengths = np.asarray(rest[0])
    batch = data.shape[1 - p.axis]
    if lengths.shape != (batch,):
        raise ShapeError(f"sequence_length must have shape ({batch},) (the batch size of data "
                         f"{data.shape} with axis={p.axis}), got {lengths.shape}")
    return np.clip(np.trunc(lengths).astype(np.int64), low, data.shape[p.axis])


def _along(mask: np.ndarray, ndim: int) -> np.ndarray:
    """A 2-D (axis-0, axis-1) array reshaped to broadcast against rank-``ndim`` data."""
    return mask.reshape(mask.shape + (1,) * (ndim - 2))


def _time_index(p, data: np.ndarray) -> np.ndarray:
    """Step numbers laid out as (T, 1) for axis 0 or (1, T) for axis 1."""
    steps = np.arange(data.shape[p.axis])
    return steps[:, None] if p.axis == 0 else steps[None, :]


def _mask(p, data: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    _check("SequenceMask", p, data, (0, 1))
    lengths = _lengths(p, data, rest, low=0)
    if lengths is None:
        return data.copy()
    valid = _time_index(p, data) < (lengths[None, :] if p.axis == 0 else lengths[:, None])
    fill = np.asarray(p.value).astype(data.dtype)
    return np.where(_along(valid, data.ndim), data, fill)


def _reverse(p, data: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    _check("SequenceReverse", p, data, (0,))
    lengths = _lengths(p, data, rest, low=0)
    if lengths is None:
        return data[::-1].copy()
    t = _time_index(p, data)  # (T, 1)
    source = np.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)  # (T, N)
    source = np.broadcast_to(_along(source, data.ndim), data.shape)
    return np.take_along_axis(data, source, axis=0)


def _last(p, data: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    _check("SequenceLast", p, data, (0, 1))
    lengths = _lengths(p, data, rest, low=1)
    if lengths is None:
        return np.take(data, data.shape[p.axis] - 1, axis=p.axis)
    batch = np.arange(lengths.shape[0])
    if p.axis == 0:
        return data[lengths - 1, batch]
    return data[batch, lengths - 1]


_TABLE = (  # name, compute, allowed axes, drops the axis, extra params, aliases, doc
    ("SequenceMask", _mask, (0, 1), False, {"value": Float(0.0)}, ("_npx_sequence_mask",),
     "Sets steps past each sequence's length to ``value``."),
    ("SequenceReverse", _reverse, (0,), False, {}, (),
     "Reverses the valid steps of each sequence (axis 0 only)."),
    ("SequenceLast", _last, (0, 1), True, {}, (), "The last valid step of each sequence."),
)

def _lengths_of(inputs: list) -> list:
    return inputs[1:2]


def _mask_grad(F, p, inputs, outputs, ograds):
    """MXNet's backward of SequenceMask: the head gradient masked with 0 past each length."""
    if not p.use_sequence_length:
        return [ograds[0]]
    return [F.SequenceMask(ograds[0], inputs[1], use_sequence_length=True, axis=p.axis,
                           value=0.0), None]


def _reverse_grad(F, p, inputs, outputs, ograds):
    """Reversing the valid steps is its own inverse: the head gradient reversed alike."""
    g = F.SequenceReverse(ograds[0], *_lengths_of(inputs),
                          use_sequence_length=p.use_sequence_length, axis=p.axis)
    return [g] + [None] * (len(inputs) - 1)


def _last_grad(F, p, inputs, outputs, ograds):
    """The head gradient scattered back to each sequence's last valid step (one kernel)."""
    g = F._internal._backward_SequenceLast(ograds[0], *inputs,
                                           use_sequence_length=p.use_sequence_length,
                                           axis=p.axis)
    return [g] + [None] * (len(inputs) - 1)


_GRADS = {"SequenceMask": _mask_grad, "SequenceReverse": _reverse_grad,
          "SequenceLast": _last_grad}

_OPS = {
    name: register(OpDef(
        name, params={"use_sequence_length": Bool(False), **extra, "axis": Int(0)},
        inputs=_inputs, compute=compute, infer_shape=_seq_shape(name, allowed, drop),
        infer_type=_seq_type, aliases=aliases, doc=doc, lists_output_names=True,
        gradient=_GRADS[name]))
    for name, compute, allowed, drop, extra, aliases, doc in _TABLE}


def _last_backward(p, og: np.ndarray, data: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    """Zeros of the data's shape with ``og`` at step ``length - 1`` (the last step without
    lengths) of each sequence; lengths truncated and clipped as the forward reads them."""
    _check("SequenceLast", p, data, (0, 1))
    grad = np.zeros(data.shape, og.dtype)
    lengths = _lengths(p, data, rest, low=1)
    if lengths is None:
        index = (slice(None),) * p.axis + (data.shape[p.axis] - 1,)
        grad[index] = og
        return grad
    batch = np.arange(lengths.shape[0])
    if p.axis == 0:
        grad[lengths - 1, batch] = og
    else:
        grad[batch, lengths - 1] = og
    return grad


def _last_grad_inputs(p) -> tuple[str, ...]:
    return ("out_grad", "data") + (("sequence_length",) if p.use_sequence_length else ())


register(OpDef(
    "_backward_SequenceLast", params={"use_sequence_length": Bool(False), "axis": Int(0)},
    inputs=_last_grad_inputs, compute=_last_backward,
    infer_shape=lambda p, s: (list(s), [s[1]]), infer_type=lambda p, t: (list(t), [t[0]]),
    no_gradient="a backward kernel; MXNet 1.9.1 registers no gradient for it",
    doc="SequenceLast's gradient: the head gradient at each sequence's last valid step, zero "
        "elsewhere (inputs: out_grad, data, [sequence_length])."))


# --- ONNX export -------------------------------------------------------------------------------
def _onnx_lengths(ctx: LoweringContext, steps: str, low: int) -> str:
    """``sequence_length`` as int64 (ONNX Cast truncates floats toward zero, as MXNet does),
    clipped to ``[low, steps]`` like the numpy kernels (``steps``: 0-d int64 T)."""
    lengths = ctx.inputs[1]
    if np.dtype(ctx.in_dtypes[1]) != np.int64:
        lengths = ctx.cast_to(lengths, np.int64)
    low_t = ctx.const(np.asarray(low, np.int64), "low")
    return ctx.make("Clip", [lengths, low_t, steps])


def _mask_onnx(ctx: LoweringContext) -> None:
    """``Where(t < length, data, value)`` with the comparison broadcast over the features."""
    p = ctx.params
    if not p.use_sequence_length:
        ctx.make("Identity", ctx.inputs[:1], outputs=ctx.outputs[:1])
        return
    count = Dims(ctx, 0).scalar(p.axis)
    lengths = _onnx_lengths(ctx, count, 0)
    zero, one = (ctx.const(np.asarray(v, np.int64), "i") for v in (0, 1))
    steps = ctx.make("Range", [zero, count, one])
    steps = ctx.make("Unsqueeze", [steps, ctx.ints([1 - p.axis], "axes")])
    lengths = ctx.make("Unsqueeze", [lengths, ctx.ints([p.axis], "axes")])
    valid = ctx.make("Less", [steps, lengths])  # (T, N) or (N, T)
    rank = len(ctx.shape)
    if rank > 2:
        valid = ctx.make("Unsqueeze", [valid, ctx.ints(list(range(2, rank)), "feature_axes")])
    fill = ctx.const(np.asarray(p.value).astype(ctx.dtype), "value")
    ctx.make("Where", [valid, ctx.inputs[0], fill], outputs=ctx.outputs[:1])


def _reverse_onnx(ctx: LoweringContext) -> None:
    """A reversing Slice without lengths; else ONNX ReverseSequence (the same semantics:
    the first ``length`` steps reversed, the padding left in place)."""
    if not ctx.params.use_sequence_length:
        ctx.make("Slice", [ctx.inputs[0], ctx.ints([-1], "starts"), ctx.ints([INT64_MIN], "ends"),
                           ctx.ints([0], "axes"), ctx.ints([-1], "steps")],
                 outputs=ctx.outputs[:1])
        return
    # at least 1: reversing one step is reversing none, and onnxruntime 1.19's ReverseSequence
    # writes nothing (uninitialised memory comes out) for a sequence of length 0
    lengths = _onnx_lengths(ctx, Dims(ctx, 0).scalar(0), 1)
    ctx.make("ReverseSequence", [ctx.inputs[0], lengths], outputs=ctx.outputs[:1],
             batch_axis=1, time_axis=0)


def _last_onnx(ctx: LoweringContext) -> None:
    """Gather of the last step; with lengths, GatherND per batch item (batch first)."""
    p = ctx.params
    if not p.use_sequence_length:
        last = ctx.const(np.asarray(-1, np.int64), "last")
        ctx.make("Gather", [ctx.inputs[0], last], outputs=ctx.outputs[:1], axis=p.axis)
        return
    one = ctx.const(np.asarray(1, np.int64), "one")
    lengths = _onnx_lengths(ctx, Dims(ctx, 0).scalar(p.axis), 1)
    index = ctx.make("Sub", [lengths, one])
    index = ctx.make("Unsqueeze", [index, ctx.ints([1], "axes")])  # (N, 1)
    data = ctx.inputs[0]
    if p.axis == 0:  # batch first for GatherND's batch_dims
        rank = len(ctx.shape)
        data = ctx.make("Transpose", [data], perm=[1, 0] + list(range(2, rank)))
    ctx.make("GatherND", [data, index], outputs=ctx.outputs[:1], batch_dims=1)


lowering(_OPS["SequenceMask"])(_mask_onnx)
lowering(_OPS["SequenceReverse"])(_reverse_onnx)
lowering(_OPS["SequenceLast"])(_last_onnx)


def _last_grad_onnx(ctx: LoweringContext) -> None:
    """``Where(step == length - 1, out_grad expanded along the axis, 0)``."""
    p = ctx.params
    rank = len(ctx.in_shapes[1])
    dims = Dims(ctx, 1)
    count = dims.scalar(p.axis)
    zero, one = (ctx.const(np.asarray(v, np.int64), "i") for v in (0, 1))
    steps = ctx.make("Range", [zero, count, one])
    if p.use_sequence_length:
        lengths = ctx.inputs[2]
        if np.dtype(ctx.in_dtypes[2]) != np.int64:
            lengths = ctx.cast_to(lengths, np.int64)
        last = ctx.make("Sub", [ctx.make("Clip", [lengths, one, count]), one])  # (N,)
        steps = ctx.make("Unsqueeze", [steps, ctx.ints([1 - p.axis], "axes")])
        last = ctx.make("Unsqueeze", [last, ctx.ints([p.axis], "axes")])
        hit = ctx.make("Equal", [steps, last])  # (T, N) or (N, T)
        if rank > 2:
            hit = ctx.make("Unsqueeze", [hit, ctx.ints(list(range(2, rank)), "feature_axes")])
    else:
        hit = ctx.make("Equal", [steps, ctx.make("Sub", [count, one])])  # (T,)
        hit = ctx.make("Unsqueeze", [hit, ctx.ints([a for a in range(rank) if a != p.axis],
                                                   "other_axes")])
    og = ctx.make("Unsqueeze", [ctx.inputs[0], ctx.ints([p.axis], "axis")])
    zero_f = ctx.const(np.zeros((), np.dtype(ctx.in_dtypes[0])), "zero")
    ctx.make("Where", [hit, og, zero_f], outputs=ctx.outputs[:1])


lowering("_backward_SequenceLast")(_last_grad_onnx)
