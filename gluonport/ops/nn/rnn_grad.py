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

__all__ = ["check_trainable", "trainable", "train_forward", "LSTM_ORDER", "lstm_rows",
           "lstm_forward", "lstm_factors", "lstm_bptt", "previous_steps"]


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


#: The LSTM kernels' gate order, as MXNet's gate blocks (MXNet: i, f, g, o): o, i, f, g -- the
#: three logistic gates side by side for the forward's activations, and the gates the backward
#: recursion scales by ``dc`` (i, f, g) side by side after the one it scales by ``dh`` (o).
LSTM_ORDER = (3, 0, 1, 2)


def lstm_rows(w: np.ndarray, H: int, axis: int = 0) -> np.ndarray:
    """``w``'s 4H rows along ``axis`` (MXNet's gate order i, f, g, o) in :data:`LSTM_ORDER`
    (a copy)."""
    block = [slice(None)] * w.ndim
    parts = []
    for k in LSTM_ORDER:
        block[axis] = slice(k * H, (k + 1) * H)
        parts.append(w[tuple(block)])
    return np.concatenate(parts, axis=axis)


def lstm_forward(x: np.ndarray, h0: np.ndarray, c0: np.ndarray, wx: np.ndarray, wh: np.ndarray,
                 bias: np.ndarray, reverse: bool) -> tuple:
    """One LSTM direction's forward recursion: ``(ys, gates, cells)``, ``ys`` (T, N, H) the
    hidden states; kept for :func:`lstm_factors`, ``gates`` (T, 4H, N), each step's activated
    gates in :data:`LSTM_ORDER` (o, i, f, g), and ``cells`` (T, H, N). ``x`` (T, N, C); ``h0``,
    ``c0`` (N, H); ``wx`` (4H, C), ``wh`` (4H, H), ``bias`` (4H) in MXNet's gate order.

    The steps work features x batch: each gate is then a contiguous block of the step's
    (4H, N) array, and every activation one whole-array ufunc call (numpy runs a (N, H) column
    slice of a (N, 4H) array one row at a time, 2-3x slower at N=32). The logistic is
    ``(tanh(z/2) + 1)/2`` with the halving folded into the logistic gates' weights and bias,
    so one ``tanh`` activates all four gates. One 256-unit layer, 35 steps of 32, two threads,
    against the (N, 4H) layout's kernels before, in one process taking turns (60 turns, idle
    machine): forward 19.0 -> 17.9 ms, backward 29.8 -> 27.3 ms (medians). Most of what
    remains is the per-step (4H, H) x (H, N) GEMM, which OpenBLAS splits over both threads:
    117-1343 us a step as the other core is idle or busy, 189-204 us on one thread."""
    T, N, C = x.shape
    H = wh.shape[1]
    half = np.ones((4 * H, 1), x.dtype)
    half[:3 * H] = 0.5
    wh_k = lstm_rows(wh, H) * half
    xw = (x.reshape(T * N, C) @ (lstm_rows(wx, H) * half).T).reshape(T, N, 4 * H)
    gates = np.empty((T, 4 * H, N), x.dtype)
    np.add(xw.transpose(0, 2, 1), lstm_rows(bias.reshape(-1, 1), H) * half, out=gates)
    cells = np.empty((T, H, N), x.dtype)
    hs = np.empty((T, H, N), x.dtype)
    h, c = np.ascontiguousarray(h0.T), c0.T
    hw, ig = np.empty((4 * H, N), x.dtype), np.empty((H, N), x.dtype)
    for t in (range(T - 1, -1, -1) if reverse else range(T)):  # in place in the kept arrays
        s = gates[t]
        np.matmul(wh_k, h, out=hw)
        s += hw
        np.tanh(s, out=s)
        logistic = s[:3 * H]
        logistic *= 0.5
        logistic += 0.5
        c_new, h = cells[t], hs[t]
        np.multiply(s[2 * H:3 * H], c, out=c_new)  # f c
        np.multiply(s[H:2 * H], s[3 * H:], out=ig)  # i g
        c_new += ig
        np.tanh(c_new, out=h)
        h *= s[:H]  # o tanh(c)
        c = c_new
    return np.ascontiguousarray(hs.transpose(0, 2, 1)), gates, cells


