"""MXNet 1.x user code: an MLP (Dense + relu) trained with SGD, momentum 0.9, wd 1e-4, for
5 steps of batch 8. ``init(folder)`` (run in MXNet only, by the generator) saves seeded Xavier
parameters; ``run(folder)`` loads them and returns the loss, every gradient and every parameter
after each step."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

STEPS, BATCH, FEATURES = 5, 8, 20
INIT = "mlp_sgd_init.params"


def build():
    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(32, activation="relu"), nn.Dense(16, activation="relu"), nn.Dense(10))
    return net


def data():
    rs = np.random.RandomState(11)
    x = rs.uniform(-1, 1, (STEPS * BATCH, FEATURES)).astype("float32")
    y = rs.randint(0, 10, STEPS * BATCH).astype("float32")
    return x, y


def init(folder):
    mx.random.seed(1)
    net = build()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, FEATURES)))
    net.save_parameters(os.path.join(folder, INIT))


def run(folder):
    net = build()
    net.load_parameters(os.path.join(folder, INIT))
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = data()
    out = {}
    for step in range(STEPS):
        xb = mx.nd.array(x[step * BATCH:(step + 1) * BATCH])
        yb = mx.nd.array(y[step * BATCH:(step + 1) * BATCH])
        with autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        out[f"step{step}:loss"] = loss.asnumpy()
        for name, p in net.collect_params().items():
            out[f"step{step}:grad:{name}"] = p.grad().asnumpy()
        trainer.step(BATCH)
        for name, p in net.collect_params().items():
            out[f"step{step}:{name}"] = p.data().asnumpy()
    return out
