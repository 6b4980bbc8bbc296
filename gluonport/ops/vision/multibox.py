"""SSD operators: ``MultiBoxPrior``, ``MultiBoxDetection``, ``MultiBoxTarget``.

MXNet 1.9.1's CPU kernels (``src/operator/contrib/multibox_prior.cc``,
``multibox_detection.cc``, ``multibox_target.cc``), quirks included:

* all three are float32 only (legacy operators without a type rule);
* ``MultiBoxDetection`` marks suppressed rows by their class id only (``-1``), keeps scores and
  boxes, treats class 0 as background whatever ``background_id`` says, and leaves the rows past
  ``nms_topk`` unsorted;
* ``MultiBoxTarget`` ignores ``minimum_negative_samples`` and mines the negatives with the
  lowest background probability.
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
    as_f32,
    columns,
    float32_only,
    gather_rows,
    greedy_nms,
    last_dim,
    nms_keep,
    require_float32,
    top_scores,
    unsqueeze,
)

__all__: list[str] = []


# --- MultiBoxPrior ---------------------------------------------------------------------------
def _prior_check(p) -> None:
    bad = []
    if not p.sizes or not p.ratios:
        bad.append("sizes and ratios must not be empty")
    if len(p.steps) != 2 or len(p.offsets) != 2:
        bad.append("steps and offsets must have 2 elements (y, x)")
    elif not all(0.0 <= o <= 1.0 for o in p.offsets):
        bad.append(f"offsets {p.offsets} must lie in [0, 1]")
    elif p.steps[0] * p.steps[1] < 0:
        bad.append(f"steps {p.steps}: give both step_y and step_x, or neither")
    if bad:
        raise OpAttributeError("MultiBoxPrior: " + "; ".join(bad))


def _prior_shape(p, in_shapes):
    _prior_check(p)
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None]
    if len(data) < 4:
        raise ShapeError(f"MultiBoxPrior: data must be 4-d (batch, channel, y, x), got "
                         f"shape {fmt(data)}")
    num = data[2] * data[3] * (len(p.sizes) + len(p.ratios) - 1)
    return in_shapes, [(1, num, 4)]


def _prior_half_sizes(p, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Half width/height of each anchor per location, in float32 as MXNet computes them."""
    f = np.float32
    pairs = list(zip(_prior_sizes(p), _prior_roots(p)))
    half_w = np.array([s * f(height) / f(width) * r / f(2) for s, r in pairs], dtype=f)
    half_h = np.array([s / r / f(2) for s, r in pairs], dtype=f)
    return half_w, half_h


def _prior_sizes(p) -> list[np.float32]:
    """Anchor size per anchor: every size with the first ratio, then the first size with the
    other ratios."""
    f = np.float32
    return [f(s) for s in p.sizes] + [f(p.sizes[0])] * (len(p.ratios) - 1)


def _prior_roots(p) -> list[np.float32]:
    """``sqrt(ratio)`` per anchor, in the order of :func:`_prior_sizes`."""
    f = np.float32
    return [np.sqrt(f(p.ratios[0]))] * len(p.sizes) + [np.sqrt(f(r)) for r in p.ratios[1:]]


def _multibox_prior(p, data):
    require_float32("MultiBoxPrior", data)
    _prior_check(p)
    height, width = data.shape[2], data.shape[3]
    f = np.float32
    step_y, step_x = f(p.steps[0]), f(p.steps[1])
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = f(1) / f(height), f(1) / f(width)
    cy = (np.arange(height, dtype=f) + f(p.offsets[0])) * step_y
    cx = (np.arange(width, dtype=f) + f(p.offsets[1])) * step_x
    half_w, half_h = _prior_half_sizes(p, height, width)
    cx, cy = cx[None, :, None], cy[:, None, None]
    out = np.stack(np.broadcast_arrays(cx - half_w, cy - half_h, cx + half_w, cy + half_h), -1)
    if p.clip:
        out = np.clip(out, f(0), f(1))
    return out.reshape(1, -1, 4).astype(data.dtype)


