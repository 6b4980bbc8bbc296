"""MXNet 1.x user code: LeNet trained to an accuracy on a small synthetic, separable dataset:
10 classes, 20 training and 10 test samples each, 1x28x28, each class a fixed random pattern
plus noise (deterministic numpy). 3 epochs of SGD with momentum, batch 10, data shuffled once
with numpy and loaded in order by a DataLoader. Returns the mean loss, train and test accuracy
(mx.metric.Accuracy) after each epoch, and the parameters after each epoch."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn

EPOCHS, BATCH, CLASSES, NOISE = 3, 10, 10, 0.3
INIT = "lenet_accuracy_init.params"
OPTIMIZER, OPTIMIZER_PARAMS = "sgd", {"learning_rate": 0.02, "momentum": 0.9}


def build():
    net = nn.HybridSequential(prefix="lenet_")
    with net.name_scope():
        net.add(nn.Conv2D(6, kernel_size=5, activation="relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Conv2D(16, kernel_size=5, activation="relu"),
                nn.MaxPool2D(pool_size=2, strides=2),
                nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"),
                nn.Dense(CLASSES))
    return net


def dataset(per_class, seed):
    templates = np.random.RandomState(19).uniform(-1, 1, (CLASSES, 1, 28, 28))
    rs = np.random.RandomState(seed)
    y = np.repeat(np.arange(CLASSES), per_class)
    x = templates[y] + rs.normal(0, NOISE, (len(y), 1, 28, 28))
    order = rs.permutation(len(y))
    return x[order].astype("float32"), y[order].astype("float32")


def init(folder):
    mx.random.seed(9)
    net = build()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 1, 28, 28)))
    net.save_parameters(os.path.join(folder, INIT))


def accuracy(net, loader):
    metric = mx.metric.Accuracy()
    for xb, yb in loader:
        metric.update([yb], [net(xb)])
    return metric.get()[1]


def run(folder):
    net = build()
    net.load_parameters(os.path.join(folder, INIT))
    net.hybridize()
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(*dataset(20, 20)),
                                  batch_size=BATCH, shuffle=False)
    test = gluon.data.DataLoader(gluon.data.ArrayDataset(*dataset(10, 21)),
                                 batch_size=BATCH, shuffle=False)
    trainer = gluon.Trainer(net.collect_params(), OPTIMIZER, dict(OPTIMIZER_PARAMS))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    out = {}
    for epoch in range(EPOCHS):
        total, count = 0.0, 0
        for xb, yb in train:
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(xb.shape[0])
            total += loss.sum().asscalar()
            count += xb.shape[0]
        out[f"epoch{epoch}:loss"] = np.array(total / count, dtype="float64")
        out[f"epoch{epoch}:train_acc"] = np.array(accuracy(net, train), dtype="float64")
        out[f"epoch{epoch}:test_acc"] = np.array(accuracy(net, test), dtype="float64")
        for name, p in net.collect_params().items():
            out[f"epoch{epoch}:{name}"] = p.data().asnumpy()
    return out
