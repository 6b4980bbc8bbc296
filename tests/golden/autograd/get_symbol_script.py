"""MXNet 1.x user code calling ``mx.autograd.get_symbol`` on recorded computations.
gen_get_symbol.py runs it in MXNet 1.9.1 and records the symbol JSON of each case;
tests/autograd/test_get_symbol.py runs it with ``import gluonport as mx`` and compares."""
import mxnet as mx
import numpy as np


def cases():
    out = {}
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    w = mx.nd.array([[1.0, 0.0], [0.0, 1.0]])
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.FullyConnected(x, w, no_bias=True, num_hidden=2)
        z = mx.nd.relu(y) * 2.0 + x  # (MXNet passes float(2) for 2 here; gluonport keeps 2)
        s = mx.nd.split(z, num_outputs=2, axis=1)
        head = s[1] + mx.nd.sum(s[0])
    out["mlp"] = head
    out["split_output"] = s[1]

    # a constant (an array not marked, not recorded) among the inputs; ops with defaults given
    c = mx.nd.array([0.5, -0.5])
    with mx.autograd.record():
        t = mx.nd.broadcast_mul(mx.nd.exp(x), c.reshape((1, 2)))
        t = mx.nd.Activation(t, act_type="tanh")
        t = mx.nd.concat(t, x, dim=0)
        t = mx.nd.transpose(t, axes=(1, 0))
        t = mx.nd.mean(t, axis=1, keepdims=True)
    out["constant"] = t

    # a variable used by two ops and a scalar op chain
    v = mx.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    v.attach_grad()
    with mx.autograd.record():
        a = mx.nd.sigmoid(v)
        b = (a - v) / 3.0
        u = mx.nd.elemwise_add(a, b)
    out["shared"] = u
    return out


def run():
    return {name: mx.autograd.get_symbol(arr).tojson() for name, arr in cases().items()}
