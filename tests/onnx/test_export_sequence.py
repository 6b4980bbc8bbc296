"""ONNX export of SequenceMask / SequenceReverse / SequenceLast (ops/nn/sequence.py)
against MXNet 1.9.1's goldens (tests/golden/ops/sequence.npz), at opset 13 and the newest.

Lengths are graph inputs in the case table; ``test_lengths_as_params`` passes them as
initializers. Dynamic tests vary the batch (lengths vary with it) and the sequence length.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

from gluonport.onnx import export_symbol
from tests.onnx._export_check import OPSETS, check_export, export_case, run_ort
from tests.ops import cases_sequence
from tests.ops._check import _build_sym, _compare, forward, load_golden

GOLDEN = load_golden("sequence")
CASES = {c["name"]: c for c in cases_sequence.CASES}


@pytest.mark.parametrize("name", ["mask_axis1", "reverse_lengths", "last_lengths_axis0",
                                  "last_lengths_axis1"])
def test_lengths_as_params(name):
    check_export(CASES[name], GOLDEN[name], OPSETS[-1], params=["in1"])


def _dynamic(case, golden, opset, batch_axis, time_axis):
    """Batch and time both dynamic; the executor is the reference at other sizes."""
    sym, feed = _build_sym(case, golden)
    dyn = {"in0": {batch_axis: "batch", time_axis: "time"}}
    if "in1" in feed:
        dyn["in1"] = {0: "batch"}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()},
                          in_types={k: v.dtype for k, v in feed.items()},
                          opset_version=opset, dynamic_axes=dyn)
    rng = np.random.RandomState(5)
    for batch, steps in ((1, 2), (4, 6)):
        shape = list(feed["in0"].shape)
        shape[batch_axis], shape[time_axis] = batch, steps
        data = {"in0": rng.uniform(-1, 1, shape).astype(feed["in0"].dtype)}
        if "in1" in feed:
            low = 1 if case["op"] == "SequenceLast" else 0
            data["in1"] = rng.randint(low, steps + 1, batch).astype(feed["in1"].dtype)
        _compare(case, run_ort(model, data), forward(sym, data), f"dynamic {batch}x{steps}")


DYNAMIC = ["mask_axis0", "mask_axis1", "mask_rank2_axis1", "reverse_lengths", "reverse_rank4",
           "reverse_no_lengths", "last_lengths_axis0", "last_lengths_axis1",
           "last_no_lengths_axis1", "last_rank4_axis1"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch_and_time(name, opset):
    case = CASES[name]
    axis = case["attrs"].get("axis", 0)
    _dynamic(case, GOLDEN[name], opset, batch_axis=1 - axis, time_axis=axis)


def test_out_of_range_lengths_clip_like_numpy():
    x = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    lengths = np.array([9, -2, 3], np.int32)
    for op in ("SequenceMask", "SequenceReverse", "SequenceLast"):
        case = {"name": op, "op": op, "attrs": {"use_sequence_length": True}}
        golden = {"inputs": [x, lengths]}
        model, sym, data, _ = export_case(case, golden, OPSETS[-1])
        _compare(case, run_ort(model, data), forward(sym, data), "clipped")
