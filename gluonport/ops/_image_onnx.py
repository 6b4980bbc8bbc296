"""ONNX export of the deterministic image operators (gluonport/ops/image.py), opset 13+.

Each lowering repeats MXNet's arithmetic, so onnxruntime gives MXNet's numbers (float results
within float rounding, integer results equal):

* ``_image_to_tensor``: ``Transpose`` to CHW / NCHW, ``Cast`` to float32 and ``Div`` by 255
  (float64 is divided in double first, as MXNet does, then cast; float16 rounds through half);
* ``_image_normalize``: ``Sub`` and ``Div`` by (C, 1, 1) constants in float32 (float64 in
  double; float16 rounds to half after each step, as mshadow's ``half_t``), cast back to the
  input dtype (MXNet stores the result in the input dtype);
* ``_image_crop``: ``Slice`` of the height and width axes (a batch axis may be dynamic);
* ``_image_flip_left_right`` / ``_image_flip_top_bottom``: ``Slice`` with step -1;
* ``_image_adjust_lighting``: ``Add`` of the three float32 offsets in float32, then MXNet's
  ``saturate_cast`` (``Clip`` to [0, 255] before the uint8 ``Cast``, which truncates).

``_image_resize`` and the random ops have no export (their ``no_onnx`` says why).
"""

from __future__ import annotations

import numpy as np

from .image import _crop_check, _image_check, _to_tensor_rule, lighting_offsets, normalize_values
from .lowering import LoweringContext, lowering

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_INT64_MIN = np.iinfo(np.int64).min


def _work(dtype) -> np.dtype:
    """MXNet computes image arithmetic in float, or double for float64 data."""
    return F64 if np.dtype(dtype) == F64 else F32


def _to(ctx: LoweringContext, x: str, src, dst, out: bool = False) -> str:
    """``x`` in dtype ``dst`` (a Cast, or nothing); ``out`` writes the node's output."""
    outputs = [ctx.outputs[0]] if out else None
    if np.dtype(src) == np.dtype(dst):
        return ctx.make("Identity", [x], outputs=outputs) if out else x
    from .. import dtypes

    return ctx.make("Cast", [x], outputs=outputs, to=dtypes.onnx_of(dst))


def _to_tensor_onnx(ctx: LoweringContext) -> None:
    """HWC -> CHW (NHWC -> NCHW), then ``x / 255`` in float (double for float64)."""
    _to_tensor_rule(None, [tuple(ctx.shape)])
    perm = [2, 0, 1] if len(ctx.shape) == 3 else [0, 3, 1, 2]
    work = _work(ctx.dtype)
    x = _to(ctx, ctx.make("Transpose", [ctx.inputs[0]], perm=perm), ctx.dtype, work)
    y = ctx.make("Div", [x, ctx.const(np.asarray(255, work), "scale")])
    if ctx.dtype == F16:  # mshadow's half_t / float is a half_t
        y = _to(ctx, y, F32, F16)
        work = F16
    _to(ctx, y, work, F32, out=True)


def _normalize_onnx(ctx: LoweringContext) -> None:
    """``(x - mean) / std`` with (C, 1, 1) constants of the float32 attribute values."""
    p = ctx.params
    mean, std = normalize_values(tuple(ctx.shape), p.mean, p.std)
    work = _work(ctx.dtype)
    shape = (len(mean), 1, 1)
    m = ctx.const(mean.astype(work).reshape(shape), "mean")
    s = ctx.const(std.astype(work).reshape(shape), "std")
    x = ctx.make("Sub", [_to(ctx, ctx.inputs[0], ctx.dtype, work), m])
    if ctx.dtype == F16:  # mshadow rounds half_t - float to half_t
        x = _to(ctx, _to(ctx, x, F32, F16), F16, F32)
    y = ctx.make("Div", [x, s])
    _to(ctx, y, work, ctx.dtype, out=True)


def _crop_onnx(ctx: LoweringContext) -> None:
    """``Slice`` of the height and width axes at (y, x)."""
    p = ctx.params
    _crop_check(p, tuple(ctx.shape))
    rank = len(ctx.shape)
    ctx.make("Slice", [ctx.inputs[0], ctx.ints([p.y, p.x], "starts"),
                       ctx.ints([p.y + p.height, p.x + p.width], "ends"),
                       ctx.ints([rank - 3, rank - 2], "axes")], outputs=[ctx.outputs[0]])


def _flip_onnx(axis: int, name: str):
    def handler(ctx: LoweringContext) -> None:
        _image_check(name, tuple(ctx.shape))
        ctx.make("Slice", [ctx.inputs[0], ctx.ints([-1], "starts"),
                           ctx.ints([_INT64_MIN], "ends"), ctx.ints([axis], "axes"),
                           ctx.ints([-1], "steps")], outputs=[ctx.outputs[0]])

    handler.__name__ = f"to_{name.rsplit('.', 1)[-1]}"
    return handler


def _adjust_lighting_onnx(ctx: LoweringContext) -> None:
    """``saturate(float(x) + offsets)``; one channel is left as it is."""
    if _image_check("image.adjust_lighting", tuple(ctx.shape)) == 1:
        ctx.make("Identity", [ctx.inputs[0]], outputs=[ctx.outputs[0]])
        return
    pca = ctx.const(lighting_offsets(ctx.params.alpha), "offsets")
    y = ctx.make("Add", [_to(ctx, ctx.inputs[0], ctx.dtype, F32), pca])
    if ctx.dtype == np.uint8:
        y = ctx.make("Clip", [y, ctx.const(np.float32(0), "low"),
                              ctx.const(np.float32(255), "high")])
    _to(ctx, y, F32, ctx.dtype, out=True)


lowering("_image_to_tensor")(_to_tensor_onnx)
lowering("_image_normalize")(_normalize_onnx)
lowering("_image_crop")(_crop_onnx)
lowering("_image_flip_left_right")(_flip_onnx(1, "image.flip_left_right"))
lowering("_image_flip_top_bottom")(_flip_onnx(0, "image.flip_top_bottom"))
lowering("_image_adjust_lighting")(_adjust_lighting_onnx)
