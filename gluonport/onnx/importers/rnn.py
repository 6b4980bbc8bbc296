"""Import handlers: LSTM, GRU and RNN onto MXNet's fused ``RNN`` operator.

MXNet keeps every weight in one flat ``parameters`` vector (weights, then biases, layer by
layer, forward before backward) with its own gate order (LSTM ``i, f, g, o``; GRU ``r, z, n``)
where ONNX has per-direction tensors ``W``, ``R``, ``B`` in its order (LSTM ``i, o, f, c``;
GRU ``z, r, h``). The re-layout is :func:`gluonport.ops.nn.rnn.onnx_weight_layout` run
backwards: ``flat[index] = onnx_tensor``.

Layouts: MXNet's output is ``(T, N, dirs*H)``; ONNX's ``Y`` is ``(T, dirs, N, H)`` (or
``(N, T, dirs, H)`` with ``layout=1``), so the output is reshaped and transposed. A
``reverse``-only direction runs forward over the time-reversed sequence. GRU with
``linear_before_reset=0`` and LSTM with peepholes are unrolled into cells
(:mod:`.rnn_cells`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ops import registry
from ...ops.nn.rnn import onnx_weight_layout, rnn_param_size
from .._import_build import reshape
from .._import_context import ImportContext, Value, importer
from .rnn_cells import unrolled_gru, unrolled_lstm

__all__: list[str] = []

_DEFAULT_ACTS = {"lstm": ["Sigmoid", "Tanh", "Tanh"], "gru": ["Sigmoid", "Tanh"]}


def _consts(ctx: ImportContext, *vs: Value | None) -> list[np.ndarray | None]:
    """The weights' values; all missing ones are recorded before failing (they are re-laid
    out into MXNet's flat vector here, so they must be constants)."""
    missing = [v for v in vs if v is not None and v.const is None]
    for v in missing:
        ctx.needs_const.add(v.name)
    if missing:
        raise ctx.fail(f"weights {[v.name for v in missing]} must be constants (initializers) "
                       "to be re-laid out into MXNet's flat RNN parameter vector")
    return [None if v is None else v.const for v in vs]


def _check_common(ctx: ImportContext, mode: str, acts: Sequence[str] | None, clip,
                  seq_lens: Value | None, t_steps) -> None:
    want = _DEFAULT_ACTS.get(mode)
    if acts and want is not None:
        n = len(want)
        if [a.lower() for a in acts[:n]] != [a.lower() for a in want] or (
                len(acts) > n and [a.lower() for a in acts[n:]] != [a.lower() for a in want]):
            raise ctx.fail(f"activations {list(acts)}: MXNet's fused {mode.upper()} uses "
                           f"{want} only")
    if clip is not None:
        raise ctx.fail("clip (a bound on the gates' inputs) has no MXNet RNN equivalent")
    if seq_lens is not None:
        lens = seq_lens.const
        if lens is None or not isinstance(t_steps, int) or np.any(lens != t_steps):
            raise ctx.fail("sequence_lens shorter than the sequence needs use_sequence_length, "
                           "which MXNet's CPU RNN does not support")


def _short(seq_lens: Value | None, t_steps) -> bool:
    """``sequence_lens`` given and not known to equal the sequence length everywhere."""
    if seq_lens is None:
        return False
    lens = seq_lens.const
    return lens is None or not isinstance(t_steps, int) or bool(np.any(lens != t_steps))


def _flat_params(ctx: ImportContext, mode: str, hidden: int, dirs: int, w: np.ndarray,
                 r: np.ndarray, b: np.ndarray | None) -> tuple[object, int]:
    input_size = w.shape[2]
    p = registry.get("RNN").parse({"state_size": str(hidden), "num_layers": "1",
                                   "bidirectional": str(dirs == 2), "mode": mode})
    size = rnn_param_size(mode, hidden, 1, dirs == 2, input_size)
    flat = np.zeros(size, dtype=w.dtype)
    wi, ri, bi = onnx_weight_layout(p, input_size)[0]
    flat[wi] = w
    flat[ri] = r
    if b is not None:
        flat[bi] = b
    return ctx.new_param(f"{ctx.node_name}_parameters", flat), input_size


def _state(ctx: ImportContext, v: Value | None, x_tnc, dirs: int, hidden: int, layout: int):
    """The initial state as MXNet's ``(dirs, N, H)``; zeros (any batch size) if absent."""
    if v is not None:
        return v.sym if not layout else ctx.op("swapaxes", v.sym, dim1=0, dim2=1)
    one = ctx.op("slice_axis", x_tnc, axis=0, begin=0, end=1)
    zero = ctx.op("zeros_like", ctx.op("slice_axis", one, axis=2, begin=0, end=1))
    return ctx.op("broadcast_to", zero, shape=(dirs, 0, hidden))


