"""Oracle generator for the Gluon tests (tests/gluon/): runs the REAL MXNet 1.9.1.

Run from the repository root (deterministic; rewrites the files below):

    ~/.cache/gluonport-oracle/bin/python tests/golden/gluon/gen_gluon.py

Writes into tests/golden/gluon/:
  zoo_manifest.json.gz  model zoo: input sizes, parameter names/shapes, sha256 of MXNet's
                    exports (gzip: ~10,000 parameter names)
  manifest.json     every other fact the tests compare with: nn/contrib net parameters and
                    reprs, error messages, save/load key lists, summary text, seed-example
                    facts, sha256 of exports not committed
  outputs.npz       MXNet's outputs (model zoo with deterministic weights, nn nets, seeds)
  zoo_<name>-symbol.json.gz   MXNet's export of a few model-zoo nets (for SymbolBlock.imports)
  nn_<net>-, contrib_<net>-symbol.json / -0000.params, seed_a-*, seed_b-symbol.json
                    small exports
  legacy_softmax-symbol.json / -0000.params   a Module-API save_checkpoint with SoftmaxOutput

Weights come from numpy RandomState (see _shared.py), so the tests rebuild them bit for bit
without committing large parameter files. Every net is built inside a fresh
``mx.name.NameManager()`` so its names are those of a fresh process (``resnetv10_...``).
"""

import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _shared  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet import gluon  # noqa: E402
from mxnet.gluon import nn  # noqa: E402
from mxnet.gluon.contrib import nn as cnn  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402

MODELS = ["resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
          "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
          "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
          "alexnet", "densenet121", "densenet161", "densenet169", "densenet201",
          "squeezenet1.0", "squeezenet1.1", "inceptionv3", "mobilenet1.0", "mobilenet0.75",
          "mobilenet0.5", "mobilenet0.25", "mobilenetv2_1.0", "mobilenetv2_0.75",
          "mobilenetv2_0.5", "mobilenetv2_0.25"]

OUTPUTS = {}
TMP = tempfile.mkdtemp()


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def param_list(net):
    return [[k, list(p.shape)] for k, p in net.collect_params().items()]


