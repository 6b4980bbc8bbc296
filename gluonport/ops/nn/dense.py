"""Dense layers, activations, dropout and the softmax family (MXNet 1.9.1 semantics).

Registered here: ``FullyConnected``, ``Activation``, ``LeakyReLU``, ``Dropout``, ``softmax``,
``log_softmax``, ``softmin`` and ``SoftmaxActivation``. The plain unary activations
(``relu``, ``sigmoid``, ``tanh``, ``softsign``, ``hard_sigmoid``) are elementwise ops and live in
:mod:`gluonport.ops.math.elemwise`; ``Embedding`` lives with the indexing ops.

MXNet facts kept here (checked against MXNet 1.9.1):

* these ops compute on float16/32/64 only; integer inputs raise :class:`DTypeError` (MXNet:
  "This operation only support floating point types"). float16 is computed in float32 and
  rounded once, as MXNet's GPU kernels accumulate.
* ``FullyConnected`` with ``flatten=False`` applies to the last axis of an N-d input.
* ``LeakyReLU(act_type='rrelu')`` has two visible outputs (``output``, ``mask``); at inference
  the slope is ``(lower_bound + upper_bound) / 2`` and the mask is not written (zeros here).
* ``Dropout`` has a hidden ``mask`` output; at inference it is the identity unless
  ``mode='always'``.
* ``softmax`` alone takes a ``length`` input (``use_length=True``); ``log_softmax`` and
  ``softmin`` declare ``use_length`` but have no such input in 1.9.1.
* ``SoftmaxActivation(mode='instance')`` normalises over the *last* axis (MXNet flattens to
  ``(prod(shape[:-1]), shape[-1])``); ``mode='channel'`` over axis 1 of an input of rank >= 3.

ONNX export (handlers at the end; shared helpers ``onnx_*`` used by norm.py and output.py):
``FullyConnected`` is Flatten + Gemm(transB=1) or MatMul + Add; PReLU's slope is laid out as
(1, C, 1, ...); ``gelu`` is ``Gelu`` from opset 20, an Erf formula before; ``rrelu`` is
LeakyRelu with the mean slope and refuses a read mask; ``Dropout`` is Identity, and with
``mode='always'`` a training-mode ``Dropout`` (random numbers differ from MXNet's); softmax's
length input becomes a Range < length mask. float16 data of multi-node lowerings is computed in
float32 between Casts (as MXNet computes); float64 data through an op onnxruntime has no double
kernel for (``NO_DOUBLE_KERNEL``) is computed in float32 (relative error ~1e-7).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, DType, Enum, Float, Int, Optional, Shape
from ...errors import DTypeError, OpAttributeError, ShapeError
from ..infer import fmt, merge, norm_axis
from ..lowering import LoweringContext, lowering
from ..lowering.dims import onnx_dim
from ..lowering.math import named, onnx_compute, onnx_input_as, onnx_work_dtype
from ..registry import InPlace, OpDef, register
from .train_graphs import dropout_train_graph

__all__ = ["softmax_along", "sigmoid", "erfc", "require_float", "work_dtype", "gamma_view_shape",
           "grad_attrs"]


# --- shared helpers ------------------------------------------------------------------------------
def require_float(op: str, x: np.ndarray, what: str = "input") -> None:
    """MXNet's real-type kernels refuse integer data; so do we, with the remedy."""
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: {what} dtype {x.dtype} is not supported (MXNet computes {op} "
                         "on float16, float32 and float64 only); cast it, e.g. "
                         "x.astype('float32')")


