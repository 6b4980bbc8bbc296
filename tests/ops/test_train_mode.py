"""Training-mode semantics against MXNet 1.9.1 (issue 14).

* BatchNorm's moving statistics (``tests/golden/ops/train_mode.npz``, made by
  ``tests/golden/ops/gen_train_mode.py``): MXNet updates ``moving_mean``/``moving_var`` in its
  backward pass, in place, with ``moving * momentum + batch * (1 - momentum)`` (biased batch
  variance); a forward pass alone, predict mode and ``use_global_stats`` leave them alone.
  Checked on ``nd`` arrays (BatchNorm, SyncBatchNorm, BatchNormWithReLU; float16/32/64) and on a
  ``gluon.nn.BatchNorm`` block over two steps, imperative and hybridized. Tolerances: moving
  statistics rtol 1e-5 (float32 arithmetic, same formula; 1e-4 for float16 data), gradients
  rtol 1e-4 / atol 1e-5 (float32 accumulation order), float16 data gradients at 2e-3.
* The norm family's ``TRAIN_CASES`` gradients (batch statistics) against MXNet's
  (``grad_norm.npz``) through the tape and through the backward graph, and against float64
  finite differences of the training-mode forward.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonport as mx
from tests.ops import cases_norm
from tests.ops._gradcheck import (
    GOLDEN_DIR,
    check_grad_golden,
    check_grad_graph,
    check_grad_numeric,
    load_grad_golden,
    make_inputs,
)

_PATH = os.path.join(GOLDEN_DIR, "train_mode.npz")
GOLDEN = dict(np.load(_PATH)) if os.path.exists(_PATH) else {}

# name -> (op, attrs, train_mode), as gen_train_mode.py's CASES
STAT_CASES = {
    "bn4d": ("BatchNorm", {"fix_gamma": False}, True),
    "bn4d_fix_gamma": ("BatchNorm", {}, True),
    "bn2d_momentum": ("BatchNorm", {"fix_gamma": False, "momentum": 0.7}, True),
    "bn3d_axis_neg1": ("BatchNorm", {"fix_gamma": False, "axis": -1, "eps": 0.01}, True),
    "bn_f64": ("BatchNorm", {"fix_gamma": False}, True),
    "bn_f16": ("BatchNorm", {"fix_gamma": False}, True),
    "bn_global_stats": ("BatchNorm", {"fix_gamma": False, "use_global_stats": True}, True),
    "bn_predict_mode": ("BatchNorm", {"fix_gamma": False}, False),
    "sync_bn": ("_contrib_SyncBatchNorm", {"fix_gamma": False, "key": "g0"}, True),
    "bn_relu": ("_contrib_BatchNormWithReLU", {"fix_gamma": False}, True),
}


def _g(key: str) -> np.ndarray:
    if not GOLDEN:
        pytest.skip("tests/golden/ops/train_mode.npz is missing")
    return GOLDEN[key]


@pytest.mark.parametrize("name", sorted(STAT_CASES))
def test_moving_statistics(name):
    op, attrs, train = STAT_CASES[name]
    ins = [_g(f"{name}/in{i}") for i in range(5)]
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in ins]
    for a in arrays[:3]:
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        y = mx.nd.invoke(op, arrays, dict(attrs))
    # the forward pass alone leaves the moving statistics alone, as MXNet's
    np.testing.assert_array_equal(arrays[3].asnumpy(), _g(f"{name}/fwd_mean"))
    np.testing.assert_array_equal(arrays[4].asnumpy(), _g(f"{name}/fwd_var"))
    hg = _g(f"{name}/hg")
    mx.autograd.backward([y], [mx.nd.array(hg, dtype=hg.dtype)], train_mode=train)
    # float16 data: MXNet's batch variance comes back through a float32 inverse std computed
    # in its own order; 3e-5 apart here
    stat_tol = 1e-4 if ins[0].dtype == np.float16 else 1e-5
    for k, key in ((3, "mean"), (4, "var")):
        got = arrays[k].asnumpy()
        assert got.dtype == ins[k].dtype
        np.testing.assert_allclose(got, _g(f"{name}/{key}"), rtol=stat_tol, atol=1e-7,
                                   err_msg=f"{name}: moving {key} after backward")
    tol = 2e-3 if ins[0].dtype == np.float16 else 1e-4
    for i in range(3):
        np.testing.assert_allclose(arrays[i].grad.asnumpy(), _g(f"{name}/grad{i}"), rtol=tol,
                                   atol=tol / 10, err_msg=f"{name}: gradient of input {i}")


def test_moving_statistics_untouched_without_backward():
    """Recording in training mode without a backward pass, or training mode without
    recording: MXNet's forward kernel does not write the moving statistics."""
    ins = [_g(f"bn4d/in{i}") for i in range(5)]
    arrays = [mx.nd.array(a) for a in ins]
    with mx.autograd.train_mode():
        mx.nd.BatchNorm(*arrays, fix_gamma=False)
    arrays[0].attach_grad()
    with mx.autograd.record():
        mx.nd.BatchNorm(*arrays, fix_gamma=False)
    np.testing.assert_array_equal(arrays[3].asnumpy(), ins[3])
    np.testing.assert_array_equal(arrays[4].asnumpy(), ins[4])


