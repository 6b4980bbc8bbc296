"""Logic on bool tensors (And/Or/Xor/Not/Equal of comparison results) imported on uint8
(gluonport/onnx/importers/math.py): MXNet 1.9.1's logic and comparison kernels refuse bool
operands, so a graph computing on bool would not run there. Against onnxruntime on the same
model; the same graph written with ``export_mxnet`` was run in MXNet 1.9.1 by hand (equal).
"""

from __future__ import annotations

import json

import numpy as np
from onnx import TensorProto, helper

from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

F, B = TensorProto.FLOAT, TensorProto.BOOL


def _model():
    n = helper.make_node
    nodes = [n("Greater", ["x", "y"], ["gt"]), n("Less", ["x", "z"], ["lt"]),
             n("And", ["gt", "lt"], ["a"]), n("Or", ["gt", "lt"], ["o"]),
             n("Xor", ["a", "o"], ["xo"]), n("Not", ["xo"], ["nx"]),
             n("Equal", ["nx", "gt"], ["eq"]), n("Where", ["eq", "x", "y"], ["w"])]
    return make_model(nodes, [vi(k, F, [3, 4]) for k in "xyz"],
                      [vi("eq", B, [3, 4]), vi("nx", B, [3, 4]), vi("w", F, [3, 4])], opset=13)


def test_bool_logic_matches_onnxruntime():
    rng = np.random.default_rng(9)
    feeds = {k: rng.normal(size=(3, 4)).astype(np.float32) for k in "xyz"}
    check_import(_model(), feeds, rtol=0, atol=0, every_output=True)


def test_no_mxnet_logic_op_reads_a_bool():
    """Every logic or comparison node of the imported graph reads uint8, not bool."""
    g = import_graph(_model())
    logic = {"broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor",
             "logical_not", "broadcast_equal"}
    internals = g.sym.get_internals()
    names = internals.list_outputs()
    _, types, _ = internals.infer_type(x="float32", y="float32", z="float32")
    by_name = dict(zip(names, types))
    nodes = json.loads(g.sym.tojson())["nodes"]
    checked = 0
    for node in nodes:
        if node["op"] in logic:
            for src, _, _ in node["inputs"]:
                src_node = nodes[src]
                out = f"{src_node['name']}_output" if src_node["op"] != "null" else \
                    src_node["name"]
                assert np.dtype(by_name[out]) != np.bool_, (node["name"], out)
                checked += 1
    assert checked >= 8
