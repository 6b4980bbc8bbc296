"""Contrib operators: transformer attention helpers, quadratic, gradient multiplier, the
spatial-transformer family (GridGenerator, BilinearSampler, SpatialTransformer), deformable
convolution (DCNv1/DCNv2), FlowNet's Correlation and ``khatri_rao`` (column-wise Kronecker
product; float data only, as MXNet's BLAS kernel).

MXNet 1.9.1 semantics (``src/operator/contrib/transformer.cc``, ``quadratic_op-inl.h``,
``gradient_multiplier_op.cc``, ``src/operator/grid_generator-inl.h``, ``bilinear_sampler.cc``,
``spatial_transformer.cc``, ``contrib/nn/deformable_im2col.h``,
``contrib/nn/modulated_deformable_im2col.h``, ``correlation.cc``):

* the ``interleaved_matmul_*`` ops read projections laid out ``(seq, batch, heads * k * dim)``
  with each head's query/key/value blocks interleaved; attention maps are
  ``(batch * heads, seq_q, seq_k)`` with batch-major, head-minor rows; scores are scaled by
  ``1 / sqrt(head_dim)``. MXNet's CPU kernels take float32 only; these take any float;
* grids hold normalized ``(x, y)`` in ``[-1, 1]``; the samplers read zero outside the input;
* DCNv1 samples inside ``[0, H)`` and clamps the far corner, DCNv2 samples inside ``(-1, H)``
  and reads outside corners as zero (two different MXNet kernels, kept as they are);
* hidden outputs (BilinearSampler's ``tmp``, GridGenerator's ``grid_dst``, ...) are returned
  with MXNet's shapes for graph bookkeeping.
"""

from __future__ import annotations

import math

import numpy as np

from ..attrs import Bool, Enum, Float, Int, Optional, Shape
from ..errors import DTypeError, OpAttributeError, ShapeError
from ._shape import fmt, merge
from .registry import OpDef, register
from .vision.boxes import op_def

__all__ = ["bilinear_sample", "affine_grid_dst"]


# --- elementwise -----------------------------------------------------------------------------
def _div_sqrt_dim(p, x):
    """``x / sqrt(x.shape[-1])`` with the divisor cast to ``x``'s dtype (1 for int dim < 4)."""
    divisor = np.asarray(math.sqrt(x.shape[-1]) if x.ndim else 1.0).astype(x.dtype)
    if np.issubdtype(x.dtype, np.integer):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.trunc(np.true_divide(x, divisor)).astype(x.dtype)
    return (x / divisor).astype(x.dtype, copy=False)


register(OpDef("_contrib_div_sqrt_dim", compute=_div_sqrt_dim,
               doc="Divide by the square root of the last dimension."))


def _quadratic(p, x):
    """``x * (a * x + b) + c`` computed at float precision (double for float64), then cast back
    to the input dtype (integers truncate) as MXNet's kernel does with its float attributes."""
    calc = np.float64 if x.dtype == np.float64 else np.float32
    a, b, c = (calc(v) for v in (p.a, p.b, p.c))
    xf = x.astype(calc)
    return (xf * (a * xf + b) + c).astype(x.dtype)


register(OpDef("_contrib_quadratic", params={"a": Float(0.0), "b": Float(0.0), "c": Float(0.0)},
               compute=_quadratic, doc="Elementwise ``a * x**2 + b * x + c``."))

register(OpDef("_contrib_gradientmultiplier",
               params={"scalar": Float(1.0), "is_int": Bool(True)},
               compute=lambda p, x: x.copy(),
               doc="Identity in the forward pass (scales gradients in MXNet's backward)."))


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


_HEADS = {"heads": Int()}
for _name, _fn, _inputs, _rule in (
        ("selfatt_qk", _selfatt_qk, ("queries_keys_values",), _selfatt_qk_shape),
        ("selfatt_valatt", _selfatt_valatt, ("queries_keys_values", "attention"),
         _selfatt_valatt_shape),
        ("encdec_qk", _encdec_qk, ("queries", "keys_values"), _encdec_qk_shape),
        ("encdec_valatt", _encdec_valatt, ("keys_values", "attention"), _encdec_valatt_shape)):
    op_def(f"_contrib_interleaved_matmul_{_name}", params=_HEADS, compute=_fn, inputs=_inputs,
           infer_shape=_rule, doc="Multi-head attention product on interleaved projections.")


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


op_def(
    "BilinearSampler", params={"cudnn_off": Optional(Bool())}, compute=_sampler,
    inputs=("data", "grid"), infer_shape=_sampler_shape, num_outputs=2,
    num_visible_outputs=1, output_names=("output", "tmp"),
    doc="Bilinear sampling of ``data`` at a normalized ``(x, y)`` grid.")


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


