"""Backward kernels of the loss-head operators (MXNet 1.9.1's ``_backward_*`` ops).

The forward ops and their gradient rules live in :mod:`.output`. These heads have MXNet's
special backward: the head gradient is *ignored*, and
the gradient is the loss's own derivative times ``grad_scale``:

* ``_backward_SoftmaxOutput`` ``(output, label)`` (MXNet's inputs): ``output - onehot(label)``
  per row (``smooth_alpha``: ``1 - alpha`` on the label's class, ``alpha / (C - 1)`` elsewhere; rows
  whose label equals ``ignore_label`` are 0 with ``use_ignore``; a label outside ``[0, C)``
  subtracts nothing). Rows are laid out as the forward normalises: ``(N, C, rest)`` with
  ``multi_output`` (label ``(N, rest)``; no smoothing, as MXNet), ``(-1, last)`` with
  ``preserve_shape``, else ``(N, -1)`` with the flattened label's first ``N`` values (MXNet reads
  those). ``normalization``: ``'batch'`` divides by the label count (``multi_output``: ``N``),
  ``'valid'`` by the labels not equal to ``ignore_label`` (at least 1), and ``multi_output``
  also divides by ``rest`` unless ``'valid'``. A label of the data's shape is a probability
  label: ``(output - label) * grad_scale``, nothing else. ``out_grad=True`` multiplies by
  MXNet's "head gradient", which in 1.9.1 is the *output* again (its backward node is given
  ``(output, label)`` only and reads input 0 as both; checked in the oracle).
* ``_backward_linear_reg_out``/``_backward_mae_reg_out``/``_backward_logistic_reg_out``
  ``(label, output)``: ``(output - label)`` (MAE: ``+1`` where ``output - label > 0``, else
  ``-1``) times ``grad_scale / (label.size / label.shape[0])``.
* ``_backward_SVMOutput`` ``(label, output)``: MXNet's L1/L2-SVM rows (``use_linear``) on
  ``(-1, last)``, times ``regularization_coefficient``.
* ``_backward_MakeLoss`` ``(data)``: ``grad_scale`` (``'batch'``: over ``N``; ``'valid'``: over
  the count of ``data > valid_thresh``, at least 1).
* ``_backward_ctc_loss`` ``(out_grad, data, label, [data_lengths], [label_lengths])``: the
  per-sample head gradient times d(loss)/d(activations) = ``softmax - posterior`` from the
  forward-backward recursion (0 past a sample's length and where no alignment fits, as
  MXNet's warp-ctc gives).

Their inputs differ from MXNet's (whose backward nodes read the forward node): each takes the
forward values it needs. The label inputs get no gradient. ONNX: every kernel lowers (one-hot
over the label by ``Equal``; CTC's as two ONNX Loops, the forward one of the CTCLoss lowering
keeping every step, a backward one over reversed time, and the posterior scattered onto the
classes by a MatMul with the one-hot of the extended labels).
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float
from ..lowering import LoweringContext, lowering, onnx_reduce
from ..lowering.math import onnx_input_as, onnx_work_dtype
from ..registry import OpDef, register
from .dense import work_dtype
from .output import ctc_tables, onnx_ctc_forward

__all__: list[str] = []

_NO_GRAD = "a backward kernel; MXNet 1.9.1 registers no gradient for it"


# --- SoftmaxOutput -------------------------------------------------------------------------------
def _rows_grad(out2: np.ndarray, label1: np.ndarray, p, smooth: bool) -> np.ndarray:
    """MXNet's SoftmaxGrad / SmoothSoftmaxGrad on (rows, C) with one label per row."""
    rows, classes = out2.shape
    k = label1.astype(np.int64)
    hit = np.arange(classes)[None, :] == k[:, None]
    alpha = p.smooth_alpha if smooth else 0.0
    if alpha:
        other = out2.dtype.type(alpha / (classes - 1))
        grad = np.where(hit, out2 - out2.dtype.type(1.0 - alpha), out2 - other)
    else:
        grad = np.where(hit, out2 - out2.dtype.type(1.0), out2)
    if p.use_ignore:
        grad[k == int(p.ignore_label)] = 0
    return grad


