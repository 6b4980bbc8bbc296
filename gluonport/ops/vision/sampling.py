"""The spatial-transformer family: GridGenerator, BilinearSampler, SpatialTransformer
(``src/operator/grid_generator-inl.h``, ``bilinear_sampler.cc``, ``spatial_transformer.cc``),
with their ONNX lowerings (``GridSample``, opset 16+, for the samplers).

Gradients: MXNet 1.9.1's ``_backward_BilinearSampler`` / ``_backward_GridGenerator`` /
``_backward_SpatialTransformer`` (below), with ONNX lowerings (the samplers' from
``ScatterElements`` additions, opset 16+).

Grids hold normalized ``(x, y)`` in ``[-1, 1]``; the samplers read zero outside the input.
Hidden outputs (BilinearSampler's ``tmp``, GridGenerator's ``grid_dst``, ...) are returned with
MXNet's shapes for graph bookkeeping.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Optional, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, const_as, deliver, lowering
from ..lowering.dims import Dims
from ..registry import define

__all__ = ["bilinear_sample", "bilinear_sample_backward", "affine_grid_dst"]


def _attrs(p) -> dict:
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _pair(out) -> list:
    """The two gradients of a two-output backward kernel (a list in nd, a Symbol in sym)."""
    return [out[0], out[1]]


# --- grids and bilinear sampling -------------------------------------------------------------
def bilinear_sample(data: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """MXNet's BilinearSampler kernel: sample ``data (N, C, H, W)`` at normalized grid points
    ``gx, gy (N, Ho, Wo)`` in ``[-1, 1]``; corners outside the input read as zero."""
    n, c, h, w = data.shape
    dt = data.dtype
    x = ((gx.astype(dt) + 1) * (w - 1) / 2).astype(dt)
    y = ((gy.astype(dt) + 1) * (h - 1) / 2).astype(dt)
    x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
    wx = (1.0 - (x - x0).astype(np.float64)).astype(dt).astype(np.float64)
    wy = (1.0 - (y - y0).astype(np.float64)).astype(dt).astype(np.float64)
    flat = data.reshape(n, c, h * w)
    out = np.zeros((n, c) + gx.shape[1:], dtype=np.float64)
    for dy, fy in ((0, wy), (1, 1.0 - wy)):
        for dx, fx in ((0, wx), (1, 1.0 - wx)):
            xi, yi = x0 + dx, y0 + dy
            inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
            idx = np.where(inside, yi * w + xi, 0).reshape(n, 1, -1)
            vals = np.take_along_axis(flat, idx, axis=2).reshape(out.shape)
            out += np.where(inside[:, None], vals, 0) * (fy * fx)[:, None]
    return out.astype(dt)


def _sampler(p, data, grid):
    out = bilinear_sample(data, grid[:, 0], grid[:, 1])
    return out, np.ascontiguousarray(grid.transpose(0, 2, 3, 1))


def _sampler_shape(p, in_shapes):
    data, grid = in_shapes
    for s, what in ((data, "data"), (grid, "grid")):
        if s is not None and len(s) != 4:
            raise ShapeError(f"BilinearSampler: {what} must be 4-d, got shape {fmt(s)}")
    if grid is not None and grid[1] not in (0, 2):
        raise ShapeError(f"BilinearSampler: grid {fmt(grid)} must be (batch, 2, height, width)")
    if data is None or grid is None:
        return in_shapes, [None, None]
    if data[0] and grid[0] and data[0] != grid[0]:
        raise ShapeError(f"BilinearSampler: data {fmt(data)} and grid {fmt(grid)} differ in "
                         "batch size")
    return in_shapes, [(data[0], data[1], grid[2], grid[3]), (grid[0], grid[2], grid[3], 2)]


define(
    "BilinearSampler", params={"cudnn_off": Optional(Bool())}, compute=_sampler,
    inputs=("data", "grid"), infer_shape=_sampler_shape, num_outputs=2,
    num_visible_outputs=1, output_names=("output", "tmp"),
    doc="Bilinear sampling of ``data`` at a normalized ``(x, y)`` grid.", check_shapes=True,
    lists_output_names=True, gradient=lambda F, p, ins, outs, ogs: _pair(
        F._internal._backward_BilinearSampler(ogs[0], ins[0], ins[1])))


def affine_grid_dst(height: int, width: int, dtype) -> np.ndarray:
    """GridGenerator's target grid ``(3, H*W)``: rows x, y (in ``[-1, 1]``) and ones."""
    dt = np.dtype(dtype).type
    i = np.arange(height * width, dtype=dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        gx = dt(-1.0) + (i % dt(width)) * dt(2.0 / (width - 1) if width > 1 else np.inf)
        gy = dt(-1.0) + np.floor(i / dt(width)) * dt(2.0 / (height - 1) if height > 1
                                                      else np.inf)
    return np.stack([gx, gy, np.ones_like(gx)]).astype(dt)


def _target(p, op: str) -> tuple[int, int]:
    if len(p.target_shape) != 2 or min(p.target_shape) < 1:
        raise OpAttributeError(f"{op}: target_shape={p.target_shape} must be two positive ints "
                               "(height, width)")
    return p.target_shape[0], p.target_shape[1]


def _grid_generator(p, data):
    dt = data.dtype
    if p.transform_type == "affine":
        h, w = _target(p, "GridGenerator")
        dst = affine_grid_dst(h, w, dt)
        out = data.reshape(-1, 3) @ dst
        return out.reshape(data.shape[0], 2, h, w).astype(dt), dst
    n, _, h, w = data.shape
    dst = np.stack(np.meshgrid(np.arange(w, dtype=dt), np.arange(h, dtype=dt)))
    half = np.array([(dt.type(w) - 1.0) / 2.0, (dt.type(h) - 1.0) / 2.0]).astype(dt)
    return ((data + dst) / half[:, None, None] - 1).astype(dt), dst


def _grid_shape(p, in_shapes):
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, None]
    if p.transform_type == "affine":
        h, w = _target(p, "GridGenerator")
        if len(data) != 2 or data[1] not in (0, 6):
            raise ShapeError(f"GridGenerator: affine data must be (batch, 6), got {fmt(data)}")
        return in_shapes, [(data[0], 2, h, w), (3, h * w)]
    if len(data) != 4 or data[1] not in (0, 2):
        raise ShapeError(f"GridGenerator: warp data must be a (batch, 2, height, width) flow, "
                         f"got {fmt(data)}")
    return in_shapes, [tuple(data), (2, data[2], data[3])]