def message(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - we record whatever MXNet raises
        return [type(exc).__name__, str(exc)]
    return None


def stdout_of(fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()


# --- model zoo -------------------------------------------------------------------------------

def fits(name, size):
    try:
        with mx.name.NameManager():
            net = vision.get_model(name)
        net.infer_shape(mx.nd.zeros((1, 3, size, size)))
        return True
    except mx.base.MXNetError:
        return False


def smallest_size(name):
    """The smallest square input (>= 32) the net accepts (shape validity is monotonic)."""
    if fits(name, 32):
        return 32
    lo, hi = 32, 299
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(name, mid):
            hi = mid
        else:
            lo = mid
    return hi


def zoo_entry(name):
    size = smallest_size(name)
    shape = (1, 3, size, size)
    with mx.name.NameManager():
        net = vision.get_model(name)
    net.hybridize()
    net.infer_shape(mx.nd.zeros(shape))
    path = os.path.join(TMP, "graph.json")
    net._cached_graph[1].save(path)
    entry = {"input": list(shape), "params": param_list(net), "graph_sha256": sha256(path),
             "class": type(net).__name__}
    if name in _shared.ZOO_OUTPUT_NETS:
        entry.update(zoo_export(name, shape))
    print(name, size, len(entry["params"]))
    return entry


def zoo_export(name, shape):
    """Deterministic weights, hybridized forward, export; hashes and output."""
    with mx.name.NameManager():
        net = vision.get_model(name)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(_shared.make_input(shape))
    net(x)  # finish deferred initialization imperatively
    params = net.collect_params()
    weights = _shared.make_weights([(k, p.shape) for k, p in params.items()])
    for k, p in params.items():
        p.set_data(mx.nd.array(weights[k]))
    imperative = net(x).asnumpy()
    net.hybridize()
    out = net(x).asnumpy()
    prefix = os.path.join(TMP, "zoo")
    net.export(prefix)
    OUTPUTS["zoo/" + name] = out
    entry = {"symbol_sha256": sha256(prefix + "-symbol.json"),
             "params_sha256": sha256(prefix + "-0000.params"),
             "imperative_vs_hybrid": float(np.abs(imperative - out).max())}
    if name in _shared.ZOO_JSON_NETS:
        with open(prefix + "-symbol.json", "rb") as src:
            with gzip.GzipFile(os.path.join(HERE, "zoo_%s-symbol.json.gz" % name), "wb",
                               mtime=0) as dst:
                dst.write(src.read())
    return entry


# --- gluon.nn layer nets ---------------------------------------------------------------------

def nn_entry(name):
    with mx.name.NameManager():
        if name in _shared.NN_NETS:
            net = _shared.NN_NETS[name][0](nn)
        else:
            net = _shared.CONTRIB_NETS[name][0](nn, cnn)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(_shared.nn_input(name))
    net(x)
    params = net.collect_params()
    weights = _shared.make_weights([(k, p.shape) for k, p in params.items()])
    for k, p in params.items():
        p.set_data(mx.nd.array(weights[k]))
    OUTPUTS["nn/%s/imperative" % name] = net(x).asnumpy()
    net.hybridize()
    OUTPUTS["nn/" + name] = net(x).asnumpy()
    prefix = os.path.join(HERE, name)
    net.export(prefix)
    return {"params": param_list(net), "repr": repr(net),
            "children_repr": [repr(c) for c in net._children.values()],
            "symbol_sha256": sha256(prefix + "-symbol.json"),
            "params_sha256": sha256(prefix + "-0000.params")}


# --- the four seed examples (as in the issue; only the import differs in the tests) -----------

def seed_a():
    class Model(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)
            # use name_scope to give child Blocks appropriate names.
            with self.name_scope():
                self.dense0 = gluon.nn.Dense(20)
                self.dense1 = gluon.nn.Dense(20)

        def hybrid_forward(self, F, x):
            x = F.relu(self.dense0(x))
            return F.relu(self.dense1(x))

    with mx.name.NameManager():
        model = Model()
    model.initialize(ctx=mx.cpu(0))
    first = model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    model.hybridize()
    second = model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    params = model.collect_params()
    weights = _shared.make_weights([(k, p.shape) for k, p in params.items()])
    for k, p in params.items():
        p.set_data(mx.nd.array(weights[k]))
    x = mx.nd.array(_shared.make_input((10, 10)))
    OUTPUTS["seed/a"] = model(x).asnumpy()
    prefix = os.path.join(HERE, "seed_a")
    model.export(prefix)
    return {"params": param_list(model), "zeros_out_equal": bool((first == second).asnumpy()
                                                                  .all()),
            "out_shape": list(first.shape), "symbol_sha256": sha256(prefix + "-symbol.json"),
            "params_sha256": sha256(prefix + "-0000.params")}


def seed_b():
    class Net(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Net, self).__init__(**kwargs)
            with self.name_scope():
                # layers created in name_scope will inherit name space
                # from parent layer.
                self.conv1 = gluon.nn.Conv2D(6, kernel_size=5)
                self.pool1 = gluon.nn.MaxPool2D(pool_size=2)
                self.conv2 = gluon.nn.Conv2D(16, kernel_size=5)
                self.pool2 = gluon.nn.MaxPool2D(pool_size=2)
                self.fc1 = gluon.nn.Dense(120)
                self.fc2 = gluon.nn.Dense(84)
                # You can use a Dense layer for fc3 but we do dot product manually
                # here for illustration purposes.
                self.fc3_weight = self.params.get('fc3_weight', shape=(10, 84))

        def hybrid_forward(self, F, x, fc3_weight):
            # Here `F` can be either mx.nd or mx.sym, x is the input data,
            # and is either mx.nd or mx.sym if hybridized.
            print(x)
            x = self.pool1(F.relu(self.conv1(x)))
            x = self.pool2(F.relu(self.conv2(x)))
            # 0 means copy over size from corresponding dimension.
            # -1 means infer size from the rest of dimensions.
            x = x.reshape((0, -1))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = F.dot(x, fc3_weight, transpose_b=True)
            return x

    with mx.name.NameManager():
        net = Net()
    net.initialize()
    mx.random.seed(42)
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    printed = stdout_of(lambda: net(x))
    net.hybridize(static_alloc=True, static_shape=True)
    printed_h1 = stdout_of(lambda: net(x))
    printed_h2 = stdout_of(lambda: net(x))
    params = net.collect_params()
    weights = _shared.make_weights([(k, p.shape) for k, p in params.items()])
    for k, p in params.items():
        p.set_data(mx.nd.array(weights[k]))
    data = mx.nd.array(_shared.make_input((16, 1, 28, 28)))
    with contextlib.redirect_stdout(io.StringIO()):
        OUTPUTS["seed/b"] = net(data).asnumpy()
    prefix = os.path.join(TMP, "seed_b")
    net.export(prefix, epoch=1)
    shutil.copy(prefix + "-symbol.json", os.path.join(HERE, "seed_b-symbol.json"))
    block = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0001.params")
    OUTPUTS["seed/b/imported"] = block(data).asnumpy()
    return {"params": param_list(net), "printed_imperative": printed.splitlines()[-1],
            "printed_hybrid_first": printed_h1.strip(), "printed_hybrid_second": printed_h2,
            "symbol_sha256": sha256(prefix + "-symbol.json"),
            "params_sha256": sha256(prefix + "-0001.params")}


def seed_c():
    class Net(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Net, self).__init__(**kwargs)
            with self.name_scope():
                self.anchors = self.params.get_constant('anchor_1',
                                                        mx.nd.array([[1, 2], [3, 4]]))
                self.dense = gluon.nn.Dense(2)

        def hybrid_forward(self, F, x, anchors):
            return F.broadcast_add(self.dense(x), anchors)

    with mx.name.NameManager():
        net = Net()
    net.initialize()
    x = mx.nd.array(_shared.make_input((2, 3)))
    net(x)
    params = net.collect_params()
    weights = _shared.make_weights([(k, p.shape) for k, p in params.items()
                                    if not k.endswith("anchor_1")])
    for k, v in weights.items():
        params[k].set_data(mx.nd.array(v))
    OUTPUTS["seed/c/imperative"] = net(x).asnumpy()
    net.hybridize()
    OUTPUTS["seed/c"] = net(x).asnumpy()
    prefix = os.path.join(TMP, "seed_c")
    net.export(prefix)
    # MXNet names the constant's initializer Constant_<name>_<id(param)>: mask the id so this
    # file stays deterministic
    mask = re.compile(r"(Constant_net0_anchor_1_)\d+")
    with open(prefix + "-symbol.json") as f:
        text = mask.sub(r"\1<id>", f.read())
    return {"reg_params": {k: v.name for k, v in net._reg_params.items()},
            "params": param_list(net), "anchor_repr": repr(net.anchors),
            "anchor_init": mask.sub(r"\1<id>", net.anchors.init),
            "anchor_grad_req": net.anchors.grad_req,
            "export_keys": list(mx.nd.load(prefix + "-0000.params").keys()),
            "symbol_json": text, "params_sha256": sha256(prefix + "-0000.params")}


def seed_d():
    class Model(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)
            with self.name_scope():
                self.conv1 = gluon.nn.Conv2D(4, 3, prefix='conv1_')
                self.bn = gluon.nn.BatchNorm(prefix='bn_')
                self.fc = gluon.nn.Dense(3, prefix='fc_')

        def hybrid_forward(self, F, x):
            return self.fc(F.relu(self.bn(self.conv1(x))))

    with mx.name.NameManager():
        model = Model(prefix='')
        plain = Model()
    return {"all": list(model.collect_params().keys()),
            "weight_bias": list(model.collect_params('.*weight|.*bias').keys()),
            "explicit": list(model.collect_params('conv1_weight|conv1_bias|fc_weight|fc_bias')
                             .keys()),
            "prefixed_all": list(plain.collect_params().keys()),
            "prefixed_weight_bias": list(plain.collect_params('.*weight|.*bias').keys()),
            "prefixed_explicit": list(plain.collect_params(
                'conv1_weight|conv1_bias|fc_weight|fc_bias').keys())}


# --- Block / Parameter API ------------------------------------------------------------------

def two_layer(prefix_units=(4, 3)):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(prefix_units[0], in_units=5), nn.Dense(prefix_units[1]))
    return net


def api_errors():
    out = {}
    with mx.name.NameManager():
        d = nn.Dense(3)
        d.initialize()
        out["deferred_data"] = message(lambda: d.weight.data())
        d2 = nn.Dense(3, in_units=2)
        out["uninitialized_data"] = message(lambda: d2.weight.data())
        out["call_before_initialize"] = message(lambda: d2(mx.nd.ones((1, 2))))
        d3 = nn.Dense(3)
        out["call_before_initialize_deferred"] = message(lambda: d3(mx.nd.ones((1, 2))))
        p = gluon.Parameter("weight", shape=(2, 0))
        out["init_unknown_shape"] = message(lambda: p.initialize())
        out["bad_grad_req"] = message(lambda: gluon.Parameter("w", grad_req="bogus"))
    return out


def api_save_load():
    out = {}
    f = os.path.join(TMP, "p.params")
    with mx.name.NameManager():
        net = two_layer()
        net.initialize()
        net(mx.nd.ones((1, 5)))
        net.save_parameters(f)
        out["save_parameters_keys"] = list(mx.nd.load(f).keys())
        small = nn.HybridSequential()
        with small.name_scope():
            small.add(nn.Dense(4, in_units=5))
        small.initialize()
        small.save_parameters(f)
        out["missing"] = message(lambda: net.load_parameters(f))
        net.save_parameters(f)
        out["extra"] = message(lambda: small.load_parameters(f))
        small.load_parameters(f, ignore_extra=True)
        wrong = two_layer((6, 3))
        wrong.initialize()
        wrong(mx.nd.ones((1, 5)))
        out["shape_mismatch"] = message(lambda: wrong.load_parameters(f))
        net.save_params(f)
        out["save_params_keys"] = list(mx.nd.load(f).keys())
        out["collect_params_save_keys"] = (net.collect_params().save(f, strip_prefix=net.prefix)
                                           or list(mx.nd.load(f).keys()))
    out.update(api_shared())
    return {k: (v.replace(f, "<file>") if isinstance(v, str) else
                [s.replace(f, "<file>") for s in v] if isinstance(v, list) and v and
                isinstance(v[0], str) else v) for k, v in out.items()}


def api_shared():
    """save_parameters of shared parameters: all aliases, and deduplicate keeps the last."""
    class Shared(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Shared, self).__init__(**kwargs)
            with self.name_scope():
                self.a = nn.Dense(2, in_units=3)
                self.b = nn.Dense(2, in_units=3, params=self.a.params)

        def hybrid_forward(self, F, x):
            return self.a(x) + self.b(x)

    f = os.path.join(TMP, "s.params")
    net = Shared()
    net.initialize()
    net.save_parameters(f)
    keys = list(mx.nd.load(f).keys())
    net.save_parameters(f, deduplicate=True)
    return {"shared_keys": keys, "shared_dedup_keys": list(mx.nd.load(f).keys()),
            "shared_collect": list(net.collect_params().keys())}


def api_misc():
    out = {}
    with mx.name.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, 3, in_channels=2), nn.BatchNorm(in_channels=4),
                    nn.Dense(3, in_units=4 * 6 * 6))
        net.initialize()
        x = mx.nd.ones((1, 2, 8, 8))
        out["summary"] = stdout_of(lambda: net.summary(x))
        out["param_repr"] = repr(net[0].weight)
        out["paramdict_repr"] = repr(net[0].params)
        net.cast("float16")
        out["cast_dtypes"] = {k: np.dtype(p.dtype).name for k, p in
                              net.collect_params().items()}
        layers = [nn.Dense(3), nn.Dense(3, activation="relu", in_units=2), nn.Dropout(0.5),
                  nn.BatchNorm(), nn.Embedding(10, 4), nn.Flatten(), nn.InstanceNorm(),
                  nn.LayerNorm(), nn.GroupNorm(), nn.Conv2D(3, 3), nn.Conv2D(3, 3, 2, 1, 2,
                                                                            in_channels=4),
                  nn.Conv1DTranspose(3, 3, output_padding=1, strides=2),
                  nn.MaxPool2D(), nn.AvgPool1D(), nn.GlobalAvgPool3D(), nn.Activation("relu"),
                  nn.LeakyReLU(0.1), nn.PReLU(), nn.ELU(), nn.SELU(), nn.GELU(), nn.Swish(),
                  nn.HybridLambda("tanh"), nn.Lambda("tanh"), nn.ReflectionPad2D(2)]
        out["layer_reprs"] = [repr(layer) for layer in layers]
    return out


