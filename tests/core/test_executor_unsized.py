"""The numpy executor fills creation ops' unknown dims from graph inference, as MXNet's bind
does (Gluon RNN layers export their begin state as ``_zeros(shape=(L, 0, H))``)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.executor import GraphPlan


@pytest.mark.parametrize("batch", [2, 5])
def test_zeros_with_unknown_dim_takes_the_inferred_shape(batch):
    data = mx.sym.var("data")
    net = data + mx.sym.zeros(shape=(0, 3))
    x = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
    (out,) = GraphPlan(net).run({"data": x})
    np.testing.assert_array_equal(out, x)


def test_plan_reinfers_when_the_input_shape_changes():
    data = mx.sym.var("data")
    plan = GraphPlan(data * mx.sym.ones(shape=(0, 4)))
    for batch in (1, 3, 1):
        x = np.full((batch, 4), 2.0, np.float32)
        (out,) = plan.run({"data": x})
        assert out.shape == (batch, 4)
        np.testing.assert_array_equal(out, x)


def test_rnn_begin_state_zeros_bind_and_forward():
    data = mx.sym.var("data")  # (T, N, C)
    params = mx.sym.var("params")
    state = mx.sym.zeros(shape=(1, 0, 5))
    net = mx.sym.RNN(data, params, state, state_size=5, num_layers=1, mode="rnn_tanh")
    n_params = 5 * 3 + 5 * 5 + 2 * 5
    x = np.random.default_rng(0).uniform(-1, 1, (4, 2, 3)).astype(np.float32)
    w = np.random.default_rng(1).uniform(-0.5, 0.5, (n_params,)).astype(np.float32)
    exe = net.bind(mx.cpu(), args={"data": mx.nd.array(x), "params": mx.nd.array(w)})
    (out,) = exe.forward()
    assert out.shape == (4, 2, 5)
    # first step from a zero state: tanh(W_x x_0 + b_x + b_h)
    wx = w[:15].reshape(5, 3)
    bx, bh = w[40:45], w[45:50]
    np.testing.assert_allclose(out.asnumpy()[0], np.tanh(x[0] @ wx.T + bx + bh), rtol=1e-5,
                               atol=1e-6)
