"""MXNet 1.x user code: gradient accumulation with grad_req='add'. Two batches of 8 go through
backward before each Trainer step (step(16)), then the gradients are zeroed; two such cycles,
SGD with momentum. Returns the accumulated gradients after each batch and the parameters after
each step."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

CYCLES, ACCUMULATE, BATCH, FEATURES = 2, 2, 8, 12
INIT = "grad_add_init.params"


def build():
    net = nn.HybridSequential(prefix="acc_")
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.Dense(4))
    return net


def data():
    rs = np.random.RandomState(15)
    n = CYCLES * ACCUMULATE * BATCH
    return (rs.uniform(-1, 1, (n, FEATURES)).astype("float32"),
            rs.randint(0, 4, n).astype("float32"))


def init(folder):
    mx.random.seed(5)
    net = build()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, FEATURES)))
    net.save_parameters(os.path.join(folder, INIT))


def run(folder):
    net = build()
    net.load_parameters(os.path.join(folder, INIT))
    params = net.collect_params()
    params.setattr("grad_req", "add")
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.2, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = data()
    out = {}
    b = 0
    for cycle in range(CYCLES):
        for k in range(ACCUMULATE):
            xb = mx.nd.array(x[b * BATCH:(b + 1) * BATCH])
            yb = mx.nd.array(y[b * BATCH:(b + 1) * BATCH])
            b += 1
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            out[f"cycle{cycle}:batch{k}:loss"] = loss.asnumpy()
            for name, p in params.items():
                out[f"cycle{cycle}:batch{k}:grad:{name}"] = p.grad().asnumpy()
        trainer.step(ACCUMULATE * BATCH)
        for name, p in params.items():
            out[f"cycle{cycle}:{name}"] = p.data().asnumpy()
        params.zero_grad()
        for name, p in params.items():
            out[f"cycle{cycle}:zeroed:{name}"] = p.grad().asnumpy()
    return out
