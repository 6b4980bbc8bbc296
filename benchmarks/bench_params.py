"""Benchmark gluonport's ``.params`` reader and writer against raw numpy file I/O.

Run from the repository root:

    python benchmarks/bench_params.py [--runs 7]

It writes benchmarks/_data/resnet50_like-0000.params (about 102 MB: a ResNet-50-shaped dict of
float32 arrays with arg:/aux: names, as HybridBlock.export writes) and prints a table of median
times. Baselines: ``numpy.fromfile`` of the whole file (load) and one ``write`` of the file's
bytes (save). "lazy" rows time the memory-mapped load alone (no data read yet); "touched" rows add
a float64 sum over every value on both sides, so page faults of the mapping are paid for. Files
are in the page cache after the first run, so this measures the library, not the disk.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gluonport.formats import params  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")
STAGES = ((64, 3), (128, 4), (256, 6), (512, 3))  # ResNet-50: (width, bottleneck units)


def resnet50_like(seed: int = 0) -> dict[str, np.ndarray]:
    """Parameter shapes of ResNet-50 v1 (about 25.6 M float32 values)."""
    rng = np.random.default_rng(seed)
    shapes: dict[str, tuple[int, ...]] = {"conv0_weight": (64, 3, 7, 7)}
    bn = ["conv0"]
    cin = 64
    for s, (width, units) in enumerate(STAGES, 1):
        for u in range(1, units + 1):
            p = f"stage{s}_unit{u}_"
            shapes[p + "conv1_weight"] = (width, cin, 1, 1)
            shapes[p + "conv2_weight"] = (width, width, 3, 3)
            shapes[p + "conv3_weight"] = (4 * width, width, 1, 1)
            bn += [p + "conv1", p + "conv2", p + "conv3"]
            if u == 1:
                shapes[p + "sc_weight"] = (4 * width, cin, 1, 1)
                bn.append(p + "sc")
            cin = 4 * width
    shapes.update(fc1_weight=(1000, cin), fc1_bias=(1000,))
    out = {f"arg:{k}": rng.random(v, dtype=np.float32) for k, v in shapes.items()}
    for b in bn:
        c = shapes[b + "_weight"][0]
        for suffix, kind in (("gamma", "arg"), ("beta", "arg"), ("moving_mean", "aux"),
                             ("moving_var", "aux")):
            out[f"{kind}:{b}_bn_{suffix}"] = rng.random(c, dtype=np.float32)
    return out


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up: page cache, imports
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def touch(arrays: object) -> float:
    values = arrays.values() if isinstance(arrays, dict) else arrays
    return sum(float(a.sum(dtype=np.float64)) for a in values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, "resnet50_like-0000.params")
    arrays = resnet50_like()
    params.save(path, arrays)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read()
    n_f32 = size // 4  # the whole file viewed as float32: same amount of summing as the arrays

    def np_read() -> np.ndarray:
        return np.fromfile(path, dtype=np.uint8)

    def np_read_touch() -> float:
        return float(np.fromfile(path, dtype="<f4", count=n_f32).sum(dtype=np.float64))

    def raw_write() -> None:
        with open(path + ".raw", "wb") as f:
            f.write(raw)

    rows = [
        ("load, mmap, lazy", lambda: params.load(path), np_read, 1.2),
        ("load, mmap, touched (sum)", lambda: touch(params.load(path)), np_read_touch, 1.2),
        ("load, mmap=False", lambda: params.load(path, mmap=False), np_read, 1.2),
        ("load, mmap=False, touched", lambda: touch(params.load(path, mmap=False)),
         np_read_touch, 1.2),
        ("save (temp file + rename)", lambda: params.save(path, arrays), raw_write, 1.5),
    ]
    print(f"file: {path}\nsize: {size / 1e6:.1f} MB, {len(arrays)} arrays; numpy "
          f"{np.__version__}, Python {sys.version.split()[0]}; median of {runs} runs (ms)\n")
    print(f"| {'operation':<27} | gluonport | baseline | ratio | target | baseline is")
    print(f"|{'-' * 29}|-----------|----------|-------|--------|------------")
    for name, ours, base, target in rows:
        t_ours, t_base = median_ms(ours, runs), median_ms(base, runs)
        ratio = t_ours / t_base
        what = "raw write" if name.startswith("save") else "np.fromfile" + (
            " + sum" if "touched" in name else "")
        flag = "ok" if ratio <= target else "OVER"
        print(f"| {name:<27} | {t_ours:9.1f} | {t_base:8.1f} | {ratio:5.2f} | <={target:<4} | "
              f"{what} ({flag})")
    os.remove(path + ".raw")


if __name__ == "__main__":
    main()