def _valid_count(label: np.ndarray, p) -> int:
    return max(int(np.sum(label.astype(np.int64) != int(p.ignore_label))), 1)


def _softmax_output_backward(p, out: np.ndarray, label: np.ndarray):
    wd = work_dtype(out.dtype)
    y = out.astype(wd, copy=False)
    if label.shape == out.shape:  # probability labels
        grad = (y - label.astype(wd)) * wd.type(p.grad_scale)
        if p.out_grad:
            grad = grad * y
        return grad.astype(out.dtype)
    if p.multi_output:
        n, c = out.shape[:2]
        rest = out.size // max(n * c, 1)
        lab = label.reshape(n, rest)
        y3 = y.reshape(n, c, rest)
        k = lab.astype(np.int64)[:, None, :]
        grad = np.where(np.arange(c)[None, :, None] == k, y3 - wd.type(1), y3)
        if p.use_ignore:
            grad = np.where(k == int(p.ignore_label), wd.type(0), grad)
        count = {"batch": n, "valid": _valid_count(lab, p)}.get(p.normalization, 1)
        grad = grad * wd.type(p.grad_scale / (1 if p.normalization == "valid" else rest)
                              / count)
    else:
        rows = (int(np.prod(out.shape[:-1])) if p.preserve_shape else out.shape[0])
        y2 = y.reshape(rows, -1)
        flat = label.reshape(-1)
        grad = _rows_grad(y2, flat[:rows], p, smooth=True)
        count = {"batch": flat.size, "valid": _valid_count(flat, p)}.get(p.normalization, 1)
        grad = grad * wd.type(p.grad_scale / count)
    if p.out_grad:  # MXNet 1.9.1 multiplies by its input 0, the output
        grad = grad.reshape(out.shape) * y
    return grad.reshape(out.shape).astype(out.dtype)


def _reads_label(op: OpDef) -> None:
    """The kernel reads its label input (symbol._graph.label_inputs keeps it a graph input)."""
    op.forward_reads_label = True


_reads_label(register(OpDef(
    "_backward_SoftmaxOutput",
    params={"grad_scale": Float(1.0), "ignore_label": Float(-1.0), "multi_output": Bool(False),
            "use_ignore": Bool(False), "preserve_shape": Bool(False),
            "normalization": Enum(("null", "batch", "valid"), "null"), "out_grad": Bool(False),
            "smooth_alpha": Float(0.0)},
    inputs=("output", "label"), compute=_softmax_output_backward,
    infer_shape=lambda p, s: (list(s), [s[0]]),
    infer_type=lambda p, t: (list(t), [t[0]]), no_gradient=_NO_GRAD,
    doc="SoftmaxOutput's gradient: (softmax - onehot(label)) * grad_scale, normalised; the "
        "head gradient is not an input (out_grad multiplies by the output, as MXNet).")))


