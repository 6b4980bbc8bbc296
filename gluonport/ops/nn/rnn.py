"""The fused recurrent operator ``RNN`` and ``_rnn_param_concat``, which builds its weights.

``RNN`` runs a stack of (optionally bidirectional) vanilla-ReLU/tanh RNN, LSTM or GRU layers
over ``data`` in TNC layout (time, batch, features), with every weight in one flat
``parameters`` vector laid out as MXNet lays it out:

* first all weight matrices, layer by layer, direction by direction (forward, then
  backward): ``W_i2h`` (``gates*H x input``), ``W_h2h`` (``gates*H x H``, ``x P`` with an LSTM
  projection) and, with ``projection_size=P``, ``W_h2r`` (``P x H``);
* then all biases in the same order: ``b_i2h`` (``gates*H``) and ``b_h2h`` (``gates*H``).

Gates stack in MXNet's (cuDNN's) order: LSTM ``i, f, g, o``; GRU ``r, z, n`` with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = (1 - z) * n + z * h``.
Inference semantics: dropout ``p`` is not applied; in training mode it is applied to the outputs
of every layer but the last, as MXNet does. The gradient is one ``_backward_RNN`` kernel
(:mod:`.rnn_grad`, back-propagation through time; ONNX lowering in :mod:`.rnn_grad_onnx`). A
hybridized training step on onnxruntime writes the node out per layer (``train_graph``): LSTM
layers as ``_backward_RNN_lstm_forward`` (:mod:`.rnn_train`), which returns the step
activations MXNet keeps as operator state, other modes as one-layer ``RNN`` nodes, with
dropout between layers as Dropout's mask.

Two options only MXNet's cuDNN kernels honour (its CPU kernels refuse ``use_sequence_length``
and ignore the LSTM clip) are computed here as cuDNN computes them:

* ``use_sequence_length``: batch item ``b`` runs over its first ``sequence_length[b]`` steps
  only (the backward direction starts at its last valid step); outputs past the end are 0 and
  the returned states are those at the last valid step.
* ``lstm_state_clip_min/max``: each new cell state is clipped to the range before the hidden
  state is computed from it; with ``lstm_state_clip_nan`` a NaN cell becomes the minimum.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float, Int, Optional
from ...errors import DTypeError, GluonportError, OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, deliver, lowering
from ..registry import OpDef, register

__all__ = ["rnn_param_size", "GATES", "onnx_weight_layout", "unpack_params", "dropout_masks",
           "keep_for_backward", "kept_for_backward", "onnx_layer"]

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
"""Gates per mode: the number of ``H``-row blocks in each weight matrix."""


def rnn_param_size(mode: str, state_size: int, num_layers: int, bidirectional: bool,
                   input_size: int, projection_size: int | None = None) -> int:
    """Length of the flat parameter vector (MXNet's ``GetRnnParamSize``).

    >>> rnn_param_size("lstm", 5, 2, True, 7)
    1240
    """
    dirs = 2 if bidirectional else 1
    gh = GATES[mode] * state_size
    rec = projection_size or state_size  # the size fed back into W_h2h
    first = gh * (input_size + rec + 2)
    other = gh * (rec * dirs + rec + 2)
    size = dirs * (first + (num_layers - 1) * other)
    if projection_size:
        size += projection_size * state_size * num_layers * dirs
    return size


def _blocks(p, input_size: int) -> tuple[list[tuple], list[tuple]]:
    """Shapes of (weights, biases) per layer and direction, in the flat vector's order."""
    dirs = 2 if p.bidirectional else 1
    gh, proj = GATES[p.mode] * p.state_size, p.projection_size
    rec = proj or p.state_size
    weights, biases = [], []
    for layer in range(p.num_layers):
        n_in = input_size if layer == 0 else rec * dirs
        for _ in range(dirs):
            shapes = [(gh, n_in), (gh, rec)] + ([(proj, p.state_size)] if proj else [])
            weights.append(shapes)
            biases.append([(gh,), (gh,)])
    return weights, biases


def _unpack(p, flat: np.ndarray, input_size: int) -> list[list[np.ndarray]]:
    """Per layer-direction ``[W_i2h, W_h2h, W_h2r or None, b_i2h, b_h2h]`` views of ``flat``."""
    weights, biases = _blocks(p, input_size)
    pos, out = 0, []
    for group in (weights, biases):
        for k, shapes in enumerate(group):
            views = []
            for shape in shapes:
                n = int(np.prod(shape))
                views.append(flat[pos:pos + n].reshape(shape))
                pos += n
            if group is weights:
                out.append(views + [None] * (3 - len(views)))
            else:
                out[k].extend(views)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)  # overflow-free logistic


