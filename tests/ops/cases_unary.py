"""Case table for gluonport/ops/math/unary.py (plain data; see tests/ops/_check.py)."""

NAN, INF = float("nan"), float("inf")

F = {"shape": (2, 3), "low": -2.0, "high": 2.0}
F16 = {"shape": (3, 4), "low": -2.0, "high": 2.0, "dtype": "float16"}
F64 = {"shape": (2, 3), "low": -2.0, "high": 2.0, "dtype": "float64"}
POS = {"shape": (2, 3), "low": 0.1, "high": 3.0}
UNIT = {"shape": (2, 3), "low": -0.95, "high": 0.95}
GT1 = {"shape": (2, 3), "low": 1.05, "high": 4.0}
ODD = {"shape": (3, 1, 2, 1), "low": -3.0, "high": 3.0}
INTS = {"value": [[-7, -3, 3], [7, 5, 0]], "dtype": "int32"}
I64 = {"value": [[-7, -3, 3], [7, 5, 0]], "dtype": "int64"}
I8 = {"value": [[-128, -3, 3], [127, 5, 0]], "dtype": "int8"}
U8 = {"value": [[0, 3, 200], [255, 5, 1]], "dtype": "uint8"}
HALVES = {"value": [[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 0.49999997, -0.49999997]]}
SPECIAL = {"value": [[NAN, -0.0, 0.0, INF], [-INF, -1.5, 2.0, 1e-30]]}
CASTSRC = {"value": [[-1.7, -0.2, 0.5, 300.7], [NAN, INF, -INF, 3e9]]}

_MATH_OPS = [
    # (op, float32 input spec)
    ("abs", F),
    ("sign", F),
    ("round", F),
    ("rint", F),
    ("ceil", F),
    ("floor", F),
    ("trunc", F),
    ("fix", F),
    ("square", F),
    ("sqrt", POS),
    ("rsqrt", POS),
    ("cbrt", F),
    ("rcbrt", POS),
    ("exp", F),
    ("log", POS),
    ("log10", POS),
    ("log2", POS),
    ("log1p", POS),
    ("expm1", F),
    ("sin", F),
    ("cos", F),
    ("tan", UNIT),
    ("arcsin", UNIT),
    ("arccos", UNIT),
    ("arctan", F),
    ("sinh", F),
    ("cosh", F),
    ("tanh", F),
    ("arcsinh", F),
    ("arccosh", GT1),
    ("arctanh", UNIT),
    ("degrees", F),
    ("radians", F),
    ("gamma", POS),
    ("gammaln", POS),
    ("erf", F),
    ("erfinv", UNIT),
    ("reciprocal", POS),
    ("negative", F),
    ("relu", F),
    ("sigmoid", F),
    ("softsign", F),
    ("logical_not", {"value": [[0, 1, -2], [0.5, 0, 3]]}),
    ("_copy", F),
    ("identity", F),
    ("zeros_like", F),
    ("ones_like", F),
]

_FLOAT32 = [
    {"name": op if op != "_copy" else "copy", "op": op, "inputs": [spec]} for op, spec in _MATH_OPS
]

_INT_OPS = [
    "abs",
    "sign",
    "round",
    "ceil",
    "sqrt",
    "rsqrt",
    "exp",
    "log",
    "sigmoid",
    "tanh",
    "reciprocal",
    "degrees",
    "gamma",
    "erf",
    "logical_not",
    "negative",
    "square",
    "relu",
    "cbrt",
    "softsign",
    "rint",
    "fix",
    "gammaln",
]
_INT32 = [{"name": f"{op}_int32", "op": op, "inputs": [INTS]} for op in _INT_OPS]

_F16_OPS = [
    "exp",
    "log1p",
    "sigmoid",
    "tanh",
    "sqrt",
    "erf",
    "gamma",
    "round",
    "rint",
    "softsign",
    "degrees",
    "arctan",
    "relu",
    "sign",
]
_FLOAT16 = [
    {
        "name": f"{op}_f16",
        "op": op,
        "inputs": [{**F16, "low": 0.1} if op in ("sqrt", "gamma", "log1p") else F16],
        "rtol": 2e-3,
        "atol": 1e-3,
    }
    for op in _F16_OPS
]