def _softmax_output_grad_onnx(ctx: LoweringContext) -> None:
    """The kernel's cases as compositions: one-hot by ``Equal`` against the class indices,
    ``Where`` for ``use_ignore``, the normalisation count (``'valid'``: a ReduceSum of the
    labels not ignored) as a divisor."""
    p = ctx.params
    out_shape = tuple(ctx.in_shapes[0])
    lab_shape = tuple(ctx.in_shapes[1])
    rank = len(out_shape)
    work = onnx_work_dtype(ctx.in_dtypes[0])
    y = onnx_input_as(ctx, 0, work)
    if lab_shape == out_shape:  # probability labels
        grad = ctx.make("Mul", [ctx.make("Sub", [y, onnx_input_as(ctx, 1, work)]),
                                ctx.const(work.type(p.grad_scale), "scale")])
        _softmax_output_grad_finish(ctx, grad, y, work)
        return
    rows_y = y
    if p.multi_output:
        axis, rest = 1, int(np.prod(out_shape[2:]))
        lab = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([out_shape[0], 1] + list(
            out_shape[2:]), "label_shape")])
        count_labels = ctx.inputs[1]
    else:
        axis, rest = rank - 1, 1
        if not p.preserve_shape and rank != 2:  # (N, -1) rows, the first N labels
            rows_y = ctx.make("Flatten", [y], axis=1)
            axis = 1
        flat = ctx.make("Reshape", [ctx.inputs[1], ctx.ints([-1], "flat")])
        rows = int(np.prod(out_shape[:-1])) if p.preserve_shape else int(out_shape[0])
        lab = ctx.make("Slice", [flat, ctx.ints([0], "s"), ctx.ints([rows], "e"),
                                 ctx.ints([0], "a")])
        lab = ctx.make("Reshape", [lab, ctx.ints(
            list(out_shape[:-1]) + [1] if p.preserve_shape else [rows, 1], "label_rows")])
        count_labels = flat
    classes = int(ctx.in_shapes[0][axis]) if rows_y is y else int(np.prod(out_shape[1:]))
    k = ctx.cast_to(lab, np.int64)
    index = np.arange(classes, dtype=np.int64).reshape(
        [-1] + [1] * ((rank if rows_y is y else 2) - axis - 1))
    hot = ctx.make("Equal", [k, ctx.const(index, "classes")])
    alpha = 0.0 if p.multi_output else p.smooth_alpha
    if alpha:
        sub = ctx.make("Where", [hot, ctx.const(work.type(1.0 - alpha), "hit"),
                                 ctx.const(work.type(alpha / (classes - 1)), "miss")])
    else:
        sub = ctx.cast_to(hot, work)
    grad = ctx.make("Sub", [rows_y, sub])
    ignore = ctx.const(np.int64(int(p.ignore_label)), "ignore")
    if p.use_ignore:
        grad = ctx.make("Where", [ctx.make("Equal", [k, ignore]), ctx.const(work.type(0), "zero"),
                                  grad])
    if rows_y is not y:
        grad = ctx.make("Reshape", [grad, ctx.make("Shape", [y])])
    n_labels = int(np.prod(lab_shape))
    if p.normalization == "valid":
        kept = ctx.make("Not", [ctx.make("Equal", [ctx.cast_to(count_labels, np.int64),
                                                   ignore])])
        count = ctx.make("Max", [ctx.make("ReduceSum", [ctx.cast_to(kept, work)], keepdims=0),
                                 ctx.const(work.type(1), "one")])
        grad = ctx.make("Div", [ctx.make("Mul", [grad, ctx.const(work.type(p.grad_scale),
                                                                 "scale")]), count])
    else:
        count = {"batch": out_shape[0] if p.multi_output else n_labels}.get(p.normalization, 1)
        grad = ctx.make("Mul", [grad, ctx.const(work.type(p.grad_scale / rest / count),
                                                "scale")])
    _softmax_output_grad_finish(ctx, grad, y, work)


def _softmax_output_grad_finish(ctx: LoweringContext, grad: str, y: str, work: np.dtype) -> None:
    if ctx.params.out_grad:  # MXNet 1.9.1 multiplies by the output (its input 0)
        grad = ctx.make("Mul", [grad, y])
    if np.dtype(ctx.in_dtypes[0]) != work:
        grad = ctx.cast_to(grad, ctx.in_dtypes[0])
    ctx.make("Identity", [grad], outputs=[ctx.outputs[0]])


lowering("_backward_SoftmaxOutput")(_softmax_output_grad_onnx)


# --- regression outputs --------------------------------------------------------------------------
def _regression_backward(mae: bool):
    def kernel(p, label: np.ndarray, out: np.ndarray) -> np.ndarray:
        wd = work_dtype(out.dtype)
        diff = out.astype(wd) - label.astype(wd).reshape(out.shape)
        if mae:
            diff = np.where(diff > 0, wd.type(1), wd.type(-1))
        per_row = label.size // max(label.shape[0], 1) if label.ndim else 1
        return (diff * wd.type(p.grad_scale / per_row)).astype(out.dtype)

    return kernel