def work_dtype(dtype: np.dtype) -> np.dtype:
    """float16 is computed in float32 (one rounding at the end); other floats in themselves."""
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _check_shapes(rule: Callable, p, arrays: list) -> None:
    """Run an op's shape rule on the actual input shapes, so a bad weight shape raises
    :class:`ShapeError` naming both shapes instead of a numpy broadcasting error."""
    rule(p, [a.shape if a is not None else None for a in arrays])


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function, vectorised, fractional error < 1.2e-7 everywhere.

    Chebyshev-fitted exponential form (Numerical Recipes' ``erfcc``); numpy has no ``erf`` and
    scipy is not a dependency. Relative accuracy also holds in the far tail, which keeps
    ``gelu`` accurate for large negative inputs.
    """
    z = np.abs(x)
    t = 0.5 * z
    t += 1.0
    np.reciprocal(t, out=t)
    coeffs = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
              0.09678418, 0.37409196, 1.00002368, -1.26551223)
    poly = np.full_like(t, coeffs[0])
    for c in coeffs[1:]:  # Horner, in place (ten whole-array passes, no temporaries)
        poly *= t
        poly += c
    z *= z
    poly -= z
    np.exp(poly, out=poly)
    poly *= t
    return np.where(x >= 0, poly, 2.0 - poly)


def grad_attrs(p) -> dict:
    """A node's parsed attributes as keyword arguments for its ``_backward_*`` op (unset
    optional attributes left out)."""
    return {k: v for k, v in p.as_dict().items() if v is not None}


def _outs(y, n: int) -> list:
    """The ``n`` outputs of a multi-output call (a list in ``nd``, a Symbol in ``sym``)."""
    return [y[i] for i in range(n)]


# Gradients (MXNet's FGradient): one ``_backward_*`` kernel each (``dense_grad.py``).
def _grad_fc(F, p, inputs, outputs, ograds):
    back = F._internal._backward_FullyConnected(ograds[0], *inputs, **grad_attrs(p))
    return _outs(back, len(inputs))


def _grad_activation(F, p, inputs, outputs, ograds):
    return [F._internal._backward_Activation(ograds[0], inputs[0], outputs[0],
                                             act_type=p.act_type)]


def _grad_leaky(F, p, inputs, outputs, ograds):
    back = F._internal._backward_LeakyReLU(ograds[0], inputs[0], outputs[0], *inputs[1:],
                                           **grad_attrs(p))
    return _outs(back, 2) if p.act_type == "prelu" else [back]


def _grad_dropout(F, p, inputs, outputs, ograds):
    """``og * mask`` (the hidden mask output: ones where dropout passed everything through)."""
    return [F.broadcast_mul(ograds[0], outputs[1])]


def _grad_softmax(kind: str):
    def rule(F, p, inputs, outputs, ograds):
        back = getattr(F._internal, f"_backward_{kind}")
        return [back(ograds[0], inputs[0], outputs[0], *inputs[1:], **grad_attrs(p))] + \
            [None] * (len(inputs) - 1)

    return rule


def _grad_softmax_activation(F, p, inputs, outputs, ograds):
    """MXNet's backward normalises over axis 1 in both modes (data seen as (N, C, rest)), so an
    instance-mode gradient of data with more than 2 axes is not the forward's derivative; kept."""
    return [F._internal._backward_softmax(ograds[0], inputs[0], outputs[0], axis=1)]


# --- FullyConnected ------------------------------------------------------------------------------
def _fc_inputs(p) -> tuple[str, ...]:
    return ("data", "weight") if p.no_bias else ("data", "weight", "bias")


def _fc_in_units(p, data: tuple) -> int:
    if not p.flatten:
        return data[-1] if data else 0
    n = 1
    for d in data[1:]:
        n *= d
    return n


def _fc_shape(p, in_shapes: list, out_shapes: list = (None,)) -> tuple[list, list]:
    """Complete ``weight`` ``(num_hidden, in_units)`` and ``bias`` ``(num_hidden,)`` from data,
    and (as MXNet) data's first dim from the output's (an RNN cell's zero begin state of
    unknown batch size gets it this way)."""
    ins = list(in_shapes)
    data = ins[0]
    if data is None:
        return ins, [None]
    given = out_shapes[0]
    if given and data:
        data = ins[0] = merge(data, (given[0],) + tuple(data[1:]), "data: ")
    ins[1] = merge(ins[1], (p.num_hidden, _fc_in_units(p, data)), "weight: ")
    if not p.no_bias:
        bias = ins[2]
        # MXNet also accepts a (num_hidden, 1) bias
        if not (bias is not None and tuple(bias) == (p.num_hidden, 1)):
            ins[2] = merge(bias, (p.num_hidden,), "bias: ")
    if p.flatten:
        out = (data[0] if data else 1, p.num_hidden)
    else:
        out = tuple(data[:-1]) + (p.num_hidden,)
    return ins, [merge(out, given, "output: ")]