define(
    "GridGenerator",
    params={"transform_type": Enum(("affine", "warp")), "target_shape": Shape((0, 0))},
    compute=_grid_generator, infer_shape=_grid_shape, num_outputs=2, num_visible_outputs=1,
    output_names=("output", "grid_dst"),
    doc="Sampling grid from an affine matrix or an optical-flow field.", check_shapes=True,
    lists_output_names=True, gradient=lambda F, p, ins, outs, ogs: [
        F._internal._backward_GridGenerator(ogs[0], **_attrs(p))])


def _stn_dst(h: int, w: int, dtype) -> np.ndarray:
    """SpatialTransformer's target grid ``(3, H*W)``, computed in double then cast (its own
    arithmetic, not GridGenerator's)."""
    i = np.arange(h * w, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([-1.0 + i % w * 2.0 / (w - 1), -1.0 + (i // w) * 2.0 / (h - 1),
                         np.ones_like(i)]).astype(dtype)


def _spatial_transformer(p, data, loc):
    h, w = _target(p, "SpatialTransformer")
    dt = data.dtype
    dst = _stn_dst(h, w, dt)
    src = (loc.reshape(-1, 2, 3) @ dst).astype(dt)                          # (N, 2, H*W)
    grid = src.reshape(-1, 2, h, w)
    return bilinear_sample(data, grid[:, 0], grid[:, 1]), dst, src


def _stn_shape(p, in_shapes):
    data, loc = in_shapes
    h, w = _target(p, "SpatialTransformer")
    if data is not None and len(data) != 4:
        raise ShapeError(f"SpatialTransformer: data must be 4-d, got shape {fmt(data)}")
    if data is None:
        return in_shapes, [None, (3, h * w), None]
    loc = merge(loc, (data[0], 6), "SpatialTransformer loc: ")
    return [data, loc], [(data[0], data[1], h, w), (3, h * w), (data[0], 2, h * w)]


define(
    "SpatialTransformer",
    params={"target_shape": Shape((0, 0)), "transform_type": Enum(("affine",)),
            "sampler_type": Enum(("bilinear",)), "cudnn_off": Optional(Bool())},
    compute=_spatial_transformer, inputs=("data", "loc"), infer_shape=_stn_shape,
    num_outputs=3, num_visible_outputs=1, output_names=("output", "grid_dst", "grid_src"),
    doc="Affine spatial transformer: GridGenerator + BilinearSampler in one op.", check_shapes=True,
    lists_output_names=True, gradient=lambda F, p, ins, outs, ogs: _pair(
        F._internal._backward_SpatialTransformer(ogs[0], ins[0], ins[1], **_attrs(p))))


# --- backward kernels (MXNet's _backward_BilinearSampler, _backward_GridGenerator,
# _backward_SpatialTransformer) ------------------------------------------------------------------
_NO_GRAD = "a backward kernel: MXNet 1.9.1 registers no gradient for it"


def bilinear_sample_backward(og: np.ndarray, data: np.ndarray, gx: np.ndarray,
                             gy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MXNet's BilinearSamplerBackward: ``(gdata (N, C, H, W), ggrid (N, 2, Ho, Wo))``. Each
    output's gradient goes to its four corners by their weights (corners outside add
    nothing); the grid's is the derivative of the weights, with outside corners read as zero,
    times ``(W - 1) / 2`` (x) and ``(H - 1) / 2`` (y). Works in float32 (float64 for float64
    data; MXNet accumulates in the data type); one ``bincount`` scatters all four corners."""
    n, c, h, w = data.shape
    dt = data.dtype
    work = np.float64 if dt == np.float64 else np.float32
    x = ((gx.astype(dt) + 1) * (w - 1) / 2).astype(dt).reshape(n, -1)
    y = ((gy.astype(dt) + 1) * (h - 1) / 2).astype(dt).reshape(n, -1)
    x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
    wx = (1.0 - (x - x0).astype(np.float64)).astype(dt).astype(work)
    wy = (1.0 - (y - y0).astype(np.float64)).astype(dt).astype(work)
    g = og.reshape(n, c, -1).astype(work, copy=False)
    flat = data.reshape(n, c, h * w)
    base = (np.arange(n * c) * (h * w)).reshape(n, c, 1)
    where = np.empty((4,) + g.shape, dtype=np.int64)
    vals = np.empty((4,) + g.shape, dtype=work)
    corner = {}
    for k, (dy, dx) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        fy = wy if dy == 0 else 1 - wy
        fx = wx if dx == 0 else 1 - wx
        xi, yi = x0 + dx, y0 + dy
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        idx = np.where(inside, yi * w + xi, 0)[:, None]                         # (N, 1, P)
        v = np.take_along_axis(flat, np.broadcast_to(idx, g.shape), axis=2)
        corner[dy, dx] = np.where(inside[:, None], v, 0).astype(work, copy=False)
        np.add(base, idx, out=where[k])
        np.multiply(g, (fy * fx * inside)[:, None], out=vals[k])
    gdata = np.bincount(where.reshape(-1), vals.reshape(-1), minlength=data.size)
    tl, tr, bl, br = corner[0, 0], corner[0, 1], corner[1, 0], corner[1, 1]
    mixed = tl - tr - bl + br
    ggy = -(g * (tr - br + mixed * wx[:, None])).sum(axis=1) * work((h - 1) / 2)
    ggx = -(g * (bl - br + mixed * wy[:, None])).sum(axis=1) * work((w - 1) / 2)
    grid = np.stack([ggx, ggy], axis=1).reshape((n, 2) + gx.shape[1:])
    return gdata.reshape(data.shape).astype(dt), grid


def _sampler_backward(p, og, data, grid):
    gdata, ggrid = bilinear_sample_backward(og, data, grid[:, 0], grid[:, 1])
    return gdata, ggrid.astype(grid.dtype)


define(
    "_backward_BilinearSampler", params={"cudnn_off": Optional(Bool())},
    compute=_sampler_backward, inputs=("ograd", "data", "grid"),
    infer_shape=lambda p, s: (s, [s[1], s[2]]), infer_type=lambda p, t: (t, [t[1], t[2]]),
    num_outputs=2, no_gradient=_NO_GRAD,
    doc="BilinearSampler's gradient: inputs (ograd, data, grid); outputs the data's and the "
        "grid's gradients.")


def _grid_backward(p, og):
    """Affine: ``ograd (N*2, H*W) @ grid_dst.T`` -> ``(N, 6)``; warp: ``ograd`` over
    ``[(W-1)/2, (H-1)/2]`` per channel (MXNet's GridGenerator Backward)."""
    dt = og.dtype
    if p.transform_type == "affine":
        h, w = _target(p, "GridGenerator")
        dst = affine_grid_dst(h, w, dt)
        return (og.reshape(-1, h * w) @ dst.T).reshape(-1, 6).astype(dt)
    h, w = og.shape[2:]
    half = np.array([(dt.type(w) - 1.0) / 2.0, (dt.type(h) - 1.0) / 2.0]).astype(dt)
    return (og / half[:, None, None]).astype(dt)


def _grid_backward_shape(p, in_shapes):
    og = in_shapes[0]
    if og is None:
        return in_shapes, [None]
    return in_shapes, [(og[0], 6) if p.transform_type == "affine" else tuple(og)]


define(
    "_backward_GridGenerator",
    params={"transform_type": Enum(("affine", "warp")), "target_shape": Shape((0, 0))},
    compute=_grid_backward, inputs=("ograd",), infer_shape=_grid_backward_shape,
    no_gradient=_NO_GRAD,
    doc="GridGenerator's gradient: input the output's gradient (affine: its product with the "
        "target grid; warp: scaled back to pixels).")


def _stn_backward(p, og, data, loc):
    """The sampler's gradients on the affine grid, the grid's folded back into ``loc`` through
    the target grid (MXNet's SpatialTransformer Backward)."""
    h, w = _target(p, "SpatialTransformer")
    dst = _stn_dst(h, w, data.dtype)
    src = (loc.reshape(-1, 2, 3) @ dst).astype(data.dtype).reshape(-1, 2, h, w)
    gdata, ggrid = bilinear_sample_backward(og, data, src[:, 0], src[:, 1])
    gloc = ggrid.reshape(-1, 2, h * w) @ dst.T.astype(np.float64)
    return gdata, gloc.reshape(loc.shape).astype(loc.dtype)


define(
    "_backward_SpatialTransformer",
    params={"target_shape": Shape((0, 0)), "transform_type": Enum(("affine",)),
            "sampler_type": Enum(("bilinear",)), "cudnn_off": Optional(Bool())},
    compute=_stn_backward, inputs=("ograd", "data", "loc"),
    infer_shape=lambda p, s: (s, [s[1], s[2]]), infer_type=lambda p, t: (t, [t[1], t[2]]),
    num_outputs=2, no_gradient=_NO_GRAD,
    doc="SpatialTransformer's gradient: inputs (ograd, data, loc); outputs the data's and "
        "loc's gradients.")


# --- grids and bilinear sampling -------------------------------------------------------------
def _grid_sample(ctx: LoweringContext, data: str, grid_nchw: str, dtype) -> str:
    """MXNet's bilinear sampler on a ``(N, 2, Ho, Wo)`` normalized grid."""
    dt = np.dtype(dtype)
    # onnxruntime runs GridSample on float64 from opset 20 only, and never on float16
    wide = dt == np.float32 or (dt == np.float64 and ctx.opset >= 20)
    work = dt if wide else np.dtype(np.float32)
    if dt != work:
        data, grid_nchw = ctx.cast_to(data, work), ctx.cast_to(grid_nchw, work)
    grid = ctx.make("Transpose", [grid_nchw], perm=[0, 2, 3, 1])
    mode = "linear" if ctx.opset >= 20 else "bilinear"
    y = ctx.make("GridSample", [data, grid], mode=mode, padding_mode="zeros", align_corners=1)
    return y if dt == work else ctx.cast_to(y, dt)


def _sampler_onnx(ctx: LoweringContext) -> None:
    deliver(ctx, _grid_sample(ctx, ctx.inputs[0], ctx.inputs[1], ctx.dtype))
    if ctx.wants(1):
        deliver(ctx, ctx.make("Transpose", [ctx.inputs[1]], perm=[0, 2, 3, 1]), 1)


def _grid_generator_onnx(ctx: LoweringContext) -> None:
    p, dt = ctx.params, np.dtype(ctx.dtype)
    if p.transform_type == "affine":
        h, w = _target(p, "GridGenerator")
        dst = ctx.const(affine_grid_dst(h, w, dt), "grid_dst")
        rows = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1, 3], "rows")])
        out = ctx.make("MatMul", [rows, dst])
        deliver(ctx, ctx.make("Reshape", [out, ctx.ints([-1, 2, h, w], "grid")]))
        if ctx.wants(1):
            deliver(ctx, ctx.make("Identity", [dst]), 1)
        return
    dst, half = _warp_grid(ctx, dt)
    out = ctx.make("Sub", [ctx.make("Div", [ctx.make("Add", [ctx.inputs[0], dst]), half]),
                           const_as(ctx, 1, dt, "one")])
    deliver(ctx, out)
    if ctx.wants(1):
        deliver(ctx, ctx.make("Identity", [dst]), 1)


