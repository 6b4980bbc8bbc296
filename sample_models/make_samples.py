"""Make the bundled sample models with the real MXNet 1.9.1 (the oracle).

Run with the oracle's Python, from the repository root:

    ~/.cache/gluonport-oracle/bin/python sample_models/make_samples.py

Writes, for each model NAME, ``NAME-symbol.json`` and ``NAME-0000.params`` (Gluon ``export``),
``NAME-input.npy`` (a fixed input) and ``NAME-output.npy`` (MXNet's output for it). Weights are
random with a fixed seed; BatchNorm running statistics are set to non-trivial values so that a
converter that ignores them is caught.
"""
import os

import mxnet as mx
import numpy as np
from mxnet import gluon
from mxnet.gluon import nn

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.Dense(8, activation="tanh"), nn.Dense(3))
    return net, (4, 10)


def lenet_bn():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(6, kernel_size=5, padding=2), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(16, kernel_size=5), nn.BatchNorm(), nn.Activation("relu"),
                nn.AvgPool2D(pool_size=2, strides=2),
                nn.Flatten(), nn.Dense(32, activation="relu"), nn.Dense(10))
    return net, (2, 1, 28, 28)


def make(name, factory, seed):
    mx.random.seed(seed)
    np.random.seed(seed)
    net, shape = factory()
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, size=shape).astype("float32"))
    net(x)  # deferred init
    for pname, p in net.collect_params().items():
        if pname.endswith("running_mean"):
            p.set_data(mx.nd.random.uniform(-0.5, 0.5, shape=p.shape))
        elif pname.endswith("running_var"):
            p.set_data(mx.nd.random.uniform(0.5, 1.5, shape=p.shape))
        elif pname.endswith(("gamma", "beta")):
            p.set_data(mx.nd.random.uniform(0.5, 1.5, shape=p.shape))
    net.hybridize()
    y = net(x)
    prefix = os.path.join(HERE, name)
    net.export(prefix, epoch=0)
    np.save(prefix + "-input.npy", x.asnumpy())
    np.save(prefix + "-output.npy", y.asnumpy())
    print("%s: input %s -> output %s" % (name, shape, y.shape))


if __name__ == "__main__":
    make("mlp", mlp, 1)
    make("lenet_bn", lenet_bn, 2)