def _fc(p, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    require_float("FullyConnected", x)
    _check_shapes(_fc_shape, p, [x, w, b])
    wd = work_dtype(x.dtype)
    xs = x.reshape(x.shape[0] if x.ndim else 1, -1) if p.flatten else x
    out = np.matmul(xs.astype(wd, copy=False), w.astype(wd, copy=False).T)
    if b is not None:
        out += b.astype(wd, copy=False).reshape(-1)
    return out.astype(x.dtype, copy=False)


def _fc_hint(p, weight: tuple, node: str) -> str:
    """What the weight says about the data's shape (``gluonport inspect``)."""
    features = weight[1]
    if p.flatten:
        return (f"N,{features} ({node} is a FullyConnected over {features} features; "
                f"any N,... whose dims after N multiply to {features} also works)")
    return f"...,{features} ({node} is a FullyConnected over {features} features)"


register(OpDef(
    "FullyConnected",
    params={"num_hidden": Int(), "no_bias": Bool(False), "flatten": Bool(True)},
    inputs=_fc_inputs, infer_shape=_fc_shape, compute=_fc, aliases=("_npx_fully_connected",),
    shape_needs_outputs=True, fresh_outputs=True, input_hint=_fc_hint, gradient=_grad_fc,
    doc="out = dot(data, weight.T) + bias; data is flattened to 2-D unless flatten=False, "
        "which applies the layer to the last axis.", lists_output_names=True))


# --- Activation ----------------------------------------------------------------------------------
def sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))``; exp overflowing to inf for very negative x gives the right 0."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _softrelu(x: np.ndarray) -> np.ndarray:
    # MXNet returns x itself above 20 (log1p(exp(x)) == x in float there)
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": sigmoid,
    "tanh": np.tanh,
    "softrelu": _softrelu,
    "softsign": lambda x: x / (1.0 + np.abs(x)),
}


def _activation(p, x: np.ndarray) -> np.ndarray:
    require_float("Activation", x)
    fn = _ACTIVATIONS[p.act_type]
    return fn(x.astype(work_dtype(x.dtype), copy=False)).astype(x.dtype, copy=False)


def _relu_into(p, args: list, i: int) -> list | None:
    """In place (the executor's inference plan): relu's own ``np.maximum(x, 0)`` into ``x``."""
    x = args[0]
    if p.act_type != "relu" or x.dtype not in (np.float32, np.float64):
        return None
    np.maximum(x, 0, out=x)
    return [x]


register(OpDef(
    "Activation", params={"act_type": Enum(tuple(_ACTIVATIONS))}, compute=_activation,
    aliases=("_npx_activation",), fresh_outputs=True,
    inplace=InPlace(_relu_into, (0,), lambda p: p.act_type == "relu"), gradient=_grad_activation,
    doc="Elementwise activation: relu, sigmoid, tanh, softrelu (softplus) or softsign.",
    lists_input_names=False, lists_output_names=True))


# --- LeakyReLU -----------------------------------------------------------------------------------
_SQRT_HALF = 0.7071067811865476  # a Python float, so float32 data stays float32
# MXNet keeps these as float constants
_SELU_ALPHA = float(np.float32(1.6732632423543772848170429916717))
_SELU_LAMBDA = float(np.float32(1.0507009873554804934193349852946))


def _leaky_inputs(p) -> tuple[str, ...]:
    return ("data", "gamma") if p.act_type == "prelu" else ("data",)


def _leaky_n_out(p) -> int:
    return 2 if p.act_type == "rrelu" else 1


def _leaky_out_names(p) -> tuple[str, ...]:
    return ("output", "mask") if p.act_type == "rrelu" else ("output",)


def _leaky_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data = ins[0]
    if data is None:
        return ins, [None] * _leaky_n_out(p)
    if p.act_type == "prelu" and ins[1] is None:
        # MXNet: an unknown gamma is one slope per channel (axis 1)
        ins[1] = (data[1] if len(data) > 1 else 0,)
    return ins, [tuple(data)] * _leaky_n_out(p)


def gamma_view_shape(gamma_shape: tuple, data_shape: tuple) -> list[int]:
    """MXNet's PReLU broadcast: gamma's dims align from the right onto data axes 0 and 1 only
    (so a (C,) gamma scales axis 1 of NCHW data); a dim must equal the data's or be 1. Returns
    gamma's shape as a view of the data's rank."""
    out = [1] * len(data_shape)
    s = len(gamma_shape) - 1
    for i in range(len(data_shape) - 1, -1, -1):
        if s >= 0 and i <= 1 and gamma_shape[s] in (data_shape[i], 1):
            out[i] = gamma_shape[s]
            s -= 1
    if s != -1:
        raise ShapeError(f"LeakyReLU(prelu): cannot broadcast gamma of shape "
                         f"{tuple(gamma_shape)} to data of shape {tuple(data_shape)}; gamma must "
                         "be (C,) for channel axis 1 or (1,)")
    return out