_F64_OPS = [
    "erf",
    "erfinv",
    "gamma",
    "gammaln",
    "exp",
    "sigmoid",
    "cbrt",
    "arcsinh",
    "rint",
    "round",
]
_FLOAT64 = [
    {
        "name": f"{op}_f64",
        "op": op,
        "inputs": [{**F64, "low": -0.99, "high": 0.99} if op == "erfinv" else F64],
        "rtol": 1e-9,
        "atol": 1e-12,
    }
    for op in _F64_OPS
]

_EDGE = [
    {"name": "round_halves", "op": "round", "inputs": [HALVES]},
    {"name": "rint_halves_go_down", "op": "rint", "inputs": [HALVES]},
    {"name": "fix_halves", "op": "fix", "inputs": [HALVES]},
    {"name": "sign_special", "op": "sign", "inputs": [SPECIAL]},
    {"name": "relu_special", "op": "relu", "inputs": [SPECIAL]},
    {"name": "logical_not_special", "op": "logical_not", "inputs": [SPECIAL]},
    {"name": "abs_int8_min", "op": "abs", "inputs": [I8]},
    {"name": "negative_int8", "op": "negative", "inputs": [I8]},
    {"name": "sqrt_int64_negative", "op": "sqrt", "inputs": [I64]},
    {"name": "exp_uint8", "op": "exp", "inputs": [U8]},
    {"name": "sign_uint8", "op": "sign", "inputs": [U8]},
    {
        "name": "gamma_poles",
        "op": "gamma",
        "inputs": [{"value": [-1.5, -1.0, 0.0, 0.5, 5.0, 30.0, 40.0, -0.0]}],
    },
    {
        "name": "gamma_poles_f64",
        "op": "gamma",
        "inputs": [
            {
                "value": [-1.5, -1.0, 0.0, -0.0, 0.5, 1.0, 5.0, 30.0, 171.5, 172.0, -20.3],
                "dtype": "float64",
            }
        ],
        "rtol": 1e-9,
    },
    {
        "name": "gammaln_poles",
        "op": "gammaln",
        "inputs": [
            {"value": [-1.5, -1.0, 0.0, 0.5, 1.0, 2.0, 5.0, 30.0, 1e10], "dtype": "float64"}
        ],
        "rtol": 1e-9,
        "atol": 1e-12,
    },
    {
        "name": "erfinv_edges",
        "op": "erfinv",
        "inputs": [{"value": [-1.0, -0.999, -0.5, 0.0, 0.3, 0.9999, 1.0, 1.5, -2.0, NAN]}],
    },
    {
        "name": "erfinv_tail_f64",
        "op": "erfinv",
        "inputs": [{"value": [0.999999999, -0.99999999999, 1e-10, 0.5], "dtype": "float64"}],
        "rtol": 1e-9,
        "no_fd": "two values lie within the 1e-6 difference step of erfinv's poles at +-1",
    },
    {
        "name": "erf_tails",
        "op": "erf",
        "inputs": [{"value": [-6.0, -3.0, -2.5, -1e-8, 1e-8, 2.5, 3.5, 10.0, INF, NAN]}],
    },
    {
        "name": "sigmoid_extremes",
        "op": "sigmoid",
        "inputs": [{"value": [-100.0, -20.0, 0.0, 20.0, 100.0]}],
    },
    {"name": "odd_shape_sin", "op": "sin", "inputs": [ODD]},
    {"name": "odd_shape_identity", "op": "identity", "inputs": [{"value": [3.5]}]},
    {"name": "zeros_like_int8", "op": "zeros_like", "inputs": [I8]},
    {"name": "ones_like_f16", "op": "ones_like", "inputs": [F16]},
]

_CAST = [
    {"name": f"cast_{dt}", "op": "Cast", "inputs": [CASTSRC], "attrs": {"dtype": dt}}
    for dt in ("int32", "int64", "int8", "uint8", "float16", "float64", "bool")
] + [
    {
        "name": "cast_alias_int_to_uint8",
        "op": "cast",
        "inputs": [{"value": [-1, 256, 300, 7], "dtype": "int32"}],
        "attrs": {"dtype": "uint8"},
    },
    {"name": "cast_f16_to_int32", "op": "Cast", "inputs": [F16], "attrs": {"dtype": "int32"}},
    {"name": "cast_int_to_f32", "op": "Cast", "inputs": [I64], "attrs": {"dtype": "float32"}},
]

