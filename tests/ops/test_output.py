"""Legacy output ops against MXNet 1.9.1 (tests/golden/ops/output.npz), plus label-shape
inference: a legacy checkpoint's ``softmax_label`` must get its shape from the data."""

import json

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, ShapeError
from gluonport.ops import registry
from tests.ops import cases_output
from tests.ops._check import check_nd, check_sym, load_golden

GOLDEN = load_golden("output")
# The forward pass of these ops is the same in training, where MXNet always runs its reference
# kernels (see cases_output's docstring), so TRAIN_CASES go through the same checks.
ALL = cases_output.CASES + cases_output.TRAIN_CASES
IDS = [c["name"] for c in ALL]


@pytest.mark.parametrize("case", ALL, ids=IDS)
def test_nd(case):
    check_nd(case, GOLDEN[case["name"]])


@pytest.mark.parametrize("case", ALL, ids=IDS)
def test_sym(case):
    check_sym(case, GOLDEN[case["name"]])


def _x():
    return mx.sym.var("x")


@pytest.mark.parametrize("attrs, data, label", [
    ({}, (2, 3), (2,)),
    ({}, (2, 3, 4, 5), (2, 3, 4)),
    ({"preserve_shape": True}, (2, 3, 4), (2, 3)),
    ({"multi_output": True}, (2, 3, 4, 5), (2, 20)),
    ({"multi_output": True}, (2, 3), (2, 1)),
])
def test_softmax_output_label_shape_inferred(attrs, data, label):
    so = mx.sym.SoftmaxOutput(_x(), name="softmax", **attrs)
    assert so.list_arguments() == ["x", "softmax_label"]
    args, outs, _ = so.infer_shape(x=data)
    assert [tuple(s) for s in args] == [data, label] and tuple(outs[0]) == data


@pytest.mark.parametrize("attrs, data, label", [
    ({}, (2, 3), (2, 3)),  # probabilities of the data's shape
    ({"multi_output": True}, (2, 3, 4, 5), (2, 4, 5)),
    ({"multi_output": True}, (2, 3, 4, 5), (2, 1, 4, 5)),
])
def test_softmax_output_accepted_labels(attrs, data, label):
    so = mx.sym.SoftmaxOutput(_x(), mx.sym.var("y"), **attrs)
    args, _, _ = so.infer_shape(x=data, y=label)
    assert tuple(args[1]) == label


@pytest.mark.parametrize("attrs, data, label", [
    ({}, (2, 3), (3,)),
    ({}, (2, 3, 4), (2, 12)),
    ({"multi_output": True}, (2, 3, 4), (2, 3)),
])
def test_softmax_output_bad_label_names_node(attrs, data, label):
    so = mx.sym.SoftmaxOutput(_x(), mx.sym.var("y"), name="sm9", **attrs)
    with pytest.raises(ShapeError, match="sm9"):
        so.infer_shape(x=data, y=label)


def test_legacy_classifier_head():
    """fc -> SoftmaxOutput as a Module-API checkpoint has it: the label is an argument whose
    shape comes from the data alone, and the forward pass does not depend on its values."""
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc1")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "softmax_label"]
    args, outs, _ = net.infer_shape(data=(3, 5))
    assert [tuple(s) for s in args] == [(3, 5), (4, 5), (4,), (3,)]
    rng = np.random.RandomState(0)
    feed = {"data": rng.randn(3, 5), "fc1_weight": rng.randn(4, 5), "fc1_bias": rng.randn(4)}
    outs = [net.eval(**feed, softmax_label=mx.nd.array(lab))[0].asnumpy()
            for lab in (np.zeros(3), np.array([3, 1, 2]))]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0].sum(axis=1), 1, rtol=1e-6)


@pytest.mark.parametrize("op, data, label", [
    ("LinearRegressionOutput", (2, 3), (2, 3)),
    ("LinearRegressionOutput", (4, 1), (4,)),  # 1-d label by default for a column
    ("LogisticRegressionOutput", (2, 3, 4), (2, 3, 4)),
    ("MAERegressionOutput", (5,), (5,)),
    ("SVMOutput", (2, 3, 4), (2, 3)),
])
def test_label_shape_inferred(op, data, label):
    sym = getattr(mx.sym, op)(_x(), name="head")
    assert sym.list_arguments() == ["x", "head_label"]
    args, outs, _ = sym.infer_shape(x=data)
    assert [tuple(s) for s in args] == [data, label] and tuple(outs[0]) == data


def test_regression_label_of_other_size_is_refused():
    sym = mx.sym.LinearRegressionOutput(_x(), mx.sym.var("y"), name="lro")
    with pytest.raises(ShapeError, match="lro"):
        sym.infer_shape(x=(2, 3), y=(2,))
    args, _, _ = sym.infer_shape(x=(2, 1), y=(2,))  # same size, other rank: fine
    assert tuple(args[1]) == (2,)


@pytest.mark.parametrize("op", ["SoftmaxOutput", "LinearRegressionOutput",
                                "LogisticRegressionOutput"])
def test_integer_data_is_refused(op):
    x = mx.nd.array(np.ones((2, 3)), dtype="int32")
    with pytest.raises(DTypeError, match="float"):
        getattr(mx.nd, op)(x, mx.nd.array(np.ones((2, 3)), dtype="int32"))


def test_label_dtype_follows_data():
    so = mx.sym.SoftmaxOutput(_x(), name="so")
    args, outs, _ = so.infer_type(x="float64")
    assert args == [np.float64, np.float64] and outs == [np.float64]


@pytest.mark.parametrize("call, op_written, outputs", [
    (lambda x: mx.sym.Softmax(x, name="s"), "SoftmaxOutput", ["s_output"]),
    (lambda x: mx.sym.stop_gradient(x, name="s"), "BlockGrad", ["s_output"]),
    (lambda x: mx.sym.make_loss(x, name="s"), "make_loss", ["s_loss"]),
    (lambda x: mx.sym.MakeLoss(x, name="s"), "MakeLoss", ["s_output"]),
])
def test_aliases_and_output_names(call, op_written, outputs):
    sym = call(_x())
    assert sym.list_outputs() == outputs
    try:
        graph = json.loads(sym.tojson())
    except (ImportError, AttributeError) as exc:  # symbol JSON layer not available
        pytest.skip(f"symbol JSON not available: {exc}")
    assert graph["nodes"][-1]["op"] == op_written


def test_registered_names():
    assert registry.canonical_name("Softmax") == "SoftmaxOutput"
    assert registry.canonical_name("stop_gradient") == "BlockGrad"
    assert registry.get("make_loss") is not registry.get("MakeLoss")
