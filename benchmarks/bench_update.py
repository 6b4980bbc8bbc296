"""Optimizer update time: ``trainer.step`` of resnet18_v1's parameters (11.2M values, SGD with
momentum 0.9 and wd 1e-4, MXNet's multi-tensor kernel), gluonport against MXNet 1.9.1 measured
in the same run, at several thread counts.

    python benchmarks/bench_update.py [--threads 1,2,4,16] [--steps 20]

Each (side, threads) runs in its own child with ``OMP_NUM_THREADS = MKL_NUM_THREADS =
OPENBLAS_NUM_THREADS = threads`` (MXNet's update kernels are OpenMP loops with that many
threads; gluonport's fused updates run cache-sized numpy blocks on one thread). Gradients are
random and fixed; only the update is timed (median of ``--steps`` after 3 warm-up steps).
Without the MXNet oracle only gluonport's column is printed.

Splitting gluonport's blocks over a thread pool was measured with this script and dropped: on
a 16-core machine the step took 21.0 ms on one thread, 27.4 ms on 4 and 32.1 ms on 16 (each of
the ~2000 ufunc calls holds the GIL for its dispatch, and the threads queue for it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from _oracle import ORACLE, cpu_model, table

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(side: str, steps: int) -> dict:
    if side == "mxnet":
        import mxnet as mx
    else:
        import gluonport as mx
    net = mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 3, 32, 32)))
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    rs = np.random.RandomState(0)
    for p in params:
        p.grad()[:] = mx.nd.array(rs.randn(*p.shape).astype("float32"))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4})
    times = []
    for i in range(steps + 3):
        for p in params:  # as a backward pass leaves them (both sides' Trainer checks this)
            for d in p.list_data():
                d._fresh_grad = True
        t0 = time.perf_counter()
        trainer.step(32)
        mx.nd.waitall()
        if i >= 3:
            times.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": float(np.median(times)), "min_ms": float(min(times)),
            "values": int(sum(int(np.prod(p.shape)) for p in params))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default=None,
                    help="comma-separated thread counts (default: 1, 2, 4, ... up to the CPUs)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps)))
        return
    cpus = os.cpu_count() or 1
    counts = [int(t) for t in args.threads.split(",")] if args.threads else \
        sorted({min(cpus, 1 << k) for k in range(cpus.bit_length() + 1)})
    sides = [("gluonport", sys.executable)]
    if os.path.exists(ORACLE):
        sides.insert(0, ("mxnet", ORACLE))
    else:
        print(f"MXNet oracle missing ({ORACLE}): gluonport only")
    rows, values = [], 0
    for n in counts:
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE) + os.pathsep +
                   os.environ.get("PYTHONPATH", ""))
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(n)
        got = {}
        for side, python in sides:
            out = subprocess.run([python, os.path.abspath(__file__), "--worker", side,
                                  "--steps", str(args.steps)], capture_output=True, text=True,
                                 env=env, timeout=900)
            lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
            got[side] = json.loads(lines[-1]) if lines else None
            if got[side] is None:
                print(f"{side} at {n} threads failed: {out.stderr.strip()[-300:]}")
            else:
                values = got[side]["values"]
        mx_row, gp_row = got.get("mxnet"), got.get("gluonport")

        def fmt(r):
            return "-" if not r else f"{r['median_ms']:.2f} ({r['min_ms']:.2f})"

        ratio = (f"{gp_row['median_ms'] / mx_row['median_ms']:.2f}x"
                 if mx_row and gp_row else "-")
        rows.append([str(n), fmt(mx_row), fmt(gp_row), ratio])
    print(f"trainer.step of resnet18_v1 ({values / 1e6:.1f}M values, SGD momentum 0.9, wd 1e-4)"
          f", ms: median (fastest); {cpus} CPUs ({cpu_model()}), "
          f"load average {os.getloadavg()[0]:.2f}")
    print(table(rows, ["threads", "MXNet", "gluonport", "gluonport/MXNet"]))


if __name__ == "__main__":
    main()
