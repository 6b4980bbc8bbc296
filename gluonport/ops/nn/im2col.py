"""im2col and col2im (MXNet 1.9.1's ``src/operator/nn/im2col.h``): the unfolding of sliding
convolution windows into columns and its adjoint (overlapping columns sum), with their ONNX
lowerings. They share the convolution geometry (``kernel``, ``stride``, ``dilate``, ``pad``) of
:mod:`.conv`. Each is the other's gradient (``_backward_im2col``: col2im into the data's shape).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._core.attr_fields import Params, Shape
from ...errors import DTypeError, OpAttributeError, ShapeError
from ..infer import fmt
from ..lowering import LoweringContext, lowering
from ..lowering import window as win
from ..registry import OpDef, register
from .conv import (
    Geometry,
    check_data,
    conv_out_size,
    geometry,
    pad_input,
    static_spatial,
    tap_offsets,
    window_view,
)

__all__: list[str] = []


# --- im2col / col2im ------------------------------------------------------------------------
_IM2COL = {"kernel": Shape(), "stride": Shape(()), "dilate": Shape(()), "pad": Shape(())}


def _float_data(op: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: data of dtype {x.dtype} is not supported (MXNet supports "
                         "floating point types only); cast it with .astype('float32')")


def _col_sizes(g: Geometry, sp: Sequence[int], op: str) -> list[int]:
    out = [conv_out_size(x, k, s, d, p) for x, k, s, d, p in
           zip(sp, g.kernel, g.stride, g.dilate, g.pad)]
    if any(x and o < 1 for x, o in zip(sp, out)):
        raise ShapeError(f"{op}: kernel {g.kernel} (dilate {g.dilate}) exceeds the spatial "
                         f"shape {tuple(sp)} padded by {g.pad}")
    return out


def _im2col(p, x: np.ndarray) -> np.ndarray:
    """Every kernel tap of every output window: (N, C * prod(kernel), windows), rows channel
    major then tap (C order), windows row major; zero padding."""
    g = geometry(p, "im2col")
    _float_data("im2col", x)
    check_data(x.shape, g, "im2col")
    out_sp = _col_sizes(g, x.shape[2:], "im2col")
    cols = np.ascontiguousarray(window_view(pad_input(x, g), g, out_sp))
    return cols.reshape(x.shape[0], -1, int(np.prod(out_sp)))


def _im2col_shape(p, in_shapes):
    g, data = geometry(p, "im2col"), in_shapes[0]
    if data is None:
        return in_shapes, [None]
    check_data(data, g, "im2col")
    n, c, *sp = data
    out_sp = _col_sizes(g, sp, "im2col")
    return in_shapes, [(n, c * int(np.prod(g.kernel)), 0 if 0 in sp else int(np.prod(out_sp)))]


def _col2im_dims(p, cols: tuple | None) -> tuple[Geometry, tuple, list[int]]:
    """Geometry, output size and window counts of col2im; checks ``cols`` (N, C*taps, L)."""
    g = geometry(p, "col2im")
    size = tuple(int(v) for v in p.output_size)
    if len(size) != g.nd:
        raise OpAttributeError(f"col2im: output_size={size} must have {g.nd} entries like "
                               f"kernel={g.kernel}")
    out_sp = _col_sizes(g, size, "col2im")
    t, windows = int(np.prod(g.kernel)), int(np.prod(out_sp))
    if cols is not None:
        if len(cols) != 3 or (cols[1] and cols[1] % t) or (cols[2] and cols[2] != windows):
            raise ShapeError(f"col2im: data {fmt(cols)} must be (N, C * {t}, {windows}) for "
                             f"kernel {g.kernel}, output_size {size}, stride {g.stride}, dilate "
                             f"{g.dilate} and pad {g.pad}")
    return g, size, out_sp


def _col2im(p, cols: np.ndarray) -> np.ndarray:
    """Sum every column entry into the image position its window tap reads (col2im), then
    drop the padding: (N, C, *output_size)."""
    _float_data("col2im", cols)
    g, size, out_sp = _col2im_dims(p, cols.shape)
    n, t = cols.shape[0], int(np.prod(g.kernel))
    taps = cols.reshape(n, -1, t, *out_sp)
    full = np.zeros((n, taps.shape[1], *(v + 2 * q for v, q in zip(size, g.pad))), cols.dtype)
    for i, k in enumerate(tap_offsets(g.kernel)):
        window = tuple(slice(ki * d, ki * d + (o - 1) * s + 1, s) for ki, d, o, s in
                       zip(k, g.dilate, out_sp, g.stride))
        full[(slice(None), slice(None)) + window] += taps[:, :, i]
    crop = tuple(slice(q, q + v) for q, v in zip(g.pad, size))
    return np.ascontiguousarray(full[(slice(None), slice(None)) + crop])


def _col2im_shape(p, in_shapes):
    cols = in_shapes[0]
    g, size, _ = _col2im_dims(p, None if cols is None else tuple(cols))
    if cols is None:
        return in_shapes, [None]
    c = cols[1] // int(np.prod(g.kernel))
    return in_shapes, [(cols[0], c, *size)]


def _attrs(p) -> dict:
    return {k: v for k, v in p.as_dict().items() if v is not None and k != "output_size"}


def _grad_im2col(F, p, inputs, outputs, ograds):
    """``_backward_im2col``: col2im of the output gradient into the data's shape."""
    return [F._internal._backward_im2col(ograds[0], inputs[0], **_attrs(p))]


