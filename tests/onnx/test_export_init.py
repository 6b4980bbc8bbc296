"""ONNX export of the creation ops (ops/tensor/init.py): every case of tests/ops/cases_init.py
against MXNet 1.9.1's goldens in onnxruntime, at opset 13 and the newest; beyond the table, the
run-time Range/EyeLike lowering of outputs above init.FOLD_LIMIT elements against the numpy
compute (bit for bit), and the refusals.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from gluonport.ops.tensor import init
from tests.onnx._export_check import OPSETS, run_ort
from tests.ops._check import forward, load_golden

GOLDEN = load_golden("init")


def _run(sym, opset):
    model = export_symbol(sym, {}, in_shapes={}, opset_version=opset)
    return model, run_ort(model, {})[0]


BIG = [("_arange", {"start": 0.1, "stop": 1000.0, "step": 0.1}),
       ("_arange", {"start": 0, "stop": 3000, "repeat": 2, "dtype": "float64"}),
       ("_arange", {"start": 2.7, "stop": -7000, "step": -1.5, "dtype": "int32"}),
       ("_arange", {"start": 0, "stop": 5000, "dtype": "uint8"}),
       ("_arange", {"start": 0, "stop": 5000, "step": 0.5, "dtype": "float16"}),
       ("_linspace", {"start": -1, "stop": 1, "num": 5001}),
       ("_linspace", {"start": 0, "stop": 10000, "num": 5000, "endpoint": False,
                      "dtype": "int64"}),
       ("_eye", {"N": 100, "M": 70, "k": 3}),
       ("_eye", {"N": 80, "k": -5, "dtype": "uint8"}),
       ("_eye", {"N": 90, "dtype": "float64"})]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("op,attrs", BIG, ids=[f"{o}-{i}" for i, (o, _) in enumerate(BIG)])
def test_large_outputs_are_computed(op, attrs, opset):
    """Above FOLD_LIMIT elements: no stored constant, and exactly the compute's values."""
    sym = mx.sym.invoke(op, [], attrs)
    model, got = _run(sym, opset)
    want = forward(sym, {})[0]
    assert want.size > init.FOLD_LIMIT
    assert sum(np.prod(t.dims) for t in model.graph.initializer) < 10
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_small_outputs_are_constants():
    model, got = _run(mx.sym.invoke("_arange", [], {"start": 0.1, "stop": 10.0, "step": 0.1}),
                      17)
    assert [n.op_type for n in model.graph.node] == ["Identity"]
    np.testing.assert_array_equal(got, GOLDEN["arange_float_accumulates"]["outputs"][0])


def test_bfloat16_fill_is_its_bits():
    """gluonport carries bfloat16 as uint16 bits; the exported constant holds the same bits."""
    sym = mx.sym.invoke("_ones", [], {"shape": (2, 2), "dtype": "bfloat16"})
    model, got = _run(sym, 17)
    np.testing.assert_array_equal(got, forward(sym, {})[0])
    assert got.dtype == np.uint16 and got[0, 0] == 0x3F80


def test_infer_range_is_refused():
    sym = mx.sym.invoke("_arange", [], {"start": 3, "infer_range": True, "name": "r"})
    out = mx.sym.broadcast_add(mx.sym.var("x"), sym)
    with pytest.raises(ConversionError, match="'r'.*infer_range.*give stop"):
        export_symbol(out, {}, in_shapes=[(2, 3)])


def test_partial_shape_is_refused():
    sym = mx.sym.invoke("_zeros", [], {"shape": (0, 3), "name": "z"})
    out = mx.sym.broadcast_add(mx.sym.var("x"), sym)
    with pytest.raises(ConversionError, match="'z'.*not fully given.*zeros_like"):
        export_symbol(out, {}, in_shapes=[(2, 3)])
