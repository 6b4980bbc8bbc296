"""ONNX export of the ROI family (gluonport/ops/roi.py).

* ``ROIPooling`` is ``MaxRoiPool`` (Caffe's bins, as MXNet's) and ``ROIAlign`` is ``RoiAlign``
  (avg; MXNet's sampling grid and border rules; ``aligned`` is ``half_pixel``, opset 16+;
  ``position_sensitive`` takes the per-bin channel diagonal). onnxruntime refuses a batch
  index naming no image, MXNet gives zeros: the index is clamped and those rows zeroed.
  onnxruntime has kernels for these two up to opset 21 only (the opset 22 versions only add
  bfloat16), so newer-opset models are valid ONNX that onnxruntime cannot run yet.
* ``PSROIPooling`` (R-FCN) is composed exactly as gluonport computes it: integer bins, one
  float64 integral image (``CumSum``), four ``Gather`` s per bin.
* ``Proposal``/``MultiProposal`` (Faster R-CNN's RPN): anchors shifted over the map, deltas
  applied with MXNet's mixed float/double arithmetic, padded and small boxes scored -1, the
  ``rpn_pre_nms_top_n`` best by ``TopK``, ``NonMaxSuppression`` on boxes whose far corner is
  moved by +1 (MXNet's pixel-inclusive areas), and the kept boxes repeated cyclically up to
  ``rpn_post_nms_top_n``. Areas and overlaps round slightly differently from MXNet's ``+ 1``
  arithmetic, which only matters for an overlap within an ulp of ``threshold``. MXNet's error
  for an ``im_info`` larger than the score map has no ONNX equivalent.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ._detection_onnx import gather_rows, selected_mask, unsqueeze
from .lowering import LoweringContext, deliver, lowering
from .lowering.dims import Dims
from .math.reduce import onnx_reduce
from .roi import _base_anchors, _pooled, _psroi_group

__all__: list[str] = []


def _i64(ctx: LoweringContext, value, hint: str = "i") -> str:
    return ctx.const(np.asarray(value, np.int64), hint)


def _onnx_rois(ctx: LoweringContext, work) -> tuple[str, str, str]:
    """(int64 batch index ``(R,)`` clamped into range, bool ``(R,)`` mask of the ROIs that name a
    real image, boxes ``(R, 4)`` in ``work``): MXNet gives zeros for the others, onnxruntime
    refuses them."""
    rois = ctx.inputs[1]
    if np.dtype(ctx.in_dtypes[1]) != work:
        rois = ctx.cast_to(rois, work)
    index = ctx.make("Gather", [rois, ctx.const(np.asarray(0, np.int64), "col")], axis=1)
    index = ctx.cast_to(index, np.int64)          # C's truncation, as MXNet's (int) cast
    zero = ctx.const(np.asarray(0, np.int64), "zero")
    batch = Dims(ctx, 0).scalar(0)
    ok = ctx.make("And", [ctx.make("GreaterOrEqual", [index, zero]),
                          ctx.make("Less", [index, batch])])
    index = ctx.make("Where", [ok, index, zero])
    boxes = ctx.make("Slice", [rois, ctx.ints([1], "s"), ctx.ints([5], "e"), ctx.ints([1], "ax")])
    return index, ok, boxes


def _finish_rois(ctx: LoweringContext, y: str, ok: str, work) -> None:
    """Zero the ``(R, C, PH, PW)`` rows of ROIs that name no image; cast back; deliver."""
    ok4 = ctx.make("Reshape", [ok, ctx.ints([-1, 1, 1, 1], "r1")])
    y = ctx.make("Where", [ok4, y, ctx.const(np.zeros((), work), "zero_f")])
    if np.dtype(ctx.dtype) != work:
        y = ctx.cast_to(y, ctx.dtype)
    deliver(ctx, y)


def _roi_work(ctx: LoweringContext, double_ok: bool) -> tuple[object, str]:
    """(work dtype, data in it): onnxruntime's ROI kernels take float32 (RoiAlign also
    float64); float16 widens exactly, float64 rounds where only float32 exists."""
    dt = np.dtype(ctx.dtype)
    work = dt if dt == np.float32 or (double_ok and dt == np.float64) else np.dtype(np.float32)
    x = ctx.inputs[0]
    return work, x if dt == work else ctx.cast_to(x, work)


def _roi_pooling_onnx(ctx: LoweringContext) -> None:
    """``MaxRoiPool``: the same Caffe bins (rounded corners, floor/ceil bin edges, empty bins
    0); the hidden ``maxidx`` is -1 as in gluonport's compute."""
    p = ctx.params
    ph, pw = _pooled(p)
    work, x = _roi_work(ctx, double_ok=False)
    index, ok, boxes = _onnx_rois(ctx, work)
    rois = ctx.make("Concat", [ctx.make("Unsqueeze", [ctx.cast_to(index, work),
                                                      ctx.ints([1], "axes")]), boxes], axis=1)
    y = ctx.make("MaxRoiPool", [x, rois], pooled_shape=[ph, pw],
                 spatial_scale=float(np.float32(p.spatial_scale)))
    _finish_rois(ctx, y, ok, work)
    if ctx.wants(1):
        from onnx import helper

        minus = helper.make_tensor("value", dtypes.onnx_of(np.int32), [1], [-1])
        ctx.make("ConstantOfShape", [ctx.make("Shape", [ctx.outputs[0]])],
                 outputs=[ctx.outputs[1]], value=minus)