define(
    "_contrib_MultiBoxPrior",
    params={"sizes": FloatTuple((1.0,)), "ratios": FloatTuple((1.0,)), "clip": Bool(False),
            "steps": FloatTuple((-1.0, -1.0)), "offsets": FloatTuple((0.5, 0.5))},
    compute=_multibox_prior, infer_shape=_prior_shape,
    infer_type=float32_only("MultiBoxPrior"), aliases=("_npx_multibox_prior",),
    doc="SSD prior (anchor) boxes for a feature map: ``(1, H*W*A, 4)`` corners.", check_shapes=True,
    lists_output_names=True, gradient=zero_gradient)  # MXNet's backward writes zeros


# --- MultiBoxDetection -----------------------------------------------------------------------
def _detection_shape(p, in_shapes):
    cls, loc, anchor = in_shapes
    for s, nd, what in ((cls, 3, "cls_prob"), (loc, 2, "loc_pred"), (anchor, 3, "anchor")):
        if s is not None and len(s) != nd:
            raise ShapeError(f"MultiBoxDetection: {what} must be {nd}-d, got shape {fmt(s)}")
    last_dim(anchor, 4, "anchor", "MultiBoxDetection")
    if cls is None or anchor is None:
        return in_shapes, [None]
    if cls[2] and anchor[1] and cls[2] != anchor[1]:
        raise ShapeError(f"MultiBoxDetection: cls_prob {fmt(cls)} and anchor {fmt(anchor)} "
                         "disagree on the number of anchors")
    loc = merge(loc, (cls[0], cls[2] * 4), "MultiBoxDetection loc_pred: ")
    return [cls, loc, anchor], [(cls[0], anchor[1], 6)]