op_def(
    "GridGenerator",
    params={"transform_type": Enum(("affine", "warp")), "target_shape": Shape((0, 0))},
    compute=_grid_generator, infer_shape=_grid_shape, num_outputs=2, num_visible_outputs=1,
    output_names=("output", "grid_dst"),
    doc="Sampling grid from an affine matrix or an optical-flow field.")


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


op_def(
    "SpatialTransformer",
    params={"target_shape": Shape((0, 0)), "transform_type": Enum(("affine",)),
            "sampler_type": Enum(("bilinear",)), "cudnn_off": Optional(Bool())},
    compute=_spatial_transformer, inputs=("data", "loc"), infer_shape=_stn_shape,
    num_outputs=3, num_visible_outputs=1, output_names=("output", "grid_dst", "grid_src"),
    doc="Affine spatial transformer: GridGenerator + BilinearSampler in one op.")


# --- deformable convolution ------------------------------------------------------------------
_LAYOUTS = Optional(Enum(("NCDHW", "NCHW", "NCW")))


def _dcn_params(modulated: bool) -> dict:
    fields = {"kernel": Shape(), "stride": Shape(()), "dilate": Shape(()), "pad": Shape(()),
              "num_filter": Int(), "num_group": Int(1), "num_deformable_group": Int(1),
              "workspace": Int(1024), "no_bias": Bool(False)}
    if modulated:
        fields["im2col_step"] = Int(64)
    fields["layout"] = _LAYOUTS
    return fields


def _dcn_geometry(p, op: str) -> tuple[tuple[int, int], ...]:
    """Kernel, stride, dilate, pad as pairs (MXNet fills 1, 1, 0 when empty); 2-d only."""
    if len(p.kernel) != 2 or p.layout not in (None, "NCHW"):
        raise OpAttributeError(f"{op}: only 2-d kernels in NCHW layout are implemented (as in "
                               f"MXNet), got kernel={p.kernel} layout={p.layout}")
    out = [tuple(p.kernel)]
    for value, default in ((p.stride, (1, 1)), (p.dilate, (1, 1)), (p.pad, (0, 0))):
        out.append(tuple(value) if len(value) else default)
    return tuple(out)


