"""CNNs at batch 1 (224x224) on gluonport's numpy executor vs MXNet 1.9.1 (target: <= 3x for
resnet50_v1; mobilenetv2_1.0 and vgg16 are extra rows).

    python benchmarks/bench_executor.py [--iters 10] [--models resnet50_v1,vgg16] [--threads N]

Model files are MXNet model-zoo exports with random weights, made by the oracle once
(benchmarks/_data/); MXNet runs hybridized with static_alloc/static_shape on the same files.
MXNet is timed just before and just after gluonport on each model and its column is the median
of both runs' calls, so a change in machine load hits both sides. The load average is printed:
on a shared machine the times are only comparable within one row.

Threads: numpy's OpenBLAS and MXNet's OpenMP use every core by default. On an oversubscribed
machine multithreaded BLAS degrades sharply (threads wait on each other while descheduled);
``--threads 1`` (or ``OPENBLAS_NUM_THREADS=1``/``OMP_NUM_THREADS=1`` in the environment before
Python starts) gives steadier numbers. gluonport itself never changes the thread settings.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from _oracle import model_files, table, time_mxnet

import gluonport as mx

MODELS = ("resnet50_v1", "mobilenetv2_1.0", "vgg16")
SHAPE = (1, 3, 224, 224)


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


def _mxnet_pooled(prefix: str, iters: int, ours) -> tuple[dict, dict | None]:
    """Ours between two MXNet runs; MXNet's median over both runs' calls."""
    before = time_mxnet(prefix, SHAPE, iters=iters, raw=True)
    mine = ours()
    after = time_mxnet(prefix, SHAPE, iters=iters, raw=True)
    if before is None or after is None:
        return mine, None
    both = np.array(before + after)
    return mine, {"median_ms": float(np.median(both)), "p90_ms": float(np.percentile(both, 90))}


def _row(name: str, ours: dict, theirs: dict | None) -> list[str]:
    ratio = f"{ours['median_ms'] / theirs['median_ms']:.2f}x" if theirs else "n/a"
    return [name, "1", f"{ours['median_ms']:.1f}", f"{ours['p90_ms']:.1f}",
            f"{theirs['median_ms']:.1f}" if theirs else "no oracle", ratio]


def _set_threads(n: int | None) -> None:
    """BLAS reads its thread count when numpy loads: restart with the variables set (MXNet's
    subprocess inherits them)."""
    if n and os.environ.get("OPENBLAS_NUM_THREADS") != str(n):
        env = dict(os.environ, **{v: str(n) for v in (
            "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
        os.execve(sys.executable, [sys.executable, *sys.argv], env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated, from {', '.join(MODELS)}")
    ap.add_argument("--threads", type=int, default=None, help="BLAS/OpenMP threads, both sides")
    args = ap.parse_args()
    _set_threads(args.threads)
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} "
          f"({os.cpu_count()} cores; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')})")
    rows = []
    for name in args.models.split(","):
        prefix = model_files(name, SHAPE)
        ours, theirs = _mxnet_pooled(prefix, args.iters,
                                     lambda p=prefix: time_numpy(p, SHAPE, args.iters))
        rows.append(_row(name, ours, theirs))
    print(table(rows, ["model", "batch", "numpy ms (median)", "numpy ms (p90)",
                       "MXNet 1.9.1 ms", "gluonport / MXNet (resnet50 target <= 3x)"]))
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
