"""Inference latency/throughput: numpy executor vs onnxruntime vs MXNet 1.9.1 hybridized.

    python benchmarks/bench_inference.py [--iters 20] [--gpu]

resnet50_v1, mobilenetv2_1.0 and an LSTM model at batch 1 and 16. Target: onnxruntime path
<= 0.7x MXNet's latency at batch 1. With --gpu (and onnxruntime-gpu), CUDA EP throughput at
batch 32 vs the CPU EP.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _oracle import DATA, _run, have_oracle, model_files, table, time_mxnet

import gluonport as mx


def lstm_files() -> tuple[str, tuple]:
    """A 2-layer LSTM (input 128, hidden 256) + Dense head, TNC layout, made by the oracle."""
    import os

    prefix = os.path.join(DATA, "lstm2x256")
    if not os.path.exists(prefix + "-0000.params") and have_oracle():
        os.makedirs(DATA, exist_ok=True)
        _run(f"""
            import mxnet as mx, numpy as np
            from mxnet import gluon
            class Net(gluon.HybridBlock):
                def __init__(self, **kw):
                    super().__init__(**kw)
                    with self.name_scope():
                        self.rnn = gluon.rnn.LSTM(256, num_layers=2, input_size=128)
                        self.out = gluon.nn.Dense(10, flatten=False)
                def hybrid_forward(self, F, x):
                    return self.out(self.rnn(x))
            mx.random.seed(0)
            net = Net(); net.initialize(mx.init.Xavier()); net.hybridize()
            net(mx.nd.zeros((35, 1, 128)))
            net.export({prefix!r}, 0)
        """)
    return prefix, (35, 1, 128)


def time_call(fn, x, iters: int) -> tuple[float, float]:
    fn(x)
    fn(x)
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn(x)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3), float(np.percentile(ts, 90) * 1e3)


def batch_shape(shape: tuple, batch: int, axis: int) -> tuple:
    s = list(shape)
    s[axis] = batch
    return tuple(s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--gpu", action="store_true")
    args = ap.parse_args()
    models = [(model_files("resnet50_v1", (1, 3, 224, 224)), (1, 3, 224, 224), 0),
              (model_files("mobilenetv2_1.0", (1, 3, 224, 224)), (1, 3, 224, 224), 0)]
    lstm, lstm_shape = lstm_files()
    models.append((lstm, lstm_shape, 1))
    rows = []
    for prefix, shape, axis in models:
        name = prefix.rsplit("/", 1)[-1]
        numpy_model = mx.load(prefix, 0, backend="numpy")
        ort_model = mx.load(prefix, 0, backend="onnxruntime")
        for batch in (1, 16):
            s = batch_shape(shape, batch, axis)
            x = np.random.RandomState(0).uniform(-1, 1, s).astype(np.float32)
            np_med, np_p90 = time_call(numpy_model, x, max(3, args.iters // 4))
            ort_med, ort_p90 = time_call(ort_model, x, args.iters)
            theirs = time_mxnet(prefix, s, iters=args.iters)
            ratio = f"{ort_med / theirs['median_ms']:.2f}x" if theirs else "n/a"
            rows.append([name, batch, f"{np_med:.1f} / {np_p90:.1f}",
                         f"{ort_med:.1f} / {ort_p90:.1f}", f"{batch / ort_med * 1e3:.0f}",
                         f"{theirs['median_ms']:.1f}" if theirs else "no oracle", ratio])
    print(table(rows, ["model", "batch", "numpy ms med/p90", "onnxruntime ms med/p90",
                       "ort items/s", "MXNet ms", "ort / MXNet (<= 0.7x at batch 1)"]))
    if args.gpu:
        gpu_rows = []
        for prefix, shape, axis in models:
            s = batch_shape(shape, 32, axis)
            x = np.random.RandomState(0).uniform(-1, 1, s).astype(np.float32)
            cpu_med, _ = time_call(mx.load(prefix, 0, backend="onnxruntime"), x, args.iters)
            gpu_med, _ = time_call(mx.load(prefix, 0, ctx=mx.gpu(0), backend="onnxruntime"), x,
                                   args.iters)
            gpu_rows.append([prefix.rsplit("/", 1)[-1], 32, f"{32 / cpu_med * 1e3:.0f}",
                             f"{32 / gpu_med * 1e3:.0f}", f"{cpu_med / gpu_med:.1f}x"])
        print()
        print(table(gpu_rows, ["model", "batch", "CPU EP items/s", "CUDA EP items/s",
                               "CUDA / CPU"]))


if __name__ == "__main__":
    main()
