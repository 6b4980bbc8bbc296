"""Sequence ops against MXNet 1.9.1 (tests/golden/ops/sequence.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import OpAttributeError, ShapeError


# --- targeted checks the table cannot express ---------------------------------------------
# Expected values below were printed by MXNet 1.9.1.
@pytest.mark.parametrize("op,axis,data,args,out", [
    ("SequenceMask", 0, (3, 2, 4), [(3, 2, 4), (2,)], [(3, 2, 4)]),
    ("SequenceMask", 1, (3, 2, 4), [(3, 2, 4), (3,)], [(3, 2, 4)]),
    ("SequenceReverse", 0, (5, 2), [(5, 2), (2,)], [(5, 2)]),
    ("SequenceLast", 1, (3, 2, 4, 5), [(3, 2, 4, 5), (3,)], [(3, 4, 5)]),
    ("SequenceLast", 0, (3, 2, 4, 5), [(3, 2, 4, 5), (2,)], [(2, 4, 5)]),
])
def test_sequence_length_variable_and_shape(op, axis, data, args, out):
    with mx.name.NameManager():
        sym = mx.sym.invoke(op, [mx.sym.var("d")], {"use_sequence_length": True, "axis": axis})
    assert sym.list_arguments() == ["d", f"{op.lower()}0_sequence_length"]
    got_args, got_out, _ = sym.infer_shape_partial(d=data)
    assert got_args == args and got_out == out


def test_lengths_dtype_defaults_to_data_dtype():
    sym = mx.sym.SequenceMask(mx.sym.var("d"), mx.sym.var("n"), use_sequence_length=True)
    args, outs, _ = sym.infer_type(d=np.float16)
    assert args == [np.float16, np.float16] and outs == [np.float16]
    args, outs, _ = sym.infer_type(d=np.float32, n=np.int32)
    assert args == [np.float32, np.int32] and outs == [np.float32]


@pytest.mark.parametrize("op,axis", [("SequenceMask", 2), ("SequenceLast", -1),
                                     ("SequenceReverse", 1)])
def test_unsupported_axis_is_refused(op, axis):
    x = mx.nd.ones((3, 2, 4))
    with pytest.raises(OpAttributeError, match="axis"):
        mx.nd.invoke(op, [x], {"axis": axis})
    sym = mx.sym.invoke(op, [mx.sym.var("d")], {"axis": axis})
    with pytest.raises(OpAttributeError, match="axis"):
        sym.infer_shape(d=(3, 2, 4))


@pytest.mark.parametrize("op", ["SequenceMask", "SequenceReverse", "SequenceLast"])
def test_rank1_data_is_refused(op):
    with pytest.raises(ShapeError, match="rank 2"):
        mx.nd.invoke(op, [mx.nd.ones((3,))], {})


def test_wrong_length_shape_names_both_shapes():
    sym = mx.sym.SequenceMask(mx.sym.var("d"), mx.sym.var("n"), use_sequence_length=True)
    with pytest.raises(ShapeError, match=r"\(3,\).*\(2,\)|\(2,\).*\(3,\)"):
        sym.infer_shape(d=(4, 2, 3), n=(3,))
    with pytest.raises(ShapeError, match="sequence_length"):
        mx.nd.SequenceLast(mx.nd.ones((4, 2, 3)), mx.nd.ones((3,)), use_sequence_length=True)


def test_lengths_given_without_flag_is_refused():
    """MXNet: 'Operator SequenceMask expects 1 inputs, but got 2 instead.'"""
    with pytest.raises(OpAttributeError):
        mx.nd.SequenceMask(mx.nd.ones((3, 2)), mx.nd.ones((2,)))


def test_out_of_range_lengths_are_clipped():
    """MXNet reads/writes outside the array for these; gluonport clips into [0|1, T]."""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    rev = mx.nd.SequenceReverse(mx.nd.array(x), mx.nd.array([9, -1]), use_sequence_length=True)
    np.testing.assert_array_equal(rev.asnumpy(), np.stack([x[::-1, 0], x[:, 1]], axis=1))
    last = mx.nd.SequenceLast(mx.nd.array(x), mx.nd.array([0, 7]), use_sequence_length=True)
    np.testing.assert_array_equal(last.asnumpy(), [x[0, 0], x[3, 1]])
