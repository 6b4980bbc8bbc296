"""``export()`` writes the bytes MXNet 1.9.1 writes, for the same net and weights.

The nn-layer nets (every gluon.nn layer type and the gluon.contrib.nn layers,
tests/golden/gluon/_shared.py) and the seed
examples are built in a fresh ``NameManager`` (the generator did the same in MXNet), so the
automatic names (``hybridsequential0_...``, ``..._relu0``) line up; the flow is MXNet's usual
one: initialize, a first imperative call (deferred init traces each layer once), hybridize,
call, export. That double trace is why MXNet's JSON shows ``__shape__`` "(6, 0)" for a
deferred Dense weight and version 2 on BatchNorm's running-stat entries.
"""

from __future__ import annotations

import re

import pytest

import gluonport as mx
from gluonport import gluon
from gluonport.gluon import nn
from gluonport.gluon.contrib import nn as cnn

from . import _golden as G

NN = G.manifest()["nn"]
SEED = G.manifest()["seed"]
NETS = sorted(G.shared.NN_NETS) + sorted(G.shared.CONTRIB_NETS)


def _build(name):
    with mx.name.NameManager():
        if name in G.shared.NN_NETS:
            return G.shared.NN_NETS[name][0](nn)
        return G.shared.CONTRIB_NETS[name][0](nn, cnn)


def _nn_net(name):
    net = _build(name)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(G.shared.nn_input(name))
    net(x)
    G.set_weights(net)
    return net, x


@pytest.mark.parametrize("name", NETS)
def test_nn_net_export_is_byte_identical(name, tmp_path):
    net, x = _nn_net(name)
    assert G.param_list(net) == NN[name]["params"]
    G.assert_close(net(x).asnumpy(), G.output(f"nn/{name}/imperative"))
    net.hybridize()
    G.assert_close(net(x).asnumpy(), G.output(f"nn/{name}"))
    sym_file, params_file = net.export(str(tmp_path / name))
    with open(sym_file, "rb") as ours, open(G.path(f"{name}-symbol.json"), "rb") as theirs:
        assert ours.read() == theirs.read()
    with open(params_file, "rb") as ours, open(G.path(f"{name}-0000.params"), "rb") as theirs:
        assert ours.read() == theirs.read()


@pytest.mark.parametrize("name", NETS)
def test_nn_net_mxnet_files_import(name):
    """MXNet's exported files run in SymbolBlock.imports and in our net via
    ``collect_params().load`` (arg:/aux: prefixes stripped)."""
    x = mx.nd.array(G.shared.nn_input(name))
    block = gluon.SymbolBlock.imports(G.path(f"{name}-symbol.json"), ["data"],
                                      G.path(f"{name}-0000.params"))
    G.assert_close(block(x).asnumpy(), G.output(f"nn/{name}"))
    net = _build(name)
    net.collect_params().load(G.path(f"{name}-0000.params"))
    G.assert_close(net(x).asnumpy(), G.output(f"nn/{name}"))


@pytest.mark.parametrize("name", NETS)
def test_nn_net_repr(name):
    net = _build(name)
    net.initialize()
    net(mx.nd.array(G.shared.nn_input(name)))
    assert [repr(c) for c in net._children.values()] == NN[name]["children_repr"]
    assert repr(net) == NN[name]["repr"]


def test_seed_a_export_bytes(tmp_path):
    class Model(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.dense0 = gluon.nn.Dense(20)
                self.dense1 = gluon.nn.Dense(20)

        def hybrid_forward(self, F, x):
            x = F.relu(self.dense0(x))
            return F.relu(self.dense1(x))

    with mx.name.NameManager():
        model = Model()
    model.initialize(ctx=mx.cpu(0))
    model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    model.hybridize()
    model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    G.set_weights(model)
    sym_file, params_file = model.export(str(tmp_path / "a"))
    with open(sym_file, "rb") as ours, open(G.path("seed_a-symbol.json"), "rb") as theirs:
        assert ours.read() == theirs.read()
    with open(params_file, "rb") as ours, open(G.path("seed_a-0000.params"), "rb") as theirs:
        assert ours.read() == theirs.read()


def test_seed_c_constant_export(tmp_path):
    """The constant's ``__init__`` is ``Constant_<name>_<id(param)>`` in MXNet: equal up to
    that process-specific number."""
    class Net(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.anchors = self.params.get_constant('anchor_1',
                                                        mx.nd.array([[1, 2], [3, 4]]))
                self.dense = gluon.nn.Dense(2)

        def hybrid_forward(self, F, x, anchors):
            return F.broadcast_add(self.dense(x), anchors)

    with mx.name.NameManager():
        net = Net()
    net.initialize()
    x = mx.nd.array(G.shared.make_input((2, 3)))
    net(x)
    weights = G.shared.make_weights([(k, p.shape) for k, p in net.collect_params().items()
                                     if not k.endswith("anchor_1")])
    for k, v in weights.items():
        net.collect_params()[k].set_data(mx.nd.array(v))
    net.hybridize()
    net(x)
    sym_file, params_file = net.export(str(tmp_path / "c"))
    expected = SEED["c"]
    assert list(mx.nd.load(params_file).keys()) == expected["export_keys"]
    assert G.sha256(params_file) == expected["params_sha256"]
    mask = re.compile(r"(Constant_net0_anchor_1_)\d+")
    assert mask.fullmatch(net.anchors.init)
    assert mask.sub(r"\1<id>", net.anchors.init) == expected["anchor_init"]
    with open(sym_file) as f:
        assert mask.sub(r"\1<id>", f.read()) == expected["symbol_json"]


def test_seed_b_mxnet_json_matches_ours():
    """MXNet's LeNet export JSON (committed) is what our symbol writer writes back."""
    sym = mx.sym.load(G.path("seed_b-symbol.json"))
    with open(G.path("seed_b-symbol.json")) as f:
        assert sym.tojson() == f.read()


def test_deferred_shape_and_aux_version_as_mxnet(tmp_path):
    """Vars traced before deferred init keep the partial shape, and BatchNorm's running stats,
    traced twice, carry entry version 2, in MXNet's JSON and in ours."""
    with open(G.path("nn_2d-symbol.json")) as f:
        theirs = f.read()
    net, x = _nn_net("nn_2d")
    net.hybridize()
    net(x)
    sym_file, _ = net.export(str(tmp_path / "n"))
    with open(sym_file) as f:
        ours = f.read()
    for text in (theirs, ours):
        assert '"__shape__": "(6, 0)"' in text
        assert len(re.findall(r"\[\d+, 0, 2\]", text)) == 2  # running_mean, running_var
