"""Resizing and shape-changing image operators: ``_contrib_AdaptiveAvgPooling2D``,
``_contrib_BilinearResize2D``, ``Pad``, ``Crop`` (split from the pooling family).

MXNet 1.9.1 semantics kept here:

* ``_contrib_AdaptiveAvgPooling2D``: window ``[floor(i*x/o), ceil((i+1)*x/o))``.
* ``_contrib_BilinearResize2D``: ``align_corners`` (default True) maps ``src = dst*(x-1)/(o-1)``,
  otherwise ``src = max((dst+0.5)*x/o - 0.5, 0)``; the coordinate arithmetic is float32, as in
  MXNet. ``mode`` picks the output size (size, odd_scale, like, to_even/odd_down/up).
* ``Pad`` works on 4-D/5-D data, never on the first two axes; ``reflect`` is numpy's reflect.
* ``Crop`` takes ``h_w`` or a second input's H, W (``num_args=2``), at ``offset`` or centred.

ONNX export (opset 13+): adaptive pooling as AveragePool or averaging MatMuls;
BilinearResize2D as ``Resize`` linear ('align_corners' or 'pytorch_half_pixel', sizes computed
at run time when H/W are dynamic); Pad as ``Pad``; Crop as ``Slice``.

Gradients (MXNet's ``_backward_*`` names): both resizes are separable linear maps ``R_h x R_w^T``,
so their data gradient is ``R_h^T og R_w`` (two matmuls; ONNX: two MatMuls with the constant
matrices); Pad and Crop gather, so theirs add each output gradient into its source element
(``shape.grad.gather_backward``; Pad's edge/reflect copies accumulate).
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float, Int, Optional, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt
from ..lowering import LoweringContext, lowering
from ..lowering import window as win
from ..registry import OpDef, register
from ..shape.grad import gather_backward
from .pool import acc_array, float_only, float_onnx

__all__ = ["bilinear_resize", "adaptive_avg_pool2d"]

# --- AdaptiveAvgPooling2D --------------------------------------------------------------------
def _adaptive_size(p, shape: tuple) -> tuple[int, int]:
    size = tuple(p.output_size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) == 2:
        return size[0], size[1]
    return 1, 1  # MXNet: an empty (or longer) output_size gives 1x1


def _adaptive_matrix(n_in: int, n_out: int, dtype) -> np.ndarray:
    """Row i averages ``[floor(i*n_in/n_out), ceil((i+1)*n_in/n_out))`` (float32 maths)."""
    i = np.arange(n_out)
    start = np.floor(np.float32(1) * (i * n_in) / np.float32(n_out)).astype(np.int64)
    end = np.ceil(np.float32(1) * ((i + 1) * n_in) / np.float32(n_out)).astype(np.int64)
    j = np.arange(n_in)
    mask = (j >= start[:, None]) & (j < end[:, None])
    return (mask / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d(x: np.ndarray, out_hw: tuple[int, int]) -> np.ndarray:
    """MXNet's AdaptiveAvgPooling2D on NCHW data: two averaging matmuls."""
    a = acc_array(x)
    mh = _adaptive_matrix(x.shape[2], out_hw[0], a.dtype)
    mw = _adaptive_matrix(x.shape[3], out_hw[1], a.dtype)
    return np.matmul(np.matmul(mh, a), mw.T).astype(x.dtype, copy=False)


def _adaptive_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"AdaptiveAvgPooling2D: data of shape {fmt(data)} must be 4-D NCHW")
    return in_shapes, [(data[0], data[1], *_adaptive_size(p, tuple(data)))]


def _adaptive(p, x):
    float_only("AdaptiveAvgPooling2D", x)
    _adaptive_shape(p, [x.shape])
    return adaptive_avg_pool2d(x, _adaptive_size(p, x.shape))


