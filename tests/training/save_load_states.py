"""MXNet 1.x user code: Trainer.save_states after 2 steps, then a new net and Trainer continue
from the saved parameters and optimizer states for 2 more steps. Two optimizers: Adam, and SGD
with momentum and a FactorScheduler (so the pickled optimizer carries a scheduler).

``first(folder, out)`` trains from the initial parameters and writes
``states_<case>_step2.params`` and ``states_<case>.states`` into ``out`` (the generator keeps
MXNet's in the golden folder); ``resume(folder)`` loads those and returns the parameters after
steps 3 and 4; ``run(folder)`` trains 4 steps without a break, for comparison."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

BATCH, FEATURES = 8, 10
INIT = "save_load_states_init.params"
CASES = {
    "adam": ("adam", {"learning_rate": 0.01, "wd": 1e-3}),
    "sgd": ("sgd", {"momentum": 0.9, "wd": 1e-3}),
}


def build():
    net = nn.HybridSequential(prefix="resume_")
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.Dense(3))
    return net


def data():
    rs = np.random.RandomState(16)
    return (rs.uniform(-1, 1, (4 * BATCH, FEATURES)).astype("float32"),
            rs.randint(0, 3, 4 * BATCH).astype("float32"))


def init(folder):
    mx.random.seed(6)
    net = build()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, FEATURES)))
    net.save_parameters(os.path.join(folder, INIT))


def make_trainer(net, case):
    name, options = CASES[case]
    options = dict(options)
    if case == "sgd":
        options["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=1, factor=0.7,
                                                                  base_lr=0.1)
    return gluon.Trainer(net.collect_params(), name, options)


def train(net, trainer, steps, out, tag):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = data()
    for step in steps:
        xb = mx.nd.array(x[step * BATCH:(step + 1) * BATCH])
        yb = mx.nd.array(y[step * BATCH:(step + 1) * BATCH])
        with autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        trainer.step(BATCH)
        out[f"{tag}:step{step}:loss"] = loss.asnumpy()
        for name, p in net.collect_params().items():
            out[f"{tag}:step{step}:{name}"] = p.data().asnumpy()


def first(folder, out_folder):
    out = {}
    for case in CASES:
        net = build()
        net.load_parameters(os.path.join(folder, INIT))
        trainer = make_trainer(net, case)
        train(net, trainer, range(2), out, f"{case}:first")
        net.save_parameters(os.path.join(out_folder, f"states_{case}_step2.params"))
        trainer.save_states(os.path.join(out_folder, f"states_{case}.states"))
    return out


def resume(folder):
    out = {}
    for case in CASES:
        net = build()
        net.load_parameters(os.path.join(folder, f"states_{case}_step2.params"))
        trainer = make_trainer(net, case)
        trainer.load_states(os.path.join(folder, f"states_{case}.states"))
        out[f"{case}:resumed_lr"] = np.array(trainer.learning_rate, dtype="float64")
        train(net, trainer, range(2, 4), out, f"{case}:resume")
    return out


def run(folder):
    out = {}
    for case in CASES:
        net = build()
        net.load_parameters(os.path.join(folder, INIT))
        train(net, make_trainer(net, case), range(4), out, f"{case}:straight")
    return out