def _gamma_view(gamma: np.ndarray, data_shape: tuple) -> np.ndarray:
    return gamma.reshape(gamma_view_shape(gamma.shape, data_shape))


def _leaky(p, x: np.ndarray, gamma: np.ndarray | None = None):
    require_float("LeakyReLU", x)
    wd = work_dtype(x.dtype)
    xw = x.astype(wd, copy=False)
    act = p.act_type
    if act == "prelu":
        slope = _gamma_view(gamma.astype(wd, copy=False), x.shape)
        out = np.where(xw > 0, xw, xw * slope)
    elif act in ("leaky", "rrelu"):
        # rrelu at inference: the mean slope; MXNet sums the float32 bounds in float
        slope = (np.float32(p.slope) if act == "leaky"
                 else (np.float32(p.lower_bound) + np.float32(p.upper_bound)) / np.float32(2))
        out = np.where(xw > 0, xw, xw * wd.type(slope))
    elif act == "elu":
        out = np.where(xw > 0, xw, wd.type(np.float32(p.slope)) * np.expm1(np.minimum(xw, 0)))
    elif act == "selu":
        neg = _SELU_ALPHA * np.expm1(np.minimum(xw, 0))
        out = _SELU_LAMBDA * np.where(xw > 0, xw, neg)
    else:  # gelu, erf form: 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)
        out = 0.5 * xw * erfc(xw * -_SQRT_HALF)
    out = out.astype(x.dtype, copy=False)
    if act == "rrelu":
        return out, np.zeros_like(out)
    return out


register(OpDef(
    "LeakyReLU",
    params={"act_type": Enum(("rrelu", "leaky", "prelu", "elu", "selu", "gelu"), "leaky"),
            "slope": Float(0.25), "lower_bound": Float(0.125), "upper_bound": Float(0.334)},
    inputs=_leaky_inputs, num_outputs=_leaky_n_out, output_names=_leaky_out_names,
    infer_shape=_leaky_shape, compute=_leaky, aliases=("_npx_leaky_relu",), keeps_shape=True,
    gradient=_grad_leaky,
    # MXNet 1.9.1's FSetInputVarAttrOnCompose: PReLU's gamma starts at 0.25.
    var_attrs={"gamma": {"__init__": '["Constant", {"value": 0.25}]'}},
    doc="Leaky ReLU family: leaky, prelu (learned gamma), elu, selu, gelu (erf form), rrelu.",
    lists_output_names=True))


# --- Dropout -------------------------------------------------------------------------------------
def _rng() -> np.random.Generator:
    """The generator for dropout masks: ``gluonport.random``'s, so ``mx.random.seed`` applies."""
    from ..._core.rng import generator

    return generator()


def _mask_shape(p, shape: tuple) -> tuple:
    out = list(shape)
    for a in p.axes:
        out[norm_axis(a, len(shape), "Dropout axes entry")] = 1
    return tuple(out)


def _dropout_shape(p, in_shapes: list) -> tuple[list, list]:
    data = in_shapes[0]
    if data is None:
        return list(in_shapes), [None, None]
    return list(in_shapes), [tuple(data), _mask_shape(p, tuple(data))]