def _warp_grid(ctx: LoweringContext, dt) -> tuple[str, str]:
    """(pixel grid ``(2, H, W)`` of x and y indices, ``[(W-1)/2, (H-1)/2]`` as ``(2, 1, 1)``),
    from ``Shape`` when the flow's height or width varies."""
    dims = Dims(ctx)
    if not (dims.dyn[2] or dims.dyn[3]):
        h, w = dims.static[2], dims.static[3]
        grid = np.stack(np.meshgrid(np.arange(w, dtype=dt), np.arange(h, dtype=dt)))
        half = np.array([(dt.type(w) - 1.0) / 2.0, (dt.type(h) - 1.0) / 2.0]).astype(dt)
        return ctx.const(grid, "grid_dst"), ctx.const(half.reshape(2, 1, 1), "half")
    hf, wf = (ctx.cast_to(dims.scalar(a), dt) for a in (2, 3))
    zero, one, two = (const_as(ctx, v, dt, "k") for v in (0, 1, 2))
    ys = ctx.make("Reshape", [ctx.make("Range", [zero, hf, one]), ctx.ints([-1, 1], "col")])
    xs = ctx.make("Reshape", [ctx.make("Range", [zero, wf, one]), ctx.ints([1, -1], "row")])
    full = ctx.make("Concat", [ctx.ints([1], "one"), dims.get([2, 3])], axis=0)
    grid = ctx.make("Concat", [ctx.make("Expand", [xs, full]), ctx.make("Expand", [ys, full])],
                    axis=0)
    size = ctx.cast_to(dims.get([3, 2]), dt)                                      # (W, H)
    half = ctx.make("Div", [ctx.make("Sub", [size, one]), two])
    return grid, ctx.make("Reshape", [half, ctx.ints([2, 1, 1], "half")])


