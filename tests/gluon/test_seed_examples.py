"""The issue's four Gluon examples, written as for MXNet with only the import changed.

What MXNet 1.9.1 does with the same code is recorded in tests/golden/gluon/manifest.json
(``seed``) by gen_gluon.py: parameter names, what ``print`` shows inside ``hybrid_forward``,
the constant's naming, ``collect_params`` selections, and the exported files' sha256.
"""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

import gluonport as mx
from gluonport import gluon

from . import _golden as G

SEED = G.manifest()["seed"]


@pytest.fixture(autouse=True)
def _fresh_names():
    # The generator built each example in a fresh NameManager (names as in a new process).
    with mx.name.NameManager():
        yield


# (a) ------------------------------------------------------------------------------------------
class Model(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Model, self).__init__(**kwargs)  # noqa: UP008 (the example as written for MXNet)
        # use name_scope to give child Blocks appropriate names.
        with self.name_scope():
            self.dense0 = gluon.nn.Dense(20)
            self.dense1 = gluon.nn.Dense(20)

    def hybrid_forward(self, F, x):
        x = F.relu(self.dense0(x))
        return F.relu(self.dense1(x))


def test_a_two_dense_hybridblock():
    model = Model()
    model.initialize(ctx=mx.cpu(0))
    first = model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    model.hybridize()
    second = model(mx.nd.zeros((10, 10), ctx=mx.cpu(0)))
    assert list(first.shape) == SEED["a"]["out_shape"]
    assert (first == second).asnumpy().all() == SEED["a"]["zeros_out_equal"]
    assert G.param_list(model) == SEED["a"]["params"]
    G.set_weights(model)
    x = mx.nd.array(G.shared.make_input((10, 10)))
    G.assert_close(model(x).asnumpy(), G.output("seed/a"))


# (b) ------------------------------------------------------------------------------------------
class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)  # noqa: UP008 (the example as written for MXNet)
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


def _printed(fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn()
    return buf.getvalue(), out


def test_b_lenet_print_hybridize_export_imports(tmp_path, monkeypatch):
    net = Net()
    net.initialize()
    mx.random.seed(42)
    x = mx.nd.random_normal(shape=(16, 1, 28, 28))
    printed, eager = _printed(lambda: net(x))
    assert printed.splitlines()[-1] == SEED["b"]["printed_imperative"]  # <NDArray 16x1x28x28 ...
    net.hybridize(static_alloc=True, static_shape=True)
    printed, first = _printed(lambda: net(x))
    assert printed.strip() == SEED["b"]["printed_hybrid_first"]  # <Symbol data>
    printed, second = _printed(lambda: net(x))
    assert printed == SEED["b"]["printed_hybrid_second"] == ""  # the cached graph runs
    G.assert_close(first.asnumpy(), eager.asnumpy())
    G.assert_close(second.asnumpy(), first.asnumpy(), rtol=1e-6, atol=1e-7)
    assert G.param_list(net) == SEED["b"]["params"]

    G.set_weights(net)
    data = mx.nd.array(G.shared.make_input((16, 1, 28, 28)))
    G.assert_close(net(data).asnumpy(), G.output("seed/b"))
    monkeypatch.chdir(tmp_path)
    net.export('model', epoch=1)
    assert sorted(os.listdir(tmp_path)) == ["model-0001.params", "model-symbol.json"]
    assert G.sha256("model-symbol.json") == SEED["b"]["symbol_sha256"]
    assert G.sha256("model-0001.params") == SEED["b"]["params_sha256"]
    block = gluon.SymbolBlock.imports('model-symbol.json', ['data'], 'model-0001.params')
    G.assert_close(block(data).asnumpy(), G.output("seed/b/imported"))
    G.assert_close(block(data).asnumpy(), net(data).asnumpy(), rtol=1e-6, atol=1e-7)


# (c) ------------------------------------------------------------------------------------------
def test_c_constant_passed_as_keyword():
    # Defined here so that, as in the generator, the class is called Net (prefix 'net0_').
    class Net(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Net, self).__init__(**kwargs)  # noqa: UP008 (the example as written for MXNet)
            with self.name_scope():
                self.anchors = self.params.get_constant('anchor_1',
                                                        mx.nd.array([[1, 2], [3, 4]]))
                self.dense = gluon.nn.Dense(2)

        def hybrid_forward(self, F, x, anchors):
            return F.broadcast_add(self.dense(x), anchors)

    net = Net()
    expected = SEED["c"]
    assert {k: v.name for k, v in net._reg_params.items()} == expected["reg_params"]
    assert repr(net.anchors) == expected["anchor_repr"]
    assert net.anchors.grad_req == expected["anchor_grad_req"] == "null"
    net.initialize()
    x = mx.nd.array(G.shared.make_input((2, 3)))
    net(x)
    assert G.param_list(net) == expected["params"]
    for k, v in G.shared.make_weights([(k, p.shape) for k, p in net.collect_params().items()
                                       if not k.endswith("anchor_1")]).items():
        net.collect_params()[k].set_data(mx.nd.array(v))
    G.assert_close(net(x).asnumpy(), G.output("seed/c/imperative"))
    net.hybridize()
    G.assert_close(net(x).asnumpy(), G.output("seed/c"))
    np.testing.assert_array_equal(net.anchors.data().asnumpy(), [[1, 2], [3, 4]])


# (d) ------------------------------------------------------------------------------------------
def test_d_collect_params_select():
    class Model(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super(Model, self).__init__(**kwargs)  # noqa: UP008 (the example as written for MXNet)
            with self.name_scope():
                self.conv1 = gluon.nn.Conv2D(4, 3, prefix='conv1_')
                self.bn = gluon.nn.BatchNorm(prefix='bn_')
                self.fc = gluon.nn.Dense(3, prefix='fc_')

        def hybrid_forward(self, F, x):
            return self.fc(F.relu(self.bn(self.conv1(x))))

    model = Model(prefix='')
    plain = Model()
    expected = SEED["d"]
    assert list(model.collect_params().keys()) == expected["all"]
    assert list(model.collect_params('.*weight|.*bias').keys()) == expected["weight_bias"]
    assert list(model.collect_params('conv1_weight|conv1_bias|fc_weight|fc_bias').keys()) == \
        expected["explicit"]
    assert list(plain.collect_params().keys()) == expected["prefixed_all"]
    assert list(plain.collect_params('.*weight|.*bias').keys()) == \
        expected["prefixed_weight_bias"]
    # re.match anchors at the start: full names with a block prefix do not match
    assert list(plain.collect_params('conv1_weight|conv1_bias|fc_weight|fc_bias').keys()) == \
        expected["prefixed_explicit"] == []