def _drop(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverted dropout: keep with probability 1 - p, scale kept values by 1 / (1 - p)."""
    require_float("Dropout", x)
    keep = 1.0 - p.p
    shape = _mask_shape(p, x.shape)
    if keep <= 0.0:
        mask = np.zeros(shape, x.dtype)
    else:
        mask = ((_rng().random(shape) < keep) / keep).astype(x.dtype)
    return x * mask, mask


def _dropout(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if p.mode == "always" and p.p > 0:
        return _drop(p, x)
    require_float("Dropout", x)
    # hidden mask output: never read at inference; a zero-memory view of ones
    return x.copy(), np.broadcast_to(np.ones((), x.dtype), _mask_shape(p, x.shape))


def _dropout_train(p, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if p.p > 0:
        return _drop(p, x)
    return _dropout(p, x)


register(OpDef(
    "Dropout",
    params={"p": Float(0.5), "mode": Enum(("training", "always"), "training"),
            "axes": Shape(()), "cudnn_off": Optional(Bool(), False)},
    num_outputs=2, num_visible_outputs=1, output_names=("output", "mask"),
    infer_shape=_dropout_shape, compute=_dropout, train_compute=_dropout_train,
    train_graph=dropout_train_graph,
    aliases=("_npx_dropout",), keeps_shape=True, gradient=_grad_dropout,
    doc="Identity at inference (unless mode='always'); in training zeroes each element with "
        "probability p and scales the rest by 1/(1-p).", lists_output_names=True))


# --- softmax family ------------------------------------------------------------------------------
def softmax_along(x: np.ndarray, axis: int, *, temperature: float | None = None,
                  log: bool = False, negate: bool = False, length: np.ndarray | None = None,
                  out_dtype: np.dtype | None = None) -> np.ndarray:
    """MXNet's softmax kernel: ``exp((x - max) / t) / sum`` along ``axis``.

    ``negate`` gives softmin, ``log`` log-softmax; ``length`` (data shape without ``axis``)
    masks positions ``>= length`` to 0, as ``softmax(use_length=True)`` does.
    """
    wd = work_dtype(x.dtype)
    z = x.astype(wd, copy=True) if not negate else -x.astype(wd, copy=False)
    valid = None
    if length is not None:
        lens = np.expand_dims(length, axis) if x.ndim > 1 else length.reshape(1)
        idx = np.arange(x.shape[axis]).reshape([-1 if a == axis else 1 for a in range(x.ndim)])
        valid = idx < lens
        z = np.where(valid, z, -np.inf)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    z = z - m
    if temperature is not None and temperature != 1.0:
        # MXNet casts the temperature to the data's dtype
        z = z / x.dtype.type(temperature)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.exp(z)
        s = np.sum(e, axis=axis, keepdims=True)
        out = z - np.log(s) if log else e / s
    if valid is not None:
        out = np.where(valid, out, 0)
    return out.astype(out_dtype or x.dtype, copy=False)


_SOFTMAX_PARAMS = {
    "axis": Int(-1),
    "temperature": Optional(Float()),
    "dtype": Optional(DType(choices=("float16", "float32", "float64"))),
    "use_length": Optional(Bool(), False),
}


def _softmax_inputs(p) -> tuple[str, ...]:
    return ("data", "length") if p.use_length else ("data",)


def _softmax_shape(p, in_shapes: list) -> tuple[list, list]:
    ins = list(in_shapes)
    data = ins[0]
    if p.use_length and data is not None:
        ax = norm_axis(p.axis, len(data))
        lshape = tuple(d for i, d in enumerate(data) if i != ax) or (1,)
        ins[1] = merge(ins[1], lshape, "length: ")
    return ins, [None if data is None else tuple(data)]


def _softmax_type(p, in_types: list) -> tuple[list, list]:
    """Output: ``dtype`` when given, else the data's; the length input keeps its own type."""
    ins = list(in_types)
    if p.dtype is not None:
        out = np.dtype(p.dtype)
        if ins[0] is None:
            ins[0] = out
        return ins, [out]
    return ins, [ins[0]]


def _no_length(op: str, p) -> None:
    if p.use_length:
        raise OpAttributeError(f"{op}: use_length=True needs a length input, which MXNet 1.9.1 "
                               f"gives to softmax only; use softmax(data, length, "
                               "use_length=True) (and log of it)")


def _softmax_family(op: str, *, log: bool = False, negate: bool = False) -> Callable:
    def compute(p, x: np.ndarray, length: np.ndarray | None = None) -> np.ndarray:
        require_float(op, x)
        if op != "softmax":
            _no_length(op, p)
        ax = norm_axis(p.axis, x.ndim)
        if length is not None:
            if length.dtype.kind not in "iu":
                raise DTypeError(f"{op}: length must be an integer array, got {length.dtype}; "
                                 "cast it, e.g. length.astype('int32')")
            _check_shapes(_softmax_shape, p, [x, length])
        return softmax_along(x, ax, temperature=p.temperature, log=log, negate=negate,
                             length=length, out_dtype=np.dtype(p.dtype) if p.dtype else None)

    compute.__name__ = f"_{op}"
    return compute


register(OpDef(
    "softmax", params=_SOFTMAX_PARAMS, inputs=_softmax_inputs, infer_shape=_softmax_shape,
    infer_type=_softmax_type, compute=_softmax_family("softmax"), aliases=("_npx_softmax",),
    gradient=_grad_softmax("softmax"),
    doc="exp(x / t) / sum(exp(x / t)) along axis; with use_length=True positions past "
        "length[...] are 0.", lists_output_names=True))
register(OpDef(
    "log_softmax", params=_SOFTMAX_PARAMS, infer_type=_softmax_type,
    compute=_softmax_family("log_softmax", log=True), aliases=("_npx_log_softmax",),
    gradient=_grad_softmax("log_softmax"),
    doc="log(softmax(x)) along axis, computed stably."))
register(OpDef(
    "softmin", params=_SOFTMAX_PARAMS, infer_type=_softmax_type,
    compute=_softmax_family("softmin", negate=True), gradient=_grad_softmax("softmin"),
    doc="softmax(-x) along axis.", lists_input_names=False, lists_output_names=True))


def _softmax_activation(p, x: np.ndarray) -> np.ndarray:
    require_float("SoftmaxActivation", x)
    if p.mode == "instance":
        return softmax_along(x, x.ndim - 1 if x.ndim else 0)
    if x.ndim < 3:
        raise ShapeError(f"SoftmaxActivation(mode='channel'): input of shape {fmt(x.shape)} "
                         "needs at least 3 dimensions (N, C, ...); use mode='instance'")
    return softmax_along(x, 1)


register(OpDef(
    "SoftmaxActivation",
    params={"mode": Enum(("instance", "channel"), "instance")},
    compute=_softmax_activation, gradient=_grad_softmax_activation,
    doc="Deprecated softmax: mode='instance' over the last axis, 'channel' over axis 1.",
    lists_input_names=False, lists_output_names=True))


# --- ONNX export ---------------------------------------------------------------------------------
def _fc_bias(ctx: LoweringContext) -> str:
    """The bias as a (num_hidden,) tensor (MXNet also accepts (num_hidden, 1))."""
    if len(ctx.in_shapes[2]) == 1:
        return ctx.inputs[2]
    value = ctx.param(2)
    if value is not None:
        return ctx.const(value.reshape(-1), "bias")
    return ctx.make("Reshape", [ctx.inputs[2], ctx.ints([-1], "bias_shape")])


def _fc_onnx(ctx: LoweringContext) -> None:
    """flatten: ``Flatten(axis=1)`` + ``Gemm(transB=1)`` (the weight keeps MXNet's layout, the
    batch stays dynamic); otherwise ``MatMul`` with the transposed weight + ``Add``, or, for a
    weight the graph computes or reads as an input (training graphs) and static shapes, rows
    ``Reshape`` + ``Gemm(transB=1)`` + ``Reshape``. onnxruntime turns a MatMul + Add of N-d
    data into that itself, but then the last Reshape is its own node, and one that makes a
    graph output copies it (the LSTM language model's 1120x1000 logits: 0.6 ms a step);
    ours is a Reshape the training runner returns as a view of the Gemm's result
    (:mod:`gluonport.gluon._train_graph`)."""
    p, out = ctx.params, ctx.outputs[0]
    bias = [] if p.no_bias else [_fc_bias(ctx)]
    x, w = ctx.inputs[0], ctx.inputs[1]
    if p.flatten:
        if len(ctx.shape) != 2:
            x = ctx.make("Flatten", [x], axis=1)
        ctx.make("Gemm", [x, w] + bias, outputs=[out], transB=1)
        return
    value = ctx.param(1)
    if value is None and len(ctx.shape) > 2 and not ctx.is_dynamic(0):
        rows = ctx.make("Reshape", [x, ctx.ints([-1, ctx.shape[-1]], "rows")])
        y = ctx.make("Gemm", [rows, w] + bias, transB=1)
        ctx.make("Reshape", [y, ctx.ints([*ctx.shape[:-1], p.num_hidden], "out_shape")],
                 outputs=[out])
        return
    wt = (ctx.const(np.ascontiguousarray(value.T), "weight_t") if value is not None
          else ctx.make("Transpose", [w], perm=[1, 0]))
    if not bias:
        ctx.make("MatMul", [x, wt], outputs=[out])
        return
    ctx.make("Add", [ctx.make("MatMul", [x, wt]), bias[0]], outputs=[out])


lowering("FullyConnected")(_fc_onnx)


_ACT_ONNX = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
             "softsign": "Softsign"}


