"""Import handlers for ONNX ops that sample or fold image windows: Col2Im -> ``col2im``,
RoiAlign -> ``_contrib_ROIAlign``, GridSample -> ``BilinearSampler``, AffineGrid ->
``GridGenerator``, DeformConv -> ``_contrib_ModulatedDeformableConvolution``.

* ``Col2Im``: MXNet's ``col2im`` pads symmetrically; asymmetric ``pads`` fold into the padded
  image (``pad=0``, ``output_size`` grown by both pads) and slice it back.
* ``RoiAlign``: MXNet's ROIs carry their batch index as a first column; ``half_pixel`` (the
  default from opset 16) is MXNet's ``aligned=True``, ``output_half_pixel`` (opset 10's only
  behaviour) ``aligned=False``; ``sampling_ratio=0`` (adaptive) is MXNet's ``-1``. MXNet's
  ROIAlign averages: ``mode='max'`` is refused.
* ``GridSample`` / ``AffineGrid``: MXNet's grids are ``(N, 2, H, W)`` and corner-aligned
  (``align_corners=1``); ``align_corners=0`` rescales the grid (or theta). MXNet samples
  bilinearly with zero padding on 2-D images; nearest mode and border/reflection padding move
  the grid first (:func:`_grid_sample_moved`); cubic mode and 3-D grids are refused.
"""

from __future__ import annotations

import numpy as np

from .._import_build import int_attr_list, mx_dtype
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []


@importer("Col2Im", since=18)
def col2im(ctx: ImportContext, x: Value, image_shape: Value, block_shape: Value, *,
           dilations=None, pads=None, strides=None) -> object:
    size = image_shape.ints()
    kernel = block_shape.ints()
    n = len(size)
    if len(kernel) != n or not 1 <= n <= 3:
        raise ctx.fail(f"image_shape {size} and block_shape {kernel} must have the same "
                       "length, 1 to 3 (MXNet's col2im)")
    dil = int_attr_list(dilations, n, 1)
    stride = int_attr_list(strides, n, 1)
    pad = int_attr_list(pads, 2 * n, 0)
    begin, end = pad[:n], pad[n:]
    symmetric = begin == end
    padded = tuple(s + b + e for s, b, e in zip(size, begin, end))
    y = _col2im_3d(ctx, x, size if symmetric else padded, kernel, stride, dil,
                   begin if symmetric else [0] * n) if n == 3 else None
    if y is None and n == 3:
        ctx.mxnet_cannot("MXNet 1.9.1's CPU col2im fails on three spatial dims")
    if y is None and symmetric:
        return ctx.op("col2im", x.sym, output_size=tuple(size), kernel=tuple(kernel),
                      stride=tuple(stride), dilate=tuple(dil), pad=tuple(begin))
    if symmetric:
        return y
    if y is None:
        y = ctx.op("col2im", x.sym, output_size=padded, kernel=tuple(kernel),
                   stride=tuple(stride), dilate=tuple(dil), pad=(0,) * n)
    return ctx.op("slice", y, begin=(None, None) + tuple(begin),
                  end=(None, None) + tuple(b + s for b, s in zip(begin, size)))


