"""Region proposals: Proposal and MultiProposal (Faster R-CNN's RPN), with their ONNX lowering.

MXNet 1.9.1's CPU semantics (``contrib/proposal.cc``, ``contrib/multi_proposal.cc``); the ops
run greedy NMS over the boxes they keep.

ONNX lowering (below in this file): anchors shifted over the map, deltas applied with MXNet's
mixed float/double arithmetic, padded and small boxes scored -1, the ``rpn_pre_nms_top_n`` best
by ``TopK``, ``NonMaxSuppression`` on boxes whose far corner is moved by +1 (MXNet's
pixel-inclusive areas), and the kept boxes repeated cyclically up to ``rpn_post_nms_top_n``.
Areas and overlaps round slightly differently from MXNet's ``+ 1`` arithmetic, which only
matters for an overlap within an ulp of ``threshold``. MXNet's error for an ``im_info`` larger
than the score map has no ONNX equivalent.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Float, FloatTuple, Int
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, deliver, lowering, onnx_reduce
from ..lowering.dims import Dims
from ..registry import define, zero_gradient
from .boxes import (
    float32_only,
    gather_rows,
    greedy_nms,
    require_float32,
    selected_mask,
    unsqueeze,
)
from .roi import i64

__all__: list[str] = []


# --- Proposal / MultiProposal ----------------------------------------------------------------
_PROPOSAL_PARAMS = {
    "rpn_pre_nms_top_n": Int(6000), "rpn_post_nms_top_n": Int(300), "threshold": Float(0.7),
    "rpn_min_size": Int(16), "scales": FloatTuple((4.0, 8.0, 16.0, 32.0)),
    "ratios": FloatTuple((0.5, 1.0, 2.0)), "feature_stride": Int(16),
    "output_score": Bool(False), "iou_loss": Bool(False)}

_f32 = np.float32


def _f(x) -> np.ndarray:
    """Round a double-precision intermediate to float, as assigning to C++ float does."""
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def _base_anchors(p) -> np.ndarray:
    """Faster R-CNN's ``GenerateAnchors``: ``(len(ratios)*len(scales), 4)`` float32 boxes
    around a ``feature_stride`` cell, ratio-major."""
    w = h = _f32(p.feature_stride - 1.0) + _f32(1)
    ctr = _f(0.5 * (np.float64(w) - 1.0))
    out = []
    for ratio in p.ratios:
        size_ratio = np.floor(w * h / _f32(ratio))
        for scale in p.scales:
            new_w = np.floor(np.sqrt(size_ratio) + _f32(0.5)) * _f32(scale)
            new_h = np.floor(new_w / _f32(scale) * _f32(ratio) + _f32(0.5)) * _f32(scale)
            half_w, half_h = _f32(0.5) * (new_w - _f32(1)), _f32(0.5) * (new_h - _f32(1))
            out.append([ctr - half_w, ctr - half_h, ctr + half_w, ctr + half_h])
    return np.asarray(out, dtype=np.float32)


def _transform(p, boxes: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> np.ndarray:
    """Apply RPN deltas (``BBoxTransformInv``/``IoUTransformInv``) and clip to the image."""
    x1, y1, x2, y2 = (boxes[..., k] for k in range(4))
    dx, dy, dw, dh = (deltas[..., k] for k in range(4))
    if p.iou_loss:
        pred = [x1 + dx, y1 + dy, x2 + dw, y2 + dh]
    else:  # float variables, double literals: the C++ mixes both, so do we
        d = np.float64
        width, height = _f(d(1) * (x2 - x1) + 1.0), _f(d(1) * (y2 - y1) + 1.0)
        cx = _f(x1.astype(d) + 0.5 * (width.astype(d) - 1.0))
        cy = _f(y1.astype(d) + 0.5 * (height.astype(d) - 1.0))
        pcx, pcy = (dx * width + cx).astype(d), (dy * height + cy).astype(d)
        pw, ph = (np.exp(dw) * width).astype(d), (np.exp(dh) * height).astype(d)
        pred = [_f(pcx - 0.5 * (pw - 1.0)), _f(pcy - 0.5 * (ph - 1.0)),
                _f(pcx + 0.5 * (pw - 1.0)), _f(pcy + 0.5 * (ph - 1.0))]
    lim_w, lim_h = info[1] - _f32(1), info[0] - _f32(1)
    lims = (lim_w, lim_h, lim_w, lim_h)
    return np.stack([np.maximum(np.minimum(v, lim), _f32(0)) for v, lim in zip(pred, lims)], -1)


def _rpn_nms(dets: np.ndarray, thresh: float, max_keep: int) -> np.ndarray:
    """Faster R-CNN's NMS with +1 pixel areas; ``ovr > thresh`` suppresses."""
    x1, y1, x2, y2 = (dets[:, k] for k in range(4))
    area = (x2 - x1 + _f32(1)) * (y2 - y1 + _f32(1))
    thresh = _f32(thresh)

    def suppress(i, js):
        w = np.maximum(_f32(0), np.minimum(x2[i], x2[js]) - np.maximum(x1[i], x1[js]) + _f32(1))
        h = np.maximum(_f32(0), np.minimum(y2[i], y2[js]) - np.maximum(y1[i], y1[js]) + _f32(1))
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            return inter / (area[i] + area[js] - inter) > thresh

    return greedy_nms(len(dets), suppress, max_keep)


