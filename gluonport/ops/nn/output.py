"""Legacy output (loss-head) operators, forward/inference semantics (MXNet 1.9.1).

Registered here: ``SoftmaxOutput`` (alias ``Softmax``), ``LinearRegressionOutput``,
``MAERegressionOutput``, ``LogisticRegressionOutput``, ``SVMOutput``, ``MakeLoss``,
``make_loss`` and ``BlockGrad`` (alias ``stop_gradient``).

These ops end the graphs of legacy (Module-API) checkpoints: ``SoftmaxOutput`` with a
``softmax_label`` variable is the classic one. Their forward pass ignores the label (it only
shapes the backward pass), so a model runs with the label absent as long as its shape can be
inferred. What MXNet 1.9.1 does in the forward pass:

* ``SoftmaxOutput``: softmax over axis 1 of ``(N, C, rest)`` when ``multi_output``; over the last
  axis when ``preserve_shape``; otherwise over *all* non-batch elements (the data is flattened to
  ``(N, -1)``). The label's shape is inferred as the data shape without its last axis (or
  ``(N, prod(shape[2:]))`` with ``multi_output``); a label of the data's own shape is accepted
  (probability labels). This is MXNet's reference kernel, which it runs in training and on GPU;
  its CPU (oneDNN) *inference* path normalises float32 data of rank 1, 2 or 4 over the last axis
  instead, which differs for rank-4 data without ``multi_output``/``preserve_shape``.
* the regression outputs (float data only): identity (``Logistic``: sigmoid); an unknown label
  gets the data's shape, or ``(N,)`` for data of shape ``(N, 1)``.
* ``SVMOutput``, ``MakeLoss``, ``make_loss``, ``BlockGrad``: identity.

Gradients: MXNet's loss-head backward (the head gradient ignored; see :mod:`.output_grad`,
whose kernels the rules here call); ``make_loss``'s is ones, ``BlockGrad``'s zero.

ONNX export: the forward pass only (Softmax / Sigmoid / Identity on the data); a variable used
only as a label is not an input of the ONNX model.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float
from ...errors import DTypeError, ShapeError
from ..infer import fmt, known, merge
from ..lowering import LoweringContext, lowering
from ..lowering.math import named, onnx_compute
from ..registry import OpDef, register, zero_gradient
from .dense import require_float, sigmoid, softmax_along, work_dtype

__all__ = ["ctc_tables", "onnx_ctc_forward"]


def _uniform_type(p, in_types: list) -> tuple[list, list]:
    """MXNet's ElemwiseType / UNIFORM_TYPE_CHECK: label and output share the data's dtype."""
    dt = next((t for t in in_types if t is not None), None)
    return [dt] * len(in_types), [dt]


def _attrs(p) -> dict:
    """The forward op's attributes for its backward kernel (unset optionals left out)."""
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _head_rule(backward: str, output_first: bool = False):
    """A loss head's gradient: one ``_backward_*`` kernel of :mod:`.output_grad` from the
    output and the label, in MXNet's input order; the head gradient is ignored, as MXNet
    ignores it, and the label gets none."""

    def rule(F, p, inputs, outputs, ograds):
        fn = getattr(F._internal, backward)
        args = [outputs[0], inputs[1]] if output_first else [inputs[1], outputs[0]]
        return [fn(*args, **_attrs(p)), None]

    return rule


# --- SoftmaxOutput -------------------------------------------------------------------------------
def _multi_output_labels(data: tuple) -> list[tuple]:
    """The label shapes MXNet accepts with ``multi_output``: (N, rest), (N, d2, ...), and the
    data shape with axis 1 set to 1."""
    n, c = data[0], data[1]
    rest = int(np.prod(data, dtype=np.int64)) // max(n * c, 1)
    return [(n, rest), (n,) + tuple(data[2:]), (n, 1) + tuple(data[2:])]