def _elementwise(ctx: LoweringContext, op_type: str, **attrs) -> None:
    """One elementwise node. float16 stays float16 (a single elementwise kernel rounds once,
    as MXNet's float32 computation does); float64 without a double kernel in onnxruntime goes
    through float32."""
    onnx_compute(ctx, lambda x, out: ctx.make(op_type, [x], outputs=named(out), **attrs),
                 (op_type,), keep_f16=True)


lowering("Activation")(lambda ctx: _elementwise(ctx, _ACT_ONNX[ctx.params.act_type]))


def _prelu_onnx(ctx: LoweringContext) -> None:
    """``PRelu`` with the slope laid out as MXNet broadcasts it: (C,) becomes (1, C, 1, ..., 1)
    (ONNX broadcasts from the right, so a (C,) slope would scale the last axis; onnxruntime and
    TensorRT refuse it on 4-d data)."""
    view = gamma_view_shape(tuple(ctx.in_shapes[1]), tuple(ctx.shape))
    work = onnx_work_dtype(ctx.dtype, ("PRelu",), keep_f16=True)
    value = ctx.param(1)
    if value is not None:
        slope = ctx.const(value.astype(work).reshape(view), "slope")
    else:
        slope = ctx.make("Reshape", [onnx_input_as(ctx, 1, work), ctx.ints(view, "slope_shape")])
    onnx_compute(ctx, lambda x, out: ctx.make("PRelu", [x, slope], outputs=named(out)),
                 ("PRelu",), keep_f16=True)


