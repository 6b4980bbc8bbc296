"""The imperative autograd API as MXNet 1.9.1 users call it: ``attach_grad``, ``record``,
``backward``, ``grad``, ``grad_req='add'``, ``retain_graph``,
``mark_variables``, ``autograd.Function``, and the errors. gen_tape.py runs it in MXNet;
tests/autograd/test_tape.py runs it here with only the import changed. Only ops whose gradients
gluonport defines early (elemwise arithmetic) are used, so this checks the tape itself. (MXNet 1.9.1 has no second-order gradient for them --
``_backward_mul`` registers no FGradient -- so ``create_graph`` is checked analytically in the
test.)"""
import mxnet as mx
import numpy as np
from mxnet import autograd, nd


def _message(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the message is the result
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        last = lines[-1]  # MXNet's message follows its C++ traceback
        return last.split("Check failed: ")[-1]
    return ""


class Cube(autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return nd.elemwise_mul(nd.elemwise_mul(x, x), x)

    def backward(self, dy):
        (x,) = self.saved_tensors
        return nd.elemwise_mul(dy, nd.elemwise_mul(nd.elemwise_mul(x, x), nd.ones_like(x) * 3))


def run():
    out = {}
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    y = nd.array([[0.5, 1.0], [2.0, -1.5]])
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        z = nd.elemwise_div(nd.elemwise_mul(x, y), nd.elemwise_add(x, y))
        w = nd.elemwise_sub(z, nd.elemwise_mul(z, x))
    w.backward(nd.array([[1.0, -1.0], [0.5, 2.0]]), retain_graph=True)
    out["x_grad"], out["y_grad"] = x.grad.asnumpy(), y.grad.asnumpy()
    w.backward()  # retained: a second pass works and overwrites ('write')
    out["x_grad2"] = x.grad.asnumpy()
    out["second_backward"] = _message(lambda: w.backward())

    a = nd.array([1.0, 2.0, 3.0])
    a.attach_grad(grad_req="add")
    for _ in range(3):
        with autograd.record():
            b = nd.elemwise_mul(a, a)
        b.backward()
    out["add_grad"] = a.grad.asnumpy()

    g0 = nd.array([0.5, -1.0, 2.0])
    g0.attach_grad()
    with autograd.record():
        g1 = nd.elemwise_mul(nd.elemwise_mul(g0, g0), g0)
    out["grad_returned"] = autograd.grad(g1, [g0])[0].asnumpy()
    out["grad_leaves_buffer"] = g0.grad.asnumpy()

    f = nd.array([1.0, 2.0])
    gbuf = nd.zeros((2,))
    autograd.mark_variables([f], [gbuf])
    with autograd.record():
        h = nd.elemwise_mul(f, nd.array([3.0, 4.0]))
    autograd.backward([h], [nd.array([1.0, 10.0])])
    out["marked_grad"] = gbuf.asnumpy()

    k = nd.array([1.0, -2.0, 0.5])
    k.attach_grad()
    with autograd.record():
        m = Cube()(k)
        n = nd.elemwise_add(m, k)
    n.backward()
    out["function_grad"] = k.grad.asnumpy()

    p = nd.array([1.0, 2.0])
    p.attach_grad()
    with autograd.record():
        q = nd.elemwise_mul(p, p)
    with autograd.record():
        r = nd.elemwise_mul(q.detach(), p)
    r.backward()
    out["detach_grad"] = p.grad.asnumpy()

    s = nd.array([1.0, 2.0])
    out["not_recorded"] = _message(lambda: s.backward())
    t = nd.array([1.0, 2.0])
    t.attach_grad()
    u = nd.elemwise_mul(t, t)  # outside record(): not in a graph
    out["outside_record"] = _message(lambda: u.backward())
    out["is_recording_after"] = autograd.is_recording()
    return out
