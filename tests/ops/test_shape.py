"""Shape ops against MXNet 1.9.1 (tests/golden/ops/shape.npz), plus Reshape's partial shape
inference and error messages."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ShapeError
from gluonport.ops.shape import infer_reshape

# (input shape with 0 = unknown, spec, reverse, MXNet 1.9.1's infer_shape_partial output)
PARTIAL = [
    ((0, 3, 4), (0, -1), False, (0, 0)),
    ((2, 0, 4), (0, -1), False, (2, 0)),
    ((0, 3), (-1, 0), False, (0, 3)),
    ((2, 0, 4), (-1, 0), False, (0, 0)),
    ((0, 3, 4), (-3, 0), False, (0, 4)),
    ((0, 3, 4), (0, -3), False, (0, 12)),
    ((0, 3, 4), (-4, 2, -1, 0, 0), False, (2, 0, 3, 4)),
    ((0, 6, 4), (0, -4, 3, -1, 0), False, (0, 3, 2, 4)),
    ((0, 6, 4), (-2,), False, (0, 6, 4)),
    ((0, 6, 4), (2, -1), False, (2, 0)),
    ((0, 6, 4), (0, -1), True, (6, 0)),
]


@pytest.mark.parametrize("src,spec,reverse,want", PARTIAL)
def test_reshape_partial_inference(src, spec, reverse, want):
    assert infer_reshape(src, spec, reverse) == want
    out = mx.sym.reshape(mx.sym.var("x"), shape=spec, reverse=reverse)
    args, outs, _ = out.infer_shape_partial(x=src)
    assert tuple(outs[0]) == want
    assert tuple(args[0]) == src


@pytest.mark.parametrize("src,spec,want_in,want_out", [
    ((0, 6, 4), (3, 8), (1, 6, 4), (3, 8)),   # MXNet fills the one unknown input dim back
    ((0, 6), (2, 12), (4, 6), (2, 12)),
])
def test_reshape_fills_unknown_input_dim(src, spec, want_in, want_out):
    args, outs, _ = mx.sym.reshape(mx.sym.var("x"), shape=spec).infer_shape_partial(x=src)
    assert tuple(args[0]) == want_in and tuple(outs[0]) == want_out


def test_reshape_unknown_batch_feeds_next_op():
    x = mx.sym.var("x")
    y = mx.sym.FullyConnected(mx.sym.reshape(x, shape=(0, -3)), num_hidden=5, name="fc")
    args, outs, _ = y.infer_shape_partial(x=(0, 3, 4))
    shapes = dict(zip(y.list_arguments(), args))
    assert shapes["fc_weight"] == (5, 12) and tuple(outs[0]) == (0, 5)


@pytest.mark.parametrize("spec,why", [
    ((4, -1), "6 elements cannot fill (4, 1)"),
    ((7,), "6 elements cannot fill (7,)"),
    ((-1, -1), "only one dim can be -1"),
    ((0, 0, 0), "code 0 at position 2 needs more input dims"),
    ((-3, -3), "code -3 at position 1 needs more input dims"),
    ((-4, -1, -1, 3), "split dims cannot both be -1"),
    ((-4, 4, -1, 3), "split dims 4, 0 do not divide input dim 2"),
    ((-5,), "-5 is not a dim or a special code"),
    ((-2, -1), "6 elements cannot fill (2, 1, 1)"),
])
def test_reshape_errors_name_node_shape_and_spec(spec, why):
    out = mx.sym.reshape(mx.sym.var("x"), shape=spec, name="resh")
    with pytest.raises(ShapeError) as err:
        out.infer_shape(x=(2, 3))
    msg = str(err.value)
    assert "'resh'" in msg and f"cannot reshape (2, 3) to {spec}" in msg and why in msg
    with pytest.raises(ShapeError, match=r"Reshape: cannot reshape \(2, 3\)"):
        mx.nd.reshape(mx.nd.ones((2, 3)), shape=spec)


def test_infer_reshape_doc_examples():
    assert infer_reshape((2, 3, 4), (-4, 1, 2, -2)) == (1, 2, 3, 4)
    assert infer_reshape((None, 3, 4), (0, -3)) == (0, 12)
    assert infer_reshape((-1, 3, 4), (0, 0, 2, 2)) == (0, 3, 2, 2)


def test_outputs_do_not_alias_input():
    x = mx.nd.array(np.arange(6, dtype=np.float32))
    for y in (mx.nd.reshape(x, shape=(2, 3)), mx.nd.slice(x, begin=(1,), end=(4,)),
              mx.nd.expand_dims(x, axis=0), mx.nd.transpose(x)):
        y[:] = -1
    np.testing.assert_array_equal(x.asnumpy(), np.arange(6))


@pytest.mark.parametrize("op,attrs,shape,match", [
    ("transpose", {"axes": (0, -1, 1)}, (2, 3, 4), "permutation"),
    ("transpose", {"axes": (0, 0, 1)}, (2, 3, 4), "permutation"),
    ("flip", {"axis": -1}, (2, 3), "no negative axes"),
    ("broadcast_axis", {"axis": (-1,), "size": (3,)}, (2, 1), "no negative axes"),
    ("broadcast_axis", {"axis": (0,), "size": (3,)}, (2, 1), "has size 2, not 1"),
    ("broadcast_to", {"shape": (3, 5)}, (3, 4), "cannot broadcast"),
    ("expand_dims", {"axis": 3}, (2, 3), "out of range"),
    ("squeeze", {"axis": (1,)}, (1, 3), "size 3"),
    ("squeeze", {"axis": (0, -2)}, (1, 2), "given twice"),
    ("split", {"num_outputs": 2, "axis": 1}, (2, 3), "equal parts"),
    ("split", {"num_outputs": 2, "axis": 1, "squeeze_axis": True}, (2, 4), "squeeze_axis"),
    ("_split_v2", {"indices": (1, 3), "axis": 1}, (2, 4), "first index must be 0"),
    ("slice", {"begin": (0, 0, 0), "end": (1, 1, 1)}, (2, 3), "more axes"),
    ("slice", {"begin": (0, 0), "end": (1,)}, (2, 3), "same length"),
    ("slice", {"begin": (0, 0), "end": (1, 1), "step": (1, 0)}, (2, 3), "cannot be 0"),
    ("slice_axis", {"axis": 1, "begin": 2, "end": 1}, (2, 3), "must be before"),
    ("slice_axis", {"axis": 1, "begin": 0, "end": 5}, (2, 3), "past axis"),
    ("tile", {"reps": (0,)}, (2,), "positive"),
    ("repeat", {"repeats": -1}, (2,), "negative"),
    ("depth_to_space", {"block_size": 2}, (1, 6, 2, 2), "block"),
    ("space_to_depth", {"block_size": 2}, (1, 2, 3, 4), "multiples"),
    ("diag", {"k": 5}, (3, 4), "does not exist"),
    ("SwapAxis", {"dim1": 0, "dim2": 2}, (2, 3), "dim2 2 is out of range"),
    ("reshape_like", {"lhs_begin": -2, "rhs_begin": -1}, (2, 3, 4), "sizes differ"),
])
def test_bad_attributes_raise_shape_error(op, attrs, shape, match):
    args = [mx.nd.ones(shape)]
    if op == "reshape_like":
        args.append(mx.nd.ones((7, 2, 6)))
    with pytest.raises(ShapeError, match=match) as err:
        mx.nd.invoke(op, args, attrs)
    assert str(err.value).startswith(mx.ops.registry.canonical_name(op))
    sym = mx.sym.invoke(op, [mx.sym.var(f"v{i}") for i in range(len(args))],
                        dict(attrs, name="n1"))
    with pytest.raises(ShapeError, match="'n1'"):
        sym.infer_shape(**{f"v{i}": a.shape for i, a in enumerate(args)})


def test_concat_partial_and_mismatch():
    x, y, z = (mx.sym.var(n) for n in "xyz")
    out = mx.sym.concat(x, y, z, dim=1, name="cat")
    args, outs, _ = out.infer_shape_partial(x=(0, 2, 4), y=(3, 0, 4), z=(3, 5, 0))
    assert [tuple(a) for a in args] == [(3, 2, 4), (3, 0, 4), (3, 5, 4)]
    assert tuple(outs[0]) == (3, 0, 4)
    args, outs, _ = out.infer_shape(x=(3, 2, 4), y=(3, 1, 4), z=(3, 5, 4))
    assert outs[0] == (3, 8, 4)
    with pytest.raises(ShapeError, match=r"'cat'.*\(3, 2, 4\), \(2, 1, 4\)"):
        out.infer_shape(x=(3, 2, 4), y=(2, 1, 4), z=(3, 5, 4))


@pytest.mark.parametrize("build,shapes,want", [
    (lambda x: mx.sym.transpose(x, axes=(1, 0, 2)), (0, 6, 4), (6, 0, 4)),
    (lambda x: mx.sym.expand_dims(x, axis=1), (0, 6), (0, 1, 6)),
    (lambda x: mx.sym.split(x, num_outputs=2, axis=1)[1], (0, 4), (0, 2)),
    (lambda x: mx.sym.slice(x, begin=(0, 1), end=(None, 3)), (0, 4), (0, 2)),
    (lambda x: mx.sym.slice_axis(x, axis=0, begin=0, end=1), (0, 4), (0, 4)),
    (lambda x: mx.sym.repeat(x, repeats=2, axis=1), (0, 4), (0, 8)),
    (lambda x: mx.sym.depth_to_space(x, block_size=2), (0, 8, 2, 2), (0, 2, 4, 4)),
    (lambda x: mx.sym.shape_array(x), (0, 4), (2,)),
    (lambda x: mx.sym.contrib.arange_like(x, axis=1), (0, 4), (4,)),
    (lambda x: mx.sym.Flatten(x), (0, 6, 4), (0, 24)),
])
def test_partial_inference_keeps_unknown_batch(build, shapes, want):
    _, outs, _ = build(mx.sym.var("x")).infer_shape_partial(x=shapes)
    assert tuple(outs[0]) == want