def _regression_onnx(mae: bool):
    def handler(ctx: LoweringContext) -> None:
        p = ctx.params
        lab_shape = tuple(ctx.in_shapes[0])
        per_row = int(np.prod(lab_shape)) // max(int(lab_shape[0]), 1) if lab_shape else 1
        work = onnx_work_dtype(ctx.in_dtypes[1])
        y = onnx_input_as(ctx, 1, work)
        lab = ctx.make("Reshape", [onnx_input_as(ctx, 0, work), ctx.make("Shape", [y])])
        diff = ctx.make("Sub", [y, lab])
        if mae:
            diff = ctx.make("Where", [ctx.make("Greater", [diff, ctx.const(work.type(0), "zero")]),
                                      ctx.const(work.type(1), "one"),
                                      ctx.const(work.type(-1), "minus_one")])
        grad = ctx.make("Mul", [diff, ctx.const(work.type(p.grad_scale / per_row), "scale")])
        if np.dtype(ctx.in_dtypes[1]) != work:
            grad = ctx.cast_to(grad, ctx.in_dtypes[1])
        ctx.make("Identity", [grad], outputs=[ctx.outputs[0]])

    return handler


for _name, _mae in (("_backward_linear_reg_out", False), ("_backward_mae_reg_out", True),
                    ("_backward_logistic_reg_out", False)):
    _reads_label(register(OpDef(
        _name, params={"grad_scale": Float(1.0)}, inputs=("label", "output"),
        compute=_regression_backward(_mae), infer_shape=lambda p, s: (list(s), [s[1]]),
        infer_type=lambda p, t: (list(t), [t[1]]), no_gradient=_NO_GRAD,
        doc="A regression head's gradient: (output - label) (MAE: its sign) * grad_scale / "
            "outputs per sample.")))
    lowering(_name)(_regression_onnx(_mae))


# --- SVMOutput -----------------------------------------------------------------------------------
def _svm_backward(p, label: np.ndarray, out: np.ndarray) -> np.ndarray:
    wd = work_dtype(out.dtype)
    y = out.astype(wd).reshape(-1, out.shape[-1]) if out.ndim else out.astype(wd).reshape(1, 1)
    k = label.reshape(-1)[:y.shape[0]].astype(np.int64)
    hit = np.arange(y.shape[1])[None, :] == k[:, None]
    margin, coef = wd.type(p.margin), wd.type(p.regularization_coefficient)
    if p.use_linear:
        grad = np.where(hit, -(margin > y).astype(wd), (margin > -y).astype(wd)) * coef
    else:
        grad = np.where(hit, np.where(margin > y, 2 * (margin - y), wd.type(0)),
                        np.where(margin > -y, -2 * (margin + y), wd.type(0))) * -coef
    return grad.reshape(out.shape).astype(out.dtype)


_reads_label(register(OpDef(
    "_backward_SVMOutput",
    params={"margin": Float(1.0), "regularization_coefficient": Float(1.0),
            "use_linear": Bool(False)},
    inputs=("label", "output"), compute=_svm_backward,
    infer_shape=lambda p, s: (list(s), [s[1]]), infer_type=lambda p, t: (list(t), [t[1]]),
    no_gradient=_NO_GRAD,
    doc="SVMOutput's gradient: MXNet's L1/L2 hinge rows against the label's class.")))