def _grad_attrs(p) -> dict:
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _grad_adaptive(F, p, inputs, outputs, ograds):
    back = F._internal._backward_contrib_AdaptiveAvgPooling2D(ograds[0], inputs[0],
                                                              **_grad_attrs(p))
    return [back]


def _separable_backward(og: np.ndarray, x: np.ndarray, mh: np.ndarray,
                        mw: np.ndarray) -> np.ndarray:
    """The data gradient of ``y = mh @ x @ mw.T``: ``mh.T @ og @ mw`` (float16 in float32)."""
    g = acc_array(og)
    return np.matmul(np.matmul(mh.T.astype(g.dtype), g), mw.astype(g.dtype)).astype(x.dtype)


def _adaptive_backward(p, og, x):
    oh, ow = og.shape[2:]
    return _separable_backward(og, x, _adaptive_matrix(x.shape[2], oh, np.float64),
                               _adaptive_matrix(x.shape[3], ow, np.float64))


_NO_GRAD = "a backward kernel (MXNet 1.9.1 registers no gradient for it either)"


def _grad_shapes(p, in_shapes):
    return list(in_shapes), [in_shapes[1]]


register(OpDef(
    "_backward_contrib_AdaptiveAvgPooling2D", params={"output_size": Shape(())},
    inputs=("ograd", "data"), compute=_adaptive_backward, infer_shape=_grad_shapes,
    infer_type=lambda p, t: (list(t), [t[1]]), no_gradient=_NO_GRAD,
    doc="AdaptiveAvgPooling2D's data gradient. Inputs: the output gradient, data (read for "
        "its shape)."))

register(OpDef(
    "_contrib_AdaptiveAvgPooling2D", params={"output_size": Shape(())},
    compute=_adaptive, infer_shape=_adaptive_shape, gradient=_grad_adaptive,
    doc="Average pooling to a fixed output size (PyTorch-style adaptive windows).",
    lists_input_names=False))


# --- BilinearResize2D ------------------------------------------------------------------------
_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")


def _scaled(scale: float, x: int) -> int:
    """``static_cast<int>(float_scale * x)``: float32 product, truncated."""
    return int(np.float32(scale) * np.float32(x))


def _resize_hw(p, shape: tuple, like: tuple | None) -> tuple[int, int] | None:
    h, w = shape[2], shape[3]
    mode = p.mode
    if mode == "size":
        if p.scale_height is None:
            return p.height, p.width
        if p.scale_width is None:  # MXNet reads scale_width whenever scale_height is set
            raise OpAttributeError("BilinearResize2D: scale_height is set, so scale_width "
                                   "must be set too")
        return _scaled(p.scale_height, h), _scaled(p.scale_width, w)
    if mode == "odd_scale":
        if p.scale_height is None or p.scale_width is None:
            raise OpAttributeError("BilinearResize2D: mode='odd_scale' needs scale_height and "
                                   "scale_width")
        return tuple(_scaled(s, x) if x % 2 == 0 else _scaled(s, x - 1) + 1
                     for s, x in ((p.scale_height, h), (p.scale_width, w)))
    if mode == "like":
        return None if like is None else (like[2], like[3])
    even = mode.startswith("to_even")
    step = -1 if mode.endswith("down") else 1
    return tuple(x if (x % 2 == 0) == even else x + step for x in (h, w))


def _resize_inputs(p):
    return ("data", "like") if p.mode == "like" else ("data",)


def _resize_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"BilinearResize2D: data of shape {fmt(data)} must be 4-D NCHW")
    like = in_shapes[1] if p.mode == "like" else None
    if p.mode == "like" and like is not None and len(like) != 4:
        raise ShapeError(f"BilinearResize2D: like of shape {fmt(like)} must be 4-D NCHW")
    hw = _resize_hw(p, tuple(data), like)
    return in_shapes, [None if hw is None else (data[0], data[1], *hw)]


