"""Case table for ops/math/elemwise.py: binary, broadcast and scalar ops (plain data; see
tests/ops/_check.py). Unary ops are in cases_unary.py."""

NAN, INF = float("nan"), float("inf")

F = {"shape": (2, 3)}
F16 = {"shape": (2, 3), "dtype": "float16"}
F64 = {"shape": (2, 3), "dtype": "float64"}
POS = {"shape": (2, 3), "low": 0.1, "high": 2.0}
ROW = {"shape": (1, 3)}
COL = {"shape": (2, 1)}
I32 = {"shape": (2, 3), "dtype": "int32", "low": -5, "high": 6}
I32NZ = {"value": [[2, -2, 3], [-3, 4, 1]], "dtype": "int32"}
INUM = {"value": [[-7, -3, 3], [7, 5, 0]], "dtype": "int32"}
IDEN = {"value": [[2, 2, -2], [-2, 4, 3]], "dtype": "int32"}
IZERO = {"value": [[2, 0, -2], [0, 4, 3]], "dtype": "int32"}
U8 = {"value": [[1, 0, 200], [255, 7, 3]], "dtype": "uint8"}
U8B = {"value": [[2, 1, 100], [1, 9, 3]], "dtype": "uint8"}
I8 = {"value": [[100, -100, 127], [-128, 5, 64]], "dtype": "int8"}
FNUM = {"value": [[-5.5, 5.5, -5.5], [5.5, 1.0, -0.0]]}
FDEN = {"value": [[2.0, -2.0, -2.0], [2.0, 0.0, 3.0]]}
MOD_JUMPS = ("the fixed values sit where mod jumps (a zero divisor, -0.0, exact multiples): "
             "differences see the jump, MXNet's gradient does not (the golden way checks it)")
FNAN = {"value": [[NAN, 1.0, -2.0], [INF, NAN, 0.0]]}
FNAN2 = {"value": [[0.5, NAN, -3.0], [1.0, 2.0, NAN]]}
I3D = {"shape": (2, 1, 4), "dtype": "int32", "low": -3, "high": 4}
BASE = {"value": [[3, 19, -3], [2, 7, 5]], "dtype": "int32"}
EXP = {"value": [[19, 1, 19], [30, -2, 0]], "dtype": "int32"}
E64 = {"value": [[3, 19, -3], [2, 7, 5]], "dtype": "int64"}
X64 = {"value": [[39, 1, 39], [62, 20, 3]], "dtype": "int64"}

