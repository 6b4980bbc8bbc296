"""Do files gluonport writes load in the real MXNet 1.9.1 and give the same outputs?

    python tests/golden/mxnet_check/check_in_mxnet.py [--oracle PATH] [--keep DIR]

Our side (this Python) writes, into a temporary folder: Gluon exports (the README's LeNet with
a raw parameter, a model-zoo resnet18_v1 and mobilenetv2_0.25, an LSTM layer net), a legacy
Module-API checkpoint with SoftmaxOutput (save_checkpoint), models round-tripped through ONNX
(export -> import -> export_mxnet: LeNet, and a mini SSD + box_nms detector whose detection ops
the importer restores from the export's provenance), and plain nd.save files of every dtype
MXNet 1.x loads, each with an input and gluonport's output. Then the oracle's Python (MXNet
1.9.1) loads every file and compares. Prints one row per file and exits 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ORACLE = os.path.expanduser("~/.cache/gluonport-oracle/bin/python")

MXNET_SIDE = r'''
import json, sys, numpy as np, mxnet as mx
cases = json.load(open(sys.argv[1]))
rows = []
for c in cases:
    try:
        if c["kind"] == "gluon":
            net = mx.gluon.SymbolBlock.imports(c["symbol"], c["inputs"], c["params"])
            xs = [mx.nd.array(np.load(p)) for p in c["input_files"]]
            out = net(*xs)
            out = out if isinstance(out, (list, tuple)) else [out]
            got = [o.asnumpy() for o in out]
        elif c["kind"] == "checkpoint":
            sym, arg, aux = mx.model.load_checkpoint(c["prefix"], 0)
            x = mx.nd.array(np.load(c["input_files"][0]))
            args = dict(arg); args["data"] = x
            args["softmax_label"] = mx.nd.zeros((x.shape[0],))
            got = [sym.bind(mx.cpu(), args, aux_states=aux).forward()[0].asnumpy()]
        else:  # nd.save files
            loaded = mx.nd.load(c["params"])
            want = np.load(c["expect"])
            got = []
            ok = sorted(loaded) == sorted(want.files) and all(
                np.array_equal(loaded[k].asnumpy(), want[k]) for k in want.files)
            rows.append([c["name"], "ok" if ok else "MISMATCH", 0.0]); continue
        want = [np.load(p) for p in c["output_files"]]
        err = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
        ok = all(np.allclose(g, w, rtol=1e-4, atol=1e-5) for g, w in zip(got, want))
        rows.append([c["name"], "ok" if ok else "MISMATCH", err])
    except Exception as exc:
        rows.append([c["name"], "ERROR %s: %s" % (type(exc).__name__, exc), None])
print(json.dumps(rows))
'''


def _save(d: str, name: str, arrays: list) -> list[str]:
    paths = []
    for i, a in enumerate(arrays):
        p = os.path.join(d, f"{name}-{i}.npy")
        np.save(p, np.asarray(a))
        paths.append(p)
    return paths


def gluon_cases(d: str) -> list[dict]:
    import gluonport as mx
    from gluonport import gluon
    from gluonport.gluon import nn, rnn
    from gluonport.gluon.model_zoo import vision

    class LeNet(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.conv1 = nn.Conv2D(20, kernel_size=(5, 5))
                self.pool1 = nn.MaxPool2D(pool_size=(2, 2), strides=(2, 2))
                self.fc1 = nn.Dense(84)
                self.fc3_weight = self.params.get("fc3_weight", shape=(10, 84))

        def hybrid_forward(self, F, x, fc3_weight):
            x = self.pool1(F.tanh(self.conv1(x))).reshape((0, -1))
            return F.dot(F.tanh(self.fc1(x)), fc3_weight, transpose_b=True)

    class Lstm(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.rnn = rnn.LSTM(16, num_layers=2, bidirectional=True, input_size=8)
                self.out = nn.Dense(4, flatten=False)

        def hybrid_forward(self, F, x):
            return self.out(self.rnn(x))

    rng = np.random.RandomState(0)
    nets = [("lenet_raw_param", LeNet(), (2, 1, 28, 28)),
            ("resnet18_v1", vision.resnet18_v1(), (1, 3, 32, 32)),
            ("mobilenetv2_0.25", vision.mobilenet_v2_0_25(), (1, 3, 32, 32)),
            ("lstm_bidir_2layer", Lstm(), (5, 2, 8))]
    cases = []
    for name, net, shape in nets:
        net.initialize(mx.init.Xavier())
        x = mx.nd.array(rng.uniform(-1, 1, shape))
        net(x)
        for pname, p in net.collect_params().items():
            if pname.endswith(("running_mean", "running_var")):
                lo, hi = (-0.5, 0.5) if pname.endswith("mean") else (0.5, 1.5)
                p.set_data(mx.nd.array(rng.uniform(lo, hi, p.shape)))
        net.hybridize(backend="numpy")
        y = net(x)
        prefix = os.path.join(d, name)
        sym_file, params_file = net.export(prefix)
        cases.append({"kind": "gluon", "name": f"export {name}", "symbol": sym_file,
                      "params": params_file, "inputs": ["data"],
                      "input_files": _save(d, name + "-in", [x.asnumpy()]),
                      "output_files": _save(d, name + "-out", [y.asnumpy()])})
    return cases


def checkpoint_and_onnx_cases(d: str) -> list[dict]:
    import gluonport as mx

    rng = np.random.RandomState(1)
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv1")
    bn = mx.sym.BatchNorm(conv, fix_gamma=False, name="bn1")
    fc = mx.sym.FullyConnected(mx.sym.Activation(bn, act_type="relu"), num_hidden=3, name="fc")
    sym = mx.sym.SoftmaxOutput(fc, name="softmax")
    arg_s, _, aux_s = sym.infer_shape(data=(2, 1, 6, 6))
    args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in zip(sym.list_arguments(), arg_s)
            if n not in ("data", "softmax_label")}
    aux = {n: mx.nd.array(rng.uniform(0.5, 1.5, s)) for n, s in
           zip(sym.list_auxiliary_states(), aux_s)}
    prefix = os.path.join(d, "legacy")
    mx.model.save_checkpoint(prefix, 0, sym, args, aux)
    x = rng.uniform(-1, 1, (2, 1, 6, 6)).astype(np.float32)
    y = mx.load(prefix, 0, backend="numpy")(x)
    cases = [{"kind": "checkpoint", "name": "save_checkpoint SoftmaxOutput", "prefix": prefix,
              "input_files": _save(d, "legacy-in", [x]),
              "output_files": _save(d, "legacy-out", [y])}]
    from gluonport.onnx.importer import export_mxnet

    onnx_file = os.path.join(d, "lenet.onnx")
    lenet = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sample_models", "lenet_bn")
    s2, a2, x2 = mx.model.load_checkpoint(lenet, 0)
    mx.onnx.export_model(s2, {**a2, **x2}, [(2, 1, 28, 28)], onnx_file_path=onnx_file)
    back = os.path.join(d, "lenet_back")
    sym_file, params_file = export_mxnet(onnx_file, back)[:2]
    xin = np.load(lenet + "-input.npy")
    cases.append({"kind": "gluon", "name": "ONNX -> MXNet (export_mxnet) lenet_bn",
                  "symbol": sym_file, "params": params_file,
                  "inputs": mx.load(onnx_file).input_names,
                  "input_files": _save(d, "back-in", [xin]),
                  "output_files": [lenet + "-output.npy"]})
    return cases


def detector_case(d: str) -> list[dict]:
    """A miniature SSD + class-aware NMS (conv heads, MultiBoxPrior, MultiBoxDetection,
    box_nms) exported to ONNX, imported back (the two detection ops are restored from the
    export's provenance: their ONNX lowerings use NonMaxSuppression / Unique / ScatterND, which
    MXNet lacks) and written with export_mxnet; MXNet must give the original graph's outputs."""
    import gluonport as mx
    from gluonport.onnx.importer import export_mxnet

    rng = np.random.RandomState(3)
    params: dict = {}

    def conv(x, name, filters, channels):
        params[f"{name}_weight"] = rng.normal(0, 0.3, (filters, channels, 3, 3)).astype("f4")
        params[f"{name}_bias"] = rng.normal(0, 0.1, filters).astype(np.float32)
        return mx.sym.Convolution(x, mx.sym.var(f"{name}_weight"), mx.sym.var(f"{name}_bias"),
                                  kernel=(3, 3), pad=(1, 1), num_filter=filters, name=name)

    feat = mx.sym.relu(conv(mx.sym.var("data"), "body", 8, 3), name="act")
    cls = mx.sym.reshape(mx.sym.transpose(conv(feat, "cls", 12, 8), axes=(0, 2, 3, 1)),
                         shape=(0, -1, 4))
    cls = mx.sym.transpose(mx.sym.softmax(cls, axis=-1), axes=(0, 2, 1))
    loc = mx.sym.flatten(mx.sym.transpose(conv(feat, "loc", 12, 8), axes=(0, 2, 3, 1)))
    prior = mx.sym.contrib.MultiBoxPrior(feat, sizes=(0.3, 0.15), ratios=(1, 2), name="prior")
    det = mx.sym.contrib.MultiBoxDetection(cls, loc, prior, nms_threshold=0.45, nms_topk=40,
                                           threshold=0.05, name="detection")
    sym = mx.sym.contrib.box_nms(det, overlap_thresh=0.3, topk=20, id_index=0, name="nms")
    x = rng.uniform(0, 1, (2, 3, 8, 8)).astype(np.float32)
    exe = sym.bind(mx.cpu(), {"data": mx.nd.array(x),
                              **{k: mx.nd.array(v) for k, v in params.items()}})
    y = exe.forward()[0].asnumpy()
    onnx_file = os.path.join(d, "detector.onnx")
    mx.onnx.export_model(sym, params, [x.shape], onnx_file_path=onnx_file)
    sym_file, params_file = export_mxnet(onnx_file, os.path.join(d, "detector_back"))[:2]
    restored = {n["op"] for n in json.load(open(sym_file))["nodes"]}
    assert {"_contrib_MultiBoxDetection", "_contrib_box_nms"} <= restored, restored
    return [{"kind": "gluon", "name": "ONNX -> MXNet (export_mxnet) SSD + box_nms, restored ops",
             "symbol": sym_file, "params": params_file, "inputs": ["data"],
             "input_files": _save(d, "detector-in", [x]),
             "output_files": _save(d, "detector-out", [y])}]