class _Cell:
    """One direction of one layer; ``step`` maps (input projection, h, c) to the new h, c."""

    def __init__(self, p, w: list[np.ndarray]):
        self.mode, self.hidden = p.mode, p.state_size
        wx, wh, self.whr, bx, bh = w
        self.wx_t, self.wh_t = wx.T, wh.T
        self.bias = bx + bh
        if p.mode == "gru":  # b_hn stays inside r * (...)
            self.bias = bx + np.concatenate([bh[:2 * self.hidden], np.zeros_like(bh[:self.hidden])])
            self.bhn = bh[2 * self.hidden:]
        self.clip = _clipper(p)

    def step(self, xw: np.ndarray, h: np.ndarray, c: np.ndarray | None):
        hw = h @ self.wh_t
        H = self.hidden
        if self.mode == "lstm":
            g = xw + hw
            c = _sigmoid(g[:, H:2 * H]) * c + _sigmoid(g[:, :H]) * np.tanh(g[:, 2 * H:3 * H])
            c = self.clip(c)
            h = _sigmoid(g[:, 3 * H:]) * np.tanh(c)
            return (h @ self.whr.T if self.whr is not None else h), c
        if self.mode == "gru":
            r = _sigmoid(xw[:, :H] + hw[:, :H])
            z = _sigmoid(xw[:, H:2 * H] + hw[:, H:2 * H])
            n = np.tanh(xw[:, 2 * H:] + r * (hw[:, 2 * H:] + self.bhn))
            return (1.0 - z) * n + z * h, None
        pre = xw + hw
        return (np.maximum(pre, 0) if self.mode == "rnn_relu" else np.tanh(pre)), None


def _clipper(p) -> Callable[[np.ndarray], np.ndarray]:
    lo, hi = p.lstm_state_clip_min, p.lstm_state_clip_max
    if lo is None or hi is None:
        return lambda c: c
    if p.lstm_state_clip_nan:
        return lambda c: np.fmin(np.fmax(c, lo), hi)
    return lambda c: np.clip(c, lo, hi)


def _run_direction(cell: _Cell, x: np.ndarray, h: np.ndarray, c, reverse: bool,
                   lengths: np.ndarray | None):
    """Run one direction over the sequence; returns (outputs (T, N, out), h, c)."""
    T, N = x.shape[:2]
    xw = (x.reshape(T * N, -1) @ cell.wx_t + cell.bias).reshape(T, N, -1)
    ys = np.zeros((T, N, h.shape[1]), dtype=x.dtype)
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        h_new, c_new = cell.step(xw[t], h, c)
        if lengths is None:
            h, c = h_new, c_new
        else:  # steps past a sequence's end leave its state alone and output 0
            live = (t < lengths)[:, None]
            h = np.where(live, h_new, h)
            c = None if c is None else np.where(live, c_new, c)
            h_new = np.where(live, h_new, 0)
        ys[t] = h_new
    return ys, h, c


def _check_options(p) -> None:
    if p.projection_size is not None:
        if p.mode != "lstm":
            raise OpAttributeError(f"RNN: projection_size is only supported for mode='lstm', "
                                   f"not {p.mode!r}; drop projection_size")
        if not 0 < p.projection_size <= p.state_size:
            raise OpAttributeError(f"RNN: projection_size={p.projection_size} must be in "
                                   f"1..state_size ({p.state_size})")
    clip = (p.lstm_state_clip_min, p.lstm_state_clip_max)
    if clip != (None, None):
        if p.mode != "lstm" or None in clip or clip[1] < clip[0]:
            raise OpAttributeError(
                "RNN: lstm_state_clip_min/max need mode='lstm', must be given together and "
                f"satisfy min <= max (got mode={p.mode!r}, min={clip[0]}, max={clip[1]})")


