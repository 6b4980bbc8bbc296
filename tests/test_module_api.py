"""The MXNet 1.x Module API for inference (``mx.mod.Module``, ``mx.io``): the script in
tests/golden/module/module_script.py, written for MXNet, runs with only its import changed and
returns what it returned in MXNet 1.9.1 (gen_module.py): an InsightFace-style embedding through
Module(label_names=None) + DataBatch (and a re-bind on a new batch size), a SoftmaxOutput
checkpoint through Module.load + predict over a padded NDArrayIter, and NDArrayIter's batches
for every last_batch_handle. Arrays: rtol 1e-4 / atol 1e-5 times the output's magnitude
(float32 sums in another order); everything else equal."""

import json
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError, ParameterError
from tests._ported import load_golden, load_ported

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
HERE = os.path.join(GOLDEN, "module")


@pytest.fixture(scope="module")
def results() -> dict:
    return load_ported(os.path.join(HERE, "module_script.py")).run(GOLDEN)


@pytest.fixture(scope="module")
def golden() -> tuple[dict, dict]:
    return load_golden(os.path.join(HERE, "module_golden"))


def test_arrays_match_mxnet(results, golden):
    arrays, _ = golden
    assert set(arrays) <= set(results)
    for name, want in arrays.items():
        got = results[name]
        assert got.shape == want.shape, name
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=name)


def test_everything_else_matches_mxnet(results, golden):
    _, rest = golden
    for name, want in rest.items():
        got = json.loads(json.dumps(results[name]))  # tuples -> lists, as stored
        assert got == want, name


def test_errors_are_clear():
    prefix = os.path.join(GOLDEN, "gluon", "legacy_softmax")
    sym, arg, aux = mx.model.load_checkpoint(prefix, 0)
    mod = mx.mod.Module(sym)
    with pytest.raises(GluonportError, match="call bind"):
        mod.set_params(arg, aux)
    with pytest.raises(GluonportError, match="data_names"):
        mx.mod.Module(sym, data_names=["image"])
    mod.bind([("data", (2, 4))], for_training=False)
    with pytest.raises(ParameterError, match="fc_bias is not presented"):
        mod.set_params({"fc_weight": arg["fc_weight"]}, {})
    with pytest.raises(ParameterError, match="not in the arguments"):
        mod.set_params({**arg, "stray": mx.nd.ones((1,))}, {})
    mod.set_params({"fc_weight": arg["fc_weight"]}, {}, allow_missing=True)  # rest: zeros
    np.testing.assert_array_equal(mod.get_params()[0]["fc_bias"].asnumpy(), np.zeros(3))
    mod.init_params(force_init=True)  # MXNet's default initializer, Uniform(0.01)
    weight = mod.get_params()[0]["fc_weight"].asnumpy()
    assert weight.shape == (3, 4) and 0 < np.abs(weight).max() <= 0.01
    with pytest.raises(GluonportError, match="num_epoch"):  # MXNet asserts it first
        mod.fit(None)
    with pytest.raises(GluonportError, match="2 data arrays"):
        mod.forward(mx.io.DataBatch([mx.nd.ones((2, 4)), mx.nd.ones((2, 4))]))


def test_save_checkpoint_round_trip(tmp_path):
    prefix = os.path.join(GOLDEN, "gluon", "legacy_softmax")
    mod = mx.mod.Module.load(prefix, 0)
    mod.bind([("data", (3, 4))], for_training=False)
    x = np.random.RandomState(0).uniform(-1, 1, (3, 4)).astype(np.float32)
    want = mod.predict(x).asnumpy()
    out = str(tmp_path / "copy")
    mod.save_checkpoint(out, 7)
    with open(prefix + "-symbol.json", "rb") as f, open(out + "-symbol.json", "rb") as g:
        assert f.read() == g.read()
    back = mx.mod.Module.load(out, 7)
    back.bind([("data", (3, 4))], for_training=False)
    np.testing.assert_array_equal(back.predict(x).asnumpy(), want)


def test_gpu_context_without_cuda_fails_loudly():
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this machine has CUDA: the gpu-marked runtime tests cover it")
    mod = mx.mod.Module.load(os.path.join(GOLDEN, "gluon", "legacy_softmax"), 0,
                             context=mx.gpu(0))
    mod.bind([("data", (2, 4))], for_training=False)
    with pytest.raises(mx.errors.DeviceError, match="CUDAExecutionProvider"):
        mod.forward(mx.io.DataBatch([mx.nd.ones((2, 4))]))