def _gelu_onnx(ctx: LoweringContext) -> None:
    """``Gelu`` from opset 20; before, ``0.5 x (1 + Erf(x / sqrt 2))``; in float32 for float16
    data (several roundings otherwise)."""
    if ctx.opset >= 20:
        onnx_compute(ctx, lambda x, out: ctx.make("Gelu", [x], outputs=named(out)), ("Gelu",))
        return

    def build(x: str, out: str | None) -> str:
        dt = onnx_work_dtype(ctx.dtype, ("Erf",))
        erf = ctx.make("Erf", [ctx.make("Mul", [x, ctx.const(dt.type(_SQRT_HALF), "rsqrt2")])])
        half_x = ctx.make("Mul", [x, ctx.const(dt.type(0.5), "half")])
        one_plus = ctx.make("Add", [erf, ctx.const(dt.type(1.0), "one")])
        return ctx.make("Mul", [half_x, one_plus], outputs=named(out))

    onnx_compute(ctx, build, ("Erf",))


def _leaky_onnx(ctx: LoweringContext) -> None:
    p = ctx.params
    act = p.act_type
    if act == "rrelu" and ctx.wants(1):
        raise ctx.fail("the 'mask' output of LeakyReLU(act_type='rrelu') is read, but MXNet "
                       "leaves it unwritten at inference, so it has no ONNX equivalent; use "
                       "only output 0 (sym[0])")
    if act == "prelu":
        _prelu_onnx(ctx)
    elif act == "gelu":
        _gelu_onnx(ctx)
    elif act == "leaky":
        _elementwise(ctx, "LeakyRelu", alpha=float(np.float32(p.slope)))
    elif act == "rrelu":  # inference: the mean of the bounds, summed in float32 as MXNet does
        slope = (np.float32(p.lower_bound) + np.float32(p.upper_bound)) / np.float32(2)
        _elementwise(ctx, "LeakyRelu", alpha=float(slope))
    elif act == "elu":
        _elementwise(ctx, "Elu", alpha=float(np.float32(p.slope)))
    else:  # selu: MXNet's float constants, equal to ONNX's defaults, written out anyway
        _elementwise(ctx, "Selu", alpha=_SELU_ALPHA, gamma=_SELU_LAMBDA)


lowering("LeakyReLU")(_leaky_onnx)


