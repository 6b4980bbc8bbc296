"""Training with the legacy Module API against MXNet 1.9.1 (issue 14).

tests/golden/module/module_train_script.py is MXNet 1.x user code (Module.fit with eval_data,
Speedometer / log_train_metric / do_checkpoint callbacks, then score and predict; a BatchNorm
MLP stepped with forward_backward + update, get_input_grads, save_checkpoint with optimizer
states and Module.load of them; backward(out_grads) through a head without a loss;
LinearRegressionOutput with grad_scale under Adam, SoftmaxOutput with normalization='valid'
and an ignored label).
gen_module_train.py ran it in MXNet 1.9.1 from the seeded initial parameters it saved; here the
same text runs with ``import gluonport as mx`` and every recorded value must match.

Arrays: |ours - mxnet| <= 1e-4 * |mxnet| + 1e-5 * max(1, max |mxnet|). Float32 sums run in
another order here (numpy matmul vs MXNet's oneDNN FullyConnected), a few ulps per step that
SGD with momentum carries over 10 steps; the parameters stay within 1e-5 relative in practice
(measured: see the report), the 1e-4 leaves room for BLAS differences between machines.
Strings (the log lines, with times and speeds masked, file names, output names) and metric
values are compared exactly (metrics to 1e-6: the accuracies are counts over 8-40 samples, the
cross-entropy a float64 mean of float32 values).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                    "module")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("module_train")
    os.makedirs(work / "fit")
    os.makedirs(work / "steps")
    script = load_ported(os.path.join(HERE, "module_train_script.py"))
    return script.run(HERE, str(work))


@pytest.fixture(scope="module")
def golden() -> dict:
    with np.load(os.path.join(HERE, "module_train_golden.npz")) as z:
        return {k: z[k] for k in z.files}


def _close(key: str, got: np.ndarray, want: np.ndarray, rtol: float = 1e-4,
           atol: float = 1e-5) -> None:
    assert got.shape == want.shape, f"{key}: shape {got.shape} vs MXNet {want.shape}"
    assert got.dtype == want.dtype, f"{key}: dtype {got.dtype} vs MXNet {want.dtype}"
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, err_msg=key)


def test_recorded_names_match(results, golden):
    assert sorted(results) == sorted(golden)


@pytest.mark.parametrize("part", ["fit", "steps", "nohead", "heads"])
def test_values_match_mxnet(results, golden, part):
    keys = [k for k in golden if k.startswith(part + ":")]
    assert keys
    for key in keys:
        got, want = np.asarray(results[key]), golden[key]
        if want.dtype.kind in "US":
            assert got.tolist() == want.tolist(), key
        elif want.ndim == 0:  # a metric value
            np.testing.assert_allclose(float(got), float(want), rtol=1e-6, err_msg=key)
        else:
            _close(key, got, want)


def test_training_changed_the_parameters(golden):
    """The goldens are not a no-op: the parameters move, BatchNorm's moving mean moves with
    training-mode steps and not with a predict-mode forward."""
    assert not np.allclose(golden["fit:epoch0:arg:fc1_weight"],
                           golden["fit:epoch1:arg:fc1_weight"])
    assert not np.allclose(golden["steps:0:bn1_moving_mean"], golden["steps:1:bn1_moving_mean"])
    np.testing.assert_array_equal(golden["steps:eval_bn1_moving_mean"],
                                  golden["steps:orig:bn1_moving_mean"])
    for name in ("fc1_weight", "bn1_gamma", "bn1_moving_var"):
        np.testing.assert_allclose(golden[f"steps:orig:{name}"], golden[f"steps:loaded:{name}"],
                                   rtol=1e-6)


def _mlp(num_hidden: int = 4):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=num_hidden, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _batch(n: int = 4):
    rs = np.random.RandomState(0)
    return mx.io.DataBatch([mx.nd.array(rs.uniform(-1, 1, (n, 3)))],
                           [mx.nd.array(rs.randint(0, 4, n).astype("float32"))])


def test_step_equals_manual_sgd():
    """forward_backward + update is one SGD step with rescale_grad = 1/batch_size on the
    SoftmaxOutput gradient (softmax - onehot), wd on the weight only (MXNet's wd_mult 0 for
    names not ending in _weight/_gamma)."""
    mod = mx.mod.Module(_mlp())
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "wd": 0.01})
    w0, b0 = (mod.get_params()[0][n].asnumpy().copy() for n in ("fc_weight", "fc_bias"))
    batch = _batch()
    mod.forward_backward(batch)
    x, y = batch.data[0].asnumpy(), batch.label[0].asnumpy().astype(int)
    z = x @ w0.T + b0
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), p, rtol=1e-5)
    g = p - np.eye(4)[y]
    mod.update()
    w1, b1 = (mod.get_params()[0][n].asnumpy() for n in ("fc_weight", "fc_bias"))
    np.testing.assert_allclose(w1, w0 - 0.1 * (g.T @ x / 4 + 0.01 * w0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b1, b0 - 0.1 * g.sum(0) / 4, rtol=1e-5, atol=1e-7)


def test_fixed_params_and_grad_req_add():
    mod = mx.mod.Module(_mlp(), fixed_param_names=["fc_bias"])
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))], grad_req="add")
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.0})
    b0 = mod.get_params()[0]["fc_bias"].asnumpy().copy()
    batch = _batch()
    mod.forward_backward(batch)
    once = mod._exec.grad_dict["fc_weight"].asnumpy().copy()
    mod.forward_backward(batch)
    np.testing.assert_allclose(mod._exec.grad_dict["fc_weight"].asnumpy(), 2 * once, rtol=1e-6)
    assert "fc_bias" not in mod._exec.grad_dict
    mod.update()
    np.testing.assert_array_equal(mod.get_params()[0]["fc_bias"].asnumpy(), b0)


def test_reshape_keeps_parameters_and_optimizer():
    mod = mx.mod.Module(_mlp())
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    mod.forward_backward(_batch(4))
    mod.update()
    w = mod.get_params()[0]["fc_weight"].asnumpy().copy()
    mod.forward_backward(_batch(2))  # another batch size re-binds
    assert mod.data_shapes[0].shape == (2, 3)
    mod.update()
    assert mod.get_outputs()[0].shape == (2, 4)
    assert not np.allclose(mod.get_params()[0]["fc_weight"].asnumpy(), w)


def test_errors_are_clear():
    mod = mx.mod.Module(_mlp())
    with pytest.raises(GluonportError, match="num_epoch"):
        mod.fit(mx.io.NDArrayIter(np.zeros((4, 3)), np.zeros(4), batch_size=2))
    with pytest.raises(GluonportError, match="for_training"):
        mod.bind([("data", (4, 3))], for_training=False, inputs_need_grad=True)
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))], for_training=False)
    mod.init_params()
    with pytest.raises(GluonportError, match="for_training=True"):
        mod.backward()
    with pytest.raises(GluonportError, match="init_optimizer"):
        mod.update()
    with pytest.raises(GluonportError, match="inputs_need_grad"):
        mod.get_input_grads()
    train = mx.mod.Module(_mlp())
    train.bind([("data", (4, 3))], [("softmax_label", (4,))])
    train.init_params()
    with pytest.raises(GluonportError, match="is_train=True"):
        train.backward()
    with pytest.raises(GluonportError, match="optimizer must be"):
        train.init_optimizer(optimizer=3)
    with pytest.raises(GluonportError, match="kvstore must be"):
        train.init_optimizer(kvstore=3)
    with pytest.raises(GluonportError, match="monitor"):
        train.install_monitor(object())


@pytest.mark.parametrize("update_on_kvstore", ["1", "0"])
def test_kvstore_object_gives_the_same_steps(monkeypatch, update_on_kvstore):
    """A KVStore object (updates on the store, or with MXNET_UPDATE_ON_KVSTORE=0 a pushpull of
    the gradients and the module's updater) steps as the updater in the module does."""
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", update_on_kvstore)
    weights = []
    for kv in (None, mx.kv.create("local")):
        mod = mx.mod.Module(_mlp())
        mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
        mod.init_params(mx.init.Constant(0.2))
        mod.init_optimizer(kvstore=kv, optimizer="sgd",
                           optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
        assert mod._update_on_kvstore == (kv is not None and update_on_kvstore == "1")
        for _ in range(3):
            mod.forward_backward(_batch())
            mod.update()
        weights.append(mod.get_params()[0]["fc_weight"].asnumpy())
    np.testing.assert_allclose(weights[1], weights[0], rtol=1e-6)
    assert not np.allclose(weights[0], 0.2)


def test_shared_module_shares_parameters_and_optimizer():
    """bind(shared_module=...) (BucketingModule's way): the same parameter arrays and
    optimizer, so a step in one module is seen by the other."""
    base = mx.mod.Module(_mlp())
    base.bind([("data", (4, 3))], [("softmax_label", (4,))])
    base.init_params(mx.init.Uniform(0.5))
    base.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    other = mx.mod.Module(_mlp())
    other.bind([("data", (2, 3))], [("softmax_label", (2,))], shared_module=base)
    assert other.params_initialized and other.optimizer_initialized
    before = base.get_params()[0]["fc_weight"].asnumpy().copy()
    other.forward_backward(_batch(2))
    other.update()
    base.forward(_batch(4), is_train=False)
    after = base._exec.arg_dict["fc_weight"].asnumpy()
    assert not np.allclose(after, before)
    np.testing.assert_array_equal(after, other._exec.arg_dict["fc_weight"].asnumpy())


def test_trained_checkpoint_runs_everywhere(tmp_path):
    """After fit, save_checkpoint gives a pair that SymbolBlock.imports and gluonport.load run
    to the module's own predictions."""
    rs = np.random.RandomState(1)
    x = rs.uniform(-1, 1, (16, 3)).astype("float32")
    y = (x[:, 0] > 0).astype("float32")
    it = mx.io.NDArrayIter(x, y, batch_size=4, label_name="softmax_label")
    mod = mx.mod.Module(_mlp(2))
    mod.fit(it, optimizer_params={"learning_rate": 0.5}, num_epoch=2,
            initializer=mx.init.Xavier())
    want = mod.predict(it).asnumpy()
    prefix = str(tmp_path / "trained")
    mod.save_checkpoint(prefix, 2)
    net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0002.params")
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    back = mx.mod.Module.load(prefix, 2)
    back.bind([("data", (4, 3))], for_training=False)
    np.testing.assert_allclose(back.predict(it).asnumpy(), want, rtol=1e-5, atol=1e-6)
