"""ONNX export of the deterministic image ops (gluonport/ops/vision/image.py) against MXNet
1.9.1's goldens (tests/golden/ops/image.npz), at opset 13 and the newest supported opset.

Tolerances are the cases' own (tests/ops/cases_image.py): integer results (uint8 lighting,
crops, flips, int32 normalize) equal MXNet's exactly, float ones within float rounding.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import pytest

from gluonport.ops import registry
from tests.onnx._export_check import OPSETS, check_dynamic
from tests.ops import cases_image
from tests.ops._check import load_golden

GOLDEN = load_golden("image")
EXPORTED = [c for c in cases_image.CASES if c["op"] in cases_image.EXPORTED]
BY_NAME = {c["name"]: c for c in EXPORTED}


# batched (NHWC / NCHW) cases exported with a dynamic batch axis
DYNAMIC = ["to_tensor_u8_nhwc", "to_tensor_int8_negative", "normalize_nchw",
           "normalize_gray_batch", "crop_nhwc_whole"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch(name, opset):
    check_dynamic(BY_NAME[name], GOLDEN[name], opset, {"in0": 0}, sizes=(1, 3))


def test_every_image_op_exports_or_says_why():
    ops = {n: op for n, op in registry.all_ops().items() if n.startswith("_image_")}
    assert len(ops) == 15
    for name, op in ops.items():
        exported = bool(op.onnx_handlers)
        assert exported == (name in cases_image.EXPORTED), name
        assert exported or op.no_onnx, f"{name}: no export and no reason"
