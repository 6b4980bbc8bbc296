"""ONNX lowering of the fused RNN op's backward kernel, ``_backward_RNN`` (:mod:`.rnn_grad`),
and the emitters it shares with the LSTM training ops' lowerings (:mod:`.rnn_train`). The
handler is attached by the file that registers the op; this module imports no sibling at load
time (they import it while registering).

Back-propagation through time written out in plain ONNX ops for a static sequence length ``T``
(the exporter's inferred shapes; the batch may stay dynamic): the time loop is unrolled.

Per layer and direction (``G`` gates of ``H`` rows, MXNet's gate order):

* the layer's hidden states are known without a recursion: the last layer's are the forward
  ``output`` input, a lower layer's come from one ONNX RNN/GRU/LSTM node re-running it (as the
  forward lowering does). So every step's gate pre-activations come from two GEMMs over all
  ``T*N`` rows (``x W_i2h^T + b_i2h`` and ``h_prev W_h2h^T + b_h2h``), the activations and the
  per-step factors of the backward recursion from elementwise ops over all steps at once; only
  the LSTM cell state needs a per-step recursion (two elementwise ops a step);
* the recursion runs backwards over the steps: a few elementwise ops on ``(N, G*H)`` tensors
  and one ``(N, G*H) x (G*H, H)`` MatMul for the gradient of the previous hidden state;
* the weight gradients are one GEMM each over the concatenated steps
  (``dA^T x`` and ``dA_h^T h_prev``), the bias gradients one ReduceSum, the input gradient one
  MatMul (``dA W_i2h``), summed over directions.

The math is :class:`.rnn_grad._Direction`'s. float16 runs in float32, float64 in float64 but
for the lower layers' ONNX RNN nodes (onnxruntime has float32 RNN kernels only).
No masks: training-mode dropout between layers (``p > 0``) is not applied, as the kernel's
inference-mode ``compute``; a training graph with such dropout is kept on the numpy executor
(``RNN``'s ``train_graph`` refuses it).
"""

from __future__ import annotations

import numpy as np

from ..lowering import LoweringContext, deliver

__all__ = ["backward_rnn_onnx", "Graph", "state_row", "shifted", "stack_rows"]


class Graph:
    """Small emitters over one LoweringContext, in one work dtype."""

    def __init__(self, ctx: LoweringContext, work: np.dtype, T: int):
        self.ctx, self.work, self.T = ctx, work, T
        self._consts: dict = {}

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        return self.ctx.make(op_type, list(inputs), **attrs)

    def scalar(self, value: float) -> str:
        if value not in self._consts:
            self._consts[value] = self.ctx.const(np.asarray(value, self.work), "c")
        return self._consts[value]

    def cols(self, x: str, start: int, end: int, axis: int = 1) -> str:
        """``x[..., start:end]`` along ``axis``."""
        c = self.ctx
        return self.op("Slice", x, c.ints([start], "s"), c.ints([end], "e"), c.ints([axis], "a"))

    def one_minus(self, x: str) -> str:
        return self.op("Sub", self.scalar(1.0), x)

    def steps(self, x: str) -> list[str]:
        """A (T*N, ...) tensor cut into T (N, ...) steps."""
        if self.T == 1:
            return [x]
        attrs = {"num_outputs": self.T} if self.ctx.opset >= 18 else {}
        return self.ctx.make("Split", [x], outputs=self.T, axis=0, **attrs)

    def rows(self, x: str, width: int) -> str:
        return self.op("Reshape", x, self.ctx.ints([-1, width], "shape"))

    def cast(self, x: str, dtype: np.dtype, have: np.dtype) -> str:
        return x if np.dtype(have) == np.dtype(dtype) else self.ctx.cast_to(x, dtype)


def _weights(g: Graph, p, flat: str, input_size: int) -> list[list[str]]:
    """Per layer-direction ``[W_i2h, W_h2h, b_i2h, b_h2h]`` cut from the flat vector."""
    from .rnn import rnn_param_size, unpack_params  # (this module is imported by rnn's files)

    size = rnn_param_size(p.mode, p.state_size, p.num_layers, p.bidirectional, input_size)
    out = []
    for views in unpack_params(p, np.arange(size, dtype=np.int64), input_size):
        blocks = []
        for v in (views[0], views[1], views[3], views[4]):
            start, end = int(v.flat[0]), int(v.flat[-1]) + 1
            piece = g.cols(flat, start, end, axis=0)
            blocks.append(piece if v.ndim == 1 else
                          g.op("Reshape", piece, g.ctx.ints(list(v.shape), "wshape")))
        out.append(blocks)
    return out


