"""A ``'write'`` gradient that only the backward pass holds becomes the variable's gradient
buffer instead of being copied into it (``ndarray/_tape.py``, ``_takes_over``): the same
values as the copy, bit for bit, and never an alias a caller could see."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport import autograd, gluon
from gluonport.ndarray import _tape


def _steps(monkeypatch, takeover: bool, steps: int = 3):
    if not takeover:
        monkeypatch.setattr(_tape, "_SOLE", 0)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=2), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Activation("relu"), gluon.nn.Dense(3, in_units=4 * 4 * 4))
    net.initialize(mx.init.Xavier())
    for i, p in enumerate(net.collect_params().values()):
        if p.grad_req != "null":
            p.set_data(mx.nd.array(np.random.RandomState(i).randn(*p.shape) * 0.3))
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    handles = [p.grad() for p in params]
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                          "momentum": 0.9})
    x = mx.nd.array(np.random.RandomState(7).randn(5, 2, 6, 6))
    seen = []
    for _ in range(steps):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        assert all(p.grad() is h for p, h in zip(params, handles))  # the same NDArrays
        seen.append([p.grad().asnumpy().copy() for p in params])
        trainer.step(5)
    monkeypatch.undo()
    return seen, [p.data().asnumpy() for p in params]


def test_taken_over_gradients_equal_copied_ones(monkeypatch):
    count = []
    real = _tape._takes_over
    monkeypatch.setattr(_tape, "_takes_over", lambda *a: count.append(real(*a)) or count[-1])
    got, got_params = _steps(monkeypatch, True)
    assert count and all(count), count  # every parameter's gradient, convolutions included
    want, want_params = _steps(monkeypatch, False)
    for g, w in zip(got + [got_params], want + [want_params]):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)


def test_a_held_buffer_is_written_into():
    """A caller holding the gradient buffer's array sees the new gradient in it."""
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    x.attach_grad()
    held = x.grad._data
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    assert x.grad._data is held
    np.testing.assert_array_equal(held, 2 * np.arange(6.0).reshape(2, 3))


def test_a_head_gradient_never_becomes_a_buffer():
    """elemwise_add passes its head gradient on as it is: both variables get copies."""
    x = mx.nd.array(np.ones((2, 3)))
    w = mx.nd.array(np.ones((2, 3)))
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = mx.nd.elemwise_add(x, w)
    hg = mx.nd.array(np.full((2, 3), 3.0))
    y.backward(hg)
    hg[:] = 7.0
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 3.0))
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((2, 3), 3.0))
    assert x.grad._data is not w.grad._data


def test_two_variables_never_share_one_gradient():
    """One gradient array reaching two variables (elemwise_add of an internal value) is taken
    over by one of them at most."""
    x = mx.nd.array(np.ones((2, 3)))
    w = mx.nd.array(np.ones((2, 3)))
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = (mx.nd.elemwise_add(x, w) * 2).sum()
    y.backward()
    assert x.grad._data is not w.grad._data
    x.grad[:] = 0
    np.testing.assert_array_equal(w.grad.asnumpy(), np.full((2, 3), 2.0))


@pytest.mark.parametrize("req", ["add", "write"])
def test_callers_buffers_are_written_into(req):
    """mark_variables with the caller's own array: the gradient lands in that array (by
    req), as MXNet writes a variable's gradient array."""
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    buf = np.full((2, 3), 1.0, np.float32)
    autograd.mark_variables([x], [mx.nd.NDArray(buf)], req)
    with autograd.record():
        y = (x * 3).sum()
    y.backward()
    np.testing.assert_array_equal(buf, np.full((2, 3), 4.0 if req == "add" else 3.0))
