"""Deformable convolution: DCNv1 (``_contrib_DeformableConvolution``) and DCNv2
(``_contrib_ModulatedDeformableConvolution``), ``contrib/nn/deformable_im2col.h`` and
``modulated_deformable_im2col.h``, with their ONNX lowerings (``DeformConv``, opset 19+).

DCNv1 samples inside ``[0, H)`` and clamps the far corner, DCNv2 samples inside ``(-1, H)`` and
reads outside corners as zero (two different MXNet kernels, kept as they are).

Gradients: one ``_backward__contrib_*`` kernel each (MXNet's legacy-op names), the derivative of
that sampling (as MXNet's col2im kernels compute it), lowered to ONNX with GatherElements /
ScatterElements (opset 16+, static shapes).
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Int, Optional, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, const_as, lowering, onnx_reduce
from ..lowering.dims import Dims
from ..registry import OpDef, register

__all__: list[str] = []


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


# --- gradients ---------------------------------------------------------------------------------
def _sample_grad(img: np.ndarray, rows: np.ndarray, cols: np.ndarray, modulated: bool,
                 d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivative of :func:`_deform_sample` against ``d`` (N, C, L): the image gradient
    (N, C, H*W) and the gradients of the sample rows and columns (N, L). As MXNet's
    col2im kernels: corners outside the image take nothing, and DCNv1's clamped far corner
    makes the position gradient 0 there."""
    n, c, h, w = img.shape
    dt = d.dtype
    if modulated:
        inside = (rows > -1) & (cols > -1) & (rows < h) & (cols < w)
    else:
        inside = (rows >= 0) & (cols >= 0) & (rows < h) & (cols < w)
    r0 = np.floor(np.where(inside, rows, 0)).astype(np.int64)
    c0 = np.floor(np.where(inside, cols, 0)).astype(np.int64)
    lr, lc = (rows - r0).astype(dt), (cols - c0).astype(dt)
    dlr, dlc = np.ones_like(lr), np.ones_like(lc)
    if modulated:
        r1, c1 = r0 + 1, c0 + 1
    else:
        r_edge, c_edge = r0 >= h - 1, c0 >= w - 1
        r1, c1 = np.where(r_edge, h - 1, r0 + 1), np.where(c_edge, w - 1, c0 + 1)
        lr, lc = np.where(r_edge, 0, lr).astype(dt), np.where(c_edge, 0, lc).astype(dt)
        dlr, dlc = np.where(r_edge, 0, dlr).astype(dt), np.where(c_edge, 0, dlc).astype(dt)
    flat = img.reshape(n, c, h * w).astype(dt, copy=False)
    planes = (np.arange(n * c) * (h * w)).reshape(n, c, 1)
    index, weights = [], []
    d_rows, d_cols = np.zeros(rows.shape, dt), np.zeros(cols.shape, dt)
    for rr, wr, dwr in ((r0, 1 - lr, -dlr), (r1, lr, dlr)):
        for cc, wc, dwc in ((c0, 1 - lc, -dlc), (c1, lc, dlc)):
            ok = inside & (rr >= 0) & (rr <= h - 1) & (cc >= 0) & (cc <= w - 1)
            idx = np.where(ok, rr * w + cc, 0)
            vals = np.take_along_axis(flat, idx[:, None, :], axis=2)
            index.append(np.broadcast_to(planes + idx[:, None, :], d.shape).ravel())
            weights.append((d * np.where(ok, wr * wc, 0)[:, None, :]).ravel())
            s = (d * vals).sum(axis=1)
            d_rows += np.where(ok, s * dwr * wc, 0)
            d_cols += np.where(ok, s * wr * dwc, 0)
    d_img = np.bincount(np.concatenate(index), weights=np.concatenate(weights),
                        minlength=n * c * h * w)
    return d_img.reshape(n, c, h * w), d_rows, d_cols