def _dropout_onnx(ctx: LoweringContext) -> None:
    """Identity at inference. ``mode='always'`` keeps dropping at inference in MXNet, so it is
    exported as ``Dropout`` with ``training_mode=True`` (the random numbers differ from
    MXNet's, the distribution does not); with ``axes`` the bool mask output of a Dropout on a
    slice of the mask's shape (one draw shared along ``axes``) scales x. onnxruntime implements
    Dropout at every opset, RandomUniformLike only up to opset 21. The hidden ``mask`` output
    (read by a backward graph) is ones where nothing is dropped, else the kept mask / (1 - p)."""
    p = ctx.params
    x, out = ctx.inputs[0], ctx.outputs[0]
    axes = [norm_axis(a, len(ctx.shape), "Dropout axes entry") for a in p.axes]
    like = x
    if axes:
        zeros, ones = ctx.ints([0] * len(axes), "starts"), ctx.ints([1] * len(axes), "ends")
        like = ctx.make("Slice", [x, zeros, ones, ctx.ints(axes, "axes")])
    if p.mode != "always" or p.p <= 0:
        ctx.make("Identity", [x], outputs=[out])
        if ctx.wants(1):
            one = ctx.const(np.ones((), ctx.dtype), "one")
            ctx.make("Expand", [one, ctx.make("Shape", [like])], outputs=[ctx.outputs[1]])
        return
    if p.p >= 1:  # everything dropped; ONNX's ratio must be < 1
        ctx.make("Mul", [x, ctx.const(np.zeros((), ctx.dtype), "zero")], outputs=[out])
        if ctx.wants(1):
            zero = ctx.const(np.zeros((), ctx.dtype), "zero_mask")
            ctx.make("Expand", [zero, ctx.make("Shape", [like])], outputs=[ctx.outputs[1]])
        return
    ratio = ctx.const(np.float32(p.p), "ratio")
    train = ctx.const(np.bool_(True), "training_mode")
    if not axes and not ctx.wants(1):
        ctx.make("Dropout", [x, ratio, train], outputs=[out])
        return
    _, kept = ctx.make("Dropout", [like, ratio, train], outputs=2)
    scale = ctx.const(np.asarray(1.0 / (1.0 - p.p), ctx.dtype), "inv_keep")
    mask = ctx.make("Mul", [ctx.cast_to(kept, ctx.dtype), scale],
                    outputs=[ctx.outputs[1]] if ctx.wants(1) else None)
    ctx.make("Mul", [x, mask], outputs=[out])


lowering("Dropout")(_dropout_onnx)


def _length_mask(ctx: LoweringContext, ax: int, rank: int) -> str:
    """``arange(dim) < length`` along ``ax`` (bool, broadcast to the data), as
    ``softmax(use_length=True)`` masks."""
    dim = onnx_dim(ctx, 0, ax)
    idx = ctx.make("Range", [ctx.const(np.int64(0), "zero"), dim, ctx.const(np.int64(1), "one")])
    if rank - ax - 1 > 0:
        idx = ctx.make("Reshape", [idx, ctx.ints([-1] + [1] * (rank - ax - 1), "idx_shape")])
    lens = ctx.cast_to(ctx.inputs[1], np.int64)
    if rank > 1:  # length has the data's shape without ``ax``
        lens = ctx.make("Unsqueeze", [lens, ctx.ints([ax], "len_axis")])
    return ctx.make("Less", [idx, lens])


def _softmax_onnx(*, log: bool = False, negate: bool = False) -> Callable:
    """softmax / log_softmax / softmin: ``Softmax``/``LogSoftmax`` on ``x / temperature``
    (negated for softmin) in float32 for float16 data, then cast to ``dtype``. With a length
    input, positions past it are -inf before and 0 after the softmax (0 everywhere when the
    length is 0, as MXNet gives)."""

    def handler(ctx: LoweringContext) -> None:
        p = ctx.params
        rank = len(ctx.shape)
        ax = norm_axis(p.axis, rank)
        if p.use_length and len(ctx.inputs) < 2:
            raise ctx.fail("use_length=True without a length input (MXNet 1.9.1 gives one to "
                           "softmax only); drop use_length")

        def build(x: str, out: str | None) -> str:
            work = np.dtype(onnx_work_dtype(ctx.dtype))
            if negate:
                x = ctx.make("Neg", [x])
            if p.temperature is not None and p.temperature != 1.0:
                # MXNet casts the temperature to the data's dtype first
                t = work.type(ctx.dtype.type(p.temperature))
                x = ctx.make("Div", [x, ctx.const(t, "temperature")])
            valid = _length_mask(ctx, ax, rank) if len(ctx.inputs) > 1 else None
            if valid is not None:
                x = ctx.make("Where", [valid, x, ctx.const(work.type(-np.inf), "neg_inf")])
            op_type = "LogSoftmax" if log else "Softmax"
            y = ctx.make(op_type, [x], outputs=None if valid is not None else named(out),
                         axis=ax)
            if valid is None:
                return y
            zero = ctx.const(work.type(0), "zero_out")
            return ctx.make("Where", [valid, y, zero], outputs=named(out))

        onnx_compute(ctx, build, out_dtype=p.dtype)

    return handler


lowering("softmax")(_softmax_onnx())
lowering("log_softmax")(_softmax_onnx(log=True))
lowering("softmin")(_softmax_onnx(negate=True))


def _softmax_activation_onnx(ctx: LoweringContext) -> None:
    axis = 1 if ctx.params.mode == "channel" else -1
    onnx_compute(ctx, lambda x, out: ctx.make("Softmax", [x], outputs=named(out), axis=axis))


lowering("SoftmaxActivation")(_softmax_activation_onnx)