def _source_coords(n_in: int, n_out: int, align_corners: bool):
    """Low index, high index and weights of each output row (MXNet's float32 maths)."""
    if n_out > 1:
        scale = (np.float32(n_in - 1) / np.float32(n_out - 1) if align_corners
                 else np.float32(n_in) / np.float32(n_out))
    else:
        scale = np.float32(0)
    dst = np.arange(n_out)
    if align_corners:
        src = scale * dst.astype(np.float32)
    else:  # (dst + 0.5) is a double in MXNet's C++; the result is stored as float
        src = np.maximum(float(scale) * (dst + 0.5) - 0.5, 0).astype(np.float32)
    lo = src.astype(np.int64)
    hi = lo + (lo < n_in - 1)
    lam = src - lo.astype(np.float32)
    return lo, hi, np.float32(1) - lam, lam


def bilinear_resize(x: np.ndarray, out_hw: tuple[int, int], align_corners: bool = True
                    ) -> np.ndarray:
    """MXNet's BilinearResize2D forward on NCHW data.

    Each output is ``hl0 * (wl0*x[h0,w0] + wl1*x[h0,w1]) + hl1 * (wl0*x[h1,w0] + wl1*x[h1,w1])``
    as in MXNet; the width interpolation of an input row is computed once and shared by the
    output rows that use it (same values, fewer gathers), unless most rows are never used.
    """
    if tuple(out_hw) == x.shape[2:]:
        return x.copy()
    a = acc_array(x)
    h0, h1, hl0, hl1 = (v.astype(a.dtype) if v.dtype.kind == "f" else v
                        for v in _source_coords(x.shape[2], out_hw[0], align_corners))
    w0, w1, wl0, wl1 = (v.astype(a.dtype) if v.dtype.kind == "f" else v
                        for v in _source_coords(x.shape[3], out_hw[1], align_corners))
    if x.shape[2] < 2 * out_hw[0]:  # interpolate every input row once, then pick rows
        rows = a[..., w0] * wl0 + a[..., w1] * wl1
        top, bottom = rows[:, :, h0], rows[:, :, h1]
    else:  # strong downsampling: pick the rows first
        top, bottom = a[:, :, h0], a[:, :, h1]
        top = top[..., w0] * wl0 + top[..., w1] * wl1
        bottom = bottom[..., w0] * wl0 + bottom[..., w1] * wl1
    out = hl0[:, None] * top + hl1[:, None] * bottom
    return out.astype(x.dtype, copy=False)


def _resize(p, x, like=None):
    float_only("BilinearResize2D", x)
    _, outs = _resize_shape(p, [x.shape, None if like is None else like.shape])
    return bilinear_resize(x, outs[0][2:], p.align_corners)


_RESIZE_PARAMS = {"height": Int(1), "width": Int(1), "scale_height": Optional(Float()),
                  "scale_width": Optional(Float()), "mode": Enum(_RESIZE_MODES, "size"),
                  "align_corners": Bool(True)}


def _grad_resize(F, p, inputs, outputs, ograds):
    """``_backward_contrib_BilinearResize2D``; the ``like`` input gets none (MXNet: zeros)."""
    back = F._internal._backward_contrib_BilinearResize2D(ograds[0], inputs[0],
                                                          **_grad_attrs(p))
    return [back] + [None] * (len(inputs) - 1)


def _resize_backward(p, og, x):
    oh, ow = og.shape[2:]
    return _separable_backward(og, x, _interp_matrix(x.shape[2], oh, p.align_corners,
                                                     np.float64),
                               _interp_matrix(x.shape[3], ow, p.align_corners, np.float64))


register(OpDef(
    "_backward_contrib_BilinearResize2D", params=_RESIZE_PARAMS, inputs=("ograd", "data"),
    compute=_resize_backward, infer_shape=_grad_shapes,
    infer_type=lambda p, t: (list(t), [t[1]]), no_gradient=_NO_GRAD,
    doc="BilinearResize2D's data gradient. Inputs: the output gradient, data (read for its "
        "shape); the output size is the gradient's."))