def _softmax_output_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data, label = ins[0], ins[1]
    if data is None:
        return ins, [None]
    data = tuple(data)
    if label is not None and tuple(label) == data:  # probabilities as labels
        return ins, [data]
    if not p.multi_output:
        ins[1] = merge(label, data[:-1], "label: ")
    elif len(data) >= 2 and known(data):
        allowed = _multi_output_labels(data)
        if label is None:
            ins[1] = allowed[0]
        elif tuple(label) not in allowed:
            raise ShapeError(f"label: expecting {fmt(allowed[0])} or {fmt(allowed[1])} for "
                             f"data {fmt(data)} with multi_output, got {fmt(label)}")
    return ins, [data]


def _softmax_output(p, x: np.ndarray, label: np.ndarray | None = None) -> np.ndarray:
    require_float("SoftmaxOutput", x)
    if p.multi_output:
        if x.ndim < 2:
            raise ShapeError(f"SoftmaxOutput(multi_output=True): data of shape {fmt(x.shape)} "
                             "needs an axis 1 to normalise over")
        return softmax_along(x.reshape(x.shape[0], x.shape[1], -1), 1).reshape(x.shape)
    if p.preserve_shape:
        return softmax_along(x, x.ndim - 1)
    if x.ndim == 0:
        raise ShapeError("SoftmaxOutput: data is a scalar; give it a batch axis")
    return softmax_along(x.reshape(x.shape[0], -1), 1).reshape(x.shape)


register(OpDef(
    "SoftmaxOutput",
    params={"grad_scale": Float(1.0), "ignore_label": Float(-1.0), "multi_output": Bool(False),
            "use_ignore": Bool(False), "preserve_shape": Bool(False),
            "normalization": Enum(("null", "batch", "valid"), "null"), "out_grad": Bool(False),
            "smooth_alpha": Float(0.0)},
    inputs=("data", "label"), infer_shape=_softmax_output_shape, infer_type=_uniform_type,
    compute=_softmax_output, aliases=("Softmax",),
    gradient=_head_rule("_backward_SoftmaxOutput", output_first=True),
    doc="Softmax forward of a cross-entropy loss head; the label only matters for backward.",
    lists_output_names=True))


# --- regression outputs --------------------------------------------------------------------------
def _regression_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data, label = ins[0], ins[1]
    if data is None or not known(data):
        return ins, [None if data is None else tuple(data)]
    data = tuple(data)
    if label is None:
        ins[1] = (data[0],) if len(data) == 2 and data[1] == 1 else data
    elif known(label) and (label[0] != data[0] or np.prod(label) != np.prod(data)):
        raise ShapeError(f"label: shape {fmt(label)} does not fit data {fmt(data)}; it needs "
                         "the same batch size and number of elements")
    return ins, [data]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return sigmoid(x.astype(work_dtype(x.dtype), copy=False)).astype(x.dtype, copy=False)


def _regression(name: str, fn, doc: str, backward: str) -> None:
    def compute(p, x: np.ndarray, label: np.ndarray | None = None) -> np.ndarray:
        require_float(name, x)
        return fn(x)

    compute.__name__ = f"_{name}"
    register(OpDef(name, params={"grad_scale": Float(1.0)}, inputs=("data", "label"),
                   infer_shape=_regression_shape, infer_type=_uniform_type, compute=compute,
                   gradient=_head_rule(backward), doc=doc))


_regression("LinearRegressionOutput", lambda x: x.copy(),
            "Identity forward of a squared-error regression head.", "_backward_linear_reg_out")
_regression("MAERegressionOutput", lambda x: x.copy(),
            "Identity forward of an absolute-error regression head.", "_backward_mae_reg_out")
_regression("LogisticRegressionOutput", _sigmoid,
            "Sigmoid forward of a logistic regression head.", "_backward_logistic_reg_out")


# --- SVMOutput -----------------------------------------------------------------------------------
def _svm_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data = ins[0]
    if data is None:
        return ins, [None]
    ins[1] = merge(ins[1], tuple(data)[:-1], "label: ")
    return ins, [tuple(data)]