def state_row(g: Graph, name: str, k: int) -> str:
    """Row ``k`` (N, H) of a (L*dirs, N, H) state tensor."""
    return g.op("Gather", name, g.ctx.const(np.asarray(k, np.int64), "k"), axis=0)


def shifted(g: Graph, y: str, first: str, reverse: bool) -> str:
    """Each step's previous value (T, N, H): ``first`` (N, H) then ``y``'s steps, in the
    direction's order."""
    u = g.op("Unsqueeze", first, g.ctx.ints([0], "axes"))
    if g.T == 1:
        return u
    if reverse:
        return g.op("Concat", g.cols(y, 1, g.T, axis=0), u, axis=0)
    return g.op("Concat", u, g.cols(y, 0, g.T - 1, axis=0), axis=0)


class _Dir:
    """One layer-direction's BPTT (see the module docstring)."""

    def __init__(self, g: Graph, p, w: list[str], x2d: str, y: str, h0: str, c0: str | None,
                 reverse: bool):
        self.g, self.mode, self.H, self.reverse = g, p.mode, p.state_size, reverse
        self.wx, self.wh, bx, bh = w
        T, H = g.T, self.H
        self.order = list(range(T - 1, -1, -1) if reverse else range(T))
        self.x2d, self.hprev = x2d, g.rows(shifted(g, y, h0, reverse), H)
        xw = g.op("Gemm", x2d, self.wx, g.op("Add", bx, bh) if p.mode != "gru" else bx,
                  transB=1)
        if p.mode == "gru":
            hw = g.op("Gemm", self.hprev, self.wh, bh, transB=1)
            self._prepare_gru(xw, hw)
        elif p.mode == "lstm":  # the pre-activations: x W_i2h^T + b + h_prev W_h2h^T
            self._prepare_lstm(g.op("Gemm", self.hprev, self.wh, xw, transB=1), c0)
        else:
            self._prepare_rnn(y)

    # --- what each step of the backward recursion reads, computed over all steps at once ----
    def _prepare_rnn(self, y: str) -> None:
        g = self.g
        h = g.rows(y, self.H)
        if self.mode == "rnn_relu":
            a = g.cast(g.op("Greater", h, g.scalar(0.0)), g.work, np.bool_)
        else:
            a = g.one_minus(g.op("Mul", h, h))
        self.a = g.steps(a)

    def _prepare_lstm(self, pre: str, c0: str) -> None:
        g, H = self.g, self.H
        s = g.op("Sigmoid", pre)
        gg = g.op("Tanh", g.cols(pre, 2 * H, 3 * H))
        i, f = g.cols(s, 0, H), g.cols(s, H, 2 * H)
        f_steps, ig_steps = g.steps(f), g.steps(g.op("Mul", i, gg))
        c_prev, c_new, c = [None] * g.T, [None] * g.T, c0
        for t in self.order:  # the cell recursion: c = f * c + i * g
            c_prev[t] = c
            c = g.op("Add", g.op("Mul", f_steps[t], c), ig_steps[t])
            c_new[t] = c
        cp = g.op("Concat", *c_prev, axis=0) if g.T > 1 else c_prev[0]
        tc = g.op("Tanh", g.op("Concat", *c_new, axis=0) if g.T > 1 else c_new[0])
        self._lstm_factors(s, gg, cp, tc, f_steps)

    def _lstm_factors(self, s: str, gg: str, cp: str, tc: str, f_steps: list[str]) -> None:
        """The per-step factors of the LSTM recursion from the activations (``s``: sigmoid of
        all four gate blocks, ``gg`` tanh of g, ``cp``/``tc`` the previous cell and tanh of the
        new one, all (T*N, ...))."""
        g, H = self.g, self.H
        i, o = g.cols(s, 0, H), g.cols(s, 3 * H, 4 * H)
        ds = g.op("Mul", s, g.one_minus(s))  # sigmoid' for i, f, o
        b = g.op("Concat", g.op("Mul", gg, g.cols(ds, 0, H)), g.op("Mul", cp, g.cols(ds, H, 2 * H)),
                 g.op("Mul", i, g.one_minus(g.op("Mul", gg, gg))),
                 g.op("Mul", tc, g.cols(ds, 3 * H, 4 * H)), axis=1)
        self.a = g.steps(g.op("Mul", o, g.one_minus(g.op("Mul", tc, tc))))
        self.b, self.f = g.steps(b), f_steps

    def _prepare_gru(self, xw: str, hw: str) -> None:
        g, H = self.g, self.H
        rz = g.op("Sigmoid", g.op("Add", g.cols(xw, 0, 2 * H), g.cols(hw, 0, 2 * H)))
        r, z = g.cols(rz, 0, H), g.cols(rz, H, 2 * H)
        hn = g.cols(hw, 2 * H, 3 * H)
        n = g.op("Tanh", g.op("Add", g.cols(xw, 2 * H, 3 * H), g.op("Mul", r, hn)))
        a = g.op("Mul", g.one_minus(z), g.one_minus(g.op("Mul", n, n)))  # dn = dh * a
        drz = g.op("Mul", rz, g.one_minus(rz))
        m = g.op("Concat", g.op("Mul", g.op("Mul", a, hn), g.cols(drz, 0, H)),
                 g.op("Mul", g.op("Sub", self.hprev, n), g.cols(drz, H, 2 * H)),
                 g.op("Mul", a, r), axis=1)  # dhw = [dh, dh, dh] * m
        self.a_all, self.m, self.z = a, g.steps(m), g.steps(z)

    # --- the recursion ------------------------------------------------------------------------
    def backward(self, dy: list[str], dh: str | None, dc: str | None, want_dh0: bool) -> tuple:
        """``(dA (T*N, G*H) for W_i2h, dA_h for W_h2h, dh0, dc0)`` from the per-step output
        gradients ``dy`` and the final-state gradients (``None``: zero)."""
        g, lstm, gru = self.g, self.mode == "lstm", self.mode == "gru"
        da, dhs = [None] * g.T, [None] * g.T
        for n_done, t in enumerate(reversed(self.order)):
            last = n_done == g.T - 1
            dh = dy[t] if dh is None else g.op("Add", dy[t], dh)
            if lstm:
                d = g.op("Mul", dh, self.a[t])
                dc = d if dc is None else g.op("Add", dc, d)
                da[t] = g.op("Mul", g.op("Concat", dc, dc, dc, dh, axis=1), self.b[t])
                dc = g.op("Mul", dc, self.f[t])
            elif gru:
                dhs[t] = dh
                da[t] = g.op("Mul", g.op("Concat", dh, dh, dh, axis=1), self.m[t])
            else:
                da[t] = g.op("Mul", dh, self.a[t])
            if last and not want_dh0:
                dh = None
                break
            back = g.op("MatMul", da[t], self.wh)
            dh = g.op("Add", back, g.op("Mul", dh, self.z[t])) if gru else back
        dah = g.op("Concat", *da, axis=0) if g.T > 1 else da[0]
        dax = dah
        if gru:  # the n gate's input part is dn = dh * a, not r * dn
            dh_all = g.op("Concat", *dhs, axis=0) if g.T > 1 else dhs[0]
            dax = g.op("Concat", g.cols(dah, 0, 2 * self.H),
                       g.op("Mul", dh_all, self.a_all), axis=1)
        return dax, dah, dh, dc


