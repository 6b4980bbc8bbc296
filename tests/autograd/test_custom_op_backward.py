"""Python custom ops take part in autograd (issue 14): ``CustomOp.backward`` runs as the
``Custom`` op's gradient (through ``_backward_Custom``) on the imperative tape, the executor's
backward graph and a hybridized block's.

tests/golden/custom_op/custom_grad_ops.py is MXNet 1.x code (a custom sigmoid reading
out_data, a custom softmax loss with need_top_grad=False declaring only label and output as
dependencies, an op that keeps state on ``self`` between forward and backward and branches on
is_train); gen_custom_grad.py recorded its results in MXNet 1.9.1. Tolerance rtol 1e-5 /
atol 1e-6 of the array's magnitude: float32, the same formulas (MXNet's FullyConnected sums in
another order; measured differences below 1.2e-7).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "custom_op")


@pytest.fixture(scope="module")
def ops():
    return load_ported(os.path.join(HERE, "custom_grad_ops.py"))


def test_gradients_match_mxnet(ops):
    got = ops.run()
    with np.load(os.path.join(HERE, "grad_golden.npz")) as z:
        want = {k: z[k] for k in z.files}
    assert sorted(got) == sorted(want)
    for key, ref in want.items():
        scale = max(1.0, float(np.abs(ref).max()))
        np.testing.assert_allclose(np.asarray(got[key]), ref, rtol=1e-5, atol=1e-6 * scale,
                                   err_msg=key)
    assert np.abs(want["nd_sigmoid_grad"]).max() > 0.1  # the goldens are not zeros


@mx.operator.register("_test_deps")
class _DepsProp(mx.operator.CustomOpProp):
    """Records what backward receives."""

    seen: dict = {}

    def __init__(self, top="True"):
        super().__init__(need_top_grad=top == "True")

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Deps()


class _Deps(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 3)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _DepsProp.seen = {"out_grad": out_grad[0] is not None, "req": list(req),
                          "in_data": in_data[0] is not None}
        self.assign(in_grad[0], req[0], mx.nd.ones(in_grad[0].shape) * 3)


@pytest.mark.parametrize("top", [True, False])
def test_declared_dependencies_and_req(top):
    x = mx.nd.array([[1.0, 2.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="_test_deps", top=str(top))
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3.0, 3.0]])
    assert _DepsProp.seen == {"out_grad": top, "req": ["write"], "in_data": True}


class _Net(mx.gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = mx.gluon.nn.Dense(4, in_units=3)

    def hybrid_forward(self, F, x):
        return F.Custom(self.dense(x), op_type="sigmoid_np")


def test_hybridized_block_trains_through_custom_op(ops):
    """The backward graph of a hybridized block calls the user's backward too: the same
    gradients as the imperative tape (exactly: the same numpy code runs)."""
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (5, 3)))
    grads = []
    for hybrid in (False, True):
        net = _Net()
        net.initialize(mx.init.Constant(0.3))
        if hybrid:
            net.hybridize()
        with mx.autograd.record():
            loss = (net(x) * mx.nd.arange(4).reshape((1, 4))).sum()
        loss.backward()
        grads.append(net.dense.weight.grad().asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    assert np.abs(grads[0]).max() > 0


def test_backward_of_a_base_customop_gives_zeros(ops):
    """MXNet's CustomOp.backward does nothing: the gradient stays zero."""
    x = mx.nd.array([1.0, -1.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="softsign_base_test")
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


@mx.operator.register("softsign_base_test")
class _NoBackwardProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _NoBackward()


class _NoBackward(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] / (1 + mx.nd.abs(in_data[0])))


def test_bad_req_in_assign_is_clear():
    op = mx.operator.CustomOp()
    with pytest.raises(GluonportError, match="unknown req"):
        op.assign(mx.nd.zeros((2,)), "sometimes", mx.nd.ones((2,)))


@mx.operator.register("_test_state")
class _StateProp(mx.operator.CustomOpProp):
    """Declares only in_data: out_data reaches backward as None, yet the CustomOp that ran
    forward (and kept ``k`` on self) is the one whose backward runs."""

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return list(out_grad) + list(in_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _State()


class _State(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.k = float(in_data[0].asnumpy().sum())
        self.assign(out_data[0], req[0], in_data[0] * self.k)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert out_data[0] is None
        self.assign(in_grad[0], req[0], out_grad[0] * self.k)


def test_state_on_self_reaches_backward_without_out_data():
    grads = []
    for values in ([1.0, 2.0], [3.0, 4.0]):
        x = mx.nd.array(values)
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="_test_state")
        grads.append((x, y))
    for _x, y in reversed(grads):  # backward in the other order: each finds its own op
        y.backward()
    np.testing.assert_array_equal(grads[0][0].grad.asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(grads[1][0].grad.asnumpy(), [7.0, 7.0])