register(OpDef(
    "SVMOutput",
    params={"margin": Float(1.0), "regularization_coefficient": Float(1.0),
            "use_linear": Bool(False)},
    inputs=("data", "label"), infer_shape=_svm_shape, infer_type=_uniform_type,
    compute=lambda p, x, label=None: x.copy(), gradient=_head_rule("_backward_SVMOutput"),
    doc="Identity forward of a hinge-loss (SVM) head; label shape is data.shape[:-1].",
    lists_output_names=True))


# --- loss markers and gradient blocking ----------------------------------------------------------
def _identity(p, x: np.ndarray) -> np.ndarray:
    return x.copy()


register(OpDef(
    "MakeLoss",
    params={"grad_scale": Float(1.0), "valid_thresh": Float(0.0),
            "normalization": Enum(("null", "batch", "valid"), "null")},
    compute=_identity, doc="Marks its input as a loss (legacy); identity forward.",
    gradient=lambda F, p, ins, outs, ogs: [F._internal._backward_MakeLoss(ins[0], **_attrs(p))],
    lists_output_names=True))
register(OpDef(
    "make_loss", compute=_identity, output_names=("loss",), aliases=("_sparse_make_loss",),
    gradient=lambda F, p, ins, outs, ogs: [F.ones_like(ins[0])],
    doc="Marks its input as a loss; identity forward. Its output is named 'loss'.",
    lists_input_names=False, lists_output_names=True))
register(OpDef(
    "BlockGrad", compute=_identity, aliases=("stop_gradient", "_sparse_stop_gradient"),
    gradient=zero_gradient,
    doc="Identity forward that stops gradients flowing back through it.", lists_input_names=False))


# --- CTCLoss -------------------------------------------------------------------------------------
_CTC_INPUTS = ("data", "label", "data_lengths", "label_lengths")


def _ctc_inputs(p) -> tuple[str, ...]:
    """``data, label`` plus the length vectors the flags ask for (MXNet's input names)."""
    return tuple(n for n, on in zip(_CTC_INPUTS, (True, True, p.use_data_lengths,
                                                  p.use_label_lengths)) if on)


def _ctc_shape(p, in_shapes: list) -> tuple[list, list]:
    """data ``(T, N, C)``, label ``(N, L)`` with ``L <= T``, lengths ``(N,)``; the loss is
    ``(N,)`` and the hidden gradient has the data's shape."""
    ins = list(in_shapes)
    data, label = ins[0], ins[1]
    if data is not None and len(data) != 3:
        raise ShapeError(f"CTCLoss: data must be 3-d (sequence_length, batch_size, "
                         f"alphabet_size), got {fmt(data)}")
    if label is not None and len(label) != 2:
        raise ShapeError(f"CTCLoss: label must be 2-d (batch_size, label_sequence_length), got "
                         f"{fmt(label)}")
    n = merge(None if data is None else (data[1],), None if label is None else (label[0],),
              f"CTCLoss: batch size of data {fmt(data)} and label {fmt(label)}: ")
    for i in range(2, len(ins)):
        ins[i] = merge(ins[i], n, f"CTCLoss: {_ctc_inputs(p)[i]}: ")
    if data is not None and label is not None and data[0] and label[1] > data[0]:
        raise ShapeError(f"CTCLoss: label {fmt(label)} holds more labels ({label[1]}) than the "
                         f"data {fmt(data)} has time steps ({data[0]})")
    return ins, [n, None if data is None else tuple(data)]


def _ctc_type(p, in_types: list) -> tuple[list, list]:
    dt = in_types[0]
    return [dt if t is None else t for t in in_types], [dt, dt]


def _lround(a: np.ndarray) -> np.ndarray:
    """C's ``lround`` (half away from zero), which MXNet applies to labels and lengths."""
    a = np.asarray(a, dtype=np.float64)
    return (np.sign(a) * np.floor(np.abs(a) + 0.5)).astype(np.int64)


