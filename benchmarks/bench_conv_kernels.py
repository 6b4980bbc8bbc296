"""Time gluonport's Convolution against MXNet 1.9.1's on ResNet-50 v1 convolutions (batch 1).

Run from the repository root:

    python benchmarks/bench_conv_kernels.py [--runs 20] [--all] [--threads N]

Rows: the representative convolutions (7x7/2 stem on 224x224, 3x3 on 56x56x64, 1x1 on
14x14x1024, ...) and, last, the sum over every convolution of ResNet-50 v1 (gluon's
``resnet50_v1``, 53 convolutions) weighted by how often each shape occurs. ``--all`` prints each
distinct shape. Times are the minimum of ``--runs`` calls after a warm-up (the machine may be
shared; the minimum is the least noisy statistic). MXNet's times come from the oracle
interpreter (``$GLUONPORT_ORACLE`` or ``~/.cache/gluonport-oracle/bin/python``) in a
subprocess, run before and after ours; the smaller of its two times is kept. Without the oracle
only our times are printed. ``--threads`` sets OMP/OpenBLAS threads for both sides.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ORACLE = os.environ.get("GLUONPORT_ORACLE",
                        os.path.expanduser("~/.cache/gluonport-oracle/bin/python"))
REPRESENTATIVE = ("7x7/2 3->64 @224", "3x3 64->64 @56", "1x1 1024->256 @14")


def _conv(cin: int, cout: int, k: int, s: int, size: int) -> tuple:
    name = f"{k}x{k}{'/2' if s == 2 else ''} {cin}->{cout} @{size}"
    return name, (1, cin, size, size), (cout, cin, k, k), s, k // 2


def resnet50_v1_convs() -> dict[str, tuple]:
    """Distinct convolutions of gluon's resnet50_v1 at 224x224: name -> (spec, count)."""
    layers: dict[str, list] = {}

    def add(spec: tuple) -> None:
        layers.setdefault(spec[0], [spec, 0])[1] += 1

    add(_conv(3, 64, 7, 2, 224))
    cin, size = 64, 56
    for width, units, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for u in range(units):
            s = stride if u == 0 else 1
            add(_conv(cin, width, 1, s, size))
            out = size // s
            add(_conv(width, width, 3, 1, out))
            add(_conv(width, 4 * width, 1, 1, out))
            if u == 0:
                add(_conv(cin, 4 * width, 1, s, size))
            cin, size = 4 * width, out
    return {k: (v[0], v[1]) for k, v in layers.items()}


def _time(fn, runs: int) -> float:
    fn()
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def time_ours(specs: dict, runs: int) -> dict[str, float]:
    import gluonport as mx

    rng = np.random.default_rng(0)
    out = {}
    for name, ((_, dshape, wshape, s, p), _) in specs.items():
        x = mx.nd.array(rng.uniform(-1, 1, dshape).astype(np.float32))
        w = mx.nd.array(rng.uniform(-1, 1, wshape).astype(np.float32))
        b = mx.nd.array(np.zeros(wshape[0], np.float32))
        attrs = {"kernel": wshape[2:], "stride": (s, s), "pad": (p, p),
                 "num_filter": wshape[0]}
        out[name] = _time(functools.partial(mx.nd.Convolution, x, w, b, **attrs), runs)
    return out


_MXNET_SCRIPT = r"""
import json, sys, time
import mxnet as mx, numpy as np
specs, runs = json.loads(sys.argv[1]), int(sys.argv[2])
res = {}
for name, (dshape, wshape, s, p) in specs.items():
    x = mx.nd.random.uniform(-1, 1, shape=dshape); w = mx.nd.random.uniform(-1, 1, shape=wshape)
    b = mx.nd.zeros(wshape[0])
    f = lambda: mx.nd.Convolution(x, w, b, kernel=tuple(wshape[2:]), stride=(s, s), pad=(p, p),
                                  num_filter=wshape[0]).wait_to_read()
    f()
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter(); f(); best = min(best, time.perf_counter() - t)
    res[name] = best * 1e3
print(json.dumps(res))
"""


def time_mxnet(specs: dict, runs: int) -> dict[str, float] | None:
    if not os.path.exists(ORACLE):
        return None
    plain = {n: (sp[1], sp[2], sp[3], sp[4]) for n, (sp, _) in specs.items()}
    proc = subprocess.run([ORACLE, "-c", _MXNET_SCRIPT, json.dumps(plain), str(runs)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print("MXNet timing failed:", proc.stderr.strip().splitlines()[-1:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _row(name: str, ours: float, theirs: float | None) -> str:
    if theirs is None:
        return f"{name:<26} {ours:>10.2f} {'-':>10} {'-':>7}"
    return f"{name:<26} {ours:>10.2f} {theirs:>10.2f} {ours / theirs:>6.2f}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--all", action="store_true", help="print every distinct convolution")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.threads and os.environ.get("OPENBLAS_NUM_THREADS") != str(args.threads):
        # BLAS reads its thread count when numpy loads: restart with the variables set
        env = dict(os.environ, **{v: str(args.threads) for v in (
            "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    specs = resnet50_v1_convs()
    first = time_mxnet(specs, args.runs)
    ours = time_ours(specs, args.runs)
    second = time_mxnet(specs, args.runs)
    mxnet = None if first is None else {k: min(first[k], (second or first)[k]) for k in first}
    print(f"{'convolution (batch 1)':<26} {'ours ms':>10} {'mxnet ms':>10} {'ratio':>7}")
    shown = specs if args.all else {k: specs[k] for k in REPRESENTATIVE}
    for name in shown:
        print(_row(name, ours[name], None if mxnet is None else mxnet[name]))
    total = sum(ours[n] * c for n, (_, c) in specs.items())
    total_mx = None if mxnet is None else sum(mxnet[n] * c for n, (_, c) in specs.items())
    print(_row("resnet50_v1: all 53 convs", total, total_mx))


if __name__ == "__main__":
    main()
