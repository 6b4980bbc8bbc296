"""The executor's in-place inference rewrite (gluonport/_fusion.py) gives bit-identical results.

GraphPlan(fuse=True) lets BatchNorm, relu, clip and elemwise_add overwrite a dead intermediate;
GraphPlan(fuse=False) runs every op on fresh buffers. Every comparison here is exact
(``assert_array_equal``, sign of zero included): the rewrite uses each op's own arithmetic.
Inputs and parameters fed to ``run`` must come back untouched, and anything still readable
later (graph outputs, views, other consumers) must never be overwritten.
"""

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError
from gluonport.executor import GraphPlan

SHAPE = (2, 4, 6, 6)
SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")


def _conv(x, name, no_bias=False):
    return mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=SHAPE[1], name=name,
                              no_bias=no_bias)


def _feed(sym, seed=0, dtype=np.float32):
    """Random values for every input; moving variances positive."""
    rng = np.random.default_rng(seed)
    arg_s, _, aux_s = sym.infer_shape(data=SHAPE)
    names = sym.list_arguments() + sym.list_auxiliary_states()
    feed = {}
    for name, shape in zip(names, arg_s + aux_s):
        v = rng.uniform(-1, 1, shape)
        feed[name] = (np.abs(v) + 0.1 if name.endswith("moving_var") else v).astype(dtype)
    return feed


def _same(a, b):
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def _check(sym, feed, expect_inplace=None):
    """Fused and unfused runs agree exactly, the feed is untouched, and (when given) the
    number of in-place steps is ``expect_inplace``."""
    before = {k: v.copy() for k, v in feed.items()}
    plan = GraphPlan(sym)
    fused = plan.run(feed)
    again = plan.run(feed)
    plain = GraphPlan(sym, fuse=False).run(feed)
    for f, g, p in zip(fused, again, plain):
        _same(f, p)
        _same(g, p)
    for k, v in feed.items():
        _same(v, before[k])
    if expect_inplace is not None:
        assert _n_inplace(plan) == expect_inplace
    return plan, fused


def _n_inplace(plan):
    return sum(type(s).__name__ == "_Rewritten" for s in plan._fused_steps())


# --- patterns: what may and may not be overwritten ---------------------------------------------
def _conv_bn_relu():
    x = mx.sym.var("data")
    return mx.sym.Activation(mx.sym.BatchNorm(_conv(x, "c0"), name="bn0"), act_type="relu")


def _bn_output_kept():
    bn = mx.sym.BatchNorm(_conv(mx.sym.var("data"), "c0"), name="bn0")
    return mx.sym.Group([bn, mx.sym.Activation(bn, act_type="relu")])


def _conv_two_readers():
    c = _conv(mx.sym.var("data"), "c0")
    return mx.sym.BatchNorm(c, name="bn0") + mx.sym.sigmoid(c)


def _conv_read_through_view():
    c = _conv(mx.sym.var("data"), "c0")
    flat = mx.sym.reshape(c, shape=(-1,))  # runs first; the BatchNorm is c's last reader
    return mx.sym.Group([flat, mx.sym.BatchNorm(c, name="bn0")])


def _identity_alias():
    c = _conv(mx.sym.var("data"), "c0")
    alias = mx.sym.Dropout(c)  # inference Dropout hands back its input object
    return mx.sym.Group([alias, mx.sym.Activation(c, act_type="relu")])


def _add_same_operand():
    c = _conv(mx.sym.var("data"), "c0")
    return mx.sym.elemwise_add(c, c)


def _add_graph_input():
    x = mx.sym.var("data")
    return mx.sym.Activation(mx.sym.elemwise_add(x, x * 1), act_type="relu")


def _residual():
    x = mx.sym.var("data")
    a = mx.sym.Activation(mx.sym.BatchNorm(_conv(x, "c0"), name="bn0"), act_type="relu")
    b = mx.sym.BatchNorm(_conv(a, "c1", no_bias=True), name="bn1")
    return mx.sym.Activation(mx.sym.elemwise_add(b, a), act_type="relu")


def _relu6_reversed_clip():
    c = _conv(mx.sym.var("data"), "c0")
    return mx.sym.clip(mx.sym.clip(c, a_min=0.0, a_max=6.0), a_min=0.5, a_max=-0.5)