def _position_sensitive(ctx: LoweringContext, y: str, ph: int, pw: int) -> str:
    """Bin ``(i, j)`` of output channel ``c`` from input channel ``c*K + i*PW + j``
    (``K = PH*PW``): RoiAlign over all channels seen as ``(R, C/K, K channels, K bins)``, and
    its diagonal."""
    k = ph * pw
    y = ctx.make("Reshape", [y, ctx.ints([0, -1, k, k], "groups")])            # (R, C', K, K)
    idx = ctx.const(np.arange(k, dtype=np.int64).reshape(1, 1, 1, k), "diag")
    shape = ctx.make("Concat", [ctx.make("Slice", [ctx.make("Shape", [y]), ctx.ints([0], "s"),
                                                   ctx.ints([2], "e")]),
                                ctx.ints([1, k], "one_k")], axis=0)
    y = ctx.make("GatherElements", [y, ctx.make("Expand", [idx, shape])], axis=2)
    return ctx.make("Reshape", [y, ctx.ints([0, -1, ph, pw], "pooled")])


def _roi_align_onnx(ctx: LoweringContext) -> None:
    """``RoiAlign`` (avg): MXNet's sampling grid, border rules and averaging. ``aligned`` is
    the -0.5 pixel shift of ``coordinate_transformation_mode='half_pixel'`` (opset 16+; before
    it RoiAlign always works as ``output_half_pixel``, MXNet's ``aligned=False``)."""
    p = ctx.params
    ph, pw = _pooled(p)
    mode = None
    if ctx.opset >= 16:
        mode = "half_pixel" if p.aligned else "output_half_pixel"
    elif p.aligned:
        raise ctx.fail("ROIAlign with aligned=True needs RoiAlign's coordinate_transformation_"
                       "mode='half_pixel', which ONNX has from opset 16: export with "
                       "opset_version=16 or newer")
    work, x = _roi_work(ctx, double_ok=True)
    index, ok, boxes = _onnx_rois(ctx, work)
    y = ctx.make("RoiAlign", [x, boxes, index], mode="avg", output_height=ph, output_width=pw,
                 sampling_ratio=max(p.sample_ratio, 0),
                 spatial_scale=float(np.float32(p.spatial_scale)),
                 coordinate_transformation_mode=mode)
    if p.position_sensitive:
        y = _position_sensitive(ctx, y, ph, pw)
    _finish_rois(ctx, y, ok, work)


# --- PSROIPooling ----------------------------------------------------------------------------
def _round_away(ctx: LoweringContext, x: str) -> str:
    """C's ``round`` (halves away from zero) in double: ONNX ``Round`` rounds halves to even."""
    half = ctx.const(np.float64(0.5), "half")
    mag = ctx.make("Floor", [ctx.make("Add", [ctx.make("Abs", [x]), half])])
    return ctx.make("Mul", [ctx.make("Sign", [x]), mag])


