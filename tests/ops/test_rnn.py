"""The fused RNN op against MXNet 1.9.1 (tests/golden/ops/rnn.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, OpAttributeError, ShapeError
from gluonport.ops.nn.rnn import rnn_param_size


def _nd(a):
    """An NDArray keeping the numpy dtype (nd.array alone makes float32, as MXNet)."""
    return mx.nd.array(a, dtype=a.dtype)

RNG = np.random.RandomState(3)


def _vars(mode):
    names = ["data", "params", "state"] + (["state_cell"] if mode == "lstm" else [])
    return [mx.sym.var(n) for n in names]


# Every expected shape below was printed by MXNet 1.9.1 for data=(4, 2, 7), state_size=5.
@pytest.mark.parametrize("mode,layers,bidir,proj,args,outs", [
    ("lstm", 2, True, None, [(4, 2, 7), (1240,), (4, 2, 5), (4, 2, 5)],
     [(4, 2, 10), (4, 2, 5), (4, 2, 5)]),
    ("lstm", 2, True, 3, [(4, 2, 7), (980,), (4, 2, 3), (4, 2, 5)],
     [(4, 2, 6), (4, 2, 3), (4, 2, 5)]),
    ("gru", 2, True, None, [(4, 2, 7), (930,), (4, 2, 5)], [(4, 2, 10), (4, 2, 5)]),
    ("rnn_tanh", 2, True, None, [(4, 2, 7), (310,), (4, 2, 5)], [(4, 2, 10), (4, 2, 5)]),
    ("gru", 1, False, None, [(4, 2, 7), (210,), (1, 2, 5)], [(4, 2, 5), (1, 2, 5)]),
])
def test_infer_shape_partial_completes_params_and_states(mode, layers, bidir, proj, args, outs):
    sym = mx.sym.RNN(*_vars(mode), mode=mode, state_size=5, num_layers=layers,
                     bidirectional=bidir, projection_size=proj, state_outputs=True, name="rnn")
    got_args, got_outs, _ = sym.infer_shape_partial(data=(4, 2, 7))
    assert got_args == args and got_outs == outs
    assert rnn_param_size(mode, 5, layers, bidir, 7, proj) == args[1][0]
    names = ["output", "state_output"] + (["statecell_output"] if mode == "lstm" else [])
    assert sym.list_outputs() == [f"rnn_{n}" for n in names]


def test_sequence_length_input_and_shape():
    sym = mx.sym.RNN(*_vars("gru"), mode="gru", state_size=5, num_layers=1,
                     use_sequence_length=True, name="rnn")
    assert sym.list_arguments() == ["data", "params", "state", "rnn_sequence_length"]
    args, _, _ = sym.infer_shape_partial(data=(4, 2, 7))
    assert args[-1] == (2,)


def test_rnn_param_concat_completes_unknown_inputs_from_rnn():
    # oracle: the two unknown leading inputs share the residual (6, 6), or take it (8)
    def build():
        parts = [mx.sym.var(n) for n in ("a", "b", "c", "e")]
        cat = mx.sym.invoke("_rnn_param_concat", parts, {"dim": 0})
        return mx.sym.RNN(mx.sym.var("data"), cat, mx.sym.var("s"), mode="rnn_tanh",
                          state_size=2, num_layers=1)
    args, _, _ = build().infer_shape_partial(data=(3, 1, 4), c=(2,), e=(2,))
    assert args[1:5] == [(6,), (6,), (2,), (2,)]
    args, _, _ = build().infer_shape_partial(data=(3, 1, 4), b=(4,), c=(2,), e=(2,))
    assert args[1:5] == [(8,), (4,), (2,), (2,)]


def _inputs(mode, T=5, N=3, C=4, H=3, layers=1, dirs=1, dtype=np.float32):
    size = rnn_param_size(mode, H, layers, dirs == 2, C)
    arrays = [RNG.uniform(-1, 1, (T, N, C)), RNG.uniform(-0.7, 0.7, (size,)),
              RNG.uniform(-1, 1, (layers * dirs, N, H))]
    if mode == "lstm":
        arrays.append(RNG.uniform(-1, 1, (layers * dirs, N, H)))
    return [a.astype(dtype) for a in arrays]


@pytest.mark.parametrize("mode,layers,bidir", [("lstm", 2, True), ("gru", 1, True),
                                               ("rnn_relu", 2, False)])
def test_sequence_length_equals_truncated_runs(mode, layers, bidir):
    ins = _inputs(mode, layers=layers, dirs=2 if bidir else 1)
    lengths = np.array([5, 2, 4], np.int32)
    attrs = {"mode": mode, "state_size": 3, "num_layers": layers, "bidirectional": bidir,
             "state_outputs": True}
    full = mx.nd.invoke("RNN", [_nd(a) for a in ins] + [_nd(lengths)],
                        {**attrs, "use_sequence_length": True})
    for b, n in enumerate(lengths):
        one = [ins[0][:n, b:b + 1], ins[1]] + [s[:, b:b + 1] for s in ins[2:]]
        ref = mx.nd.invoke("RNN", [_nd(a) for a in one], attrs)
        np.testing.assert_allclose(full[0].asnumpy()[:n, b], ref[0].asnumpy()[:, 0], 1e-5, 1e-6)
        assert not full[0].asnumpy()[n:, b].any(), "outputs past the sequence end must be 0"
        for got, want in zip(full[1:], ref[1:]):
            np.testing.assert_allclose(got.asnumpy()[:, b], want.asnumpy()[:, 0], 1e-5, 1e-6)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_one_step(x, w, h, c, H):
    """Hand-written single LSTM step from MXNet's flat layout (i, f, g, o)."""
    C = x.shape[-1]
    wx = w[:4 * H * C].reshape(4 * H, C)
    wh = w[4 * H * C:4 * H * (C + H)].reshape(4 * H, H)
    b = w[4 * H * (C + H):4 * H * (C + H + 1)] + w[4 * H * (C + H + 1):]
    g = x @ wx.T + h @ wh.T + b
    return (_sigmoid(g[:, :H]), _sigmoid(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]),
            _sigmoid(g[:, 3 * H:]))


