"""nn ops (dense, activations, dropout, softmax) against MXNet 1.9.1 (tests/golden/ops/nn.npz),
plus the facts a case table cannot express: partial shape inference, input/output names,
errors, training-mode dropout."""

import math

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, OpAttributeError, ShapeError
from gluonport.ops import registry
from gluonport.ops.nn.dense import erfc


def _x():
    return mx.sym.var("x")


# --- FullyConnected ------------------------------------------------------------------------------
@pytest.mark.parametrize("attrs, data, args, out", [
    ({"num_hidden": 3}, (2, 5), [(2, 5), (3, 5), (3,)], (2, 3)),
    ({"num_hidden": 3}, (2, 3, 4), [(2, 3, 4), (3, 12), (3,)], (2, 3)),
    ({"num_hidden": 3, "flatten": False}, (2, 4, 5), [(2, 4, 5), (3, 5), (3,)], (2, 4, 3)),
    ({"num_hidden": 3, "no_bias": True}, (2, 5), [(2, 5), (3, 5)], (2, 3)),
    ({"num_hidden": 3}, (0, 5), [(0, 5), (3, 5), (3,)], (0, 3)),  # unknown batch
])
def test_fc_infer_shape_partial_completes_weight(attrs, data, args, out):
    fc = mx.sym.FullyConnected(_x(), name="fc", **attrs)
    arg_shapes, out_shapes, aux_shapes = fc.infer_shape_partial(x=data)
    assert [tuple(s) for s in arg_shapes] == args
    assert [tuple(s) for s in out_shapes] == [out] and aux_shapes == []


def test_fc_argument_names():
    assert mx.sym.FullyConnected(_x(), num_hidden=3, name="fc1").list_arguments() == \
        ["x", "fc1_weight", "fc1_bias"]
    assert mx.sym.FullyConnected(_x(), num_hidden=3, no_bias=True, name="fc1") \
        .list_arguments() == ["x", "fc1_weight"]


def test_fc_weight_mismatch_names_node_and_shapes():
    fc = mx.sym.FullyConnected(_x(), num_hidden=3, name="fc1")
    with pytest.raises(ShapeError) as err:
        fc.infer_shape(x=(2, 5), fc1_weight=(3, 4))
    msg = str(err.value)
    assert "fc1" in msg and "(3, 4)" in msg and "(3, 5)" in msg


def test_fc_imperative_weight_mismatch_is_shape_error():
    x, w, b = (mx.nd.ones(s) for s in ((2, 5), (3, 4), (3,)))
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(3, 5\)|\(3, 5\).*\(3, 4\)"):
        mx.nd.FullyConnected(x, w, b, num_hidden=3)


@pytest.mark.parametrize("kwargs, attr", [
    ({}, "num_hidden"),                       # required
    ({"num_hidden": "three"}, "num_hidden"),  # not an int
    ({"num_hidden": 3, "flatten": "maybe"}, "flatten"),
])
def test_fc_bad_attribute_names_it(kwargs, attr):
    with pytest.raises(OpAttributeError, match=attr):
        mx.sym.FullyConnected(_x(), **kwargs)


def test_fc_bad_attribute_in_file_names_node():
    text = mx.sym.FullyConnected(_x(), num_hidden=3, name="fc7").tojson()
    bad = mx.sym.load_json(text.replace('"num_hidden": "3"', '"num_hidden": "3.5"'))
    with pytest.raises(OpAttributeError, match="fc7.*num_hidden"):
        bad.infer_shape(x=(2, 4))


def test_fc_float16_matches_float32():
    # MXNet's CPU build has no float16 FullyConnected (cuDNN only): compare with float32.
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(4, 8), rng.randn(3, 8), rng.randn(3)
    want = x.astype(np.float32) @ w.astype(np.float32).T + b.astype(np.float32)
    got = mx.nd.FullyConnected(*(mx.nd.array(a, dtype="float16") for a in (x, w, b)),
                               num_hidden=3)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("op, attrs", [
    ("FullyConnected", {"num_hidden": 2}), ("Activation", {"act_type": "relu"}),
    ("LeakyReLU", {}), ("softmax", {}), ("log_softmax", {}), ("SoftmaxActivation", {}),
])
def test_integer_data_is_refused(op, attrs):
    ins = [mx.nd.array(np.ones((2, 3)), dtype="int32")]
    if op == "FullyConnected":
        ins += [mx.nd.ones((2, 3), dtype="int32"), mx.nd.ones((2,), dtype="int32")]
    with pytest.raises(DTypeError, match="float"):
        getattr(mx.nd, op)(*ins, **attrs)


