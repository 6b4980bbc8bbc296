"""resnet50_v1 at batch 1 on gluonport's numpy executor vs MXNet 1.9.1 (target: <= 3x).

    python benchmarks/bench_executor.py [--iters 10]

Model files are MXNet model-zoo exports with random weights, made by the oracle once
(benchmarks/_data/); MXNet runs hybridized with static_alloc/static_shape on the same files.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _oracle import model_files, table, time_mxnet

import gluonport as mx


def time_numpy(prefix: str, shape: tuple, iters: int) -> dict:
    sym, arg, aux = mx.model.load_checkpoint(prefix, 0)
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, shape).astype(np.float32))
    ex = sym.bind(mx.cpu(), {"data": x, **arg}, aux_states=aux)
    ex.forward()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        ex.forward()
        ts.append(time.perf_counter() - t0)
    return {"median_ms": float(np.median(ts) * 1e3), "p90_ms": float(np.percentile(ts, 90) * 1e3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iters", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for name, shape in (("resnet50_v1", (1, 3, 224, 224)),):
        prefix = model_files(name, shape)
        ours = time_numpy(prefix, shape, args.iters)
        theirs = time_mxnet(prefix, shape, iters=args.iters)
        ratio = f"{ours['median_ms'] / theirs['median_ms']:.2f}x" if theirs else "n/a"
        rows.append([name, "1", f"{ours['median_ms']:.1f}", f"{ours['p90_ms']:.1f}",
                     f"{theirs['median_ms']:.1f}" if theirs else "no oracle", ratio])
    print(table(rows, ["model", "batch", "numpy ms (median)", "numpy ms (p90)",
                       "MXNet 1.9.1 ms", "gluonport / MXNet (target <= 3x)"]))


if __name__ == "__main__":
    main()
