"""Convolution operators: ``Convolution``, ``Convolution_v1``, ``Deconvolution``, ``UpSampling``
(float data only, as MXNet; MXNet 1.9.1's kernels fail on 1-D and 3-D kernels, computed here).

MXNet 1.9.1 semantics kept here:

* ``kernel`` has 1, 2 or 3 entries (1-D, 2-D, 3-D); an empty ``stride``/``dilate``/``pad`` (or
  ``adj`` for Deconvolution) means 1/1/0 per spatial axis (MXNet's ``ParamParser``).
* Output size ``floor((x + 2p - d(k-1) - 1) / s) + 1``; weight ``(num_filter, C/num_group,
  *kernel)``; ``infer_shape`` completes weight and bias shapes from the data shape.
* ``Deconvolution``: weight ``(C, num_filter/num_group, *kernel)``, ``no_bias`` defaults to
  True, output ``s(x-1) + d(k-1) + 1 - 2p + adj``; a non-zero ``target_shape`` replaces
  ``pad``/``adj`` by MXNet's ``InferPad`` (``pad = ceil(t/2)``, ``adj = t % 2`` with
  ``t = s(x-1) + d(k-1) + 1 - target``).
* ``layout`` NHWC/NDHWC (weight ``(F, *kernel, C/g)``) is computed although MXNet 1.9.1
  refuses it on CPU; float16 is computed in float32 (MXNet's CPU build refuses it); int8/uint8
  sums are exact, saturated to the dtype (as oneDNN); other integer dtypes are refused.
* ``UpSampling`` nearest repeats pixels (several inputs each scaled to the first one's output
  size, then concatenated on channels or summed); bilinear is a depthwise Deconvolution
  (kernel ``2s - s % 2``, stride ``s``, pad ``ceil((s-1)/2)``) on a ``weight`` (C, 1, k, k),
  whose auto-created variable gets ``__init__ ["bilinear", {}]`` as in MXNet.

BLAS-backed compute (``conv_kernels.py``): an im2col copy of a strided view of the padded
input, then one matmul per group (:func:`conv_nd`); 1x1 is one matmul; depthwise
multiply-accumulates one flat slice per tap; Deconvolution is one matmul and a strided add per
tap (:func:`deconv_nd`). Gradients are one ``_backward_*`` kernel op each (``conv_grad.py``).

ONNX export (opset 13+): ``Conv``/``ConvTranspose`` with MXNet's pads, dilations and groups
(``adj`` and ``target_shape`` become pads and ``output_padding`` exactly as MXNet's InferPad
computes them), channels-last data transposed around them, float16 in float32, int8/uint8 sums
exact then saturated; float64 as im2col + ``MatMul`` (no double Conv in onnxruntime); bilinear
UpSampling is the same depthwise ``ConvTranspose``, nearest is ``Resize``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..._core.attr_fields import Bool, Enum, Int, Optional, Shape
from ...errors import DTypeError, OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, conv_gemm, lowering
from ..lowering import window as win
from ..registry import OpDef, register
from .conv_kernels import (
    conv_nd,
    conv_out_size,
    deconv_nd,
    pad_input,
    tap_offsets,
    window_view,
)

__all__ = ["Geometry", "geometry", "conv_params", "conv_nd", "deconv_nd", "conv_out_size",
           "deconv_pad_adj", "check_data", "pad_input", "tap_offsets", "window_view",
           "static_spatial"]

_CONV_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NHWC", "NDHWC")
_TUNE = Optional(Enum(("off", "limited_workspace", "fastest")))


def conv_params(layouts: Sequence[str] = _CONV_LAYOUTS, deconv: bool = False) -> dict:
    """MXNet's ConvolutionParam / DeconvolutionParam fields in declaration order."""
    fields: dict = {"kernel": Shape(), "stride": Shape(()), "dilate": Shape(()),
                    "pad": Shape(())}
    if deconv:
        fields.update({"adj": Shape(()), "target_shape": Shape(())})
    fields.update({
        "num_filter": Int(), "num_group": Int(1), "workspace": Int(512 if deconv else 1024),
        "no_bias": Bool(deconv), "cudnn_tune": _TUNE, "cudnn_off": Bool(False),
        "layout": Optional(Enum(layouts))})
    return fields