def _deformable_backward(modulated: bool, op: str):
    def compute(p, og, data, offset, *rest):
        """Gradients of data, offset, (mask), weight, (bias): the column gradient is
        ``W^T og`` per group, taken back through the bilinear sampling tap by tap."""
        mask = rest[0] if modulated else None
        weight = rest[1] if modulated else rest[0]
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = geometry = _dcn_geometry(p, op)
        n, chans = data.shape[:2]
        oh, ow = og.shape[2:]
        g, groups, taps = p.num_group, p.num_deformable_group, kh * kw
        cols = _dcn_columns(p, data, offset, mask, geometry, (oh, ow))
        og2 = og.reshape(n, g, p.num_filter // g, oh * ow)
        d_w = np.einsum("ngol,ngcl->goc", og2, cols.reshape(n, g, -1, oh * ow))
        w = weight.reshape(g, p.num_filter // g, -1)
        d_cols = np.matmul(w.transpose(0, 2, 1), og2).reshape(n, chans, taps, oh * ow)
        per = chans // groups
        base_r = (np.arange(oh) * sh - ph)[:, None].repeat(ow, 1).reshape(-1)
        base_c = (np.arange(ow) * sw - pw)[None, :].repeat(oh, 0).reshape(-1)
        off = offset.reshape(n, groups, taps, 2, oh * ow)
        d_data = np.zeros((n, chans, data.shape[2] * data.shape[3]), d_cols.dtype)
        d_off = np.zeros(off.shape, d_cols.dtype)
        d_mask = None if mask is None else np.zeros((n, groups, taps, oh * ow), d_cols.dtype)
        for grp in range(groups):
            img = data[:, grp * per:(grp + 1) * per]
            for k in range(taps):
                i, j = divmod(k, kw)
                rows = (base_r + i * dh).astype(data.dtype) + off[:, grp, k, 0]
                cc = (base_c + j * dw).astype(data.dtype) + off[:, grp, k, 1]
                d = d_cols[:, grp * per:(grp + 1) * per, k]
                if mask is not None:
                    val = _deform_sample(img, rows, cc, True)
                    d_mask[:, grp, k] = (d * val).sum(axis=1)
                    d = d * mask.reshape(n, groups, taps, oh * ow)[:, grp, k][:, None]
                d_img, d_r, d_c = _sample_grad(img, rows, cc, modulated, d)
                d_data[:, grp * per:(grp + 1) * per] += d_img
                d_off[:, grp, k, 0], d_off[:, grp, k, 1] = d_r, d_c
        outs = [d_data.reshape(data.shape).astype(data.dtype),
                d_off.reshape(offset.shape).astype(offset.dtype)]
        if mask is not None:
            outs.append(d_mask.reshape(mask.shape).astype(mask.dtype))
        outs.append(d_w.reshape(weight.shape).astype(weight.dtype))
        if not p.no_bias:
            outs.append(og.sum(axis=(0, 2, 3)).astype(rest[-1].dtype))
        return tuple(outs)
    return compute


def _grad_rule(name: str):
    def rule(F, p, inputs, outputs, ograds):
        attrs = {k: v for k, v in p.as_dict().items() if v is not None}
        back = getattr(F._internal, name)(ograds[0], *inputs, **attrs)
        return [back[i] for i in range(len(inputs))]
    return rule


for _name, _mod in (("_contrib_DeformableConvolution", False),
                    ("_contrib_ModulatedDeformableConvolution", True)):
    _ins = ("data", "offset") + (("mask",) if _mod else ()) + ("weight",)
    _back = "_backward_" + _name  # MXNet's legacy-op backward name
    register(OpDef(
        _back, params=_dcn_params(_mod), compute=_deformable_backward(_mod, _name[9:]),
        inputs=lambda p, _ins=_ins: ("ograd",) + (_ins if p.no_bias else _ins + ("bias",)),
        num_outputs=lambda p, _ins=_ins: len(_ins) + (not p.no_bias),
        infer_shape=lambda p, s: (list(s), [None if v is None else tuple(v) for v in s[1:]]),
        infer_type=lambda p, t: (list(t), list(t[1:])),
        no_gradient="a backward kernel (MXNet 1.9.1 registers no gradient for it either)",
        doc=f"{_name[9:]}'s gradients. Inputs: the output gradient, then the forward inputs; "
            "outputs: one gradient per forward input."))
    register(OpDef(
        _name, params=_dcn_params(_mod), compute=_deformable_conv(_mod, _name[9:]),
        inputs=lambda p, _ins=_ins: _ins if p.no_bias else _ins + ("bias",),
        infer_shape=_dcn_shape_rule(_mod, _name[9:]), gradient=_grad_rule(_back),
        doc="Deformable convolution (DCNv1; DCNv2 multiplies each sample by a mask).",
        lists_output_names=True))


# --- deformable convolution ------------------------------------------------------------------
def _dcn_onnx(modulated: bool):
    def handler(ctx: LoweringContext) -> None:
        p = ctx.params
        (kh, kw), stride, dilate, pad = _dcn_geometry(p, ctx.node.op.name)
        weight = ctx.inputs[3 if modulated else 2]
        bias = "" if p.no_bias else ctx.inputs[-1]
        offset, mask = ctx.inputs[1], ctx.inputs[2] if modulated else None
        if not modulated:
            offset, mask = _dcnv1_sampling(ctx, (kh, kw), stride, dilate, pad)
        ctx.make("DeformConv", [ctx.inputs[0], weight, offset, bias, mask],
                 outputs=[ctx.outputs[0]], kernel_shape=[kh, kw], strides=list(stride),
                 dilations=list(dilate), pads=list(pad) * 2, group=p.num_group,
                 offset_group=p.num_deformable_group)
    return handler


def _dcnv1_sampling(ctx: LoweringContext, kernel, stride, dilate, pad) -> tuple[str, str]:
    """(offsets, mask) making DeformConv's DCNv2 sampling equal MXNet's DCNv1: samples outside
    ``[0, H) x [0, W)`` masked out, samples in ``[H - 1, H)`` moved onto ``H - 1`` exactly (MXNet
    clamps the far corner there, DeformConv would blend in a zero row)."""
    dt = np.dtype(ctx.dtype)
    groups = ctx.params.num_deformable_group
    big = np.iinfo(np.int64).max
    data, odims = Dims(ctx, 0), Dims(ctx, 1)
    size = [ctx.cast_to(data.scalar(a), dt) for a in (2, 3)]
    new, inside = [], []
    for axis in (0, 1):
        base = _tap_base(ctx, odims, axis, kernel, (stride[axis], dilate[axis], pad[axis]),
                         groups, dt)
        off = ctx.make("Slice", [ctx.inputs[1], ctx.ints([axis], "s"), ctx.ints([big], "e"),
                                 ctx.ints([1], "ax"), ctx.ints([2], "step")])    # (N, G*K, Ho, Wo)
        pos = ctx.make("Add", [base, off])
        top = ctx.make("Sub", [size[axis], const_as(ctx, 1, dt, "one")])
        low = ctx.make("GreaterOrEqual", [pos, const_as(ctx, 0, dt, "zero")])
        inside.append(ctx.make("And", [low, ctx.make("Less", [pos, size[axis]])]))
        clamp = ctx.make("Sub", [top, base])
        new.append(ctx.make("Where", [ctx.make("GreaterOrEqual", [pos, top]), clamp, off]))
    stacked = ctx.make("Concat", [ctx.make("Unsqueeze", [t, ctx.ints([2], "axes")]) for t in new],
                       axis=2)
    offset = ctx.make("Reshape", [stacked, ctx.make("Shape", [ctx.inputs[1]])])
    mask = ctx.cast_to(ctx.make("And", inside), dt)
    return offset, mask


def _tap_base(ctx: LoweringContext, odims, axis: int, kernel, step: tuple[int, int, int],
              groups: int,
              dt) -> str:
    """Integer sample position ``o * stride - pad + tap * dilate`` as ``(1, G*K, Ho, 1)`` (y) or
    ``(1, G*K, 1, Wo)`` (x), in ``dt``."""
    kh, kw = kernel
    stride, dilate, pad = step
    tap = np.arange(kh * kw)
    along = (tap // kw) if axis == 0 else (tap % kw)
    per_tap = np.tile(along * dilate - pad, groups).astype(dt)
    out_len = odims.scalar(2 + axis)
    o = ctx.make("Range", [ctx.const(np.asarray(0, np.int64), "zero"), out_len,
                           ctx.const(np.asarray(1, np.int64), "one")])
    o = ctx.make("Mul", [ctx.cast_to(o, dt), const_as(ctx, stride, dt, "stride")])
    o = ctx.make("Reshape", [o, ctx.ints([1, 1, -1, 1] if axis == 0 else [1, 1, 1, -1], "o")])
    shape = [1, -1, 1, 1]
    return ctx.make("Add", [o, ctx.const(per_tap.reshape(shape), "taps")])


lowering("_contrib_DeformableConvolution", since=19)(_dcn_onnx(False))  # DeformConv is 19+
lowering("_contrib_ModulatedDeformableConvolution", since=19)(_dcn_onnx(True))


# --- ONNX export: the gradients ------------------------------------------------------------------
def _dcn_backward_onnx(modulated: bool):
    """The numpy kernel's steps as ONNX nodes (opset 16+, static shapes): sample positions of
    every (group, tap, output) from the offsets, the four corners' indices and bilinear
    weights (DCNv1 clamps the far corner, DCNv2 drops corners outside), corner values by
    ``GatherElements``; columns and ``W^T og`` by ``MatMul``; the data gradient by one
    ``ScatterElements`` (add) of the four corners' weighted column gradients; offsets from the
    weight derivatives; the mask from the unmasked samples."""
    def handler(ctx: LoweringContext) -> None:
        p = ctx.params
        (kh, kw), (sh, sw), (dh, dw), (ph, pw) = _dcn_geometry(p, ctx.node.op.name[10:])
        for i in range(1, len(ctx.inputs)):
            if any(ctx.is_dynamic(i, a) for a in range(len(ctx.in_shapes[i]))):
                raise ctx.fail("the deformable convolution gradient needs every shape fixed at "
                               "export time")
        n, chans, h, w = (int(v) for v in ctx.in_shapes[1])
        oh, ow = (int(v) for v in ctx.in_shapes[0][2:])
        dt = np.dtype(ctx.in_dtypes[1])
        grp, taps, size, cg = p.num_deformable_group, kh * kw, oh * ow, p.num_group
        per = chans // grp
        m = ctx.make

        def k(value, hint="k", dtype=dt):
            return ctx.const(np.asarray(value, dtype), hint)

        def shaped(x, shape, hint="shape"):
            return m("Reshape", [x, ctx.ints(list(shape), hint)])

        tap = np.arange(taps)
        o = np.arange(size)
        base_r = ((o // ow) * sh - ph)[None, :] + (tap // kw * dh)[:, None]        # (K, L)
        base_c = ((o % ow) * sw - pw)[None, :] + (tap % kw * dw)[:, None]
        off = shaped(ctx.inputs[2], (n, grp, taps, 2, size), "off5")
        pos = []
        for axis, base in ((0, base_r), (1, base_c)):
            part = m("Gather", [off, ctx.const(np.asarray(axis, np.int64), "axis")], axis=3)
            pos.append(m("Add", [part, k(base.astype(dt), "base")]))                # (N,G,K,L)
        rows, cols = pos
        lo = k(-1 if modulated else 0, "lo")
        big_h, big_w = k(h, "h"), k(w, "w")
        cmp = "Greater" if modulated else "GreaterOrEqual"
        inside = m("And", [m("And", [m(cmp, [rows, lo]), m(cmp, [cols, lo])]),
                           m("And", [m("Less", [rows, big_h]), m("Less", [cols, big_w])])])
        zero, one = k(0, "zero"), k(1, "one")
        r0 = m("Floor", [m("Where", [inside, rows, zero])])
        c0 = m("Floor", [m("Where", [inside, cols, zero])])
        lr, lc = m("Sub", [rows, r0]), m("Sub", [cols, c0])
        dlr = dlc = one
        if modulated:
            r1, c1 = m("Add", [r0, one]), m("Add", [c0, one])
        else:
            r_edge = m("GreaterOrEqual", [r0, k(h - 1, "h1")])
            c_edge = m("GreaterOrEqual", [c0, k(w - 1, "w1")])
            r1 = m("Where", [r_edge, k(h - 1, "h1"), m("Add", [r0, one])])
            c1 = m("Where", [c_edge, k(w - 1, "w1"), m("Add", [c0, one])])
            lr, lc = m("Where", [r_edge, zero, lr]), m("Where", [c_edge, zero, lc])
            dlr, dlc = m("Where", [r_edge, zero, one]), m("Where", [c_edge, zero, one])
        img = shaped(ctx.inputs[1], (n, grp, per, h * w), "img")
        wide = ctx.ints([n, grp, per, taps * size], "wide")
        corners = []
        for rr, wr, dwr in ((r0, m("Sub", [one, lr]), m("Neg", [dlr])), (r1, lr, dlr)):
            for cc, wc, dwc in ((c0, m("Sub", [one, lc]), m("Neg", [dlc])), (c1, lc, dlc)):
                in_r = m("And", [m("GreaterOrEqual", [rr, zero]),
                                 m("LessOrEqual", [rr, k(h - 1, "h1")])])
                in_c = m("And", [m("GreaterOrEqual", [cc, zero]),
                                 m("LessOrEqual", [cc, k(w - 1, "w1")])])
                ok = m("And", [inside, m("And", [in_r, in_c])])
                flat = m("Where", [ok, m("Add", [m("Mul", [rr, big_w]), cc]), zero])
                idx = m("Expand", [shaped(m("Cast", [flat], to=7), (n, grp, 1, taps * size),
                                          "idx"), wide])
                vals = shaped(m("GatherElements", [img, idx], axis=3),
                              (n, grp, per, taps, size), "vals")
                okf = m("Cast", [ok], to=_onnx_dtype(dt))
                coef = m("Mul", [m("Mul", [wr, wc]), okf])
                corners.append((idx, vals, coef, m("Mul", [m("Mul", [dwr, wc]), okf]),
                                m("Mul", [m("Mul", [wr, dwc]), okf])))

        def unsq(x):
            return m("Unsqueeze", [x, ctx.ints([2], "c_axis")])

        val = m("Sum", [m("Mul", [v, unsq(c)]) for _, v, c, _, _ in corners])   # (N,G,per,K,L)
        mask = None
        if modulated:
            mask = shaped(ctx.inputs[3], (n, grp, 1, taps, size), "mask5")
            colv = m("Mul", [val, mask])
        else:
            colv = val
        og = shaped(ctx.inputs[0], (n, cg, p.num_filter // cg, size), "og4")
        cols4 = shaped(colv, (n, cg, chans // cg * taps, size), "cols4")
        w_in = 4 if modulated else 3
        dw_ = onnx_reduce(ctx, "ReduceSum", m("MatMul", [og, m("Transpose", [cols4],
                                                                 perm=[0, 1, 3, 2])]), [0],
                          keepdims=False)
        outs = {}
        outs[w_in - 1] = shaped(dw_, ctx.in_shapes[w_in], "w_shape")
        wt = m("Transpose", [shaped(ctx.inputs[w_in], (cg, p.num_filter // cg, -1), "wg")],
               perm=[0, 2, 1])
        dcol = shaped(m("MatMul", [wt, og]), (n, grp, per, taps, size), "dcol")
        if modulated:
            dmask = onnx_reduce(ctx, "ReduceSum", m("Mul", [dcol, val]), [2], keepdims=False)
            outs[2] = shaped(dmask, ctx.in_shapes[3], "mask_shape")
            dcol = m("Mul", [dcol, mask])
        upd = [shaped(m("Mul", [dcol, unsq(c)]), (n, grp, per, taps * size), "upd")
               for _, _, c, _, _ in corners]
        zeros = m("Expand", [zero, ctx.ints([n, grp, per, h * w], "img_shape")])
        d_img = m("ScatterElements", [zeros, m("Concat", [i for i, _, _, _, _ in corners],
                                                   axis=3), m("Concat", upd, axis=3)],
                  axis=3, reduction="add")
        outs[0] = shaped(d_img, (n, chans, h, w), "data_shape")
        grads = []
        for j in (3, 4):
            terms = [m("Mul", [onnx_reduce(ctx, "ReduceSum", m("Mul", [dcol, v]), [2],
                                           keepdims=False), t[j]]) for t in corners
                     for v in (t[1],)]
            grads.append(m("Unsqueeze", [m("Sum", terms), ctx.ints([3], "xy_axis")]))
        outs[1] = shaped(m("Concat", grads, axis=3), ctx.in_shapes[2], "off_shape")
        if not p.no_bias:
            outs[len(ctx.inputs) - 2] = onnx_reduce(ctx, "ReduceSum", ctx.inputs[0], [0, 2, 3],
                                                    keepdims=False)
        for i, y in sorted(outs.items()):
            m("Identity", [y], outputs=[ctx.outputs[i]])
    return handler


def _onnx_dtype(dt) -> int:
    from ..._core import dtypes

    return dtypes.onnx_of(np.dtype(dt))


lowering("_backward__contrib_DeformableConvolution", since=16)(_dcn_backward_onnx(False))
lowering("_backward__contrib_ModulatedDeformableConvolution", since=16)(
    _dcn_backward_onnx(True))
