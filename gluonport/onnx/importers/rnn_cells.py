"""GRU and LSTM variants MXNet's fused ``RNN`` cannot express, unrolled into cells of
elementwise ops and ``FullyConnected`` (one cell per time step and direction):

* GRU with ``linear_before_reset=0`` (the reset gate applied before the recurrent matrix);
* LSTM with peephole weights ``P``;
* either with ``sequence_lens`` shorter than the sequence (MXNet's CPU RNN has no
  ``use_sequence_length``): a step past a sequence's end keeps its states and outputs zeros
  (a reverse direction so starts at each sequence's last step, as ONNX does).

ONNX's equations with the default activations (sigmoid, tanh); gate order ``z, r, h`` (GRU) and
``i, o, f, c`` (LSTM) as in ONNX's ``W``/``R``/``B``. The sequence length must be static (at
most ``_MAX_STEPS``).
"""

from __future__ import annotations

import numpy as np

from .._import_build import reshape
from .._import_context import ImportContext, Value

__all__ = ["unrolled_gru", "unrolled_lstm"]

_MAX_STEPS = 512


def _steps(ctx: ImportContext, data, t_steps) -> list:
    if not isinstance(t_steps, int) or not 0 < t_steps <= _MAX_STEPS:
        raise ctx.fail(f"an unrolled cell needs a static sequence length (at most "
                       f"{_MAX_STEPS}), got {t_steps}")
    return [reshape(ctx, ctx.op("slice_axis", data, axis=0, begin=t, end=t + 1), (-3, -2))
            for t in range(t_steps)]


def _fc(ctx: ImportContext, x, w: np.ndarray, b: np.ndarray, hint: str):
    return ctx.op("FullyConnected", x, ctx.new_param(f"{ctx.node_name}_{hint}_weight", w),
                  ctx.new_param(f"{ctx.node_name}_{hint}_bias", b), num_hidden=w.shape[0])


def _split(ctx: ImportContext, s, n: int, hidden: int) -> list:
    return [ctx.op("slice_axis", s, axis=1, begin=k * hidden, end=(k + 1) * hidden)
            for k in range(n)]


def _initial(ctx: ImportContext, v: Value | None, d: int, xs: list, hidden: int, layout: int):
    if v is None:
        zero = ctx.op("zeros_like", ctx.op("slice_axis", xs[0], axis=1, begin=0, end=1))
        return ctx.op("broadcast_to", zero, shape=(0, hidden))
    s = v.sym if not layout else ctx.op("swapaxes", v.sym, dim1=0, dim2=1)
    return reshape(ctx, ctx.op("slice_axis", s, axis=0, begin=d, end=d + 1), (-3, -2))


def _outputs(ctx: ImportContext, per_dir: list[list], finals: list[list], layout: int) -> list:
    """Y ``(T, dirs, N, H)`` (layout 1: ``(N, T, dirs, H)``) and each final state
    ``(dirs, N, H)`` (layout 1: ``(N, dirs, H)``)."""
    ys = [ctx.op("stack", *hs, axis=0) for hs in per_dir]          # (T, N, H) each
    y = ctx.op("stack", *ys, axis=1)                                 # (T, dirs, N, H)
    if layout:
        y = ctx.op("transpose", y, axes=(2, 0, 1, 3))
    outs = [y]
    for states in finals:
        s = ctx.op("stack", *states, axis=0)                         # (dirs, N, H)
        outs.append(ctx.op("swapaxes", s, dim1=0, dim2=1) if layout else s)
    return outs


def _masks(ctx: ImportContext, lens: Value | None, n_steps: int) -> list:
    """Per step, ``(N, 1)`` 1.0 where the step is within the sequence (None: all are)."""
    if lens is None:
        return [None] * n_steps
    col = reshape(ctx, ctx.op("Cast", lens.sym, dtype="float32"), (-1, 1))
    return [ctx.op("_greater_scalar", col, scalar=float(t)) for t in range(n_steps)]


def _keep(ctx: ImportContext, mask, new, old):
    """``new`` within the sequence, ``old`` past its end."""
    if mask is None:
        return new
    return ctx.op("elemwise_add", old, ctx.op("broadcast_mul", mask,
                                              ctx.op("elemwise_sub", new, old)))


def _out(ctx: ImportContext, mask, h):
    return h if mask is None else ctx.op("broadcast_mul", mask, h)


def _dirs(direction: str) -> list[bool]:
    """Per direction: runs over the sequence reversed."""
    return {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]


