"""gluon.nn.BatchNormReLU and the _contrib_BatchNormWithReLU op behind it, against MXNet 1.9.1:
tests/golden/bn_relu/bn_relu_script.py, written for MXNet, runs with only its import changed and
gives MXNet's parameter names and shapes, repr, outputs (imperative, training mode, hybridized;
rtol 1e-5 / atol 1e-6), a byte-identical exported symbol file, and BatchNorm weights loading
into BatchNormReLU."""

import os

import numpy as np
import pytest

import gluonport as mx
from tests._ported import load_golden, load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "bn_relu")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    module = load_ported(os.path.join(HERE, "bn_relu_script.py"))
    return module.run(str(tmp_path_factory.mktemp("bn_relu")))


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict]:
    return load_golden(os.path.join(HERE, "bn_relu_golden"))


def test_outputs_match_mxnet(results, golden):
    arrays, _ = golden
    assert sorted(k for k, v in results.items() if isinstance(v, np.ndarray)) == sorted(arrays)
    for name, want in arrays.items():
        got = results[name]
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
        assert (want == 0).any() and (want > 0).any(), f"{name}: ReLU not exercised"


def test_names_repr_and_export_match_mxnet(results, golden):
    _, facts = golden
    assert sorted(k for k, v in results.items() if not isinstance(v, np.ndarray)) == \
        sorted(facts)
    for name, want in facts.items():
        assert results[name] == want, name


def test_batchnormrelu_is_exported_in_the_namespace():
    assert mx.gluon.nn.BatchNormReLU.__name__ == "BatchNormReLU"
    assert "BatchNormReLU" in mx.gluon.nn.__all__
    layer = mx.gluon.nn.BatchNormReLU(axis=-1, in_channels=3)
    layer.initialize()
    x = mx.nd.array(np.random.RandomState(1).uniform(-2, 2, (2, 5, 3)))
    want = mx.nd.relu(mx.nd.BatchNorm(x, *(p.data() for p in (layer.gamma, layer.beta,
                                                               layer.running_mean,
                                                               layer.running_var)),
                                      axis=-1, eps=1e-5, fix_gamma=False))
    np.testing.assert_array_equal(layer(x).asnumpy(), want.asnumpy())