# --- Activation / LeakyReLU ----------------------------------------------------------------------
def test_activation_act_type_choices_are_mxnet_191s():
    # log_sigmoid and mish arrived after 1.9.1
    with pytest.raises(OpAttributeError, match="softsign"):
        mx.sym.Activation(_x(), act_type="mish")


def test_relu_backward_multiplies_like_mxnet():
    # MXNet 1.9.1 (checked with the oracle, float32 NCHW): ograd * (y > 0), so an infinite or
    # NaN output gradient where y <= 0 gives NaN and a negative one -0
    x = mx.nd.array(np.tile(np.array([-1.0, 0.0, 2.0, -3.0], "float32"), 8).reshape(1, 2, 4, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Activation(x, act_type="relu")
    y.backward(mx.nd.array(np.tile(np.array([np.inf, np.nan, 1.0, -2.0], "float32"), 8)
                           .reshape(1, 2, 4, 4)))
    got = x.grad.asnumpy().ravel()[:4]
    np.testing.assert_array_equal(got, [np.nan, np.nan, 1.0, 0.0])
    assert np.signbit(got[3])


def test_relu_backward_onnx_multiplies_like_mxnet():
    # the ONNX lowering of the same backward (hybridized training on onnxruntime), same values
    import onnxruntime as ort

    from gluonport.onnx import export_symbol

    names = ("og", "x", "y")
    sym = mx.sym._internal._backward_Activation(*(mx.sym.var(n) for n in names),
                                                act_type="relu")
    x = np.tile(np.array([-1.0, 0.0, 2.0, -3.0], "float32"), 8).reshape(1, 2, 4, 4)
    og = np.tile(np.array([np.inf, np.nan, 1.0, -2.0], "float32"), 8).reshape(1, 2, 4, 4)
    feed = {"og": og, "x": x, "y": np.maximum(x, 0)}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()})
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    used = {i.name for i in sess.get_inputs()}
    got = sess.run(None, {k: v for k, v in feed.items() if k in used})[0].ravel()[:4]
    np.testing.assert_array_equal(got, [np.nan, np.nan, 1.0, 0.0])
    assert np.signbit(got[3])


def test_prelu_gamma_inferred_per_channel():
    lr = mx.sym.LeakyReLU(_x(), act_type="prelu", name="lr")
    assert lr.list_arguments() == ["x", "lr_gamma"]
    args, outs, _ = lr.infer_shape_partial(x=(2, 3, 4, 4))
    assert [tuple(s) for s in args] == [(2, 3, 4, 4), (3,)]
    assert tuple(outs[0]) == (2, 3, 4, 4)


def test_prelu_gamma_that_cannot_broadcast():
    with pytest.raises(ShapeError, match="gamma"):
        mx.nd.LeakyReLU(mx.nd.ones((2, 3, 4)), mx.nd.ones((4,)), act_type="prelu")


def test_rrelu_has_two_visible_outputs():
    lr = mx.sym.LeakyReLU(_x(), act_type="rrelu", name="lr")
    assert lr.list_outputs() == ["lr_output", "lr_mask"]
    assert len(mx.nd.LeakyReLU(mx.nd.ones((2, 2)), act_type="rrelu")) == 2
    assert mx.sym.LeakyReLU(_x(), name="lr").list_outputs() == ["lr_output"]


def test_erfc_relative_accuracy():
    xs = np.linspace(-6, 9, 3001)
    want = np.array([math.erfc(v) for v in xs])
    rel = np.abs(erfc(xs) - want) / want
    assert rel.max() < 2e-7


