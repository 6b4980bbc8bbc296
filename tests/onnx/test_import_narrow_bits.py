"""Narrow-typed initializers (bfloat16, float8) import with their values on every onnx that
pyproject.toml allows: onnx 1.17 (no ml_dtypes) hands their raw bits out of
``numpy_helper.to_array``, which the import decodes itself (gluonport/onnx/_import_narrow.py)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from gluonport.onnx._import_narrow import narrow_values
from gluonport.onnx.backend import prepare

# values exact in every one of these types (float8e4m3fnuz / e5m2fnuz have no -0)
VALUES = [1.5, -2.0, 3.0, 0.0, -0.25, 0.125]
TYPES = ["BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"]


@pytest.mark.parametrize("name", TYPES)
def test_narrow_initializer_imports_with_its_values(name):
    elem = getattr(TensorProto, name)
    init = helper.make_tensor("c", elem, [len(VALUES)], VALUES)
    graph = helper.make_graph([helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)], "g",
                              [], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                 [len(VALUES)])], [init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    got = prepare(model).run({})[0]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array(VALUES, np.float32))


@pytest.mark.parametrize("name, ml_name", [
    ("BFLOAT16", "bfloat16"), ("FLOAT8E4M3FN", "float8_e4m3fn"),
    ("FLOAT8E4M3FNUZ", "float8_e4m3fnuz"), ("FLOAT8E5M2", "float8_e5m2"),
    ("FLOAT8E5M2FNUZ", "float8_e5m2fnuz")])
def test_every_bit_pattern_decodes_as_ml_dtypes_converts_it(name, ml_name):
    """The decoding of raw bits (onnx 1.17's arrays) against ml_dtypes on every pattern."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    wide = name == "BFLOAT16"
    bits = np.arange(1 << (16 if wide else 8), dtype=np.uint16 if wide else np.uint8)
    raw = bits.view(np.dtype((bits.dtype, [(ml_name, bits.dtype)])))  # onnx 1.17's dtype
    got = narrow_values(raw, getattr(TensorProto, name))
    want = bits.view(getattr(ml_dtypes, ml_name)).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
