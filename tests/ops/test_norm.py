"""Normalisation ops against MXNet 1.9.1 (tests/golden/ops/norm.npz): inference cases through
``nd`` and ``sym``, training-mode cases (batch statistics) through the training compute, and
BatchNorm's graph-level facts (auxiliary states, hidden outputs, JSON entry versions)."""

import json

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, OpAttributeError, ShapeError
from gluonport.ops import registry
from tests.ops import cases_norm
from tests.ops._check import _compare, forward, load_golden

GOLDEN = load_golden("norm")
TRAIN_IDS = [c["name"] for c in cases_norm.TRAIN_CASES]


@pytest.mark.parametrize("case", cases_norm.TRAIN_CASES, ids=TRAIN_IDS)
def test_train_compute(case):
    """Training mode (``is_train=True``): batch statistics, as MXNet under train_mode()."""
    golden = GOLDEN[case["name"]]
    op = registry.get(case["op"])
    p = op.parse(op.params.to_attrs(case.get("attrs", {})))
    got = op.run(p, golden["inputs"], is_train=True)
    _compare(case, got, golden["outputs"], "train compute")


@pytest.mark.parametrize("case", cases_norm.TRAIN_CASES, ids=TRAIN_IDS)
def test_train_executor(case):
    golden = GOLDEN[case["name"]]
    names = [f"in{i}" for i in range(len(golden["inputs"]))]
    sym = mx.sym.invoke(case["op"], [mx.sym.var(n) for n in names], dict(case.get("attrs", {})))
    got = forward(sym, dict(zip(names, golden["inputs"])), is_train=True)
    _compare(case, got, golden["outputs"], "train executor")


def _x():
    return mx.sym.var("x")


# --- BatchNorm's graph facts ---------------------------------------------------------------------
def test_batchnorm_arguments_aux_outputs():
    bn = mx.sym.BatchNorm(_x(), name="bn")
    assert bn.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_outputs() == ["bn_output"]
    bn3 = mx.sym.BatchNorm(_x(), name="bn", output_mean_var=True)
    assert bn3.list_outputs() == ["bn_output", "bn_mean", "bn_var"]


@pytest.mark.parametrize("attrs, data, c", [
    ({}, (2, 3, 4, 4), 3), ({"axis": -1}, (2, 3, 4), 4), ({"axis": 2}, (2, 3, 5, 4), 5),
    ({}, (0, 3, 4), 3),  # unknown batch
])
def test_batchnorm_infer_shape_partial_completes_params(attrs, data, c):
    bn = mx.sym.BatchNorm(_x(), name="bn", **attrs)
    args, outs, aux = bn.infer_shape_partial(x=data)
    assert [tuple(s) for s in args] == [data, (c,), (c,)]
    assert [tuple(s) for s in outs] == [data]
    assert [tuple(s) for s in aux] == [(c,), (c,)]


def test_batchnorm_output_mean_var_shapes_and_types():
    bn = mx.sym.BatchNorm(_x(), name="bn", output_mean_var=True)
    _, outs, _ = bn.infer_shape(x=(2, 3, 4))
    assert [tuple(s) for s in outs] == [(2, 3, 4), (3,), (3,)]
    args, outs, aux = bn.infer_type(x="float16")
    assert args == [np.float16, np.float32, np.float32] and aux == [np.float32] * 2
    assert outs == [np.float16, np.float32, np.float32]


def test_batchnorm_float16_params_must_be_float32():
    bn = mx.sym.BatchNorm(_x(), name="bn")
    with pytest.raises(DTypeError, match="bn"):
        bn.infer_type(x="float16", bn_gamma="float16")


def test_batchnorm_gamma_mismatch_names_node_and_shapes():
    bn = mx.sym.BatchNorm(_x(), name="bn7")
    with pytest.raises(ShapeError) as err:
        bn.infer_shape(x=(2, 3, 4), bn7_gamma=(4,))
    assert "bn7" in str(err.value) and "(4,)" in str(err.value) and "(3,)" in str(err.value)