def _grad_col2im(F, p, inputs, outputs, ograds):
    """im2col of the output gradient (MXNet's ``_backward_col2im`` computes the same)."""
    return [F.im2col(ograds[0], **_attrs(p))]


def _backward_im2col(p, og: np.ndarray, x: np.ndarray) -> np.ndarray:
    q = Params({**p.as_dict(), "output_size": tuple(x.shape[2:])})
    return _col2im(q, og).astype(x.dtype, copy=False)


register(OpDef(
    "im2col", params=_IM2COL, compute=_im2col, infer_shape=_im2col_shape,
    gradient=_grad_im2col,
    doc="Sliding-window columns of (N, C, *spatial) data: (N, C * prod(kernel), windows).",
    lists_output_names=True))
register(OpDef(
    "col2im", params={"output_size": Shape(), **_IM2COL}, compute=_col2im,
    infer_shape=_col2im_shape, gradient=_grad_col2im,
    doc="Inverse layout of im2col, overlapping entries summed: (N, C, *output_size).",
    lists_output_names=True))




register(OpDef(
    "_backward_im2col", params=_IM2COL, inputs=("ograd", "data"), compute=_backward_im2col,
    infer_shape=lambda p, s: (list(s), [s[1]]), infer_type=lambda p, t: (list(t), [t[1]]),
    no_gradient="a backward kernel (MXNet 1.9.1 registers no gradient for it either)",
    doc="im2col's gradient: col2im of the output gradient (input 0) into the shape of the "
        "data (input 1, read for its shape)."))


# --- ONNX lowerings ---------------------------------------------------------------------------
def _im2col_onnx(ctx: LoweringContext) -> None:
    g = geometry(ctx.params, "im2col")
    sp = static_spatial(ctx, False, "im2col")
    out_sp = _col_sizes(g, sp, "im2col")
    y = win.im2col(ctx, ctx.inputs[0], g.kernel, g.stride, g.dilate, g.pad, out_sp)
    ctx.make("Identity", [y], outputs=ctx.outputs[:1])


def _col2im_onnx(ctx: LoweringContext) -> None:
    g, size, out_sp = _col2im_dims(ctx.params, tuple(ctx.shape))
    y = win.col2im(ctx, ctx.inputs[0], g.kernel, g.stride, g.dilate, g.pad, out_sp, size)
    ctx.make("Identity", [y], outputs=ctx.outputs[:1])


def _backward_im2col_onnx(ctx: LoweringContext) -> None:
    g = geometry(ctx.params, "im2col")
    if any(ctx.is_dynamic(1, a) for a in range(2, len(ctx.in_shapes[1]))):
        raise ctx.fail("im2col's gradient needs the data's spatial dims fixed at export time")
    size = tuple(int(v) for v in ctx.in_shapes[1][2:])
    out_sp = _col_sizes(g, size, "im2col")
    y = win.col2im(ctx, ctx.inputs[0], g.kernel, g.stride, g.dilate, g.pad, out_sp, size)
    ctx.make("Identity", [y], outputs=ctx.outputs[:1])


lowering("im2col")(_im2col_onnx)
lowering("col2im")(_col2im_onnx)
lowering("_backward_im2col")(_backward_im2col_onnx)
