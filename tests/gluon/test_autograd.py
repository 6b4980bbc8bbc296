"""``mx.autograd``'s state as model code reads it: tests/golden/autograd/autograd_script.py,
written for MXNet, runs with only the import changed and gives MXNet 1.9.1's flags in every
scope, and the same outputs from a block that branches on ``autograd.is_training()``: inference
(softmax) and training mode (raw scores, BatchNorm on batch statistics), imperative and
hybridized (rtol 1e-5 / atol 1e-6). Gradients are refused with a clear error."""

import json
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd
from gluonport.gluon import nn
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "autograd")


@pytest.fixture(scope="module")
def results() -> dict:
    return load_ported(os.path.join(HERE, "autograd_script.py")).run()


def test_matches_mxnet(results):
    with np.load(os.path.join(HERE, "autograd_golden.npz")) as z:
        for name in z.files:
            np.testing.assert_allclose(results[name], z[name], rtol=1e-5, atol=1e-6,
                                       err_msg=name)
    with open(os.path.join(HERE, "autograd_golden.json"), encoding="utf-8") as f:
        rest = json.load(f)
    assert json.loads(json.dumps({k: results[k] for k in rest})) == rest
    assert not autograd.is_recording() and not autograd.is_training()  # scopes restored


def test_dropout_drops_only_in_training_mode():
    drop = nn.Dropout(0.5)
    x = mx.nd.ones((64, 64))
    assert (drop(x).asnumpy() == 1).all()
    with autograd.record():
        y = drop(x).asnumpy()
    assert set(np.unique(y)) == {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6


def test_state_is_per_thread():
    import threading

    seen = []
    with autograd.record():
        t = threading.Thread(target=lambda: seen.append(autograd.is_recording()))
        t.start()
        t.join()
    assert seen == [False]
