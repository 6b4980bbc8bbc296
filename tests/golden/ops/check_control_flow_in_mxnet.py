"""Do the MXNet graphs gluonport imports from ONNX If/Scan/Loop (``_cond``, ``_foreach``,
``_while_loop`` with subgraphs) load in the real MXNet 1.9.1 with the same outputs?

    python tests/golden/ops/check_control_flow_in_mxnet.py [--oracle PATH]

Our side (this Python) imports the run-time control-flow models of
tests/onnx/test_control_flow_import.py, runs them on the numpy executor and writes
``-symbol.json`` + ``.params`` + inputs/outputs into a temporary folder; the oracle's Python
(MXNet 1.9.1) binds each graph and compares (1e-5 absolute). Prints one row per model, exits
1 on any mismatch. Not run by the test suite (it needs the oracle).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
ORACLE = os.path.expanduser("~/.cache/gluonport-oracle/bin/python")

MXNET_SIDE = r'''
import json, sys, numpy as np, mxnet as mx
folder, names = sys.argv[1], json.loads(sys.argv[2])
rows = []
for name in names:
    try:
        sym = mx.sym.load("%s/%s-symbol.json" % (folder, name))
        args = dict(mx.nd.load("%s/%s.params" % (folder, name)))
        io = np.load("%s/%s-io.npz" % (folder, name))
        for k in io.files:
            if k.startswith("in:"):
                args[k[3:]] = mx.nd.array(io[k], dtype=io[k].dtype)
        got = [o.asnumpy() for o in sym.bind(mx.cpu(), args, grad_req="null").forward()]
        err = max(float(np.abs(g.reshape(io["out:%d" % i].shape) - io["out:%d" % i]).max())
                  for i, g in enumerate(got))
        rows.append([name, "ok" if err <= 1e-5 else "MISMATCH", err])
    except Exception as exc:
        rows.append([name, "ERROR %s: %s" % (type(exc).__name__, exc), None])
print(json.dumps(rows))
'''


def _cases() -> dict:
    import tests.onnx.test_control_flow_import as t

    rng = np.random.default_rng(0)
    x = np.abs(rng.standard_normal((2, 3))).astype(np.float32)
    scan = {"s0": np.full(2, 0.3, np.float32), "p0": np.ones(2, np.float32),
            "x": rng.standard_normal((2, 5)).astype(np.float32),
            "y": rng.uniform(0.5, 1.5, (5, 2)).astype(np.float32)}

    def loop(m: int, c: bool) -> dict:
        return {"a0": np.array([0.5, -1, 2], np.float32), "M": np.array(m, np.int64),
                "c0": np.array(c)}

    scan8 = {"s0": rng.standard_normal((3, 2)).astype(np.float32),
             "x": rng.standard_normal((3, 4, 2)).astype(np.float32),
             "y": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    return {"if_then": (t._if_model(), {"x": x}), "if_else": (t._if_model(), {"x": -x}),
            "scan": (t._scan_model(), scan), "scan8_nested": (t._scan8_model(), scan8),
            "while_cond": (t._loop_model(True), loop(9, True)),
            "loop_trips": (t._loop_model(False), loop(4, True)),
            "loop_zero": (t._loop_model(False), loop(0, True)),
            "loop_not_started": (t._loop_model(True), loop(4, False))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle", default=ORACLE)
    opts = ap.parse_args()
    sys.path.insert(0, ROOT)
    import gluonport as mx
    from gluonport.onnx.importer import import_graph

    folder = tempfile.mkdtemp(prefix="gp_control_mx_")
    names = []
    for name, (model, feeds) in _cases().items():
        g = import_graph(model)
        params = {k: mx.nd.array(v, dtype=v.dtype) for k, v in
                  {**g.arg_params, **g.aux_params}.items()}
        args = {**params, **{k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}}
        outs = [o.asnumpy() for o in g.sym.bind(mx.cpu(), args).forward()]
        g.sym.save(os.path.join(folder, f"{name}-symbol.json"))
        mx.nd.save(os.path.join(folder, f"{name}.params"), params)
        np.savez(os.path.join(folder, f"{name}-io.npz"),
                 **{f"in:{k}": v.reshape(1) if v.ndim == 0 else v for k, v in feeds.items()},
                 **{f"out:{i}": o for i, o in enumerate(outs)})
        names.append(name)
    done = subprocess.run([opts.oracle, "-c", MXNET_SIDE, folder, json.dumps(names)],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        print(done.stderr)
        return 1
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    for name, status, err in rows:
        print(f"{name:18} {status} {'' if err is None else f'max abs diff {err:.2g}'}")
    return 0 if all(r[1] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