def _bn_mean_var_read():
    bn = mx.sym.BatchNorm(_conv(mx.sym.var("data"), "c0"), name="bn0", output_mean_var=True)
    return mx.sym.Group([mx.sym.Activation(bn[0], act_type="relu"), bn[1] + bn[2]])


def _sigmoid_not_inplace():
    c = _conv(mx.sym.var("data"), "c0")
    return mx.sym.Activation(mx.sym.Activation(c, act_type="sigmoid"), act_type="tanh")


PATTERNS = [
    # (name, graph, in-place steps expected)
    ("conv_bn_relu", _conv_bn_relu, 2),
    ("bn_output_is_a_graph_output", _bn_output_kept, 1),  # BN in place, relu must not be
    ("conv_read_twice", _conv_two_readers, 1),  # only the add (its operands are fresh)
    ("conv_read_through_a_view", _conv_read_through_view, 0),
    ("conv_aliased_by_dropout", _identity_alias, 0),
    ("add_same_operand_twice", _add_same_operand, 0),
    # the add makes a new array (x is an input, x*1 not a known-fresh op); the relu is in place
    ("add_of_graph_input", _add_graph_input, 1),
    ("residual_block", _residual, 5),
    ("clip_then_reversed_clip", _relu6_reversed_clip, 1),  # reversed bounds: the op itself
    ("bn_mean_var_read", _bn_mean_var_read, 2),
    ("sigmoid_tanh", _sigmoid_not_inplace, 0),
]


@pytest.mark.parametrize("name, make, n_inplace", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_pattern_bit_identical(name, make, n_inplace):
    sym = make()
    _check(sym, _feed(sym), n_inplace)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_bit_identical(dtype):
    sym = _residual()
    _check(sym, _feed(sym, dtype=dtype))


SPECIAL = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -1.0, 0.25, 7.0, -1e-30, 1e-30])


