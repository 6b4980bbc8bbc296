"""Gluon forward: imperative vs hybridized on the numpy executor vs hybridized on onnxruntime.

    python benchmarks/bench_gluon.py [--iters 20]

LeNet (the README's) and resnet18_v1 at batch 1. Target: hybridized on onnxruntime >= 5x faster
than imperative on resnet18_v1 batch 1.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _oracle import table

import gluonport as mx
from gluonport import gluon
from gluonport.gluon import nn
from gluonport.gluon.model_zoo import vision


class LeNet(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(20, kernel_size=(5, 5))
            self.pool1 = nn.MaxPool2D(pool_size=(2, 2), strides=(2, 2))
            self.conv2 = nn.Conv2D(50, kernel_size=(5, 5))
            self.pool2 = nn.MaxPool2D(pool_size=(2, 2), strides=(2, 2))
            self.fc1 = nn.Dense(120)
            self.fc2 = nn.Dense(84)
            self.fc3 = nn.Dense(10)

    def hybrid_forward(self, F, x):
        x = self.pool1(F.tanh(self.conv1(x)))
        x = self.pool2(F.tanh(self.conv2(x)))
        x = F.tanh(self.fc2(F.tanh(self.fc1(x.reshape((0, -1))))))
        return self.fc3(x)


def time_forward(net, x, iters: int) -> float:
    net(x)
    net(x)
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        net(x).wait_to_read()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    rows = []
    for name, make, shape in (("lenet", LeNet, (1, 1, 28, 28)),
                              ("resnet18_v1", lambda: vision.get_model("resnet18_v1"),
                               (1, 3, 224, 224))):
        net = make()
        net.initialize(mx.init.Xavier())
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, shape))
        imperative = time_forward(net, x, max(3, args.iters // 4))
        net.hybridize(backend="numpy")
        hyb_numpy = time_forward(net, x, max(3, args.iters // 4))
        net.hybridize(backend="onnxruntime", static_alloc=True, static_shape=True)
        hyb_ort = time_forward(net, x, args.iters)
        rows.append([name, f"{imperative:.2f}", f"{hyb_numpy:.2f}", f"{hyb_ort:.2f}",
                     f"{imperative / hyb_numpy:.2f}x", f"{imperative / hyb_ort:.1f}x"])
    print(table(rows, ["model (batch 1)", "imperative ms", "hybridized numpy ms",
                       "hybridized onnxruntime ms", "numpy speed-up",
                       "onnxruntime speed-up (>= 5x on resnet18_v1)"]))


if __name__ == "__main__":
    main()
