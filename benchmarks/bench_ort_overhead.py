"""How much OrtRunner.run adds on top of onnxruntime's own InferenceSession.run.

Run from the repository root:

    python benchmarks/bench_ort_overhead.py [--calls 3000] [--repeats 7] [--threads 1]

It builds a small MLP (64 -> 256 -> 256 -> 10, ReLU) as an ONNX model, makes one OrtRunner on
cpu(), and times, on the *same* InferenceSession (``runner.session_for``), a raw
``session.run(None, feed)`` against ``runner.run(feed)`` for batch 1 and 32. Each row is the
median over ``repeats`` rounds of the mean per call over ``calls`` calls, interleaved so both
sides see the same machine state. ``--threads`` sets onnxruntime's intra-op threads (1 by
default: a spinning thread pool on a small shared machine makes the noise larger than the
effect). Target: the wrapper adds < 10 % or < 20 us per call. The io-binding column (the GPU
path, run here on CPU) is shown for information, not held to the target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gluonport.runtime import OrtRunner, RuntimeOptions  # noqa: E402

WIDTHS = (64, 256, 256, 10)


def mlp_model(seed: int = 0):
    """The MLP as an ONNX ModelProto with a dynamic batch dim 'N'."""
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "data"
    for i, (cin, cout) in enumerate(zip(WIDTHS, WIDTHS[1:])):
        w = (rng.standard_normal((cin, cout)) / np.sqrt(cin)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(np.zeros(cout, np.float32), f"b{i}")]
        nodes += [h.make_node("MatMul", [prev, f"w{i}"], [f"mm{i}"]),
                  h.make_node("Add", [f"mm{i}", f"b{i}"], [f"fc{i}"])]
        prev = f"fc{i}"
        if i < len(WIDTHS) - 2:
            nodes.append(h.make_node("Relu", [prev], [f"relu{i}"]))
            prev = f"relu{i}"
    graph = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("data", T.FLOAT, ["N", 64])],
                         [h.make_tensor_value_info(prev, T.FLOAT, ["N", 10])], inits)
    return h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)])


def per_call_us(fns: dict[str, Callable[[], object]], calls: int, repeats: int) -> dict:
    """Median over rounds of the mean microseconds per call, rounds interleaved across fns."""
    rounds: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        for _ in range(calls // 10):
            fn()  # warm caches and onnxruntime's thread pool
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            rounds[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: statistics.median(times) for name, times in rounds.items()}


def row(runner: OrtRunner, bound: OrtRunner, batch: int, calls: int, repeats: int) -> str:
    """One table row: raw session vs runner (same session) vs the io-binding runner."""
    feed = {"data": np.random.default_rng(batch).standard_normal((batch, 64), np.float32)}
    session = runner.session_for(feed)
    np.testing.assert_array_equal(runner.run(feed)[0], session.run(None, feed)[0])
    t = per_call_us({"raw": lambda: session.run(None, feed),
                     "runner": lambda: runner.run(feed),
                     "bound": lambda: bound.run(feed)}, calls, repeats)
    added, ratio = t["runner"] - t["raw"], t["runner"] / t["raw"]
    verdict = "met" if added < 20 or ratio < 1.10 else "MISSED"
    return (f"{batch:>5} {t['raw']:>9.2f} {t['runner']:>10.2f} {added:>9.2f} {ratio:>7.3f} "
            f"{t['bound']:>14.2f}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    model = mlp_model()
    runner = OrtRunner(model, options=RuntimeOptions(intra_op_num_threads=args.threads))
    bound = OrtRunner(model, options=RuntimeOptions(intra_op_num_threads=args.threads,
                                                    io_binding=True))
    print(f"{'batch':>5} {'raw us':>9} {'runner us':>10} {'added us':>9} {'ratio':>7}"
          f" {'io-binding us':>14}  target (<10 % or <20 us added)")
    for batch in (1, 32):
        print(row(runner, bound, batch, args.calls, args.repeats))


if __name__ == "__main__":
    main()
