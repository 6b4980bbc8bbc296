"""Case table for gluonport/ops/reduce.py (plain data; see tests/ops/_check.py)."""

NAN = float("nan")
F = {"shape": (2, 3, 4)}
F16 = {"shape": (2, 3, 4), "dtype": "float16"}
F64 = {"shape": (2, 3, 4), "dtype": "float64"}
I32 = {"shape": (2, 3, 4), "dtype": "int32", "low": -9, "high": 10}
I8_BIG = {"value": [[100, 100, 27], [-100, -90, 5]], "dtype": "int8"}
I32_ODD = {"value": [[-1, -2, 4], [3, 3, 1], [7, -8, 0]], "dtype": "int32"}
WITH_NAN = {"value": [[1.0, NAN, 2.0, 0.5], [NAN, NAN, 3.0, -1.0], [4.0, 5.0, -6.0, 2.0]]}
TIES = {"value": [[1.0, 5.0, 5.0, 2.0], [3.0, 0.0, 0.0, 3.0]]}
HALF = {"rtol": 2e-3, "atol": 2e-3}

CASES = [
    # sum: axis forms, keepdims, exclude, dtypes
    {"name": "sum_all", "op": "sum", "inputs": [F]},
    {"name": "sum_axis1", "op": "sum", "inputs": [F], "attrs": {"axis": 1}},
    {"name": "sum_axis_neg", "op": "sum", "inputs": [F], "attrs": {"axis": -1}},
    {"name": "sum_axes_tuple", "op": "sum", "inputs": [F], "attrs": {"axis": (0, 2)}},
    {"name": "sum_empty_tuple", "op": "sum", "inputs": [F], "attrs": {"axis": ()}},
    {"name": "sum_keepdims", "op": "sum", "inputs": [F],
     "attrs": {"axis": (0, 2), "keepdims": True}},
    {"name": "sum_all_keepdims", "op": "sum", "inputs": [F], "attrs": {"keepdims": True}},
    {"name": "sum_exclude", "op": "sum", "inputs": [F], "attrs": {"axis": 1, "exclude": True}},
    {"name": "sum_exclude_keepdims", "op": "sum", "inputs": [F],
     "attrs": {"axis": (0, 2), "exclude": True, "keepdims": True}},
    {"name": "sum_exclude_every_axis", "op": "sum", "inputs": [F],
     "attrs": {"axis": (0, 1, 2), "exclude": True}},
    {"name": "sum_exclude_empty", "op": "sum", "inputs": [F],
     "attrs": {"axis": (), "exclude": True}},
    {"name": "sum_int32", "op": "sum", "inputs": [I32], "attrs": {"axis": 2}},
    {"name": "sum_int8_wraps", "op": "sum", "inputs": [I8_BIG], "attrs": {"axis": 1}},
    {"name": "sum_float16", "op": "sum", "inputs": [F16], "attrs": {"axis": 1}, **HALF},
    {"name": "sum_float64", "op": "sum", "inputs": [F64], "attrs": {"axis": (1, 2)}},
    {"name": "sum_alias_sum_axis", "op": "sum_axis", "inputs": [F], "attrs": {"axis": 0}},
    {"name": "sum_1d", "op": "sum", "inputs": [{"shape": (7,)}], "attrs": {"axis": 0}},
    # mean
    {"name": "mean_axis1", "op": "mean", "inputs": [F], "attrs": {"axis": 1}},
    {"name": "mean_all", "op": "mean", "inputs": [F]},
    {"name": "mean_keepdims", "op": "mean", "inputs": [F], "attrs": {"axis": -2, "keepdims": True}},
    {"name": "mean_exclude", "op": "mean", "inputs": [F], "attrs": {"axis": 0, "exclude": True}},
    {"name": "mean_int32_truncates", "op": "mean", "inputs": [I32_ODD], "attrs": {"axis": 1}},
    {"name": "mean_int8_wraps", "op": "mean", "inputs": [I8_BIG], "attrs": {"axis": 1}},
    {"name": "mean_float16", "op": "mean", "inputs": [F16], "attrs": {"axis": 2}, **HALF},
    # prod, nansum, nanprod
    {"name": "prod_axis0", "op": "prod", "inputs": [F], "attrs": {"axis": 0}},
    {"name": "prod_float64", "op": "prod", "inputs": [F64], "attrs": {"axis": (0, 1)}},
    {"name": "prod_int8_wraps", "op": "prod", "inputs": [I8_BIG], "attrs": {"axis": 0}},
    {"name": "prod_exclude", "op": "prod", "inputs": [F], "attrs": {"axis": 2, "exclude": True}},
    {"name": "nansum_axis1", "op": "nansum", "inputs": [WITH_NAN], "attrs": {"axis": 1}},
    {"name": "nansum_all", "op": "nansum", "inputs": [WITH_NAN]},
    {"name": "nansum_int32", "op": "nansum", "inputs": [I32], "attrs": {"axis": 0}},
    {"name": "nanprod_axis0", "op": "nanprod", "inputs": [WITH_NAN], "attrs": {"axis": 0}},
    {"name": "nanprod_keepdims", "op": "nanprod", "inputs": [WITH_NAN],
     "attrs": {"axis": 1, "keepdims": True}},
    # max / min
    {"name": "max_axis1", "op": "max", "inputs": [F], "attrs": {"axis": 1}},
    {"name": "max_all", "op": "max", "inputs": [F]},
    {"name": "max_keepdims", "op": "max", "inputs": [F],
     "attrs": {"axis": (1, 2), "keepdims": True}},
    {"name": "max_nan_propagates", "op": "max", "inputs": [WITH_NAN], "attrs": {"axis": 1}},
    {"name": "max_int32", "op": "max", "inputs": [I32], "attrs": {"axis": -1}},
    {"name": "max_alias_max_axis", "op": "max_axis", "inputs": [F], "attrs": {"axis": 2}},
    {"name": "min_axis0", "op": "min", "inputs": [F], "attrs": {"axis": 0}},
    {"name": "min_exclude", "op": "min", "inputs": [F], "attrs": {"axis": 0, "exclude": True}},
    {"name": "min_nan_propagates", "op": "min", "inputs": [WITH_NAN], "attrs": {"axis": 0}},
    {"name": "min_float16", "op": "min", "inputs": [F16], "attrs": {"axis": 1}},
    {"name": "min_alias_min_axis", "op": "min_axis", "inputs": [I32], "attrs": {"axis": 1}},
    # norm
    {"name": "norm_default", "op": "norm", "inputs": [F]},
    {"name": "norm_axis1", "op": "norm", "inputs": [F], "attrs": {"axis": 1}},
    {"name": "norm_ord1", "op": "norm", "inputs": [F], "attrs": {"ord": 1, "axis": -1}},
    {"name": "norm_ord1_all", "op": "norm", "inputs": [F], "attrs": {"ord": 1}},
    {"name": "norm_frobenius", "op": "norm", "inputs": [F], "attrs": {"axis": (0, 1)}},
    {"name": "norm_keepdims", "op": "norm", "inputs": [F],
     "attrs": {"ord": 1, "axis": (0, 2), "keepdims": True}},
    {"name": "norm_float64", "op": "norm", "inputs": [F64], "attrs": {"axis": 2}},
    {"name": "norm_float16", "op": "norm", "inputs": [F16], "attrs": {"axis": 1}, **HALF},
    {"name": "norm_int32_scaled", "op": "norm", "inputs": [I32], "attrs": {"axis": 1}},
    {"name": "norm_int32_ties", "op": "norm", "inputs": [I32_ODD]},
    {"name": "norm_int8_ord1", "op": "norm", "inputs": [{"value": [[3, -4, 5], [1, 2, -2]],
                                                          "dtype": "int8"}],
     "attrs": {"ord": 1, "axis": 1}},
    # argmax / argmin / argmax_channel (output in the input dtype)
    {"name": "argmax_axis1", "op": "argmax", "inputs": [F], "attrs": {"axis": 1}},
    {"name": "argmax_axis_neg", "op": "argmax", "inputs": [F], "attrs": {"axis": -1}},
    {"name": "argmax_global", "op": "argmax", "inputs": [F]},
    {"name": "argmax_global_keepdims", "op": "argmax", "inputs": [F], "attrs": {"keepdims": True}},
    {"name": "argmax_keepdims", "op": "argmax", "inputs": [F],
     "attrs": {"axis": 0, "keepdims": True}},
    {"name": "argmax_int32", "op": "argmax", "inputs": [I32], "attrs": {"axis": 1}},
    {"name": "argmax_float64", "op": "argmax", "inputs": [F64], "attrs": {"axis": 2}},
    {"name": "argmax_float16", "op": "argmax", "inputs": [F16], "attrs": {"axis": 2}},
    {"name": "argmax_ties_first", "op": "argmax", "inputs": [TIES], "attrs": {"axis": 1}},
    {"name": "argmax_nan_wins", "op": "argmax", "inputs": [WITH_NAN], "attrs": {"axis": 1}},
    {"name": "argmax_1d_keepdims", "op": "argmax", "inputs": [{"shape": (6,)}],
     "attrs": {"axis": 0, "keepdims": True}},
    {"name": "argmin_axis0", "op": "argmin", "inputs": [F], "attrs": {"axis": 0}},
    {"name": "argmin_ties_first", "op": "argmin", "inputs": [TIES], "attrs": {"axis": 1}},
    {"name": "argmin_global", "op": "argmin", "inputs": [I32]},
    {"name": "argmax_channel", "op": "argmax_channel", "inputs": [F]},
    {"name": "argmax_channel_2d", "op": "argmax_channel", "inputs": [TIES]},
    {"name": "argmax_channel_int32", "op": "argmax_channel", "inputs": [I32_ODD]},
]