def backward_rnn_onnx(ctx: LoweringContext) -> None:
    """BPTT unrolled over the static sequence length (see the module docstring)."""
    p = ctx.params
    if p.projection_size is not None or p.use_sequence_length or (
            p.lstm_state_clip_min is not None or p.lstm_state_clip_max is not None):
        raise ctx.fail("projection_size, use_sequence_length and the LSTM state clip have no "
                       "backward pass")
    lstm = p.mode == "lstm"
    heads = (1, 2 if lstm else None) if p.state_outputs else (None, None)
    n_heads = 1 + sum(h is not None for h in heads)
    _bptt(ctx, p, heads, n_heads)


def _bptt(ctx: LoweringContext, p, heads: tuple, i_data: int) -> None:
    """The backward graph: head gradients ``0`` and ``heads`` (final state, cell; ``None``:
    absent), then inputs ``data, parameters, state[, state_cell], output`` from ``i_data``."""
    from .rnn import onnx_layer

    lstm = p.mode == "lstm"
    T, _, C = ctx.in_shapes[i_data]
    if not T or ctx.is_dynamic(i_data, 0):
        raise ctx.fail("the backward pass of RNN is unrolled over time: the sequence length "
                       "must be static (export with a fixed sequence length)")
    T, C = int(T), int(C)
    dtype = np.dtype(ctx.in_dtypes[i_data])
    work = np.dtype(np.float32) if dtype == np.float16 else dtype
    rnn_work = np.dtype(np.float32)  # onnxruntime's RNN/GRU/LSTM kernels
    g = Graph(ctx, work, T)
    dirs, H = (2 if p.bidirectional else 1), p.state_size

    def inp(i: int) -> str:
        return g.cast(ctx.inputs[i], work, ctx.in_dtypes[i])

    flat = inp(i_data + 1)
    weights = _weights(g, p, flat, C)
    state = inp(i_data + 2)
    cell = inp(i_data + 3) if lstm else None
    # each layer's input (the lower layers re-run by ONNX RNN nodes) and output
    xs = [inp(i_data)]
    for layer in range(p.num_layers - 1):
        x = g.cast(xs[-1], rnn_work, work)
        y, _ = onnx_layer(ctx, p, layer, x, None, rnn_work, i_data + 1)
        xs.append(g.cast(y, work, rnn_work))
    xs.append(inp(i_data + (4 if lstm else 3)))
    dy2d = g.rows(inp(0), dirs * H)
    d_state: list[str | None] = [None] * (p.num_layers * dirs)
    d_cell: list[str | None] = [None] * (p.num_layers * dirs)
    d_weights: list[list[str]] = [[] for _ in d_state]
    for layer in range(p.num_layers - 1, -1, -1):
        in_size = C if layer == 0 else dirs * H
        x2d = g.rows(xs[layer], in_size)
        dx = None
        for d in range(dirs):
            k = layer * dirs + d
            y = xs[layer + 1] if dirs == 1 else g.cols(xs[layer + 1], d * H, (d + 1) * H, 2)
            cell_k = state_row(g, cell, k) if lstm else None
            run = _Dir(g, p, weights[k], x2d, y, state_row(g, state, k), cell_k, d == 1)
            dy = g.steps(dy2d if dirs == 1 else g.cols(dy2d, d * H, (d + 1) * H))
            dh = None if heads[0] is None else state_row(g, inp(heads[0]), k)
            dc = None if heads[1] is None else state_row(g, inp(heads[1]), k)
            dax, dah, dh0, dc0 = run.backward(dy, dh, dc, want_dh0=ctx.wants(2))
            d_state[k], d_cell[k] = dh0, dc0
            dwx = g.op("Gemm", dax, x2d, transA=1)
            dwh = g.op("Gemm", dah, run.hprev, transA=1)
            dbx = g.op("ReduceSum", dax, ctx.ints([0], "axes"), keepdims=0)
            dbh = dbx if dah == dax else g.op("ReduceSum", dah, ctx.ints([0], "axes"),
                                              keepdims=0)
            d_weights[k] = [dwx, dwh, dbx, dbh]
            if ctx.wants(0) or layer > 0:
                part = g.op("MatMul", dax, run.wx)
                dx = part if dx is None else g.op("Add", dx, part)
        dy2d = dx
    # MXNet's layout: all weights (W_i2h, W_h2h by layer-direction), then all biases
    order = [g.op("Reshape", w[j], ctx.ints([-1], "flat")) for w in d_weights for j in (0, 1)]
    order += [w[j] for w in d_weights for j in (2, 3)]
    outs = {1: g.op("Concat", *order, axis=0)}
    if ctx.wants(0):
        outs[0] = g.op("Reshape", dy2d, ctx.ints([T, -1, C], "xshape"))
    if ctx.wants(2):
        outs[2] = stack_rows(g, d_state, state)
    if lstm and ctx.wants(3):
        outs[3] = stack_rows(g, d_cell, cell)
    for k in sorted(outs):
        deliver(ctx, outs[k], k, work)


def stack_rows(g: Graph, rows: list[str | None], like: str) -> str:
    """(L*dirs, N, H) from per layer-direction (N, H) rows (zeros where ``None``)."""
    parts = [g.op("Unsqueeze", r, g.ctx.ints([0], "axes")) if r is not None
             else g.op("Mul", g.op("Unsqueeze", state_row(g, like, 0), g.ctx.ints([0], "axes")),
                       g.scalar(0.0)) for r in rows]
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)


