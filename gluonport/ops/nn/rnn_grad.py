"""The fused RNN op's backward kernel, ``_backward_RNN`` (MXNet 1.9.1's name).

The gradient rule of ``RNN`` (in :mod:`.rnn`) calls it once with the head gradients of the
visible outputs and the forward inputs; it re-runs the forward recursion layer by layer keeping
each step's gate activations, then back-propagates through time, direction by direction and
layer by layer, into the gradients of ``data``, the flat ``parameters`` vector (in MXNet's
layout, :func:`.rnn.unpack_params`), ``state`` and, for LSTM, ``state_cell``.

Inputs: ``out_grad`` (T, N, dirs*H), ``state_grad`` and (LSTM) ``statecell_grad`` when the
forward has ``state_outputs``, then ``data, parameters, state[, state_cell]`` and the forward's
``output``. Outputs: one gradient per forward input (``sequence_length`` excepted).

Training-mode dropout between layers (``p > 0``, more than one layer) uses the masks the
forward pass drew: :func:`.rnn.dropout_masks` finds them by the forward's output array, as
MXNet's stateful RNN operator keeps its reserve space between forward and backward.

As MXNet 1.9.1's CPU kernels, refused: an LSTM with ``projection_size`` ("No training support
for LSTM with projection on CPU currently"); also ``use_sequence_length`` and the LSTM state
clip, which only MXNet's cuDNN kernels honour. The ONNX lowering (BPTT unrolled over a static
sequence length) is in :mod:`.rnn_grad_onnx`. ``_rnn_param_concat``'s gradient,
``_backward__rnn_param_concat`` (MXNet: ConcatGrad), is here too, with a lowering.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Enum, Float, Int, Optional
from ...errors import OpAttributeError
from ..lowering import LoweringContext, lowering
from ..registry import OpDef, register
from . import rnn_grad_onnx
from .rnn import GATES, keep_for_backward, kept_for_backward, unpack_params

__all__ = ["check_trainable", "trainable", "train_forward", "lstm_factors", "lstm_bptt",
           "previous_steps"]


def check_trainable(p) -> None:
    """Refuse what MXNet 1.9.1's CPU RNN cannot train (before any backward work)."""
    if p.projection_size is not None:
        raise OpAttributeError("RNN: No training support for LSTM with projection on CPU "
                               "currently (MXNet 1.9.1 refuses the backward pass of "
                               "projection_size)")
    if p.use_sequence_length:
        raise OpAttributeError("RNN: use_sequence_length has no backward pass (MXNet 1.9.1's "
                               "CPU RNN refuses it); mask the sequences instead")
    if p.lstm_state_clip_min is not None or p.lstm_state_clip_max is not None:
        raise OpAttributeError("RNN: lstm_state_clip_min/max have no backward pass here (only "
                               "MXNet's cuDNN kernels honour the clip)")


def trainable(p) -> bool:
    """Whether the backward pass supports these options (see :func:`check_trainable`)."""
    return (p.projection_size is None and not p.use_sequence_length
            and p.lstm_state_clip_min is None and p.lstm_state_clip_max is None)