def unrolled_gru(ctx: ImportContext, data, t_steps, w: np.ndarray, r: np.ndarray,
                 b: np.ndarray | None, h0: Value | None, hidden: int, direction: str,
                 layout: int, lens: Value | None = None, linear_before_reset: int = 0
                 ) -> list:
    """``h~ = tanh(Wh x + Rh (r * H) + b)`` (``linear_before_reset=0``), or
    ``tanh(Wh x + r * (Rh H + Rbh))``; steps past a sequence's length keep its state and
    output zeros."""
    xs = _steps(ctx, data, t_steps)
    masks = _masks(ctx, lens, len(xs))
    per_dir, finals = [], []
    for d, backwards in enumerate(_dirs(direction)):
        bias = b[d] if b is not None else np.zeros(6 * hidden, w.dtype)
        rz_w, rh_w = r[d][:2 * hidden], r[d][2 * hidden:]
        rz_b, rh_b = bias[3 * hidden:5 * hidden], bias[5 * hidden:]
        h = _initial(ctx, h0, d, xs, hidden, layout)
        hs = [None] * len(xs)
        for t in (reversed(range(len(xs))) if backwards else range(len(xs))):
            gz, gr, gh = _split(ctx, _fc(ctx, xs[t], w[d], bias[:3 * hidden], f"d{d}w"), 3,
                                hidden)
            rz, rr = _split(ctx, _fc(ctx, h, rz_w, rz_b, f"d{d}rzr"), 2, hidden)
            z = ctx.op("sigmoid", ctx.op("elemwise_add", gz, rz))
            reset = ctx.op("sigmoid", ctx.op("elemwise_add", gr, rr))
            if linear_before_reset:
                rec = ctx.op("elemwise_mul", reset, _fc(ctx, h, rh_w, rh_b, f"d{d}rh"))
            else:
                rec = _fc(ctx, ctx.op("elemwise_mul", reset, h), rh_w, rh_b, f"d{d}rh")
            cand = ctx.op("tanh", ctx.op("elemwise_add", gh, rec))
            keep = ctx.op("elemwise_mul", z, h)
            update = ctx.op("elemwise_mul", ctx.op("_rminus_scalar", z, scalar=1.0), cand)
            new_h = ctx.op("elemwise_add", update, keep)
            hs[t] = _out(ctx, masks[t], new_h)
            h = _keep(ctx, masks[t], new_h, h)
        per_dir.append(hs)
        finals.append(h)
    return _outputs(ctx, per_dir, [finals], layout)


def unrolled_lstm(ctx: ImportContext, data, t_steps, w: np.ndarray, r: np.ndarray,
                  b: np.ndarray | None, p: np.ndarray | None, h0: Value | None,
                  c0: Value | None, hidden: int, direction: str, layout: int,
                  lens: Value | None = None) -> list:
    """LSTM with peepholes (``i``/``f`` see the previous cell state, ``o`` the new one);
    steps past a sequence's length keep its states and output zeros."""
    xs = _steps(ctx, data, t_steps)
    masks = _masks(ctx, lens, len(xs))
    per_dir, finals_h, finals_c = [], [], []
    for d, backwards in enumerate(_dirs(direction)):
        bias = b[d] if b is not None else np.zeros(8 * hidden, w.dtype)
        peep = p[d] if p is not None else np.zeros(3 * hidden, w.dtype)
        pi, po, pf = (ctx.new_param(f"{ctx.node_name}_d{d}_p{k}",
                                    peep[k * hidden:(k + 1) * hidden].reshape(1, hidden))
                      for k in range(3))
        h = _initial(ctx, h0, d, xs, hidden, layout)
        c = _initial(ctx, c0, d, xs, hidden, layout)
        hs = [None] * len(xs)
        for t in (reversed(range(len(xs))) if backwards else range(len(xs))):
            g = ctx.op("elemwise_add", _fc(ctx, xs[t], w[d], bias[:4 * hidden], f"d{d}w"),
                       _fc(ctx, h, r[d], bias[4 * hidden:], f"d{d}r"))
            gi, go, gf, gc = _split(ctx, g, 4, hidden)
            i = ctx.op("sigmoid", ctx.op("elemwise_add", gi, ctx.op("broadcast_mul", pi, c)))
            f = ctx.op("sigmoid", ctx.op("elemwise_add", gf, ctx.op("broadcast_mul", pf, c)))
            new_c = ctx.op("elemwise_add", ctx.op("elemwise_mul", f, c),
                           ctx.op("elemwise_mul", i, ctx.op("tanh", gc)))
            o = ctx.op("sigmoid", ctx.op("elemwise_add", go,
                                         ctx.op("broadcast_mul", po, new_c)))
            new_h = ctx.op("elemwise_mul", o, ctx.op("tanh", new_c))
            hs[t] = _out(ctx, masks[t], new_h)
            h = _keep(ctx, masks[t], new_h, h)
            c = _keep(ctx, masks[t], new_c, c)
        per_dir.append(hs)
        finals_h.append(h)
        finals_c.append(c)
    return _outputs(ctx, per_dir, [finals_h, finals_c], layout)
