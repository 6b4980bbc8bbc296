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


@pytest.mark.parametrize("name, hybridize", [("gluon_bn", False), ("gluon_bn_hybrid", True)])
def test_gluon_batchnorm_block(name, hybridize):
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