# --- geometry ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Geometry:
    """Normalised spatial attributes of one convolution-like node (tuples of ``nd`` ints)."""

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilate: tuple[int, ...]
    pad: tuple[int, ...]
    channels_last: bool

    @property
    def nd(self) -> int:
        return len(self.kernel)

    def dilated(self, i: int) -> int:
        return (self.kernel[i] - 1) * self.dilate[i] + 1


def _fill(name: str, value: tuple, nd: int, default: int, op: str) -> tuple[int, ...]:
    if not value:
        return (default,) * nd
    if len(value) != nd:
        raise OpAttributeError(f"{op}: {name}={value} must have {nd} entries like kernel "
                               f"(one per spatial axis)")
    return tuple(int(v) for v in value)


def geometry(p, op: str, layouts: Sequence[str] = _CONV_LAYOUTS) -> Geometry:
    """MXNet's ParamParser: fill empty stride/dilate/pad from the kernel rank, check ranks."""
    kernel = tuple(int(k) for k in p.kernel)
    nd = len(kernel)
    if nd not in (1, 2, 3) or min(kernel) < 1:
        raise OpAttributeError(f"{op}: kernel={p.kernel} must have 1, 2 or 3 positive entries")
    stride = _fill("stride", p.stride, nd, 1, op)
    dilate = _fill("dilate", p.get("dilate", ()), nd, 1, op)
    pad = _fill("pad", p.pad, nd, 0, op)
    if min(stride) < 1 or min(dilate) < 1 or min(pad) < 0:
        raise OpAttributeError(f"{op}: stride {stride} and dilate {dilate} must be >= 1 and "
                               f"pad {pad} >= 0")
    layout = p.get("layout")
    if layout is not None and len(layout) != nd + 2:
        raise OpAttributeError(f"{op}: layout={layout!r} does not fit a {nd}-D kernel; use "
                               f"{[x for x in layouts if len(x) == nd + 2]} or leave it unset")
    return Geometry(kernel, stride, dilate, pad, layout is not None and layout[-1] == "C")


def _groups(p, op: str) -> int:
    if p.num_filter < 1 or p.num_group < 1 or p.num_filter % p.num_group:
        raise OpAttributeError(f"{op}: num_filter={p.num_filter} must be a positive multiple "
                               f"of num_group={p.num_group}")
    return int(p.num_group)


def _cf(shape: tuple, last: bool) -> tuple:
    """A channels-last shape as channels-first (N, C, *spatial)."""
    return (shape[0], shape[-1], *shape[1:-1]) if last else tuple(shape)


def _uncf(shape: tuple, last: bool) -> tuple:
    return (shape[0], *shape[2:], shape[1]) if last else tuple(shape)


