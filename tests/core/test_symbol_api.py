"""Symbol API behaviour, with expected values taken from MXNet 1.9.1 (the oracle)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GraphError, ShapeError


@pytest.fixture()
def net():
    with mx.name.NameManager():
        data = mx.sym.var("data")
        fc1 = mx.sym.FullyConnected(data, num_hidden=3, name="fc1")
        act = mx.sym.Activation(fc1, act_type="relu")
        fc2 = mx.sym.FullyConnected(act, num_hidden=2)
    return data, fc1, act, fc2


def test_names_and_lists(net):
    data, fc1, act, fc2 = net
    assert fc2.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fullyconnected0_weight",
                                    "fullyconnected0_bias"]
    assert fc2.list_outputs() == ["fullyconnected0_output"]
    assert (act.name, fc2.name) == ("activation0", "fullyconnected0")
    assert fc2.get_internals().list_outputs() == [
        "data", "fc1_weight", "fc1_bias", "fc1_output", "activation0_output",
        "fullyconnected0_weight", "fullyconnected0_bias", "fullyconnected0_output"]
    assert fc2.get_children().list_outputs() == ["activation0_output", "fullyconnected0_weight",
                                                 "fullyconnected0_bias"]
    assert data.get_children() is None
    assert repr(fc2) == "<Symbol fullyconnected0>"


def test_attr_dict_copies_op_attrs_to_auto_variables(net):
    fc2 = net[3]
    assert fc2.attr_dict() == {
        "fc1_weight": {"num_hidden": "3"}, "fc1_bias": {"num_hidden": "3"},
        "fc1": {"num_hidden": "3"}, "activation0": {"act_type": "relu"},
        "fullyconnected0_weight": {"num_hidden": "2"},
        "fullyconnected0_bias": {"num_hidden": "2"}, "fullyconnected0": {"num_hidden": "2"}}
    assert net[1].list_attr() == {"num_hidden": "3"}


def test_infer_shape_and_type(net):
    fc2 = net[3]
    assert fc2.infer_shape(data=(4, 5)) == ([(4, 5), (3, 5), (3,), (2, 3), (2,)], [(4, 2)], [])
    assert fc2.infer_shape_partial(data=(0, 5)) == (
        [(0, 5), (3, 5), (3,), (2, 3), (2,)], [(0, 2)], [])
    arg_t, out_t, _ = fc2.infer_type(data="float32")
    assert arg_t == [np.float32] * 5 and out_t == [np.float32]
    with pytest.warns(UserWarning, match="cannot infer"):
        assert fc2.infer_shape() == (None, None, None)


def test_shape_mismatch_names_node_and_shapes(net):
    fc2 = net[3]
    with pytest.raises(ShapeError) as err:
        fc2.infer_shape(data=(4, 5), fc1_weight=(3, 6))
    assert "fc1" in str(err.value) and "(3, 6)" in str(err.value)


def test_operator_node_names():
    with mx.name.NameManager():
        d = mx.sym.var("data")
        names = [(d + 1).name, (d * d).name, (2 - d).name, (d / 3).name, (d ** 2).name,
                 (-d).name, (d > 1).name]
    assert names == ["_plusscalar0", "_mul0", "_rminusscalar0", "_divscalar0",
                     "_powerscalar0", "_mulscalar0", "_greater_scalar0"]


def test_group_getitem_and_split():
    with mx.name.NameManager():
        d = mx.sym.var("data")
        fc1 = mx.sym.FullyConnected(d, num_hidden=3, name="fc1")
        g = mx.sym.Group([fc1, mx.sym.relu(fc1, name="r")])
        s = mx.sym.split(d, num_outputs=3, axis=1, name="sp")
        c = mx.sym.Concat(d, d, dim=1)
    assert repr(g) == "<Symbol group [fc1, r]>"
    assert g.list_outputs() == ["fc1_output", "r_output"]
    assert g["fc1_output"].name == "fc1" and g[1].name == "r"
    assert s.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"] and len(s) == 3
    assert c.name == "concat0" and c.list_attr() == {"num_args": "2", "dim": "1"}
    assert c.list_arguments() == ["data"]
    with pytest.raises(GraphError):
        g["nope"]


def test_variable_attributes_as_mxnet_writes_them():
    v = mx.sym.Variable("v", shape=(2, 3), lr_mult=2, wd_mult=0.5, dtype="float16")
    assert v.list_attr() == {"__dtype__": "2", "__lr_mult__": "2", "__shape__": "(2, 3)",
                             "__wd_mult__": "0.5"}
    assert mx.sym.var("w", attr={"foo": "bar"}, stype="csr").list_attr() == {
        "__storage_type__": "2", "foo": "bar"}
    assert "xavier" in mx.sym.var("x", init=mx.init.Xavier()).attr("__init__")


def test_compose_replaces_free_variables(net):
    fc2 = net[3]
    y = fc2(data=mx.sym.var("x"))
    assert y.list_arguments() == ["x", "fc1_weight", "fc1_bias", "fullyconnected0_weight",
                                  "fullyconnected0_bias"]
    assert fc2.list_arguments()[0] == "data"  # the original is untouched


def test_bind_forward_and_simple_bind(net):
    fc1 = net[1]
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 5)), rng.normal(size=(3, 5)), rng.normal(size=(3,))
    ex = fc1.bind(mx.cpu(), {"data": mx.nd.array(x), "fc1_weight": mx.nd.array(w),
                             "fc1_bias": mx.nd.array(b)})
    out = ex.forward()[0].asnumpy()
    np.testing.assert_allclose(out, x @ w.T + b, rtol=1e-5)
    assert list(ex.output_dict) == ["fc1_output"]
    ex2 = fc1.simple_bind(mx.cpu(), data=(2, 5))
    assert sorted(ex2.arg_dict) == ["data", "fc1_bias", "fc1_weight"]
    assert ex2.forward(data=mx.nd.ones((2, 5)))[0].shape == (2, 3)
    with pytest.raises(GraphError, match="no array for"):
        fc1.bind(mx.cpu(), {"data": mx.nd.array(x)})


def test_json_round_trip_is_byte_identical(net):
    fc2 = net[3]
    text = fc2.tojson()
    assert mx.sym.load_json(text).tojson() == text
    assert text.startswith('{\n  "nodes": [\n    {\n      "op": "null", \n')


def test_value_access_on_symbols_explains_tracing():
    from gluonport import gluon
    from gluonport.errors import NotImplementedForSymbol

    class Bad(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.reshape(x.shape[0], -1)  # works eagerly, not when traced

    net = Bad()
    x = mx.nd.ones((2, 3, 4))
    assert net(x).shape == (2, 12)
    net.hybridize()
    with pytest.raises(NotImplementedForSymbol, match=r"x\.shape .* F\.shape_array"):
        net(x)
    with pytest.raises(NotImplementedForSymbol, match="bool"):
        bool(mx.sym.var("v") > 0)
