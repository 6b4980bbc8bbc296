"""Hybridized training on onnxruntime's CUDA execution provider (``ctx=gpu(0)``).

The forward and backward graphs of a hybridized training step are plain ONNX, so
onnxruntime-gpu trains with them, no ``onnxruntime-training`` needed. These tests run where the
CUDA provider is installed and skip elsewhere (CI has no GPU). The reference is the same
training run on the CPU through the numpy executor (``backend='numpy'``), which shares no code
with onnxruntime's kernels.

Tolerances: TF32 is off (gluonport's default for ``gpu(i)``), but cuDNN and cuBLAS sum in other
orders than numpy, so losses match to rtol 1e-3 and each parameter's change over the steps
(not the parameter itself, which barely moves) to 2% of that change's largest value. With
onnxruntime's default TF32 this test failed on an H200.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import gluonport as mx
from gluonport import autograd, gluon

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    "CUDAExecutionProvider" not in ort.get_available_providers(),
    reason="onnxruntime's CUDA execution provider is not installed (pip install "
           "'gluonport[gpu]' on a machine with an NVIDIA GPU)")]

STEPS = 3


def _net(ctx, backend):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=3, use_bias=False),
            gluon.nn.BatchNorm(in_channels=8), gluon.nn.Activation("relu"),
            gluon.nn.MaxPool2D(2), gluon.nn.Conv2D(6, 3, in_channels=8),
            gluon.nn.Activation("relu"), gluon.nn.Flatten(), gluon.nn.Dense(5, in_units=6 * 6 * 6))
    net.initialize(mx.init.Xavier(), ctx=ctx)
    for i, p in enumerate(net.collect_params().values()):
        if p.grad_req != "null":
            p.set_data(mx.nd.array(np.random.RandomState(i).randn(*p.shape) * 0.3, ctx=ctx))
    net.hybridize(backend=backend, static_alloc=True, static_shape=True)
    return net


def _train(ctx, backend):
    net = _net(ctx, backend)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    loss_fn.hybridize(backend=backend, static_alloc=True, static_shape=True)
    params = net.collect_params()
    before = {k: p.data().asnumpy().copy() for k, p in params.items()}
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4})
    rs = np.random.RandomState(7)
    x = mx.nd.array(rs.uniform(-1, 1, (8, 3, 16, 16)), ctx=ctx)
    y = mx.nd.array(rs.randint(0, 5, 8), ctx=ctx)
    losses = []
    for _ in range(STEPS):
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
        loss.backward()
        trainer.step(8)
        assert out.context == ctx and loss.context == ctx
        losses.append(loss.asnumpy())
    after = {k: p.data().asnumpy() for k, p in params.items()}
    return net, np.stack(losses), before, after


def test_training_steps_on_cuda_match_the_numpy_executor():
    net, losses, before, after = _train(mx.gpu(0), "onnxruntime")
    graphs = net._cached_op._train_graphs.values()
    assert {g.backend for g in graphs} == {"onnxruntime"}
    _, want_losses, want_before, want_after = _train(mx.cpu(), "numpy")
    np.testing.assert_allclose(losses, want_losses, rtol=1e-3, atol=1e-5)
    for (k, got), (kw, want) in zip(after.items(), want_after.items()):
        np.testing.assert_array_equal(before[k], want_before[kw])  # the same start
        change, want_change = got - before[k], want - want_before[kw]
        assert np.abs(want_change).max() > 0, k  # every parameter (and moving stat) moved
        np.testing.assert_allclose(change, want_change, rtol=2e-2,
                                   atol=2e-2 * np.abs(want_change).max(), err_msg=k)