def _psroi_bins(ctx: LoweringContext, start: str, end: str, pooled: int, limit: str,
                dt) -> tuple[str, str]:
    """Integer bin bounds ``(R, pooled)``: floor/ceil of ``start + k * bin``, clipped."""
    size = ctx.make("Max", [ctx.make("Sub", [end, start]), ctx.const(dt(0.1), "min_size")])
    bin_size = ctx.make("Div", [size, ctx.const(dt(pooled), "pooled")])
    k = ctx.const(np.arange(pooled, dtype=dt).reshape(1, -1), "k")
    k1 = ctx.const(np.arange(1, pooled + 1, dtype=dt).reshape(1, -1), "k1")
    out = []
    for steps, fn in ((k, "Floor"), (k1, "Ceil")):
        edge = ctx.make(fn, [ctx.make("Add", [ctx.make("Mul", [steps, bin_size]), start])])
        out.append(ctx.make("Clip", [ctx.cast_to(edge, np.int64), _i64(ctx, 0, "zero"), limit]))
    return out[0], out[1]


def _integral(ctx: LoweringContext) -> str:
    """Flat float64 integral image of ``data``, ``(N, C, H + 1, W + 1)`` before flattening."""
    x = ctx.cast_to(ctx.inputs[0], np.float64)
    for axis in (2, 3):
        x = ctx.make("CumSum", [x, _i64(ctx, axis, "axis")])
    x = ctx.make("Pad", [x, ctx.ints([0, 0, 1, 1, 0, 0, 0, 0], "pads")])
    return ctx.make("Reshape", [x, ctx.ints([-1], "flat")])


def _psroi_pooling_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    group, size = _psroi_group(p), p.pooled_size
    dt = np.float64 if np.dtype(ctx.dtype) == np.float64 else np.float32
    dims = Dims(ctx)
    index, ok, boxes = _onnx_rois(ctx, np.dtype(dt))
    corner = ctx.cast_to(_round_away(ctx, ctx.cast_to(boxes, np.float64)), dt)
    scale = ctx.const(dt(p.spatial_scale), "scale")
    one = ctx.const(dt(1), "one")
    col = [ctx.make("Slice", [corner, ctx.ints([k], "s"), ctx.ints([k + 1], "e"),
                              ctx.ints([1], "ax")]) for k in range(4)]              # (R, 1)
    height, width = dims.scalar(2), dims.scalar(3)
    bounds = []
    for lo, hi, limit in ((col[1], col[3], height), (col[0], col[2], width)):
        start = ctx.make("Mul", [lo, scale])
        end = ctx.make("Mul", [ctx.make("Add", [hi, one]), scale])
        bounds.append(_psroi_bins(ctx, start, end, size, limit, dt))
    (hs, he), (ws, we) = bounds
    cell = np.clip(np.floor(np.arange(size, dtype=dt) * group / size).astype(np.int64), 0,
                   group - 1)
    chan = ((np.arange(p.output_dim)[:, None, None] * group + cell[None, :, None]) * group
            + cell[None, None, :])
    total = _box_sums(ctx, dims, index, ctx.const(chan[None], "chan"), (hs, he), (ws, we))
    ys = [ctx.make("Reshape", [t, ctx.ints([0, 1, -1, 1], "y")]) for t in (hs, he)]
    xs = [ctx.make("Reshape", [t, ctx.ints([0, 1, 1, -1], "x")]) for t in (ws, we)]
    area = ctx.make("Mul", [ctx.make("Sub", [ys[1], ys[0]]), ctx.make("Sub", [xs[1], xs[0]])])
    zero = ctx.const(np.float64(0), "zero")
    mean = ctx.make("Div", [total, ctx.make("Max", [ctx.cast_to(area, np.float64),
                                                    ctx.const(np.float64(1), "one")])])
    out = ctx.make("Where", [ctx.make("Greater", [area, _i64(ctx, 0, "zero")]), mean, zero])
    _finish_rois(ctx, out, ok, np.dtype(np.float64))