def _ctc_lengths(p, data: np.ndarray, label: np.ndarray, rest: tuple) -> tuple:
    """Rounded labels and the per-sample data and label lengths, checked against the shapes."""
    t_max, n, _ = data.shape
    lab = _lround(label)
    data_len = _lround(rest[0]) if p.use_data_lengths else np.full(n, t_max, np.int64)
    if p.use_label_lengths:
        lab_len = _lround(rest[-1])
    else:  # the first padding value ends each label sequence
        pad = lab == (0 if p.blank_label == "first" else -1)
        lab_len = np.where(pad.any(axis=1), pad.argmax(axis=1), lab.shape[1])
    for what, v, top in (("data_lengths", data_len, t_max),
                         ("label_lengths", lab_len, lab.shape[1])):
        if v.shape != (n,) or v.min(initial=0) < 0 or v.max(initial=0) > top:
            raise ShapeError(f"CTCLoss: {what} {v.tolist()} must hold {n} values in "
                             f"[0, {top}] (values are rounded to the nearest integer)")
    return lab, data_len, lab_len


def _ctc_states(lab: np.ndarray, lab_len: np.ndarray, blank: int, classes: int) -> tuple:
    """The blank-interleaved label sequences ``(N, 2L+1)``, where a skip over a blank is
    allowed, and the number of repeated neighbours per sample."""
    n, lmax = lab.shape
    used = np.arange(lmax) < lab_len[:, None]
    bad = used & ((lab < 0) | (lab >= classes))
    if bad.any():
        raise ShapeError(f"CTCLoss: label values {np.unique(lab[bad]).tolist()} are outside the "
                         f"alphabet [0, {classes - 1}] of the data")
    ext = np.full((n, 2 * lmax + 1), blank, np.int64)
    ext[:, 1::2] = np.where(used, lab, blank)
    skip = np.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    repeats = np.sum(used[:, 1:] & (lab[:, 1:] == lab[:, :-1]), axis=1)
    return ext, skip, repeats


def ctc_tables(p, data: np.ndarray, label: np.ndarray, *rest: np.ndarray) -> dict:
    """What the CTC forward and backward kernels share, checked against the shapes: ``logp``
    (log-softmax of the data, float64), ``ext`` (the blank-interleaved labels, ``(N, 2L+1)``),
    ``skip`` (where a step may skip a blank), ``emit`` (``logp`` at ``ext``, ``(T, N, 2L+1)``),
    ``data_len``, ``lab_len`` and ``repeats`` (per sample)."""
    if data.dtype != np.float32:
        raise DTypeError(f"CTCLoss: data dtype {data.dtype} is not supported (MXNet computes "
                         "CTCLoss on float32 only); cast it with .astype('float32')")
    _ctc_shape(p, [data.shape, label.shape] + [r.shape for r in rest])
    t_max, n, classes = data.shape
    blank = 0 if p.blank_label == "first" else classes - 1
    lab, data_len, lab_len = _ctc_lengths(p, data, label, rest)
    ext, skip, repeats = _ctc_states(lab, lab_len, blank, classes)
    logp = softmax_along(data.astype(np.float64), 2, log=True)
    emit = np.take_along_axis(logp, np.broadcast_to(ext, (t_max,) + ext.shape), axis=2)
    return {"logp": logp, "ext": ext, "skip": skip, "emit": emit, "data_len": data_len,
            "lab_len": lab_len, "repeats": repeats}


