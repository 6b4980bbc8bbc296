"""Generate the model corpus: real-world MXNet graphs with random weights and MXNet's outputs.

Run with the MXNet 1.9.1 oracle interpreter (never by the test suite)::

    ~/.cache/gluonport-oracle/bin/python tests/corpus/gen_corpus.py            # everything
    ~/.cache/gluonport-oracle/bin/python tests/corpus/gen_corpus.py resnet18_v1 lstm_lm
    ~/.cache/gluonport-oracle/bin/python tests/corpus/gen_corpus.py --force --list

Writes ``tests/golden/large/corpus/<name>/`` (git-ignored, several GB in all):

- ``model-symbol.json``, ``model-0000.params``: the exported graph (Gluon ``export`` or
  ``mx.model.save_checkpoint`` for the legacy Module net);
- ``input.npy`` (batch 1) and ``input_b4.npy`` (batch 4), fixed seeds;
- ``outputs.npz`` / ``outputs_b4.npz``: MXNet's outputs of the exported files (all heads,
  keys ``o0``, ``o1``...), computed by ``Symbol.bind`` on the loaded files;
- ``internals.npz`` (detectors only): the inputs of tie-sensitive ops (NMS, topk, sort...)
  that no tie-sensitive op feeds. With random weights detector scores tie, so the final
  detector outputs are compared by shape only and these inputs at 1e-4;
- ``meta.json``: inputs and shapes, per-output compare mode (``full`` / ``shape``),
  tolerances, MXNet's ``infer_shape`` of every internal output keyed by its name.

Weights are random (no network here): ``Xavier`` with a per-model seed, then every BatchNorm
running mean U(-0.5, 0.5), running var U(0.5, 1.5), gamma and beta U(0.5, 1.5). Models that
MXNet/GluonCV cannot build or export are recorded in ``_skipped.json`` with the reason.
Existing model folders are kept unless ``--force``. Deterministic: re-running rewrites the
same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
import warnings
import zlib

import numpy as np

warnings.filterwarnings("ignore")
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
import mxnet as mx  # noqa: E402
from mxnet import gluon  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "golden", "large", "corpus")

# ops whose outputs depend on the order of (possibly tied) scores
TIE_OPS = {"_contrib_box_nms", "_contrib_box_non_maximum_suppression", "box_nms", "topk",
           "sort", "argsort", "_contrib_MultiBoxDetection", "_contrib_Proposal",
           "_contrib_MultiProposal", "_contrib_box_encode"}


# --------------------------------------------------------------------------- model table

def _vision(name):
    return lambda: gluon.model_zoo.vision.get_model(name)


def _gcv(name, **kw):
    def build():
        from gluoncv import model_zoo
        return model_zoo.get_model(name, pretrained=False, pretrained_base=False, **kw)
    return build


def _gcv_cls(name, **kw):
    def build():
        from gluoncv import model_zoo
        return model_zoo.get_model(name, pretrained=False, **kw)
    return build


class _LM(gluon.HybridBlock):
    """Language-model-like net: Embedding -> recurrent layer -> Dense over the vocabulary."""

    def __init__(self, cell, vocab=50, embed=16, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = gluon.nn.Embedding(vocab, embed)
            self.rnn = cell
            self.out = gluon.nn.Dense(vocab, flatten=False)

    def hybrid_forward(self, F, x):
        return self.out(self.rnn(self.embed(x)))


def _lstm_lm():
    return _LM(gluon.rnn.LSTM(32, num_layers=2, layout="NTC"), prefix="lstmlm_")


def _bigru_lm():
    return _LM(gluon.rnn.GRU(24, num_layers=1, bidirectional=True, layout="NTC"),
               prefix="grulm_")


C64 = (1, 3, 64, 64)
C224 = (1, 3, 224, 224)
S = "classify"
MODELS = {}


def _add(name, build, shape, kind=S, **extra):
    MODELS[name] = dict(build=build, shape=shape, kind=kind, **extra)


for _n in ("resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
           "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
           "alexnet", "mobilenet1.0", "mobilenet0.75", "mobilenet0.5", "mobilenet0.25",
           "mobilenetv2_1.0", "mobilenetv2_0.75", "mobilenetv2_0.5", "mobilenetv2_0.25"):
    _add(_n, _vision(_n), C64)  # global pooling or a Dense sized at first call: 64x64 works
for _n in ("densenet121", "densenet161", "densenet169", "densenet201"):
    _add(_n, _vision(_n), C224)  # ends with AvgPool2D(7): needs 224
for _n in ("squeezenet1.0", "squeezenet1.1"):
    _add(_n, _vision(_n), C224)  # ends with AvgPool2D(13): needs 224
_add("inception_v3", _vision("inceptionv3"), (1, 3, 299, 299))  # AvgPool2D(8): needs 299
_add("gcv_resnet50_v1b", _gcv_cls("resnet50_v1b"), C64)
_add("gcv_mobilenetv3_small", _gcv_cls("mobilenetv3_small"), C64)
_add("gcv_mobilenetv3_large", _gcv_cls("mobilenetv3_large"), C64)
_add("gcv_se_resnet18_v1", _gcv_cls("se_resnet18_v1"), C64)
_add("gcv_cifar_resnet20_v1", _gcv_cls("cifar_resnet20_v1"), (1, 3, 32, 32))
_add("gcv_ssd_512_mobilenet1.0_voc", _gcv("ssd_512_mobilenet1.0_voc"), (1, 3, 256, 256),
     kind="detect")
_add("gcv_yolo3_mobilenet1.0_voc", _gcv("yolo3_mobilenet1.0_voc"), (1, 3, 256, 256),
     kind="detect")
_add("gcv_faster_rcnn_resnet50_v1b_voc", _gcv("faster_rcnn_resnet50_v1b_voc"),
     (1, 3, 256, 256), kind="detect", atol=1e-4,
     tolerance_reason="RPN box decoding of random-weight deltas (|dx| ~6) computes centres and "
     "half-widths of ~3000 that cancel to ~200-pixel corners: float32 rounding there, fed by "
     "~1e-5 relative conv differences, reaches ~5e-3 (checked against a float64 decode)")
_add("gcv_center_net_resnet18_v1b_voc", _gcv("center_net_resnet18_v1b_voc"),
     (1, 3, 256, 256), kind="detect")
# no *_resnet50_voc for DeepLab/PSP in GluonCV 0.11: the ADE20K variants are the same nets
_add("gcv_fcn_resnet50_voc", _gcv("fcn_resnet50_voc", height=128, width=128),
     (1, 3, 128, 128), kind="segment")
_add("gcv_deeplab_resnet50_ade", _gcv("deeplab_resnet50_ade", height=128, width=128),
     (1, 3, 128, 128), kind="segment")
_add("gcv_psp_resnet50_ade", _gcv("psp_resnet50_ade", height=128, width=128),
     (1, 3, 128, 128), kind="segment")
_add("gcv_simple_pose_resnet18_v1b", _gcv("simple_pose_resnet18_v1b"), (1, 3, 128, 96),
     kind="pose")
_add("lstm_lm", _lstm_lm, (1, 12), kind="rnn", vocab=50)
_add("bigru_lm", _bigru_lm, (1, 12), kind="rnn", vocab=50)
_add("legacy_module_convnet", None, (1, 3, 32, 32), kind="legacy")


# --------------------------------------------------------------------------- helpers

def _seed(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def _make_input(spec: dict, batch: int, seed: int) -> np.ndarray:
    rng = np.random.RandomState(seed)
    shape = (batch,) + tuple(spec["shape"][1:])
    if spec["kind"] == "rnn":
        return rng.randint(0, spec["vocab"], shape).astype(np.float32)
    return rng.uniform(-1, 1, shape).astype(np.float32)


def _randomize_bn(net, rng: np.random.RandomState) -> None:
    """Non-trivial BatchNorm statistics and affine parameters (random weights otherwise make
    BatchNorm an identity and hide layout/eps bugs)."""
    for pname, p in sorted(net.collect_params().items()):
        shape = p.shape
        if pname.endswith("running_mean"):
            val = rng.uniform(-0.5, 0.5, shape)
        elif pname.endswith("running_var"):
            val = rng.uniform(0.5, 1.5, shape)
        elif pname.endswith(("_gamma", "_beta")):
            val = rng.uniform(0.5, 1.5, shape)
        else:
            continue
        p.set_data(mx.nd.array(val.astype(np.float32)))


def _flatten(out) -> list:
    if isinstance(out, (list, tuple)):
        return [y for o in out for y in _flatten(o)]
    return [out]


class _Xavier(mx.init.Xavier):
    """Xavier, except for 1-D parameters that a model asks the global initializer for
    (GluonCV's SSD expansion BatchNorm gammas): U(0.5, 1.5) instead of Xavier's refusal."""

    def _init_weight(self, name, arr):
        if len(arr.shape) < 2:
            arr[:] = mx.nd.random.uniform(0.5, 1.5, shape=arr.shape)
        else:
            super()._init_weight(name, arr)


def _export_gluon(spec: dict, prefix: str, x: np.ndarray, seed: int) -> None:
    mx.random.seed(seed)
    net = spec["build"]()
    net.initialize(_Xavier())
    xin = mx.nd.array(x)
    net(xin)  # deferred initialisation
    _randomize_bn(net, np.random.RandomState(seed + 1))
    net.hybridize()
    net(xin)
    net.export(prefix, epoch=0)


def _export_legacy(prefix: str, seed: int) -> None:
    """A Module-API era conv net ending in SoftmaxOutput (with its ``softmax_label``)."""
    mx.random.seed(seed)
    data = mx.sym.var("data")
    x = mx.sym.Convolution(data, num_filter=8, kernel=(3, 3), pad=(1, 1), name="conv1")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    x = mx.sym.Convolution(x, num_filter=16, kernel=(3, 3), pad=(1, 1), name="conv2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    x = mx.sym.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="avg", name="pool2")
    x = mx.sym.Flatten(x, name="flatten")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc1")
    net = mx.sym.SoftmaxOutput(x, name="softmax")
    arg_shapes, _, aux_shapes = net.infer_shape(data=(1, 3, 32, 32))
    rng = np.random.RandomState(seed + 1)
    init = mx.init.Xavier()
    args = {}
    for n, s in zip(net.list_arguments(), arg_shapes):
        if n in ("data", "softmax_label"):
            continue
        arr = mx.nd.zeros(s)
        init(mx.init.InitDesc(n), arr)
        if n.endswith(("_gamma", "_beta")):
            arr = mx.nd.array(rng.uniform(0.5, 1.5, s).astype(np.float32))
        args[n] = arr
    aux = {}
    for n, s in zip(net.list_auxiliary_states(), aux_shapes):
        lo, hi = (-0.5, 0.5) if n.endswith("mean") else (0.5, 1.5)
        aux[n] = mx.nd.array(rng.uniform(lo, hi, s).astype(np.float32))
    mx.model.save_checkpoint(prefix, 0, net, args, aux)


def _labels(sym) -> list[str]:
    return [n for n in sym.list_arguments() if n.endswith("_label")]


def _run_mx(sym, arg_params: dict, aux_params: dict, feed: dict) -> list[np.ndarray]:
    shapes = {k: v.shape for k, v in feed.items()}
    arg_shapes, _, _ = sym.infer_shape_partial(**shapes)
    args = {}
    for n, s in zip(sym.list_arguments(), arg_shapes):
        if n in feed:
            args[n] = mx.nd.array(feed[n])
        elif n in arg_params:
            args[n] = arg_params[n]
        else:  # a label: zeros, as prediction does
            args[n] = mx.nd.zeros(s)
    aux = {n: aux_params[n] for n in sym.list_auxiliary_states()}
    exe = sym.bind(mx.cpu(), args=args, aux_states=aux, grad_req="null")
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def _feed(sym, x: np.ndarray) -> dict:
    feed = {"data": x}
    for lab in _labels(sym):
        feed[lab] = np.zeros((x.shape[0],), np.float32)
    return feed


def _internal_shapes(sym, feed: dict) -> dict:
    internals = sym.get_internals()
    shapes = {k: v.shape for k, v in feed.items()}
    _, out_shapes, _ = internals.infer_shape_partial(**shapes)
    return {n: list(s) if s is not None else None
            for n, s in zip(internals.list_outputs(), out_shapes)}


def _tie_inputs(sym) -> tuple[list[str], list[str]]:
    """Internal outputs on the frontier of the tie-sensitive part of the graph: outputs that
    no tie-sensitive op feeds, read by a tie-sensitive op or by a node one feeds (the scores
    going into NMS/topk, and the box/size heads that are gathered at the indices they pick).
    """
    graph = json.loads(sym.tojson())
    nodes = graph["nodes"]
    tainted = [False] * len(nodes)
    for i, n in enumerate(nodes):
        tainted[i] = any(tainted[j] or nodes[j]["op"] in TIE_OPS for j, _, *_ in n["inputs"])
    internals = sym.get_internals()
    heads = json.loads(internals.tojson())["heads"]
    name_of = {(h[0], h[1]): nm for h, nm in zip(heads, internals.list_outputs())}
    picked, ops = [], []
    for i, n in enumerate(nodes):
        if n["op"] in TIE_OPS:
            ops.append(f"{n['name']} ({n['op']})")
        elif not tainted[i]:
            continue
        for j, k, *_ in n["inputs"]:
            nm = name_of.get((j, k))
            if nm and not tainted[j] and nodes[j]["op"] not in TIE_OPS and \
                    nodes[j]["op"] != "null" and nm not in picked:
                picked.append(nm)
    return picked, ops


# --------------------------------------------------------------------------- one model

def generate(name: str, spec: dict, out_root: str) -> dict:
    d = os.path.join(out_root, name)
    os.makedirs(d, exist_ok=True)
    prefix = os.path.join(d, "model")
    seed = _seed(name)
    x1 = _make_input(spec, 1, seed + 2)
    x4 = _make_input(spec, 4, seed + 3)
    if spec["kind"] == "legacy":
        _export_legacy(prefix, seed)
    else:
        _export_gluon(spec, prefix, x1, seed)
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 0)
    np.save(os.path.join(d, "input.npy"), x1)
    outs = _run_mx(sym, arg_params, aux_params, _feed(sym, x1))
    np.savez(os.path.join(d, "outputs.npz"), **{f"o{k}": o for k, o in enumerate(outs)})
    detect = spec["kind"] == "detect"
    meta = dict(name=name, kind=spec["kind"], seed=seed, inputs={"data": list(x1.shape)},
                input_dtype="float32", labels={n: [1] for n in _labels(sym)},
                rtol=spec.get("rtol", 1e-4), atol=spec.get("atol", 1e-5),
                tolerance_reason=spec.get("tolerance_reason", ""),
                outputs=[dict(name=n, shape=list(o.shape), compare="shape" if detect
                              else "full", finite=bool(np.isfinite(o).all()),
                              max_abs=float(np.abs(o).max()) if o.size else 0.0)
                         for n, o in zip(sym.list_outputs(), outs)])
    meta["batch4"] = _batch4(spec, sym, arg_params, aux_params, x4, d)
    if detect:
        picked, ops = _tie_inputs(sym)
        meta["tie_ops"] = ops
        meta["internals"] = picked
        group = mx.sym.Group([sym.get_internals()[n] for n in picked])
        vals = _run_mx(group, arg_params, aux_params, _feed(sym, x1))
        np.savez(os.path.join(d, "internals.npz"), **dict(zip(picked, vals)))
    meta["internal_shapes"] = _internal_shapes(sym, _feed(sym, x1))
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    return meta


def _batch4(spec, sym, arg_params, aux_params, x4, d) -> dict:
    if spec.get("batch4") is False:
        return dict(ok=False, reason="the net handles one image per call (batch 1 only)")
    try:
        outs = _run_mx(sym, arg_params, aux_params, _feed(sym, x4))
    except Exception as exc:  # MXNet refuses the batch: recorded, not fatal
        text = re.sub(r"\[\d\d:\d\d:\d\d\] \S+: ", "", str(exc).splitlines()[0])
        return dict(ok=False, reason=f"MXNet: {text[:200]}")
    np.save(os.path.join(d, "input_b4.npy"), x4)
    np.savez(os.path.join(d, "outputs_b4.npz"), **{f"o{k}": o for k, o in enumerate(outs)})
    return dict(ok=True, reason="")


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="models to (re)generate (default: all)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--force", action="store_true", help="regenerate existing folders")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(MODELS))
        return 0
    unknown = [n for n in a.names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; see --list")
    os.makedirs(a.out, exist_ok=True)
    skipped_path = os.path.join(a.out, "_skipped.json")
    skipped = json.load(open(skipped_path)) if os.path.exists(skipped_path) else {}
    t_all = time.time()
    for name in a.names or list(MODELS):
        if not a.force and os.path.exists(os.path.join(a.out, name, "meta.json")):
            continue
        t0 = time.time()
        try:
            generate(name, MODELS[name], a.out)
            skipped.pop(name, None)
            print(f"{name}: ok ({time.time() - t0:.1f} s)", flush=True)
        except Exception as exc:
            skipped[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            print(f"{name}: SKIPPED {skipped[name]}", flush=True)
            traceback.print_exc(limit=3)
        with open(skipped_path, "w") as f:
            json.dump(skipped, f, indent=1, sort_keys=True)
    print(f"done in {time.time() - t_all:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
