"""ONNX export of the indexing family (ops/tensor/indexing.py) against MXNet 1.9.1's goldens,
plus dynamic sizes (index counts, and the indexed axis itself, whose size bounds clip/wrap)
against the numpy executor.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

from tests.onnx._export_check import OPSETS, check_dynamic, export_case, run_ort
from tests.ops import cases_indexing
from tests.ops._check import load_golden

GOLDEN = load_golden("indexing")
CASES = {c["name"]: c for c in cases_indexing.CASES}

# Weights given as parameters (ONNX initializers) rather than graph inputs.
PARAMS = {"embedding": ["in1"], "embedding_2d_int": ["in1"], "take_wrap": ["in0"],
          "index_copy": ["in2"], "scatter_nd": ["in1"]}


# (case, {input: dynamic axis}, sizes): new random inputs at each size vs the executor
DYNAMIC = [
    ("take_clip_float_idx", {"in0": 0}, (1, 4)),   # clip bound read from Shape
    ("take_clip_float_idx", {"in1": 0}, (1, 4)),
    ("take_wrap", {"in0": 0}, (1, 5)),             # wrap modulus read from Shape
    ("take_axis1_2d_idx", {"in0": 0}, (1, 4)),
    ("pick_default", {"in0": 0, "in1": 0}, (1, 4)),
    ("pick_axis0_keepdims", {"in0": 0}, (1, 4)),
    ("embedding", {"in0": 0}, (1, 4)),
    ("one_hot", {"in0": 0}, (1, 4)),
    ("one_hot_int32_values", {"in0": 0}, (1, 4)),
    ("where_1d_condition", {"in0": 0, "in1": 0, "in2": 0}, (1, 4)),
    ("where_same_shape", {"in0": 0, "in1": 0, "in2": 0}, (1, 4)),
    ("gather_nd", {"in1": 1}, (1, 4)),
    ("gather_nd_rows", {"in0": 2}, (1, 4)),
    ("batch_take", {"in0": 0, "in1": 0}, (1, 4)),
    ("boolean_mask", {"in0": 0, "in1": 0}, (1, 4)),
    ("index_copy", {"in0": 0}, (4, 7)),
    ("index_array", {"in0": 0}, (1, 4)),
    ("index_array_axes", {"in0": 0}, (1, 4)),
    ("onehot_encode", {"in0": 0, "in1": 0}, (1, 4)),
    ("onehot_encode", {"in1": 1}, (2, 9)),         # the width comes from Range(Shape)
    ("fill_element_0index", {"in0": 0, "in1": 0, "in2": 0}, (1, 4)),
    ("fill_element_0index", {"in0": 1}, (1, 5)),
    ("ravel_multi_index", {"in0": 1}, (1, 4)),
    ("ravel_multi_index_3d_int32", {"in0": 1}, (1, 4)),
    ("unravel_index", {"in0": 0}, (1, 4)),
    ("unravel_index_3d_int32", {"in0": 0}, (1, 4)),
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name,axes,sizes", DYNAMIC, ids=[f"{n}{a}" for n, a, _ in DYNAMIC])
def test_dynamic(name, axes, sizes, opset):
    params = [k for k in PARAMS.get(name, ()) if k not in axes]
    check_dynamic(CASES[name], GOLDEN[name], opset, axes, params, sizes)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_one_hot_negative_index_is_all_off(dtype):
    """ONNX OneHot counts negative indices from the end; MXNet gives an all-off row."""
    case = {"name": "one_hot_neg", "op": "one_hot",
            "attrs": {"depth": 3, "dtype": dtype, "on_value": 2, "off_value": -1}}
    golden = {"inputs": [np.array([-1, -3, 2, 3, -4], np.int64)]}
    model, *_ = export_case(case, golden, OPSETS[-1])
    want = np.full((5, 3), -1, dtype)
    want[2, 2] = 2
    np.testing.assert_array_equal(run_ort(model, {"in0": golden["inputs"][0]})[0], want)