def _ctc_loss(p, data: np.ndarray, label: np.ndarray, *rest: np.ndarray) -> tuple:
    """Negative log-likelihood of each label sequence (the forward algorithm in log space)."""
    tab = ctc_tables(p, data, label, *rest)
    t_max = data.shape[0]
    ext, skip, emit = tab["ext"], tab["skip"], tab["emit"]
    data_len, lab_len, repeats = tab["data_len"], tab["lab_len"], tab["repeats"]
    alpha = np.full(ext.shape, -np.inf)
    alpha[:, :2] = emit[0, :, :2] if t_max else -np.inf
    for t in range(1, t_max):  # one vectorised step per time step (all samples, all states)
        one = np.pad(alpha[:, :-1], ((0, 0), (1, 0)), constant_values=-np.inf)
        two = np.pad(alpha[:, :-2], ((0, 0), (2, 0)), constant_values=-np.inf)
        step = np.logaddexp(np.logaddexp(alpha, one), np.where(skip, two, -np.inf)) + emit[t]
        alpha = np.where((t < data_len)[:, None], step, alpha)
    last = np.take_along_axis(alpha, np.stack([2 * lab_len, 2 * lab_len - 1], 1) % ext.shape[1],
                              axis=1)
    loglike = np.logaddexp(last[:, 0], np.where(lab_len > 0, last[:, 1], -np.inf))
    # MXNet (warp-ctc) gives 0 where no alignment fits in the data length
    loss = np.where((lab_len + repeats > data_len) | (data_len == 0), 0.0, -loglike)
    return loss.astype(np.float32), np.zeros_like(data)


_CTC = register(OpDef(
    "CTCLoss",
    params={"use_data_lengths": Bool(False), "use_label_lengths": Bool(False),
            "blank_label": Enum(("first", "last"), "first")},
    inputs=_ctc_inputs, num_outputs=2, num_visible_outputs=1, infer_shape=_ctc_shape,
    infer_type=_ctc_type, compute=_ctc_loss,
    gradient=lambda F, p, ins, outs, ogs: [F._internal._backward_ctc_loss(ogs[0], *ins,
                                                                          **_attrs(p))]
    + [None] * (len(ins) - 1),
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    doc="Connectionist Temporal Classification loss of (T, N, C) activations (log-softmax "
        "applied inside) against padded label sequences; one loss per sample."))
_CTC.forward_reads_label = True  # its label is a real input (symbol._graph.label_inputs)


# --- ONNX export ---------------------------------------------------------------------------------
# The label input is not an ONNX input: the exporter drops variables used only as labels.
def _softmax_output_onnx(ctx: LoweringContext) -> None:
    """Softmax over axis 1 (``multi_output``), the last axis (``preserve_shape``), or all
    non-batch elements: ``Flatten(axis=1)``, softmax, and back to the data's shape (the shape
    read at run time when it is dynamic)."""
    p = ctx.params
    rank = len(ctx.shape)

    def build(x: str, out: str | None) -> str:
        if p.multi_output:
            return ctx.make("Softmax", [x], outputs=named(out), axis=1)
        if p.preserve_shape or rank == 2:
            return ctx.make("Softmax", [x], outputs=named(out), axis=-1)
        flat = ctx.make("Softmax", [ctx.make("Flatten", [x], axis=1)], axis=1)
        shape = (ctx.make("Shape", [x]) if ctx.is_dynamic(0) else ctx.ints(ctx.shape, "shape"))
        return ctx.make("Reshape", [flat, shape], outputs=named(out))

    if p.multi_output and rank < 2:
        raise ctx.fail(f"multi_output=True needs data with an axis 1, got shape {ctx.shape}")
    onnx_compute(ctx, build)


lowering("SoftmaxOutput")(_softmax_output_onnx)


def _on_data(op_type: str):
    """One node on the data input alone (the label input, if any, is not exported)."""

    def handler(ctx: LoweringContext) -> None:
        ctx.make(op_type, ctx.inputs[:1], outputs=ctx.outputs[:1])

    handler.__name__ = f"to_{op_type}"
    return handler


for _name in ("LinearRegressionOutput", "MAERegressionOutput", "SVMOutput", "MakeLoss",
              "make_loss", "BlockGrad"):
    lowering(_name)(_on_data("Identity"))
lowering("LogisticRegressionOutput")(_on_data("Sigmoid"))


# CTCLoss: the forward algorithm as an ONNX Loop over the time steps (one step per iteration,
# every sample and state at once), from the same tensors as the numpy compute above.
def _onnx_lround(ctx: LoweringContext, i: int) -> str:
    """Input ``i`` rounded half away from zero (C's lround, as MXNet reads it) to int64."""
    x = ctx.inputs[i]
    if np.dtype(ctx.in_dtypes[i]).kind in "iub":
        return ctx.cast_to(x, np.int64)
    x = ctx.cast_to(x, np.float64)
    mag = ctx.make("Floor", [ctx.make("Add", [ctx.make("Abs", [x]),
                                              ctx.const(np.float64(0.5), "half")])])
    return ctx.cast_to(ctx.make("Mul", [ctx.make("Sign", [x]), mag]), np.int64)