def _box_sums(ctx: LoweringContext, dims, index: str, chan: str, rows, cols) -> str:
    """``I[c, y1, x1] - I[c, y0, x1] - I[c, y1, x0] + I[c, y0, x0]`` per ROI, output channel
    and bin, from the flat integral image ``I`` of each ROI's image."""
    integral = _integral(ctx)
    hp = ctx.make("Add", [dims.scalar(2), _i64(ctx, 1, "one")])
    wp = ctx.make("Add", [dims.scalar(3), _i64(ctx, 1, "one")])
    b = ctx.make("Reshape", [index, ctx.ints([-1, 1, 1, 1], "b")])
    plane = ctx.make("Add", [ctx.make("Mul", [b, dims.scalar(1)]), chan])           # (R,D,P,P)
    ys = [ctx.make("Reshape", [t, ctx.ints([0, 1, -1, 1], "y")]) for t in rows]
    xs = [ctx.make("Reshape", [t, ctx.ints([0, 1, 1, -1], "x")]) for t in cols]

    def at(y: str, x: str) -> str:
        flat = ctx.make("Add", [ctx.make("Mul", [ctx.make("Add", [ctx.make(
            "Mul", [plane, hp]), y]), wp]), x])
        return ctx.make("Gather", [integral, flat], axis=0)

    total = ctx.make("Sub", [at(ys[1], xs[1]), at(ys[0], xs[1])])
    total = ctx.make("Sub", [total, at(ys[1], xs[0])])
    return ctx.make("Add", [total, at(ys[0], xs[0])])


# --- Proposal / MultiProposal ----------------------------------------------------------------
def _rpn_layout(ctx: LoweringContext, num: int) -> tuple[str, str, str]:
    """(anchors shifted over the map ``(1, H*W*A, 4)``, foreground scores ``(B, H*W*A)``,
    deltas ``(B, H*W*A, 4)``), all in MXNet's (h, w, anchor) order."""
    p, f = ctx.params, np.float32
    dims = Dims(ctx)
    stride = ctx.const(f(p.feature_stride), "stride")
    shifts = []
    for axis in (3, 2):                                            # x then y
        k = ctx.make("Range", [ctx.const(f(0), "zero"), ctx.cast_to(dims.scalar(axis), f),
                               ctx.const(f(1), "one")])
        shifts.append(ctx.make("Mul", [k, stride]))
    sx = ctx.make("Reshape", [shifts[0], ctx.ints([1, -1, 1, 1], "sx")])       # (1, W, 1, 1)
    sy = ctx.make("Reshape", [shifts[1], ctx.ints([-1, 1, 1, 1], "sy")])       # (H, 1, 1, 1)
    mask_x = ctx.const(np.array([1, 0, 1, 0], f), "mx")
    mask_y = ctx.const(np.array([0, 1, 0, 1], f), "my")
    shift = ctx.make("Add", [ctx.make("Mul", [sx, mask_x]), ctx.make("Mul", [sy, mask_y])])
    anchors = ctx.const(_base_anchors(p)[None, None], "anchors")                # (1, 1, A, 4)
    boxes = ctx.make("Reshape", [ctx.make("Add", [anchors, shift]), ctx.ints([1, -1, 4], "b")])
    scores = ctx.make("Slice", [ctx.inputs[0], ctx.ints([num], "s"), ctx.ints([2 * num], "e"),
                                ctx.ints([1], "ax")])
    scores = ctx.make("Reshape", [scores, ctx.ints([0, num, -1], "s3")])        # (B, A, HW)
    scores = ctx.make("Reshape", [ctx.make("Transpose", [scores], perm=[0, 2, 1]),
                                  ctx.ints([0, -1], "flat")])
    deltas = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([0, num, 4, -1], "d4")])
    deltas = ctx.make("Transpose", [deltas], perm=[0, 3, 1, 2])                 # (B, HW, A, 4)
    return boxes, scores, ctx.make("Reshape", [deltas, ctx.ints([0, -1, 4], "d")])


def _split4(ctx: LoweringContext, x: str) -> list[str]:
    return [ctx.make("Slice", [x, ctx.ints([k], "s"), ctx.ints([k + 1], "e"), ctx.ints([2], "ax")])
            for k in range(4)]