def _stn_onnx(ctx: LoweringContext) -> None:
    h, w = _target(ctx.params, "SpatialTransformer")
    dt = np.dtype(ctx.dtype)
    dst = ctx.const(_stn_dst(h, w, dt), "grid_dst")
    loc = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([-1, 2, 3], "loc")])
    src = ctx.make("MatMul", [loc, dst])                                      # (N, 2, H*W)
    grid = ctx.make("Reshape", [src, ctx.ints([-1, 2, h, w], "grid")])
    deliver(ctx, _grid_sample(ctx, ctx.inputs[0], grid, dt))
    for k, t in ((1, dst), (2, src)):
        if ctx.wants(k):
            deliver(ctx, ctx.make("Identity", [t]), k)


lowering("BilinearSampler", since=16)(_sampler_onnx)  # GridSample is opset 16+
lowering("GridGenerator")(_grid_generator_onnx)
lowering("SpatialTransformer", since=16)(_stn_onnx)


def _grid_backward_onnx(ctx: LoweringContext) -> None:
    p, dt = ctx.params, np.dtype(ctx.in_dtypes[0])
    if p.transform_type == "affine":
        h, w = _target(p, "GridGenerator")
        dst_t = ctx.const(np.ascontiguousarray(affine_grid_dst(h, w, dt).T), "grid_dst_t")
        rows = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1, h * w], "rows")])
        out = ctx.make("MatMul", [rows, dst_t])
        ctx.make("Reshape", [out, ctx.ints([-1, 6], "theta")], outputs=[ctx.outputs[0]])
        return
    _, half = _warp_grid(ctx, dt)
    ctx.make("Div", [ctx.inputs[0], half], outputs=[ctx.outputs[0]])