def _dcn_shape_rule(modulated: bool, op: str):
    def rule(p, in_shapes):
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _dcn_geometry(p, op)
        data = in_shapes[0]
        ins = list(in_shapes)
        n_out = [None]
        if data is None:
            return ins, n_out
        if len(data) != 4:
            raise ShapeError(f"{op}: data must be 4-d NCHW, got shape {fmt(data)}")
        for what, div in (("num_group", p.num_group), ("num_deformable_group",
                                                        p.num_deformable_group)):
            if data[1] and data[1] % div:
                raise ShapeError(f"{op}: data channels {data[1]} must divide by {what}={div}")
        w = 2 + modulated
        ins[w] = merge(ins[w], (p.num_filter, data[1] // p.num_group, kh, kw), f"{op} weight: ")
        if not p.no_bias:
            ins[w + 1] = merge(ins[w + 1], (p.num_filter,), f"{op} bias: ")
        oh = (data[2] + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1 if data[2] else 0
        ow = (data[3] + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1 if data[3] else 0
        taps = p.num_deformable_group * kh * kw
        ins[1] = merge(ins[1], (data[0], 2 * taps, oh, ow), f"{op} offset: ")
        if modulated:
            ins[2] = merge(ins[2], (data[0], taps, oh, ow), f"{op} mask: ")
            if data[0] > p.im2col_step and data[0] % p.im2col_step:
                raise ShapeError(f"{op}: batch size {data[0]} must be at most or divide "
                                 f"im2col_step={p.im2col_step}")
        return ins, [(data[0], p.num_filter, oh, ow)]
    return rule


def _deform_sample(img: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                   modulated: bool) -> np.ndarray:
    """Bilinear samples ``(N, C, L)`` of ``img (N, C, H, W)`` at ``rows, cols (N, L)``.

    DCNv1 samples inside ``[0, H) x [0, W)`` and clamps the far corner to the border;
    DCNv2 samples inside ``(-1, H) x (-1, W)`` and reads corners outside the image as zero.
    """
    n, c, h, w = img.shape
    dt = img.dtype
    if modulated:
        inside = (rows > -1) & (cols > -1) & (rows < h) & (cols < w)
    else:
        inside = (rows >= 0) & (cols >= 0) & (rows < h) & (cols < w)
    r0 = np.floor(np.where(inside, rows, 0)).astype(np.int64)
    c0 = np.floor(np.where(inside, cols, 0)).astype(np.int64)
    lr, lc = (rows - r0).astype(dt), (cols - c0).astype(dt)
    if modulated:
        r1, c1 = r0 + 1, c0 + 1
    else:
        r_edge, c_edge = r0 >= h - 1, c0 >= w - 1
        r1, c1 = np.where(r_edge, h - 1, r0 + 1), np.where(c_edge, w - 1, c0 + 1)
        lr, lc = np.where(r_edge, 0, lr).astype(dt), np.where(c_edge, 0, lc).astype(dt)
    flat = img.reshape(n, c, h * w)
    out = np.zeros((n, c, rows.shape[1]), dtype=dt)
    for rr, wr in ((r0, 1 - lr), (r1, lr)):
        for cc, wc in ((c0, 1 - lc), (c1, lc)):
            ok = inside & (rr >= 0) & (rr <= h - 1) & (cc >= 0) & (cc <= w - 1)
            idx = np.where(ok, rr * w + cc, 0)[:, None, :]
            vals = np.take_along_axis(flat, idx, axis=2)
            out += np.where(ok[:, None], vals * (wr * wc)[:, None], 0).astype(dt)
    return out


def _dcn_columns(p, data, offset, mask, geometry, out_hw) -> np.ndarray:
    """Deformable im2col: ``(N, C, kh*kw, L)``, looping over kernel taps and offset groups."""
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = geometry
    n, chans = data.shape[:2]
    oh, ow = out_hw
    groups = p.num_deformable_group
    per = chans // groups
    base_r = (np.arange(oh) * sh - ph)[:, None].repeat(ow, 1).reshape(-1)
    base_c = (np.arange(ow) * sw - pw)[None, :].repeat(oh, 0).reshape(-1)
    off = offset.reshape(n, groups, kh * kw, 2, oh * ow)
    cols = np.empty((n, chans, kh * kw, oh * ow), dtype=data.dtype)
    for g in range(groups):
        img = data[:, g * per:(g + 1) * per]
        for k in range(kh * kw):
            i, j = divmod(k, kw)
            rows = (base_r + i * dh).astype(data.dtype) + off[:, g, k, 0]
            cc = (base_c + j * dw).astype(data.dtype) + off[:, g, k, 1]
            val = _deform_sample(img, rows, cc, mask is not None)
            if mask is not None:
                val = val * mask.reshape(n, groups, kh * kw, 1, oh * ow)[:, g, k]
            cols[:, g * per:(g + 1) * per, k] = val
    return cols


def _deformable_conv(modulated: bool, op: str):
    def compute(p, data, offset, *rest):
        mask = rest[0] if modulated else None
        weight = rest[1] if modulated else rest[0]
        bias = None if p.no_bias else rest[-1]
        geometry = _dcn_geometry(p, op)
        out_shape = _dcn_shape_rule(modulated, op)(p, [data.shape, offset.shape] + [
            r.shape for r in rest])[1][0]
        cols = _dcn_columns(p, data, offset, mask, geometry, out_shape[2:])
        n, g = data.shape[0], p.num_group
        cols = cols.reshape(n, g, -1, cols.shape[-1])                         # (N, g, CgK, L)
        w = weight.reshape(g, p.num_filter // g, -1)                           # (g, O/g, CgK)
        out = np.matmul(w, cols).reshape(out_shape)                           # (N, g, O/g, L)
        if bias is not None:
            out = out + bias.reshape(1, -1, 1, 1)
        return out.astype(data.dtype, copy=False)
    return compute


for _name, _mod in (("_contrib_DeformableConvolution", False),
                    ("_contrib_ModulatedDeformableConvolution", True)):
    _ins = ("data", "offset") + (("mask",) if _mod else ()) + ("weight",)
    register(OpDef(
        _name, params=_dcn_params(_mod), compute=_deformable_conv(_mod, _name[9:]),
        inputs=lambda p, _ins=_ins: _ins if p.no_bias else _ins + ("bias",),
        infer_shape=_dcn_shape_rule(_mod, _name[9:]),
        doc="Deformable convolution (DCNv1; DCNv2 multiplies each sample by a mask)."))


# --- Correlation -----------------------------------------------------------------------------
def _corr_geometry(p, height: int, width: int) -> tuple[int, int, int]:
    """Output height, width and displacement-grid width of MXNet's Correlation."""
    border = p.max_displacement + (p.kernel_size - 1) // 2
    top_h = math.ceil((height + 2 * p.pad_size - 2 * border) / p.stride1)
    top_w = math.ceil((width + 2 * p.pad_size - 2 * border) / p.stride1)
    if top_h < 1 or top_w < 1 or min(p.kernel_size, p.stride1, p.stride2) < 1:
        raise ShapeError(f"Correlation: kernel_size={p.kernel_size}, max_displacement="
                         f"{p.max_displacement} and pad_size={p.pad_size} do not fit a "
                         f"{height}x{width} input; pad more or shrink the neighbourhood")
    return top_h, top_w, 2 * (p.max_displacement // p.stride2) + 1


def _corr_shape(p, in_shapes):
    a = in_shapes[0]
    merged = in_shapes[0] if in_shapes[1] is None else merge(a, in_shapes[1], "data2: ")
    if merged is None:
        return in_shapes, [None] * 3
    if len(merged) != 4:
        raise ShapeError(f"Correlation: inputs must be 4-d NCHW, got shape {fmt(merged)}")
    n, c, h, w = merged
    if not (h and w):
        return [merged, merged], [None] * 3
    top_h, top_w, grid = _corr_geometry(p, h, w)
    tmp = (n, h + 2 * p.pad_size, w + 2 * p.pad_size, c)
    return [merged, merged], [(n, grid * grid, top_h, top_w), tmp, tmp]


def _correlation(p, data1, data2):
    """Correlation of patches of ``data1`` with displaced patches of ``data2`` (FlowNet),
    one vectorized pass per displacement."""
    n, c, h, w = data1.shape
    k, md, s1, pad = p.kernel_size, p.max_displacement, p.stride1, p.pad_size
    top_h, top_w, grid = _corr_geometry(p, h, w)
    radius = md // p.stride2
    padded = []
    for x in (data1, data2):   # extra zeros past the far border keep every window in range
        z = np.zeros((n, c, h + 2 * pad + k, w + 2 * pad + k), dtype=x.dtype)
        z[:, :, pad:pad + h, pad:pad + w] = x
        padded.append(z)
    rh, rw = (top_h - 1) * s1 + k, (top_w - 1) * s1 + k
    ref = padded[0][:, :, md:md + rh, md:md + rw]
    out = np.empty((n, grid * grid, top_h, top_w), dtype=data1.dtype)
    for t in range(grid * grid):
        dy, dx = (t // grid - radius) * p.stride2, (t % grid - radius) * p.stride2
        other = padded[1][:, :, md + dy:md + dy + rh, md + dx:md + dx + rw]
        if p.is_multiply:
            prod = np.einsum("nchw,nchw->nhw", ref, other)
        else:
            prod = np.abs(ref - other).sum(axis=1)
        win = np.lib.stride_tricks.sliding_window_view(prod, (k, k), axis=(1, 2))
        out[:, t] = win[:, ::s1, ::s1][:, :top_h, :top_w].sum(axis=(-2, -1)) / (k * k * c)
    tmps = [np.ascontiguousarray(z[:, :, :h + 2 * pad, :w + 2 * pad].transpose(0, 2, 3, 1))
            for z in padded]
    return out, tmps[0], tmps[1]


op_def(
    "Correlation",
    params={"kernel_size": Int(1), "max_displacement": Int(1), "stride1": Int(1),
            "stride2": Int(1), "pad_size": Int(0), "is_multiply": Bool(True)},
    compute=_correlation, inputs=("data1", "data2"), infer_shape=_corr_shape, num_outputs=3,
    num_visible_outputs=1, output_names=("output", "tmp1", "tmp2"),
    doc="FlowNet correlation between patches of two feature maps.")



# --- khatri_rao ------------------------------------------------------------------------------
def _khatri_rao(p, *mats: np.ndarray) -> np.ndarray:
    """Column-wise Kronecker product: row ``(i, j, ...)`` (the first matrix outermost) is the
    elementwise product of row i of the first matrix, row j of the second, ..."""
    _kr_shape(p, [m.shape for m in mats])
    if any(m.dtype.kind != "f" for m in mats):
        raise DTypeError(f"khatri_rao: dtype {mats[0].dtype} is not supported (MXNet's "
                               "CPU kernel runs on float32/float64 only); cast the inputs")
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
    return out.astype(mats[0].dtype, copy=False)


def _kr_shape(p, in_shapes):
    for s in in_shapes:
        if s is not None and len(s) != 2:
            raise ShapeError(f"khatri_rao: every input must be a matrix, got {fmt(s)}")
    cols = None
    for i, s in enumerate(in_shapes):
        cols = merge(cols, None if s is None else (s[1],),
                     f"khatri_rao: input {i} {fmt(s)} needs the others' column count: ")
    if any(s is None for s in in_shapes):
        return in_shapes, [None]
    rows = int(np.prod([s[0] for s in in_shapes], dtype=np.int64))
    return in_shapes, [(rows, cols[0])]


register(OpDef(
    "khatri_rao", params={"num_args": Int()}, variadic="num_args", compute=_khatri_rao,
    infer_shape=_kr_shape,
    doc="Column-wise Kronecker (Khatri-Rao) product of matrices with equal column counts."))

from . import _contrib_onnx  # noqa: E402,F401  (attaches the ONNX export handlers)
