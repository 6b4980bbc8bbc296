"""Training steps of hybridized blocks on onnxruntime: BatchNorm and Dropout are written out
with exportable ops (``symbol/_expand.py``, ``ops/nn/train_graphs.py``). Checked against the
numpy executor's fused training kernels (an independent implementation: batch-moment kernels
and MXNet's ``_backward_BatchNorm``), which tests/ops/test_train_mode.py checks against MXNet:
the same gradients and moving statistics to float32 rounding (rtol 1e-4, atol 1e-5)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd, gluon, nd


def _net(fix_gamma: bool) -> gluon.HybridBlock:
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=2),
            gluon.nn.BatchNorm(scale=not fix_gamma, in_channels=4),
            gluon.nn.Activation("relu"), gluon.nn.Dense(3, in_units=36))
    net.initialize(mx.init.Xavier(rnd_type="gaussian"))
    return net


def _step(backend: str, fix_gamma: bool) -> tuple[dict, dict]:
    mx.random.seed(0)
    net = _net(fix_gamma)
    params = net.collect_params()
    rng = np.random.RandomState(3)
    for p in params.values():  # the same starting point for both backends
        p.set_data(nd.array(rng.normal(0, 0.5, p.shape)))
    net.hybridize(backend=backend)
    x = nd.array(rng.normal(size=(4, 2, 5, 5)))
    for _ in range(2):
        with autograd.record():
            y = net(x)
        y.backward(nd.array(rng.normal(size=y.shape)))
    (graphs,) = net._cached_op._train_graphs.values()
    assert graphs.backend == backend
    # keyed without the blocks' counters (conv0_ / conv1_: two nets, one naming scheme); each
    # parameter keeps its own key (the first part of the name alone made the convolution's and
    # the dense layer's weight and bias collide, so the convolution was never compared)
    grads = {_key(k): p.grad().asnumpy() for k, p in params.items() if p.grad_req != "null"}
    data = {_key(k): p.data().asnumpy() for k, p in params.items()}
    assert len(data) == len(params)
    return grads, data


def _key(name: str) -> str:
    return re.sub(r"\d+", "", name)


@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_step_matches_the_fused_kernels(fix_gamma):
    g_np, d_np = _step("numpy", fix_gamma)
    g_ort, d_ort = _step("onnxruntime", fix_gamma)
    for k in g_np:
        np.testing.assert_allclose(g_ort[k], g_np[k], rtol=1e-4, atol=1e-5, err_msg=k)
    for k in d_np:  # running_mean/var: updated twice, by the backward passes
        np.testing.assert_allclose(d_ort[k], d_np[k], rtol=1e-5, atol=1e-6, err_msg=k)
    moving = [k for k in d_np if k.endswith("running_var")]
    assert moving and not np.allclose(d_np[moving[0]], 1.0)  # they did move


def test_dropout_trains_on_onnxruntime():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(50, in_units=20), gluon.nn.Dropout(0.5))
    net.initialize()
    net.hybridize(backend="onnxruntime")
    x = nd.ones((8, 20))
    with autograd.record():
        y = net(x)
    y.backward()
    (graphs,) = net._cached_op._train_graphs.values()
    assert graphs.backend == "onnxruntime"
    out = y.asnumpy()
    dropped = out == 0
    assert 0.3 < dropped.mean() < 0.7  # p = 0.5
    # kept values are scaled by 2; the weight gradient sees exactly the kept units
    w = net[0].weight.data().asnumpy()
    full = x.asnumpy() @ w.T + net[0].bias.data().asnumpy()
    np.testing.assert_allclose(out[~dropped], 2 * full[~dropped], rtol=1e-5)
    np.testing.assert_allclose(net[0].bias.grad().asnumpy(), (2 * ~dropped).sum(axis=0),
                               rtol=1e-6)