def _col2im_3d(ctx: ImportContext, x: Value, size, kernel, stride, dil, pad):
    """Col2Im on three spatial dims as a grouped Deconvolution: MXNet 1.9.1's CPU col2im
    fails there ("TBlob.get_with_shape ... do not match"). The columns, one per kernel tap
    and channel (channel-major), are an image of blocks; deconvolving it with a one-hot
    kernel per tap adds each block's tap at its place -- col2im. ``adj`` covers trailing
    positions no block reaches (zero). None when the channels are not known statically."""
    taps = int(np.prod(kernel))
    cols = x.shape[1] if x.shape is not None and len(x.shape) == 3 else None
    if not isinstance(cols, int) or cols % taps:
        return None
    channels = cols // taps
    span = [d * (k - 1) + 1 for d, k in zip(dil, kernel)]
    blocks = [(s + 2 * p - e) // st + 1 for s, p, e, st in zip(size, pad, span, stride)]
    adj = [(s + 2 * p - e) % st for s, p, e, st in zip(size, pad, span, stride)]
    weight = np.zeros((cols, 1, *kernel), np.dtype(x.dtype or np.float32))
    for j in range(taps):
        weight[j::taps, 0][(slice(None), *np.unravel_index(j, kernel))] = 1
    grid = ctx.op("reshape", x.sym, shape=(0, 0, *blocks))
    return ctx.op("Deconvolution", grid, ctx.new_param(f"{ctx.node_name}_taps", weight),
                  kernel=tuple(kernel), stride=tuple(stride), dilate=tuple(dil),
                  pad=tuple(pad), adj=tuple(adj), num_filter=channels, num_group=channels,
                  no_bias=True)


@importer("RoiAlign", since=10)
def roi_align(ctx: ImportContext, x: Value, rois: Value, batch_indices: Value, *,
              coordinate_transformation_mode: str | None = None, mode: str = "avg",
              output_height: int = 1, output_width: int = 1, sampling_ratio: int = 0,
              spatial_scale: float = 1.0) -> object:
    if mode != "avg":
        raise ctx.fail(f"mode={mode!r}: MXNet's ROIAlign averages the samples of a bin "
                       "(mode='avg' only)")
    ctm = coordinate_transformation_mode or ("half_pixel" if ctx.version >= 16
                                             else "output_half_pixel")
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise ctx.fail(f"coordinate_transformation_mode={ctm!r} is not 'half_pixel' or "
                       "'output_half_pixel'")
    dtype = np.dtype(x.dtype or np.float32)
    index = ctx.op("Cast", ctx.op("expand_dims", batch_indices.sym, axis=1),
                   dtype=mx_dtype(ctx, dtype))
    boxes = ctx.op("Concat", index, rois.sym, dim=1)
    return ctx.op("_contrib_ROIAlign", x.sym, boxes,
                  pooled_size=(int(output_height), int(output_width)),
                  spatial_scale=float(spatial_scale),
                  sample_ratio=int(sampling_ratio) if sampling_ratio > 0 else -1,
                  aligned=ctm == "half_pixel")


def _corner_scale(ctx: ImportContext, height: int, width: int, align_corners: int
                  ) -> tuple[float, float]:
    """``(sx, sy)``: ONNX's ``align_corners=0`` coordinates are MXNet's (always aligned to the
    corner pixels' centres) times ``(W-1)/W`` and ``(H-1)/H``."""
    if min(height, width) < 2:
        raise ctx.fail(f"a {height}x{width} grid: MXNet's sampling grids need at least 2x2")
    if align_corners:
        return 1.0, 1.0
    return (width - 1) / width, (height - 1) / height


@importer("GridSample", since=16)
def grid_sample(ctx: ImportContext, x: Value, grid: Value, *, align_corners: int = 0,
                mode: str = "bilinear", padding_mode: str = "zeros") -> object:
    """``BilinearSampler`` on the grid moved to ``(N, 2, Ho, Wo)``; for ``align_corners=0``
    the grid is stretched by ``W/(W-1)``, ``H/(H-1)`` onto MXNet's corner-aligned scale."""
    if mode not in ("bilinear", "linear", "nearest") or \
            padding_mode not in ("zeros", "border", "reflection"):
        raise ctx.fail(f"mode={mode!r}, padding_mode={padding_mode!r}: MXNet's "
                       "BilinearSampler samples bilinearly (nearest by rounding the grid) "
                       "with zero padding (border/reflection by moving the grid)")
    if x.rank != 4:
        raise ctx.fail(f"{x.rank}-d input: MXNet's BilinearSampler is 2-D (N, C, H, W)")
    height, width = (x.shape[2], x.shape[3])
    if not (isinstance(height, int) and isinstance(width, int)):
        raise ctx.fail("GridSample needs the input's height and width")
    if mode == "nearest" or padding_mode != "zeros":
        return _grid_sample_moved(ctx, x, grid, height, width, bool(align_corners),
                                  mode == "nearest", padding_mode)
    sx, sy = _corner_scale(ctx, height, width, align_corners)
    g = ctx.op("transpose", grid.sym, axes=(0, 3, 1, 2))
    if not align_corners:
        scale = np.array([1 / sx, 1 / sy]).reshape(1, 2, 1, 1)
        g = ctx.op("broadcast_mul", g, ctx.const(scale, np.dtype(grid.dtype or np.float32),
                                                 "corners"))
    return ctx.op("BilinearSampler", x.sym, g)


def _grid_sample_moved(ctx: ImportContext, x: Value, grid: Value, height: int, width: int,
                       corners: bool, nearest: bool, padding: str) -> object:
    """GridSample modes beyond bilinear + zeros, by moving each sampling point in pixel
    coordinates before MXNet's bilinear, zero-padded BilinearSampler reads it: ``border``
    clips it into the image; ``reflection`` folds it into ``[0, S-1]`` (corner-aligned) or
    ``[-1/2, S-1/2]`` and then clips it (a point in the outer half pixel reads the edge pixel
    on both of its sides, so the edge value); ``nearest`` rounds it half to even first (as
    ONNX), where the bilinear weights are then 1 and 0. Each coordinate of the
    ``(N, Ho, Wo, 2)`` grid separately."""
    coords = []
    for axis, size in ((0, width), (1, height)):
        g = ctx.op("slice_axis", grid.sym, axis=3, begin=axis, end=axis + 1)
        # pixel position p from the normalized g, in ONNX's order of float32 operations
        # (a tie for nearest must stay a tie): (g + 1) / 2 * (S - 1) or ((g + 1) * S - 1) / 2
        p = ctx.op("_plus_scalar", g, scalar=1.0)
        if corners:
            p = ctx.op("_mul_scalar", ctx.op("_div_scalar", p, scalar=2.0),
                       scalar=float(size - 1))
        else:
            p = ctx.op("_div_scalar", ctx.op("_minus_scalar", ctx.op(
                "_mul_scalar", p, scalar=float(size)), scalar=1.0), scalar=2.0)
        if nearest:  # ONNX rounds before it applies the padding
            p = _round_half_even(ctx, p)
        if padding == "reflection":
            low, high = (0.0, size - 1.0) if corners else (-0.5, size - 0.5)
            span = high - low
            if span > 0:  # low + span * (1 - |mod((p - low) / span, 2) - 1|)
                t = ctx.op("_div_scalar", ctx.op("_minus_scalar", p, scalar=low), scalar=span)
                tri = ctx.op("_rminus_scalar", ctx.op("abs", ctx.op(
                    "_minus_scalar", ctx.op("_mod_scalar", t, scalar=2.0), scalar=1.0)),
                    scalar=1.0)
                p = ctx.op("_plus_scalar", ctx.op("_mul_scalar", tri, scalar=span), scalar=low)
        if padding != "zeros":
            p = ctx.op("clip", p, a_min=0.0, a_max=float(size - 1))
        coords.append(ctx.op("_minus_scalar", ctx.op(
            "_mul_scalar", p, scalar=2.0 / (size - 1) if size > 1 else 0.0), scalar=1.0))
    g = ctx.op("Concat", *coords, dim=3, num_args=2)
    return ctx.op("BilinearSampler", x.sym, ctx.op("transpose", g, axes=(0, 3, 1, 2)))


def _round_half_even(ctx: ImportContext, t) -> object:
    """``floor(t) + (frac > 1/2) + (frac == 1/2) * (floor(t) mod 2)`` (MXNet's rint rounds
    ties down, its round away from zero; ONNX's nearest rounds them to even)."""
    f = ctx.op("floor", t)
    d = ctx.op("broadcast_sub", t, f)
    up = ctx.op("_greater_scalar", d, scalar=0.5)
    tie = ctx.op("_equal_scalar", d, scalar=0.5)
    odd = ctx.op("_mod_scalar", f, scalar=2.0)
    return ctx.op("broadcast_add", ctx.op("broadcast_add", f, up),
                  ctx.op("broadcast_mul", tie, odd))


@importer("AffineGrid", since=20)
def affine_grid(ctx: ImportContext, theta: Value, size: Value, *, align_corners: int = 0
                ) -> object:
    """``GridGenerator(transform_type='affine')`` (2-D), its grid moved to ``(N, H, W, 2)``;
    for ``align_corners=0`` theta's x and y columns are scaled by ``(W-1)/W``, ``(H-1)/H``."""
    dims = size.ints()
    if len(dims) != 4:
        raise ctx.fail(f"size {dims}: MXNet's GridGenerator makes 2-D grids (N, C, H, W)")
    height, width = dims[2], dims[3]
    sx, sy = _corner_scale(ctx, height, width, align_corners)
    t = theta.sym
    if not align_corners:
        t = ctx.op("broadcast_mul", t, ctx.const(np.array([[[sx, sy, 1.0]]]),
                                                 np.dtype(theta.dtype or np.float32),
                                                 "corners"))
    g = ctx.op("GridGenerator", ctx.op("Reshape", t, shape=(-1, 6)), transform_type="affine",
               target_shape=(height, width))
    return ctx.op("transpose", g, axes=(0, 2, 3, 1))


@importer("DeformConv", since=19)
def deform_conv(ctx: ImportContext, x: Value, w: Value, offset: Value, b: Value | None = None,
                mask: Value | None = None, *, dilations=None, group: int = 1,
                kernel_shape=None, offset_group: int = 1, pads=None, strides=None) -> object:
    """MXNet's ``_contrib_ModulatedDeformableConvolution`` (DCNv2: bilinear samples, zero
    outside the image, each multiplied by its mask; a mask of ones without ``mask``), the op
    gluonport's exporter lowers to DeformConv. 2-D only, as MXNet; asymmetric pads pad the
    input explicitly (a sample in the padding reads zero either way)."""
    wshape = w.static_shape
    if wshape is None or len(wshape) != 4:
        raise ctx.fail(f"the weight shape {w.shape} is not a known 4-D shape: MXNet's "
                       "deformable convolution is 2-D")
    kernel = list(kernel_shape) if kernel_shape else list(wshape[2:])
    stride, dil = int_attr_list(strides, 2, 1), int_attr_list(dilations, 2, 1)
    pad = int_attr_list(pads, 4, 0)
    data = x.sym
    if pad[:2] != pad[2:]:
        sym = [min(a, e) for a, e in zip(pad[:2], pad[2:])]
        widths = (0, 0, 0, 0) + tuple(v for a, e, s in zip(pad[:2], pad[2:], sym)
                                      for v in (a - s, e - s))
        data = ctx.op("Pad", data, mode="constant", pad_width=widths, constant_value=0.0)
        pad = sym * 2
    taps = offset_group * kernel[0] * kernel[1]
    if mask is None:
        first = ctx.op("slice_axis", offset.sym, axis=1, begin=0, end=taps)
        mask_sym = ctx.op("ones_like", first)
    else:
        mask_sym = mask.sym
    conv = {"kernel": tuple(kernel), "stride": tuple(stride), "dilate": tuple(dil),
            "pad": tuple(pad[:2]), "num_filter": wshape[0]}
    if wshape[0] % offset_group and group == 1:
        # MXNet 1.9.1 wants num_filter divisible by num_deformable_group; the convolution is a
        # sum over input channels, so sum one single-offset-group convolution per group
        per, k = wshape[1] // offset_group, kernel[0] * kernel[1]
        parts = []
        for g in range(offset_group):
            def cut(s, n, axis=1, g=g):
                return ctx.op("slice_axis", s, axis=axis, begin=g * n, end=(g + 1) * n)
            parts.append(ctx.op("_contrib_ModulatedDeformableConvolution", cut(data, per),
                                cut(offset.sym, 2 * k), cut(mask_sym, k), cut(w.sym, per),
                                num_group=1, num_deformable_group=1, no_bias=True, **conv))
        out = ctx.op("add_n", *parts, num_args=len(parts))
        if b is None:
            return out
        return ctx.op("broadcast_add", out, ctx.op("reshape", b.sym, shape=(1, -1, 1, 1)))
    args = [data, offset.sym, mask_sym, w.sym] + ([b.sym] if b is not None else [])
    return ctx.op("_contrib_ModulatedDeformableConvolution", *args, num_group=group,
                  num_deformable_group=offset_group, no_bias=b is None, **conv)