def _onnx_ctc_labels(ctx: LoweringContext, lab: str, lab_len: str, n_lab: int, blank: int) -> tuple:
    """``(ext, skip, repeats)`` as :func:`_ctc_states` builds them, for static ``n_lab``."""
    used = ctx.make("Less", [ctx.ints(np.arange(n_lab), "positions"),
                             ctx.make("Unsqueeze", [lab_len, ctx.ints([1], "axes")])])
    blank_t = ctx.const(np.int64(blank), "blank")
    labs = ctx.make("Where", [used, lab, blank_t])
    blanks = ctx.make("Add", [ctx.make("Mul", [labs, ctx.const(np.int64(0), "zero")]), blank_t])
    pairs = ctx.make("Concat", [ctx.make("Unsqueeze", [t, ctx.ints([2], "axes")])
                                for t in (blanks, labs)], axis=2)
    col = ctx.make("Slice", [blanks, ctx.ints([0], "s"), ctx.ints([1], "e"), ctx.ints([1], "a")])
    ext = ctx.make("Concat", [ctx.make("Reshape", [pairs, ctx.ints([0, 2 * n_lab], "shape")]),
                              col], axis=1)
    before = ctx.make("Slice", [ext, ctx.ints([0], "s"), ctx.ints([2 * n_lab - 1], "e"),
                                ctx.ints([1], "a")])
    ext2 = ctx.make("Concat", [col, col, before], axis=1)
    skip = ctx.make("And", [ctx.make("Not", [ctx.make("Equal", [ext, blank_t])]),
                            ctx.make("Not", [ctx.make("Equal", [ext, ext2])])])

    def cut(t: str, start: int, end: int) -> str:
        return ctx.make("Slice", [t, ctx.ints([start], "s"), ctx.ints([end], "e"),
                                  ctx.ints([1], "a")])

    same = ctx.make("And", [ctx.make("Equal", [cut(lab, 1, n_lab), cut(lab, 0, n_lab - 1)]),
                            cut(used, 1, n_lab)])
    repeats = ctx.make("ReduceSum", [ctx.cast_to(same, np.int64), ctx.ints([1], "axes")],
                       keepdims=0)
    return ext, skip, repeats


def _onnx_logsumexp(ctx: LoweringContext, terms: list[str], neg_inf: str, zero: str) -> str:
    """``log(sum(exp(terms)))`` that stays -inf when every term is -inf."""
    m = ctx.make("Max", terms)
    m = ctx.make("Where", [ctx.make("Equal", [m, neg_inf]), zero, m])
    total = ctx.make("Sum", [ctx.make("Exp", [ctx.make("Sub", [t, m])]) for t in terms])
    return ctx.make("Add", [ctx.make("Log", [total]), m])


def _local_const(ctx: LoweringContext, value) -> str:
    """A Constant node: the Loop body holds its own constants (the exporter keeps only the
    initializers and nodes the main graph reads)."""
    from onnx import numpy_helper

    return ctx.make("Constant", [], value=numpy_helper.from_array(np.asarray(value)))