@pytest.mark.parametrize("name, hybridize", [("gluon_bn", False), ("gluon_bn_hybrid", True),
                                             ("gluon_sync_bn", False),
                                             ("gluon_sync_bn_hybrid", True)])
def test_gluon_batchnorm_block(name, hybridize):
    if "sync" in name:  # one device: SyncBatchNorm trains as BatchNorm, as in MXNet
        net = mx.gluon.contrib.nn.SyncBatchNorm(momentum=0.8, in_channels=3, num_devices=1)
    else:
        net = mx.gluon.nn.BatchNorm(momentum=0.8, in_channels=3)
    net.initialize()
    if hybridize:
        net.hybridize()
    for step in range(2):
        x = mx.nd.array(_g(f"{name}/x{step}"))
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        y.backward(mx.nd.array(_g(f"{name}/hg{step}")))
        np.testing.assert_allclose(net.running_mean.data().asnumpy(), _g(f"{name}/mean{step}"),
                                   rtol=1e-5, atol=1e-7, err_msg=f"running_mean, step {step}")
        np.testing.assert_allclose(net.running_var.data().asnumpy(), _g(f"{name}/var{step}"),
                                   rtol=1e-5, atol=1e-7, err_msg=f"running_var, step {step}")
        np.testing.assert_allclose(x.grad.asnumpy(), _g(f"{name}/grad{step}"), rtol=1e-4,
                                   atol=1e-5, err_msg=f"data gradient, step {step}")


def test_executor_forward_backward_updates_aux():
    """A bound graph (``simple_bind``, the Module API's path): ``forward(is_train=True)`` leaves
    the moving statistics alone and ``backward`` updates the executor's aux arrays, as MXNet."""
    y = mx.sym.BatchNorm(mx.sym.var("x"), mx.sym.var("g"), mx.sym.var("b"), fix_gamma=False,
                         momentum=0.7, eps=0.01, name="bn")
    ex = y.simple_bind(mx.cpu(), x=(4, 3, 2), grad_req="write")
    ex.arg_dict["g"][:] = mx.nd.array(_g("executor_bn/g"))
    ex.arg_dict["b"][:] = mx.nd.array(_g("executor_bn/b"))
    ex.aux_dict["bn_moving_var"][:] = 1
    for step in range(2):
        ex.arg_dict["x"][:] = mx.nd.array(_g(f"executor_bn/x{step}"))
        ex.forward(is_train=True)
        np.testing.assert_allclose(ex.aux_dict["bn_moving_mean"].asnumpy(),
                                   _g(f"executor_bn/fwd_mean{step}"), rtol=1e-5, atol=1e-7)
        ex.backward(mx.nd.array(_g(f"executor_bn/hg{step}")))
        for key in ("mean", "var"):
            np.testing.assert_allclose(ex.aux_dict[f"bn_moving_{key}"].asnumpy(),
                                       _g(f"executor_bn/{key}{step}"), rtol=1e-5, atol=1e-7,
                                       err_msg=f"moving {key}, step {step}")
        for arg in ("x", "g", "b"):
            np.testing.assert_allclose(ex.grad_dict[arg].asnumpy(),
                                       _g(f"executor_bn/grad_{arg}{step}"), rtol=1e-4,
                                       atol=1e-5, err_msg=f"gradient of {arg}, step {step}")


