"""Hybridized training of the fused RNN op on onnxruntime: ``_backward_RNN``'s ONNX lowering
(``gluonport/ops/nn/rnn_grad_onnx.py``, BPTT unrolled over a static sequence length) and
RNN's training-mode form (``train_graph``: one RNN node per layer) against
the numpy executor's ``_backward_RNN`` kernel, which tests/ops/test_grads.py checks against
MXNet 1.9.1's gradients (and, for single RNN nodes, the lowering too). Here: whole Gluon layers
(Embedding -> RNN layer -> Dense), two steps, float32 rounding (rtol 1e-4, atol 1e-5)."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd, gluon, nd

T, N, V, E, H = 5, 3, 11, 6, 4


class _Model(gluon.HybridBlock):
    def __init__(self, kind: str, layers: int, bidirectional: bool, dropout: float, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.embedding = gluon.nn.Embedding(V, E)
            layer = {"lstm": gluon.rnn.LSTM, "gru": gluon.rnn.GRU}.get(kind)
            if layer is None:
                self.rnn = gluon.rnn.RNN(H, num_layers=layers, activation=kind[4:],
                                         bidirectional=bidirectional, dropout=dropout,
                                         input_size=E)
            else:
                self.rnn = layer(H, num_layers=layers, bidirectional=bidirectional,
                                 dropout=dropout, input_size=E)
            self.decoder = gluon.nn.Dense(V, flatten=False)

    def hybrid_forward(self, F, x, *states):
        out, new = self.rnn(self.embedding(x), list(states))
        return self.decoder(out), *new


def _step(backend: str, kind: str, layers: int, bidirectional: bool, dropout: float = 0.0):
    mx.random.seed(0)
    net = _Model(kind, layers, bidirectional, dropout, prefix="m_")
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(5)
    dirs = 2 if bidirectional else 1
    states = [nd.array(rng.normal(0, 0.5, (layers * dirs, N, H)))
              for _ in range(2 if kind == "lstm" else 1)]
    x = nd.array(rng.randint(0, V, (T, N)))
    net(x, *states)
    for p in net.collect_params().values():  # one starting point for both backends
        p.set_data(nd.array(rng.normal(0, 0.5, p.shape)))
        p.grad_req = "write"
    net.hybridize(backend=backend, static_shape=True)
    heads = [rng.normal(size=s) for s in [(T, N, V)] + [(layers * dirs, N, H)] * len(states)]
    for s in states:
        s.attach_grad()
    for _ in range(2):
        with autograd.record():
            outs = net(x, *states)
        autograd.backward(outs, [nd.array(h) for h in heads])
    (graphs,) = net._cached_op._train_graphs.values()
    grads = {k: p.grad().asnumpy() for k, p in net.collect_params().items()}
    grads.update({f"state{i}": s.grad.asnumpy() for i, s in enumerate(states)})
    return graphs.backend, grads


@pytest.mark.parametrize("kind, layers, bidirectional", [
    ("lstm", 2, False), ("lstm", 1, True), ("gru", 2, True), ("rnn_tanh", 1, False),
    ("rnn_relu", 2, False)])
def test_gradients_match_the_numpy_kernel(kind, layers, bidirectional):
    backend, g_ort = _step("onnxruntime", kind, layers, bidirectional)
    assert backend == "onnxruntime"
    _, g_np = _step("numpy", kind, layers, bidirectional)
    assert g_np.keys() == g_ort.keys()
    for k in g_np:
        np.testing.assert_allclose(g_ort[k], g_np[k], rtol=1e-4, atol=1e-5, err_msg=k)
        assert np.abs(g_np[k]).max() > 0, k  # something flowed


def test_dropout_between_layers_trains_on_onnxruntime():
    """RNN's training-mode form (one RNN node per layer, Dropout's mask between them) runs on
    onnxruntime: a negligible p gives the kernel's gradients (the cut parameter vector and
    states put back together), p = 0.5 other, finite ones."""
    backend, g_tiny = _step("onnxruntime", "lstm", 2, False, dropout=1e-7)
    assert backend == "onnxruntime"
    _, g_np = _step("numpy", "lstm", 2, False)
    for k in g_np:
        np.testing.assert_allclose(g_tiny[k], g_np[k], rtol=1e-4, atol=1e-5, err_msg=k)
    backend, g_half = _step("onnxruntime", "lstm", 2, False, dropout=0.5)
    assert backend == "onnxruntime"
    assert all(np.isfinite(g).all() for g in g_half.values())
    assert not np.allclose(g_half["m_lstm0_l0_i2h_weight"], g_np["m_lstm0_l0_i2h_weight"])
