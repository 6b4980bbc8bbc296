"""ONNX export of topk / sort / argsort (ops/math/sort.py) against MXNet 1.9.1's goldens.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

from tests.onnx._export_check import OPSETS, check_dynamic, export_case, run_ort
from tests.ops import cases_sort
from tests.ops._check import load_golden

GOLDEN = load_golden("sort")
CASES = {c["name"]: c for c in cases_sort.CASES}


# Dynamic axis 0: a whole-axis sort (k from Shape) along it, or a fixed k along another axis.
DYNAMIC = ["topk_default", "topk_mask", "topk_axis0", "topk_flat_both", "topk_flat_mask",
           "topk_k0_full_sort", "sort_axis0", "sort_flat", "argsort_default",
           "argsort_flat_int64", "argsort_float64_data"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_axis0(name, opset):
    check_dynamic(CASES[name], GOLDEN[name], opset, {"in0": 0}, sizes=(2, 6))


@pytest.mark.parametrize("is_ascend", [False, True])
def test_ties_keep_index_order(is_ascend):
    """TopK orders equal values by index, as gluonport's stable sort does."""
    x = np.array([[1.0, 3.0, 1.0, 3.0, 2.0, 1.0]], np.float32)
    case = {"name": "ties", "op": "topk", "attrs": {"k": 0, "ret_typ": "indices",
                                                   "is_ascend": is_ascend}}
    model, _, data, _ = export_case(case, {"inputs": [x]}, OPSETS[-1])
    got = run_ort(model, data)[0]
    order = np.argsort(x if is_ascend else -x, axis=-1, kind="stable")
    np.testing.assert_array_equal(got, order.astype(np.float32))