def _sig(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def previous_steps(seq: np.ndarray, first: np.ndarray, reverse: bool) -> np.ndarray:
    """Each step's previous value along the direction: ``first`` then ``seq``'s steps."""
    out = np.empty_like(seq)
    if reverse:
        out[:-1], out[-1] = seq[1:], first
    else:
        out[1:], out[0] = seq[:-1], first
    return out


def lstm_factors(i: np.ndarray, f: np.ndarray, g: np.ndarray, o: np.ndarray, c: np.ndarray,
                 c_prev: np.ndarray) -> np.ndarray:
    """The reserve (..., 6H) from an LSTM's step activations (gates ``i, f, g, o``, new and
    previous cells): ``[b (4H), a (H), f (H)]``, the factors of the backward recursion
    ``dc += dh * a``, ``da = [dc, dc, dc, dh] * b``, ``dc *= f``."""
    H = i.shape[-1]
    res = np.empty(i.shape[:-1] + (6 * H,), i.dtype)
    tc = np.tanh(c)
    # in place in the reserve's blocks: no temporaries the size of the sequence
    blocks = [res[..., k * H:(k + 1) * H] for k in range(6)]
    for out, gate, partner in ((blocks[0], i, g), (blocks[1], f, c_prev), (blocks[3], o, tc)):
        np.subtract(1.0, gate, out=out)
        out *= gate
        out *= partner
    for out, act, partner in ((blocks[2], g, i), (blocks[4], tc, o)):
        np.multiply(act, act, out=out)
        np.subtract(1.0, out, out=out)
        out *= partner
    blocks[5][...] = f
    return res


def lstm_bptt(dy: np.ndarray, dh: np.ndarray, dc: np.ndarray, x: np.ndarray,
              ys: np.ndarray, h0: np.ndarray, res: np.ndarray, w: list, reverse: bool) -> tuple:
    """One LSTM direction's back-propagation through time from its reserve (``res`` (T, N,
    6H), :func:`lstm_factors`; ``ys`` its hidden states): ``(dx, dW_i2h, dW_h2h, db, dh0,
    dc0)`` (``db`` is both biases' gradient). Per step remain a few (N, H) products and one
    GEMM; the weight gradients are one GEMM each over all steps."""
    T, N, H = ys.shape
    wx, wh = w[0], w[1]
    b = res[..., :4 * H].reshape(T, N, 4, H)
    a, f = res[..., 4 * H:5 * H], res[..., 5 * H:]
    da = np.empty((T, N, 4, H), x.dtype)
    dh, dc = dh.copy(), dc.copy()
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        dh += dy[t]
        dc += dh * a[t]
        np.multiply(dc[:, None, :], b[t, :, :3], out=da[t, :, :3])
        np.multiply(dh, b[t, :, 3], out=da[t, :, 3])
        dc *= f[t]
        dh = da[t].reshape(N, 4 * H) @ wh
    flat = da.reshape(T * N, 4 * H)
    dwx = flat.T @ x.reshape(T * N, -1)
    dwh = flat.T @ previous_steps(ys, h0, reverse).reshape(T * N, H)
    dx = (flat @ wx).reshape(T, N, -1)
    return dx, dwx, dwh, flat.sum(axis=0), dh, dc


class _Direction:
    """One layer-direction: the forward recursion keeping what backward needs, and BPTT."""

    def __init__(self, mode: str, hidden: int, w: list):
        self.mode, self.H = mode, hidden
        self.wx, self.wh, _, bx, bh = w
        self.bias = bx + bh
        if mode == "gru":  # b_hn stays inside r * (...)
            self.bias = bx.copy()
            self.bias[:2 * hidden] += bh[:2 * hidden]
            self.bhn = bh[2 * hidden:]

    def forward(self, x: np.ndarray, h: np.ndarray, c, reverse: bool):
        T = x.shape[0]
        H = self.H
        xw = (x.reshape(T * x.shape[1], -1) @ self.wx.T + self.bias).reshape(T, x.shape[1], -1)
        self.steps = list(range(T - 1, -1, -1) if reverse else range(T))
        self.x, self.h_prev, self.c_prev, self.acts = x, {}, {}, {}
        ys = np.empty(x.shape[:2] + (H,), x.dtype)
        if self.mode == "lstm":
            return self._lstm_forward(xw, h, c, reverse)
        for t in self.steps:
            self.h_prev[t], self.c_prev[t] = h, c
            hw = h @ self.wh.T
            if self.mode == "lstm":
                g = xw[t] + hw
                i, f = _sig(g[:, :H]), _sig(g[:, H:2 * H])
                gg, o = np.tanh(g[:, 2 * H:3 * H]), _sig(g[:, 3 * H:])
                c = f * c + i * gg
                tc = np.tanh(c)
                h = o * tc
                self.acts[t] = (i, f, gg, o, tc)
            elif self.mode == "gru":
                r = _sig(xw[t, :, :H] + hw[:, :H])
                z = _sig(xw[t, :, H:2 * H] + hw[:, H:2 * H])
                hn = hw[:, 2 * H:] + self.bhn
                n = np.tanh(xw[t, :, 2 * H:] + r * hn)
                h = (1.0 - z) * n + z * h
                self.acts[t] = (r, z, n, hn)
            else:
                pre = xw[t] + hw
                h = np.maximum(pre, 0) if self.mode == "rnn_relu" else np.tanh(pre)
                self.acts[t] = (h,)
            ys[t] = h
        return ys, h, c

    def _lstm_forward(self, xw: np.ndarray, h: np.ndarray, c: np.ndarray, reverse: bool):
        """The LSTM recursion keeping every step's gates (i, f, g, o) and cell in two arrays
        (the backward pass turns them into :func:`.rnn_train.lstm_factors` at once)."""
        T, N, H = xw.shape[0], xw.shape[1], self.H
        self.h0, self.c0, self.reverse = h, c, reverse
        self.gates = np.empty((T, N, 4 * H), xw.dtype)
        self.cells = np.empty((T, N, H), xw.dtype)
        self.ys = np.empty((T, N, H), xw.dtype)
        wh_t = np.ascontiguousarray(self.wh.T)  # BLAS: ~30% faster per step than the view
        for t in self.steps:  # in place in the kept arrays
            s, c_new = self.gates[t], self.cells[t]
            np.matmul(h, wh_t, out=s)
            s += xw[t]
            np.tanh(s[:, 2 * H:3 * H], out=s[:, 2 * H:3 * H])
            for part in (s[:, :2 * H], s[:, 3 * H:]):  # the logistic, overflow-free
                part *= 0.5
                np.tanh(part, out=part)
                part += 1.0
                part *= 0.5
            np.multiply(s[:, H:2 * H], c, out=c_new)
            c_new += s[:, :H] * s[:, 2 * H:3 * H]
            c, h = c_new, self.ys[t]
            np.tanh(c, out=h)
            h *= s[:, 3 * H:]
        return self.ys, h, c

    def backward(self, dy: np.ndarray, dh: np.ndarray, dc):
        """Gradients (dx, dWx, dWh, db_i2h, db_h2h, dh0, dc0) from the output and final-state
        gradients."""
        if self.mode == "lstm":
            H, gates = self.H, self.gates
            res = lstm_factors(
                gates[..., :H], gates[..., H:2 * H], gates[..., 2 * H:3 * H], gates[..., 3 * H:],
                self.cells, previous_steps(self.cells, self.c0, self.reverse))
            dx, dwx, dwh, db, dh0, dc0 = lstm_bptt(
                dy, dh, dc, self.x, self.ys, self.h0, res, [self.wx, self.wh], self.reverse)
            return dx, dwx, dwh, db, db, dh0, dc0
        H = self.H
        T, N = dy.shape[:2]
        gates = GATES[self.mode] * H
        dxw = np.zeros((T, N, gates), dy.dtype)
        dhws = np.zeros((T, N, gates), dy.dtype)
        hps = np.zeros((T, N, self.wh.shape[1]), dy.dtype)
        for t in reversed(self.steps):
            dh = dh + dy[t]
            hp = self.h_prev[t]
            if self.mode == "lstm":
                i, f, gg, o, tc = self.acts[t]
                dc = dc + dh * o * (1.0 - tc * tc)
                da = np.concatenate([dc * gg * i * (1.0 - i), dc * self.c_prev[t] * f * (1.0 - f),
                                     dc * i * (1.0 - gg * gg), dh * tc * o * (1.0 - o)], axis=1)
                dc = dc * f
                dhw = da
                dh_keep = 0.0
            elif self.mode == "gru":
                r, z, n, hn = self.acts[t]
                dn = dh * (1.0 - z) * (1.0 - n * n)
                dr = dn * hn * r * (1.0 - r)
                dz = dh * (hp - n) * z * (1.0 - z)
                da = np.concatenate([dr, dz, dn], axis=1)
                dhw = np.concatenate([dr, dz, dn * r], axis=1)
                dh_keep = dh * z
            else:
                (h,) = self.acts[t]
                da = dh * ((h > 0) if self.mode == "rnn_relu" else (1.0 - h * h))
                dhw = da
                dh_keep = 0.0
            dxw[t] = da
            dhws[t] = dhw
            hps[t] = hp
            dh = dhw @ self.wh + dh_keep
        flat_dhw = dhws.reshape(T * N, gates)  # one GEMM for the recurrent weights
        dwh = flat_dhw.T @ hps.reshape(T * N, -1)
        dbh = flat_dhw.sum(axis=0)
        flat_dxw = dxw.reshape(T * N, gates)
        dwx = flat_dxw.T @ self.x.reshape(T * N, -1)
        dx = (flat_dxw @ self.wx).reshape(T, N, -1)
        return dx, dwx, dwh, flat_dxw.sum(axis=0), dbh, dh, dc


def _rnn_backward(train: bool):
    def kernel(p, *arrays: np.ndarray) -> list:
        return _bptt(p, train, arrays)

    return kernel


def _run_layers(p, data: np.ndarray, params: np.ndarray, state: np.ndarray, rest: tuple,
                drop=None) -> tuple:
    """The forward recursion keeping each direction's activations: ``(output, hs, cs, layers,
    masks)``; ``drop(x)`` (training dropout) applies between layers."""
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    cell0 = rest[0].astype(acc, copy=False) if p.mode == "lstm" else None
    weights = unpack_params(p, params.astype(acc, copy=False), data.shape[2])
    dirs = 2 if p.bidirectional else 1
    x, layers, masks, hs, cs = data.astype(acc, copy=False), [], [], [], []
    for layer in range(p.num_layers):
        cells, outs = [], []
        for d in range(dirs):
            k = layer * dirs + d
            cell = _Direction(p.mode, p.state_size, weights[k])
            c0 = None if cell0 is None else cell0[k]
            y, h, c = cell.forward(x, state[k].astype(acc, copy=False), c0, d == 1)
            cells.append(cell)
            outs.append(y)
            hs.append(h)
            cs.append(c)
        layers.append(cells)
        x = np.concatenate(outs, axis=2) if dirs == 2 else outs[0]
        if drop is not None and layer < p.num_layers - 1:
            mask = drop(x)
            masks.append(mask)
            x = x * mask
    return x, hs, cs, layers, masks


def train_forward(p, data: np.ndarray, params: np.ndarray, state: np.ndarray,
                  *rest: np.ndarray) -> list:
    """RNN's training-mode forward: dropout ``p`` between layers, and the activations and
    masks kept (by the output array) for :func:`_bptt`, which then skips re-running it."""
    drop = None
    if p.p > 0 and p.num_layers > 1:
        from ..._core.rng import generator

        rng, keep = generator(), 1.0 - p.p

        def drop(x: np.ndarray) -> np.ndarray:
            return ((rng.random(x.shape) < keep) / keep).astype(x.dtype)

    x, hs, cs, layers, masks = _run_layers(p, data, params, state, rest, drop)
    result = [x.astype(data.dtype)]
    if p.state_outputs:
        result.append(np.stack(hs).astype(data.dtype))
        if p.mode == "lstm":
            result.append(np.stack(cs).astype(data.dtype))
    keep_for_backward(result[0], {"masks": masks, "layers": layers})
    return result


def _bptt(p, train: bool, arrays: tuple) -> list:
    check_trainable(p)
    lstm = p.mode == "lstm"
    n_grads = (1 + (2 if lstm else 1)) if p.state_outputs else 1
    ograds, (data, params, state, *rest) = arrays[:n_grads], arrays[n_grads:-1]
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    kept = kept_for_backward(arrays[-1]) if train else None
    if kept is None:
        if train and p.p > 0 and p.num_layers > 1:
            raise OpAttributeError("RNN: the dropout masks of this training-mode forward call "
                                   "are gone (its output array was copied); run backward on "
                                   "the recorded output")
        _, _, _, layers, masks = _run_layers(p, data, params, state, tuple(rest))
    else:
        layers, masks = kept["layers"], kept["masks"]
    flat_grad = np.zeros(params.shape, acc)
    grads = unpack_params(p, flat_grad, data.shape[2])
    dirs = 2 if p.bidirectional else 1
    dy = ograds[0].astype(acc, copy=False)
    dstate = (ograds[1].astype(acc, copy=False) if p.state_outputs
              else np.zeros(state.shape, acc))
    dcell = (ograds[2].astype(acc, copy=False) if p.state_outputs and lstm
             else (np.zeros(rest[0].shape, acc) if lstm else None))
    d_state0 = np.zeros(state.shape, acc)
    d_cell0 = np.zeros(rest[0].shape, acc) if lstm else None
    H = p.state_size
    for layer in range(p.num_layers - 1, -1, -1):
        if masks and layer < p.num_layers - 1:
            dy = dy * masks[layer]
        dx = 0.0
        for d in range(dirs):
            k = layer * dirs + d
            got = layers[layer][d].backward(dy[:, :, d * H:(d + 1) * H], dstate[k],
                                            dcell[k] if lstm else None)
            part, dwx, dwh, dbx, dbh, dh0, dc0 = got
            dx = dx + part
            g = grads[k]
            g[0][...] += dwx
            g[1][...] += dwh
            g[3][...] += dbx
            g[4][...] += dbh
            d_state0[k] = dh0
            if lstm:
                d_cell0[k] = dc0
        dy = dx
    out = [dy.astype(data.dtype, copy=False), flat_grad.astype(params.dtype, copy=False),
           d_state0.astype(state.dtype, copy=False)]
    if lstm:
        out.append(d_cell0.astype(rest[0].dtype, copy=False))
    return out


def _grad_inputs(p) -> tuple[str, ...]:
    heads = ("out_grad",)
    if p.state_outputs:
        heads += ("state_grad",) + (("statecell_grad",) if p.mode == "lstm" else ())
    return heads + ("data", "parameters", "state") + (
        ("state_cell",) if p.mode == "lstm" else ()) + ("output",)


def _grad_shape(p, in_shapes: list) -> tuple[list, list]:
    n = len(_grad_inputs(p)) - (5 if p.mode == "lstm" else 4)
    return list(in_shapes), [None if s is None else tuple(s) for s in in_shapes[n:-1]]


def _grad_type(p, in_types: list) -> tuple[list, list]:
    n = len(_grad_inputs(p)) - (5 if p.mode == "lstm" else 4)
    return list(in_types), list(in_types[n:-1])


register(OpDef(
    "_backward_RNN",
    params={"state_size": Int(), "num_layers": Int(), "bidirectional": Bool(False),
            "mode": Enum(("rnn_relu", "rnn_tanh", "lstm", "gru")), "p": Float(0.0),
            "state_outputs": Bool(False), "projection_size": Optional(Int()),
            "lstm_state_clip_min": Optional(Float()), "lstm_state_clip_max": Optional(Float()),
            "lstm_state_clip_nan": Bool(False), "use_sequence_length": Bool(False)},
    inputs=_grad_inputs, compute=_rnn_backward(False), train_compute=_rnn_backward(True),
    infer_shape=_grad_shape, infer_type=_grad_type,
    num_outputs=lambda p: 4 if p.mode == "lstm" else 3,
    no_gradient="a backward kernel; MXNet 1.9.1 registers no gradient for it",
    doc="Gradients of the fused RNN op's data, parameters, state (and state_cell) by "
        "back-propagation through time."))


lowering("_backward_RNN")(rnn_grad_onnx.backward_rnn_onnx)


# --- _rnn_param_concat ---------------------------------------------------------------------------
def _concat_backward(p, og: np.ndarray, *inputs: np.ndarray) -> list:
    """The head gradient cut back into the inputs' sizes along ``dim`` (MXNet's ConcatGrad)."""
    axis = p.dim % og.ndim
    bounds = np.cumsum([x.shape[axis] for x in inputs])[:-1]
    return [part.copy() for part in np.split(og, bounds, axis=axis)]


register(OpDef(
    "_backward__rnn_param_concat", params={"num_args": Int(), "dim": Int(1)},
    variadic="num_args", compute=_concat_backward,
    infer_shape=lambda p, s: (list(s), [None if x is None else tuple(x) for x in s[1:]]),
    infer_type=lambda p, t: (list(t), [t[0]] * (len(t) - 1)),
    num_outputs=lambda p: p.num_args - 1,
    no_gradient="a backward kernel; MXNet 1.9.1 registers no gradient for it",
    doc="_rnn_param_concat's gradient: the head gradient (input 0) split back into the sizes "
        "of the concatenated inputs (inputs 1..)."))


def _concat_backward_onnx(ctx: LoweringContext) -> None:
    """One ``Slice`` of the head gradient per input, by the inputs' static sizes."""
    rank = len(ctx.in_shapes[0])
    axis = ctx.params.dim % rank
    start = 0
    for k, shape in enumerate(ctx.in_shapes[1:]):
        size = int(shape[axis])
        if ctx.wants(k):
            ctx.make("Slice", [ctx.inputs[0], ctx.ints([start], "s"), ctx.ints([start + size], "e"),
                               ctx.ints([axis], "a")], outputs=[ctx.outputs[k]])
        start += size


lowering("_backward__rnn_param_concat")(_concat_backward_onnx)
