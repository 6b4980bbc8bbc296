"""MXNet 1.x user code: a LeNet with BatchNorm, hybridized, trained with Adam for 5 steps of
batch 8 on 1x28x28 inputs. The convolutions feeding BatchNorm have no bias, as usual: a bias
there gets a gradient that is zero up to rounding, which Adam scales up to a full step of random
sign (1 ulp of difference in the initial weights moved such a bias by 100% of its value).
Returns the loss, every gradient and every parameter (BatchNorm's running_mean/running_var
included) after each step, and the trained net's inference output."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

STEPS, BATCH = 5, 8
INIT = "lenet_bn_adam_init.params"


def build():
    net = nn.HybridSequential(prefix="lenet_")
    with net.name_scope():
        net.add(nn.Conv2D(6, kernel_size=5, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(16, kernel_size=5, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Dense(64, activation="relu"), nn.Dense(10))
    return net


def data():
    rs = np.random.RandomState(42)
    x = rs.uniform(0, 1, (STEPS * BATCH, 1, 28, 28)).astype("float32")
    y = rs.randint(0, 10, STEPS * BATCH).astype("float32")
    return x, y


def init(folder):
    mx.random.seed(2)
    net = build()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 1, 28, 28)))
    net.save_parameters(os.path.join(folder, INIT))


def run(folder):
    net = build()
    net.load_parameters(os.path.join(folder, INIT))
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
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
            if p.grad_req != "null":
                out[f"step{step}:grad:{name}"] = p.grad().asnumpy()
        trainer.step(BATCH)
        for name, p in net.collect_params().items():  # running_mean/var too
            out[f"step{step}:{name}"] = p.data().asnumpy()
    out["predict"] = net(mx.nd.array(x[:BATCH])).asnumpy()
    return out
