"""Generate the symbol-JSON golden files from the real MXNet 1.9.1.

Run with the oracle interpreter (MXNet 1.9.1, Python 3.8), from the repository root::

    /root/.cache/gluonport-oracle/bin/python tests/golden/formats/gen_symbol_json.py

It writes ``tests/golden/formats/symbol/<name>-symbol.json`` (graphs saved by MXNet with
``Symbol.save`` or ``HybridBlock.export``) and ``tests/golden/formats/symbol/manifest.json``.
The manifest records, for every saved graph and for every file under ``symbol/legacy/``
(MXNet's own test fixtures and hand-written files of older layouts), what MXNet 1.9.1 sees after
``mx.sym.load``: ``list_arguments``, ``list_auxiliary_states``, ``list_outputs`` and the
re-saved text ``mx.sym.load(f).tojson()``. Everything is deterministic (fixed seeds, fixed
creation order, so Gluon's per-process name counters give the same names on every run).
"""

import json
import os
import shutil
import tempfile

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "symbol")
LEGACY = os.path.join(OUT, "legacy")

# Where the files under legacy/ came from (all Apache-2.0, apache/mxnet at tag 1.9.1,
# commit 3f8f3be9987e259491ddc5a78aa9c6903e0b21e3), or why they were written by hand.
LEGACY_ORIGIN = {
    "save_000800.json": "apache/mxnet tests/python/unittest/save_000800.json (MXNet 0.8 file)",
    "test_mkldnn_model1-symbol.json":
        "apache/mxnet tests/python/mkl/data/test_mkldnn_test_mkldnn_model_model1.json (1.2.0)",
    "clojure_test-symbol.json":
        "apache/mxnet contrib/clojure-package/examples/imclassification/test/"
        "test-symbol.json.ref (1.4.0)",
    "handwritten_v0_8-symbol.json":
        "hand-written 0.8 layout: param/attr/backward_source_id, 2-element entries, BatchNorm "
        "without aux inputs, hidden keys without underscores, argmax axis -1",
    "handwritten_v0_9_3-symbol.json":
        "hand-written 0.9.3 layout: attr (singular, unsorted), node_row_ptr, BatchNorm/LeakyReLU "
        "vars without __init__, argmax axis -1",
    "handwritten_v1_no_row_ptr-symbol.json":
        "hand-written 1.9.1 layout without node_row_ptr (optional on load)",
    "handwritten_v2_0-symbol.json":
        "hand-written MXNet 2.0 layout (mxnet_version 20000, is_np_shape 1)",
    "handwritten_control_deps-symbol.json":
        "hand-written 1.9.1 layout with control_deps (no public API writes them)",
}


def mlp():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=128, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def conv_bn():
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv1")
    bn = mx.sym.BatchNorm(conv, fix_gamma=False, eps=2e-5, name="bn1")
    act = mx.sym.Activation(bn, act_type="relu", name="relu1")
    pool = mx.sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    flat = mx.sym.Flatten(pool, name="flatten1")
    fc = mx.sym.FullyConnected(flat, num_hidden=10, name="fc1")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def multi_output():
    data = mx.sym.var("data")
    parts = mx.sym.SliceChannel(data, num_outputs=3, axis=1, name="split")
    added = mx.sym.elemwise_add(parts[0], parts[2], name="add")
    return mx.sym.Group([added, parts[1], parts[1], data])


def concat12():
    xs = [mx.sym.var(f"x{i}") for i in range(12)]
    return mx.sym.Concat(*xs, dim=1, name="concat")


def escapes():
    v = mx.sym.var("donn\u00e9es_\u20ac_\U0001f600",
                   attr={"note": "a\"b\tc\nd\\e\rf", "\u00e9t\u00e9": "caf\u00e9 \u2603"})
    w = mx.sym.var("we\"ird\tname\\x")
    return mx.sym.elemwise_add(v, w, name="sum_\u00fc\"\n")


def user_attrs():
    with mx.AttrScope(ctx_group="dev1", __mood__="calm"):
        data = mx.sym.var("data", attr={"foo": "bar", "lr_mult": "0.5"})
        fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc", attr={"__note__": "x y"})
    with mx.AttrScope(__group__="tail"):
        out = mx.sym.Activation(fc, act_type="tanh", name="act")
    out._set_attr(__force_mirroring__="True")
    return out