# --- the norm family's training rows ---------------------------------------------------------
TRAIN_ROWS = [pytest.param(c, id=c["name"]) for c in cases_norm.TRAIN_CASES]
_GRADS = load_grad_golden("norm")


@pytest.mark.parametrize("case", TRAIN_ROWS)
def test_train_rows_golden(case):
    if case["name"] not in _GRADS:
        pytest.skip("no MXNet gradient recorded for this row")
    check_grad_golden(case, _GRADS, train=True)


@pytest.mark.parametrize("case", TRAIN_ROWS)
def test_train_rows_graph(case):
    """The backward graph (F = sym) on the numpy executor, in training mode."""
    if case["name"] not in _GRADS:
        pytest.skip("no MXNet gradient recorded for this row")
    check_grad_graph(case, _GRADS, train=True)


@pytest.mark.parametrize("case", TRAIN_ROWS)
def test_train_rows_numeric(case):
    """Finite differences of the training-mode forward (batch statistics). The rows read the
    mean/var outputs, whose head gradients MXNet ignores, so only the data output is
    differentiated here (``output_mean_var`` off)."""
    attrs = {k: v for k, v in case.get("attrs", {}).items() if k != "output_mean_var"}
    check_grad_numeric(case["op"], make_inputs(case), attrs, train=True, rtol=1e-5, atol=1e-7)


# --- RNN dropout between layers ----------------------------------------------------------------
def _rnn_inputs(mode: str = "lstm", layers: int = 2, bidirectional: bool = True):
    from tests.ops.cases_rnn import _case

    case = _case("rnn_dropout", mode, layers, bidirectional, dtype="float64", p=0.4)
    return case, make_inputs(case)


def _rnn_forward_backward(case, inputs, seed: int, hgs: list[np.ndarray] | None = None):
    mx.random.seed(seed)
    arrays = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record(train_mode=True):
        outs = mx.nd.invoke("RNN", arrays, dict(case["attrs"]))
    if hgs is not None:
        mx.autograd.backward(outs, [mx.nd.array(h, dtype=h.dtype) for h in hgs])
    return [o.asnumpy() for o in outs], [a.grad.asnumpy() for a in arrays]


def test_rnn_dropout_between_layers_only_in_training():
    """MXNet's RNN applies dropout p to the outputs of every layer but the last, in training
    mode only: inference ignores p; training drops about p of the first layer's outputs."""
    case, inputs = _rnn_inputs()
    attrs = dict(case["attrs"])
    infer = mx.nd.invoke("RNN", [mx.nd.array(x, dtype=x.dtype) for x in inputs], attrs)
    no_p = mx.nd.invoke("RNN", [mx.nd.array(x, dtype=x.dtype) for x in inputs],
                        {**attrs, "p": 0.0})
    np.testing.assert_array_equal(infer[0].asnumpy(), no_p[0].asnumpy())
    train, _ = _rnn_forward_backward(case, inputs, seed=1)
    assert not np.allclose(train[0], infer[0].asnumpy())
    from gluonport.ops.nn.rnn import dropout_masks

    with mx.autograd.train_mode():
        outs = mx.nd.invoke("RNN", [mx.nd.array(x, dtype=x.dtype) for x in inputs], attrs)
    from gluonport.ops import registry

    p = registry.get("RNN").parse({k: str(v) for k, v in attrs.items()})
    masks = dropout_masks(p, outs[0]._data)
    assert masks is not None and len(masks) == 1  # two layers: one boundary
    kept = np.mean(masks[0] > 0)
    assert 0.45 < kept < 0.75, kept  # 1 - p = 0.6 of 2 * 3 * 4 * 5 = 120 draws
    np.testing.assert_allclose(np.unique(masks[0]), [0.0, 1 / 0.6])


