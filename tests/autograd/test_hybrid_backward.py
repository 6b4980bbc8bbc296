"""Hybridized training: a recorded call of a cached graph runs the forward graph once and
the backward graph built from the ops' gradient rules (``symbol/_backward.py``) when backward
reaches it. Checked against the analytic gradient (independent of both) and the imperative
tape, and the graph's export is unchanged by the backward build."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd, gluon, nd
from gluonport.symbol._backward import build_backward
from gluonport.symbol.executor import GraphPlan


class Net(gluon.HybridBlock):
    """y = (x + w) * x / (x * x + w): every op has a rule already."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get("w", shape=(2, 3), init=mx.init.Constant(0.5))

    def hybrid_forward(self, F, x, w):
        num = F.elemwise_mul(F.elemwise_add(x, w), x)
        return F.elemwise_div(num, F.elemwise_add(F.elemwise_mul(x, x), w))


def _analytic(x, w):
    d = x * x + w
    dx = ((2 * x + w) * d - (x + w) * x * 2 * x) / d ** 2
    dw = (x * d - (x + w) * x) / d ** 2
    return dx, dw


@pytest.mark.parametrize("hybridize", [False, "numpy", "onnxruntime"])
def test_gradients(hybridize):
    net = Net()
    net.initialize()
    if hybridize:
        net.hybridize(backend=hybridize)
    x = nd.array(np.random.RandomState(0).uniform(-2, 2, (2, 3)))
    x.attach_grad()
    w = net.w.data()
    w.attach_grad()
    hg = nd.array(np.random.RandomState(1).normal(size=(2, 3)))
    with autograd.record():
        y = net(x)
    y.backward(hg)
    if hybridize:
        (graphs,) = net._cached_op._train_graphs.values()
        assert graphs.backend == hybridize
    dx, dw = _analytic(x.asnumpy().astype(np.float64), w.asnumpy().astype(np.float64))
    np.testing.assert_allclose(x.grad.asnumpy(), dx * hg.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.asnumpy(), dw * hg.asnumpy(), rtol=1e-5, atol=1e-6)


def test_forward_runs_once_and_graphs_are_plain():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    y = mx.sym.elemwise_mul(mx.sym.elemwise_add(a, b), b)
    before = y.tojson()
    bg = build_backward(y, ["a", "b"])
    assert y.tojson() == before  # variable versions and attributes untouched
    assert bg.grad_of == [True, True]
    A, B = np.float32([[1, 2]]), np.float32([[3, -1]])
    values = GraphPlan(bg.forward).run({"a": A, "b": B})
    feed = {"a": A, "b": B, bg.ograds[0]: np.ones_like(A), **dict(zip(bg.saved, values[1:]))}
    ga, gb = GraphPlan(bg.backward).run({k: v for k, v in feed.items()
                                         if k in bg.backward.list_inputs()})
    np.testing.assert_array_equal(ga, B)
    np.testing.assert_array_equal(gb, A + 2 * B)


def test_variable_outside_the_path_gets_no_output():
    a = mx.sym.var("a")
    bg = build_backward(mx.sym.elemwise_add(a, a), ["a", "b"])  # "b" is not in the graph
    assert bg.grad_of == [True, False]


def test_missing_rule_is_refused_at_backward_not_forward(monkeypatch):
    from gluonport.ops import registry

    op = registry.get("broadcast_equal")  # as an op MXNet gives no FGradient
    monkeypatch.setattr(op, "gradient", None)
    monkeypatch.setattr(op, "no_gradient", "a test's stand-in reason")

    class Cmp(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.elemwise_mul(F.broadcast_equal(x, x), x)

    net = Cmp()
    net.hybridize()
    x = nd.ones((2,))
    x.attach_grad()
    with autograd.record():
        y = net(x)  # recording works, as in MXNet
    with pytest.raises(mx.GluonportError, match="broadcast_equal.*stand-in reason"):
        y.backward()


def test_failed_backward_build_leaves_the_graph_as_it_was(monkeypatch):
    """A rule that composes with the graph's variables and then fails leaves them as they were
    (the sym API bumps an auxiliary input's version and sets ``__init__`` on compose), so a
    later export writes the same JSON."""
    from gluonport.ops import registry

    def composes_then_fails(F, p, inputs, outputs, ograds):
        a, b = inputs
        F.BatchNorm(ograds[0], a, a, b, b)  # b as moving statistics: version and __init__
        raise mx.GluonportError("stand-in rule failed")

    monkeypatch.setattr(registry.get("elemwise_mul"), "gradient", composes_then_fails)
    y = mx.sym.elemwise_mul(mx.sym.var("a"), mx.sym.var("b"))
    before = y.tojson()
    with pytest.raises(mx.GluonportError, match="stand-in rule failed"):
        build_backward(y, ["a"])
    assert y.tojson() == before