def var_attrs():
    w = mx.sym.var("w", shape=(4, 3), dtype="float16", init=mx.init.Xavier(magnitude=2.0),
                   lr_mult=0.5, wd_mult=0.0)
    b = mx.sym.var("b", shape=(4,), dtype="int32", init="zeros", stype="default")
    s = mx.sym.var("s", stype="row_sparse", shape=(0, 3))
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, weight=w, bias=b, num_hidden=4, name="fc")
    return mx.sym.Group([fc, s])


def np_shape_graph():
    with mx.util.np_shape(True):
        a = mx.sym.var("a", shape=(-1, 3))
        fc = mx.sym.FullyConnected(a, num_hidden=2, flatten=False, name="fc")
        return mx.sym.relu(fc, name="relu")


def foreach_graph():
    def body(d, states):
        out = d + states[0]
        return out, [out * 2]

    data = mx.sym.var("data")
    outs, states = mx.sym.contrib.foreach(body, data, [mx.sym.var("s0")])
    return mx.sym.Group([outs, states[0]])


def gluon_export(tmp):
    from mxnet.gluon import nn

    mx.random.seed(0)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, kernel_size=3, padding=1, in_channels=2))
        net.add(nn.BatchNorm(in_channels=4))
        net.add(nn.Activation("relu"))
        net.add(nn.MaxPool2D(pool_size=2))
        net.add(nn.Flatten())
        net.add(nn.Dense(3, activation="relu"))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.ones((1, 2, 4, 4)))
    prefix = os.path.join(tmp, "gluon")
    net.export(prefix)
    return prefix + "-symbol.json"


BUILDERS = [
    ("mlp", mlp, False),
    ("conv_bn", conv_bn, False),
    ("multi_output", multi_output, False),
    ("concat12", concat12, False),
    ("escapes", escapes, False),
    ("user_attrs", user_attrs, False),
    ("var_attrs", var_attrs, False),
    ("np_shape", np_shape_graph, True),
    ("foreach", foreach_graph, False),
]


def oracle_view(path, np_shape):
    """What MXNet sees after loading ``path``."""
    with mx.util.np_shape(np_shape):
        sym = mx.sym.load(path)
        return {
            "list_arguments": sym.list_arguments(),
            "list_auxiliary_states": sym.list_auxiliary_states(),
            "list_outputs": sym.list_outputs(),
            "resaved": sym.tojson(),
        }


def save_all(manifest):
    for name, build, np_shape in BUILDERS:
        fname = name + "-symbol.json"
        path = os.path.join(OUT, fname)
        with mx.util.np_shape(np_shape):
            sym = build()
            sym.save(path)
            text = sym.tojson()
        with open(path, encoding="utf-8") as f:
            assert f.read() == text, name
        manifest[fname] = dict(kind="mxnet", np_shape=np_shape,
                               origin="saved by MXNet 1.9.1 Symbol.save",
                               **oracle_view(path, np_shape))
    tmp = tempfile.mkdtemp()
    try:
        shutil.copy(gluon_export(tmp), os.path.join(OUT, "gluon_export-symbol.json"))
    finally:
        shutil.rmtree(tmp)
    manifest["gluon_export-symbol.json"] = dict(
        kind="mxnet", np_shape=False, origin="saved by MXNet 1.9.1 HybridBlock.export",
        **oracle_view(os.path.join(OUT, "gluon_export-symbol.json"), False))


def legacy_all(manifest):
    for fname in sorted(os.listdir(LEGACY)):
        path = os.path.join(LEGACY, fname)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        np_shape = '"is_np_shape"' in text
        manifest["legacy/" + fname] = dict(kind="legacy", np_shape=np_shape,
                                           origin=LEGACY_ORIGIN[fname],
                                           **oracle_view(path, np_shape))


def main():
    manifest = {}
    save_all(manifest)
    legacy_all(manifest)
    doc = {"mxnet": mx.__version__, "files": manifest}
    with open(os.path.join(OUT, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
