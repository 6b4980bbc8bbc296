"""``Symbol.bind``/``simple_bind`` with gradients: ``forward(is_train=True)`` then
``backward(out_grads)`` writes each argument's gradient by its ``grad_req``, as MXNet's
executor does (checked against the analytic gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx


def _graph():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    return mx.sym.elemwise_mul(mx.sym.elemwise_add(a, b), a)  # (a + b) * a


def test_simple_bind_write_and_add():
    ex = _graph().simple_bind(mx.cpu(), grad_req={"a": "write", "b": "add"}, a=(3,), b=(3,))
    A, B, G = np.float32([1, 2, -1]), np.float32([0.5, -2, 3]), np.float32([1, 10, 100])
    for _ in range(2):
        ex.forward(is_train=True, a=A, b=B)
        ex.backward(mx.nd.array(G))
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), (2 * A + B) * G)  # overwritten
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), 2 * A * G)  # added twice
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), (A + B) * A)


def test_bind_with_args_grad_and_null():
    A, B = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    ga = mx.nd.zeros((2,))
    ex = _graph().bind(mx.cpu(), {"a": A, "b": B}, args_grad={"a": ga}, grad_req="write")
    ex.forward(is_train=True)
    ex.backward()  # out_grads default to ones
    np.testing.assert_allclose(ga.asnumpy(), 2 * A.asnumpy() + B.asnumpy())
    assert ex.grad_arrays[1] is None


def test_backward_needs_training_forward():
    ex = _graph().simple_bind(mx.cpu(), a=(2,), b=(2,))
    ex.forward()
    with pytest.raises(mx.GluonportError, match="forward\\(is_train=True\\)"):
        ex.backward()
    with pytest.raises(mx.GluonportError, match="grad_req"):
        _graph().simple_bind(mx.cpu(), grad_req="sometimes", a=(2,), b=(2,))
