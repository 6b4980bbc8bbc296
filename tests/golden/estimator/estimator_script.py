"""MXNet 1.x user code: gluon.contrib.estimator. gen_estimator.py runs it in MXNet 1.9.1 and
records what it returns; tests/training/test_estimator.py runs the same text with only the
import changed to ``import gluonport as mx``.

A Dense net (in_units given, so its parameters load before training) starts from saved
parameters, trains 2 epochs with Estimator.fit on a DataLoader of an ArrayDataset
(SoftmaxCrossEntropyLoss: default metrics accuracy and loss; SGD with momentum), validating
each epoch, with a recording handler, a CheckpointHandler and an EarlyStoppingHandler; then
3 batches with ``batches=``, and ``evaluate``. Records the parameters after each epoch, the
metrics after every batch, the log lines (times masked) and the checkpoint files.
"""
import logging
import os
import re

import mxnet as mx
import numpy as np
from mxnet.gluon.contrib.estimator import (
    CheckpointHandler,
    EarlyStoppingHandler,
    Estimator,
)
from mxnet.gluon.contrib.estimator.event_handler import BatchEnd, EpochEnd

INIT = "estimator_init.params"


def make_net():
    net = mx.gluon.nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(8, in_units=6, activation="relu"))
        net.add(mx.gluon.nn.Dense(3, in_units=8))
    return net


def data(seed):
    rs = np.random.RandomState(seed)
    x = rs.uniform(-1, 1, (40, 6)).astype("float32")
    y = (x[:, :3].argmax(axis=1)).astype("float32")
    return x, y


def init(folder):
    """Save seeded initial parameters (run once, in MXNet)."""
    mx.random.seed(11)
    net = make_net()
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.save_parameters(os.path.join(folder, INIT))


class Recorder(BatchEnd, EpochEnd):
    def __init__(self, out, metrics, tag):
        self.out = out
        self.metrics = metrics
        self.tag = tag
        self.batch = 0
        self.epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            name, value = metric.get()
            self.out[f"{self.tag}:e{self.epoch}:b{self.batch}:{name}"] = np.array(value)
        self.batch += 1
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        for name, param in estimator.net.collect_params().items():
            self.out[f"{self.tag}:e{self.epoch}:{name}"] = param.data().asnumpy()
        self.epoch += 1
        self.batch = 0
        return False


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        msg = record.getMessage()
        msg = re.sub(r"in [0-9.]+s", "in Ts", msg)
        msg = re.sub(r"total [0-9]+s", "total Ts", msg)
        msg = re.sub(r"as \S*[/\\]([^/\\\s]+)$", r"as \1", msg)  # a path: its base name
        self.lines.append(msg)


def run(folder, work):
    out = {}
    x, y = data(3)
    vx, vy = data(4)
    train = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, y), batch_size=8)
    val = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(vx[:20], vy[:20]), batch_size=8)

    net = make_net()
    net.load_parameters(os.path.join(folder, INIT))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.2, "momentum": 0.9})
    est = Estimator(net, mx.gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                    context=mx.cpu())
    lines = _Lines()
    est.logger.addHandler(lines)
    out["train_metric_names"] = np.array([m.name for m in est.train_metrics])
    out["val_metric_names"] = np.array([m.name for m in est.val_metrics])
    handlers = [Recorder(out, est.train_metrics, "fit"),
                CheckpointHandler(work, model_prefix="mlp", monitor=est.val_metrics[0],
                                  save_best=True, mode="max"),
                EarlyStoppingHandler(est.val_metrics[1], patience=5, mode="min")]
    est.fit(train, val_data=val, epochs=2, event_handlers=handlers)
    for metric in est.val_metrics:
        name, value = metric.get()
        out["fit:val:" + name] = np.array(value)
    out["files"] = np.array(sorted(os.listdir(work)))

    est.fit(train, batches=3, event_handlers=[Recorder(out, est.train_metrics, "batches")])
    for name, param in net.collect_params().items():
        out["batches:" + name] = param.data().asnumpy()

    est.evaluate(val)
    for metric in est.val_metrics:
        name, value = metric.get()
        out["evaluate:" + name] = np.array(value)
    out["log"] = np.array(lines.lines)
    return out