def test_rnn_dropout_gradient_uses_the_forward_masks():
    """With the masks fixed (the same seed before every forward call), the tape's gradient of
    a 2-layer bidirectional LSTM with dropout equals float64 central differences."""
    case, inputs = _rnn_inputs()
    outs, _ = _rnn_forward_backward(case, inputs, seed=3)
    rng = np.random.RandomState(0)
    hgs = [rng.normal(size=o.shape) for o in outs]
    _, grads = _rnn_forward_backward(case, inputs, seed=3, hgs=hgs)

    def objective(arrays):
        got, _ = _rnn_forward_backward(case, arrays, seed=3)
        return sum(float(np.sum(h * o)) for h, o in zip(hgs, got))

    eps = 1e-6
    for i in (0, 2, 3):  # data, state, state_cell (parameters: 1,000+ entries, sampled below)
        num = np.zeros_like(inputs[i])
        for k in range(num.size):
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[i].reshape(-1)[k] += eps
            minus[i].reshape(-1)[k] -= eps
            num.reshape(-1)[k] = (objective(plus) - objective(minus)) / (2 * eps)
        np.testing.assert_allclose(grads[i], num, rtol=1e-5, atol=1e-7, err_msg=f"input {i}")
    for k in np.random.RandomState(1).choice(inputs[1].size, 40, replace=False):
        plus = [a.copy() for a in inputs]
        minus = [a.copy() for a in inputs]
        plus[1][k] += eps
        minus[1][k] -= eps
        num = (objective(plus) - objective(minus)) / (2 * eps)
        np.testing.assert_allclose(grads[1][k], num, rtol=1e-5, atol=1e-7)


def test_rnn_dropout_backward_graph_matches_tape():
    """The backward graph (F = sym, numpy executor, training mode) finds the masks of its
    forward run as the tape does: same seed, same gradients."""
    from tests.ops._gradcheck import graph_grads

    case, inputs = _rnn_inputs("gru", 3, False)
    outs, _ = _rnn_forward_backward(case, inputs, seed=5)
    hgs = [np.random.RandomState(2).normal(size=o.shape) for o in outs]
    _, want = _rnn_forward_backward(case, inputs, seed=5, hgs=hgs)
    mx.random.seed(5)
    got = graph_grads(case, inputs, hgs, train=True)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"input {i}")


_RNN_ROWS = [pytest.param(c, id=c["name"]) for c in __import__(
    "tests.ops.cases_rnn", fromlist=["CASES"]).CASES
    if c["op"] == "RNN" and "projection_size" not in c["attrs"]]


@pytest.mark.parametrize("case", _RNN_ROWS)
def test_rnn_training_forward_and_kept_activations(case):
    """Training mode runs the recursion that keeps its activations for the backward pass: its
    outputs equal the inference forward's (without dropout: bitwise), and the backward from the
    kept activations gives MXNet's gradients (grad_rnn.npz; rtol 1e-4 / atol 1e-5)."""
    attrs = {**case["attrs"], "p": 0.0}
    inputs = [mx.nd.array(x, dtype=x.dtype) for x in make_inputs(case)]
    infer = mx.nd.invoke("RNN", inputs, attrs)
    with mx.autograd.train_mode():
        train = mx.nd.invoke("RNN", inputs, attrs)
    for a, b in zip(infer if isinstance(infer, list) else [infer],
                    train if isinstance(train, list) else [train]):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    golden = load_grad_golden("rnn")
    if case["name"] not in golden or case.get("no_grad_golden"):
        pytest.skip(case.get("no_grad_golden", "no MXNet gradient recorded for this row"))
    check_grad_golden({**case, "attrs": attrs}, golden, train=True)