_ARITH_CASES = [
    {"name": "elemwise_add", "op": "elemwise_add", "inputs": [F, F]},
    {"name": "elemwise_sub", "op": "elemwise_sub", "inputs": [F, F]},
    {"name": "elemwise_mul", "op": "elemwise_mul", "inputs": [F, F]},
    {"name": "elemwise_div", "op": "elemwise_div", "inputs": [F, POS]},
    {"name": "elemwise_add_int32", "op": "elemwise_add", "inputs": [I32, I32]},
    {"name": "elemwise_add_f16", "op": "elemwise_add", "inputs": [F16, F16], "rtol": 1e-3},
    {"name": "elemwise_mul_f64", "op": "elemwise_mul", "inputs": [F64, F64]},
    {"name": "elemwise_sub_uint8_wraps", "op": "elemwise_sub", "inputs": [U8, U8B]},
    {"name": "elemwise_mul_int8_wraps", "op": "elemwise_mul", "inputs": [I8, I8]},
    {"name": "elemwise_div_int_truncates", "op": "elemwise_div", "inputs": [INUM, IDEN]},
    {
        "name": "elemwise_div_f16",
        "op": "elemwise_div",
        "inputs": [F16, {**POS, "dtype": "float16"}],
        "rtol": 1e-3,
    },
    {"name": "elemwise_div_float_by_zero", "op": "elemwise_div", "inputs": [FNUM, FDEN]},
    {"name": "plus_alias", "op": "_Plus", "inputs": [F, F]},
    {"name": "minus_alias", "op": "_Minus", "inputs": [F, F]},
    {"name": "mul_alias", "op": "_Mul", "inputs": [F, F]},
    {"name": "div_alias", "op": "_Div", "inputs": [F, POS]},
    {"name": "plus_lower_alias", "op": "_plus", "inputs": [F, F]},
    {"name": "broadcast_add_row", "op": "broadcast_add", "inputs": [F, ROW]},
    {"name": "broadcast_plus_alias", "op": "broadcast_plus", "inputs": [F, COL]},
    {"name": "broadcast_sub_row", "op": "broadcast_sub", "inputs": [ROW, F]},
    {"name": "broadcast_minus_alias", "op": "broadcast_minus", "inputs": [COL, ROW]},
    {"name": "broadcast_mul_col", "op": "broadcast_mul", "inputs": [F, COL]},
    {
        "name": "broadcast_mul_3d",
        "op": "broadcast_mul",
        "inputs": [I3D, {"shape": (3, 1), "dtype": "int32", "low": -3, "high": 4}],
    },
    {
        "name": "broadcast_div_row",
        "op": "broadcast_div",
        "inputs": [F, {"shape": (1, 3), "low": 0.5, "high": 2}],
    },
    {"name": "broadcast_div_int", "op": "broadcast_div", "inputs": [INUM, I32NZ]},
    {"name": "broadcast_div_uint8", "op": "broadcast_div", "inputs": [U8, U8B]},
]

_MOD_POWER_CASES = [
    {
        "name": "broadcast_mod",
        "op": "broadcast_mod",
        "inputs": [
            {"shape": (2, 3), "low": -4, "high": 4},
            {"shape": (1, 3), "low": 0.5, "high": 2},
        ],
    },
    {"name": "broadcast_mod_neg_float", "op": "broadcast_mod", "inputs": [FNUM, FDEN],
     "no_fd": MOD_JUMPS},
    {"name": "broadcast_mod_int_signs", "op": "broadcast_mod", "inputs": [INUM, IZERO]},
    {"name": "broadcast_mod_uint8", "op": "broadcast_mod", "inputs": [U8, U8B]},
    {
        "name": "broadcast_mod_f16",
        "op": "broadcast_mod",
        "inputs": [{**FNUM, "dtype": "float16"}, {**FDEN, "dtype": "float16"}],
        "no_fd": MOD_JUMPS,
    },
    {"name": "mod_same_shape", "op": "_mod", "inputs": [INUM, IDEN]},
    {"name": "mod_alias", "op": "_Mod", "inputs": [FNUM, FDEN], "no_fd": MOD_JUMPS},
    {"name": "broadcast_power", "op": "broadcast_power", "inputs": [POS, ROW]},
    {"name": "broadcast_power_int_powf", "op": "broadcast_power", "inputs": [BASE, EXP]},
    {"name": "broadcast_power_int64_powf", "op": "broadcast_power", "inputs": [E64, X64]},
    {
        "name": "broadcast_power_f64",
        "op": "broadcast_power",
        "inputs": [{**POS, "dtype": "float64"}, F64],
    },
    {"name": "power", "op": "_power", "inputs": [POS, F]},
    {"name": "power_alias", "op": "_Power", "inputs": [POS, F]},
    {"name": "broadcast_hypot", "op": "broadcast_hypot", "inputs": [F, ROW]},
    {"name": "broadcast_hypot_int", "op": "broadcast_hypot", "inputs": [I32, IDEN]},
    {"name": "hypot", "op": "_hypot", "inputs": [F, F]},
]

