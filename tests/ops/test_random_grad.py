"""sample_multinomial's gradient with ``get_prob=True`` (MXNet 1.9.1's
``_backward_sample_multinomial``): ``ograd / p`` added at each drawn category of the row.

MXNet's golden gradient cannot serve here (it lands on MXNet's own draws), so the tape's
gradient is checked against the formula applied to the samples gluonport drew, and the kernel
against a hand-computed case and onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd


@pytest.mark.parametrize("dtype, shape", [("float32", (5,)), ("float64", (2, 3))])
def test_multinomial_prob_gradient_on_tape(dtype, shape):
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=dtype)
    data = mx.nd.array(probs, dtype=dtype)
    data.attach_grad()
    head = np.random.RandomState(0).normal(size=(2,) + shape).astype(dtype)
    with autograd.record():
        samples, logp = mx.nd.sample_multinomial(data, shape=shape, get_prob=True)
    logp.backward(mx.nd.array(head, dtype=dtype))
    drawn = samples.asnumpy().astype(np.int64).reshape(2, -1)
    want = np.zeros_like(probs)
    for i in range(2):
        for j, k in enumerate(drawn[i]):
            want[i, k] += head.reshape(2, -1)[i, j] / probs[i, k]
    np.testing.assert_allclose(data.grad.asnumpy(), want, rtol=1e-6)
    assert data.grad.dtype == np.dtype(dtype)


def test_multinomial_backward_kernel_by_hand():
    og = mx.nd.array([[1.0, 2.0], [3.0, -1.0]])
    p = mx.nd.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])
    s = mx.nd.array([[1, 1], [2, 0]], dtype="int32")
    got = mx.nd._internal._backward_sample_multinomial(og, p, s).asnumpy()
    np.testing.assert_allclose(got, [[0, 12, 0], [-10, 0, 3.75]], rtol=1e-6)
    # without get_prob MXNet gives zero (MakeZeroGradNodes)
    data = mx.nd.array([[0.2, 0.8]])
    data.attach_grad()
    with autograd.record():
        out = mx.nd.sample_multinomial(data, shape=(3,), dtype="float32")
    out.backward()
    assert not data.grad.asnumpy().any()


def test_multinomial_backward_onnx():
    pytest.importorskip("onnxruntime")
    from gluonport.onnx import export_symbol
    from tests.onnx._export_check import run_ort

    sym = mx.sym._internal._backward_sample_multinomial(
        mx.sym.var("og"), mx.sym.var("p"), mx.sym.var("s"))
    feed = {"og": np.array([[1.0, 2.0], [3.0, -1.0]], np.float32),
            "p": np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]], np.float32),
            "s": np.array([[1, 1], [2, 0]], np.int32)}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()},
                          in_types={k: v.dtype for k, v in feed.items()})
    np.testing.assert_allclose(run_ort(model, feed)[0], [[0, 12, 0], [-10, 0, 3.75]], rtol=1e-6)
