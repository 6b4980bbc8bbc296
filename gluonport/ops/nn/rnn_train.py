"""``_backward_RNN_lstm_forward``: one LSTM layer's training-mode forward that also returns
the step activations its backward pass needs; ``_backward_RNN_lstm``, its backward kernel.

Not MXNet operators, which is why both carry the ``_backward_`` prefix: like every
``_backward_*`` kernel they exist only in graphs gluonport builds for a training step and never
writes (MXNet files name only MXNet 1.9.1's ops, tests/ops/test_coverage.py). MXNet's ``RNN``
is a stateful operator whose training forward keeps the gate activations in a reserve space its
backward kernel reads. A gluonport graph has no operator state, so a hybridized training step
on onnxruntime (``RNN``'s ``train_graph`` in :mod:`.rnn`: one node of this op per LSTM layer)
makes the reserve an output, which the backward graph reads as a saved forward value instead
of re-computing the gates (two GEMMs over all steps per layer and direction).

Inputs: ``data`` (T, N, C), ``parameters`` (a one-layer LSTM's flat vector in MXNet's layout,
:func:`.rnn.unpack_params`), ``state`` and ``state_cell`` (dirs, N, H). Outputs: ``output``
(T, N, dirs*H), the final ``state`` and ``state_cell`` (dirs, N, H), and ``reserve`` (N,
dirs*T*6H): for each batch row, direction and step (in time order) the factors of the
backward recursion ``[b (4H), a (H), f (H)]`` (:func:`.rnn_grad.lstm_factors`: from the gate
activations, MXNet's order i, f, g, o, and the cells). The first three equal
``RNN(mode='lstm', num_layers=1, state_outputs=True)``'s. The reserve is batch-major so that
the ONNX forward writes it with one ``Concat`` of the steps' factors and the backward reads
them back with one ``Split``: no copy of it between the two but the one each must make.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Int
from ...errors import DTypeError, ShapeError
from ..infer import fmt, merge
from ..lowering import lowering
from ..registry import OpDef, register
from . import rnn_grad, rnn_grad_onnx  # modules: rnn_grad may still be initialising
from .rnn import layer_params, rnn_param_size, unpack_params

__all__: list[str] = []


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def _steps(T: int, reverse: bool) -> range:
    return range(T - 1, -1, -1) if reverse else range(T)


def _forward_dir(x: np.ndarray, h: np.ndarray, c: np.ndarray, w: list, reverse: bool):
    T, N = x.shape[:2]
    H = h.shape[1]
    wx, wh, _, bx, bh = w
    xw = (x.reshape(T * N, -1) @ wx.T + (bx + bh)).reshape(T, N, 4 * H)
    ys = np.empty((T, N, H), x.dtype)
    acts = np.empty((T, N, 4 * H), x.dtype)  # i, f, g, o
    cs = np.empty((T, N, H), x.dtype)
    c0, wh_t = c, np.ascontiguousarray(wh.T)
    for t in _steps(T, reverse):
        pre = xw[t] + h @ wh_t
        s = _sigmoid(pre)
        s[:, 2 * H:3 * H] = np.tanh(pre[:, 2 * H:3 * H])
        c = s[:, H:2 * H] * c + s[:, :H] * s[:, 2 * H:3 * H]
        h = s[:, 3 * H:] * np.tanh(c)
        acts[t], cs[t], ys[t] = s, c, h
    res = rnn_grad.lstm_factors(acts[..., :H], acts[..., H:2 * H], acts[..., 2 * H:3 * H],
                       acts[..., 3 * H:], cs, rnn_grad.previous_steps(cs, c0, reverse))
    return ys, h, c, res


def _train_lstm(p, data: np.ndarray, params: np.ndarray, state: np.ndarray,
                cell: np.ndarray) -> list:
    _shape(p, [data.shape, params.shape, state.shape, cell.shape])
    if data.dtype.kind != "f":
        raise DTypeError("_backward_RNN_lstm_forward: data must be floating point, got "
                         f"{data.dtype.name}")
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    x = data.astype(acc, copy=False)
    weights = unpack_params(layer_params(p.state_size, p.bidirectional),
                            params.astype(acc, copy=False), data.shape[2])
    outs, hs, cs, res = [], [], [], []
    for d, w in enumerate(weights):
        y, h, c, r = _forward_dir(x, state[d].astype(acc), cell[d].astype(acc), w, d == 1)
        outs.append(y)
        hs.append(h)
        cs.append(c)
        res.append(r)
    y = np.concatenate(outs, axis=2) if len(outs) > 1 else outs[0]
    return [y.astype(data.dtype), np.stack(hs).astype(data.dtype),
            np.stack(cs).astype(data.dtype), _pack_reserve(res, data.dtype)]


def _pack_reserve(res: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
    """The reserve (N, dirs*T*6H) from each direction's (T, N, 6H) factors."""
    T, N, width = res[0].shape
    out = np.empty((N, len(res), T, width), dtype)
    for d, r in enumerate(res):
        out[:, d] = r.transpose(1, 0, 2)
    return out.reshape(N, -1)


