"""MXNet 1.x user code: every optimizer MXNet 1.9.1 registers trains a tiny two-layer Dense
net through gluon.Trainer for 3 steps of batch 4, with a FactorScheduler (halving the rate each
update), clip_gradient and rescale_grad (which the Trainer divides by the batch size), and wd.
Returns, per case, the loss and every parameter after each step. ``sgld`` adds Gaussian noise
from MXNet's generator, which no other implementation reproduces, so it is left out."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

STEPS, BATCH = 3, 4
INIT = "optimizers_init.params"
COMMON = {"clip_gradient": 0.5, "rescale_grad": 2.0, "wd": 0.01}

CASES = [
    ("sgd", {"learning_rate": 0.1}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
    ("ccsgd", {"learning_rate": 0.1, "momentum": 0.9}),
    ("nag", {"learning_rate": 0.1, "momentum": 0.9}),
    ("signum", {"learning_rate": 0.01, "momentum": 0.9, "wd_lh": 0.01}),
    ("adam", {"learning_rate": 0.01}),
    ("adagrad", {"learning_rate": 0.1}),
    ("groupadagrad", {"learning_rate": 0.1}),
    ("adadelta", {"rho": 0.9}),
    ("rmsprop", {"learning_rate": 0.01}),
    ("rmsprop", {"learning_rate": 0.01, "centered": True, "clip_weights": 0.8}),
    ("ftrl", {"learning_rate": 0.1, "lamda1": 0.01}),
    ("ftml", {"learning_rate": 0.01}),
    ("adamax", {"learning_rate": 0.01}),
    ("nadam", {"learning_rate": 0.01}),
    # dcasgd with momentum fails in MXNet 1.9.1 ("if mom:" on an NDArray state): plain only
    ("dcasgd", {"learning_rate": 0.1, "lamda": 0.1}),
    ("lamb", {"learning_rate": 0.01}),
    ("lars", {"learning_rate": 0.1, "momentum": 0.9, "eta": 0.01}),
    ("lbsgd", {"learning_rate": 0.1, "momentum": 0.9, "warmup_strategy": "linear",
               "warmup_epochs": 1, "batch_scale": 2, "updates_per_epoch": 2}),
    ("test", {"learning_rate": 0.1}),
]


def build(no_bias=False):
    net = nn.HybridSequential(prefix="tiny_")
    with net.name_scope():
        net.add(nn.Dense(5, activation="tanh", use_bias=not no_bias),
                nn.Dense(3, use_bias=not no_bias))
    return net


def data():
    rs = np.random.RandomState(14)
    x = rs.uniform(-1, 1, (STEPS * BATCH, 6)).astype("float32")
    y = rs.uniform(-1, 1, (STEPS * BATCH, 3)).astype("float32")
    return x, y


def init(folder):
    mx.random.seed(4)
    net = build()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 6)))
    net.save_parameters(os.path.join(folder, INIT))


def run_case(folder, name, kwargs):
    # GroupAdaGrad (contrib) only updates 2-D weights: that case trains the net without biases
    no_bias = name == "groupadagrad"
    net = build(no_bias)
    net.load_parameters(os.path.join(folder, INIT), ignore_extra=no_bias)
    options = dict(COMMON, **kwargs)
    if name == "groupadagrad":
        options.pop("wd")  # MXNet asserts "Weight decay is not supported for GroupAdaGrad"
    # the scheduler carries the base rate; an optimizer whose signature has its own
    # learning_rate default (adam 0.001, rmsprop 0.001, adamax 0.002, nadam 0.001, lamb 0.001)
    # passes that on, and MXNet then warns and lets it override the scheduler's base_lr
    base_lr = options.pop("learning_rate", 0.01)
    options["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5,
                                                              base_lr=base_lr)
    trainer = gluon.Trainer(net.collect_params(), name, options)
    loss_fn = gluon.loss.L2Loss()
    x, y = data()
    out = {}
    for step in range(STEPS):
        xb = mx.nd.array(x[step * BATCH:(step + 1) * BATCH])
        yb = mx.nd.array(y[step * BATCH:(step + 1) * BATCH])
        with autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        trainer.step(BATCH)
        out[f"step{step}:loss"] = loss.asnumpy()
        out[f"step{step}:lr"] = np.array(trainer.learning_rate, dtype="float64")
        for pname, p in net.collect_params().items():
            out[f"step{step}:{pname}"] = p.data().asnumpy()
    return out


def run(folder):
    out = {}
    for k, (name, kwargs) in enumerate(CASES):
        for key, value in run_case(folder, name, kwargs).items():
            out[f"{k:02d}_{name}/{key}"] = value
    return out