def _bbox_transform(ctx: LoweringContext, boxes: str, deltas: str) -> list[str]:
    """``BBoxTransformInv`` with MXNet's precision: float32 sizes and products, double where
    the C++ mixes in double literals (centres, corners), rounded to float after each."""
    f, d = np.float32, np.float64
    x1, y1, x2, y2 = _split4(ctx, boxes)
    dx, dy, dw, dh = _split4(ctx, deltas)
    one32, half, one64 = ctx.const(f(1), "one"), ctx.const(d(0.5), "half"), ctx.const(d(1), "one")
    out = [None] * 4
    for lo, hi, shift, scale, k in ((x1, x2, dx, dw, 0), (y1, y2, dy, dh, 1)):
        size = ctx.make("Add", [ctx.make("Sub", [hi, lo]), one32])
        size64 = ctx.cast_to(size, d)
        ctr = ctx.make("Add", [ctx.cast_to(lo, d), ctx.make("Mul", [half, ctx.make(
            "Sub", [size64, one64])])])
        pc = ctx.make("Add", [ctx.make("Mul", [shift, size]), ctx.cast_to(ctr, f)])
        pc = ctx.cast_to(pc, d)
        ps = ctx.cast_to(ctx.make("Mul", [ctx.make("Exp", [scale]), size]), d)
        reach = ctx.make("Mul", [half, ctx.make("Sub", [ps, one64])])
        out[k] = ctx.cast_to(ctx.make("Sub", [pc, reach]), f)
        out[k + 2] = ctx.cast_to(ctx.make("Add", [pc, reach]), f)
    return out


def _clip_and_mark(ctx: LoweringContext, p, corners: list[str], scores: str, dims) -> tuple[str,
                   str]:
    """Clip to the image, score -1 for anchors in the padded part of the map and for boxes
    under ``rpn_min_size * scale`` (which also grow by half that size on each side)."""
    f = np.float32
    info = [ctx.make("Slice", [ctx.inputs[2], ctx.ints([k], "s"), ctx.ints([k + 1], "e"),
                               ctx.ints([1], "ax")]) for k in range(3)]          # (B, 1) each
    info3 = [ctx.make("Unsqueeze", [t, ctx.ints([2], "axes")]) for t in info]    # (B, 1, 1)
    one, zero = ctx.const(f(1), "one"), ctx.const(f(0), "zero")
    lim = [ctx.make("Sub", [info3[1], one]), ctx.make("Sub", [info3[0], one])]   # w, h
    corners = [ctx.make("Max", [ctx.make("Min", [c, lim[k % 2]]), zero])
               for k, c in enumerate(corners)]
    boxes = ctx.make("Concat", corners, axis=2)                                  # (B, N, 4)
    minus = ctx.const(f(-1), "minus_one")
    scores = ctx.make("Where", [_padded(ctx, p, info, dims), minus, scores])
    min_size = ctx.make("Mul", [ctx.const(f(p.rpn_min_size), "min_size"), info3[2]])
    small = [ctx.make("Less", [ctx.make("Add", [ctx.make("Sub", [corners[k + 2], corners[k]]),
                                                one]), min_size]) for k in (0, 1)]
    small = ctx.make("Or", small)                                                # (B, N, 1)
    grow = ctx.make("Mul", [ctx.const(np.array([-1, -1, 1, 1], f), "grow"),
                            ctx.make("Div", [min_size, ctx.const(f(2), "two")])])
    boxes = ctx.make("Where", [small, ctx.make("Add", [boxes, grow]), boxes])
    scores = ctx.make("Where", [ctx.make("Squeeze", [small, ctx.ints([2], "axes")]), minus,
                                scores])
    return boxes, scores


def _padded(ctx: LoweringContext, p, info: list[str], dims) -> str:
    """``(B, H*W*A)``: the anchor's cell lies past ``im_info / feature_stride``."""
    f = np.float32
    stride = ctx.const(f(p.feature_stride), "stride")
    real = [ctx.make("Reshape", [ctx.cast_to(ctx.make("Div", [info[k], stride]), np.int64),
                                 ctx.ints([-1, 1, 1, 1], "r")]) for k in (0, 1)]   # h, w
    zero, one = _i64(ctx, 0, "zero"), _i64(ctx, 1, "one")
    hh = ctx.make("Reshape", [ctx.make("Range", [zero, dims.scalar(2), one]),
                              ctx.ints([1, -1, 1, 1], "hh")])
    ww = ctx.make("Reshape", [ctx.make("Range", [zero, dims.scalar(3), one]),
                              ctx.ints([1, 1, -1, 1], "ww")])
    out = ctx.make("Or", [ctx.make("GreaterOrEqual", [hh, real[0]]),
                          ctx.make("GreaterOrEqual", [ww, real[1]])])           # (B, H, W, 1)
    anchors = ctx.ints([1, 1, 1, len(_base_anchors(p))], "a")
    return ctx.make("Reshape", [ctx.make("Expand", [out, anchors]), ctx.ints([0, -1], "flat")])


