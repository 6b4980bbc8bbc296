"""``_backward_BatchNorm_train_forward`` (gluonport's: BatchNorm's training-mode normalisation
as one node, gluonport/ops/nn/norm_train.py) and its backward kernel, against the fused
``BatchNorm`` op in training mode and its ``_backward_BatchNorm`` kernel (checked against MXNet
1.9.1 in tests/ops/test_train_mode.py): numpy kernels and ONNX lowerings (exported forward and
backward graphs run by onnxruntime). Tolerances: float64 rtol 1e-9 / atol 1e-11 between the
numpy kernels (the same math, other order), float32 rtol 1e-4 / atol 1e-5 (float32 rounding of
the reductions) for onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from tests.ops._gradcheck import graph_grads, tape_grads

# (data shape, channel axis, fix_gamma): axis 1 lowers to BatchNormalization, others compose
CASES = [((4, 3, 5, 2), 1, False), ((4, 3, 5, 2), 1, True), ((6, 5, 3), -1, False),
         ((7, 4), 1, False)]


def _inputs(shape: tuple, axis: int, dtype: str) -> list[np.ndarray]:
    rs = np.random.RandomState(0)
    c = shape[axis]
    x = rs.normal(1.5, 2.0, shape)  # an offset mean: the centring matters
    return [a.astype(dtype) for a in (x, rs.uniform(0.5, 1.5, c), rs.normal(size=c))]


def _fused(xs: list[np.ndarray], attrs: dict, head: np.ndarray):
    """BatchNorm in training mode (the fused kernels): output and batch mean, the biased
    variance from numpy, and the gradients of data, gamma, beta (``_backward_BatchNorm``)."""
    c = xs[1].shape
    ins = xs + [np.zeros(c, xs[0].dtype), np.ones(c, xs[0].dtype)]
    with mx.autograd.train_mode():
        out, mean, _ = mx.nd.invoke("BatchNorm", [mx.nd.array(x, dtype=x.dtype) for x in ins],
                                    {**attrs, "output_mean_var": True})
    axes = tuple(a for a in range(xs[0].ndim) if a != attrs["axis"] % xs[0].ndim)
    grads = tape_grads("BatchNorm", ins, attrs, [head], train=True)
    return out.asnumpy(), mean.asnumpy(), xs[0].var(axis=axes), grads[:3]


@pytest.mark.parametrize("shape, axis, fix_gamma", CASES)
def test_kernels_equal_fused_batchnorm(shape, axis, fix_gamma):
    attrs = {"axis": axis, "fix_gamma": fix_gamma, "eps": 1e-3}
    xs = _inputs(shape, axis, "float64")
    head = np.random.RandomState(5).normal(size=shape)
    want_out, want_mean, want_var, want_grads = _fused(xs, attrs, head)
    got = mx.nd.invoke("_backward_BatchNorm_train_forward", [mx.nd.array(x, dtype=x.dtype)
                                                             for x in xs], attrs)
    tol = {"rtol": 1e-9, "atol": 1e-11}
    for g, w in zip(got, (want_out, want_mean, want_var)):
        np.testing.assert_allclose(g.asnumpy(), w, **tol)
    grads = tape_grads("_backward_BatchNorm_train_forward", xs, attrs, [head])
    for i, (g, w) in enumerate(zip(grads, want_grads)):
        np.testing.assert_allclose(g, w, err_msg=f"input {i}", **tol)
    if fix_gamma:
        assert not grads[1].any()
    else:
        assert np.abs(grads[1]).max() > 1e-3  # the data moved gamma's gradient


@pytest.mark.parametrize("shape, axis, fix_gamma", CASES)
def test_onnx_lowerings_equal_the_kernels(shape, axis, fix_gamma):
    attrs = {"axis": axis, "fix_gamma": fix_gamma, "eps": 1e-3}
    xs = _inputs(shape, axis, "float32")
    head = np.random.RandomState(5).normal(size=shape).astype("float32")
    case = {"op": "_backward_BatchNorm_train_forward", "attrs": attrs}
    zeros = [np.zeros(shape[axis], "float32")] * 2  # the mean/var heads are ignored
    want = graph_grads(case, xs, [head] + zeros, backend="numpy")
    got = graph_grads(case, xs, [head] + zeros, backend="onnx")
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"input {i}")
    assert np.abs(want[0]).max() > 1e-2
