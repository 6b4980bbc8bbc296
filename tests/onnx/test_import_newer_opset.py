"""A model newer than the installed onnx: the import says so (the installed onnx's opset and
the fix) instead of relaying onnx.checker's "No Op registered", which blames the exporter."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from gluonport.errors import FormatError
from gluonport.onnx.importer import import_graph


def test_opset_beyond_the_installed_onnx_names_the_upgrade(tmp_path):
    newer = onnx.defs.onnx_opset_version() + 1
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", newer)])
    path = str(tmp_path / "newer.onnx")
    onnx.save(model, path)
    with pytest.raises(FormatError, match=f"opset {newer}.*knows opsets up to {newer - 1}"
                                          r".*pip install -U onnx"):
        import_graph(path)