def _proposal_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    num = len(_base_anchors(p))
    dims = Dims(ctx)
    anchors, scores, deltas = _rpn_layout(ctx, num)
    if p.iou_loss:
        corners = [ctx.make("Add", [a, b]) for a, b in zip(_split4(ctx, anchors),
                                                            _split4(ctx, deltas))]
    else:
        corners = _bbox_transform(ctx, anchors, deltas)
    boxes, scores = _clip_and_mark(ctx, p, corners, scores, dims)
    count = ctx.make("Slice", [ctx.make("Shape", [scores]), ctx.ints([1], "s"),
                               ctx.ints([2], "e")])                                   # (1,)
    pre = count if p.rpn_pre_nms_top_n <= 0 else ctx.make(
        "Min", [count, ctx.ints([p.rpn_pre_nms_top_n], "pre")])
    scores, order = ctx.make("TopK", [scores, pre], outputs=2, axis=1, largest=1, sorted=1)
    boxes = gather_rows(ctx, boxes, order)                                            # (B, P, 4)
    rois, picked = _rpn_nms_pick(ctx, p, boxes, scores, pre)
    deliver(ctx, rois)
    if ctx.wants(1):
        deliver(ctx, ctx.make("Reshape", [picked, ctx.ints([-1, 1], "score")]), 1)


def _rpn_nms_pick(ctx: LoweringContext, p, boxes: str, scores: str, pre: str) -> tuple[str, str]:
    """NMS with pixel-inclusive areas (far corner + 1), at most ``post`` kept, the kept list
    repeated cyclically to ``post`` rows: (rois ``(B*post, 5)``, their scores ``(B*post,)``)."""
    f, post = np.float32, p.rpn_post_nms_top_n
    plus = ctx.make("Add", [boxes, ctx.const(np.array([0, 0, 1, 1], f), "plus")])
    limit = ctx.make("Min", [pre, ctx.ints([post], "post")])
    iou = ctx.const(np.array([np.float32(p.threshold)], f), "iou")
    sel = ctx.make("NonMaxSuppression", [plus, unsqueeze(ctx, scores, 1), limit, iou])
    keep = selected_mask(ctx, sel, scores)                                              # (B, P)
    _, kept = ctx.make("TopK", [ctx.cast_to(keep, f), pre], outputs=2, axis=1, largest=1,
                       sorted=1)                                     # kept first, by rank
    total = onnx_reduce(ctx, "ReduceSum", ctx.cast_to(keep, np.int64), (1,), True)    # (B, 1)
    total = ctx.make("Max", [total, _i64(ctx, 1, "one")])
    j = ctx.make("Range", [_i64(ctx, 0, "zero"), _i64(ctx, post, "post"), _i64(ctx, 1, "one")])
    pick = ctx.make("GatherElements", [kept, ctx.make("Mod", [unsqueeze(ctx, j, 0), total])],
                    axis=1)                                                           # (B, post)
    out_boxes = gather_rows(ctx, boxes, pick)
    batch = ctx.make("Range", [ctx.const(f(0), "zero"), ctx.cast_to(
        Dims(ctx).scalar(0), f), ctx.const(f(1), "one")])
    batch = ctx.make("Expand", [ctx.make("Reshape", [batch, ctx.ints([-1, 1, 1], "b")]),
                                ctx.make("Concat", [ctx.make("Shape", [pick]),
                                                    ctx.ints([1], "one")], axis=0)])
    rois = ctx.make("Reshape", [ctx.make("Concat", [batch, out_boxes], axis=2),
                                ctx.ints([-1, 5], "rois")])
    return rois, ctx.make("GatherElements", [scores, pick], axis=1)


lowering("ROIPooling")(_roi_pooling_onnx)
lowering("_contrib_ROIAlign")(_roi_align_onnx)
lowering("_contrib_PSROIPooling")(_psroi_pooling_onnx)
lowering("_contrib_Proposal")(_proposal_onnx)
lowering("_contrib_MultiProposal")(_proposal_onnx)