def _unpack_reserve(reserve: np.ndarray, dirs: int, T: int, d: int) -> np.ndarray:
    """Direction ``d``'s (T, N, 6H) factors from the reserve."""
    N = reserve.shape[0]
    return np.ascontiguousarray(reserve.reshape(N, dirs, T, -1)[:, d].transpose(1, 0, 2))


def _shape(p, in_shapes: list) -> tuple[list, list]:
    data, ins = in_shapes[0], [None if s is None else tuple(s) for s in in_shapes]
    if data is None:
        return ins, [None] * 4
    if len(data) != 3:
        raise ShapeError("_backward_RNN_lstm_forward: data must be 3-d (T, N, C), got "
                         f"{fmt(data)}")
    T, N, C = data
    dirs, H = (2 if p.bidirectional else 1), p.state_size
    ins[2] = merge(ins[2], (dirs, N, H), "_backward_RNN_lstm_forward: state: ")
    ins[3] = merge(ins[3], (dirs, N, H), "_backward_RNN_lstm_forward: state_cell: ")
    if C:
        ins[1] = merge(ins[1], (rnn_param_size("lstm", H, 1, p.bidirectional, C),),
                       "_backward_RNN_lstm_forward: parameters: ")
    return ins, [(T, N, dirs * H), (dirs, N, H), (dirs, N, H), (N, dirs * T * 6 * H)]


def _type(p, in_types: list) -> tuple[list, list]:
    dt = next((t for t in in_types if t is not None), None)
    if dt is None:
        return list(in_types), [None] * 4
    for t in in_types:
        if t is not None and np.dtype(t) != np.dtype(dt):
            raise DTypeError("_backward_RNN_lstm_forward: every input must share data's dtype")
    return [dt] * 4, [dt] * 4


def _train_lstm_backward(p, dy: np.ndarray, dhy: np.ndarray, dcy: np.ndarray,
                         data: np.ndarray, params: np.ndarray, state: np.ndarray,
                         cell: np.ndarray, output: np.ndarray, reserve: np.ndarray) -> list:
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    H, C = p.state_size, data.shape[2]
    weights = unpack_params(layer_params(H, p.bidirectional), params.astype(acc, copy=False), C)
    grad = np.zeros(params.shape, acc)
    gviews = unpack_params(layer_params(H, p.bidirectional), grad, C)
    x = data.astype(acc, copy=False)
    dx, dh0, dc0 = 0.0, np.empty(state.shape, acc), np.empty(cell.shape, acc)
    T, dirs = data.shape[0], len(weights)
    for d, w in enumerate(weights):
        cols = slice(d * H, (d + 1) * H)
        got = rnn_grad.lstm_bptt(dy[:, :, cols].astype(acc), dhy[d].astype(acc),
                                 dcy[d].astype(acc), x, output[:, :, cols].astype(acc),
                                 state[d].astype(acc),
                                 _unpack_reserve(reserve, dirs, T, d).astype(acc), w, d == 1)
        part, dwx, dwh, db, dh0[d], dc0[d] = got
        dx = dx + part
        gviews[d][0][...] = dwx
        gviews[d][1][...] = dwh
        gviews[d][3][...] = db
        gviews[d][4][...] = db
    return [np.asarray(dx).astype(data.dtype), grad.astype(params.dtype),
            dh0.astype(state.dtype), dc0.astype(cell.dtype)]


def _grad(F, p, inputs: list, outputs: list, ograds: list) -> list:
    """One ``_backward_RNN_lstm`` kernel reading the reserve output."""
    g = F._internal._backward_RNN_lstm(*ograds[:3], *inputs, outputs[0], outputs[3],
                                                state_size=p.state_size,
                                                bidirectional=p.bidirectional)
    return [g[k] for k in range(4)]


_PARAMS = {"state_size": Int(), "bidirectional": Bool(False)}

register(OpDef(
    "_backward_RNN_lstm_forward", params=_PARAMS,
    inputs=("data", "parameters", "state", "state_cell"), compute=_train_lstm,
    infer_shape=_shape, infer_type=_type, num_outputs=4,
    output_names=("output", "state_output", "statecell_output", "reserve"),
    gradient=_grad,
    doc="gluonport's (no MXNet op; only in training graphs): one LSTM layer's training "
        "forward returning its step activations as a fourth output (MXNet's RNN keeps them "
        "as operator state)."))


def _bwd_shape(p, in_shapes: list) -> tuple[list, list]:
    ins, _ = _shape(p, list(in_shapes[3:7]))
    return list(in_shapes[:3]) + ins + list(in_shapes[7:]), ins


register(OpDef(
    "_backward_RNN_lstm", params=_PARAMS,
    inputs=("out_grad", "state_grad", "statecell_grad", "data", "parameters", "state",
            "state_cell", "output", "reserve"),
    compute=_train_lstm_backward, infer_shape=_bwd_shape,
    infer_type=lambda p, t: (list(t), list(t[3:7])), num_outputs=4,
    no_gradient="a backward kernel (gluonport's, as _backward_RNN_lstm_forward)",
    doc="_backward_RNN_lstm_forward's gradients of data, parameters, state and state_cell by "
        "back-propagation through time from the forward's reserve."))
lowering("_backward_RNN_lstm_forward")(rnn_grad_onnx.train_lstm_onnx)
lowering("_backward_RNN_lstm")(rnn_grad_onnx.backward_train_lstm_onnx)
