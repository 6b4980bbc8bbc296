"""Case table for ops/nn/sequence.py: SequenceMask, SequenceReverse, SequenceLast (plain
data; see tests/ops/_check.py).

Lengths are literal so every case stays inside what MXNet defines (``0 <= length`` for mask and
reverse, ``1 <= length`` for last; lengths above ``T`` are defined for SequenceMask only).
Float lengths are truncated toward zero by MXNet (``2.7`` keeps 2 steps).
"""


def _len(values, dtype="float32"):
    return {"value": values, "dtype": dtype}


def _x(shape, dtype="float32"):
    if dtype.startswith("int"):
        return {"shape": shape, "dtype": dtype, "low": -50, "high": 50}
    return {"shape": shape, "dtype": dtype}


def _case(name, op, data, lengths=None, **attrs):
    inputs = [data] if lengths is None else [data, lengths]
    case = {"name": name, "op": op, "inputs": inputs, "attrs": attrs}
    if lengths is not None:
        attrs["use_sequence_length"] = True
        case["fd_wrt"] = [0]  # the lengths are indices: piecewise constant, no gradient
    if data.get("dtype") == "float16":
        case.update(rtol=1e-3, atol=1e-3)
    return case


MASK = "SequenceMask"
REV = "SequenceReverse"
LAST = "SequenceLast"

CASES = [
    # --- SequenceMask ------------------------------------------------------------------------
    _case("mask_no_lengths_identity", MASK, _x((4, 3, 2))),
    _case("mask_no_lengths_explicit_false", MASK, _x((4, 3, 2)), use_sequence_length=False,
          value=5.0),
    _case("mask_axis0", MASK, _x((4, 3, 2)), _len([1, 4, 2])),
    _case("mask_axis0_value_float_lengths", MASK, _x((4, 3, 2)), _len([2.7, 0.0, 4.0]),
          value=-1.5),
    _case("mask_lengths_above_T_keep_all", MASK, _x((3, 2, 2)), _len([9, 1])),
    _case("mask_axis1", MASK, _x((3, 4, 2)), _len([3, 1, 4]), axis=1, value=7.0),
    _case("mask_rank2_axis0", MASK, _x((5, 3)), _len([5, 2, 3]), value=-1.0),
    _case("mask_rank2_axis1", MASK, _x((3, 5)), _len([5, 2, 0]), axis=1),
    _case("mask_rank4_axis1", MASK, _x((2, 4, 3, 2)), _len([2, 4]), axis=1, value=0.5),
    _case("mask_float16", MASK, _x((4, 2, 3), "float16"), _len([3, 1], "float16"), value=-2.0),
    _case("mask_float64_int32_lengths", MASK, _x((4, 2, 3), "float64"), _len([3, 1], "int32")),
    _case("mask_int32_value_truncates", MASK, _x((4, 3), "int32"), _len([1, 2, 4], "int32"),
          value=-2.7),
    _case("mask_int64_lengths", MASK, _x((4, 3, 2)), _len([2, 3, 1], "int64"), value=3.0),
    # --- SequenceReverse ---------------------------------------------------------------------
    _case("reverse_no_lengths", REV, _x((4, 3, 2))),
    _case("reverse_lengths", REV, _x((4, 3, 2)), _len([4, 1, 2])),
    _case("reverse_float_lengths_and_zero", REV, _x((4, 3, 2)), _len([2.9, 0.0, 3.0])),
    _case("reverse_rank2", REV, _x((5, 3)), _len([5, 2, 3])),
    _case("reverse_rank4", REV, _x((4, 2, 3, 2)), _len([3, 4])),
    _case("reverse_int32", REV, _x((4, 3), "int32"), _len([3, 4, 1], "int32")),
    _case("reverse_float64", REV, _x((3, 2, 2), "float64"), _len([2, 3])),
    _case("reverse_float16_no_lengths", REV, _x((3, 2, 2), "float16")),
    # --- SequenceLast ------------------------------------------------------------------------
    _case("last_no_lengths_axis0", LAST, _x((4, 3, 2))),
    _case("last_no_lengths_axis1", LAST, _x((3, 4, 2)), axis=1),
    _case("last_lengths_axis0", LAST, _x((4, 3, 2)), _len([1, 4, 2])),
    _case("last_lengths_axis1", LAST, _x((3, 4, 2)), _len([3, 1, 4]), axis=1),
    _case("last_float_lengths", LAST, _x((4, 3, 2)), _len([1.9, 4.0, 2.5])),
    _case("last_rank2_axis0", LAST, _x((5, 3)), _len([5, 2, 3])),
    _case("last_rank2_axis1", LAST, _x((3, 5)), _len([1, 5, 3]), axis=1),
    _case("last_rank4_axis1", LAST, _x((2, 4, 3, 2)), _len([2, 4], "int32"), axis=1),
    _case("last_float16", LAST, _x((4, 2, 3), "float16"), _len([3, 1], "float16")),
    _case("last_int32", LAST, _x((4, 3), "int32"), _len([1, 2, 4], "int64")),
    _case("last_float64_no_lengths", LAST, _x((3, 2, 2), "float64")),
]

# MXNet 1.9.1's SequenceLast backward without sequence_length reads its step indices from
# uninitialised workspace (its gradient crashed the generator, grad_status.json "error"); the
# gradient here is the last step's, checked by finite differences.
_LAST_NO_LENGTHS = ("MXNet's SequenceLast backward without lengths reads uninitialised "
                    "indices (it crashed); finite differences check this gradient")
for _case_row in CASES:
    if _case_row["op"] == LAST and not _case_row["attrs"].get("use_sequence_length"):
        _case_row["no_grad_golden"] = _LAST_NO_LENGTHS