_MINMAX_CMP_CASES = [
    {"name": "broadcast_maximum", "op": "broadcast_maximum", "inputs": [F, ROW]},
    {"name": "broadcast_minimum", "op": "broadcast_minimum", "inputs": [F, ROW]},
    {"name": "broadcast_maximum_nan", "op": "broadcast_maximum", "inputs": [FNAN, FNAN2]},
    {"name": "broadcast_minimum_nan", "op": "broadcast_minimum", "inputs": [FNAN, FNAN2]},
    {"name": "maximum", "op": "_maximum", "inputs": [F, F]},
    {"name": "minimum_int", "op": "_minimum", "inputs": [I32, I32]},
    {"name": "maximum_alias", "op": "_Maximum", "inputs": [F, F]},
    {
        "name": "broadcast_equal",
        "op": "broadcast_equal",
        "inputs": [{"value": [[1, 2, 3], [3, 2, 1]]}, {"value": [[1, 0, 3]]}],
    },
    {"name": "broadcast_not_equal_nan", "op": "broadcast_not_equal", "inputs": [FNAN, FNAN2]},
    {"name": "broadcast_greater", "op": "broadcast_greater", "inputs": [F, ROW]},
    {
        "name": "broadcast_greater_int32",
        "op": "broadcast_greater",
        "inputs": [I32, {"shape": (1, 3), "dtype": "int32", "low": -3, "high": 3}],
    },
    {
        "name": "broadcast_greater_equal_f16",
        "op": "broadcast_greater_equal",
        "inputs": [F16, {"shape": (1, 3), "dtype": "float16"}],
    },
    {"name": "broadcast_lesser", "op": "broadcast_lesser", "inputs": [F, COL]},
    {"name": "broadcast_lesser_equal", "op": "broadcast_lesser_equal", "inputs": [F, ROW]},
    {
        "name": "broadcast_logical_and",
        "op": "broadcast_logical_and",
        "inputs": [{"value": [[0, 1, 2]]}, {"value": [[1], [0]]}],
    },
    {
        "name": "broadcast_logical_or",
        "op": "broadcast_logical_or",
        "inputs": [{"value": [[0, 1, 0]]}, {"value": [[1], [0]]}],
    },
    {
        "name": "broadcast_logical_xor",
        "op": "broadcast_logical_xor",
        "inputs": [{"value": [[0, 1, 2]]}, {"value": [[1], [0]]}],
    },
    {"name": "broadcast_logical_and_nan", "op": "broadcast_logical_and", "inputs": [FNAN, FNAN2]},
    {"name": "equal", "op": "_equal", "inputs": [I32, IDEN]},
    {"name": "not_equal", "op": "_not_equal", "inputs": [I32, IDEN]},
    {"name": "greater", "op": "_greater", "inputs": [F, F]},
    {"name": "greater_equal", "op": "_greater_equal", "inputs": [I32, IDEN]},
    {"name": "lesser", "op": "_lesser", "inputs": [F16, F16]},
    {"name": "lesser_equal", "op": "_lesser_equal", "inputs": [F64, F64]},
    {"name": "logical_and", "op": "_logical_and", "inputs": [IZERO, INUM]},
    {"name": "logical_or", "op": "_logical_or", "inputs": [IZERO, INUM]},
    {"name": "logical_xor", "op": "_logical_xor", "inputs": [IZERO, INUM]},
    {"name": "equal_alias", "op": "_Equal", "inputs": [I32, IDEN]},
]


def _s(name, op, inp, scalar, **extra):
    return {"name": name, "op": op, "inputs": [inp], "attrs": {"scalar": scalar, **extra}}


