"""Gluon forward: imperative vs hybridized on the numpy executor vs hybridized on onnxruntime.

    python benchmarks/bench_gluon.py [--iters 20]

LeNet (the README's) and resnet18_v1 at batch 1. Target: hybridized on onnxruntime >= 5x faster
than imperative on resnet18_v1 batch 1.

A second table says how far any hybridized path could go on this machine: the model's
convolution + dense multiply-adds (from the traced graph's inferred shapes) at this machine's fp32
GEMM peak (numpy's BLAS on a 2048x2048 float32 matmul, measured in the same run) give a compute
floor in ms; imperative ms / floor is the largest imperative-vs-hybridized speed-up a direct or
GEMM convolution could reach here. With the oracle present, MXNet 1.9.1's own imperative and
hybridized times for the same architecture are printed beside ours.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _oracle import table, time_mxnet_gluon

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


def conv_dense_macs(net, shape: tuple[int, ...]) -> int:
    """Multiply-adds of every Convolution / Deconvolution / FullyConnected node of ``net``'s
    traced graph at input ``shape`` (output elements x weight elements per output)."""
    sym = net(mx.sym.var("data"))
    internals = sym.get_internals()
    arg_shapes, out_shapes, _ = internals.infer_shape(data=shape)
    args = dict(zip(internals.list_arguments(), arg_shapes))
    outs = dict(zip(internals.list_outputs(), out_shapes))
    nodes = json.loads(sym.tojson())["nodes"]
    macs = 0
    for node in nodes:
        if node["op"] in ("Convolution", "Deconvolution", "FullyConnected"):
            weight = args[nodes[node["inputs"][1][0]]["name"]]
            macs += int(np.prod(outs[node["name"] + "_output"])) * int(np.prod(weight[1:]))
    return macs


def gemm_peak_gflops(n: int = 2048, repeat: int = 10) -> float:
    """Best float32 GEMM rate of numpy's BLAS on this machine, GFLOP/s."""
    a = np.random.RandomState(0).rand(n, n).astype(np.float32)
    b = np.random.RandomState(1).rand(n, n).astype(np.float32)
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(repeat))
    return 2 * n ** 3 / best / 1e9


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    peak = gemm_peak_gflops()
    rows, floor_rows = [], []
    for name, make, shape in (("lenet", LeNet, (1, 1, 28, 28)),
                              ("resnet18_v1", lambda: vision.get_model("resnet18_v1"),
                               (1, 3, 224, 224))):
        net = make()
        net.initialize(mx.init.Xavier())
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, shape))
        imperative = time_forward(net, x, max(3, args.iters // 4))
        macs = conv_dense_macs(net, shape)
        net.hybridize(backend="numpy")
        hyb_numpy = time_forward(net, x, max(3, args.iters // 4))
        net.hybridize(backend="onnxruntime", static_alloc=True, static_shape=True)
        hyb_ort = time_forward(net, x, args.iters)
        rows.append([name, f"{imperative:.2f}", f"{hyb_numpy:.2f}", f"{hyb_ort:.2f}",
                     f"{imperative / hyb_numpy:.2f}x", f"{imperative / hyb_ort:.1f}x"])
        floor_ms = 2 * macs / (peak * 1e9) * 1e3
        mxnet = time_mxnet_gluon(name, shape) if name != "lenet" else None
        floor_rows.append([name, f"{macs / 1e9:.3f}", f"{floor_ms:.2f}",
                           f"{2 * macs / (hyb_ort * 1e-3) / 1e9:.0f}",
                           f"{imperative / floor_ms:.1f}x",
                           "-" if mxnet is None else
                           f"{mxnet['imperative_ms']:.1f} / {mxnet['hybridized_ms']:.1f} = "
                           f"{mxnet['imperative_ms'] / mxnet['hybridized_ms']:.2f}x"])
    print(table(rows, ["model (batch 1)", "imperative ms", "hybridized numpy ms",
                       "hybridized onnxruntime ms", "numpy speed-up",
                       "onnxruntime speed-up (>= 5x on resnet18_v1)"]))
    print()
    print(f"fp32 GEMM peak of this machine (numpy BLAS, 2048^2): {peak:.0f} GFLOP/s")
    print(table(floor_rows, ["model (batch 1)", "conv+dense GMAC", "compute floor ms",
                             "onnxruntime GFLOP/s", "largest reachable speed-up",
                             "MXNet 1.9.1 imperative / hybridized ms"]))


if __name__ == "__main__":
    main()