def _svm_grad_onnx(ctx: LoweringContext) -> None:
    """The hinge rows as Where compositions over a one-hot of the label (last axis)."""
    p = ctx.params
    out_shape = tuple(ctx.in_shapes[1])
    work = onnx_work_dtype(ctx.in_dtypes[1])
    y = onnx_input_as(ctx, 1, work)
    rows = int(np.prod(out_shape[:-1]))
    flat = ctx.make("Reshape", [ctx.inputs[0], ctx.ints([-1], "flat")])
    lab = ctx.make("Slice", [flat, ctx.ints([0], "s"), ctx.ints([rows], "e"), ctx.ints([0], "a")])
    k = ctx.cast_to(ctx.make("Reshape", [lab, ctx.ints(list(out_shape[:-1]) + [1], "rows")]),
                    np.int64)
    hot = ctx.make("Equal", [k, ctx.const(np.arange(out_shape[-1], dtype=np.int64), "classes")])
    margin = ctx.const(work.type(p.margin), "margin")
    neg_y = ctx.make("Neg", [y])
    zero = ctx.const(work.type(0), "zero")
    coef = work.type(p.regularization_coefficient)
    if p.use_linear:
        on = ctx.make("Neg", [ctx.cast_to(ctx.make("Greater", [margin, y]), work)])
        off = ctx.cast_to(ctx.make("Greater", [margin, neg_y]), work)
        scale = coef
    else:
        two = ctx.const(work.type(2), "two")
        on = ctx.make("Where", [ctx.make("Greater", [margin, y]),
                                ctx.make("Mul", [two, ctx.make("Sub", [margin, y])]), zero])
        off = ctx.make("Where", [ctx.make("Greater", [margin, neg_y]), ctx.make(
            "Mul", [ctx.const(work.type(-2), "minus_two"), ctx.make("Add", [margin, y])]), zero])
        scale = -coef
    grad = ctx.make("Mul", [ctx.make("Where", [hot, on, off]), ctx.const(work.type(scale),
                                                                         "coef")])
    if np.dtype(ctx.in_dtypes[1]) != work:
        grad = ctx.cast_to(grad, ctx.in_dtypes[1])
    ctx.make("Identity", [grad], outputs=[ctx.outputs[0]])


lowering("_backward_SVMOutput")(_svm_grad_onnx)


# --- MakeLoss ------------------------------------------------------------------------------------
def _make_loss_backward(p, x: np.ndarray) -> np.ndarray:
    if p.normalization == "valid":
        scale = p.grad_scale / max(float(np.sum(x > x.dtype.type(p.valid_thresh))), 1.0)
    elif p.normalization == "batch":
        scale = p.grad_scale / (x.shape[0] if x.ndim else 1)
    else:
        scale = p.grad_scale
    return np.full(x.shape, scale, x.dtype)


def _make_loss_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    dt = np.dtype(ctx.in_dtypes[0])
    if p.normalization == "valid":
        x = ctx.inputs[0]
        count = ctx.make("ReduceSum", [ctx.cast_to(ctx.make("Greater", [
            x, ctx.const(dt.type(p.valid_thresh), "thresh")]), dt)], keepdims=0)
        scale = ctx.make("Div", [ctx.const(dt.type(p.grad_scale), "scale"),
                                 ctx.make("Max", [count, ctx.const(dt.type(1), "one")])])
    else:
        n = ctx.in_shapes[0][0] if ctx.in_shapes[0] else 1
        scale = ctx.const(dt.type(p.grad_scale / (n if p.normalization == "batch" else 1)),
                          "scale")
    ctx.make("Expand", [scale, ctx.make("Shape", [ctx.inputs[0]])], outputs=[ctx.outputs[0]])


register(OpDef(
    "_backward_MakeLoss",
    params={"grad_scale": Float(1.0), "valid_thresh": Float(0.0),
            "normalization": Enum(("null", "batch", "valid"), "null")},
    compute=_make_loss_backward, no_gradient=_NO_GRAD,
    doc="MakeLoss's gradient: grad_scale everywhere, over N (batch) or over the count of "
        "data > valid_thresh (valid)."))
lowering("_backward_MakeLoss")(_make_loss_onnx)


# --- CTCLoss -------------------------------------------------------------------------------------
def _logsumexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)) + safe


