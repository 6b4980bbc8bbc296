"""Module paths and behaviours that ported model code relies on (found by running GluonCV's
model code with ``mxnet`` mapped to ``gluonport``): ``from mxnet.gluon.block import
HybridBlock``, ``mx.base`` / ``mx.util`` names, unregistered user initializers that index the
array they fill, attributes given to ops without parameters, vision dataset classes that load
but refuse to run."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.gluon import nn


def test_block_module_exports_all_three_block_classes():
    from gluonport.gluon.block import Block, HybridBlock, SymbolBlock

    assert HybridBlock is mx.gluon.HybridBlock and SymbolBlock is mx.gluon.SymbolBlock
    assert issubclass(HybridBlock, Block)
    assert nn.HybridBlock is HybridBlock and nn.Block is Block


def test_base_and_util_names():
    from gluonport.base import MXNetError, integer_types, numeric_types, string_types

    assert MXNetError is mx.GluonportError is mx.MXNetError
    assert isinstance(np.float32(1), numeric_types) and isinstance(3, integer_types)
    assert isinstance("a", string_types)
    assert mx.util.is_np_array() is False and mx.util.is_np_shape() is False
    with pytest.raises(mx.GluonportError, match="NumPy-compatible mode"):
        mx.util.set_np()
    with pytest.raises(mx.GluonportError, match="NumPy-compatible mode"):
        mx.util.use_np(nn.Dense)
    with mx.util.np_shape(False):
        pass


class _UpsampleInit(mx.init.Initializer):
    """Not registered; fills a (C, 1, k, k) deconvolution weight element by element, the way
    GluonCV's BilinearUpSample does."""

    def _init_weight(self, _, arr):
        mx.nd.random.normal(0, 0.01, arr.shape, out=arr)
        f = int(np.ceil(arr.shape[2] / 2))
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        for i in range(arr.shape[2]):
            for j in range(arr.shape[3]):
                arr[0, 0, i, j] = (1 - abs(i / f - c)) * (1 - abs(j / f - c))
        for ch in range(1, arr.shape[0]):
            arr[ch, 0, :, :] = arr[0, 0, :, :]


def test_unregistered_initializer_object_fills_the_ndarray_itself():
    up = nn.Conv2DTranspose(3, kernel_size=4, strides=2, padding=1, groups=3, in_channels=3,
                            use_bias=False, weight_initializer=_UpsampleInit())
    up.initialize()
    w = up.weight.data().asnumpy()
    want = np.outer([0.25, 0.75, 0.75, 0.25], [0.25, 0.75, 0.75, 0.25])
    for ch in range(3):
        np.testing.assert_allclose(w[ch, 0], want, rtol=1e-6)


def test_ops_without_parameters_keep_unknown_attributes_as_mxnet():
    # MXNet 1.9.1 (checked in the oracle): zeros_like(x, dtype='int64') is float32, and the
    # attribute is stored in the symbol JSON; ops with parameters still refuse typos
    x = mx.nd.ones((2, 2))
    assert mx.nd.zeros_like(x, dtype="int64").dtype == np.float32
    s = mx.sym.zeros_like(mx.sym.var("x"), dtype="int64")
    assert '"attrs": {"dtype": "int64"}' in s.tojson()
    with pytest.raises(mx.errors.OpAttributeError, match="bogus"):
        mx.nd.Convolution(x.reshape((1, 1, 2, 2)), kernel=(1, 1), num_filter=1, bogus=1)


def test_vision_datasets_import_and_explain():
    from gluonport.gluon.data.vision import CIFAR10, ImageFolderDataset

    with pytest.raises(mx.GluonportError, match="never downloads"):
        CIFAR10(train=False)
    with pytest.raises(mx.GluonportError, match="image codec"):
        ImageFolderDataset("/data/images")
