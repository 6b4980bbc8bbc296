"""Case table for ops/math/sort.py (plain data; see tests/ops/_check.py).

Random float inputs have distinct values, so the order among ties (unspecified in MXNet) does not
enter these comparisons; ties are tested separately in test_sort.py.
"""

F = {"shape": (3, 5)}
F3 = {"shape": (2, 3, 4)}
F64 = {"shape": (3, 5), "dtype": "float64"}
I32 = {"value": [[7, -3, 12, 0, 5], [4, 9, -8, 2, 6]], "dtype": "int32"}

CASES = [
    # topk: return types, direction, axes, index dtypes
    {"name": "topk_default", "op": "topk", "inputs": [F]},
    {"name": "topk_value", "op": "topk", "inputs": [F], "attrs": {"k": 2, "ret_typ": "value"}},
    {"name": "topk_both", "op": "topk", "inputs": [F], "attrs": {"k": 3, "ret_typ": "both"}},
    {"name": "topk_mask", "op": "topk", "inputs": [F], "attrs": {"k": 2, "ret_typ": "mask"}},
    {"name": "topk_ascend", "op": "topk", "inputs": [F],
     "attrs": {"k": 2, "ret_typ": "both", "is_ascend": True}},
    {"name": "topk_axis0", "op": "topk", "inputs": [F3], "attrs": {"k": 2, "axis": 0,
                                                                    "ret_typ": "both"}},
    {"name": "topk_axis1_mask", "op": "topk", "inputs": [F3],
     "attrs": {"k": 2, "axis": 1, "ret_typ": "mask"}},
    {"name": "topk_axis_neg2", "op": "topk", "inputs": [F3], "attrs": {"k": 1, "axis": -2}},
    {"name": "topk_flat_both", "op": "topk", "inputs": [F3],
     "attrs": {"k": 4, "axis": None, "ret_typ": "both"}},
    {"name": "topk_flat_mask", "op": "topk", "inputs": [F3],
     "attrs": {"k": 5, "axis": None, "ret_typ": "mask"}},
    {"name": "topk_k0_full_sort", "op": "topk", "inputs": [F],
     "attrs": {"k": 0, "ret_typ": "both"}},
    {"name": "topk_k_negative", "op": "topk", "inputs": [F],
     "attrs": {"k": -1, "ret_typ": "value"}},
    {"name": "topk_k_all", "op": "topk", "inputs": [F], "attrs": {"k": 5}},
    {"name": "topk_dtype_int32", "op": "topk", "inputs": [F], "attrs": {"k": 2, "dtype": "int32"}},
    {"name": "topk_dtype_int64", "op": "topk", "inputs": [F],
     "attrs": {"k": 2, "dtype": "int64", "ret_typ": "both"}},
    {"name": "topk_dtype_uint8", "op": "topk", "inputs": [F],
     "attrs": {"k": 2, "dtype": "uint8", "ret_typ": "both"}},
    {"name": "topk_dtype_float64_mask", "op": "topk", "inputs": [F],
     "attrs": {"k": 2, "dtype": "float64", "ret_typ": "mask"}},
    {"name": "topk_int32_data", "op": "topk", "inputs": [I32],
     "attrs": {"k": 2, "ret_typ": "both"}},
    {"name": "topk_int32_mask", "op": "topk", "inputs": [I32],
     "attrs": {"k": 3, "ret_typ": "mask"}},
    {"name": "topk_float64_data", "op": "topk", "inputs": [F64],
     "attrs": {"k": 2, "ret_typ": "value", "is_ascend": True}},
    {"name": "topk_1d", "op": "topk", "inputs": [{"shape": (9,)}],
     "attrs": {"k": 4, "ret_typ": "both"}},
    # sort
    {"name": "sort_default", "op": "sort", "inputs": [F]},
    {"name": "sort_descending", "op": "sort", "inputs": [F], "attrs": {"is_ascend": False}},
    {"name": "sort_axis0", "op": "sort", "inputs": [F3], "attrs": {"axis": 0}},
    {"name": "sort_flat", "op": "sort", "inputs": [F3], "attrs": {"axis": None}},
    {"name": "sort_int32", "op": "sort", "inputs": [I32], "attrs": {"is_ascend": False}},
    {"name": "sort_float64", "op": "sort", "inputs": [F64], "attrs": {"axis": 0}},
    # argsort
    {"name": "argsort_default", "op": "argsort", "inputs": [F]},
    {"name": "argsort_descending", "op": "argsort", "inputs": [F], "attrs": {"is_ascend": False}},
    {"name": "argsort_axis1", "op": "argsort", "inputs": [F3], "attrs": {"axis": 1}},
    {"name": "argsort_flat_int64", "op": "argsort", "inputs": [F3],
     "attrs": {"axis": None, "dtype": "int64"}},
    {"name": "argsort_int32_index", "op": "argsort", "inputs": [F],
     "attrs": {"dtype": "int32", "is_ascend": False}},
    {"name": "argsort_int32_data", "op": "argsort", "inputs": [I32]},
    {"name": "argsort_float64_data", "op": "argsort", "inputs": [F64], "attrs": {"axis": 0}},
]
