"""Check that checkpoints written by gluonport's ONNX importer load and run in MXNet 1.9.1.

Run from the repository root in two steps (the first with gluonport's Python, the second
with the oracle's):

    python tests/golden/onnx/check_in_mxnet.py write /tmp/onnx_import_check
    ~/.cache/gluonport-oracle/bin/python tests/golden/onnx/check_in_mxnet.py check \
        /tmp/onnx_import_check

``write`` builds small ONNX models (a PyTorch-style CNN with a Shape->Gather->Concat->Reshape
flatten, BatchNorm, pooling, Gemm; an LSTM; the bundled MLP exported to ONNX), imports each
with ``gluonport.onnx.export_mxnet`` and saves the input and onnxruntime's output. ``check``
loads every checkpoint with ``mx.model.load_checkpoint``, binds it and compares MXNet's output
with onnxruntime's (rtol 1e-4). Deterministic: fixed seeds. Nothing is committed from it.
"""
import json
import os
import sys

import numpy as np


def _models():
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)

    def make(nodes, inputs, outputs, inits, opset=13):
        graph = helper.make_graph(
            nodes, "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
                         for k, v in inputs.items()],
            [], [numpy_helper.from_array(v, k) for k, v in inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        typed = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
        model.graph.output.extend(typed[o] for o in outputs)
        return model

    n = helper.make_node
    cnn = make([n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                n("BatchNormalization", ["c", "s", "bb", "m", "v"], ["bn"]),
                n("Relu", ["bn"], ["r"]), n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2],
                                            strides=[2, 2]),
                n("Shape", ["p"], ["sh"]), n("Gather", ["sh", "zero"], ["n0"], axis=0),
                n("Unsqueeze", ["n0", "ax0"], ["n1"]), n("Concat", ["n1", "m1"], ["tgt"], axis=0),
                n("Reshape", ["p", "tgt"], ["flat"]),
                n("Gemm", ["flat", "fw", "fb"], ["y"], transB=1)],
               {"x": f32(2, 3, 8, 8)}, ["y"],
               {"w": f32(4, 3, 3, 3), "b": f32(4), "s": f32(4), "bb": f32(4), "m": f32(4),
                "v": np.abs(f32(4)) + 0.5, "zero": np.array(0, np.int64),
                "ax0": np.array([0], np.int64), "m1": np.array([-1], np.int64),
                "fw": f32(5, 64), "fb": f32(5)})
    lstm = make([n("LSTM", ["x", "w", "r", "b"], ["y", "yh", "yc"], hidden_size=4,
                   direction="bidirectional")], {"x": f32(5, 2, 3)}, ["y", "yh", "yc"],
                {"w": f32(2, 16, 3), "r": f32(2, 16, 4), "b": f32(2, 32)}, opset=14)
    softmax = make([n("Softmax", ["x"], ["y"], axis=1), n("Clip", ["y", "lo"], ["z"])],
                   {"x": f32(2, 3, 4)}, ["z"], {"lo": np.array(0.1, np.float32)})
    return {"cnn": cnn, "lstm": lstm, "softmax_clip": softmax}


def write(folder):
    import onnxruntime as ort

    from gluonport.onnx import export_model, export_mxnet

    os.makedirs(folder, exist_ok=True)
    models = _models()
    here = os.path.dirname(os.path.abspath(__file__))
    samples = os.path.join(here, "..", "..", "..", "sample_models")
    mlp = export_model(os.path.join(samples, "mlp-symbol.json"),
                       os.path.join(samples, "mlp-0000.params"), in_shapes=[(4, 10)],
                       onnx_file_path=os.path.join(folder, "mlp.onnx"))
    import onnx

    models["mlp"] = onnx.load(mlp)
    index = {}
    for name, model in models.items():
        path = os.path.join(folder, name + ".onnx")
        onnx.save(model, path)
        feeds = {i.name: np.random.default_rng(1).standard_normal(
            [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}}
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        outs = sess.run(None, feeds)
        export_mxnet(path, os.path.join(folder, name))
        np.savez(os.path.join(folder, name + "-io.npz"),
                 **{f"in_{k}": v for k, v in feeds.items()},
                 **{f"out_{i}": o for i, o in enumerate(outs)})
        index[name] = {"inputs": list(feeds), "n_out": len(outs)}
    with open(os.path.join(folder, "index.json"), "w") as f:
        json.dump(index, f)
    print(f"wrote {len(index)} checkpoints to {folder}")


def check(folder):
    import mxnet as mx

    with open(os.path.join(folder, "index.json")) as f:
        index = json.load(f)
    failures = 0
    for name, info in index.items():
        sym, arg, aux = mx.model.load_checkpoint(os.path.join(folder, name), 0)
        io = np.load(os.path.join(folder, name + "-io.npz"))
        args = {k: v for k, v in arg.items()}
        args.update({k: mx.nd.array(io[f"in_{k}"]) for k in info["inputs"]})
        ex = sym.bind(mx.cpu(), args, aux_states=aux, grad_req="null")
        outs = ex.forward(is_train=False)
        for i in range(info["n_out"]):
            want = io[f"out_{i}"]
            got = outs[i].asnumpy().reshape(want.shape)
            ok = np.allclose(got, want, rtol=1e-4, atol=1e-5)
            failures += not ok
            print(f"{name} output {i}: {'OK' if ok else 'MISMATCH'} "
                  f"(max abs diff {np.abs(got - want).max():.2e})")
    print("all outputs match" if not failures else f"{failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    sys.exit(write(sys.argv[2]) if sys.argv[1] == "write" else check(sys.argv[2]))