def _decode_ssd(p, loc: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """MXNet's ``TransformLocations``: center-size decoding with variances, optional clip."""
    f = np.float32
    dt = loc.dtype
    al, at, ar, ab = (anchors[:, k] for k in range(4))
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / f(2), (at + ab) / f(2)
    vx, vy, vw, vh = (f(v) for v in p.variances)
    ox = loc[..., 0] * vx * aw + ax
    oy = loc[..., 1] * vy * ah + ay
    ow = np.exp(loc[..., 2] * vw) * aw / f(2)
    oh = np.exp(loc[..., 3] * vh) * ah / f(2)
    out = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    if p.clip:
        out = np.clip(out, 0, 1)
    return out.astype(dt, copy=False)


def _ssd_overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MXNet's ``CalculateOverlap`` for SSD (no clipping of negative areas; 0 if union <= 0)."""
    zero = np.zeros((), a.dtype)
    w = np.maximum(zero, np.minimum(a[2], b[:, 2]) - np.maximum(a[0], b[:, 0]))
    h = np.maximum(zero, np.minimum(a[3], b[:, 3]) - np.maximum(a[1], b[:, 1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union <= 0, zero, inter / union)


def _best_class(cls_prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best foreground class (1..C-1) per anchor, starting from score -1 / id 0 as MXNet."""
    fg = cls_prob[:, 1:, :]
    if fg.shape[1] == 0:
        shape = (cls_prob.shape[0], cls_prob.shape[2])
        return np.zeros(shape, np.int64), np.full(shape, -1, cls_prob.dtype)
    best = fg.max(axis=1)
    found = best > -1
    ids = np.where(found, fg.argmax(axis=1) + 1, 0)
    return ids, np.where(found, best, np.asarray(-1, cls_prob.dtype))


def _detect_one(p, rows: np.ndarray, out: np.ndarray) -> None:
    """Compact, sort, top-k and suppress one batch item's ``[id, score, box]`` rows."""
    valid = rows[rows[:, 0] >= 0]
    count = len(valid)
    out[:count] = valid
    if count < 1 or p.nms_threshold <= 0 or p.nms_threshold > 1:
        return
    order = np.argsort(-valid[:, 1], kind="stable")
    nkeep = p.nms_topk if 0 < p.nms_topk < count else count
    out[nkeep:count, 0] = -1  # rows past top-k keep their unsorted contents, MXNet's quirk
    top = valid[order[:nkeep]]
    thresh = as_f32(p.nms_threshold)

    def suppress(i, js):
        hit = _ssd_overlap(top[i, 2:], top[js, 2:]) >= thresh
        return hit if p.force_suppress else hit & (top[js, 0] == top[i, 0])

    keep = greedy_nms(nkeep, suppress)
    top[np.setdiff1d(np.arange(nkeep), keep), 0] = -1
    out[:nkeep] = top


def _multibox_detection(p, cls_prob, loc_pred, anchor):
    require_float32("MultiBoxDetection", cls_prob, loc_pred, anchor)
    if len(p.variances) != 4:
        raise OpAttributeError(f"MultiBoxDetection: variances must have 4 elements, got "
                               f"{p.variances}")
    batch, _, num = cls_prob.shape
    dt = cls_prob.dtype
    ids, scores = _best_class(cls_prob)
    ids = np.where((ids > 0) & (scores < as_f32(p.threshold)), 0, ids)
    boxes = _decode_ssd(p, loc_pred.reshape(batch, num, 4), anchor.reshape(num, 4))
    rows = np.concatenate([(ids - 1)[..., None].astype(dt), scores[..., None], boxes], -1)
    out = np.full((batch, num, 6), -1, dtype=dt)
    for b in range(batch):
        _detect_one(p, rows[b], out[b])
    return out


define(
    "_contrib_MultiBoxDetection",
    params={"clip": Bool(True), "threshold": Float(0.01), "background_id": Int(0),
            "nms_threshold": Float(0.5), "force_suppress": Bool(False),
            "variances": FloatTuple((0.1, 0.1, 0.2, 0.2)), "nms_topk": Int(-1)},
    compute=_multibox_detection, inputs=("cls_prob", "loc_pred", "anchor"),
    infer_shape=_detection_shape, infer_type=float32_only("MultiBoxDetection"),
    aliases=("_npx_multibox_detection",),
    doc="SSD detection output ``(B, A, 6)`` rows ``[id, score, xmin, ymin, xmax, ymax]``.",
    check_shapes=True, lists_output_names=True,
    gradient=zero_gradient)  # MXNet's legacy backward writes zeros to every input


# --- MultiBoxTarget --------------------------------------------------------------------------
def _target_shape(p, in_shapes):
    anchor, label, cls = in_shapes
    op = "MultiBoxTarget"
    for s, what in ((anchor, "anchor"), (label, "label"), (cls, "cls_pred")):
        if s is not None and len(s) != 3:
            raise ShapeError(f"{op}: {what} must be 3-d, got shape {fmt(s)}")
    if anchor is not None and (anchor[0] not in (0, 1) or anchor[2] not in (0, 4)):
        raise ShapeError(f"{op}: anchor must be (1, num_anchors, 4), got {fmt(anchor)}")
    if label is not None and label[2] and label[2] < 5:
        raise ShapeError(f"{op}: label rows need >= 5 values [class, x1, y1, x2, y2], got "
                         f"{fmt(label)}")
    if anchor is None or label is None:
        return in_shapes, [None, None, None]
    if cls is not None and cls[2] and anchor[1] and cls[2] != anchor[1]:
        raise ShapeError(f"{op}: cls_pred {fmt(cls)} and anchor {fmt(anchor)} disagree on the "
                         "number of anchors")
    loc = (label[0], anchor[1] * 4)
    return in_shapes, [loc, loc, (label[0], anchor[1])]


def _overlaps(anchors: np.ndarray, gts: np.ndarray) -> np.ndarray:
    """``(N, G)`` IoU as MXNet's target op computes it: no clipping of negative areas, 0 where
    the union is 0 (``safe_divide``)."""
    a, g = anchors[:, None, :], gts[None, :, :]
    zero = np.zeros((), anchors.dtype)
    w = np.maximum(zero, np.minimum(a[..., 2], g[..., 2]) - np.maximum(a[..., 0], g[..., 0]))
    h = np.maximum(zero, np.minimum(a[..., 3], g[..., 3]) - np.maximum(a[..., 1], g[..., 1]))
    inter = w * h
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
             + (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union == 0, zero, inter / union)


def _valid_gts(label: np.ndarray) -> int:
    """Ground truths up to the first padding row (class -1, which must be all -1)."""
    pad = np.flatnonzero(label[:, 0] == -1)
    count = int(pad[0]) if pad.size else len(label)
    if pad.size and np.any(label[count, :5] != -1):
        raise OpAttributeError(f"MultiBoxTarget: padding label row {count} must be all -1 in "
                               f"its first 5 values, got {label[count, :5].tolist()}")
    return count


def _match_anchors(p, iou: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flags (1 positive, -1 undecided), matched gt and its IoU per anchor: first each gt takes
    its best free anchor (greedy, global best first), then anchors above the threshold."""
    n, g = iou.shape
    flags = np.full(n, -1, np.int8)
    match, best = np.full(n, -1, np.int64), np.full(n, -1.0, np.float32)
    gt_free = np.ones(g, bool)
    for _ in range(g):
        masked = np.where((flags != 1)[:, None] & gt_free[None, :], iou, -np.inf)
        j, k = divmod(int(np.argmax(masked)), g)
        if not masked[j, k] > np.float32(1e-6):
            break
        flags[j], match[j], best[j], gt_free[k] = 1, k, iou[j, k], False
    rest = flags != 1
    match[rest], best[rest] = iou[rest].argmax(axis=1), iou[rest].max(axis=1)
    if p.overlap_threshold > 0:
        flags[rest & (best > as_f32(p.overlap_threshold))] = 1
    return flags, match, best


def _mine_negatives(p, flags, best, cls_pred: np.ndarray) -> None:
    """Mark as negative (0) the undecided anchors with the lowest background probability."""
    positives = int(np.sum(flags == 1))
    if p.negative_mining_ratio <= 0:
        flags[flags != 1] = 0
        return
    if p.negative_mining_thresh <= 0:
        raise OpAttributeError("MultiBoxTarget: negative_mining_thresh must be > 0 when "
                               "negative_mining_ratio > 0")
    count = min(int(np.float32(positives) * as_f32(p.negative_mining_ratio)),
                len(flags) - positives)
    if count <= 0:
        return
    cand = np.flatnonzero((flags == -1) & (best < as_f32(p.negative_mining_thresh)))
    if len(cand) < count:
        raise ShapeError(f"MultiBoxTarget: {count} negatives wanted but only {len(cand)} "
                         "anchors qualify; lower negative_mining_ratio or raise "
                         "negative_mining_thresh")
    logits = cls_pred[:, cand]
    shifted = np.exp(logits - logits.max(axis=0))
    background = shifted[0] / shifted.sum(axis=0)
    flags[cand[np.argsort(background, kind="stable")[:count]]] = 0


def _loc_targets(p, anchors: np.ndarray, gts: np.ndarray) -> np.ndarray:
    """MXNet's ``AssignLocTargets`` (center offsets / log size ratios over variances)."""
    f = np.float32
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) * f(0.5), (anchors[:, 1] + anchors[:, 3]) * f(0.5)
    gw, gh = gts[:, 2] - gts[:, 0], gts[:, 3] - gts[:, 1]
    gx, gy = (gts[:, 0] + gts[:, 2]) * f(0.5), (gts[:, 1] + gts[:, 3]) * f(0.5)
    vx, vy, vw, vh = (f(v) for v in p.variances)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(gx - ax) / aw / vx, (gy - ay) / ah / vy,
                         np.log(gw / aw) / vw, np.log(gh / ah) / vh], axis=1)


def _multibox_target(p, anchor, label, cls_pred):
    require_float32("MultiBoxTarget", anchor, label, cls_pred)
    if len(p.variances) != 4:
        raise OpAttributeError(f"MultiBoxTarget: variances must have 4 elements, got "
                               f"{p.variances}")
    anchors = anchor.reshape(-1, 4)
    batch, num = label.shape[0], anchors.shape[0]
    loc = np.zeros((batch, num, 4), np.float32)
    mask = np.zeros((batch, num, 4), np.float32)
    cls = np.full((batch, num), p.ignore_label, np.float32)
    for b in range(batch):
        count = _valid_gts(label[b])
        if count == 0:
            continue
        gts = label[b, :count]
        flags, match, best = _match_anchors(p, _overlaps(anchors, gts[:, 1:5]))
        _mine_negatives(p, flags, best, cls_pred[b])
        pos, neg = flags == 1, flags == 0
        cls[b, pos] = gts[match[pos], 0] + 1
        cls[b, neg] = 0
        mask[b, pos] = 1
        loc[b, pos] = _loc_targets(p, anchors[pos], gts[match[pos], 1:5])
    return loc.reshape(batch, -1), mask.reshape(batch, -1), cls


define(
    "_contrib_MultiBoxTarget",
    params={"overlap_threshold": Float(0.5), "ignore_label": Float(-1.0),
            "negative_mining_ratio": Float(-1.0), "negative_mining_thresh": Float(0.5),
            "minimum_negative_samples": Int(0), "variances": FloatTuple((0.1, 0.1, 0.2, 0.2))},
    compute=_multibox_target, inputs=("anchor", "label", "cls_pred"),
    infer_shape=_target_shape, infer_type=float32_only("MultiBoxTarget", 3), num_outputs=3,
    output_names=("loc_target", "loc_mask", "cls_target"), aliases=("_npx_multibox_target",),
    no_onnx="training-target generation (greedy per-ground-truth anchor matching and hard "
            "negative mining, both sequential); inference graphs do not contain it",
    doc="SSD training targets: (loc_target, loc_mask, cls_target) per anchor.", check_shapes=True,
    lists_output_names=True, gradient=zero_gradient)  # MXNet's backward writes zeros


# --- ONNX export -----------------------------------------------------------------------------
def _prior_onnx(ctx: LoweringContext) -> None:
    """A constant when the feature map's height and width are fixed (the priors depend on
    nothing else); computed from ``Shape`` with ``Range`` when either varies."""
    p = ctx.params
    _prior_check(p)
    dims = Dims(ctx)
    if not (dims.dyn[2] or dims.dyn[3]):
        height, width = dims.static[2], dims.static[3]
        value = _multibox_prior(p, np.zeros((1, 1, height, width), np.float32))
        deliver(ctx, ctx.make("Identity", [ctx.const(value, "priors")]))
        return
    deliver(ctx, _dynamic_priors(ctx, p, dims))


def _dynamic_priors(ctx: LoweringContext, p, dims) -> str:
    """MXNet's float32 arithmetic on run-time ``H, W``: centers ``(k + offset) * step`` and
    half sizes ``s * H / W * sqrt(r) / 2`` (width) and ``s / sqrt(r) / 2`` (height)."""
    f = np.float32
    hf, wf = (ctx.cast_to(dims.scalar(a), np.float32) for a in (2, 3))
    one = ctx.const(f(1), "one")
    steps = []
    for size, step, offset in ((hf, p.steps[0], p.offsets[0]), (wf, p.steps[1], p.offsets[1])):
        step_t = ctx.make("Div", [one, size]) if p.steps[0] <= 0 or p.steps[1] <= 0 \
            else ctx.const(f(step), "step")
        k = ctx.make("Range", [ctx.const(f(0), "zero"), size, one])
        steps.append(ctx.make("Mul", [ctx.make("Add", [k, ctx.const(f(offset), "offset")]),
                                      step_t]))
    cy = ctx.make("Reshape", [steps[0], ctx.ints([-1, 1, 1], "cy")])        # (H, 1, 1)
    cx = ctx.make("Reshape", [steps[1], ctx.ints([1, -1, 1], "cx")])        # (1, W, 1)
    sizes = ctx.const(np.array(_prior_sizes(p), f), "sizes")
    roots = ctx.const(np.array(_prior_roots(p), f), "roots")
    scaled = ctx.make("Div", [ctx.make("Mul", [sizes, hf]), wf])
    hw = ctx.make("Div", [ctx.make("Mul", [scaled, roots]), ctx.const(f(2), "two")])
    hh = ctx.const(_prior_half_sizes(p, 1, 1)[1], "half_h")    # does not depend on H, W
    full = ctx.make("Concat", [dims.get([2]), dims.get([3]), ctx.ints([len(_prior_roots(p))],
                                                                      "a")], axis=0)
    parts = [ctx.make("Sub", [cx, hw]), ctx.make("Sub", [cy, hh]),
             ctx.make("Add", [cx, hw]), ctx.make("Add", [cy, hh])]
    parts = [ctx.make("Unsqueeze", [ctx.make("Expand", [t, full]), ctx.ints([3], "axes")])
             for t in parts]
    out = ctx.make("Concat", parts, axis=3)
    if p.clip:
        out = ctx.make("Clip", [out, ctx.const(f(0), "lo"), ctx.const(f(1), "hi")])
    return ctx.make("Reshape", [out, ctx.ints([1, -1, 4], "priors")])



def _best_class_onnx(ctx: LoweringContext, cls: str, classes: int) -> tuple[str, str]:
    """(int64 ids, scores) ``(B, A)`` of the best foreground class, as :func:`_best_class`."""
    f = np.float32
    fg = ctx.make("Slice", [cls, ctx.ints([1], "s"), ctx.ints([classes], "e"),
                            ctx.ints([1], "axis")])
    best = onnx_reduce(ctx, "ReduceMax", fg, (1,), False)
    ids = ctx.make("Add", [ctx.make("ArgMax", [fg], axis=1, keepdims=0),
                           ctx.const(np.asarray(1, np.int64), "one")])
    found = ctx.make("Greater", [best, ctx.const(f(-1), "minus_one")])
    ids = ctx.make("Where", [found, ids, ctx.const(np.asarray(0, np.int64), "zero")])
    return ids, ctx.make("Where", [found, best, ctx.const(f(-1), "minus_one")])


def _decode_onnx(ctx: LoweringContext, p, loc: str, anchor: str) -> str:
    """MXNet's ``TransformLocations`` on ``loc (B, A, 4)`` and ``anchor (A, 4)``."""
    f = np.float32
    al, at, ar, ab = (columns(ctx, anchor, k, k + 1, axis=1) for k in range(4))
    two = ctx.const(f(2), "two")
    aw, ah = ctx.make("Sub", [ar, al]), ctx.make("Sub", [ab, at])
    ax = ctx.make("Div", [ctx.make("Add", [al, ar]), two])
    ay = ctx.make("Div", [ctx.make("Add", [at, ab]), two])
    d = [columns(ctx, loc, k, k + 1) for k in range(4)]
    v = [ctx.const(f(x), "variance") for x in p.variances]
    ox = ctx.make("Add", [ctx.make("Mul", [ctx.make("Mul", [d[0], v[0]]), aw]), ax])
    oy = ctx.make("Add", [ctx.make("Mul", [ctx.make("Mul", [d[1], v[1]]), ah]), ay])
    ow = ctx.make("Div", [ctx.make("Mul", [ctx.make("Exp", [ctx.make("Mul", [d[2], v[2]])]),
                                           aw]), two])
    oh = ctx.make("Div", [ctx.make("Mul", [ctx.make("Exp", [ctx.make("Mul", [d[3], v[3]])]),
                                           ah]), two])
    out = ctx.make("Concat", [ctx.make("Sub", [ox, ow]), ctx.make("Sub", [oy, oh]),
                              ctx.make("Add", [ox, ow]), ctx.make("Add", [oy, oh])], axis=2)
    if p.clip:
        out = ctx.make("Clip", [out, ctx.const(f(0), "lo"), ctx.const(f(1), "hi")])
    return out


def _ranked(ctx: LoweringContext, p, rows: str, boxes: str, valid: str, ids: str,
            num: str) -> tuple[str, str]:
    """(rows sorted by score, whether each survived NMS) for NMS among the ``nms_topk`` best
    valid rows, class-aware unless ``force_suppress``."""
    neg = ctx.const(np.float32(-np.inf), "neg_inf")
    scores = ctx.make("Squeeze", [columns(ctx, rows, 1, 2), ctx.ints([2], "axes")])
    scores = ctx.make("Where", [valid, scores, neg])
    if p.nms_topk > 0:
        scores = top_scores(ctx, scores, p.nms_topk, num)
    # MXNet suppresses at overlap >= threshold, onnxruntime at iou > threshold: the float32
    # just below the threshold makes them the same test
    below = float(np.nextafter(as_f32(p.nms_threshold), np.float32(-np.inf)))
    keep = nms_keep(ctx, boxes, scores, below, num, None if p.force_suppress else ids)
    _, order = ctx.make("TopK", [scores, num], outputs=2, axis=1, largest=1, sorted=1)
    return gather_rows(ctx, rows, order), ctx.make("GatherElements", [keep, order], axis=1)


def _suppressed_ids(ctx: LoweringContext, out: str, ranked: str, kept: str, head: str) -> str:
    """The first ``nkeep`` rows (``head``) become the ranked rows, class id -1 where NMS
    suppressed them; later rows keep the compacted order with class id -1."""
    out = ctx.make("Where", [unsqueeze(ctx, head, 2), ranked, out])
    label = ctx.make("Squeeze", [columns(ctx, out, 0, 1), ctx.ints([2], "axes")])
    label = ctx.make("Where", [ctx.make("And", [head, kept]), label,
                               ctx.const(np.float32(-1), "minus_one")])
    return ctx.make("Concat", [unsqueeze(ctx, label, 2), columns(ctx, out, 1, 6)], axis=2)


def _detection_rows(ctx: LoweringContext, p, classes: int) -> tuple[str, str, str, str]:
    """(rows ``[id, score, box]`` ``(B, A, 6)``, decoded boxes, int64 ids with 0 = none,
    valid mask): best class, ``threshold``, decoding, as MXNet's first kernel."""
    ids, scores = _best_class_onnx(ctx, ctx.inputs[0], classes)
    zero = ctx.const(np.asarray(0, np.int64), "zero")
    weak = ctx.make("And", [ctx.make("Greater", [ids, zero]),
                            ctx.make("Less", [scores, ctx.const(as_f32(p.threshold), "thr")])])
    ids = ctx.make("Where", [weak, zero, ids])
    loc = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([0, -1, 4], "loc")])
    anchors = ctx.make("Reshape", [ctx.inputs[2], ctx.ints([-1, 4], "anchors")])
    boxes = _decode_onnx(ctx, p, loc, anchors)
    label = ctx.cast_to(ctx.make("Sub", [ids, ctx.const(np.asarray(1, np.int64))]), np.float32)
    rows = ctx.make("Concat", [unsqueeze(ctx, label, 2), unsqueeze(ctx, scores, 2), boxes],
                    axis=2)
    return rows, boxes, ids, ctx.make("Greater", [ids, zero])