lowering("_backward_GridGenerator")(_grid_backward_onnx)


def _sampler_backward_graph(ctx: LoweringContext, og: str, data: str, grid: str,
                            dt, rounding=None) -> tuple[str, str]:
    """:func:`bilinear_sample_backward` in ONNX (opset 16+): ``(gdata, ggrid (N, 2, P))`` from
    ``og (N, C, Ho, Wo)``, ``data`` and a ``(N, 2, P)`` grid, all in the work dtype ``dt``;
    four ``ScatterElements`` additions (one per corner) and ``GatherElements`` of the corner
    values. ``rounding``: the data dtype when it is narrower (float16): the sample positions
    and weights are rounded to it at the steps the numpy kernel rounds them."""

    def rnd(x: str) -> str:
        return x if rounding is None else ctx.cast_to(ctx.cast_to(x, rounding), dt)

    dims = Dims(ctx, 1)
    if any(dims.dyn[1:]):
        raise ctx.fail("the data's channel and spatial dims must be fixed")
    _, c, h, w = dims.static
    one, zero = const_as(ctx, 1, dt, "one"), const_as(ctx, 0, dt, "zero")
    g = ctx.make("Reshape", [og, ctx.ints([0, c, -1], "ncp")])                     # (N, C, P)
    flat = ctx.make("Reshape", [data, ctx.ints([0, c, h * w], "flat")])
    coords = []
    for k, size in ((0, w), (1, h)):
        t = ctx.make("Gather", [grid, ctx.const(np.asarray([k], np.int64), "k")], axis=1)
        t = rnd(ctx.make("Mul", [rnd(ctx.make("Add", [t, one])), const_as(ctx, size - 1, dt)]))
        t = ctx.make("Div", [t, const_as(ctx, 2, dt, "two")])
        low = ctx.make("Floor", [t])
        coords.append((low, rnd(ctx.make("Sub", [one, ctx.make("Sub", [t, low])]))))  # (N,1,P)
    (x0, wx), (y0, wy) = coords
    shape = ctx.make("Shape", [g])
    gdata = ctx.make("ConstantOfShape", [ctx.make("Shape", [flat])],
                     value=_zero_tensor(dt))
    corner = {}
    for dy, fy in ((0, wy), (1, ctx.make("Sub", [one, wy]))):
        for dx, fx in ((0, wx), (1, ctx.make("Sub", [one, wx]))):
            xi = ctx.make("Add", [x0, const_as(ctx, dx, dt, "d")])
            yi = ctx.make("Add", [y0, const_as(ctx, dy, dt, "d")])
            inside = None
            for v, hi in ((xi, w - 1), (yi, h - 1)):
                ok = ctx.make("And", [ctx.make("GreaterOrEqual", [v, zero]),
                                      ctx.make("LessOrEqual", [v, const_as(ctx, hi, dt, "hi")])])
                inside = ok if inside is None else ctx.make("And", [inside, ok])
            pos = ctx.make("Add", [ctx.make("Mul", [yi, const_as(ctx, w, dt, "w")]), xi])
            pos = ctx.cast_to(ctx.make("Where", [inside, pos, zero]), np.int64)
            pos = ctx.make("Expand", [pos, shape])
            mask = ctx.cast_to(inside, dt)                                         # (N, 1, P)
            corner[dy, dx] = ctx.make("Mul", [ctx.make("GatherElements", [flat, pos], axis=2),
                                              mask])
            weight = ctx.make("Mul", [ctx.make("Mul", [fy, fx]), mask])
            gdata = ctx.make("ScatterElements", [gdata, pos, ctx.make("Mul", [g, weight])],
                             axis=2, reduction="add")
    tl, tr, bl, br = corner[0, 0], corner[0, 1], corner[1, 0], corner[1, 1]
    mixed = ctx.make("Add", [ctx.make("Sub", [ctx.make("Sub", [tl, tr]), bl]), br])
    parts = []
    for near, far, wt, size in ((bl, br, wy, w), (tr, br, wx, h)):
        d = ctx.make("Add", [ctx.make("Sub", [near, far]), ctx.make("Mul", [mixed, wt])])
        d = ctx.make("ReduceSum", [ctx.make("Mul", [g, d]), ctx.ints([1], "c")], keepdims=1)
        parts.append(ctx.make("Mul", [d, const_as(ctx, -(size - 1) / 2, dt, "s")]))
    ggrid = ctx.make("Concat", parts, axis=1)                                     # (N, 2, P)
    return ctx.make("Reshape", [gdata, ctx.make("Shape", [data])]), ggrid


