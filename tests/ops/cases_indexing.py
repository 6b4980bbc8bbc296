"""Case table for ops/tensor/indexing.py (plain data; see tests/ops/_check.py)."""

M = {"shape": (3, 4)}
A = {"shape": (2, 3, 4)}
M16 = {"shape": (3, 4), "dtype": "float16"}
MI = {"shape": (3, 4), "dtype": "int32", "low": -9, "high": 10}
# float indices: negatives, fractions and out-of-range values exercise truncation + mode
FIDX = {"value": [-0.5, 0.7, 1.5, 2.9, -1.2, 3.5, -3.7, -4.0, 5.0]}
DATA_DEPENDENT = "output shape depends on the values; see test_boolean_mask_shape_inference"

CASES = [
    {"name": "take_clip_float_idx", "op": "take", "inputs": [M, FIDX]},
    {"name": "take_wrap", "op": "take", "inputs": [M, FIDX], "attrs": {"mode": "wrap"}},
    {
        "name": "take_raise_valid",
        "op": "take",
        "inputs": [M, {"value": [2, 0, 1, 1]}],
        "attrs": {"mode": "raise"},
    },
    {
        "name": "take_axis1_2d_idx",
        "op": "take",
        "inputs": [A, {"value": [[0, 2], [1, -1]]}],
        "attrs": {"axis": 1},
    },
    {
        "name": "take_axis_last_wrap",
        "op": "take",
        "inputs": [A, {"value": [[0, 5], [-1, 7]]}],
        "attrs": {"axis": -1, "mode": "wrap"},
    },
    {
        "name": "take_int32_idx_f16",
        "op": "take",
        "inputs": [M16, {"value": [2, 0, 9], "dtype": "int32"}],
    },
    {
        "name": "take_int_data",
        "op": "take",
        "inputs": [MI, {"value": [1, 1], "dtype": "int64"}],
        "attrs": {"axis": 0},
    },
    {"name": "pick_default", "op": "pick", "inputs": [M, {"value": [0, 5, -1]}]},
    {
        "name": "pick_wrap",
        "op": "pick",
        "inputs": [M, {"value": [0, 5, -1]}],
        "attrs": {"mode": "wrap"},
    },
    {"name": "pick_float_idx", "op": "pick", "inputs": [M, {"value": [0.7, 1.5, -0.5]}]},
    {
        "name": "pick_axis0_keepdims",
        "op": "pick",
        "inputs": [M, {"value": [0, 1, 2, 1]}],
        "attrs": {"axis": 0, "keepdims": True},
    },
    {
        "name": "pick_3d_axis1",
        "op": "pick",
        "inputs": [A, {"value": [[0, 1, 2, 0], [2, 2, 1, 0]]}],
        "attrs": {"axis": 1},
    },
    {
        "name": "pick_keepdims_index",
        "op": "pick",
        "inputs": [MI, {"value": [[3], [0], [2]], "dtype": "int32"}],
        "attrs": {"axis": -1, "keepdims": True},
    },
    {"name": "pick_alias", "op": "choose_element_0index", "inputs": [M, {"value": [1, 2, 3]}]},
    {
        "name": "embedding",
        "op": "Embedding",
        "inputs": [{"value": [0, 5, -1, 1.7]}, M],
        "attrs": {"input_dim": 3, "output_dim": 4},
    },
    {
        "name": "embedding_2d_int",
        "op": "Embedding",
        "inputs": [{"value": [[0, 2], [1, 1]], "dtype": "int32"}, {"shape": (3, 5)}],
        "attrs": {"input_dim": 3, "output_dim": 5},
    },
    {
        "name": "embedding_float16",
        "op": "Embedding",
        "inputs": [{"value": [2, 0]}, M16],
        "attrs": {"input_dim": 3, "output_dim": 4, "dtype": "float16"},
    },
    {
        "name": "one_hot",
        "op": "one_hot",
        "inputs": [{"value": [0, 2, -1, 3, 1.7]}],
        "attrs": {"depth": 3},
    },
    {
        "name": "one_hot_int32_values",
        "op": "one_hot",
        "inputs": [{"value": [[0, 2], [1, 1]], "dtype": "int32"}],
        "attrs": {"depth": 4, "on_value": 5, "off_value": -1, "dtype": "int32"},
    },
    {
        "name": "one_hot_float64",
        "op": "one_hot",
        "inputs": [{"value": [1, 0]}],
        "attrs": {"depth": 2, "on_value": 0.5, "off_value": 0.25, "dtype": "float64"},
    },
    {
        "name": "where_same_shape",
        "op": "where",
        "inputs": [{"value": [[1, 0, 2, 0], [0, 0, 1, 1], [-1, 0, 0, 3]]}, M, M],
    },
    {"name": "where_1d_condition", "op": "where", "inputs": [{"value": [1, 0, 2]}, M, M]},
    {"name": "where_1d_condition_3d", "op": "where", "inputs": [{"value": [0, 1]}, A, A]},
    {
        "name": "where_int_condition_int_data",
        "op": "where",
        "inputs": [{"shape": (3, 4), "dtype": "int32", "low": 0, "high": 2}, MI, MI],
    },
    {"name": "gather_nd", "op": "gather_nd", "inputs": [M, {"value": [[0, -1, 2], [1, -1, 3]]}]},
    {"name": "gather_nd_rows", "op": "gather_nd", "inputs": [A, {"value": [[[1, 0], [0, 1]]]}]},
    {
        "name": "gather_nd_float_idx_int",
        "op": "gather_nd",
        "inputs": [MI, {"value": [[0.5, -2.5], [1.2, 2.9]]}],
    },
    {
        "name": "scatter_nd",
        "op": "scatter_nd",
        "inputs": [{"shape": (3,)}, {"value": [[0, 1, 2], [3, 0, 1]]}],
        "attrs": {"shape": (3, 4)},
    },
    {
        "name": "scatter_nd_rows_int",
        "op": "scatter_nd",
        "inputs": [
            {"shape": (2, 4), "dtype": "int32", "low": 1, "high": 9},
            {"value": [[2, 0]], "dtype": "int32"},
        ],
        "attrs": {"shape": (3, 4)},
    },
    {
        "name": "batch_take",
        "op": "batch_take",
        "inputs": [M, {"value": [3, 7, -1], "dtype": "int32"}],
    },
    {
        "name": "boolean_mask",
        "op": "_contrib_boolean_mask",
        "inputs": [M, {"value": [1, 0, 2]}],
        "skip_sym": DATA_DEPENDENT,
    },
    {
        "name": "boolean_mask_int",
        "op": "_contrib_boolean_mask",
        "inputs": [MI, {"value": [0, 1, 0], "dtype": "int32"}],
        "skip_sym": DATA_DEPENDENT,
    },
    {
        "name": "index_copy",
        "op": "_contrib_index_copy",
        "inputs": [{"shape": (4, 2)}, {"value": [2.7, 0]}, {"shape": (2, 2)}],
    },
    {
        "name": "index_copy_int64",
        "op": "_contrib_index_copy",
        "inputs": [{"shape": (5,)}, {"value": [4, 1], "dtype": "int64"}, {"shape": (2,)}],
    },
    {"name": "index_array", "op": "_contrib_index_array", "inputs": [{"shape": (2, 3)}]},
    {
        "name": "index_array_axes",
        "op": "_contrib_index_array",
        "inputs": [A],
        "attrs": {"axes": (-1, 0)},
    },
    # legacy NDArray functions (float32 only): truncated indices, out-of-range rows untouched
    {"name": "onehot_encode", "op": "_onehot_encode",
     "inputs": [{"value": [5.0, -1.0, 2.0, -0.99, 4.999, 0.0]}, {"shape": (6, 5)}]},
    {"name": "fill_element_0index", "op": "fill_element_0index",
     "inputs": [{"shape": (4, 3)}, {"value": [10.0, 20.0, 30.0, 40.0]},
                {"value": [2.0, -1.0, 0.7, 3.0]}]},
    # ravel_multi_index / unravel_index: no bounds checks; float coordinates truncate as
    # MXNet's index_t(ret * size + x) does
    {"name": "ravel_multi_index", "op": "ravel_multi_index",
     "inputs": [{"value": [[3, 6, 6, 0, 9, -1, 3.7, 2.2], [4, 5, 1, 0, 5, 1, 4.9, 5.5]]}],
     "attrs": {"shape": (7, 6)}},
    {"name": "ravel_multi_index_3d_int32", "op": "_ravel_multi_index",
     "inputs": [{"value": [[1, 0, 2], [2, 3, 0], [0, 4, 1]], "dtype": "int32"}],
     "attrs": {"shape": (3, 4, 5)}},
    {"name": "ravel_multi_index_float64", "op": "ravel_multi_index",
     "inputs": [{"value": [[1, 2.5], [3, 0.5]], "dtype": "float64"}], "attrs": {"shape": (4, 6)}},
    {"name": "unravel_index", "op": "unravel_index",
     "inputs": [{"value": [22, 41, 37, 50, -1, 3.7, -13.0, 0]}], "attrs": {"shape": (7, 6)}},
    {"name": "unravel_index_3d_int32", "op": "_unravel_index",
     "inputs": [{"value": [0, 7, 59, 33, 100], "dtype": "int32"}], "attrs": {"shape": (3, 4, 5)}},
]

# Gradient-check notes. Finite differences perturb every float input, float indices too: the
# output jumps where an index crosses an integer (and MXNet gives indices no gradient), so
# these rows are checked against MXNet's gradients only.
_FLOAT_INDEX = ("float indices: differences jump where an index crosses an integer (indices "
                "take no gradient; the golden way checks the data's)")
_GRAD_KEYS = {
    **dict.fromkeys(("take_wrap", "take_raise_valid", "take_axis1_2d_idx", "take_axis_last_wrap",
                     "pick_wrap", "pick_axis0_keepdims", "pick_3d_axis1", "pick_alias",
                     "gather_nd", "gather_nd_rows", "scatter_nd", "boolean_mask"),
                    {"no_fd": _FLOAT_INDEX}),
}
# MXNet's gather_nd backward does not wrap a negative index: it adds that gradient out of
# bounds (lost); gluonport adds it where the forward read it.
_GRAD_KEYS["gather_nd"] = {
    "no_fd": _FLOAT_INDEX,
    "no_grad_golden": "MXNet's gather_nd backward writes the gradient of a negative index out "
                      "of bounds (the forward wraps it)"}
for _row in CASES:
    _row.update(_GRAD_KEYS.get(_row["name"], {}))
