"""Arity and output indexes of a loaded symbol graph are checked once, at load (issue 12).

Before, a file whose ``FullyConnected`` had only its data input, or whose head read output 5 of
a one-output op, loaded, and then ``list_outputs``, shape inference, the executor or the ONNX
exporter raised ``IndexError``/``KeyError``. Now ``load_json`` refuses it with a
:class:`FormatError` naming the node, and no consumer ever sees such a graph.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from gluonport import sym
from gluonport.errors import FormatError, OpAttributeError
from gluonport.onnx.export import export_symbol


def _var(name):
    return {"op": "null", "name": name, "inputs": []}


def _graph(nodes, heads):
    return json.dumps({"nodes": nodes, "heads": heads,
                       "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
                       "attrs": {"mxnet_version": ["int", 10901]}})


def _op(op, name, inputs, **attrs):
    node = {"op": op, "name": name, "inputs": [[*e, 0] for e in inputs]}
    if attrs:
        node["attrs"] = {k: str(v) for k, v in attrs.items()}
    return node


BAD = {
    "fc_given_only_data": (
        _graph([_var("x"), _op("FullyConnected", "fc", [(0, 0)], num_hidden=3)], [[1, 0, 0]]),
        r"node 1 'fc' \(FullyConnected\) has 1 input\(s\), but FullyConnected .* takes 3 "
        r"\(data, weight, bias\)"),
    "fc_no_bias_given_bias": (
        _graph([_var("x"), _var("w"), _var("b"),
                _op("FullyConnected", "fc", [(0, 0), (1, 0), (2, 0)], num_hidden=3,
                    no_bias=True)], [[3, 0, 0]]),
        r"node 3 'fc' .* has 3 input\(s\).* takes 2 \(data, weight\)"),
    "relu_given_two": (
        _graph([_var("x"), _var("y"), _op("relu", "r", [(0, 0), (1, 0)])], [[2, 0, 0]]),
        r"node 2 'r' \(relu\) has 2 input\(s\)"),
    "head_reads_output_5": (
        _graph([_var("x"), _op("relu", "r", [(0, 0)])], [[1, 5, 0]]),
        r"head 0 reads output 5 of node 1 'r' \(relu\), which has 1 output"),
    "input_reads_output_5": (
        _graph([_var("x"), _op("relu", "r", [(0, 0)]), _op("relu", "r2", [(1, 5)])],
               [[2, 0, 0]]),
        r"node 2 'r2' \(relu\) input 0 reads output 5 of node 1 'r'"),
    "variable_output_3": (
        _graph([_var("x"), _op("relu", "r", [(0, 3)])], [[1, 0, 0]]),
        r"input 0 reads output 3 of node 0 'x' \(variable\)"),
    "split_output_past_num_outputs": (
        _graph([_var("x"), _op("SliceChannel", "s", [(0, 0)], num_outputs=3)], [[1, 3, 0]]),
        r"head 0 reads output 3 of node 1 's' \(SliceChannel\), which has 3 outputs"),
    "concat_num_args_disagrees": (
        _graph([_var("x"), _var("y"), _op("Concat", "c", [(0, 0), (1, 0)], num_args=3)],
               [[2, 0, 0]]),
        r"node 2 'c' \(Concat\) has 2 input\(s\), but its attribute num_args='3' says 3"),
    "variadic_without_inputs": (
        _graph([_var("x"), _op("add_n", "s", [], num_args=0)], [[1, 0, 0]]),
        r"node 1 's' \(add_n\) has no inputs"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_structure_is_refused_at_load(case, tmp_path):
    text, message = BAD[case]
    with pytest.raises(FormatError, match=message):
        sym.load_json(text)
    path = tmp_path / "bad-symbol.json"
    path.write_text(text)
    with pytest.raises(FormatError, match=str(path).replace("\\", r"\\")):
        sym.load(str(path))


GOOD = {
    "split_last_output": (
        _graph([_var("x"), _op("SliceChannel", "s", [(0, 0)], num_outputs=3)], [[1, 2, 0]]),
        {"x": (2, 6)}, [(2, 2)]),
    "fc_no_bias": (
        _graph([_var("x"), _var("w"), _op("FullyConnected", "fc", [(0, 0), (1, 0)],
                                          num_hidden=3, no_bias=True)], [[2, 0, 0]]),
        {"x": (2, 4)}, [(2, 3)]),
    "concat_num_args": (
        _graph([_var("x"), _var("y"), _op("Concat", "c", [(0, 0), (1, 0)], num_args=2)],
               [[2, 0, 0]]),
        {"x": (2, 4), "y": (2, 1)}, [(2, 5)]),
}


@pytest.mark.parametrize("case", sorted(GOOD))
def test_valid_structure_loads_and_runs(case):
    text, shapes, want = GOOD[case]
    s = sym.load_json(text)
    _, outs, _ = s.infer_shape(**shapes)
    assert outs == want
    args = {n: np.ones(sh, "f4") for n, sh in zip(s.list_arguments(), s.infer_shape(**shapes)[0])}
    assert [o.shape for o in s.eval(**args)] == want


def test_every_consumer_sees_the_refusal_not_an_index_error():
    """The graphs of the issue: no consumer is reached; the one error names the node."""
    for text, _ in BAD.values():
        with pytest.raises(FormatError):
            s = sym.load_json(text)
            s.list_outputs()
            export_symbol(s, {}, [(2, 4)], [np.float32])


def test_unparseable_attribute_still_loads_and_names_the_node_on_use():
    """Arity needs the parsed attributes; a node whose attributes do not parse loads (it can be
    inspected) and every use raises the attribute error naming it."""
    text = _graph([_var("x"), _op("FullyConnected", "fc7", [(0, 0)], num_hidden="3.5")],
                  [[1, 0, 0]])
    s = sym.load_json(text)
    with pytest.raises(OpAttributeError, match="fc7.*num_hidden"):
        s.infer_shape(x=(2, 4))
    with pytest.raises(OpAttributeError, match="fc7.*num_hidden"):
        s.list_outputs()


@pytest.mark.parametrize("make", [lambda: sym.Concat(), lambda: sym.add_n(),
                                  lambda: sym.stack(axis=0)])
def test_composing_a_variadic_op_without_inputs_is_refused(make):
    """Composition checks what loading checks: before, such a node was built and failed later
    inside its shape rule."""
    with pytest.raises(OpAttributeError, match="takes at least one input"):
        make()