def _ctc_backward(p, og: np.ndarray, data: np.ndarray, label: np.ndarray, *rest: np.ndarray):
    """d(loss)/d(data) by the forward-backward recursion in log space, times ``og[n]``."""
    tab = ctc_tables(p, data, label, *rest)
    emit, skip, logp = tab["emit"], tab["skip"], tab["logp"]
    data_len, lab_len = tab["data_len"], tab["lab_len"]
    t_max, n, s_max = emit.shape
    neg = -np.inf
    alpha = np.full(emit.shape, neg)
    if t_max:
        alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, t_max):
        prev = alpha[t - 1]
        one = np.pad(prev[:, :-1], ((0, 0), (1, 0)), constant_values=neg)
        two = np.where(skip, np.pad(prev[:, :-2], ((0, 0), (2, 0)), constant_values=neg), neg)
        alpha[t] = _logsumexp3(prev, one, two) + emit[t]
    states = np.arange(s_max)[None, :]
    ends = (states == 2 * lab_len[:, None]) | ((states == 2 * lab_len[:, None] - 1)
                                               & (lab_len[:, None] > 0))
    beta = np.full(emit.shape, neg)
    skip_next = np.pad(skip[:, 2:], ((0, 0), (0, 2)), constant_values=False)
    for t in range(t_max - 1, -1, -1):
        last = (t == data_len - 1)[:, None]
        if t + 1 < t_max:
            nxt = beta[t + 1]
            one = np.pad(nxt[:, 1:], ((0, 0), (0, 1)), constant_values=neg)
            two = np.where(skip_next, np.pad(nxt[:, 2:], ((0, 0), (0, 2)), constant_values=neg),
                           neg)
            step = _logsumexp3(nxt, one, two) + emit[t]
        else:
            step = np.full((n, s_max), neg)
        beta[t] = np.where(last, np.where(ends, emit[t], neg), step)
    live = (np.arange(t_max)[:, None] < data_len[None, :])  # (T, N)
    # p(label) = sum_s alpha_t(s) beta_t(s) / y_t(s) at any live t; t = 0 here. Samples with
    # no alignment give -inf - -inf = NaN below; they are zeroed by ``feasible``.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        loglike = (np.logaddexp.reduce(alpha[0] + beta[0] - emit[0], axis=1) if t_max
                   else np.zeros(n))
        post = alpha + beta - emit - loglike[None, :, None]  # log posterior of each state
        classes = data.shape[2]
        occ = np.full((t_max, n, classes), neg)
        ext = np.broadcast_to(tab["ext"], (t_max, n, s_max))
        for s in range(s_max):  # scatter-logaddexp the states onto their classes
            idx = ext[:, :, s:s + 1]
            cur = np.take_along_axis(occ, idx, axis=2)
            np.put_along_axis(occ, idx, np.logaddexp(cur, post[:, :, s:s + 1]), axis=2)
        grad = np.exp(logp) - np.exp(occ)
    feasible = ~((lab_len + tab["repeats"] > data_len) | (data_len == 0))
    keep = live[:, :, None] & feasible[None, :, None]
    if p.use_data_lengths:  # MXNet then masks the gradient with SequenceMask: lengths truncated
        cut = np.trunc(np.asarray(rest[0], np.float64)).astype(np.int64)
        keep &= (np.arange(t_max)[:, None] < cut[None, :])[:, :, None]
    grad = np.where(keep, grad, 0.0) * og.astype(np.float64)[None, :, None]
    return grad.astype(data.dtype)


def _ctc_grad_inputs(p) -> tuple[str, ...]:
    names = ("out_grad", "data", "label", "data_lengths", "label_lengths")
    return tuple(n for n, on in zip(names, (True, True, True, p.use_data_lengths,
                                            p.use_label_lengths)) if on)


_reads_label(register(OpDef(
    "_backward_ctc_loss",
    params={"use_data_lengths": Bool(False), "use_label_lengths": Bool(False),
            "blank_label": Enum(("first", "last"), "first")},
    inputs=_ctc_grad_inputs, compute=_ctc_backward,
    infer_shape=lambda p, s: (list(s), [s[1]]), infer_type=lambda p, t: (list(t), [t[1]]),
    no_gradient=_NO_GRAD,
    doc="CTCLoss's gradient w.r.t. its activations (softmax minus the label posterior), "
        "scaled per sample by the head gradient.")))


def _const(ctx: LoweringContext, value) -> str:
    """A Constant node (a Loop body holds its own constants)."""
    from onnx import numpy_helper

    return ctx.make("Constant", [], value=numpy_helper.from_array(np.asarray(value)))


