"""Import handlers: Resize and Upsample.

Every ONNX resize mode is separable: along each resized axis the output is a fixed linear
map of the input (a 0/1 selection for ``nearest``, interpolation weights for ``linear`` and
``cubic``, antialiased or not). We compute that map *with onnx's own reference Resize*, run
on an identity matrix, so every coordinate transformation mode and rounding rule is exactly
ONNX's, and emit MXNet ops that apply it: ``UpSampling`` / ``repeat`` for integer nearest
upsampling, ``take`` for other nearest maps, ``dot`` with the weight matrix for the rest.
Resized axes need static sizes; the others (the batch) may vary.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._import_build import named_dims
from .._import_context import ImportContext, Value, importer

__all__: list[str] = []

_HELPER_OPSET = 19


def _axis_map(ctx: ImportContext, n: int, m: int, scale: float | None, attrs: dict,
              roi: tuple[float, float] | None) -> np.ndarray:
    """The (m, n) matrix W with ``out = W @ in`` along one axis."""
    from onnx import helper

    inputs = ["X", "roi" if roi is not None else "", "scales" if scale is not None else ""]
    if scale is None:
        inputs.append("sizes")
    node = helper.make_node("Resize", inputs, ["Y"], **attrs)
    feeds = {"X": np.eye(n, dtype=np.float64)}
    return _eval_map(ctx, node, feeds, n, m, roi, scale)


def _eval_map(ctx: ImportContext, node, feeds: dict, n: int, m: int, roi, scale):
    """(W, b): the output for the identity gives W, for zeros the constant part b (tf crop
    extrapolation)."""
    from onnx.reference import ReferenceEvaluator

    if roi is not None:
        feeds["roi"] = np.array([0.0, roi[0], 1.0, roi[1]], np.float32)
    if scale is not None:
        feeds["scales"] = np.array([1.0, scale], np.float32)
    else:
        feeds["sizes"] = np.array([n, m], np.int64)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ev = ReferenceEvaluator(node, opsets={"": _HELPER_OPSET})
            y = ev.run(None, feeds)[0]
            y0 = ev.run(None, {**feeds, "X": np.zeros((n, n))})[0]
    except Exception as exc:  # noqa: BLE001
        raise ctx.fail(f"these Resize attributes could not be evaluated: {exc}") from None
    if y.shape != (n, m):
        raise ctx.fail(f"resizing {n} -> {m} gave {y.shape[1]} elements; give sizes or scales "
                       "that agree with the output shape")
    return np.ascontiguousarray((y - y0).T), y0[0]


def _apply(ctx: ImportContext, s, axis: int, rank: int, wb: tuple, mode: str,
           dtype) -> object:
    w, bias = wb
    m, n = w.shape
    if np.any(bias):
        y = _apply(ctx, s, axis, rank, (w, bias * 0), "linear", dtype)
        shape = [1] * rank
        shape[axis] = m
        b = ctx.new_param(f"{ctx.node_name}_b{axis}", bias.reshape(shape).astype(dtype))
        return ctx.op("broadcast_add", y, b)
    if mode == "nearest" and np.all((w == 0) | (w == 1)) and np.all(w.sum(1) == 1):
        idx = w.argmax(1)
        if m % n == 0 and np.array_equal(idx, np.repeat(np.arange(n), m // n)):
            return ctx.op("repeat", s, repeats=m // n, axis=axis)
        return ctx.op("take", s, ctx.new_param(f"{ctx.node_name}_idx{axis}", idx.astype(
            np.int64)), axis=axis, mode="clip")
    last = rank - 1
    if axis != last:
        s = ctx.op("swapaxes", s, dim1=axis, dim2=last)
    wt = ctx.new_param(f"{ctx.node_name}_w{axis}", w.T.astype(dtype or np.float32))
    y = ctx.op("dot", s, wt)
    return y if axis == last else ctx.op("swapaxes", y, dim1=axis, dim2=last)


def _resize(ctx: ImportContext, x: Value, scales: list[float] | None, attrs: dict,
            roi: list[float] | None, sizes: list | None = None) -> object:
    """Per-axis maps; an axis with scale 1 (or a size equal to the input's, by value or by
    dim name) and no roi keeps its (possibly dynamic) size: every ONNX coordinate mode maps
    it onto itself."""
    rank, out = x.rank, ctx.out_shape()
    if rank is None or out is None or len(out) != rank:
        raise ctx.fail("Resize needs the input rank and the output shape")
    s, done = x.sym, []
    for a in range(rank):
        n, m = x.shape[a], out[a]
        if sizes is not None and isinstance(sizes[a], int):
            m = sizes[a]
        scale = None if scales is None else float(scales[a])
        same = scale == 1.0 if scales is not None else \
            (n == m or (sizes is not None and sizes[a] == n))
        if same and roi is None:
            continue
        if not isinstance(n, int) or not isinstance(m, int):
            raise ctx.fail(f"axis {a} is resized but its size is not static")
        r = None if roi is None else (roi[a], roi[a + rank])
        w = _axis_map(ctx, n, m, scale, attrs, r)
        if np.array_equal(w[0], np.eye(n)) and not np.any(w[1]):
            continue
        s = _apply(ctx, s, a, rank, w, attrs["mode"], x.dtype)
        done.append(a)
    return s if done else ctx.op("_copy", x.sym)


@importer("Resize", since=10)
def resize(ctx: ImportContext, x: Value, roi: Value | None = None,
           scales: Value | None = None, sizes: Value | None = None, *, mode: str = "nearest",
           coordinate_transformation_mode: str = "half_pixel", cubic_coeff_a: float = -0.75,
           exclude_outside: int = 0, extrapolation_value: float = 0.0,
           nearest_mode: str = "round_prefer_floor", antialias: int = 0,
           axes=None, keep_aspect_ratio_policy: str = "stretch") -> object:
    if ctx.version < 11:  # Resize-10: Upsample's semantics, scales as the 2nd input
        scales, roi = roi, None
        coordinate_transformation_mode, nearest_mode = "asymmetric", "floor"
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinate_transformation_mode,
             "cubic_coeff_a": cubic_coeff_a, "exclude_outside": exclude_outside,
             "extrapolation_value": extrapolation_value, "nearest_mode": nearest_mode,
             "antialias": antialias}
    sc = (scales.floats() or None) if scales is not None else None
    vec = None
    if sizes is not None:
        vec = named_dims(ctx, sizes)  # a constant, or named dims kept as they are
        if vec is None:
            sizes.ints()  # fails: records that the backend may specialize on it
        if axes is not None and x.shape is not None:  # the other axes keep their size
            full = list(x.shape)
            for a, v in zip(axes, vec):
                full[a if a >= 0 else a + len(full)] = v
            vec = full
    r = None
    if coordinate_transformation_mode == "tf_crop_and_resize":
        if roi is None:
            raise ctx.fail("tf_crop_and_resize needs a roi")
        r = roi.floats()
        if axes is not None:
            k = len(axes)
            r = _full_axes(ctx, x, r[:k], axes, 0.0) + _full_axes(ctx, x, r[k:], axes, 1.0)
    sc = _full_axes(ctx, x, sc, axes)
    if keep_aspect_ratio_policy != "stretch" and sizes is not None:
        sc, vec = _keep_aspect(ctx, x, vec, axes, keep_aspect_ratio_policy)
    return _resize(ctx, x, sc, attrs, r, vec)


def _keep_aspect(ctx: ImportContext, x: Value, vec: list, axes, policy: str
                 ) -> tuple[list[float], list[int]]:
    """ONNX's aspect-ratio policies: one scale for the resized axes (the smallest of
    ``sizes / input`` for ``not_larger``, the largest for ``not_smaller``) and output sizes
    ``round_half_up(scale * input)``."""
    shape = x.static_shape
    if shape is None or not all(isinstance(v, int) for v in vec):
        raise ctx.fail(f"keep_aspect_ratio_policy={policy!r} needs static input and output "
                       "sizes")
    if policy not in ("not_larger", "not_smaller"):
        raise ctx.fail(f"keep_aspect_ratio_policy={policy!r} is not stretch, not_larger or "
                       "not_smaller")
    chosen = [a if a >= 0 else a + len(shape) for a in (axes or range(len(shape)))]
    ratios = [vec[a] / shape[a] for a in chosen]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    sc = [scale if a in chosen else 1.0 for a in range(len(shape))]
    out = [int(scale * n + 0.5) if a in chosen else n for a, n in enumerate(shape)]
    if any(int(np.floor(scale * shape[a])) != out[a] for a in chosen):
        # the per-axis maps come from a resize by scale, whose size is floor(scale * n)
        raise ctx.fail(f"keep_aspect_ratio_policy={policy!r}: the output size "
                       f"round(scale * input) differs from floor(scale * input) (scale "
                       f"{scale:g}, input {list(shape)})")
    return sc, out


def _full_axes(ctx: ImportContext, x: Value, sc: list[float] | None, axes,
               fill: float = 1.0) -> list | None:
    if sc is None or axes is None:
        return sc
    full = [fill] * (x.rank or 0)
    for a, v in zip(axes, sc):
        full[a if a >= 0 else a + len(full)] = v
    return full


@importer("Upsample", since=7)
def upsample(ctx: ImportContext, x: Value, scales_in: Value | None = None, *,
             mode: str = "nearest", scales=None) -> object:
    sc = scales_in.floats() if scales_in is not None else [float(v) for v in scales]
    attrs = {"mode": mode, "coordinate_transformation_mode": "asymmetric",
             "nearest_mode": "floor", "cubic_coeff_a": -0.75, "exclude_outside": 0,
             "extrapolation_value": 0.0, "antialias": 0}
    return _resize(ctx, x, sc, attrs, None)


@importer("NonMaxSuppression", since=10)
def non_max_suppression(ctx: ImportContext, boxes: Value, scores: Value, *args: Value,
                        center_point_box: int = 0) -> object:
    """Not importable: ONNX returns ``(num_selected, 3)`` indices, a size known only at run
    time; MXNet 1.x graphs have static shapes (``_contrib_box_nms`` keeps every box and marks
    suppressed ones -1), and MXNet's box_nms cannot express max_output_boxes_per_class per
    batch and class with ONNX's output order."""
    raise ctx.fail("NonMaxSuppression's output size depends on the data; MXNet 1.x graphs have "
                   "static shapes (its _contrib_box_nms pads suppressed boxes with -1): "
                   "run the detector's post-processing outside the graph")
