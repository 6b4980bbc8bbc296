"""gluon.contrib.nn: the layers' own semantics (their exports against MXNet's bytes are in
test_export_bytes.py, nets ``contrib_*``). Exact comparisons: these are data movements."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport.gluon import nn
from gluonport.gluon.contrib import nn as cnn

from . import _golden as G


@pytest.mark.parametrize("layer, shape, out_shape", [
    (cnn.PixelShuffle1D(2), (1, 8, 3), (1, 4, 6)),           # MXNet's docstring examples
    (cnn.PixelShuffle2D((2, 3)), (1, 12, 3, 5), (1, 2, 6, 15)),
    (cnn.PixelShuffle3D((2, 3, 4)), (1, 48, 3, 5, 7), (1, 2, 6, 15, 28)),
])
def test_pixel_shuffle_matches_reference(layer, shape, out_shape):
    x = G.shared.make_input(shape)
    got = layer(mx.nd.array(x)).asnumpy()
    assert got.shape == out_shape
    factors = [out_shape[i] // shape[i] for i in range(2, len(shape))]
    n, c = out_shape[:2]
    # channel index c*prod(f) + (i1, i2, ...) in row-major order lands at offset i_k of axis k
    ref = x.reshape(n, c, *factors, *shape[2:])
    k = len(factors)
    axes = [0, 1] + [a for pair in zip(range(2 + k, 2 + 2 * k), range(2, 2 + k)) for a in pair]
    ref = ref.transpose(axes).reshape(out_shape)
    np.testing.assert_array_equal(got, ref)
    layer.hybridize()
    np.testing.assert_array_equal(layer(mx.nd.array(x)).asnumpy(), ref)


def test_concurrent_concatenates_children():
    net = cnn.Concurrent(axis=1)
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4), nn.Dense(2, in_units=4), cnn.Identity())
    net.initialize()
    x = mx.nd.array(G.shared.make_input((2, 4)))
    parts = [child(x).asnumpy() for child in net._children.values()]
    np.testing.assert_array_equal(net(x).asnumpy(), np.concatenate(parts, axis=1))
    assert net(x).shape == (2, 9)


@pytest.mark.parametrize("backend", ["numpy", "onnxruntime"])
def test_hybrid_concurrent_hybridized_equals_eager(backend):
    net = cnn.HybridConcurrent(axis=-1)
    with net.name_scope():
        net.add(nn.Dense(3), cnn.Identity())
    net.initialize()
    x = mx.nd.array(G.shared.make_input((2, 4)))
    eager = net(x).asnumpy()
    net.hybridize(backend=backend)
    hybrid = net(x).asnumpy()
    assert eager.shape == hybrid.shape == (2, 7)
    np.testing.assert_array_equal(eager[:, 3:], x.asnumpy())
    np.testing.assert_array_equal(hybrid[:, 3:], x.asnumpy())  # the concatenation: exact
    if backend == "numpy":  # the same kernels as eager: bit for bit
        np.testing.assert_array_equal(hybrid, eager)
    else:  # the Dense is onnxruntime's Gemm, whose float32 sums may round apart from numpy's
        # matmul in the last bit (onnxruntime 1.19's do here)
        np.testing.assert_allclose(hybrid[:, :3], eager[:, :3], rtol=1e-6, atol=1e-7)


def test_sync_batchnorm_is_batchnorm_at_inference():
    x = mx.nd.array(G.shared.make_input((2, 3, 4, 4)))
    with pytest.warns(UserWarning, match="num_devices"):
        sync = cnn.SyncBatchNorm()
    plain = nn.BatchNorm()
    for block in (sync, plain):
        block.initialize()
        block(x)
    for p_sync, p_plain in zip(sync.params.values(), plain.params.values()):
        p_plain.set_data(G.shared.make_weights([(p_sync.name, p_sync.shape)])[p_sync.name])
        p_sync.set_data(p_plain.data())
    np.testing.assert_allclose(sync(x).asnumpy(), plain(x).asnumpy(), rtol=1e-6, atol=1e-6)
    assert sync._kwargs["ndev"] == 1 and sync._kwargs["key"] == sync.prefix