def _onnx_ctc_beta_body(ctx: LoweringContext, n_states: int):
    """One step of the backward recursion at ``t = steps - 1 - iter``: each sample starts at
    its last step (``data_len - 1``) from its end states, and is ``-inf`` after it."""
    from onnx import TensorProto, helper

    outer, ctx.nodes = ctx.nodes, []
    names = [ctx.fresh(h) for h in ("iter", "cond", "beta_in", "emit", "skip_next", "data_len",
                                    "ends", "steps")]
    i, cond, beta, emit, skip_next, data_len, ends, steps = names
    neg_inf, zero = _const(ctx, np.float32(-np.inf)), _const(ctx, np.float32(0))
    one_i = _const(ctx, np.int64(1))
    t = ctx.make("Sub", [ctx.make("Sub", [steps, one_i]), i])
    axis1 = _const(ctx, np.array([1], np.int64))

    def shifted(k: int) -> str:
        pads = _const(ctx, np.array([0, 0, 0, k], np.int64))
        padded = ctx.make("Pad", [beta, pads, neg_inf])
        return ctx.make("Slice", [padded, _const(ctx, np.array([k], np.int64)),
                                  _const(ctx, np.array([n_states + k], np.int64)), axis1])

    emit_t = ctx.make("Gather", [emit, t], axis=0)
    terms = [beta, shifted(1), ctx.make("Where", [skip_next, shifted(2), neg_inf])]
    m = ctx.make("Max", terms)
    m = ctx.make("Where", [ctx.make("Equal", [m, neg_inf]), zero, m])
    lse = ctx.make("Add", [ctx.make("Log", [ctx.make("Sum", [
        ctx.make("Exp", [ctx.make("Sub", [x, m])]) for x in terms])]), m])
    step = ctx.make("Add", [lse, emit_t])
    last_t = ctx.make("Sub", [data_len, one_i])
    at_last = ctx.make("Unsqueeze", [ctx.make("Equal", [t, last_t]), axis1])
    before = ctx.make("Unsqueeze", [ctx.make("Less", [t, last_t]), axis1])
    new = ctx.make("Where", [at_last, ctx.make("Where", [ends, emit_t, neg_inf]),
                             ctx.make("Where", [before, step, neg_inf])])
    outs = [ctx.make("Identity", [cond]), new]
    outs += [ctx.make("Identity", [x]) for x in (emit, skip_next, data_len, ends, steps)]
    outs.append(ctx.make("Identity", [new]))
    nodes, ctx.nodes = ctx.nodes, outer
    kinds = [(TensorProto.INT64, []), (TensorProto.BOOL, []),
             (TensorProto.FLOAT, [None, n_states]), (TensorProto.FLOAT, [None, None, n_states]),
             (TensorProto.BOOL, [None, n_states]), (TensorProto.INT64, None),
             (TensorProto.BOOL, [None, n_states]), (TensorProto.INT64, [])]
    info = helper.make_tensor_value_info
    return helper.make_graph(nodes, ctx.fresh("ctc_back_step"),
                             [info(n, *k) for n, k in zip(names, kinds)],
                             [info(n, *k) for n, k in zip(outs, kinds[1:] + [kinds[2]])])