def _zero_tensor(dt):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.zeros(1, dt), "value")


def _work_of(ctx: LoweringContext, names: list[str], dt) -> tuple[object, list[str]]:
    """float32/float64 stay; float16 works in float32 (onnxruntime's additive scatter)."""
    work = dt if dt in (np.float32, np.float64) else np.dtype(np.float32)
    return work, [x if dt == work else ctx.cast_to(x, work) for x in names]


def _sampler_backward_onnx(ctx: LoweringContext) -> None:
    dt = np.dtype(ctx.in_dtypes[1])
    work, (og, data, grid) = _work_of(ctx, list(ctx.inputs[:3]), dt)
    flat_grid = ctx.make("Reshape", [grid, ctx.ints([0, 2, -1], "n2p")])
    gdata, ggrid = _sampler_backward_graph(ctx, og, data, flat_grid, work,
                                           None if dt == work else dt)
    ggrid = ctx.make("Reshape", [ggrid, ctx.make("Shape", [ctx.inputs[2]])])
    for k, (y, want) in enumerate(((gdata, dt), (ggrid, np.dtype(ctx.in_dtypes[2])))):
        deliver(ctx, y if want == work else ctx.cast_to(y, want), k)


def _stn_backward_onnx(ctx: LoweringContext) -> None:
    h, w = _target(ctx.params, "SpatialTransformer")
    dt = np.dtype(ctx.in_dtypes[1])
    work, (og, data, loc) = _work_of(ctx, list(ctx.inputs[:3]), dt)
    dst = _stn_dst(h, w, dt)
    loc = ctx.make("Reshape", [loc, ctx.ints([-1, 2, 3], "loc")])
    src = ctx.make("MatMul", [loc, ctx.const(dst.astype(work), "grid_dst")])    # (N, 2, H*W)
    if dt != work:  # the forward's grid is rounded to the data dtype
        src = ctx.cast_to(ctx.cast_to(src, dt), work)
    gdata, ggrid = _sampler_backward_graph(ctx, og, data, src, work,
                                           None if dt == work else dt)
    gloc = ctx.make("MatMul", [ggrid, ctx.const(np.ascontiguousarray(dst.T).astype(work),
                                                "grid_dst_t")])
    gloc = ctx.make("Reshape", [gloc, ctx.ints([-1, 6], "theta")])
    for k, y in enumerate((gdata, gloc)):
        deliver(ctx, y if dt == work else ctx.cast_to(y, dt), k)


lowering("_backward_BilinearSampler", since=16)(_sampler_backward_onnx)
lowering("_backward_SpatialTransformer", since=16)(_stn_backward_onnx)