def test_batchnorm_json_marks_aux_inputs():
    bn = mx.sym.BatchNorm(_x(), name="bn")
    try:
        text = bn.tojson()
        again = mx.sym.load_json(text)
    except (ImportError, AttributeError) as exc:  # symbol JSON layer not available
        pytest.skip(f"symbol JSON not available: {exc}")
    graph = json.loads(text)
    node = graph["nodes"][-1]
    assert node["op"] == "BatchNorm"
    assert node["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]
    assert graph["node_row_ptr"][-1] - graph["node_row_ptr"][-2] == 3  # 2 hidden outputs
    assert again.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert again.list_outputs() == ["bn_output"]


def test_batchnorm_fix_gamma_ignores_gamma():
    rng = np.random.RandomState(1)
    x, beta, mean = rng.randn(2, 3, 4), rng.randn(3), rng.randn(3)
    var = rng.rand(3) + 0.5
    arrays = [mx.nd.array(a) for a in (x, rng.randn(3), beta, mean, var)]
    ones = [arrays[0], mx.nd.ones(3), *arrays[2:]]
    np.testing.assert_array_equal(mx.nd.BatchNorm(*arrays).asnumpy(),
                                  mx.nd.BatchNorm(*ones).asnumpy())
    assert not np.allclose(mx.nd.BatchNorm(*arrays, fix_gamma=False).asnumpy(),
                           mx.nd.BatchNorm(*ones).asnumpy())


def test_sync_batchnorm_is_its_own_op_and_needs_key():
    assert registry.get("_contrib_SyncBatchNorm") is not registry.get("BatchNorm")
    assert "momentum" in registry.get("_contrib_SyncBatchNorm").params.fields
    with pytest.raises(OpAttributeError, match="key"):
        mx.sym.contrib.SyncBatchNorm(_x())
    sbn = mx.sym.contrib.SyncBatchNorm(_x(), key="k", name="sbn")
    assert sbn.list_auxiliary_states() == ["sbn_moving_mean", "sbn_moving_var"]
    assert "sbn_moving_var" in sbn.list_inputs()


# --- LayerNorm, GroupNorm, InstanceNorm ----------------------------------------------------------
@pytest.mark.parametrize("op, attrs, data, params, moments", [
    ("LayerNorm", {}, (2, 3, 4), (4,), (2, 3, 1)),
    ("LayerNorm", {"axis": 1}, (2, 3, 4), (3,), (2, 1, 4)),
    ("GroupNorm", {"num_groups": 2}, (2, 4, 5), (2,), (2, 2)),  # per group, not per channel
    ("InstanceNorm", {}, (2, 3, 4), (3,), (2, 3)),
])
def test_norm_param_and_moment_shapes(op, attrs, data, params, moments):
    sym = getattr(mx.sym, op)(_x(), name="n", **attrs)
    assert sym.list_arguments() == ["x", "n_gamma", "n_beta"]
    args, outs, _ = sym.infer_shape_partial(x=data)
    assert [tuple(s) for s in args] == [data, params, params]
    assert [tuple(s) for s in outs] == [data]
    node = sym._outputs[0][0]
    assert node.num_outputs() == 3
    shapes = registry.get(op).shapes(node.params, [data, None, None])[1]
    assert shapes[1] == moments and shapes[2] == moments


@pytest.mark.parametrize("op, names", [
    ("LayerNorm", ["n_output", "n_mean", "n_std"]),
    ("GroupNorm", ["n_output", "n_mean", "n_std"]),
])
def test_output_mean_var_names(op, names):
    assert getattr(mx.sym, op)(_x(), name="n").list_outputs() == names[:1]
    assert getattr(mx.sym, op)(_x(), name="n", output_mean_var=True).list_outputs() == names


@pytest.mark.parametrize("call, match", [
    (lambda: mx.nd.GroupNorm(mx.nd.ones((2, 5, 3)), mx.nd.ones(2), mx.nd.ones(2), num_groups=2),
     "divisible"),
    (lambda: mx.nd.InstanceNorm(mx.nd.ones((2, 3)), mx.nd.ones(3), mx.nd.ones(3)),
     "3 dimensions"),
    (lambda: mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode="channel"), "3 dimensions"),
    (lambda: mx.nd.LRN(mx.nd.ones((2, 3, 4)), nsize=3), "4-d"),
    (lambda: mx.nd.LayerNorm(mx.nd.ones((2, 3)), mx.nd.ones(2), mx.nd.ones(2)), r"\(2,\)"),
])
def test_bad_shapes_raise_shape_error(call, match):
    with pytest.raises(ShapeError, match=match):
        call()


def test_lrn_even_nsize_is_refused():
    with pytest.raises(OpAttributeError, match="odd"):
        mx.nd.LRN(mx.nd.ones((1, 3, 2, 2)), nsize=2)


def test_hidden_outputs_have_inferred_shapes():
    for sym, shapes in [
        (mx.sym.L2Normalization(_x(), mode="channel"), [(2, 3, 4, 5), (2, 1, 4, 5)]),
        (mx.sym.L2Normalization(_x(), mode="spatial"), [(2, 3, 4, 5), (2, 3)]),
        (mx.sym.L2Normalization(_x()), [(2, 3, 4, 5), (2,)]),
        (mx.sym.LRN(_x(), nsize=3), [(2, 3, 4, 5), (2, 3, 4, 5)]),
    ]:
        node = sym._outputs[0][0]
        assert sym.list_outputs() == [node.name + "_output"]
        assert node.op.shapes(node.params, [(2, 3, 4, 5)])[1] == shapes


@pytest.mark.parametrize("shape, axis, dtype", [((2, 3, 4), 1, "float32"),
                                                ((2, 4, 3), -1, "float64"),
                                                ((3, 5), 1, "float16"),
                                                ((1, 2, 3, 2, 2), 2, "float32")])
def test_bn_relu_is_batchnorm_then_relu_beyond_mxnets_kernel(shape, axis, dtype):
    """MXNet 1.9.1 runs _contrib_BatchNormWithReLU only through oneDNN (4-d float32, axis 1);
    elsewhere gluonport gives relu(BatchNorm(...)), imperative and in training mode."""
    rng = np.random.RandomState(2)
    c = shape[axis]
    pdt = "float32" if dtype == "float16" else dtype
    x = mx.nd.array(rng.uniform(-2, 2, shape), dtype=dtype)
    params = [mx.nd.array(rng.uniform(0.5, 1.5, c), dtype=pdt) for _ in range(4)]
    for train in (False, True):
        with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
            got = mx.nd.contrib.BatchNormWithReLU(x, *params, axis=axis, fix_gamma=False,
                                                  output_mean_var=True)
            want = mx.nd.BatchNorm(x, *params, axis=axis, fix_gamma=False, output_mean_var=True)
        np.testing.assert_array_equal(got[0].asnumpy(), np.maximum(want[0].asnumpy(), 0))
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
    sym = mx.sym.contrib.BatchNormWithReLU(mx.sym.var("x"), name="bn", output_mean_var=True)
    assert sym.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
