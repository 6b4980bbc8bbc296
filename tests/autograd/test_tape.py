"""The imperative autograd tape (``gluonport/ndarray/_tape.py``) against MXNet 1.9.1:
tests/golden/autograd/tape_script.py run here with only its import changed, compared with what
it gave in MXNet (``tape_golden.npz``/``.json``, made by ``gen_tape.py``); plus what MXNet cannot
do (second-order gradients through elemwise ops), checked analytically, and the bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd, nd
from tests._ported import load_golden, load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "autograd")


@pytest.fixture(scope="module")
def ported() -> dict:
    return load_ported(os.path.join(HERE, "tape_script.py")).run()


def test_matches_mxnet(ported):
    arrays, rest = load_golden(os.path.join(HERE, "tape_golden"))
    for key, want in arrays.items():  # float32 arithmetic in the same order: 1e-6
        np.testing.assert_allclose(ported[key], want, rtol=1e-6, atol=1e-7, err_msg=key)
    for key in ("second_backward", "not_recorded", "outside_record"):
        assert ported[key] in rest[key], key  # MXNet prefixes its failed check
    assert ported["is_recording_after"] is rest["is_recording_after"]


def test_second_order_gradient():
    """d/dc (3c^2 * c) = 9c^2: the gradient pass is recorded with create_graph (MXNet 1.9.1
    cannot: ``_backward_mul`` has no FGradient)."""
    c = nd.array([0.5, -1.0, 2.0])
    c.attach_grad()
    with autograd.record():
        d = nd.elemwise_mul(nd.elemwise_mul(c, c), c)
        (gc,) = autograd.grad(d, [c], create_graph=True)
        e = nd.elemwise_mul(gc, c)
    np.testing.assert_allclose(gc.asnumpy(), 3 * c.asnumpy() ** 2, rtol=1e-6)
    e.backward()
    np.testing.assert_allclose(c.grad.asnumpy(), 9 * c.asnumpy() ** 2, rtol=1e-6)


def test_shared_input_sums_gradients():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.elemwise_add(nd.elemwise_mul(x, x), x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy() + 1)


def test_grad_req_null_keeps_buffer():
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req="null")
    with autograd.record():
        y = nd.elemwise_mul(x, x)
    y.backward()
    assert not x.grad.asnumpy().any()


@pytest.mark.parametrize("make, match", [
    (lambda: nd.array([1, 2], dtype="int32").attach_grad(), "dtype int32 cannot have a gradient"),
    (lambda: nd.ones((2,)).attach_grad(grad_req="sometimes"), "grad_req must be one of"),
    (lambda: nd.ones((2,)).attach_grad(stype="row_sparse"), "sparse gradients"),
    (lambda: autograd.backward(nd.ones((2,)), head_grads=[nd.ones((2,)), nd.ones((2,))]),
     "2 head gradients"),
    (lambda: autograd.backward("loss"), "must be an NDArray"),
])
def test_bad_input(make, match):
    with pytest.raises(mx.GluonportError, match=match):
        make()


def test_head_grad_shape_and_integer_head():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.elemwise_mul(x, x)
    with pytest.raises(mx.GluonportError, match="head gradient of shape"):
        y.backward(nd.ones((3,)))
    with autograd.record():
        z = nd.elemwise_mul(x, x).astype("int32")
    with pytest.raises(mx.GluonportError):
        z.backward()


def test_gradient_of_undifferentiable_op_names_it(monkeypatch):
    from gluonport.ops import registry

    op = registry.get("_equal")  # as an op MXNet gives no FGradient
    monkeypatch.setattr(op, "gradient", None)
    monkeypatch.setattr(op, "no_gradient", "a test's stand-in reason")
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.elemwise_mul(x, x)
        z = nd.invoke("_equal", (y, y))
    with pytest.raises(mx.GluonportError, match="_equal.*stand-in reason"):
        z.backward()


def test_update_with_out_keeps_the_variable():
    """An optimizer's fused update writes the weight through ``out=`` outside ``record()``:
    the weight stays a variable, so the next step's backward reaches it."""
    w = nd.array([1.0, 2.0])
    w.attach_grad()
    for _ in range(2):
        with autograd.record():
            y = nd.elemwise_mul(w, w)
        y.backward()
        nd.sgd_update(w, w.grad, lr=0.1, wd=0.0, out=w)
    np.testing.assert_allclose(w.asnumpy(), np.float32([1.0, 2.0]) * 0.8 * 0.8, rtol=1e-6)


def test_discarded_data_gradient_is_not_computed(monkeypatch):
    # MXNet's kernels skip a kNullOp data gradient: the first convolution's data is outside the
    # graph, so its transposed convolution is never run, and the weight and bias gradients are
    # those of the full computation; a second convolution's data gradient still flows
    from gluonport.ops.nn import conv_grad

    rng = np.random.RandomState(0)
    data = rng.uniform(-1, 1, (2, 3, 6, 6))
    w1, b1 = nd.array(rng.uniform(-1, 1, (4, 3, 3, 3))), nd.array(rng.uniform(-1, 1, (4,)))
    w2 = nd.array(rng.uniform(-1, 1, (2, 4, 3, 3)))

    def grads(data_needs_grad: bool) -> list:
        x = nd.array(data)
        params = [w1, b1, w2] + ([x] if data_needs_grad else [])
        for a in params:
            a.attach_grad()
        with autograd.record():
            h = nd.Convolution(x, w1, b1, kernel=(3, 3), num_filter=4)
            y = nd.Convolution(h, w2, kernel=(3, 3), num_filter=2, no_bias=True)
            loss = (y * y).sum()
        loss.backward()
        return [a.grad.asnumpy().copy() for a in (w1, b1, w2)]

    full = grads(True)
    calls = []

    def counting(kernel, batch_axis):
        def run(og, *args, **kwargs):
            calls.append(og.shape[batch_axis])  # the output gradient's channels
            return kernel(og, *args, **kwargs)
        return run

    monkeypatch.setattr(conv_grad, "deconv_nd", counting(conv_grad.deconv_nd, 1))
    monkeypatch.setattr(conv_grad, "deconv_lanes", counting(conv_grad.deconv_lanes, 0))
    skipped = grads(False)
    assert calls == [2]  # only the second convolution's data gradient
    for got, want in zip(skipped, full):
        np.testing.assert_array_equal(got, want)