register(OpDef(
    "_contrib_BilinearResize2D", params=_RESIZE_PARAMS, gradient=_grad_resize,
    inputs=_resize_inputs, compute=_resize, infer_shape=_resize_shape, sized_by_attrs=True,
    doc="Bilinear resize of NCHW data to a size chosen by mode."))


# --- Pad -------------------------------------------------------------------------------------
def _pad_check(p, shape: tuple) -> None:
    pw = tuple(p.pad_width)
    if len(shape) not in (4, 5):
        raise ShapeError(f"Pad: data of shape {fmt(shape)} must be 4-D or 5-D")
    if len(pw) != 2 * len(shape):
        raise OpAttributeError(f"Pad: pad_width={pw} must have {2 * len(shape)} entries "
                               f"(before, after) per axis of {len(shape)}-D data")
    if any(pw[:4]) or min(pw) < 0:
        raise OpAttributeError(f"Pad: pad_width={pw} must be >= 0 and 0 on the first two "
                               "axes (batch and channel)")
    if p.mode == "reflect" and any(pw[2 * i] >= shape[i] or pw[2 * i + 1] >= shape[i]
                                   for i in (2, 3) if shape[i]):
        raise OpAttributeError(f"Pad: reflect padding {pw} must be smaller than the data's "
                               f"spatial size {fmt(shape)}")


def _pad_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    _pad_check(p, tuple(data))
    pw = p.pad_width
    out = tuple(d + pw[2 * i] + pw[2 * i + 1] if d else 0 for i, d in enumerate(data))
    return in_shapes, [out]


def _pad(p, x):
    float_only("Pad", x)
    _pad_check(p, x.shape)
    pw = [(p.pad_width[2 * i], p.pad_width[2 * i + 1]) for i in range(x.ndim)]
    if p.mode == "constant":
        return np.pad(x, pw, mode="constant", constant_values=x.dtype.type(p.constant_value))
    return np.pad(x, pw, mode=p.mode)


def _grad_pad(F, p, inputs, outputs, ograds):
    return [F._internal._backward_Pad(ograds[0], inputs[0], **_grad_attrs(p))]


register(OpDef(
    "Pad",
    params={"mode": Enum(("constant", "edge", "reflect")), "pad_width": Shape(),
            "constant_value": Float(0.0)}, gradient=_grad_pad,
    compute=_pad, infer_shape=_pad_shape, aliases=("pad",), sized_by_attrs=True,
    doc="Pad the spatial axes of 4-D/5-D data (constant, edge or reflect).",
    lists_output_names=True))


gather_backward("_backward_Pad", "Pad")


# --- Crop ------------------------------------------------------------------------------------
def _crop_hw(p, shapes: list) -> tuple[int, int] | None:
    data = shapes[0]
    if p.num_args not in (1, 2):
        raise OpAttributeError(f"Crop: num_args={p.num_args} must be 1 (use h_w) or 2 (crop "
                               "like a second input)")
    if p.num_args == 2:
        like = shapes[1] if len(shapes) > 1 else None
        if like is None:
            return None
        if len(like) != 4:
            raise ShapeError(f"Crop: crop_like of shape {fmt(like)} must be 4-D NCHW")
        hw = (like[2], like[3])
    else:
        hw = tuple(p.h_w)
        if len(hw) != 2 or min(hw) < 1:
            raise OpAttributeError(f"Crop: h_w={p.h_w} must be two sizes >= 1")
    if (data[2] and hw[0] > data[2]) or (data[3] and hw[1] > data[3]):
        raise ShapeError(f"Crop: crop size {hw} exceeds data {fmt(data)}")
    return hw


def _crop_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"Crop: data of shape {fmt(data)} must be 4-D NCHW")
    hw = _crop_hw(p, in_shapes)
    return in_shapes, [None if hw is None else (data[0], data[1], *hw)]


