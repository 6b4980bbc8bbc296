"""Sequences of known structure expanded into tensors at import
(gluonport/onnx/_import_sequence.py), against onnxruntime on the same model.

The graphs build sequences (Construct, Empty + Insert, SplitToSequence with pieces of one size,
given sizes or unit pieces squeezed), edit them (Insert and Erase at positive, negative and
default positions) and read them (At, Length, ConcatFromSequence with and without a new axis),
with tensor inputs and outputs; one test passes the positions as graph inputs, which the ONNX
backend specializes on.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

F, I64 = TensorProto.FLOAT, TensorProto.INT64
_check = partial(check_import, rtol=0, atol=0, skip_without_kernel=False)


def _i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _feeds(*names):
    rng = np.random.default_rng(0)
    return {n: rng.normal(size=(2, 3)).astype(np.float32) for n in names}


def test_edit_and_read_a_sequence():
    n = helper.make_node
    nodes = [n("SequenceConstruct", ["a", "b"], ["s0"]),
             n("SequenceInsert", ["s0", "c", "p_front"], ["s1"]),   # c a b
             n("SequenceInsert", ["s1", "a"], ["s2"]),              # c a b a
             n("SequenceErase", ["s2", "p_neg"], ["s3"]),           # c a a
             n("SequenceErase", ["s3"], ["s4"]),                    # c a
             n("SequenceAt", ["s4", "p_neg"], ["first"]),           # c (position -2)
             n("ConcatFromSequence", ["s3"], ["cat"], axis=-1, new_axis=1),
             n("SequenceLength", ["s3"], ["len"]),
             n("Mul", ["first", "b"], ["y"])]
    model = make_model(nodes, [vi(k, F, [2, 3]) for k in "abc"],
                       [vi("y", F, [2, 3]), vi("cat", F, [2, 3, 3]), vi("len", I64, [])],
                       [_i64("p_front", 0), _i64("p_neg", -2)], opset=18)
    _check(model, _feeds("a", "b", "c"), every_output=True)


@pytest.mark.parametrize("split, keepdims, axis", [(None, 0, 1), (None, 1, 0), (2, 1, 1),
                                                   ([1, 2], 1, 1)])
def test_split_to_sequence_then_concat(split, keepdims, axis):
    inits = [] if split is None else [_i64("split", split)]
    ins = ["x"] + ([] if split is None else ["split"])
    nodes = [helper.make_node("SplitToSequence", ins, ["s"], axis=axis, keepdims=keepdims),
             helper.make_node("SequenceAt", ["s", "last"], ["tail"]),
             helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=axis,
                              new_axis=1 - keepdims),
             helper.make_node("SequenceLength", ["s"], ["len"])]
    tail = {0: [1, 3], 1: [2, 1]}[axis] if keepdims else [2]
    model = make_model(nodes, [vi("x", F, [2, 3])],
                       [vi("cat", F, [2, 3]), vi("tail", F, tail), vi("len", I64, [])],
                       inits + [_i64("last", -1)], opset=18)
    _check(model, _feeds("x"), every_output=True)


def test_positions_given_as_graph_inputs_are_specialized():
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceErase", ["s", "p"], ["t"]),
             helper.make_node("SequenceAt", ["t", "q"], ["y"])]
    model = make_model(nodes, [vi(k, F, [2, 3]) for k in "abc"] + [vi("p", I64, []),
                                                                   vi("q", I64, [])],
                       vi("y", F, [2, 3]), opset=18)
    for p, q in ((0, 0), (1, 1), (-1, 0)):
        _check(model, {**_feeds("a", "b", "c"), "p": np.array(p), "q": np.array(q)})


def test_a_sequence_output_is_refused():
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"])]
    seq = helper.make_tensor_sequence_value_info("s", F, [2, 3])
    model = make_model(nodes, [vi(k, F, [2, 3]) for k in "ab"], seq, opset=18)
    with pytest.raises(UnsupportedOpError, match="sequence"):
        import_graph(model)


def _optional_input(name):
    return helper.make_value_info(name, helper.make_optional_type_proto(
        helper.make_tensor_type_proto(F, [2, 3])))


def test_optionals_holding_tensors():
    """OptionalGetElement of a tensor and of an optional graph input (fed) is the tensor;
    OptionalHasElement of nothing is false, of a tensor true; onnxruntime agrees."""
    n = helper.make_node
    nodes = [n("OptionalGetElement", ["a"], ["ga"]), n("OptionalGetElement", ["o"], ["go"]),
             n("Add", ["ga", "go"], ["y"]), n("OptionalHasElement", [], ["none"]),
             n("OptionalHasElement", ["y"], ["some"])]
    model = make_model(nodes, [vi("a", F, [2, 3]), _optional_input("o")],
                       [vi("y", F, [2, 3]), vi("none", TensorProto.BOOL, []),
                        vi("some", TensorProto.BOOL, [])], opset=18)
    feeds = {"a": _feeds("a")["a"], "o": _feeds("o")["o"] + 1}
    _check(model, feeds, every_output=True)


def test_presence_of_an_optional_graph_input_is_refused():
    """Whether the caller feeds an optional input is known only at run time: no constant."""
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["y"])]
    model = make_model(nodes, [_optional_input("o")], vi("y", TensorProto.BOOL, []), opset=18)
    with pytest.raises(UnsupportedOpError, match="OptionalHasElement"):
        import_graph(model)