def unpack_params(p, flat: np.ndarray, input_size: int) -> list[list[np.ndarray | None]]:
    """Per layer-direction ``[W_i2h, W_h2h, W_h2r or None, b_i2h, b_h2h]`` *views* of the flat
    parameter vector in MXNet's layout (writing into them writes ``flat``)."""
    return _unpack(p, flat, input_size)


# What a training-mode forward call keeps for its backward pass (the dropout masks it drew
# between layers, each direction's step activations), by the call's output array: MXNet's RNN
# is a stateful operator whose backward reads its forward's reserve space.
_KEPT: dict[int, tuple[weakref.ref, dict]] = {}


def keep_for_backward(output: np.ndarray, kept: dict) -> None:
    """Remember ``kept`` for the backward pass of the call that returned ``output`` (dropped
    with the array)."""
    key = id(output)
    _KEPT[key] = (weakref.ref(output), kept)
    weakref.finalize(output, _KEPT.pop, key, None)


def kept_for_backward(output: np.ndarray) -> dict | None:
    """What the training-mode forward call that returned ``output`` kept, or ``None``."""
    entry = _KEPT.get(id(output))
    if entry is None or entry[0]() is not output:
        return None
    return entry[1]


def dropout_masks(p, output: np.ndarray) -> list[np.ndarray] | None:
    """The dropout masks the training-mode forward call that returned ``output`` applied
    between its layers (``None`` when it applied none: inference, ``p=0`` or one layer)."""
    if not (p.p > 0 and p.num_layers > 1):
        return None
    kept = kept_for_backward(output)
    return None if kept is None else kept.get("masks")


def _rnn_train(p, data: np.ndarray, params: np.ndarray, state: np.ndarray, *rest: np.ndarray):
    """Training mode: as inference, with dropout ``p`` on the outputs of every layer but the
    last (MXNet's RNN dropout); the step activations and masks are kept for the backward
    pass (:mod:`.rnn_grad`). Options without a backward pass run as at inference."""
    from .rnn_grad import train_forward, trainable

    if not trainable(p) or data.dtype.kind != "f":
        return _rnn(p, data, params, state, *rest)
    _rnn_shape(p, [data.shape, params.shape, state.shape] + [r.shape for r in rest])
    return train_forward(p, data, params, state, *rest)