def _crop(p, x, *like):
    h, w = _crop_shape(p, [x.shape] + [a.shape for a in like])[1][0][2:]
    if p.center_crop:
        y0, x0 = (x.shape[2] - h) // 2, (x.shape[3] - w) // 2
    else:
        y0, x0 = tuple(p.offset)
        if not (0 <= y0 <= x.shape[2] - h and 0 <= x0 <= x.shape[3] - w):
            raise ShapeError(f"Crop: offset {p.offset} puts the {h}x{w} crop outside data "
                             f"{x.shape}")
    return x[:, :, y0:y0 + h, x0:x0 + w].copy()


def _grad_crop(F, p, inputs, outputs, ograds):
    """``_backward_Crop``; the crop_like input gets none (MXNet: zeros)."""
    back = F._internal._backward_Crop(ograds[0], *inputs, **_grad_attrs(p))
    return [back] + [None] * (len(inputs) - 1)


register(OpDef(
    "Crop",
    params={"num_args": Int(), "offset": Shape((0, 0)), "h_w": Shape((0, 0)),
            "center_crop": Bool(False)},
    variadic="num_args", compute=_crop, infer_shape=_crop_shape, gradient=_grad_crop,
    doc="Legacy crop of NCHW data to h_w or to a second input's height and width.",
    lists_output_names=True))


gather_backward("_backward_Crop", "Crop", lambda p: ("crop_like",) if p.num_args == 2 else ())


# --- ONNX export: AdaptiveAvgPooling2D, BilinearResize2D -------------------------------------
def _separable(ctx: LoweringContext, x: str, rows: np.ndarray, cols: np.ndarray) -> str:
    """``rows @ x @ cols.T`` on the last two axes (MatMul broadcasts over N and C)."""
    y = ctx.make("MatMul", [ctx.const(rows, "rows"), x])
    return ctx.make("MatMul", [y, ctx.const(np.ascontiguousarray(cols.T), "cols")])