def _onnx_ctc_body(ctx: LoweringContext, n_states: int, scan: bool = False):
    """The Loop body graph: one time step of the forward recursion. ``emit``, ``skip`` and
    ``data_len`` are carried through unchanged, so the main graph keeps them alive; ``scan``
    also emits each step's alpha as a scan output (the backward pass reads them all)."""
    from onnx import TensorProto, helper

    outer, ctx.nodes = ctx.nodes, []
    names = [ctx.fresh(h) for h in ("iter", "cond", "alpha_in", "emit", "skip", "data_len")]
    i, cond, alpha, emit, skip, data_len = names
    neg_inf, zero = _local_const(ctx, np.float32(-np.inf)), _local_const(ctx, np.float32(0))
    t = ctx.make("Add", [i, _local_const(ctx, np.int64(1))])
    axis1 = _local_const(ctx, np.array([1], np.int64))

    def shifted(k: int) -> str:
        pads = _local_const(ctx, np.array([0, k, 0, 0], np.int64))
        padded = ctx.make("Pad", [alpha, pads, neg_inf])
        return ctx.make("Slice", [padded, _local_const(ctx, np.array([0], np.int64)),
                                  _local_const(ctx, np.array([n_states], np.int64)), axis1])

    two = ctx.make("Where", [skip, shifted(2), neg_inf])
    step = ctx.make("Add", [_onnx_logsumexp(ctx, [alpha, shifted(1), two], neg_inf, zero),
                            ctx.make("Gather", [emit, t], axis=0)])
    keep = ctx.make("Unsqueeze", [ctx.make("Less", [t, data_len]), axis1])
    outs = [ctx.make("Identity", [cond]), ctx.make("Where", [keep, step, alpha])]
    outs += [ctx.make("Identity", [x]) for x in (emit, skip, data_len)]
    kinds = [(TensorProto.INT64, []), (TensorProto.BOOL, []),
             (TensorProto.FLOAT, [None, n_states]), (TensorProto.FLOAT, [None, None, n_states]),
             (TensorProto.BOOL, [None, n_states]), (TensorProto.INT64, None)]
    out_kinds = kinds[1:]
    if scan:
        outs.append(ctx.make("Identity", [outs[1]]))
        out_kinds = out_kinds + [(TensorProto.FLOAT, [None, n_states])]
    nodes, ctx.nodes = ctx.nodes, outer
    info = helper.make_tensor_value_info
    return helper.make_graph(nodes, ctx.fresh("ctc_step"),
                             [info(n, *k) for n, k in zip(names, kinds)],
                             [info(n, *k) for n, k in zip(outs, out_kinds)])


def _ctc_onnx(ctx: LoweringContext) -> None:
    if ctx.wants(1):
        raise ctx.fail("its hidden gradient output is read; MXNet hides it (backward only)")
    tab = onnx_ctc_forward(ctx)
    _onnx_ctc_finish(ctx, tab["alpha"], tab["lab_len"], tab["repeats"], tab["data_len"],
                     tab["neg_inf"])


