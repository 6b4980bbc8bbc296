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

Inputs: ``data`` (T, N, C); the pieces of a one-layer LSTM's flat parameter vector in MXNet's
order (:func:`.rnn.unpack_params`): ``i2h_weight`` (4H, C), ``h2h_weight`` (4H, H) per
direction, then ``i2h_bias``, ``h2h_bias`` (4H) per direction (the reverse direction's named
``r_...``), Gluon's parameters as its RNN layers flatten them into ``_rnn_param_concat`` (a
piece may have any shape of its size: it is read in that layout); ``state`` and
``state_cell`` (dirs, N, H). Taking the parameters, not the joined vector, spares a training
step joining the vector and cutting it up again, and the same for its gradient.

Outputs: ``output`` (T, N, dirs*H), the final ``state`` and ``state_cell`` (dirs, N, H), and
``reserve`` (dirs*T*6H, N): for each direction and step (in time order) the factors of the backward
recursion ``[b (4H), a (H), f (H)]`` (:func:`.rnn_grad.lstm_factors`, ``b``'s gate blocks
in MXNet's order i, f, g, o here), each (features, N). The first three equal
``RNN(mode='lstm', num_layers=1, state_outputs=True)``'s.

The ONNX lowerings (here, beside the kernels) unroll the time loop for a static ``T`` and work
in the transposed layout, features x batch: a step's GEMMs are then ``W (4H, H) x h (H, N)``
forward and ``W^T (H, 4H) x da (4H, N)`` backward, whose large operand onnxruntime's GEMM
streams as it is instead of re-packing it every step (as it must a right-hand operand), and
the weight gradients ``dA (4H, T*N) x [x | h_prev]`` need no transposed left operand. The
reserve is in that layout, so the forward writes it with one ``Concat`` of the steps' factors
and the backward reads it back with one ``Split``.
"""

from __future__ import annotations

import numpy as np

from ..._core.attr_fields import Bool, Int
from ...errors import DTypeError, ShapeError
from ..infer import fmt, merge
from ..lowering import LoweringContext, deliver, lowering
from ..registry import OpDef, register
from . import rnn_grad  # a module: it may still be initialising
from .rnn_grad_onnx import Graph, shifted, stack_rows, state_row

__all__: list[str] = []


def _forward_dir(x: np.ndarray, h: np.ndarray, c: np.ndarray, w: list, reverse: bool):
    """One direction: ``(ys, h, c, reserve)``, the reserve (T, 6H, N) with ``b``'s blocks in
    MXNet's gate order (:func:`.rnn_grad.lstm_factors` makes them in its own)."""
    wx, wh, _, bx, bh = w
    ys, gates, cells = rnn_grad.lstm_forward(x, h, c, wx, wh, bx + bh, reverse)
    b, a = rnn_grad.lstm_factors(gates, cells, c, reverse)
    T, H4, N = gates.shape
    H = H4 // 4
    res = np.empty((T, 6 * H, N), x.dtype)
    for k, gate in enumerate(rnn_grad.LSTM_ORDER):
        res[:, gate * H:(gate + 1) * H] = b[:, k * H:(k + 1) * H]
    res[:, 4 * H:5 * H] = a
    res[:, 5 * H:] = gates[:, 2 * H:3 * H]  # f
    last = 0 if reverse else T - 1
    return ys, ys[last], cells[last].T, res


def _dirs(p) -> int:
    return 2 if p.bidirectional else 1


def _input_names(p) -> tuple[str, ...]:
    sides = ("", "r_")[:_dirs(p)]
    return ("data", *[f"{d}{g}_weight" for d in sides for g in ("i2h", "h2h")],
            *[f"{d}{g}_bias" for d in sides for g in ("i2h", "h2h")], "state", "state_cell")


def _piece_shapes(p, C: int) -> list[tuple[int, ...]]:
    H4 = 4 * p.state_size
    return [(H4, C), (H4, p.state_size)] * _dirs(p) + [(H4,), (H4,)] * _dirs(p)


def _directions(p, pieces: list, C: int) -> list[list]:
    """Per direction ``[W_i2h (4H, C), W_h2h (4H, H), None, b_i2h, b_h2h]`` (the layout of
    :func:`.rnn.unpack_params`) from the pieces, whatever their shapes (views where they are
    contiguous)."""
    dirs, H = _dirs(p), p.state_size
    return [[pieces[2 * d].reshape(4 * H, C), pieces[2 * d + 1].reshape(4 * H, H), None,
             pieces[2 * dirs + 2 * d].reshape(-1), pieces[2 * dirs + 2 * d + 1].reshape(-1)]
            for d in range(dirs)]


def _train_lstm(p, data: np.ndarray, *rest: np.ndarray) -> list:
    _shape(p, [x.shape for x in (data, *rest)])
    *pieces, state, cell = rest
    if data.dtype.kind != "f":
        raise DTypeError("_backward_RNN_lstm_forward: data must be floating point, got "
                         f"{data.dtype.name}")
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    x = data.astype(acc, copy=False)
    weights = _directions(p, [w.astype(acc, copy=False) for w in pieces], data.shape[2])
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
    """The reserve (dirs*T*6H, N) from each direction's (T, 6H, N) factors."""
    return np.stack(res).astype(dtype, copy=False).reshape(-1, res[0].shape[-1])


def _shape(p, in_shapes: list) -> tuple[list, list]:
    data, ins = in_shapes[0], [None if s is None else tuple(s) for s in in_shapes]
    if data is None:
        return ins, [None] * 4
    if len(data) != 3:
        raise ShapeError("_backward_RNN_lstm_forward: data must be 3-d (T, N, C), got "
                         f"{fmt(data)}")
    T, N, C = data
    dirs, H = _dirs(p), p.state_size
    names = _input_names(p)
    for k in (-2, -1):
        ins[k] = merge(ins[k], (dirs, N, H), f"_backward_RNN_lstm_forward: {names[k]}: ")
    if C:
        for k, want in enumerate(_piece_shapes(p, C), 1):
            if ins[k] is None:
                ins[k] = want
            elif all(ins[k]) and int(np.prod(ins[k])) != int(np.prod(want)):
                raise ShapeError(f"_backward_RNN_lstm_forward: {names[k]}: expected "
                                 f"{fmt(want)} ({int(np.prod(want))} values), got "
                                 f"{fmt(ins[k])}")
    return ins, [(T, N, dirs * H), (dirs, N, H), (dirs, N, H), (dirs * T * 6 * H, N)]


def _type(p, in_types: list) -> tuple[list, list]:
    dt = next((t for t in in_types if t is not None), None)
    if dt is None:
        return list(in_types), [None] * 4
    for t in in_types:
        if t is not None and np.dtype(t) != np.dtype(dt):
            raise DTypeError("_backward_RNN_lstm_forward: every input must share data's dtype")
    return [dt] * 4, [dt] * 4


def _train_lstm_backward(p, dy: np.ndarray, dhy: np.ndarray, dcy: np.ndarray,
                         data: np.ndarray, *rest: np.ndarray) -> list:
    *pieces, state, cell, output, reserve = rest
    acc = np.float32 if data.dtype == np.float16 else data.dtype
    H, C = p.state_size, data.shape[2]
    weights = _directions(p, [w.astype(acc, copy=False) for w in pieces], C)
    grads = [np.empty(w.shape, w.dtype) for w in pieces]
    gviews = _directions(p, grads, C)
    x = data.astype(acc, copy=False)
    dx, dh0, dc0 = 0.0, np.empty(state.shape, acc), np.empty(cell.shape, acc)
    T, dirs = data.shape[0], len(weights)
    for d, w in enumerate(weights):
        cols = slice(d * H, (d + 1) * H)
        res = reserve.reshape(dirs, T, 6 * H, -1)[d].astype(acc, copy=False)
        b = rnn_grad.lstm_rows(res[:, :4 * H], H, axis=1)
        got = rnn_grad.lstm_bptt(dy[:, :, cols].astype(acc), dhy[d].astype(acc),
                                 dcy[d].astype(acc), x, output[:, :, cols].astype(acc),
                                 state[d].astype(acc), b, res[:, 4 * H:5 * H], res[:, 5 * H:],
                                 w[0], w[1], d == 1)
        part, dwx, dwh, db, dh0[d], dc0[d] = got
        dx = dx + part
        gviews[d][0][...] = dwx
        gviews[d][1][...] = dwh
        gviews[d][3][...] = db
        gviews[d][4][...] = db
    return [np.asarray(dx).astype(data.dtype), *grads, dh0.astype(state.dtype),
            dc0.astype(cell.dtype)]


def _grad(F, p, inputs: list, outputs: list, ograds: list) -> list:
    """One ``_backward_RNN_lstm`` kernel reading the reserve output."""
    g = F._internal._backward_RNN_lstm(*ograds[:3], *inputs, outputs[0], outputs[3],
                                                state_size=p.state_size,
                                                bidirectional=p.bidirectional)
    return [g[k] for k in range(len(inputs))]


_PARAMS = {"state_size": Int(), "bidirectional": Bool(False)}

register(OpDef(
    "_backward_RNN_lstm_forward", params=_PARAMS,
    inputs=_input_names, compute=_train_lstm,
    infer_shape=_shape, infer_type=_type, num_outputs=4,
    output_names=("output", "state_output", "statecell_output", "reserve"),
    gradient=_grad,
    doc="gluonport's (no MXNet op; only in training graphs): one LSTM layer's training "
        "forward returning its step activations as a fourth output (MXNet's RNN keeps them "
        "as operator state)."))


def _bwd_shape(p, in_shapes: list) -> tuple[list, list]:
    ins, _ = _shape(p, list(in_shapes[3:-2]))
    return list(in_shapes[:3]) + ins + list(in_shapes[-2:]), ins


register(OpDef(
    "_backward_RNN_lstm", params=_PARAMS,
    inputs=lambda p: ("out_grad", "state_grad", "statecell_grad", *_input_names(p), "output",
                      "reserve"),
    compute=_train_lstm_backward, infer_shape=_bwd_shape,
    infer_type=lambda p, t: (list(t), list(t[3:-2])),
    num_outputs=lambda p: 3 + 4 * _dirs(p),
    no_gradient="a backward kernel (gluonport's, as _backward_RNN_lstm_forward)",
    doc="_backward_RNN_lstm_forward's gradients of its inputs (data, the parameter pieces, "
        "state and state_cell) by back-propagation through time from the forward's reserve."))


# --- ONNX lowerings: the time loop unrolled, features x batch (see the module docstring) ------

def _unrolled(ctx: LoweringContext, i_data: int) -> tuple[Graph, int, int, int, int]:
    """``(graph emitters, T, C, H, dirs)``; the sequence length must be static."""
    T, _, C = ctx.in_shapes[i_data]
    if not T or ctx.is_dynamic(i_data, 0):
        raise ctx.fail(f"{ctx.node.op} is unrolled over time: the sequence length must be "
                       "static (export with a fixed sequence length)")
    dtype = np.dtype(ctx.in_dtypes[i_data])
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    return Graph(ctx, work, int(T)), int(T), int(C), ctx.params.state_size, _dirs(ctx.params)


def _input(g: Graph, i: int) -> str:
    return g.cast(g.ctx.inputs[i], g.work, g.ctx.in_dtypes[i])


def _reshaped(g: Graph, x: str, have: tuple | None, want: tuple) -> str:
    """``x`` (of shape ``have``) as ``want`` (a Reshape only where they differ)."""
    if have is not None and tuple(have) == tuple(want):
        return x
    return g.op("Reshape", x, g.ctx.ints(list(want), "pshape"))


def _onnx_weights(g: Graph, first: int, C: int) -> list[list[str]]:
    """Per direction ``[W_i2h (4H, C), W_h2h (4H, H), b_i2h, b_h2h]`` from the pieces at
    inputs ``first...``."""
    ctx = g.ctx
    pieces = [_reshaped(g, _input(g, first + k), ctx.in_shapes[first + k], want)
              for k, want in enumerate(_piece_shapes(ctx.params, C))]
    dirs = _dirs(ctx.params)
    return [[pieces[2 * d], pieces[2 * d + 1], pieces[2 * dirs + 2 * d],
             pieces[2 * dirs + 2 * d + 1]] for d in range(dirs)]


def _transposed(g: Graph, x: str) -> str:
    return g.op("Transpose", x, perm=[1, 0])


@lowering("_backward_RNN_lstm_forward")
def _train_lstm_onnx(ctx: LoweringContext) -> None:
    """Per step one ``[W_h2h | W_i2h] (4H, H+C) x [h; x_t] (H+C, N) + b`` Gemm, the gates and
    the cell, and the factors ``[b, a, f]`` of the backward recursion
    (:func:`.rnn_grad.lstm_factors`); each output is written by the node that makes it (no
    Reshape or Identity copies into the outputs). One Gemm a step of both weights, rather
    than the input's product for all steps at once and then cut into steps, measured 10.4 ->
    9.4 ms for one layer of 35 steps, N=32, C=H=256 (onnxruntime, one thread)."""
    g, T, C, H, dirs = _unrolled(ctx, 0)
    x_t = g.steps(g.op("Reshape", g.op("Transpose", _input(g, 0), perm=[0, 2, 1]),
                       ctx.ints([T * C, -1], "xtshape")))  # per step (C, N)
    ys, hs, cs, factors = [], [], [], []
    # tanh(x) = 2 sigmoid(2x) - 1: with the g rows of the weights doubled one Sigmoid gives
    # every gate, and tanh's derivative 1 - g^2 = 4 sigmoid'(2x) joins the others' in ds
    twice = np.ones((4 * H, 1), g.work)
    twice[2 * H:3 * H] = 2.0
    col = ctx.const(twice, "twice")
    first = ctx.ints([0], "axes")
    i_state = 1 + 4 * dirs
    for d, (wx, wh, bx, bh) in enumerate(_onnx_weights(g, 1, C)):
        bias = g.op("Mul", g.op("Unsqueeze", g.op("Add", bx, bh), ctx.ints([1], "axes")), col)
        w = g.op("Mul", g.op("Concat", wh, wx, axis=1), col)  # (4H, H+C)
        h = _transposed(g, state_row(g, _input(g, i_state), d))
        c = _transposed(g, state_row(g, _input(g, i_state + 1), d))
        y, steps = [None] * T, [None] * T
        for t in (range(T - 1, -1, -1) if d == 1 else range(T)):
            s = g.op("Sigmoid", g.op("Gemm", w, g.op("Concat", h, x_t[t], axis=0), bias))
            attrs = {"num_outputs": 4} if ctx.opset >= 18 else {}
            i, f, sg, o = ctx.make("Split", [s], outputs=4, axis=0, **attrs)
            gg = g.op("Sub", g.op("Mul", sg, g.scalar(2.0)), g.scalar(1.0))
            c_prev, c = c, g.op("Add", g.op("Mul", f, c), g.op("Mul", i, gg))
            tc = g.op("Tanh", c)
            h = g.op("Mul", o, tc)
            ds = g.op("Mul", s, g.one_minus(s))  # the g block's 1 - gg^2 is 4 ds: in i4
            i4 = g.op("Mul", i, g.scalar(4.0))
            b = g.op("Mul", g.op("Concat", gg, c_prev, i4, tc, axis=0), ds)
            y[t] = g.op("Unsqueeze", h, first)  # (1, H, N)
            steps[t] = [b, g.op("Sub", o, g.op("Mul", h, tc)), f]
        ys += y
        hs.append(h)
        cs.append(c)
        factors += [x for step in steps for x in step]
    if ctx.wants(0):  # (T, dirs*H, N) -> (T, N, dirs*H)
        y = [g.op("Concat", *ys[d * T:(d + 1) * T], axis=0) if T > 1 else ys[d * T]
             for d in range(dirs)]
        y = y[0] if dirs == 1 else g.op("Concat", *y, axis=1)
        deliver(ctx, g.op("Transpose", y, perm=[0, 2, 1]), 0, g.work)
    for k, rows in ((1, hs), (2, cs)):
        if ctx.wants(k):
            deliver(ctx, stack_rows(g, [_transposed(g, r) for r in rows], ""), k, g.work)
    if ctx.wants(3):  # (dirs*T*6H, N)
        deliver(ctx, g.op("Concat", *factors, axis=0), 3, g.work)


@lowering("_backward_RNN_lstm")
def _backward_train_lstm_onnx(ctx: LoweringContext) -> None:
    """Back-propagation through time from the reserve: per step a few (H, N) products and
    one ``W_h2h^T (H, 4H) x da (4H, N)`` MatMul; the weight gradients one Gemm each of
    ``dA (4H, T*N)`` (the steps' ``da`` side by side) with the inputs and previous states,
    the data gradient one Gemm ``dA^T W_i2h``. Outputs as the inputs after the head
    gradients: data, the parameter pieces, state, state_cell."""
    g, T, C, H, dirs = _unrolled(ctx, 3)
    weights = _onnx_weights(g, 4, C)
    i_state = 4 + 4 * dirs  # then state_cell, the forward's output and its reserve
    x2d = g.rows(_input(g, 3), C)
    factors = ctx.make("Split", [_input(g, i_state + 3),
                                 ctx.ints([4 * H, H, H] * (dirs * T), "sizes")],
                       outputs=3 * dirs * T, axis=0)
    dy_t = g.op("Transpose", _input(g, 0), perm=[0, 2, 1])  # (T, dirs*H, N)
    out_y = _input(g, i_state + 2)
    dx, d_state, d_cell, d_weights = None, [], [], []
    for d, (wx, wh, _, _) in enumerate(weights):
        mine = dy_t if dirs == 1 else g.cols(dy_t, d * H, (d + 1) * H, axis=1)
        dy = g.steps(g.op("Reshape", mine, ctx.ints([T * H, -1], "dyshape")))
        b, a, f = (factors[3 * T * d + k::3][:T] for k in range(3))
        wh_t = _transposed(g, wh)  # (H, 4H)
        dh = _transposed(g, state_row(g, _input(g, 1), d))
        dc = _transposed(g, state_row(g, _input(g, 2), d))
        da = [None] * T
        order = range(T) if d == 1 else range(T - 1, -1, -1)
        for n_done, t in enumerate(order):
            dh = g.op("Add", dy[t], dh)
            dc = g.op("Add", dc, g.op("Mul", dh, a[t]))
            da[t] = g.op("Mul", g.op("Concat", dc, dc, dc, dh, axis=0), b[t])
            dc = g.op("Mul", dc, f[t])
            if n_done < T - 1 or ctx.wants(1 + 4 * dirs):
                dh = g.op("MatMul", wh_t, da[t])
        d_state.append(dh)
        d_cell.append(dc)
        d_all = g.op("Concat", *da, axis=1) if T > 1 else da[0]  # (4H, T*N)
        y = out_y if dirs == 1 else g.cols(out_y, d * H, (d + 1) * H, axis=2)
        h_prev = g.rows(shifted(g, y, state_row(g, _input(g, i_state), d), d == 1), H)
        d_weights.append((d_all, x2d, h_prev))
        if ctx.wants(0):
            part = g.op("Gemm", d_all, wx, transA=1)  # (T*N, C)
            dx = part if dx is None else g.op("Add", dx, part)
    if ctx.wants(0):
        deliver(ctx, g.op("Reshape", dx, ctx.ints([T, -1, C], "xshape")), 0, g.work)
    for d, (d_all, x2d, h_prev) in enumerate(d_weights):  # each written where it is made
        for k, rows in ((1 + 2 * d, x2d), (2 + 2 * d, h_prev)):
            if ctx.wants(k):  # (4H, C), (4H, H): as the piece's own shape
                have = (4 * H, C if k == 1 + 2 * d else H)
                deliver(ctx, _reshaped(g, g.op("Gemm", d_all, rows), have,
                                       ctx.in_shapes[3 + k]), k, g.work)
        bias = [k for k in (1 + 2 * dirs + 2 * d, 2 + 2 * dirs + 2 * d) if ctx.wants(k)]
        if bias:  # both biases have the same gradient
            deliver(ctx, g.op("ReduceSum", d_all, ctx.ints([1], "axes"), keepdims=0), bias[0],
                    g.work)
            for k in bias[1:]:
                ctx.make("Identity", [ctx.outputs[bias[0]]], outputs=[ctx.outputs[k]])
    for k, rows in ((1 + 4 * dirs, d_state), (2 + 4 * dirs, d_cell)):
        if ctx.wants(k):
            deliver(ctx, stack_rows(g, [_transposed(g, r) for r in rows], ""), k, g.work)