def _run(ctx: ImportContext, mode: str, x: Value, hidden: int, direction: str, layout: int,
         flat, states: list):
    dirs = 2 if direction == "bidirectional" else 1
    data = x.sym if not layout else ctx.op("swapaxes", x.sym, dim1=0, dim2=1)
    if direction == "reverse":
        data = ctx.op("reverse", data, axis=(0,))
    out = ctx.op("RNN", data, flat, *states, state_size=hidden, num_layers=1,
                 bidirectional=dirs == 2, mode=mode, state_outputs=True)
    y = out[0]
    if direction == "reverse":
        y = ctx.op("reverse", y, axis=(0,))
    y = reshape(ctx, y, (0, 0, -4, dirs, -1))              # (T, N, dirs, H)
    # ONNX: (T, dirs, N, H), or (N, T, dirs, H) with layout=1
    y = ctx.op("transpose", y, axes=(1, 0, 2, 3) if layout else (0, 2, 1, 3))
    hs = [out[i] if not layout else ctx.op("swapaxes", out[i], dim1=0, dim2=1)
          for i in range(1, len(states) + 1)]
    return [y, *hs]


def _prepare(ctx: ImportContext, mode: str, x: Value, w: Value, r: Value, b: Value | None,
             hidden_size: int | None, direction: str, layout: int):
    wc, rc, bc = _consts(ctx, w, r, b)
    dirs = 2 if direction == "bidirectional" else 1
    if wc.shape[0] != dirs:
        raise ctx.fail(f"W has {wc.shape[0]} direction(s) for direction={direction!r}")
    hidden = int(hidden_size or rc.shape[-1])
    flat, _ = _flat_params(ctx, mode, hidden, dirs, wc, rc, bc)
    t_steps = None if x.shape is None else x.shape[1 if layout else 0]
    return flat, hidden, dirs, t_steps


@importer("LSTM", since=7)
def lstm(ctx: ImportContext, x: Value, w: Value, r: Value, b: Value | None = None,
         seq_lens: Value | None = None, h0: Value | None = None, c0: Value | None = None,
         p: Value | None = None, *, activation_alpha=None, activation_beta=None,
         activations=None, clip=None, direction: str = "forward", hidden_size=None,
         input_forget: int = 0, layout: int = 0) -> object:
    flat, hidden, dirs, t_steps = _prepare(ctx, "lstm", x, w, r, b, hidden_size, direction,
                                           layout)
    short = _short(seq_lens, t_steps)
    _check_common(ctx, "lstm", activations, clip, None if short else seq_lens, t_steps)
    if input_forget:
        raise ctx.fail("input_forget=1 (coupled input and forget gates) has no MXNet "
                       "equivalent")
    data = x.sym if not layout else ctx.op("swapaxes", x.sym, dim1=0, dim2=1)
    if short or p is not None and (p.const is None or np.any(p.const != 0)):  # unrolled
        wc, rc, bc, pc = _consts(ctx, w, r, b, p)
        return unrolled_lstm(ctx, data, t_steps, wc, rc, bc, pc, h0, c0, hidden, direction,
                             layout, seq_lens if short else None)
    states = [_state(ctx, h0, data, dirs, hidden, layout),
              _state(ctx, c0, data, dirs, hidden, layout)]
    return _run(ctx, "lstm", x, hidden, direction, layout, flat, states)


@importer("GRU", since=7)
def gru(ctx: ImportContext, x: Value, w: Value, r: Value, b: Value | None = None,
        seq_lens: Value | None = None, h0: Value | None = None, *, activation_alpha=None,
        activation_beta=None, activations=None, clip=None, direction: str = "forward",
        hidden_size=None, layout: int = 0, linear_before_reset: int = 0) -> object:
    flat, hidden, dirs, t_steps = _prepare(ctx, "gru", x, w, r, b, hidden_size, direction,
                                           layout)
    short = _short(seq_lens, t_steps)
    _check_common(ctx, "gru", activations, clip, None if short else seq_lens, t_steps)
    data = x.sym if not layout else ctx.op("swapaxes", x.sym, dim1=0, dim2=1)
    if not linear_before_reset or short:  # MXNet's (cuDNN's) GRU resets after R: unrolled
        wc, rc, bc = _consts(ctx, w, r, b)
        return unrolled_gru(ctx, data, t_steps, wc, rc, bc, h0, hidden, direction, layout,
                            seq_lens if short else None, linear_before_reset)
    return _run(ctx, "gru", x, hidden, direction, layout, flat,
                [_state(ctx, h0, data, dirs, hidden, layout)])


@importer("RNN", since=7)
def rnn(ctx: ImportContext, x: Value, w: Value, r: Value, b: Value | None = None,
        seq_lens: Value | None = None, h0: Value | None = None, *, activation_alpha=None,
        activation_beta=None, activations=None, clip=None, direction: str = "forward",
        hidden_size=None, layout: int = 0) -> object:
    acts = [a.lower() for a in (activations or ["Tanh"])]
    if len(set(acts)) != 1 or acts[0] not in ("tanh", "relu"):
        raise ctx.fail(f"activations {activations}: MXNet's RNN has tanh or relu only")
    mode = f"rnn_{acts[0]}"
    flat, hidden, dirs, t_steps = _prepare(ctx, mode, x, w, r, b, hidden_size, direction,
                                           layout)
    _check_common(ctx, mode, None, clip, seq_lens, t_steps)
    data = x.sym if not layout else ctx.op("swapaxes", x.sym, dim1=0, dim2=1)
    return _run(ctx, mode, x, hidden, direction, layout, flat,
                [_state(ctx, h0, data, dirs, hidden, layout)])