def _detection_onnx(ctx: LoweringContext) -> None:
    """Decode, compact the valid rows (input order), then NMS over the ``nms_topk`` best:
    the first ``min(count, nms_topk)`` rows are those sorted by score with suppressed ones'
    class id -1; rows after them up to ``count`` keep the compacted order with id -1 (MXNet's
    quirk); the rest are all -1."""
    p = ctx.params
    if len(p.variances) != 4:
        raise ctx.fail(f"variances must have 4 elements, got {p.variances}")
    cdims = Dims(ctx, 0)
    if cdims.dyn[1]:
        raise ctx.fail("the number of classes (cls_prob axis 1) must be fixed, not dynamic")
    num = cdims.get([2])
    rows, boxes, ids, valid = _detection_rows(ctx, p, cdims.static[1])
    _, compact = ctx.make("TopK", [ctx.cast_to(valid, np.float32), num], outputs=2, axis=1,
                          largest=1, sorted=1)   # valid rows first, in input order
    out = gather_rows(ctx, rows, compact)
    pos = ctx.make("Range", [ctx.const(np.asarray(0, np.int64), "zero"), cdims.scalar(2),
                             ctx.const(np.asarray(1, np.int64), "one")])
    count = onnx_reduce(ctx, "ReduceSum", ctx.cast_to(valid, np.int64), (1,), True)  # (B, 1)
    if 0 < p.nms_threshold <= 1:
        ranked, kept = _ranked(ctx, p, rows, boxes, valid, ids, num)
        nkeep = count if p.nms_topk <= 0 else ctx.make("Min", [count, ctx.ints([p.nms_topk],
                                                                                "topk")])
        out = _suppressed_ids(ctx, out, ranked, kept, ctx.make("Less", [pos, nkeep]))
    live = unsqueeze(ctx, ctx.make("Less", [pos, count]), 2)
    deliver(ctx, ctx.make("Where", [live, out, ctx.const(np.float32(-1), "minus_one")]))


lowering("_contrib_MultiBoxPrior")(_prior_onnx)
lowering("_contrib_MultiBoxDetection")(_detection_onnx)
