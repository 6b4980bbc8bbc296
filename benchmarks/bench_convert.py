"""MXNet files -> ONNX: gluonport's time vs the floor (read + write the same bytes) and vs
MXNet 1.9.1's ``mxnet.onnx.export_model`` on the same files.

    python benchmarks/bench_convert.py

Targets: gluonport <= 3x the floor; gluonport <= 0.25x MXNet's export time.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from _oracle import model_files, table, time_mxnet_export

import gluonport as mx


def floor_seconds(prefix: str, out: str) -> float:
    """Read the two input files and write the same number of bytes: the I/O floor."""
    t0 = time.perf_counter()
    with open(prefix + "-0000.params", "rb") as f:
        data = f.read()
    with open(prefix + "-symbol.json", "rb") as f:
        data += f.read()
    with open(out, "wb") as f:
        f.write(data)
    return time.perf_counter() - t0


def ours_seconds(prefix: str, shape: tuple, out: str) -> float:
    t0 = time.perf_counter()
    mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [shape],
                         onnx_file_path=out, dynamic=True)
    return time.perf_counter() - t0


def main() -> None:
    rows = []
    tmp = tempfile.mkdtemp()
    for name, shape in (("resnet50_v1", (1, 3, 224, 224)), ("vgg16", (1, 3, 224, 224))):
        prefix = model_files(name, shape)
        out = os.path.join(tmp, name + ".onnx")
        ours = statistics.median(ours_seconds(prefix, shape, out) for _ in range(3))
        floor = statistics.median(floor_seconds(prefix, out + ".raw") for _ in range(3))
        theirs = time_mxnet_export(prefix, shape)
        rows.append([name, f"{ours:.2f}", f"{floor:.2f}", f"{ours / floor:.2f}x",
                     f"{theirs:.2f}" if theirs else "no oracle",
                     f"{ours / theirs:.2f}x" if theirs else "n/a"])
    print(table(rows, ["model", "gluonport s", "floor s (read+write)", "vs floor (<= 3x)",
                       "MXNet export_model s", "vs MXNet (<= 0.25x)"]))


if __name__ == "__main__":
    main()