_OTHERS = [
    {"name": "clip", "op": "clip", "inputs": [F], "attrs": {"a_min": -0.5, "a_max": 0.7}},
    {
        "name": "clip_int_float_bounds",
        "op": "clip",
        "inputs": [INTS],
        "attrs": {"a_min": -2.5, "a_max": 2.7},
    },
    {
        "name": "clip_min_above_max",
        "op": "clip",
        "inputs": [F],
        "attrs": {"a_min": 1.0, "a_max": -1.0},
    },
    {
        "name": "clip_nan_inf",
        "op": "clip",
        "inputs": [SPECIAL],
        "attrs": {"a_min": -1.0, "a_max": 1.0},
    },
    {"name": "clip_f16", "op": "clip", "inputs": [F16], "attrs": {"a_min": -1.0, "a_max": 0.3}},
    {
        "name": "hard_sigmoid",
        "op": "hard_sigmoid",
        "inputs": [{"shape": (2, 5), "low": -4, "high": 4}],
    },
    {
        "name": "hard_sigmoid_alpha_beta",
        "op": "hard_sigmoid",
        "inputs": [F],
        "attrs": {"alpha": 0.5, "beta": 0.1},
    },
    {"name": "hard_sigmoid_f64", "op": "hard_sigmoid", "inputs": [F64], "attrs": {"alpha": 0.3}},
    {"name": "hard_sigmoid_f16", "op": "hard_sigmoid", "inputs": [F16], "rtol": 1e-3},
    {"name": "add_n_one", "op": "add_n", "inputs": [F]},
    {"name": "add_n_three", "op": "add_n", "inputs": [F, F, F]},
    {"name": "add_n_int32", "op": "add_n", "inputs": [INTS, INTS]},
    {"name": "elementwisesum_alias", "op": "ElementWiseSum", "inputs": [F64, F64]},
    {"name": "identity_with_attr_like_rhs", "op": "_identity_with_attr_like_rhs", "inputs": [F, F]},
]

CASES = _FLOAT32 + _INT32 + _FLOAT16 + _FLOAT64 + _EDGE + _CAST + _OTHERS

# MXNet's MKLDNN build refuses amp casts of float16/float64 arrays, so these goldens come from
# tests/golden/ops/gen_amp.py (MXNET_MKLDNN_ENABLED=0) into amp.npz; gen_ops.py skips them.
_NO_JSON = "Symbol.tojson() drops amp casts, as MXNet's does; see test_unary.py::test_amp_*"
AMP_CASES = [
    {
        "name": "amp_cast_f32_to_f16",
        "op": "amp_cast",
        "inputs": [F],
        "attrs": {"dtype": "float16"},
        "rtol": 1e-3,
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_cast_f16_to_f32",
        "op": "amp_cast",
        "inputs": [F16],
        "attrs": {"dtype": "float32"},
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_cast_int_passes",
        "op": "amp_cast",
        "inputs": [INTS],
        "attrs": {"dtype": "float16"},
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_cast_f64_passes",
        "op": "amp_cast",
        "inputs": [F64],
        "attrs": {"dtype": "float16"},
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_multicast_widest",
        "op": "amp_multicast",
        "inputs": [F16, {"shape": (2, 2)}],
        "attrs": {"num_outputs": 2},
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_multicast_narrow",
        "op": "amp_multicast",
        "inputs": [F16, {"shape": (2, 2)}],
        "attrs": {"num_outputs": 2, "cast_narrow": True},
        "rtol": 1e-3,
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_multicast_mixed",
        "op": "amp_multicast",
        "inputs": [F16, F64, INTS],
        "attrs": {"num_outputs": 3},
        "skip_sym": _NO_JSON,
    },
    {
        "name": "amp_multicast_first_int",
        "op": "amp_multicast",
        "inputs": [INTS, F16],
        "attrs": {"num_outputs": 2},
        "skip_sym": _NO_JSON,
    },
]