_SCALAR_CASES = [
    _s("plus_scalar", "_plus_scalar", F, 2.5),
    _s("plus_scalar_int_truncates_scalar", "_plus_scalar", I32, 2.5),
    _s("plus_scalar_int_not_int_f64", "_plus_scalar", I32, 2.5, is_int=False),
    _s("plus_scalar_f16", "_plus_scalar", F16, 0.1),
    _s("plus_scalar_alias", "_PlusScalar", F, -1.5),
    _s("minus_scalar", "_minus_scalar", F, 0.25),
    _s("rminus_scalar", "_rminus_scalar", F, 1.0),
    _s("rminus_scalar_uint8", "_rminus_scalar", U8, 3),
    _s("mul_scalar", "_mul_scalar", F, -3.0),
    _s("mul_scalar_int_1_5", "_mul_scalar", INUM, 1.5),
    _s("mul_scalar_int_not_int", "_mul_scalar", INUM, 1.5, is_int=False),
    _s("div_scalar", "_div_scalar", F, 4.0),
    _s("div_scalar_int", "_div_scalar", INUM, 2),
    _s("div_scalar_int_not_int", "_div_scalar", INUM, 2.5, is_int=False),
    _s("rdiv_scalar", "_rdiv_scalar", POS, 2.0),
    _s("rdiv_scalar_int", "_rdiv_scalar", IDEN, 7),
    _s("mod_scalar", "_mod_scalar", {"shape": (2, 3), "low": -5, "high": 5}, 1.5),
    {**_s("mod_scalar_neg", "_mod_scalar", FNUM, -2.0), "no_fd": MOD_JUMPS},
    {**_s("mod_scalar_zero", "_mod_scalar", FNUM, 0.0), "no_fd": MOD_JUMPS},
    _s("mod_scalar_int_neg", "_mod_scalar", INUM, -2),
    _s("mod_scalar_int_not_int", "_mod_scalar", INUM, 2.5, is_int=False),
    _s("rmod_scalar_int", "_rmod_scalar", IDEN, -7),
    {**_s("rmod_scalar", "_rmod_scalar", FDEN, 5.5), "no_fd": MOD_JUMPS},
    _s("power_scalar", "_power_scalar", POS, 3.0),
    _s("power_scalar_int_half", "_power_scalar", INUM, 0.5),
    _s(
        "power_scalar_int_not_int",
        "_power_scalar",
        {"value": [[1, 4, 9], [2, 3, 0]], "dtype": "int32"},
        0.5,
        is_int=False,
    ),
    _s("rpower_scalar", "_rpower_scalar", F, 2.0),
    _s("rpower_scalar_int", "_rpower_scalar", IDEN, 2),
    _s("maximum_scalar", "_maximum_scalar", F, 0.2),
    _s("minimum_scalar", "_minimum_scalar", FNAN, 0.5),
    _s("hypot_scalar", "_hypot_scalar", F, 3.0),
    _s("equal_scalar", "_equal_scalar", {"value": [1, 2, 3]}, 2),
    _s("not_equal_scalar", "_not_equal_scalar", FNAN, 1.0),
    _s("greater_scalar", "_greater_scalar", F, 0.0),
    _s("greater_scalar_int_not_int", "_greater_scalar", INUM, 2.5, is_int=False),
    _s("greater_equal_scalar", "_greater_equal_scalar", I32, 1),
    _s("lesser_scalar", "_lesser_scalar", F16, 0.0),
    _s("lesser_equal_scalar", "_lesser_equal_scalar", F64, 0.5),
    _s("logical_and_scalar", "_logical_and_scalar", IZERO, 1),
    _s("logical_or_scalar", "_logical_or_scalar", IZERO, 0),
    _s("logical_xor_scalar", "_logical_xor_scalar", FNAN, 1.0),
    _s("smooth_l1_sigma2", "smooth_l1", {"value": [[-3, -0.3, 0.0], [0.2, 0.9, 3.0]]}, 2.0),
    {
        "name": "smooth_l1_default",
        "op": "smooth_l1",
        "inputs": [{"shape": (3, 4), "low": -2, "high": 2}],
    },
    _s(
        "smooth_l1_f64",
        "smooth_l1",
        {"shape": (3, 4), "low": -2, "high": 2, "dtype": "float64"},
        0.5,
    ),
]

CASES = _ARITH_CASES + _MOD_POWER_CASES + _MINMAX_CMP_CASES + _SCALAR_CASES