def _ctc_grad_onnx(ctx: LoweringContext) -> None:
    """Alphas from the CTCLoss lowering's Loop (every step kept), betas from a Loop over
    reversed time, the state posteriors scattered onto the classes, as :func:`_ctc_backward`."""
    p = ctx.params
    tab = onnx_ctc_forward(ctx, base=1, keep_alphas=True)
    n_states, classes, neg_inf = tab["n_states"], tab["classes"], tab["neg_inf"]
    lab_len, data_len, steps = tab["lab_len"], tab["data_len"], tab["steps"]
    states = ctx.ints(np.arange(n_states), "states")
    two_l = ctx.make("Unsqueeze", [ctx.make("Mul", [lab_len, ctx.const(np.int64(2), "two")]),
                                   ctx.ints([1], "a")])
    has_label = ctx.make("Unsqueeze", [ctx.make("Greater", [lab_len, ctx.const(
        np.int64(0), "zero")]), ctx.ints([1], "a")])
    ends = ctx.make("Or", [ctx.make("Equal", [states, two_l]), ctx.make("And", [
        ctx.make("Equal", [states, ctx.make("Sub", [two_l, ctx.const(np.int64(1), "one")])]),
        has_label])])
    skip_i = ctx.make("Pad", [ctx.cast_to(tab["skip"], np.int32), ctx.ints([0, 0, 0, 2],
                                                                          "pads")])
    skip_next = ctx.cast_to(ctx.make("Slice", [skip_i, ctx.ints([2], "s"),
                                               ctx.ints([n_states + 2], "e"),
                                               ctx.ints([1], "a")]), np.bool_)
    beta0 = ctx.make("Expand", [neg_inf, ctx.make("Shape", [tab["skip"]])])
    looped = ctx.make("Loop", [steps, "", beta0, tab["emit"], skip_next, data_len, ends, steps],
                      outputs=7, body=_onnx_ctc_beta_body(ctx, n_states))
    betas = ctx.make("Slice", [looped[6], ctx.ints([-1], "s"), ctx.ints([-(2 ** 62)], "e"),
                               ctx.ints([0], "a"), ctx.ints([-1], "st")])
    zero_f = ctx.const(np.float32(0), "zero_f")
    joint = ctx.make("Sub", [ctx.make("Add", [tab["alphas"], betas]), tab["emit"]])
    first = ctx.make("Gather", [joint, ctx.const(np.int64(0), "t0")], axis=0)  # (N, S)
    m = onnx_reduce(ctx, "ReduceMax", first, [1])
    m = ctx.make("Where", [ctx.make("Equal", [m, neg_inf]), zero_f, m])
    loglike = ctx.make("Add", [ctx.make("Log", [ctx.make("ReduceSum", [
        ctx.make("Exp", [ctx.make("Sub", [first, m])]), ctx.ints([1], "a")], keepdims=1)]), m])
    gamma = ctx.make("Exp", [ctx.make("Sub", [joint, loglike])])  # (T, N, S)
    onehot = ctx.cast_to(ctx.make("Equal", [ctx.make("Unsqueeze", [tab["ext"], ctx.ints(
        [2], "a")]), ctx.ints(np.arange(classes), "classes")]), np.float32)  # (N, S, C)
    occ = ctx.make("Squeeze", [ctx.make("MatMul", [ctx.make("Unsqueeze", [
        gamma, ctx.ints([2], "a")]), onehot]), ctx.ints([2], "a")])  # (T, N, C)
    grad = ctx.make("Sub", [ctx.make("Exp", [tab["logp"]]), occ])
    times = ctx.make("Unsqueeze", [ctx.make("Range", [ctx.const(np.int64(0), "zero_i"), steps,
                                                      ctx.const(np.int64(1), "one")]),
                                   ctx.ints([1], "a")])  # (T, 1)
    keep = ctx.make("Less", [times, ctx.make("Unsqueeze", [data_len, ctx.ints([0], "a")])])
    feasible = ctx.make("Not", [ctx.make("Or", [
        ctx.make("Greater", [ctx.make("Add", [lab_len, tab["repeats"]]), data_len]),
        ctx.make("Equal", [data_len, ctx.const(np.int64(0), "zero")])])])
    keep = ctx.make("And", [keep, ctx.make("Unsqueeze", [feasible, ctx.ints([0], "a")])])
    if p.use_data_lengths:  # MXNet's SequenceMask: lengths truncated (Cast truncates)
        cut = ctx.cast_to(ctx.inputs[3], np.int64)
        keep = ctx.make("And", [keep, ctx.make("Less", [times, ctx.make(
            "Unsqueeze", [cut, ctx.ints([0], "a")])])])
    grad = ctx.make("Where", [ctx.make("Unsqueeze", [keep, ctx.ints([2], "a")]), grad, zero_f])
    og = ctx.make("Unsqueeze", [ctx.inputs[0], ctx.ints([0, 2], "a")])
    ctx.make("Mul", [grad, og], outputs=[ctx.outputs[0]])


lowering("_backward_ctc_loss")(_ctc_grad_onnx)