def onnx_ctc_forward(ctx: LoweringContext, base: int = 0, keep_alphas: bool = False) -> dict:
    """ONNX: the CTC forward recursion of the node whose ``data, label[, data_lengths]
    [, label_lengths]`` are its inputs from ``base`` on (the forward op: 0; its backward
    kernel: 1). Returns the tensor names ``alpha`` (last step), ``alphas`` (every step,
    ``(T, N, 2L+1)``, with ``keep_alphas``), ``emit``, ``logp``, ``ext``, ``skip``, ``steps``,
    ``lab_len``, ``data_len``, ``repeats``, ``neg_inf`` and the static ``n_states``,
    ``classes``."""
    p = ctx.params
    data_shape, lab_shape = ctx.in_shapes[base], ctx.in_shapes[base + 1]
    if ctx.is_dynamic(base, 2) or ctx.is_dynamic(base + 1, 1) or lab_shape[1] < 1:
        raise ctx.fail("CTCLoss exports with a static alphabet size and label length >= 1")
    n_lab, classes = int(lab_shape[1]), int(data_shape[2])
    blank = 0 if p.blank_label == "first" else classes - 1
    data = ctx.inputs[base]
    steps = ctx.make("Gather", [ctx.make("Shape", [data]), ctx.const(np.int64(0), "t")])
    lab = _onnx_lround(ctx, base + 1)
    if p.use_label_lengths:
        lab_len = _onnx_lround(ctx, len(ctx.inputs) - 1)
    else:  # first padding position, or the label length when there is none
        pad = ctx.make("Equal", [lab, ctx.const(np.int64(0 if blank == 0 else -1), "pad")])
        first = ctx.make("Where", [pad, ctx.ints(np.arange(n_lab), "positions"),
                                   ctx.const(np.int64(n_lab), "n_lab")])
        lab_len = ctx.make("ReduceMin", [first], axes=[1], keepdims=0) if ctx.opset < 18 else \
            ctx.make("ReduceMin", [first, ctx.ints([1], "axes")], keepdims=0)
    data_len = (_onnx_lround(ctx, base + 2) if p.use_data_lengths
                else ctx.make("Unsqueeze", [steps, ctx.ints([0], "axes")]))
    ext, skip, repeats = _onnx_ctc_labels(ctx, lab, lab_len, n_lab, blank)
    logp = ctx.make("LogSoftmax", [data], axis=2)
    index = ctx.make("Expand", [ctx.make("Unsqueeze", [ext, ctx.ints([0], "axes")]),
                                ctx.make("Concat", [ctx.make("Unsqueeze", [steps,
                                                                           ctx.ints([0], "a")]),
                                                    ctx.make("Shape", [ext])], axis=0)])
    emit = ctx.make("GatherElements", [logp, index], axis=2)
    neg_inf = ctx.const(np.float32(-np.inf), "neg_inf")
    n_states = 2 * n_lab + 1
    first_two = ctx.const(np.arange(n_states) < 2, "start_states")
    alpha0 = ctx.make("Where", [first_two, ctx.make("Gather", [emit, ctx.const(np.int64(0),
                                                                               "t0")], axis=0),
                                neg_inf])
    trips = ctx.make("Sub", [steps, ctx.const(np.int64(1), "one")])
    looped = ctx.make("Loop", [trips, "", alpha0, emit, skip, data_len],
                      outputs=5 if keep_alphas else 4,
                      body=_onnx_ctc_body(ctx, n_states, scan=keep_alphas))
    tab = {"alpha": looped[0], "emit": emit, "logp": logp, "ext": ext, "skip": skip,
           "steps": steps, "lab_len": lab_len, "data_len": data_len, "repeats": repeats,
           "neg_inf": neg_inf, "n_states": n_states, "classes": classes}
    if keep_alphas:
        tab["alphas"] = ctx.make("Concat", [ctx.make("Unsqueeze", [alpha0, ctx.ints([0], "a")]),
                                            looped[4]], axis=0)
    return tab


def _onnx_ctc_finish(ctx: LoweringContext, alpha: str, lab_len: str, repeats: str, data_len: str,
                     neg_inf: str) -> None:
    """Read the two final states, and give 0 where no alignment fits (as MXNet)."""
    two = ctx.make("Mul", [lab_len, ctx.const(np.int64(2), "two")])
    at = [ctx.make("GatherElements", [alpha, ctx.make("Unsqueeze", [ix, ctx.ints([1], "a")])],
                   axis=1)
          for ix in (two, ctx.make("Max", [ctx.make("Sub", [two, ctx.const(np.int64(1), "one")]),
                                           ctx.const(np.int64(0), "zero")]))]
    has_label = ctx.make("Unsqueeze", [ctx.make("Greater", [lab_len, ctx.const(np.int64(0),
                                                                             "zero")]),
                                       ctx.ints([1], "a")])
    loglike = _onnx_logsumexp(ctx, [at[0], ctx.make("Where", [has_label, at[1], neg_inf])],
                              neg_inf, ctx.const(np.float32(0), "zero"))
    loss = ctx.make("Squeeze", [ctx.make("Neg", [loglike]), ctx.ints([1], "axes")])
    no_fit = ctx.make("Or", [ctx.make("Greater", [ctx.make("Add", [lab_len, repeats]), data_len]),
                             ctx.make("Equal", [data_len, ctx.const(np.int64(0), "zero")])])
    ctx.make("Where", [no_fit, ctx.const(np.float32(0), "zero"), loss], outputs=ctx.outputs[:1])


lowering("CTCLoss")(_ctc_onnx)