def api_legacy_softmax():
    """A Module-API checkpoint: FullyConnected -> SoftmaxOutput (softmax_label not saved)."""
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    out = mx.sym.SoftmaxOutput(fc, name="softmax")
    weights = _shared.make_weights([("fc_weight", (3, 4)), ("fc_bias", (3,))])
    args = {k: mx.nd.array(v) for k, v in weights.items()}
    prefix = os.path.join(HERE, "legacy_softmax")
    mx.model.save_checkpoint(prefix, 0, out, args, {})
    x = mx.nd.array(_shared.make_input((2, 4)))
    res = out.eval(ctx=mx.cpu(), data=x, softmax_label=mx.nd.zeros((2,)), **args)[0]
    OUTPUTS["legacy_softmax"] = res.asnumpy()
    err = message(lambda: gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                                    prefix + "-0000.params"))
    if err is not None:
        err = [err[0], err[1].replace(HERE, "<dir>")]
    return {"imports_error": err, "arguments": out.list_arguments()}


def main():
    manifest = {"mxnet_version": mx.__version__, "nn": {}, "seed": {}}
    zoo = {"mxnet_version": mx.__version__, "zoo": {}}
    manifest["seed"]["a"] = seed_a()
    manifest["seed"]["b"] = seed_b()
    manifest["seed"]["c"] = seed_c()
    manifest["seed"]["d"] = seed_d()
    for name in list(_shared.NN_NETS) + list(_shared.CONTRIB_NETS):
        manifest["nn"][name] = nn_entry(name)
    manifest["api"] = {"errors": api_errors(), "save_load": api_save_load(), "misc": api_misc(),
                       "legacy_softmax": api_legacy_softmax()}
    for name in MODELS:
        zoo["zoo"][name] = zoo_entry(name)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    with gzip.GzipFile(os.path.join(HERE, "zoo_manifest.json.gz"), "wb", mtime=0) as f:
        f.write(json.dumps(zoo, sort_keys=True, separators=(",", ":")).encode())
    np.savez(os.path.join(HERE, "outputs.npz"), **OUTPUTS)
    shutil.rmtree(TMP)


if __name__ == "__main__":
    main()
