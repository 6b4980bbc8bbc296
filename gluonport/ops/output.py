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

ONNX export: the forward pass only (Softmax / Sigmoid / Identity on the data); a variable used
only as a label is not an input of the ONNX model.
"""

from __future__ import annotations

import numpy as np

from ..attrs import Bool, Enum, Float
from ..errors import ShapeError
from ._onnx import attach
from ._shape import fmt, known, merge
from .nn import named, onnx_compute, require_float, sigmoid, softmax_along, work_dtype
from .registry import OpDef, register

__all__: list[str] = []


def _uniform_type(p, in_types: list) -> tuple[list, list]:
    """MXNet's ElemwiseType / UNIFORM_TYPE_CHECK: label and output share the data's dtype."""
    dt = next((t for t in in_types if t is not None), None)
    return [dt] * len(in_types), [dt]


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
    doc="Softmax forward of a cross-entropy loss head; the label only matters for backward."))


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


def _regression(name: str, fn, doc: str) -> None:
    def compute(p, x: np.ndarray, label: np.ndarray | None = None) -> np.ndarray:
        require_float(name, x)
        return fn(x)

    compute.__name__ = f"_{name}"
    register(OpDef(name, params={"grad_scale": Float(1.0)}, inputs=("data", "label"),
                   infer_shape=_regression_shape, infer_type=_uniform_type, compute=compute,
                   doc=doc))


_regression("LinearRegressionOutput", lambda x: x.copy(),
            "Identity forward of a squared-error regression head.")
_regression("MAERegressionOutput", lambda x: x.copy(),
            "Identity forward of an absolute-error regression head.")
_regression("LogisticRegressionOutput", _sigmoid,
            "Sigmoid forward of a logistic regression head.")


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
    compute=lambda p, x, label=None: x.copy(),
    doc="Identity forward of a hinge-loss (SVM) head; label shape is data.shape[:-1]."))


# --- loss markers and gradient blocking ----------------------------------------------------------
def _identity(p, x: np.ndarray) -> np.ndarray:
    return x.copy()


register(OpDef(
    "MakeLoss",
    params={"grad_scale": Float(1.0), "valid_thresh": Float(0.0),
            "normalization": Enum(("null", "batch", "valid"), "null")},
    compute=_identity, doc="Marks its input as a loss (legacy); identity forward."))
register(OpDef(
    "make_loss", compute=_identity, output_names=("loss",), aliases=("_sparse_make_loss",),
    doc="Marks its input as a loss; identity forward. Its output is named 'loss'."))
register(OpDef(
    "BlockGrad", compute=_identity, aliases=("stop_gradient", "_sparse_stop_gradient"),
    doc="Identity forward that stops gradients flowing back through it."))


# --- ONNX export ---------------------------------------------------------------------------------
# The label input is not an ONNX input: the exporter drops variables used only as labels.
def _softmax_output_onnx(ctx) -> None:
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


attach("SoftmaxOutput", _softmax_output_onnx)


def _on_data(op_type: str):
    """One node on the data input alone (the label input, if any, is not exported)."""

    def handler(ctx) -> None:
        ctx.make(op_type, ctx.inputs[:1], outputs=ctx.outputs[:1])

    handler.__name__ = f"to_{op_type}"
    return handler


for _name in ("LinearRegressionOutput", "MAERegressionOutput", "SVMOutput", "MakeLoss",
              "make_loss", "BlockGrad"):
    attach(_name, _on_data("Identity"))
attach("LogisticRegressionOutput", _on_data("Sigmoid"))