def _proposals_one(p, anchors, scores, deltas, info):
    """Proposals of one image: ``(post, 4)`` boxes and ``(post,)`` scores."""
    num, height, width = scores.shape
    shift_x = np.arange(width, dtype=np.float32) * _f32(p.feature_stride)
    shift_y = np.arange(height, dtype=np.float32) * _f32(p.feature_stride)
    shifts = np.stack(np.broadcast_arrays(shift_x[None, :], shift_y[:, None],
                                          shift_x[None, :], shift_y[:, None]), -1)
    boxes = (anchors[None, None] + shifts[:, :, None]).reshape(-1, 4)           # (H*W*A, 4)
    score = scores.transpose(1, 2, 0).reshape(-1).copy()
    delta = deltas.reshape(num, 4, height, width).transpose(2, 3, 0, 1).reshape(-1, 4)
    real_h = int(info[0] / _f32(p.feature_stride))
    real_w = int(info[1] / _f32(p.feature_stride))
    if real_h > height or real_w > width:
        raise ShapeError(f"Proposal: im_info {info[:2].tolist()} / feature_stride "
                         f"{p.feature_stride} exceeds the score map ({height}, {width})")
    boxes = _transform(p, boxes, delta, info)
    hh, ww = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    padded = np.repeat(((hh >= real_h) | (ww >= real_w)).reshape(-1), num)
    score[padded] = -1
    min_size = _f32(p.rpn_min_size) * info[2]
    small = ((boxes[:, 2] - boxes[:, 0] + _f32(1) < min_size)
             | (boxes[:, 3] - boxes[:, 1] + _f32(1) < min_size))
    boxes[small] += np.array([-1, -1, 1, 1], np.float32) * (min_size / _f32(2))
    score[small] = -1
    count = score.size
    pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
    order = np.argsort(-score, kind="stable")[:pre]
    boxes, score = boxes[order], score[order]
    keep = _rpn_nms(boxes, p.threshold, min(p.rpn_post_nms_top_n, pre))
    pick = keep[np.arange(p.rpn_post_nms_top_n) % len(keep)]
    return boxes[pick], score[pick]


def _proposal_inputs(p, cls_prob, bbox_pred):
    anchors = _base_anchors(p)
    num = cls_prob.shape[1] // 2
    if num != len(anchors):
        raise OpAttributeError(f"Proposal: cls_prob has {num} anchors per position (channels / "
                               f"2) but ratios x scales gives {len(anchors)}")
    return anchors, cls_prob[:, num:], bbox_pred


def _multi_proposal(p, cls_prob, bbox_pred, im_info):
    require_float32("Proposal", cls_prob, bbox_pred, im_info)
    anchors, scores, deltas = _proposal_inputs(p, cls_prob, bbox_pred)
    info = im_info
    rois, outs = [], []
    for b in range(cls_prob.shape[0]):
        boxes, score = _proposals_one(p, anchors, scores[b], deltas[b], info[b])
        index = np.full((len(boxes), 1), b, dtype=np.float32)
        rois.append(np.concatenate([index, boxes], axis=1))
        outs.append(score[:, None])
    return np.concatenate(rois), np.concatenate(outs)


def _proposal(p, cls_prob, bbox_pred, im_info):
    if cls_prob.shape[0] != 1:
        raise ShapeError(f"Proposal: takes one image per call, got cls_prob "
                         f"{fmt(cls_prob.shape)}; use MultiProposal for a batch")
    return _multi_proposal(p, cls_prob, bbox_pred, im_info)


def _proposal_shape_rule(per_image: bool):
    def rule(p, in_shapes):
        cls = in_shapes[0]
        if cls is None:
            return in_shapes, [None, None]
        if len(cls) != 4:
            raise ShapeError(f"Proposal: cls_prob must be 4-d (batch, 2*anchors, height, "
                             f"width), got shape {fmt(cls)}")
        bbox = merge(in_shapes[1], (cls[0], cls[1] * 2, cls[2], cls[3]), "bbox_pred: ")
        info = merge(in_shapes[2], (cls[0], 3), "im_info: ")
        rows = p.rpn_post_nms_top_n * (cls[0] if per_image else 1)
        return [cls, bbox, info], [(rows, 5), (rows, 1)]
    return rule


for _name, _fn, _per_image in (("_contrib_Proposal", _proposal, False),
                               ("_contrib_MultiProposal", _multi_proposal, True)):
    define(
        _name, params=_PROPOSAL_PARAMS, compute=_fn,
        inputs=("cls_prob", "bbox_pred", "im_info"),
        infer_shape=_proposal_shape_rule(_per_image), num_outputs=2,
        infer_type=float32_only(_name[len("_contrib_"):], 2),
        num_visible_outputs=lambda p: 2 if p.output_score else 1,
        output_names=("output", "score"),
        doc="RPN region proposals: rows ``[batch_index, x1, y1, x2, y2]`` (+ scores).",
        check_shapes=True, lists_output_names=True,
        gradient=zero_gradient)  # MXNet's legacy backward writes zeros to every input


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
    zero, one = i64(ctx, 0, "zero"), i64(ctx, 1, "one")
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
    total = ctx.make("Max", [total, i64(ctx, 1, "one")])
    j = ctx.make("Range", [i64(ctx, 0, "zero"), i64(ctx, post, "post"), i64(ctx, 1, "one")])
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


lowering("_contrib_Proposal")(_proposal_onnx)
lowering("_contrib_MultiProposal")(_proposal_onnx)
