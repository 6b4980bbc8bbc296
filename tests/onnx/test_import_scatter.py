"""ScatterND / ScatterElements / TensorScatter imported onto MXNet's scatter_nd, one_hot, dot
and where (gluonport/onnx/importers/scatter.py), against onnxruntime on the same model.

The indices are graph inputs (computed at run time), negative ones included. The graph of
``test_scatter_chain_matches_onnxruntime``, written with ``export_mxnet``, was also run in
MXNet 1.9.1 by hand and gave onnxruntime's output exactly.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.importer import import_graph
from gluonport.onnx.importers import scatter as scatter_importers
from tests.onnx._import_check import check_import, make_model, vi

_vi = vi
_model = partial(make_model, opset=18, name="scatter")
_check = partial(check_import, rtol=1e-6, atol=1e-6)


def test_scatter_chain_matches_onnxruntime():
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    nodes = [helper.make_node("ScatterND", ["x", "i", "u"], ["a"], reduction="add"),
             helper.make_node("ScatterElements", ["a", "j", "v"], ["b"], axis=1,
                              reduction="max"),
             helper.make_node("ScatterND", ["b", "k", "w"], ["y"])]
    model = _model(nodes, [_vi("x", f, [4, 3, 5]), _vi("i", i64, [2, 3, 1]),
                           _vi("u", f, [2, 3, 3, 5]), _vi("j", i64, [4, 2, 5]),
                           _vi("v", f, [4, 2, 5]), _vi("k", i64, [2, 2]),
                           _vi("w", f, [2, 5])], _vi("y", f, [4, 3, 5]))
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((4, 3, 5)).astype(np.float32),
             "i": np.array([[[0], [1], [0]], [[-1], [2], [1]]]),  # duplicates accumulate
             "u": rng.standard_normal((2, 3, 3, 5)).astype(np.float32),
             "j": rng.integers(-3, 3, (4, 2, 5)),
             "v": rng.standard_normal((4, 2, 5)).astype(np.float32),
             "k": np.array([[0, 2], [-1, -3]]),
             "w": rng.standard_normal((2, 5)).astype(np.float32)}
    _check(model, feeds)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_int_data(reduction):
    """Integer data: the neutral value of max/min is the dtype's limit, not infinity."""
    i32, i64 = TensorProto.INT32, TensorProto.INT64
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0,
                            reduction=reduction)
    model = _model([node], [_vi("x", i32, [3, 4]), _vi("i", i64, [2, 4]),
                            _vi("u", i32, [2, 4])], _vi("y", i32, [3, 4]))
    rng = np.random.default_rng(3)
    idx = np.array([[0, 1, 2, 0], [2, 2, 0, 1]]) if reduction == "none" else \
        rng.integers(0, 3, (2, 4))
    feeds = {"x": rng.integers(-50, 50, (3, 4)).astype(np.int32), "i": idx,
             "u": rng.integers(-50, 50, (2, 4)).astype(np.int32)}
    _check(model, feeds)


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_kv_cache(mode):
    if onnx.defs.onnx_opset_version() < 24:
        pytest.skip(f"onnx {onnx.__version__} has no opset 24 (TensorScatter)")
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node("TensorScatter", ["past", "update", "pos"], ["present"],
                            mode=mode)
    model = _model([node], [_vi("past", f, [2, 3, 6, 4]), _vi("update", f, [2, 3, 2, 4]),
                            _vi("pos", i64, [2])], _vi("present", f, [2, 3, 6, 4]), opset=24)
    rng = np.random.default_rng(5)
    feeds = {"past": rng.standard_normal((2, 3, 6, 4)).astype(np.float32),
             "update": rng.standard_normal((2, 3, 2, 4)).astype(np.float32),
             "pos": np.array([1, 5 if mode == "circular" else 4])}
    _check(model, feeds)


def test_dynamic_data_shape_is_refused():
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc")
    model = _model([node], [_vi("x", f, ["N", 3]), _vi("i", i64, [1, 1]),
                            _vi("u", f, [1, 3])], _vi("y", f, ["N", 3]))
    with pytest.raises(UnsupportedOpError, match=r"'sc'.*static shape"):
        import_graph(model)


def test_reduction_grid_limit(monkeypatch):
    monkeypatch.setattr(scatter_importers, "_GRID_LIMIT", 10)
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc", reduction="max")
    model = _model([node], [_vi("x", f, [4, 3]), _vi("i", i64, [2, 1]),
                            _vi("u", f, [2, 3])], _vi("y", f, [4, 3]))
    with pytest.raises(UnsupportedOpError, match=r"'sc'.*2x4x3 grid"):
        import_graph(model)