def _rnn(p, data: np.ndarray, params: np.ndarray, state: np.ndarray, *rest: np.ndarray):
    _check_options(p)
    if data.dtype.kind != "f":
        raise DTypeError(f"RNN: data must be float16/32/64, got {data.dtype.name}")
    _rnn_shape(p, [data.shape, params.shape, state.shape] + [r.shape for r in rest])
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    cell0 = rest[0].astype(acc) if p.mode == "lstm" else None
    lengths = rest[-1].astype(np.int64) if p.use_sequence_length else None
    weights = _unpack(p, params.astype(acc), data.shape[2])
    x, dirs = data.astype(acc), 2 if p.bidirectional else 1
    hs, cs = [], []
    for layer in range(p.num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            c0 = None if cell0 is None else cell0[k]
            y, h, c = _run_direction(_Cell(p, weights[k]), x, state[k].astype(acc), c0, d == 1,
                                     lengths)
            outs.append(y)
            hs.append(h)
            cs.append(c)
        x = np.concatenate(outs, axis=2) if dirs == 2 else outs[0]
    result = [x.astype(data.dtype)]
    if p.state_outputs:
        result.append(np.stack(hs).astype(data.dtype))
        if p.mode == "lstm":
            result.append(np.stack(cs).astype(data.dtype))
    return result


def _rnn_inputs(p) -> tuple[str, ...]:
    names = ("data", "parameters", "state") + (("state_cell",) if p.mode == "lstm" else ())
    return names + (("sequence_length",) if p.use_sequence_length else ())


def _rnn_outputs(p) -> tuple[str, ...]:
    if not p.state_outputs:
        return ("output",)
    return ("output", "state_output") + (("statecell_output",) if p.mode == "lstm" else ())


def _rnn_shape(p, in_shapes):
    """MXNet's RNNShape: complete the parameter length and state shapes from ``data``."""
    data, ins = in_shapes[0], list(in_shapes)
    if data is None:
        return ins, [None] * len(_rnn_outputs(p))
    if len(data) != 3:
        raise ShapeError(f"RNN: data must be 3-d (sequence length, batch, input size), got "
                         f"{fmt(data)}")
    T, N, C = data
    dirs, rec = (2 if p.bidirectional else 1), p.projection_size or p.state_size
    layers = p.num_layers * dirs
    ins[2] = merge(ins[2], (layers, N, rec), "RNN: state: ")
    if p.mode == "lstm":
        ins[3] = merge(ins[3], (layers, N, p.state_size), "RNN: state_cell: ")
    if C:  # MXNet computes a bogus length from an unknown input size; leave it unknown
        size = rnn_param_size(p.mode, p.state_size, p.num_layers, p.bidirectional, C,
                              p.projection_size)
        ins[1] = merge(ins[1], (size,), "RNN: parameters: ")
    if p.use_sequence_length:
        ins[-1] = merge(ins[-1], (N,), "RNN: sequence_length: ")
    outs = [(T, N, dirs * rec), (layers, N, rec), (layers, N, p.state_size)]
    return ins, outs[:len(_rnn_outputs(p))]


def _rnn_type(p, in_types):
    dt = in_types[0]
    if dt is None:
        return in_types, [None] * len(_rnn_outputs(p))
    names, ins = _rnn_inputs(p), list(in_types)
    for i, t in enumerate(ins):
        if t is None:
            ins[i] = dt
        elif np.dtype(t) != dt and names[i] != "sequence_length":
            raise DTypeError(f"RNN: input {names[i]!r} is {np.dtype(t).name} but data is "
                             f"{np.dtype(dt).name}; all inputs but sequence_length share "
                             "data's dtype")
    return ins, [dt] * len(_rnn_outputs(p))


def _layer_params(p, params) -> list | None:
    """Per layer, the pieces of the flat parameter vector when it is built as Gluon's RNN
    layers build it (one ``_rnn_param_concat`` of every weight, then every bias, layer by
    layer: ``4 * layers * dirs`` pieces), else ``None``."""
    import json

    dirs = 2 if p.bidirectional else 1
    graph = json.loads(params.tojson())
    head = graph["nodes"][graph["heads"][0][0]]
    n = 2 * p.num_layers * dirs  # weight pieces; as many bias pieces
    if head["op"] != "_rnn_param_concat" or len(head["inputs"]) != 2 * n:
        return None
    parts = params.get_children()
    per = 2 * dirs
    return [[parts[i] for i in range(per * layer, per * (layer + 1))]
            + [parts[n + i] for i in range(per * layer, per * (layer + 1))]
            for layer in range(p.num_layers)]


def _unflattened(piece):
    """What a Gluon RNN layer flattened into ``piece`` with ``reshape(-1)`` (the parameter
    itself: an LSTM's training forward reads its pieces in any shape, and a Reshape of a
    graph input is a copy on onnxruntime), else ``piece``."""
    import json
    import re

    graph = json.loads(piece.tojson())
    head = graph["nodes"][graph["heads"][0][0]]
    shape = head.get("attrs", {}).get("shape", "")
    if head["op"] in ("Reshape", "reshape") and re.findall(r"-?\d+", shape) == ["-1"] and (
            head["attrs"].get("reverse", "False") in ("False", "0", "false")):
        return piece.get_children()
    return piece


def _rnn_train_graph(F, p, inputs: list):
    """Training mode on ONNX, for the flat parameter vector of Gluon's RNN layers: one
    single-layer ``RNN`` node per layer (its own flat vector joined from that layer's pieces,
    the states cut per layer; for LSTM one ``_backward_RNN_lstm_forward`` node taking the
    layer's pieces) and dropout ``p`` between layers as Dropout's (a uniform draw kept below
    ``1 - p``, scaled by ``1 / (1 - p)``). So every layer's input is a forward value the
    backward graph reads (``_backward_RNN``'s lowering then re-runs no layer) and the masks
    are values too. One layer but LSTM's, options without a backward pass, or another flat
    vector without dropout: trains as it infers (``None``); with dropout between layers:
    refused (the backward lowering of a multi-layer node cannot see its masks), so the step
    stays on the numpy executor."""
    from .rnn_grad import trainable

    lstm = p.mode == "lstm"
    if not trainable(p) or (p.num_layers == 1 and not lstm):
        return None
    layers = _layer_params(p, inputs[1]) if p.num_layers > 1 or lstm else [None]
    if layers is None:
        if p.p > 0 and p.num_layers > 1:
            raise GluonportError(f"RNN: training-mode dropout between layers (p={p.p}) of a "
                                 "parameter vector not built by Gluon's RNN layers has no "
                                 "form from exportable ops; this training step runs on numpy")
        return None
    L = p.num_layers
    states = [F.SliceChannel(s, num_outputs=L, axis=0) if L > 1 else [s]
              for s in inputs[2:4 if lstm else 3]]
    attrs = {k: v for k, v in p.as_dict().items() if v is not None}
    attrs.update(num_layers=1, p=0.0, state_outputs=True)
    x, finals = inputs[0], [[], []]
    for layer, pieces in enumerate(layers):
        if lstm:  # keeps its step activations for the backward pass (no re-computation)
            outs = F._internal._backward_RNN_lstm_forward(
                x, *[_unflattened(w) for w in pieces], states[0][layer], states[1][layer],
                state_size=p.state_size,
                bidirectional=p.bidirectional)
        else:
            flat = inputs[1] if pieces is None else F._internal._rnn_param_concat(
                *pieces, dim=0, num_args=len(pieces))
            outs = F.RNN(x, flat, *[s[layer] for s in states], **attrs)
        x = outs[0]
        for k in range(len(states)):
            finals[k].append(outs[1 + k])
        if p.p > 0 and layer < L - 1:
            keep = 1.0 - p.p
            u = F.random.uniform_like(x, low=0.0, high=1.0)
            mask = F._internal._mul_scalar(F._internal._lesser_scalar(u, scalar=keep),
                                           scalar=1.0 / keep)
            x = F.elemwise_mul(x, mask)
    result = [x]
    if p.state_outputs:
        result += [F.Concat(*f, dim=0, num_args=L) if L > 1 else f[0]
                   for f in finals[:len(states)]]
    return result, {}


register(OpDef(
    "RNN",
    params={"state_size": Int(), "num_layers": Int(), "bidirectional": Bool(False),
            "mode": Enum(("rnn_relu", "rnn_tanh", "lstm", "gru")), "p": Float(0.0),
            "state_outputs": Bool(False), "projection_size": Optional(Int()),
            "lstm_state_clip_min": Optional(Float()), "lstm_state_clip_max": Optional(Float()),
            "lstm_state_clip_nan": Bool(False), "use_sequence_length": Bool(False)},
    inputs=_rnn_inputs, compute=_rnn, train_compute=_rnn_train, train_graph=_rnn_train_graph,
    infer_shape=_rnn_shape,
    infer_type=_rnn_type, gradient=lambda F, p, ins, outs, ogs: _rnn_grad(F, p, ins, outs, ogs),
    num_outputs=lambda p: len(_rnn_outputs(p)), output_names=_rnn_outputs,
    doc="Fused multi-layer (bidirectional) RNN / LSTM / GRU over TNC data.",
    lists_output_names=True))


def _rnn_grad(F, p, inputs, outputs, ograds):
    """One ``_backward_RNN`` kernel (:mod:`.rnn_grad`) from the visible outputs' head
    gradients, the forward inputs and output (the output finds the dropout masks)."""
    from .rnn_grad import check_trainable

    check_trainable(p)
    n_in = len(_rnn_inputs(p)) - (1 if p.use_sequence_length else 0)
    grads = F._internal._backward_RNN(*ograds[:len(_rnn_outputs(p))], *inputs[:n_in],
                                      outputs[0], **{k: v for k, v in p.as_dict().items()
                                                     if v is not None})
    return list(grads) + [None] * (len(inputs) - n_in)


# --- _rnn_param_concat -------------------------------------------------------------------------
def _param_concat_shape(p, in_shapes, out_shapes=(None,)):
    """MXNet's RNNParamConcatShape: Concat that also fills one or two inputs of unknown size
    along ``dim`` from the output's size (how Gluon's RNN layers complete their weights)."""
    ins = [None if s is None else tuple(s) for s in in_shapes]
    common = None
    for s in ins + [out_shapes[0]]:
        if s is not None:
            axis = _concat_axis(p.dim, len(s))
            common = merge(common, s[:axis] + (0,) + s[axis + 1:], "_rnn_param_concat: ")
    if common is None:
        return ins, [None]
    axis = _concat_axis(p.dim, len(common))
    ins = [merge(s, common, f"_rnn_param_concat: input {i}: ") for i, s in enumerate(ins)]
    sizes = [s[axis] for s in ins]
    unknown = [i for i, n in enumerate(sizes) if n == 0]
    out = merge(common[:axis] + (sum(sizes) if not unknown else 0,) + common[axis + 1:],
                out_shapes[0], "_rnn_param_concat: output: ")
    if unknown and out[axis] and len(unknown) <= 2:
        residual = out[axis] - sum(sizes)
        if residual < 0 or residual % len(unknown):
            raise ShapeError(f"_rnn_param_concat: inputs {[fmt(s) for s in ins]} cannot make "
                             f"up the output {fmt(out)}")
        for i in unknown:
            ins[i] = ins[i][:axis] + (residual // len(unknown),) + ins[i][axis + 1:]
    return ins, [out]



def _param_concat_grad(F, p, inputs: list, ograds: list) -> list:
    """The head gradient split back into the inputs (one kernel, MXNet's ConcatGrad)."""
    g = F._internal._backward__rnn_param_concat(ograds[0], *inputs, num_args=len(inputs) + 1,
                                                dim=p.dim)
    return [g[i] for i in range(len(inputs))] if len(inputs) > 1 else [g]


def _concat_axis(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise ShapeError(f"_rnn_param_concat: dim {dim} is out of range for {ndim}-d inputs")
    return dim % ndim


def _param_concat(p, *arrays: np.ndarray) -> np.ndarray:
    return np.concatenate(arrays, axis=_concat_axis(p.dim, arrays[0].ndim))


register(OpDef(
    "_rnn_param_concat", params={"num_args": Int(), "dim": Int(1)}, variadic="num_args",
    compute=_param_concat, infer_shape=_param_concat_shape, shape_needs_outputs=True,
    gradient=lambda F, p, ins, outs, ogs: _param_concat_grad(F, p, ins, ogs),
    doc="Concat along ``dim`` whose shape inference completes unknown inputs from the output.",
    lists_output_names=True))


# --- ONNX export -----------------------------------------------------------------------------
# One ONNX RNN/GRU/LSTM node per layer (ONNX nodes are single-layer). Weights are re-laid out
# from the flat vector: W (dirs, gates*H, in), R (dirs, gates*H, H), B (dirs, 2*gates*H) with
# the gates in ONNX's order. MXNet's GRU keeps b_hn inside r * (...): linear_before_reset=1.
_ONNX_OP = {"rnn_relu": "RNN", "rnn_tanh": "RNN", "gru": "GRU", "lstm": "LSTM"}
_ONNX_GATE_ORDER = {"rnn_relu": [0], "rnn_tanh": [0],
                    "gru": [1, 0, 2],  # MXNet r, z, n -> ONNX z, r, h
                    "lstm": [0, 3, 1, 2]}  # MXNet i, f, g, o -> ONNX i, o, f, c


def onnx_weight_layout(p, input_size: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per layer, int64 index arrays ``(W, R, B)`` into the flat parameter vector that pick
    ONNX's weight tensors (``flat[W]`` is ONNX's ``W`` input of that layer)."""
    size = rnn_param_size(p.mode, p.state_size, p.num_layers, p.bidirectional, input_size)
    views = _unpack(p, np.arange(size, dtype=np.int64), input_size)
    dirs, H, order = (2 if p.bidirectional else 1), p.state_size, _ONNX_GATE_ORDER[p.mode]

    def gates(m: np.ndarray) -> np.ndarray:
        return np.concatenate([m[g * H:(g + 1) * H] for g in order])

    layers = []
    for layer in range(p.num_layers):
        blocks = views[layer * dirs:(layer + 1) * dirs]
        layers.append((np.stack([gates(w[0]) for w in blocks]),
                       np.stack([gates(w[1]) for w in blocks]),
                       np.stack([np.concatenate([gates(w[3]), gates(w[4])]) for w in blocks])))
    return layers


def _check_onnx_options(ctx: LoweringContext, p) -> None:
    if p.projection_size is not None:
        raise ctx.fail("an LSTM with projection_size has no ONNX equivalent (ONNX LSTM has no "
                       "projection); export a model without projection_size")
    if p.lstm_state_clip_min is not None or p.lstm_state_clip_max is not None:
        raise ctx.fail("lstm_state_clip_min/max clip the cell state, which ONNX LSTM cannot "
                       "express (its 'clip' bounds the gate inputs); drop the clip to export")


# Pure, cheap ops through which the flat vector is folded from parameters at export time:
# Gluon's RNN layers feed RNN ``_rnn_param_concat(w.reshape(-1), ...)``.
_FOLDABLE = frozenset(("_rnn_param_concat", "Concat", "Reshape", "Flatten", "Cast", "_copy"))


def _folded(ctx: LoweringContext, node, index: int, budget: list[int]) -> np.ndarray | None:
    """The value of MXNet tensor ``(node, index)`` when it is computed from parameters by
    :data:`_FOLDABLE` ops only (at most ``budget[0]`` of them), else ``None``."""
    if node.op is None:
        return ctx.param_values.get(node.name)
    if node.op.name not in _FOLDABLE or budget[0] <= 0:
        return None
    budget[0] -= 1
    values = [_folded(ctx, src, i, budget) for src, i in node.inputs]
    if any(v is None for v in values):
        return None
    return node.op.run(node.params, values)[index]


def _flat_params(ctx: LoweringContext) -> np.ndarray | None:
    """The flat parameter vector when it is known at export time."""
    flat = ctx.param(1)
    if flat is None:
        flat = ctx.initializers.get(ctx.inputs[1])
    if flat is None and ctx.node is not None:
        src, index = ctx.node.inputs[1]
        flat = _folded(ctx, src, index, [4096])
    return flat


def _weights(ctx: LoweringContext, flat: np.ndarray | None, index: np.ndarray, dtype: np.dtype,
             hint: str, src: int) -> str:
    """One ONNX weight tensor: a re-laid-out initializer when the flat vector is known,
    else a Gather from the graph tensor (input ``src``)."""
    if flat is not None:
        return ctx.const(np.asarray(flat)[index].astype(dtype), hint)
    picked = ctx.make("Gather", [ctx.inputs[src], ctx.const(index, hint + "_index")], axis=0)
    return picked if np.dtype(ctx.in_dtypes[src]) == dtype else ctx.cast_to(picked, dtype)


def _state_slice(ctx: LoweringContext, i: int, layer: int, dirs: int, dtype: np.dtype) -> str:
    """The initial state of one layer: rows ``layer*dirs ...`` of MXNet's (L*dirs, N, H);
    omitted ("") when it is an all-zero fill (Gluon's begin_state), ONNX's default, which
    also keeps a dynamic batch dynamic."""
    if ctx.is_zeros(i):
        return ""
    state = ctx.inputs[i]
    if ctx.params.num_layers > 1:
        state = ctx.make("Slice", [state, ctx.ints([layer * dirs], "start"),
                                   ctx.ints([(layer + 1) * dirs], "end"), ctx.ints([0], "axis")])
    return state if np.dtype(ctx.in_dtypes[i]) == dtype else ctx.cast_to(state, dtype)


def _layer_attrs(p, dirs: int) -> dict:
    attrs = {"hidden_size": p.state_size,
             "direction": "bidirectional" if dirs == 2 else "forward"}
    if p.mode == "gru":
        attrs["linear_before_reset"] = 1
    elif p.mode != "lstm":
        attrs["activations"] = ["Relu" if p.mode == "rnn_relu" else "Tanh"] * dirs
    return attrs


def _layer_output(ctx: LoweringContext, y: str, dirs: int) -> str:
    """ONNX's Y (T, dirs, N, H) as MXNet's layer output (T, N, dirs*H)."""
    if dirs == 1:
        return ctx.make("Squeeze", [y, ctx.ints([1], "axes")])
    y = ctx.make("Transpose", [y], perm=[0, 2, 1, 3])
    return ctx.make("Reshape", [y, ctx.ints([0, 0, -1], "shape")])


def _joined(ctx: LoweringContext, parts: list[str]) -> str:
    """Per-layer final states (dirs, N, H) stacked as MXNet's (L*dirs, N, H)."""
    return parts[0] if len(parts) == 1 else ctx.make("Concat", parts, axis=0)


def onnx_layer(ctx: LoweringContext, p, layer: int, x: str, flat: np.ndarray | None,
               work: np.dtype, src: int, wanted: list[int] = (), seq: str = ""
               ) -> tuple[str, list[str]]:
    """Layer ``layer`` of the RNN as one ONNX RNN/GRU/LSTM node over ``x`` (T, N, features, in
    ``work``): ``(its MXNet output (T, N, dirs*H), [final state k for k in wanted])``. The flat
    parameter vector is input ``src`` of the node being lowered (``flat``: its value when
    known), the initial states inputs ``src + 1`` (and ``src + 2``, LSTM); states 1 (h) and 2
    (LSTM c) are the ``wanted`` final states."""
    dirs = 2 if p.bidirectional else 1
    w, r, b = onnx_weight_layout(p, int(ctx.in_shapes[src - 1][2]))[layer]
    ins = [x, _weights(ctx, flat, w, work, "W", src), _weights(ctx, flat, r, work, "R", src),
           _weights(ctx, flat, b, work, "B", src), seq,
           _state_slice(ctx, src + 1, layer, dirs, work)]
    if p.mode == "lstm":
        ins.append(_state_slice(ctx, src + 2, layer, dirs, work))
    outs = [ctx.fresh("y")] + [ctx.fresh(f"state{k}") if k in wanted else ""
                               for k in range(1, max(wanted, default=0) + 1)]
    ctx.make(_ONNX_OP[p.mode], ins, outputs=outs, **_layer_attrs(p, dirs))
    return _layer_output(ctx, outs[0], dirs), [outs[k] for k in wanted]


def _rnn_onnx(ctx: LoweringContext) -> None:
    """One ONNX RNN/GRU/LSTM node per layer (see the section comment)."""
    p, dtype = ctx.params, np.dtype(ctx.dtype)
    _check_onnx_options(ctx, p)
    # onnxruntime has no float64 RNN/GRU/LSTM kernels (ONNX allows them): run in float32
    work = np.dtype(np.float32) if dtype == np.float64 else dtype
    lstm = p.mode == "lstm"
    wanted = [k for k in range(1, 3 if lstm else 2) if p.state_outputs and ctx.wants(k)]
    x = ctx.inputs[0] if work == dtype else ctx.cast_to(ctx.inputs[0], work)
    seq = ctx.cast_to(ctx.inputs[-1], np.int32) if p.use_sequence_length else ""
    states: list[list[str]] = [[], []]
    flat = _flat_params(ctx)
    for layer in range(p.num_layers):
        x, outs = onnx_layer(ctx, p, layer, x, flat, work, 1, wanted, seq)
        for k, out in zip(wanted, outs):
            states[k - 1].append(out)
    deliver(ctx, x, 0, work)
    for k in wanted:
        deliver(ctx, _joined(ctx, states[k - 1]), k, work)


def _param_concat_onnx(ctx: LoweringContext) -> None:
    """Concat along ``dim``; parameters only are folded into one initializer, which RNN's
    handler re-lays out (and which is dropped when nothing else reads it)."""
    axis = _concat_axis(ctx.params.dim, len(ctx.shape))
    values = [ctx.param(i) for i in range(len(ctx.inputs))]
    if all(v is not None for v in values):
        ctx.initializers[ctx.outputs[0]] = np.concatenate(values, axis=axis)
        return
    ctx.make("Concat", ctx.inputs, outputs=ctx.outputs[:1], axis=axis)


lowering("RNN")(_rnn_onnx)
lowering("_rnn_param_concat")(_param_concat_onnx)