def deconv_pad_adj(p, g: Geometry, spatial: Sequence[int]) -> tuple[tuple, tuple]:
    """MXNet's ``DeconvolutionParam::InferPad``: pad and adj, from target_shape when set."""
    target = tuple(p.target_shape)
    if not any(target):
        return g.pad, _fill("adj", p.adj, g.nd, 0, "Deconvolution")
    if len(target) != g.nd:
        raise OpAttributeError(f"Deconvolution: target_shape={target} must have {g.nd} entries")
    pads, adjs = [], []
    for i, x in enumerate(spatial):
        total = g.stride[i] * (x - 1) + g.dilated(i)
        if x and total < target[i]:
            raise ShapeError(f"Deconvolution: target_shape {target} is too big for input "
                             f"spatial shape {tuple(spatial)}")
        t = total - target[i]
        pads.append((t + 1) // 2 if x else 0)
        adjs.append(t % 2 if x else 0)
    return tuple(pads), tuple(adjs)


# --- shape rules ---------------------------------------------------------------------------
def check_data(data: tuple, g: Geometry, op: str) -> None:
    if len(data) != g.nd + 2:
        raise ShapeError(f"{op}: data of shape {fmt(data)} does not fit the {g.nd}-D kernel "
                         f"{g.kernel}; it must be {g.nd + 2}-D (batch, channel, spatial...)")


def _data_dims(p, op: str, data: tuple | None):
    """Geometry, groups and the channels-first ``(n, c, spatial)`` of the data shape, checked
    for rank and channel divisibility (shared by Convolution and Deconvolution); ``None`` when
    the data shape is unknown (the attributes are validated either way)."""
    g, groups = geometry(p, op), _groups(p, op)
    if data is None:
        return None
    check_data(data, g, op)
    n, c, *sp = _cf(tuple(data), g.channels_last)
    if c and c % groups:
        raise ShapeError(f"{op}: {c} input channels (data {fmt(data)}) are not divisible by "
                         f"num_group={groups}")
    return g, groups, n, c, sp


def _conv_shape(p, in_shapes):
    data = in_shapes[0]
    dims = _data_dims(p, "Convolution", data)
    if dims is None:
        return in_shapes, [None]
    g, groups, n, c, sp = dims
    wshape = _uncf((p.num_filter, c // groups, *g.kernel), g.channels_last)
    ins = list(in_shapes)
    ins[1] = merge(in_shapes[1], wshape, "weight: ")
    if not p.no_bias:
        ins[2] = merge(in_shapes[2], (p.num_filter,), "bias: ")
    for i, x in enumerate(sp):
        if x and g.dilated(i) > x + 2 * g.pad[i]:
            raise ShapeError(f"Convolution: kernel {g.kernel} (dilate {g.dilate}) exceeds data "
                             f"{fmt(data)} padded by {g.pad}")
    out = [conv_out_size(x, g.kernel[i], g.stride[i], g.dilate[i], g.pad[i])
           for i, x in enumerate(sp)]
    return ins, [_uncf((n, p.num_filter, *out), g.channels_last)]


def _deconv_out(p, g: Geometry, sp: Sequence[int]) -> list[int]:
    pad, adj = deconv_pad_adj(p, g, sp)
    for i in range(g.nd):
        if adj[i] > g.stride[i] - 1:
            raise OpAttributeError(f"Deconvolution: adj {adj} must be smaller than stride "
                                   f"{g.stride}")
    out = [g.stride[i] * (x - 1) + g.dilated(i) - 2 * pad[i] + adj[i] if x else 0
           for i, x in enumerate(sp)]
    target = tuple(p.target_shape)
    for i, t in enumerate(target[:g.nd]):
        if t and out[i] and t != out[i]:
            raise ShapeError(f"Deconvolution: target_shape {target} cannot be reached from "
                             f"input spatial shape {tuple(sp)}")
    return out


def _deconv_shape(p, in_shapes):
    data = in_shapes[0]
    dims = _data_dims(p, "Deconvolution", data)
    if dims is None:
        return in_shapes, [None]
    g, groups, n, c, sp = dims
    ins = list(in_shapes)
    wshape = _uncf((c, p.num_filter // groups, *g.kernel), g.channels_last)
    ins[1] = merge(in_shapes[1], wshape, "weight: ")
    if not p.no_bias:
        ins[2] = merge(in_shapes[2], (p.num_filter,), "bias: ")
    out = _deconv_out(p, g, sp)
    return ins, [_uncf((n, p.num_filter, *out), g.channels_last)]


# --- dtypes ----------------------------------------------------------------------------------
def _run_in_float(op: str, fn, x: np.ndarray, *rest):
    """Run ``fn`` in a float dtype and give MXNet's output dtype back."""
    dt = x.dtype
    if dt in (np.float32, np.float64):
        return fn(x, *(None if r is None else r.astype(dt, copy=False) for r in rest))
    if dt == np.float16:
        out = fn(x.astype(np.float32), *(None if r is None else r.astype(np.float32)
                                          for r in rest))
        return out.astype(np.float16)
    if dt in (np.int8, np.uint8):
        out = fn(x.astype(np.float64), *(None if r is None else r.astype(np.float64)
                                          for r in rest))
        info = np.iinfo(dt)
        return np.clip(np.rint(out), info.min, info.max).astype(dt)
    raise DTypeError(f"{op}: data of dtype {dt} is not supported (MXNet computes it only for "
                     "float16/32/64 and int8/uint8); cast the input to float32")


# --- computes --------------------------------------------------------------------------------
def _to_cf(a: np.ndarray, last: bool) -> np.ndarray:
    return np.moveaxis(a, -1, 1) if last else a


def _from_cf(a: np.ndarray, last: bool) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)) if last else a


def _check_params(op: str, w: np.ndarray, want: tuple, b: np.ndarray | None = None,
                  n_out: int = 0) -> None:
    """Weight (and bias) shapes must be what ``infer_shape`` would give."""
    if tuple(w.shape) != tuple(want):
        raise ShapeError(f"{op}: weight has shape {tuple(w.shape)}, expected {tuple(want)} "
                         "from the data shape and attributes")
    if b is not None and tuple(b.shape) != (n_out,):
        raise ShapeError(f"{op}: bias has shape {tuple(b.shape)}, expected ({n_out},)")


def _conv(p, x, w, b=None, op: str = "Convolution"):
    g, groups = geometry(p, op), _groups(p, op)
    check_data(x.shape, g, op)
    xc, wc = _to_cf(x, g.channels_last), _to_cf(w, g.channels_last)
    b = None if p.no_bias else b
    _check_params(op, wc, (p.num_filter, xc.shape[1] // groups, *g.kernel), b, p.num_filter)
    out = _run_in_float(op, lambda a, k, c: conv_nd(a, k, c, g, groups), xc, wc, b)
    return _from_cf(out, g.channels_last)


def _deconv(p, x, w, b=None):
    op = "Deconvolution"
    g, groups = geometry(p, op), _groups(p, op)
    check_data(x.shape, g, op)
    xc, wc = _to_cf(x, g.channels_last), _to_cf(w, g.channels_last)
    b = None if p.no_bias else b
    _check_params(op, wc, (xc.shape[1], p.num_filter // groups, *g.kernel), b, p.num_filter)
    pad, _ = deconv_pad_adj(p, g, xc.shape[2:])
    out_sp = _deconv_out(p, g, xc.shape[2:])
    out = _run_in_float(op, lambda a, k, c: deconv_nd(a, k, c, g, pad, out_sp, groups),
                        xc, wc, b)
    return _from_cf(out, g.channels_last)


def _conv_inputs(p):
    return ("data", "weight") if p.no_bias else ("data", "weight", "bias")


def _grad(op: str):
    """The gradient: one ``_backward_<op>`` kernel (``conv_grad.py``) for every input."""
    def rule(F, p, inputs, outputs, ograds):
        back = getattr(F._internal, op)(ograds[0], *inputs, **{
            k: v for k, v in p.as_dict().items() if v is not None})
        return [back[i] for i in range(len(inputs))]
    return rule


def _data_hint(op: str):
    """What a (de)convolution's weight says about its data's shape (``gluonport inspect``)."""

    def hint(p, weight: tuple, node: str) -> str:
        rank = len(p.kernel)
        spatial = ("W", "H,W", "D,H,W")[rank - 1] if 1 <= rank <= 3 else "..."
        last = (p.layout or "").endswith("C")  # NHWC weights are (O, kh, kw, C/g)
        channels = (weight[-1 if last else 1] * p.num_group if op == "Convolution"
                    else weight[0])
        shape = f"N,{spatial},{channels}" if last else f"N,{channels},{spatial}"
        word = "channel" if channels == 1 else "channels"
        return f"{shape} ({node} is a {rank}-D {op} over {channels} {word})"

    return hint


register(OpDef(
    "Convolution", params=conv_params(_CONV_LAYOUTS), inputs=_conv_inputs,
    infer_shape=_conv_shape, compute=_conv, aliases=("_npx_convolution",),
    fresh_outputs=True, input_hint=_data_hint("Convolution"),
    gradient=_grad("_backward_Convolution"),
    doc="N-D convolution (cross-correlation) over (N+2)-D data, with groups and dilation.",
    lists_output_names=True))

def _v1_check(p) -> None:
    if len(p.kernel) not in (2, 3):
        raise OpAttributeError(f"Convolution_v1: kernel={p.kernel} must be 2-D or 3-D "
                               "(use Convolution for 1-D)")


def _v1_shape(p, in_shapes):
    _v1_check(p)
    return _conv_shape(p, in_shapes)


def _v1_conv(p, x, w, b=None):
    _v1_check(p)
    return _conv(p, x, w, b, "Convolution_v1")


register(OpDef(
    "Convolution_v1", params=conv_params(("NCHW", "NHWC", "NCDHW", "NDHWC")),
    inputs=_conv_inputs, infer_shape=_v1_shape, compute=_v1_conv,
    gradient=_grad("_backward_Convolution"),
    doc="MXNet's pre-1.0 convolution (2-D/3-D); computed like Convolution.",
    lists_output_names=True))

register(OpDef(
    "Deconvolution", params=conv_params(_CONV_LAYOUTS, deconv=True), inputs=_conv_inputs,
    infer_shape=_deconv_shape, compute=_deconv, aliases=("_npx_deconvolution",),
    input_hint=_data_hint("Deconvolution"), sized_by_attrs=True,
    gradient=_grad("_backward_Deconvolution"),
    doc="N-D transposed convolution; weight (C, num_filter/num_group, *kernel).",
    lists_output_names=True))


# --- UpSampling ------------------------------------------------------------------------------
def _up_kernel(scale: int) -> Geometry:
    """The Deconvolution MXNet runs for bilinear UpSampling."""
    k = 2 * scale - scale % 2
    pad = -(-(scale - 1) // 2)
    return Geometry((k, k), (scale, scale), (1, 1), (pad, pad), False)


def _up_inputs(p):
    return ("data", "weight") if p.sample_type == "bilinear" else None


def _up_check(p) -> None:
    if p.scale < 1:
        raise OpAttributeError(f"UpSampling: scale={p.scale} must be >= 1")


def _up_shape(p, in_shapes):
    _up_check(p)
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) != 4:
        raise ShapeError(f"UpSampling: data of shape {fmt(data)} must be 4-D (N, C, H, W)")
    oh, ow = data[2] * p.scale, data[3] * p.scale
    if p.sample_type == "bilinear":
        if len(in_shapes) != 2:
            raise ShapeError("UpSampling: bilinear takes two inputs, data and weight")
        k = _up_kernel(p.scale).kernel[0]
        ins = [data, merge(in_shapes[1], (data[1], 1, k, k), "weight: ")]
        return ins, [(data[0], data[1], oh, ow)]
    channels = 0
    for s in in_shapes:
        if s is None:
            return in_shapes, [None]
        if len(s) != 4 or (s[2] and oh % s[2]) or (s[3] and ow % s[3]):
            raise ShapeError(f"UpSampling: input of shape {fmt(s)} must be 4-D with H, W "
                             f"dividing the output size ({oh}, {ow})")
        if p.multi_input_mode == "sum":
            if channels and s[1] and s[1] != channels:
                raise ShapeError(f"UpSampling: multi_input_mode='sum' needs equal channel "
                                 f"counts; got {fmt(in_shapes[0])} and {fmt(s)}")
            channels = s[1] or channels
        else:
            channels += s[1]
    return in_shapes, [(data[0], channels, oh, ow)]


def _nearest(x: np.ndarray, scale: int) -> np.ndarray:
    n, c, h, w = x.shape
    big = np.broadcast_to(x[:, :, :, None, :, None], (n, c, h, scale, w, scale))
    return big.reshape(n, c, h * scale, w * scale)


def _upsampling(p, *inputs):
    _up_shape(p, [a.shape for a in inputs])
    x = inputs[0]
    if p.sample_type == "bilinear":
        g = _up_kernel(p.scale)
        c = x.shape[1]
        _check_params("UpSampling", inputs[1], (c, 1, *g.kernel))
        out_sp = [h * p.scale for h in x.shape[2:]]
        return _run_in_float("UpSampling", lambda a, k: deconv_nd(a, k, None, g, g.pad, out_sp,
                                                                  c), x, inputs[1])
    if len(inputs) == 1:
        return _nearest(x, p.scale)
    oh = x.shape[2] * p.scale
    ups = [_nearest(a, oh // a.shape[2]) for a in inputs]
    if p.multi_input_mode == "sum":
        return np.sum(ups, axis=0, dtype=x.dtype)
    return np.concatenate(ups, axis=1)


def _grad_up(F, p, inputs, outputs, ograds):
    """Nearest: ``_backward_UpSampling``; bilinear: its depthwise Deconvolution's gradient."""
    if p.sample_type == "nearest":
        back = F._internal._backward_UpSampling(ograds[0], *inputs, **p.as_dict())
        return [back] if len(inputs) == 1 else [back[i] for i in range(len(inputs))]
    g = _up_kernel(p.scale)
    back = F._internal._backward_Deconvolution(
        ograds[0], *inputs, kernel=g.kernel, stride=g.stride, pad=g.pad,
        num_filter=p.num_filter, num_group=p.num_filter, no_bias=True)
    return [back[0], back[1]]


register(OpDef(
    "UpSampling",
    params={"scale": Int(), "num_filter": Int(0), "sample_type": Enum(("nearest", "bilinear")),
            "multi_input_mode": Enum(("concat", "sum"), "concat"), "num_args": Int(),
            "workspace": Int(512)},
    inputs=_up_inputs, variadic="num_args", infer_shape=_up_shape, compute=_upsampling,
    sized_by_attrs=True, gradient=_grad_up,
    # MXNet 1.9.1's FSetInputVarAttrOnCompose sets input 1 whatever the sample_type: the weight
    # when bilinear, the second image (arg1) when nearest.
    var_attrs={"weight": {"__init__": '["bilinear", {}]'},
               "arg1": {"__init__": '["bilinear", {}]'}},
    doc="Nearest-neighbour (several inputs) or bilinear (Deconvolution) upsampling of NCHW.",
    lists_output_names=True))


# --- ONNX export -----------------------------------------------------------------------------
_EXACT_F32 = 1 << 24  # integers up to here are exact in float32


def _conv_work(ctx: LoweringContext, dt: np.dtype, terms: int) -> np.dtype:
    """float16 in float32; int8/uint8 in float32 while every sum of ``terms`` products is exact
    there (float64 otherwise); float32/float64 as they are."""
    if dt.kind in "iu":
        big = max(abs(int(np.iinfo(dt).min)), int(np.iinfo(dt).max))
        return np.dtype(np.float32 if big * big * (terms + 1) < _EXACT_F32 else np.float64)
    if dt not in (np.float16, np.float32, np.float64):
        raise ctx.fail(f"data of dtype {dt} is not supported (MXNet computes convolution only "
                       "for float16/32/64 and int8/uint8); cast the input to float32")
    return win.work_dtype(dt)


def _onnx_weight(ctx: LoweringContext, i: int, last: bool, work: np.dtype) -> np.ndarray | str:
    """Input ``i`` (a weight) channels-first in ``work``: a numpy value for parameters (laid out
    at export time), else a tensor (Transpose/Cast nodes)."""
    value = ctx.param(i)
    if value is not None:
        return np.ascontiguousarray(_to_cf(value, last)).astype(work, copy=False)
    w = win.as_dtype(ctx, i, work)
    return ctx.make("Transpose", [w], perm=win.first_perm(len(ctx.in_shapes[i]))) if last else w


def _as_tensor(ctx: LoweringContext, w: np.ndarray | str, hint: str = "weight") -> str:
    return w if isinstance(w, str) else ctx.const(w, hint)


def static_spatial(ctx: LoweringContext, last: bool, what: str) -> tuple[int, ...]:
    """The spatial dims of input 0, which ``what`` needs fixed at export time."""
    rank = len(ctx.shape)
    axes = range(1, rank - 1) if last else range(2, rank)
    if any(ctx.is_dynamic(0, a) for a in axes):
        raise ctx.fail(f"{what} needs the spatial dims fixed at export time, but they vary "
                       "with the dynamic axes; export with a dynamic batch axis only")
    return tuple(int(ctx.shape[a]) for a in axes)


def _saturate(ctx: LoweringContext, y: str, dt: np.dtype, work: np.dtype) -> str:
    """int8/uint8 outputs: the exact integer sums clipped to the dtype (oneDNN saturates)."""
    if dt.kind not in "iu":
        return y
    info = np.iinfo(dt)
    return ctx.make("Clip", [y, ctx.const(work.type(info.min), "lo"),
                             ctx.const(work.type(info.max), "hi")])


def _conv_onnx(ctx: LoweringContext) -> None:
    """``Conv`` (channels-last data transposed around it; float16 in float32; int8/uint8 exact
    and saturated). float64 is im2col + ``MatMul``: onnxruntime has no double Conv kernel."""
    p, op = ctx.params, ctx.node.op.name
    g, groups = geometry(p, op), _groups(p, op)
    dt, rank, last = np.dtype(ctx.dtype), g.nd + 2, g.channels_last
    channels = _cf(tuple(ctx.shape), last)[1]
    work = _conv_work(ctx, dt, channels // groups * int(np.prod(g.kernel)))
    x = win.to_first(ctx, win.as_dtype(ctx, 0, work), rank, last)
    w = _onnx_weight(ctx, 1, last, work)
    b = None if p.no_bias else win.as_dtype(ctx, 2, work)
    if work == np.float64:
        sp = static_spatial(ctx, last, "float64 convolution (im2col)")
        out_sp = [conv_out_size(v, g.kernel[i], g.stride[i], g.dilate[i], g.pad[i])
                  for i, v in enumerate(sp)]
        cols = win.taps_weight(ctx, w, groups, (p.num_filter, channels // groups, *g.kernel),
                               work)
        y = win.conv_by_taps(ctx, x, cols, b, g.kernel, g.stride, g.dilate, g.pad, g.pad,
                             groups, channels, p.num_filter, out_sp)
    elif work == np.float32 and groups == 1 and not last and isinstance(w, str) \
            and _few_positions(ctx, g):
        # a weight that is an input (training graphs) on small images: one GEMM over the batch
        # (onnxruntime's Conv runs one per sample); a parameter stays one Conv node
        sp = tuple(int(v) for v in ctx.shape[2:])
        cs = conv_gemm.conv_shape(int(ctx.shape[0]), channels, p.num_filter, sp,
                                  ctx.out_shapes[0][2:], g.kernel, g.stride, g.dilate, g.pad)
        y = conv_gemm.convolution(ctx, x, w, b, cs)
    else:
        y = ctx.make("Conv", [x, _as_tensor(ctx, w)] + ([b] if b else []),
                     kernel_shape=list(g.kernel), strides=list(g.stride),
                     dilations=list(g.dilate), pads=list(g.pad) * 2, group=groups)
    y = _saturate(ctx, y, dt, work)
    win.finish(ctx, y, work, win.last_perm(rank) if last else None)


def _few_positions(ctx: LoweringContext, g: Geometry) -> bool:
    """Static spatial dims and at most ``conv_gemm.POSITIONS`` output positions per sample."""
    rank = g.nd + 2
    if any(ctx.is_dynamic(0, a) for a in range(2, rank)) or ctx.out_shapes[0] is None:
        return False
    return int(np.prod([int(v) for v in ctx.out_shapes[0][2:]])) <= conv_gemm.POSITIONS


def _conv_transpose(ctx: LoweringContext, x: str, w: np.ndarray | str, b: str | None, g: Geometry,
                    groups: int, pads, adj, work: np.dtype, in_sp, out_sp) -> str:
    """``ConvTranspose`` (pads both sides, MXNet's adj as ``output_padding``), or in float64
    the exact stride-1 convolution of the zero-interleaved input."""
    w_shape = w.shape if not isinstance(w, str) else _cf(tuple(ctx.in_shapes[1]),
                                                          g.channels_last)
    if work == np.float64:
        return win.deconv_by_taps(ctx, x, w, b, g, pads, adj, groups, w_shape, in_sp, out_sp,
                                  work)
    return ctx.make("ConvTranspose", [x, _as_tensor(ctx, w)] + ([b] if b else []),
                    kernel_shape=list(g.kernel), strides=list(g.stride),
                    dilations=list(g.dilate), pads=list(pads) * 2,
                    output_padding=list(adj) if any(adj) else None, group=groups)


def _deconv_onnx(ctx: LoweringContext) -> None:
    """``ConvTranspose``; ``target_shape`` becomes MXNet's InferPad pads and adj
    (``output_shape`` when the spatial dims are dynamic); float64 computed exactly."""
    p = ctx.params
    g, groups = geometry(p, "Deconvolution"), _groups(p, "Deconvolution")
    dt, rank, last = np.dtype(ctx.dtype), g.nd + 2, g.channels_last
    channels = _cf(tuple(ctx.shape), last)[1]
    work = _conv_work(ctx, dt, channels // groups * int(np.prod(g.kernel)))
    x = win.to_first(ctx, win.as_dtype(ctx, 0, work), rank, last)
    w = _onnx_weight(ctx, 1, last, work)
    b = None if p.no_bias else win.as_dtype(ctx, 2, work)
    dyn = any(ctx.is_dynamic(0, a) for a in (range(1, rank - 1) if last else range(2, rank)))
    if dyn and any(p.target_shape) and work != np.float64:
        y = ctx.make("ConvTranspose", [x, _as_tensor(ctx, w)] + ([b] if b else []),
                     kernel_shape=list(g.kernel), strides=list(g.stride),
                     dilations=list(g.dilate), output_shape=list(p.target_shape),
                     group=groups)
    else:
        sp = _cf(tuple(ctx.shape), last)[2:]
        if dyn and work == np.float64:
            sp = static_spatial(ctx, last, "float64 Deconvolution (im2col)")
        pads, adj = deconv_pad_adj(p, g, sp)
        out_sp = _deconv_out(p, g, sp)
        y = _conv_transpose(ctx, x, w, b, g, groups, pads, adj, work, sp, out_sp)
    y = _saturate(ctx, y, dt, work)
    win.finish(ctx, y, work, win.last_perm(rank) if last else None)


def _nearest_onnx(ctx: LoweringContext, i: int, scale: int, work: np.dtype) -> str:
    """Input ``i`` repeated ``scale`` times along H and W: ``Resize`` (nearest, asymmetric,
    floor: ``x[o // s]``) for float types onnxruntime resizes; else Unsqueeze/Expand/Reshape."""
    x = win.as_dtype(ctx, i, work)
    if scale == 1:
        return x
    if work == np.float32:
        scales = ctx.const(np.array([1, 1, scale, scale], np.float32), "scales")
        return ctx.make("Resize", [x, "", scales], mode="nearest",
                        coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    if ctx.is_dynamic(i, 3):
        raise ctx.fail(f"nearest UpSampling of {work} data needs the width fixed at export time")
    x = ctx.make("Unsqueeze", [x, ctx.ints([3, 5], "axes")])
    x = ctx.make("Expand", [x, ctx.ints([1, 1, 1, scale, 1, scale], "reps")])
    w = int(ctx.in_shapes[i][3]) * scale
    return ctx.make("Reshape", [x, ctx.ints([0, 0, -1, w], "shape")])


def _up_onnx(ctx: LoweringContext) -> None:
    """bilinear: the depthwise ``ConvTranspose`` MXNet runs (kernel ``2s - s % 2``, stride
    ``s``, pad ``ceil((s-1)/2)``) with the weight input; nearest: ``Resize`` per input, then
    ``Concat`` on channels or ``Sum``."""
    p = ctx.params
    _up_check(p)
    dt = np.dtype(ctx.dtype)
    work = win.work_dtype(dt)
    if p.sample_type == "bilinear":
        g, c = _up_kernel(p.scale), int(ctx.shape[1])
        x = win.as_dtype(ctx, 0, work)
        w = _onnx_weight(ctx, 1, False, work)
        sp = tuple(ctx.shape[2:])
        if work == np.float64:
            sp = static_spatial(ctx, False, "float64 bilinear UpSampling (im2col)")
        y = _conv_transpose(ctx, x, w, None, g, c, g.pad, (0, 0), work, sp,
                            [v * p.scale for v in sp])
        win.finish(ctx, y, work)
        return
    oh = ctx.shape[2] * p.scale
    if len(ctx.inputs) > 1 and any(ctx.is_dynamic(i, a) for i in range(len(ctx.inputs))
                                   for a in (2, 3)):
        raise ctx.fail("nearest UpSampling of several inputs needs their spatial dims fixed "
                       "at export time (each input's scale is the output size over its size)")
    ups = [_nearest_onnx(ctx, i, oh // int(s[2]) if i else p.scale, work)
           for i, s in enumerate(ctx.in_shapes)]
    if len(ups) == 1:
        y = ups[0]
    else:
        y = ctx.make("Sum" if p.multi_input_mode == "sum" else "Concat", ups,
                     axis=None if p.multi_input_mode == "sum" else 1)
    win.finish(ctx, y, work)


for _name in ("Convolution", "Convolution_v1"):
    lowering(_name)(_conv_onnx)
lowering("Deconvolution")(_deconv_onnx)
lowering("UpSampling")(_up_onnx)