def lstm_factors(gates: np.ndarray, cells: np.ndarray, c0: np.ndarray, reverse: bool) -> tuple:
    """The factors of the backward recursion from :func:`lstm_forward`'s ``gates`` and
    ``cells`` (``c0`` (N, H) the cell before the first step): ``(b, a)``, ``b`` (T, 4H, N) in
    :data:`LSTM_ORDER`, ``a`` (T, H, N). With ``f`` the gates' forget block, one step of
    back-propagation is ``dc += dh a``, ``da = [dh, dc, dc, dc] b``, ``dc *= f``:
    ``b = [o(1-o) tanh(c), i(1-i) g, f(1-f) c_prev, i(1-g^2)]``, ``a = o(1 - tanh(c)^2)``."""
    H = cells.shape[1]
    b = np.empty_like(gates)
    logistic, bl = gates[:, :3 * H], b[:, :3 * H]
    np.subtract(1.0, logistic, out=bl)
    bl *= logistic
    tc = np.tanh(cells)
    b[:, :H] *= tc
    b[:, H:2 * H] *= gates[:, 3 * H:]
    bf, first = b[:, 2 * H:3 * H], (-1 if reverse else 0)
    if reverse:
        bf[:-1] *= cells[1:]
    else:
        bf[1:] *= cells[:-1]
    bf[first] *= c0.T
    bg = b[:, 3 * H:]
    np.multiply(gates[:, 3 * H:], gates[:, 3 * H:], out=bg)
    np.subtract(1.0, bg, out=bg)
    bg *= gates[:, H:2 * H]
    np.multiply(tc, tc, out=tc)  # a, in tanh(c)'s buffer
    np.subtract(1.0, tc, out=tc)
    tc *= gates[:, :H]
    return b, tc


def lstm_bptt(dy: np.ndarray, dh: np.ndarray, dc: np.ndarray, x: np.ndarray, ys: np.ndarray,
              h0: np.ndarray, b: np.ndarray, a: np.ndarray, f: np.ndarray, wx: np.ndarray,
              wh: np.ndarray, reverse: bool) -> tuple:
    """One LSTM direction's back-propagation through time from :func:`lstm_factors`' ``b``,
    ``a`` and the forget gates ``f`` (T, H, N): ``(dx, dW_i2h, dW_h2h, db, dh0, dc0)`` in
    MXNet's gate order (``db`` is both biases' gradient). ``dy``, ``x``, ``ys`` (the hidden
    states) are (T, N, .), ``dh``, ``dc``, ``h0`` (N, H), ``wx``, ``wh`` in MXNet's order.
    Per step remain a few (H, N) products and one GEMM; the weight and data gradients are one
    GEMM each over all steps, after one copy that puts the steps' gradients side by side and
    the gates back in MXNet's order."""
    T, N, H = ys.shape
    wh_t = np.ascontiguousarray(lstm_rows(wh, H).T)  # (H, 4H)
    dy_t = np.ascontiguousarray(dy.transpose(0, 2, 1))
    dh, dc = dh.T.copy(), dc.T.copy()  # (H, N), updated in place
    da = np.empty((T, 4 * H, N), dy.dtype)
    tmp = np.empty((H, N), dy.dtype)
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        dh += dy_t[t]
        np.multiply(dh, a[t], out=tmp)
        dc += tmp
        np.multiply(dh, b[t, :H], out=da[t, :H])
        np.multiply(b[t, H:].reshape(3, H, N), dc, out=da[t, H:].reshape(3, H, N))
        dc *= f[t]
        np.matmul(wh_t, da[t], out=dh)
    d_all = np.empty((4 * H, T, N), dy.dtype)  # (4H, T*N), MXNet's gate order
    for k, gate in enumerate(LSTM_ORDER):
        d_all[gate * H:(gate + 1) * H] = da[:, k * H:(k + 1) * H].transpose(1, 0, 2)
    d_all = d_all.reshape(4 * H, T * N)
    dwx = d_all @ x.reshape(T * N, -1)
    dwh = d_all @ previous_steps(ys, h0, reverse).reshape(T * N, H)
    dx = (d_all.T @ wx).reshape(T, N, -1)
    return (dx, dwx, dwh, d_all.sum(axis=1), np.ascontiguousarray(dh.T),
            np.ascontiguousarray(dc.T))


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
        self.x = x
        if self.mode == "lstm":  # keeping every step's gates and cell (lstm_forward)
            self.h0, self.c0, self.reverse = h, c, reverse
            self.ys, self.gates, self.cells = lstm_forward(x, h, c, self.wx, self.wh,
                                                           self.bias, reverse)
            last = 0 if reverse else T - 1
            return self.ys, self.ys[last], self.cells[last].T
        xw = (x.reshape(T * x.shape[1], -1) @ self.wx.T + self.bias).reshape(T, x.shape[1], -1)
        self.steps = list(range(T - 1, -1, -1) if reverse else range(T))
        self.h_prev, self.acts = {}, {}
        ys = np.empty(x.shape[:2] + (H,), x.dtype)
        for t in self.steps:
            self.h_prev[t] = h
            hw = h @ self.wh.T
            if self.mode == "gru":
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

    def backward(self, dy: np.ndarray, dh: np.ndarray, dc):
        """Gradients (dx, dWx, dWh, db_i2h, db_h2h, dh0, dc0) from the output and final-state
        gradients."""
        if self.mode == "lstm":
            b, a = lstm_factors(self.gates, self.cells, self.c0, self.reverse)
            H = self.H
            dx, dwx, dwh, db, dh0, dc0 = lstm_bptt(
                dy, dh, dc, self.x, self.ys, self.h0, b, a, self.gates[:, 2 * H:3 * H], self.wx,
                self.wh, self.reverse)
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
            if self.mode == "gru":
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