# --- Dropout -------------------------------------------------------------------------------------
def test_dropout_outputs_and_names():
    do = mx.sym.Dropout(_x(), p=0.3, name="do")
    assert do.list_outputs() == ["do_output"]
    assert registry.get("Dropout").n_outputs(do._outputs[0][0].params) == 2
    _, outs, _ = do.infer_shape(x=(2, 3))
    assert [tuple(s) for s in outs] == [(2, 3)]


def _dropout_train(shape, **attrs):
    op = registry.get("Dropout")
    p = op.parse({k: str(v) for k, v in attrs.items()})
    x = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out, mask = op.run(p, [x], is_train=True)
    return x, out, mask


def test_dropout_training_scales_kept_values():
    x, out, mask = _dropout_train((40, 50), p=0.25)
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / 0.75, rtol=1e-6)
    assert 0.65 < kept.mean() < 0.85  # 2000 Bernoulli(0.75) draws
    assert mask.shape == x.shape


def test_dropout_training_axes_share_mask():
    x, out, mask = _dropout_train((4, 30, 5), p=0.5, axes=(0, 2))
    assert mask.shape == (1, 30, 1)
    kept = out != 0
    assert (kept == kept[:1, :, :1]).all()


def test_dropout_training_p0_is_identity():
    x, out, _ = _dropout_train((3, 4), p=0.0)
    np.testing.assert_array_equal(out, x)


def test_dropout_always_drops_at_inference():
    x = np.full((50, 40), 3.0, np.float32)
    out = mx.nd.Dropout(mx.nd.array(x), p=0.5, mode="always").asnumpy()
    assert set(np.unique(out)) <= {0.0, 6.0} and 0.35 < (out == 0).mean() < 0.65


def test_dropout_masks_follow_mx_random_seed():
    rnd = pytest.importorskip("gluonport.random")
    draws = []
    for _ in range(2):
        rnd.seed(11)
        draws.append(mx.nd.Dropout(mx.nd.ones((6, 7)), p=0.5, mode="always").asnumpy())
    np.testing.assert_array_equal(draws[0], draws[1])
    assert 0 < (draws[0] == 0).sum() < draws[0].size


def test_dropout_inference_output_is_not_the_input():
    x = mx.nd.ones((2, 3))
    y = mx.nd.Dropout(x)
    y[:] = 5
    assert x.asnumpy().max() == 1


# --- softmax family ------------------------------------------------------------------------------
@pytest.mark.parametrize("axis, data, length", [
    (-1, (2, 3), (2,)), (0, (2, 3), (3,)), (1, (2, 3, 4), (2, 4)), (-1, (5,), (1,)),
])
def test_softmax_length_input_shape(axis, data, length):
    sm = mx.sym.softmax(_x(), use_length=True, axis=axis, name="sm")
    assert sm.list_arguments() == ["x", "sm_length"]
    args, outs, _ = sm.infer_shape_partial(x=data)
    assert [tuple(s) for s in args] == [data, length] and tuple(outs[0]) == data


def test_softmax_types():
    sm = mx.sym.softmax(_x(), use_length=True, name="sm")
    args, outs, _ = sm.infer_type(x="float32", sm_length="int32")
    assert args == [np.float32, np.int32] and outs == [np.float32]
    _, outs, _ = mx.sym.softmax(_x(), dtype="float64").infer_type(x="float16")
    assert outs == [np.float64]


def test_softmax_float_length_is_refused():
    with pytest.raises(DTypeError, match="integer"):
        mx.nd.softmax(mx.nd.ones((2, 3)), mx.nd.array([1, 2]), use_length=True)


@pytest.mark.parametrize("op", ["log_softmax", "softmin"])
def test_use_length_only_on_softmax(op):
    assert getattr(mx.sym, op)(_x(), use_length=True).list_arguments() == ["x"]
    with pytest.raises(OpAttributeError, match="length"):
        getattr(mx.nd, op)(mx.nd.ones((2, 3)), use_length=True)


def test_softmax_activation_channel_needs_rank3():
    with pytest.raises(ShapeError, match="3 dimensions"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="channel")


def test_aliases_resolve():
    for alias, name in [("_npx_softmax", "softmax"), ("_npx_fully_connected", "FullyConnected"),
                        ("_npx_leaky_relu", "LeakyReLU"), ("_npx_dropout", "Dropout")]:
        assert registry.canonical_name(alias) == name
