"""Case table for gluonport/ops/shape/ (plain data; see tests/ops/_check.py)."""

A = {"shape": (2, 3, 4)}
A16 = {"shape": (2, 3, 4), "dtype": "float16"}
I32 = {"shape": (2, 3, 4), "dtype": "int32", "low": -9, "high": 10}
M = {"shape": (3, 4)}
ROW = {"shape": (1, 3, 1)}
IMG = {"shape": (2, 8, 2, 3)}
ZERO_SIZE = "zero-size output: MXNet 1.x legacy shapes read a 0 dim as unknown"

CASES = [
    # Reshape: plain, each special code, reverse, legacy target_shape
    {"name": "reshape_plain", "op": "Reshape", "inputs": [A], "attrs": {"shape": (4, 6)}},
    {"name": "reshape_code0", "op": "Reshape", "inputs": [A], "attrs": {"shape": (0, -1)}},
    {"name": "reshape_minus1_first", "op": "Reshape", "inputs": [A], "attrs": {"shape": (-1, 4)}},
    {"name": "reshape_code0_pos", "op": "Reshape", "inputs": [A], "attrs": {"shape": (0, 0, 2, 2)}},
    {"name": "reshape_m2_tail", "op": "Reshape", "inputs": [A], "attrs": {"shape": (-2, 1, 1)}},
    {"name": "reshape_m2_after", "op": "Reshape", "inputs": [A], "attrs": {"shape": (2, -2)}},
    {
        "name": "reshape_m2_then_m1",
        "op": "Reshape",
        "inputs": [M],
        "attrs": {"shape": (1, -2, 1, -1)},
    },
    {"name": "reshape_m3", "op": "Reshape", "inputs": [A], "attrs": {"shape": (-3, 4)}},
    {"name": "reshape_0_m3", "op": "Reshape", "inputs": [A], "attrs": {"shape": (0, -3)}},
    {
        "name": "reshape_m4_left",
        "op": "Reshape",
        "inputs": [{"shape": (6, 4)}],
        "attrs": {"shape": (-4, 2, -1, 0)},
    },
    {
        "name": "reshape_m4_right",
        "op": "Reshape",
        "inputs": [{"shape": (6, 4)}],
        "attrs": {"shape": (-4, -1, 3, -2)},
    },
    {"name": "reshape_m4_m3", "op": "Reshape", "inputs": [A], "attrs": {"shape": (-4, 1, 2, -3)}},
    {
        "name": "reshape_reverse",
        "op": "Reshape",
        "inputs": [{"shape": (10, 5, 4)}],
        "attrs": {"shape": (-1, 0), "reverse": True},
    },
    {
        "name": "reshape_reverse_m3",
        "op": "Reshape",
        "inputs": [A],
        "attrs": {"shape": (-3, 0), "reverse": True},
    },
    {"name": "reshape_alias_int32", "op": "reshape", "inputs": [I32], "attrs": {"shape": (3, -1)}},
    {"name": "reshape_float16", "op": "reshape", "inputs": [A16], "attrs": {"shape": (-1,)}},
    {
        "name": "reshape_target_shape",
        "op": "Reshape",
        "inputs": [{"shape": (2, 6, 4)}],
        "attrs": {"target_shape": (0, 4)},
    },
    {
        "name": "reshape_keep_highest",
        "op": "Reshape",
        "inputs": [{"shape": (2, 6, 4)}],
        "attrs": {"target_shape": (5, 0), "keep_highest": True},
    },
    {"name": "reshape_like", "op": "reshape_like", "inputs": [A, {"shape": (4, 6)}]},
    {
        "name": "reshape_like_range",
        "op": "reshape_like",
        "inputs": [A, {"shape": (7, 12, 9)}],
        "attrs": {"lhs_begin": 1, "lhs_end": None, "rhs_begin": 1, "rhs_end": 2},
    },
    {
        "name": "reshape_like_negative",
        "op": "reshape_like",
        "inputs": [A, {"shape": (7, 12)}],
        "attrs": {"lhs_begin": -2, "rhs_begin": -1},
    },
    {"name": "flatten_3d", "op": "Flatten", "inputs": [A]},
    {"name": "flatten_1d", "op": "Flatten", "inputs": [{"shape": (5,)}]},
    {"name": "flatten_alias_int32", "op": "flatten", "inputs": [I32]},
    # permutations
    {"name": "transpose_default", "op": "transpose", "inputs": [A]},
    {"name": "transpose_axes", "op": "transpose", "inputs": [A], "attrs": {"axes": (1, 0, 2)}},
    {"name": "transpose_4d", "op": "transpose", "inputs": [IMG], "attrs": {"axes": (0, 2, 3, 1)}},
    {"name": "swapaxis", "op": "SwapAxis", "inputs": [A], "attrs": {"dim1": 0, "dim2": 2}},
    {
        "name": "swapaxes_negative",
        "op": "swapaxes",
        "inputs": [I32],
        "attrs": {"dim1": -1, "dim2": 1},
    },
    {"name": "swapaxis_default", "op": "SwapAxis", "inputs": [M]},
    {"name": "expand_dims_0", "op": "expand_dims", "inputs": [A], "attrs": {"axis": 0}},
    {"name": "expand_dims_last", "op": "expand_dims", "inputs": [A], "attrs": {"axis": -1}},
    {"name": "expand_dims_neg_first", "op": "expand_dims", "inputs": [A16], "attrs": {"axis": -4}},
    {"name": "squeeze_all", "op": "squeeze", "inputs": [{"shape": (1, 3, 1, 2)}]},
    {
        "name": "squeeze_axis",
        "op": "squeeze",
        "inputs": [{"shape": (1, 3, 1, 2)}],
        "attrs": {"axis": (-2,)},
    },
    {
        "name": "squeeze_two_axes",
        "op": "squeeze",
        "inputs": [{"shape": (1, 3, 1, 2)}],
        "attrs": {"axis": (0, 2)},
    },
    {"name": "squeeze_all_ones", "op": "squeeze", "inputs": [{"shape": (1, 1)}]},
    {"name": "reverse_axis0", "op": "reverse", "inputs": [A], "attrs": {"axis": 0}},
    {"name": "flip_two_axes", "op": "flip", "inputs": [I32], "attrs": {"axis": (0, 2)}},
    {"name": "flip_repeated_axis", "op": "flip", "inputs": [A], "attrs": {"axis": (1, 1)}},
    # joining and splitting
    {
        "name": "concat_three_sizes",
        "op": "Concat",
        "inputs": [{"shape": (2, 1, 3)}, {"shape": (2, 2, 3)}, {"shape": (2, 4, 3)}],
    },
    {
        "name": "concat_last_dim",
        "op": "concat",
        "inputs": [A, {"shape": (2, 3, 2)}],
        "attrs": {"dim": -1},
    },
    {
        "name": "concat_dim0_int32",
        "op": "concat",
        "inputs": [I32, {"shape": (1, 3, 4), "dtype": "int32", "low": 0, "high": 5}],
        "attrs": {"dim": 0},
    },
    {"name": "stack_axis0", "op": "stack", "inputs": [M, M]},
    {"name": "stack_axis_last", "op": "stack", "inputs": [M, M, M], "attrs": {"axis": -1}},
    {"name": "stack_axis1_f16", "op": "stack", "inputs": [A16, A16], "attrs": {"axis": 1}},
    {
        "name": "slice_channel",
        "op": "SliceChannel",
        "inputs": [{"shape": (2, 6, 2)}],
        "attrs": {"num_outputs": 3},
    },
    {
        "name": "split_squeeze",
        "op": "split",
        "inputs": [A],
        "attrs": {"num_outputs": 3, "axis": 1, "squeeze_axis": True},
    },
    {
        "name": "split_negative_axis",
        "op": "split",
        "inputs": [I32],
        "attrs": {"num_outputs": 2, "axis": -1},
    },
    {
        "name": "split_one_output",
        "op": "split",
        "inputs": [A],
        "attrs": {"num_outputs": 1, "axis": 0},
    },
    {
        "name": "split_v2_indices",
        "op": "_split_v2",
        "inputs": [A],
        "attrs": {"indices": (0, 1, 3), "axis": -1},
    },
    {
        "name": "split_v2_sections",
        "op": "_split_v2",
        "inputs": [{"shape": (5, 2)}],
        "attrs": {"indices": (), "sections": 3, "axis": 0},
    },
    {
        "name": "split_v2_squeeze",
        "op": "_split_v2",
        "inputs": [A],
        "attrs": {"indices": (0, 1), "axis": 0, "squeeze_axis": True},
    },
    {
        "name": "split_v2_single",
        "op": "_split_v2",
        "inputs": [A],
        "attrs": {"indices": (0,), "axis": 1},
    },
    # slicing
    {
        "name": "slice_basic",
        "op": "slice",
        "inputs": [A],
        "attrs": {"begin": (0, 1), "end": (2, 3)},
    },
    {
        "name": "slice_none_entries",
        "op": "slice",
        "inputs": [A],
        "attrs": {"begin": (None, -2, 1), "end": (None, None, None)},
    },
    {
        "name": "slice_negative_step",
        "op": "slice",
        "inputs": [A],
        "attrs": {"begin": (None, -1), "end": (None, None), "step": (None, -1)},
    },
    {
        "name": "slice_negative_step2",
        "op": "slice",
        "inputs": [A],
        "attrs": {"begin": (1, 2, 3), "end": (None, 0, -5), "step": (-1, -2, -2)},
    },
    {
        "name": "slice_step2_int32",
        "op": "slice",
        "inputs": [I32],
        "attrs": {"begin": (0, 0, 1), "end": (2, 3, 4), "step": (1, 2, 2)},
    },
    {
        "name": "slice_out_of_range",
        "op": "slice",
        "inputs": [A],
        "attrs": {"begin": (-5, 1), "end": (9, 8)},
    },
    {
        "name": "slice_empty",
        "op": "slice",
        "inputs": [A],
        "attrs": {"begin": (0, 5), "end": (1, 7)},
        "skip_sym": ZERO_SIZE,
    },
    # MXNet's exporter test (test_onnx_export_slice): three begin/end/step sets x five dtypes
    # on arange(60).reshape(3, 4, 5); step=None means every step is 1
    *[{"name": f"slice_mxnet_export{k}_{dt}", "op": "slice",
       "inputs": [{"value": [[[i * 20 + j * 5 + m for m in range(5)] for j in range(4)]
                             for i in range(3)], "dtype": dt}],
       "attrs": {"begin": b, "end": e, "step": st}}
      for k, (b, e, st) in enumerate([((0, 1), (2, 3), (1, 1)), ((None, 1), (2, None), None),
                                      ((0, 0, 0), (None, 4, 5), (None, 1, 2))])
      for dt in ("float32", "float64", "float16", "int32", "int64")],
    {"name": "crop_alias", "op": "crop", "inputs": [A], "attrs": {"begin": (0, 1), "end": (2, 3)}},
    {
        "name": "slice_axis",
        "op": "slice_axis",
        "inputs": [A],
        "attrs": {"axis": 1, "begin": 0, "end": 2},
    },
    {
        "name": "slice_axis_end_none",
        "op": "slice_axis",
        "inputs": [A],
        "attrs": {"axis": -1, "begin": -3, "end": None},
    },
    {
        "name": "slice_axis_negative_end",
        "op": "slice_axis",
        "inputs": [I32],
        "attrs": {"axis": 0, "begin": 0, "end": -1},
    },
    {"name": "slice_like_all", "op": "slice_like", "inputs": [A, {"shape": (1, 2, 3)}]},
    {
        "name": "slice_like_axes",
        "op": "slice_like",
        "inputs": [A, {"shape": (1, 2, 3)}],
        "attrs": {"axes": (0, 2)},
    },
    {
        "name": "slice_like_negative_axis",
        "op": "slice_like",
        "inputs": [A, {"shape": (2, 2, 2), "dtype": "int32", "low": 0, "high": 3}],
        "attrs": {"axes": (-1,)},
    },
    # repetition and broadcasting
    {"name": "tile_last", "op": "tile", "inputs": [A], "attrs": {"reps": (2,)}},
    {
        "name": "tile_more_reps",
        "op": "tile",
        "inputs": [{"shape": (2,)}],
        "attrs": {"reps": (2, 1, 3)},
    },
    {"name": "tile_int32", "op": "tile", "inputs": [I32], "attrs": {"reps": (1, 2, 1)}},
    {"name": "repeat_flat", "op": "repeat", "inputs": [M], "attrs": {"repeats": 2}},
    {"name": "repeat_axis", "op": "repeat", "inputs": [A], "attrs": {"repeats": 3, "axis": -1}},
    {"name": "repeat_int32", "op": "repeat", "inputs": [I32], "attrs": {"repeats": 2, "axis": 0}},
    {"name": "broadcast_to", "op": "broadcast_to", "inputs": [ROW], "attrs": {"shape": (2, 0, 4)}},
    {
        "name": "broadcast_to_int32",
        "op": "broadcast_to",
        "inputs": [{"shape": (3, 1), "dtype": "int32", "low": 0, "high": 9}],
        "attrs": {"shape": (3, 5)},
    },
    {"name": "broadcast_like", "op": "broadcast_like", "inputs": [ROW, A]},
    {
        "name": "broadcast_like_axes",
        "op": "broadcast_like",
        "inputs": [ROW, {"shape": (5, 6)}],
        "attrs": {"lhs_axes": (0, -1), "rhs_axes": (-1, 0)},
    },
    {
        "name": "broadcast_axis",
        "op": "broadcast_axis",
        "inputs": [ROW],
        "attrs": {"axis": (0, 2), "size": (2, 4)},
    },
    {
        "name": "broadcast_axes_alias",
        "op": "broadcast_axes",
        "inputs": [ROW],
        "attrs": {"axis": 0, "size": 4},
    },
    # layout
    {"name": "depth_to_space", "op": "depth_to_space", "inputs": [IMG], "attrs": {"block_size": 2}},
    {
        "name": "depth_to_space_int32",
        "op": "depth_to_space",
        "inputs": [{"shape": (1, 9, 2, 2), "dtype": "int32", "low": 0, "high": 50}],
        "attrs": {"block_size": 3},
    },
    {
        "name": "space_to_depth",
        "op": "space_to_depth",
        "inputs": [{"shape": (2, 2, 4, 6)}],
        "attrs": {"block_size": 2},
    },
    # shape queries and generators
    {"name": "shape_array", "op": "shape_array", "inputs": [A]},
    {"name": "size_array", "op": "size_array", "inputs": [I32]},
    {"name": "arange_like", "op": "_contrib_arange_like", "inputs": [M]},
    {
        "name": "arange_like_axis",
        "op": "_contrib_arange_like",
        "inputs": [A],
        "attrs": {"start": 1.5, "step": 0.5, "repeat": 2, "axis": -1},
    },
    {
        "name": "arange_like_repeat",
        "op": "_contrib_arange_like",
        "inputs": [{"shape": (3, 4), "dtype": "float64"}],
        "attrs": {"start": -2.0, "step": 0.25, "repeat": 5},
    },
    {
        "name": "arange_like_int32",
        "op": "_contrib_arange_like",
        "inputs": [I32],
        "attrs": {"start": -2.5, "step": 1.5},
    },
    {
        "name": "arange_like_float16",
        "op": "_contrib_arange_like",
        "inputs": [A16],
        "attrs": {"start": 2.5, "step": 1.5, "repeat": 2},
    },
    {"name": "diag_vector", "op": "diag", "inputs": [{"shape": (3,)}], "attrs": {"k": -1}},
    {"name": "diag_matrix", "op": "diag", "inputs": [M], "attrs": {"k": 1}},
    {
        "name": "diag_matrix_default",
        "op": "diag",
        "inputs": [{"shape": (4, 3), "dtype": "int32", "low": 0, "high": 9}],
    },
    {
        "name": "diag_3d_axes",
        "op": "diag",
        "inputs": [A],
        "attrs": {"k": 1, "axis1": -1, "axis2": 0},
    },
    {
        "name": "diag_3d_negative_k",
        "op": "diag",
        "inputs": [A],
        "attrs": {"k": -1, "axis1": 1, "axis2": 2},
    },
]
