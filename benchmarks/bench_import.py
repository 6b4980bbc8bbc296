"""ONNX -> MXNet import time against reading the file's bytes, over model sizes.

    python benchmarks/bench_import.py [--sizes 4,32,128,512] [--nodes 200,2000,20000]

Two sweeps, each on models built here (no downloads), written once to a temporary folder:

* **bytes**: an MLP whose Gemm weights total ``--sizes`` MB (4 layers, the width chosen for the
  size), so the parameter bytes dominate;
* **nodes**: a chain of ``--nodes`` small ops (Add/Mul/Relu/Transpose with 8x8 constants), so the
  graph dominates.

For each model it prints the file size, the floor (reading the file's bytes into memory), onnx's
own ``onnx.load``, ``gluonport.onnx.import_model`` (ONNX -> Symbol + parameters) and
``export_mxnet`` (import + writing ``-symbol.json`` and ``-0000.params``), medians of
``--repeat`` runs, with the time per MB or per node. Import time should grow in proportion to
the model: the per-MB and per-node columns stay flat across the sweep.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gluonport.onnx import export_mxnet, import_model


def mlp_model(megabytes: float) -> onnx.ModelProto:
    """4 Gemm layers of width w with w*w*4*4 bytes ~= megabytes."""
    width = int((megabytes * 2**20 / 16) ** 0.5)
    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "x"
    for i in range(4):
        w = rng.standard_normal((width, width), dtype=np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}")]
        nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [f"h{i}"], transB=1))
        nodes.append(helper.make_node("Relu", [f"h{i}"], [f"r{i}"]))
        prev = f"r{i}"
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", width])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["N", width])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def chain_model(n_nodes: int) -> onnx.ModelProto:
    """A chain of n_nodes elementwise/transpose ops over an 8x8 input, a constant per 4."""
    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "x"
    for i in range(n_nodes):
        kind = ("Add", "Mul", "Relu", "Transpose")[i % 4]
        out = f"t{i}"
        if kind in ("Add", "Mul"):
            inits.append(numpy_helper.from_array(
                rng.standard_normal((8, 8)).astype(np.float32), f"c{i}"))
            nodes.append(helper.make_node(kind, [prev, f"c{i}"], [out]))
        elif kind == "Transpose":
            nodes.append(helper.make_node(kind, [prev], [out], perm=[1, 0]))
        else:
            nodes.append(helper.make_node(kind, [prev], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(path: str, out_prefix: str, repeat: int) -> dict:
    def read_bytes():
        with open(path, "rb") as f:
            f.read()

    return {"MB": os.path.getsize(path) / 2**20,
            "read": timed(read_bytes, repeat),
            "onnx.load": timed(lambda: onnx.load(path), repeat),
            "import_model": timed(lambda: import_model(path), repeat),
            "export_mxnet": timed(lambda: export_mxnet(path, out_prefix), repeat)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4,32,128,512", help="MLP sizes in MB")
    ap.add_argument("--nodes", default="200,2000,20000", help="chain lengths")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1-minute average)")
    mlp_cols = ("| MLP file MB | read ms | onnx.load ms | import_model ms | import / read "
                "| import ms/MB | export_mxnet ms |")
    chain_cols = ("| chain nodes | file KB | onnx.load ms | import_model ms | import us/node "
                  "| export_mxnet ms |")

    def mlp_row(mb: float, r: dict) -> str:
        return (f"| {r['MB']:.1f} | {r['read'] * 1e3:.1f} | {r['onnx.load'] * 1e3:.1f} | "
                f"{r['import_model'] * 1e3:.1f} | {r['import_model'] / r['read']:.1f}x | "
                f"{r['import_model'] * 1e3 / r['MB']:.2f} | {r['export_mxnet'] * 1e3:.1f} |")

    def chain_row(n: int, r: dict) -> str:
        return (f"| {n} | {r['MB'] * 1024:.0f} | {r['onnx.load'] * 1e3:.1f} | "
                f"{r['import_model'] * 1e3:.1f} | {r['import_model'] * 1e6 / n:.1f} | "
                f"{r['export_mxnet'] * 1e3:.1f} |")

    with tempfile.TemporaryDirectory() as d:
        for cols, sizes, make, row in (
                (mlp_cols, [float(v) for v in args.sizes.split(",")], mlp_model, mlp_row),
                (chain_cols, [int(v) for v in args.nodes.split(",")], chain_model, chain_row)):
            print("\n" + cols)
            print("|---" * (cols.count("|") - 1) + "|")
            for size in sizes:
                path = os.path.join(d, "model.onnx")
                onnx.save(make(size), path)
                print(row(size, measure(path, os.path.join(d, "out"), args.repeat)))
                os.remove(path)

if __name__ == "__main__":
    main()