@pytest.mark.parametrize("op, attrs", [
    ("clip", {"a_min": 0.0, "a_max": 0.5}),
    ("clip", {"a_min": -0.0, "a_max": 0.0}),
    ("clip", {"a_min": 0.0, "a_max": 0.0}),
    ("clip", {"a_min": -1.0, "a_max": -1.0}),
    ("clip", {"a_min": 0.0, "a_max": 1e-40}),  # rounds to 0 in float32
    ("Activation", {"act_type": "relu"}),
    ("BatchNorm", {"fix_gamma": False}),
    ("elemwise_add", {}),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inplace_kernel_matches_op_on_special_values(op, attrs, dtype):
    from gluonport.ops import registry

    opdef = registry.get(op)
    p = opdef.parse({k: str(v) for k, v in attrs.items()})
    x = SPECIAL.astype(dtype).reshape(1, -1, 1)
    rng = np.random.default_rng(0)
    extra = {"BatchNorm": [rng.uniform(-1, 1, x.shape[1]).astype(dtype) for _ in range(4)],
             "elemwise_add": [SPECIAL[::-1].astype(dtype).reshape(x.shape)]}.get(op, [])
    if op == "BatchNorm":
        extra[3] = np.abs(extra[3])
    want = opdef.run(p, [x] + extra)
    mine = x.copy()
    got = opdef.inplace.kernel(p, [mine] + extra, 0)
    assert got[0] is mine
    for g, w in zip(got, want):
        _same(g, w)


def test_clip_nan_through_graph():
    sym = mx.sym.clip(_conv(mx.sym.var("data"), "c0"), a_min=0.0, a_max=0.5)
    feed = _feed(sym)
    feed["c0_bias"][1] = np.nan
    _check(sym, feed, 1)
    assert np.isnan(GraphPlan(sym).run(feed)[0][:, 1]).all()


def test_training_mode_runs_unfused():
    sym = _conv_bn_relu()
    feed = _feed(sym)
    fused = GraphPlan(sym).run(feed, is_train=True)
    plain = GraphPlan(sym, fuse=False).run(feed, is_train=True)
    _same(fused[0], plain[0])
    assert not np.array_equal(fused[0], GraphPlan(sym).run(feed)[0])  # batch statistics used


def test_monitor_sees_every_intermediate_intact():
    sym = _conv_bn_relu()
    feed = _feed(sym)
    seen = {}
    GraphPlan(sym).run(feed, monitor=lambda node, outs: seen.setdefault(node.op.name, outs[0]))
    assert (seen["BatchNorm"] < 0).any()  # not overwritten by the relu after it
    _same(seen["Activation"], np.maximum(seen["BatchNorm"], 0))


# --- random graphs ----------------------------------------------------------------------------
def _random_graph(seed):
    """A random DAG of same-shape ops with shared readers, views, aliases and several outputs."""
    rng = np.random.default_rng(seed)
    pool = [mx.sym.var("data")]
    for i in range(int(rng.integers(5, 14))):
        src = pool[int(rng.integers(len(pool)))]
        kind = rng.choice(["conv", "conv", "bn", "relu", "clip", "add", "view", "dropout",
                           "tanh"])
        if kind == "conv":
            y = _conv(src, f"c{i}", no_bias=bool(rng.integers(2)))
        elif kind == "bn":
            y = mx.sym.BatchNorm(src, name=f"bn{i}", fix_gamma=bool(rng.integers(2)))
        elif kind == "relu":
            y = mx.sym.Activation(src, act_type="relu")
        elif kind == "clip":
            y = mx.sym.clip(src, a_min=-0.3, a_max=0.4)
        elif kind == "add":
            y = mx.sym.elemwise_add(src, pool[int(rng.integers(len(pool)))])
        elif kind == "view":
            y = mx.sym.reshape(mx.sym.reshape(src, shape=(-1,)), shape=SHAPE)
        elif kind == "dropout":
            y = mx.sym.Dropout(src)
        else:
            y = mx.sym.Activation(src, act_type="tanh")
        pool.append(y)
    picks = {len(pool) - 1} | {int(k) for k in rng.integers(1, len(pool), 2)}
    return mx.sym.Group([pool[k] for k in sorted(picks)])


@pytest.mark.parametrize("seed", range(40))
def test_random_graph_bit_identical(seed):
    sym = _random_graph(seed)
    _check(sym, _feed(sym, seed))


def test_random_graphs_exercise_the_rewrite():
    # the table above must not pass vacuously
    counts = [_n_inplace(_check(s, _feed(s))[0]) for s in map(_random_graph, range(40))]
    assert sum(c > 0 for c in counts) >= 20


# --- parameters, errors, a real model -----------------------------------------------------------
def test_parameters_changed_in_place_are_seen():
    # nothing derived from parameters is cached between runs: new values in the same arrays
    sym = _residual()
    feed = _feed(sym)
    plan = GraphPlan(sym)
    first = plan.run(feed)[0].copy()
    for name in ("c0_weight", "bn0_gamma", "bn0_moving_var", "bn1_beta"):
        feed[name] *= 1.5
    second = plan.run(feed)[0]
    assert not np.array_equal(first, second)
    _same(second, GraphPlan(sym, fuse=False).run(feed)[0])


def test_errors_still_name_the_node():
    sym = _conv_bn_relu()
    feed = _feed(sym)
    feed["bn0_gamma"] = np.ones(3, np.float32)
    messages = []
    for fuse in (True, False):
        with pytest.raises(GluonportError) as info:
            GraphPlan(sym, fuse=fuse).run(feed)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "bn0" in messages[0]


def test_lenet_bn_sample_model():
    prefix = os.path.join(SAMPLES, "lenet_bn")
    sym, arg, aux = mx.model.load_checkpoint(prefix, 0)
    x = np.load(prefix + "-input.npy")
    feed = {k: v.asnumpy() for k, v in {**arg, **aux}.items()}
    feed["data"] = x
    plan, (out,) = _check(sym, feed)
    assert _n_inplace(plan) == 5  # 2x BatchNorm + 2x relu after it + the dense relu
    np.testing.assert_allclose(out, np.load(prefix + "-output.npy"), rtol=1e-4, atol=1e-5)


def test_executor_forward_repeatable():
    sym = _residual()
    feed = {k: mx.nd.array(v) for k, v in _feed(sym).items()}
    exe = sym.bind(mx.cpu(), {k: feed[k] for k in sym.list_arguments()},
                   aux_states={k: feed[k] for k in sym.list_auxiliary_states()})
    first = exe.forward()[0].asnumpy().copy()
    held = exe.outputs[0]
    second = exe.forward()[0].asnumpy()
    _same(first, second)
    _same(held.asnumpy(), first)  # the earlier output array is not reused as a buffer