def ndsave_cases(d: str) -> list[dict]:
    import gluonport as mx

    rng = np.random.RandomState(2)
    arrays = {f"a_{dt}": rng.uniform(-3, 3, (2, 3)).astype(dt) for dt in
              ("float32", "float64", "float16", "uint8", "int32", "int8", "int64")}
    arrays["a_bool"] = rng.uniform(size=(4,)) > 0.5
    arrays["zero_size"] = np.zeros((2, 0), np.float32)
    path = os.path.join(d, "arrays.params")
    mx.nd.save(path, {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    expect = os.path.join(d, "arrays-expect.npz")
    np.savez(expect, **arrays)
    return [{"kind": "ndsave", "name": "nd.save of every 1.x dtype", "params": path,
             "expect": expect}]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--oracle", default=ORACLE)
    ap.add_argument("--keep", default=None, help="write the files here and keep them")
    args = ap.parse_args()
    d = args.keep or tempfile.mkdtemp(prefix="gluonport-mxcheck-")
    os.makedirs(d, exist_ok=True)
    cases = gluon_cases(d) + checkpoint_and_onnx_cases(d) + detector_case(d) + ndsave_cases(d)
    spec = os.path.join(d, "cases.json")
    with open(spec, "w") as f:
        json.dump(cases, f)
    out = subprocess.run([args.oracle, "-c", MXNET_SIDE, spec], capture_output=True, text=True,
                         timeout=1800)
    if out.returncode != 0:
        print(out.stderr[-3000:], file=sys.stderr)
        return 2
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    width = max(len(r[0]) for r in rows)
    print(f"{'file written by gluonport':<{width}}  result in MXNet 1.9.1   max abs diff")
    for name, result, err in rows:
        print(f"{name:<{width}}  {result:<22} {'' if err is None else f'{err:.2e}'}")
    return 0 if all(r[1] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