@pytest.mark.parametrize("lo,hi", [(-0.05, 0.05), (-1e9, 1e9)])
def test_lstm_state_clip(lo, hi):
    x, w, h0, c0 = _inputs("lstm", T=1, dtype=np.float64)
    c0 = c0 * 4
    out = mx.nd.RNN(*(_nd(a) for a in (x, w, h0, c0)), mode="lstm", state_size=3,
                    num_layers=1, state_outputs=True, lstm_state_clip_min=lo,
                    lstm_state_clip_max=hi)
    i, f, g, o = _lstm_one_step(x[0], w, h0[0], c0[0], 3)
    c = np.clip(f * c0[0] + i * g, lo, hi)
    np.testing.assert_allclose(out[2].asnumpy()[0], c, rtol=1e-10)
    np.testing.assert_allclose(out[1].asnumpy()[0], o * np.tanh(c), rtol=1e-10)


@pytest.mark.parametrize("stop_nan", [False, True])
def test_lstm_state_clip_nan(stop_nan):
    x, w, h0, c0 = _inputs("lstm", T=1)
    c0[0, 0, 0] = np.nan
    out = mx.nd.RNN(*(_nd(a) for a in (x, w, h0, c0)), mode="lstm", state_size=3,
                    num_layers=1, state_outputs=True, lstm_state_clip_min=-0.5,
                    lstm_state_clip_max=0.5, lstm_state_clip_nan=stop_nan)
    cell = out[2].asnumpy()[0, 0, 0]
    assert (cell == -0.5) if stop_nan else np.isnan(cell)


def test_float16_runs_in_float32():
    ins = _inputs("gru", dtype=np.float16)
    attrs = {"mode": "gru", "state_size": 3, "num_layers": 1}
    half = mx.nd.invoke("RNN", [_nd(a) for a in ins], attrs)
    full = mx.nd.invoke("RNN", [mx.nd.array(a.astype(np.float32)) for a in ins], attrs)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.asnumpy(), full.asnumpy(), rtol=2e-3, atol=2e-3)


def test_bad_options_and_inputs():
    x, w, h0 = _inputs("gru")
    args = [_nd(a) for a in (x, w, h0)]
    with pytest.raises(OpAttributeError, match="projection_size"):
        mx.nd.RNN(*args, mode="gru", state_size=3, num_layers=1, projection_size=2)
    with pytest.raises(OpAttributeError, match="lstm_state_clip"):
        mx.nd.RNN(*args, mode="gru", state_size=3, num_layers=1, lstm_state_clip_min=-1.0,
                  lstm_state_clip_max=1.0)
    with pytest.raises(ShapeError, match="parameters"):
        mx.nd.RNN(args[0], _nd(w[:-1]), args[2], mode="gru", state_size=3,
                  num_layers=1)
    sym = mx.sym.RNN(*_vars("gru"), mode="gru", state_size=3, num_layers=1, name="r")
    with pytest.raises(DTypeError, match="state"):
        sym.infer_type(data=np.float32, state=np.float64)