def _adaptive_onnx(ctx: LoweringContext) -> None:
    """Output 1x1: GlobalAveragePool; sizes dividing the input: AveragePool with kernel =
    stride; otherwise MXNet's windows ``[floor(i*x/o), ceil((i+1)*x/o))`` as two MatMuls with
    averaging matrices (float64 always so: onnxruntime has no double AveragePool)."""
    work = float_onnx(ctx, "AdaptiveAvgPooling2D")
    oh, ow = _adaptive_size(ctx.params, tuple(ctx.shape))
    x = win.as_dtype(ctx, 0, work)
    if (oh, ow) == (1, 1):
        y = win.global_pool(ctx, x, "avg", 1, 4, work)
    else:
        h, w = _static_spatial_pool(ctx, "AdaptiveAvgPooling2D to a size other than 1x1")
        if work != np.float64 and h % oh == 0 and w % ow == 0:
            k = [h // oh, w // ow]
            y = ctx.make("AveragePool", [x], kernel_shape=k, strides=k)
        else:
            y = _separable(ctx, x, _adaptive_matrix(h, oh, work), _adaptive_matrix(w, ow, work))
    win.finish(ctx, y, work)


def _static_spatial_pool(ctx: LoweringContext, what: str) -> tuple[int, int]:
    if ctx.is_dynamic(0, 2) or ctx.is_dynamic(0, 3):
        raise ctx.fail(f"{what} needs H and W fixed at export time; export with a dynamic "
                       "batch axis only")
    return int(ctx.shape[2]), int(ctx.shape[3])


def _interp_matrix(n_in: int, n_out: int, align_corners: bool, dtype) -> np.ndarray:
    """(n_out, n_in) bilinear weights from MXNet's source coordinates."""
    lo, hi, w0, w1 = _source_coords(n_in, n_out, align_corners)
    m = np.zeros((n_out, n_in), np.float64)
    np.add.at(m, (np.arange(n_out), lo), w0.astype(np.float64))
    np.add.at(m, (np.arange(n_out), hi), w1.astype(np.float64))
    return m.astype(dtype)


def _scaled_dim(ctx: LoweringContext, scale: float, x) -> int | str:
    """``int(float32(scale) * x)`` for a known or run-time size."""
    if isinstance(x, int):
        return _scaled(scale, x)
    f = ctx.make("Mul", [ctx.cast_to(x, np.float32), ctx.const(np.float32(scale), "scale")])
    return ctx.cast_to(ctx.make("Floor", [f]), np.int64)


def _resize_dim(ctx: LoweringContext, mode: str, x, scale: float | None) -> int | str:
    """One output size of a computed mode, from the size ``x`` (int or int64 tensor)."""
    if mode == "size":
        return _scaled_dim(ctx, scale, x)
    r = win.arith(ctx, "Mod", x, 2)
    if mode == "odd_scale":  # even: int(s*x); odd: int(s*(x-1)) + 1
        return win.arith(ctx, "Add", _scaled_dim(ctx, scale, win.arith(ctx, "Sub", x, r)), r)
    if mode == "to_even_down":
        return win.arith(ctx, "Sub", x, r)
    if mode == "to_even_up":
        return win.arith(ctx, "Add", x, r)
    if mode == "to_odd_down":
        return win.arith(ctx, "Add", win.arith(ctx, "Sub", x, 1), r)
    return win.arith(ctx, "Sub", win.arith(ctx, "Add", x, 1), r)  # to_odd_up


def _resize_sizes(ctx: LoweringContext) -> list:
    """MXNet's output (H, W) as ints or run-time int64 tensors (dynamic H/W)."""
    p = ctx.params
    if p.mode == "like":
        return [win.dim(ctx, 1, 2), win.dim(ctx, 1, 3)]
    if not (ctx.is_dynamic(0, 2) or ctx.is_dynamic(0, 3)):
        return list(_resize_hw(p, tuple(ctx.shape), None))
    if p.mode == "size" and p.scale_height is None:
        return [p.height, p.width]
    _resize_hw(p, tuple(ctx.shape), None)  # MXNet's attribute checks
    scales = (p.scale_height, p.scale_width)
    return [_resize_dim(ctx, p.mode, win.dim(ctx, 0, a), s) for a, s in zip((2, 3), scales)]


def _resize_onnx(ctx: LoweringContext) -> None:
    """``Resize`` linear: align_corners=True is 'align_corners'; False is MXNet's
    ``max((dst+0.5)*x/o - 0.5, 0)`` with a single output row at 0, which is
    'pytorch_half_pixel'. Sizes from the mode (``Shape`` of the like input, run-time
    arithmetic for dynamic H/W). float64: separable MatMuls (no onnxruntime double Resize)."""
    p = ctx.params
    work = float_onnx(ctx, "BilinearResize2D")
    x = win.as_dtype(ctx, 0, work)
    hw = _resize_sizes(ctx)
    if work == np.float64:
        if not all(isinstance(v, int) for v in hw):
            raise ctx.fail("float64 BilinearResize2D needs its output size fixed at export "
                           "time (onnxruntime has no double Resize; it is lowered to MatMuls)")
        h, w = _static_spatial_pool(ctx, "float64 BilinearResize2D")
        y = _separable(ctx, x, _interp_matrix(h, hw[0], p.align_corners, work),
                       _interp_matrix(w, hw[1], p.align_corners, work))
        win.finish(ctx, y, work)
        return
    if ctx.opset >= 18:
        sizes, axes = win.vec(ctx, hw), [2, 3]
    else:
        nc = [win.dim(ctx, 0, 0), win.dim(ctx, 0, 1)]
        sizes, axes = win.vec(ctx, nc + hw), None
    mode = "align_corners" if p.align_corners else "pytorch_half_pixel"
    y = ctx.make("Resize", [x, "", "", sizes], mode="linear", axes=axes,
                 coordinate_transformation_mode=mode)
    win.finish(ctx, y, work)


def _separable_backward_onnx(adaptive: bool):
    """``rows.T @ og @ cols`` with the forward's (static) matrices, in float32 for float16."""

    def handler(ctx: LoweringContext) -> None:
        if any(ctx.is_dynamic(i, a) for i in (0, 1) for a in (2, 3)):
            raise ctx.fail("the gradient needs H and W fixed at export time")
        h, w = (int(v) for v in ctx.in_shapes[1][2:])
        oh, ow = (int(v) for v in ctx.in_shapes[0][2:])
        work = win.work_dtype(ctx.in_dtypes[1])
        if adaptive:
            mh, mw = _adaptive_matrix(h, oh, work), _adaptive_matrix(w, ow, work)
        else:
            align = ctx.params.align_corners
            mh, mw = _interp_matrix(h, oh, align, work), _interp_matrix(w, ow, align, work)
        og = win.as_dtype(ctx, 0, work)
        win.finish(ctx, _separable(ctx, og, np.ascontiguousarray(mh.T),
                                   np.ascontiguousarray(mw.T)), work,
                   out_dtype=ctx.in_dtypes[1])

    return handler


lowering("_contrib_AdaptiveAvgPooling2D")(_adaptive_onnx)
lowering("_contrib_BilinearResize2D")(_resize_onnx)
lowering("_backward_contrib_AdaptiveAvgPooling2D")(_separable_backward_onnx(True))
lowering("_backward_contrib_BilinearResize2D")(_separable_backward_onnx(False))


# --- ONNX export: Pad, Crop ------------------------------------------------------------------
def _pad_onnx(ctx: LoweringContext) -> None:
    """``Pad``: MXNet's (before0, after0, before1, after1, ...) become ONNX's befores then
    afters; the constant is cast to the data dtype, as MXNet does."""
    p = ctx.params
    float_onnx(ctx, "Pad")
    _pad_check(p, tuple(ctx.shape))
    pw = [int(v) for v in p.pad_width]
    pads = ctx.ints(pw[0::2] + pw[1::2], "pads")
    ins = [ctx.inputs[0], pads]
    if p.mode == "constant":
        ins.append(ctx.const(np.asarray(p.constant_value, ctx.dtype), "value"))
    ctx.make("Pad", ins, outputs=[ctx.outputs[0]], mode=p.mode)


def _crop_onnx(ctx: LoweringContext) -> None:
    """``Slice`` of H and W (the batch stays dynamic): the size from h_w or the like input's
    ``Shape``, the start from offset or centred, ``(H - h) // 2``."""
    p = ctx.params
    _crop_shape(p, [tuple(s) for s in ctx.in_shapes])
    if p.num_args == 2:
        size = [win.dim(ctx, 1, 2), win.dim(ctx, 1, 3)]
    else:
        size = [int(v) for v in p.h_w]
    if p.center_crop:
        start = [win.arith(ctx, "Div", win.arith(ctx, "Sub", win.dim(ctx, 0, a), s), 2)
                 for a, s in zip((2, 3), size)]
    else:
        start = [int(v) for v in p.offset]
        known = all(isinstance(v, int) for v in size) and not (
            ctx.is_dynamic(0, 2) or ctx.is_dynamic(0, 3))  # else Slice clamps at run time
        if known and not all(0 <= b <= ctx.shape[2 + i] - size[i] for i, b in enumerate(start)):
            raise ctx.fail(f"offset {p.offset} puts the {size[0]}x{size[1]} crop outside "
                           f"data {tuple(ctx.shape)}")
    end = [win.arith(ctx, "Add", b, s) for b, s in zip(start, size)]
    ctx.make("Slice", [ctx.inputs[0], win.vec(ctx, start), win.vec(ctx, end),
                       ctx.ints([2, 3], "axes")], outputs=[ctx.outputs[0]])


lowering("Pad")(_pad_onnx)
lowering("Crop")(_crop_onnx)
