"""Case table for gluonport/ops/random.py (plain data; see tests/ops/_check.py).

Random numbers cannot equal MXNet's, so every case compares shapes and dtypes only
(``compare: "shape"``); test_random.py checks the distributions themselves.
"""

S = "shape"
LOW = {"shape": (2, 3), "low": -1.0, "high": 0.0}
HIGH = {"shape": (2, 3), "low": 1.0, "high": 2.0}
POS = {"shape": (2, 3), "low": 0.5, "high": 3.0}
PROB = {"shape": (2, 3), "low": 0.2, "high": 0.8}
KS = {"value": [[1, 2, 3], [4, 5, 6]]}
DIST = {"value": [[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]}
DIST1 = {"value": [0.25, 0.25, 0.5]}
DIST3 = {"value": [[[0.1, 0.9], [1.0, 0.0]], [[0.5, 0.5], [0.3, 0.7]]]}


def _r(name, op, inputs=(), **attrs):
    return {"name": name, "op": op, "inputs": list(inputs), "attrs": attrs, "compare": S}


# sample_multinomial's get_prob gradient goes to the categories drawn, and gluonport's generator
# draws others than MXNet's: tests/ops/test_random_grad.py checks it against the drawn samples
_DRAWN = {"no_grad_golden": "the gradient lands on the categories drawn, which differ from "
                            "MXNet's draws (test_random_grad.py checks it)",
          "no_fd": "random draws: every forward call samples anew"}


_RANDOM = [
    _r("random_uniform", "_random_uniform", shape=(2, 3)),
    _r("random_uniform_f16_bounds", "_random_uniform", low=-2, high=5, shape=(4,), dtype="float16"),
    _r("random_uniform_f64", "_random_uniform", shape=(2, 2, 2), dtype="float64"),
    _r("uniform_alias", "uniform", shape=(3,)),
    _r("random_uniform_alias", "random_uniform", low=1, high=1, shape=(2,)),
    _r("random_normal", "_random_normal", loc=1.0, scale=2.0, shape=(3, 4)),
    _r("normal_alias_f64", "normal", shape=(5,), dtype="float64"),
    _r("random_gamma", "_random_gamma", alpha=2.0, beta=0.5, shape=(2, 3)),
    _r("random_exponential", "_random_exponential", lam=3.0, shape=(4, 1)),
    _r("random_poisson", "_random_poisson", lam=4.0, shape=(6,)),
    _r("random_negative_binomial", "_random_negative_binomial", k=3, p=0.4, shape=(2, 2)),
    _r(
        "random_gen_negative_binomial",
        "_random_generalized_negative_binomial",
        mu=2.0,
        alpha=0.3,
        shape=(3,),
    ),
    _r("random_randint", "_random_randint", low=-3, high=7, shape=(2, 5)),
    _r("random_randint_int64", "_random_randint", low=0, high=100, shape=(3,), dtype="int64"),
    _r("random_uniform_ctx", "_random_uniform", shape=(2,), ctx="cpu(0)"),
]

_LIKE = [
    _r("uniform_like", "_random_uniform_like", [{"shape": (2, 3)}], low=-1, high=1),
    _r("normal_like_f64", "_random_normal_like", [{"shape": (4,), "dtype": "float64"}]),
    _r("gamma_like", "_random_gamma_like", [{"shape": (3, 2)}], alpha=3.0),
    _r("exponential_like_f16", "_random_exponential_like", [{"shape": (5,), "dtype": "float16"}]),
    _r("poisson_like", "_random_poisson_like", [{"shape": (2, 2)}], lam=2.0),
    _r("negative_binomial_like", "_random_negative_binomial_like", [{"shape": (3,)}], k=2, p=0.5),
    _r(
        "gen_negative_binomial_like",
        "_random_generalized_negative_binomial_like",
        [{"shape": (2, 1)}],
    ),
]

_SAMPLE = [
    _r("sample_uniform", "_sample_uniform", [LOW, HIGH]),
    _r("sample_uniform_shape", "_sample_uniform", [LOW, HIGH], shape=(4,)),
    _r("sample_uniform_alias_f64", "sample_uniform", [LOW, HIGH], shape=(2, 2), dtype="float64"),
    _r("sample_normal", "_sample_normal", [LOW, POS], shape=(3,)),
    _r(
        "sample_normal_f64_params",
        "_sample_normal",
        [{**LOW, "dtype": "float64"}, {**POS, "dtype": "float64"}],
    ),
    _r("sample_gamma", "_sample_gamma", [POS, POS], shape=(2,)),
    _r("sample_exponential_f16", "_sample_exponential", [POS], shape=(3,), dtype="float16"),
    _r("sample_poisson", "_sample_poisson", [POS], shape=(2,)),
    _r("sample_negative_binomial", "_sample_negative_binomial", [KS, PROB], shape=(2,)),
    _r("sample_gen_negative_binomial", "_sample_generalized_negative_binomial", [POS, PROB]),
    _r("sample_multinomial", "_sample_multinomial", [DIST]),
    _r("sample_multinomial_1d", "_sample_multinomial", [DIST1]),
    _r("sample_multinomial_1d_shape", "_sample_multinomial", [DIST1], shape=(2, 3)),
    _r("sample_multinomial_shape", "_sample_multinomial", [DIST], shape=(4,)),
    _r("sample_multinomial_3d", "_sample_multinomial", [DIST3], shape=(2,)),
    {**_r("sample_multinomial_prob", "_sample_multinomial", [DIST], shape=(3,), get_prob=True),
     **_DRAWN},
    _r("sample_multinomial_dtype", "sample_multinomial", [DIST], dtype="float32"),
    {**_r(
        "sample_multinomial_uint8_prob_f64",
        "_sample_multinomial",
        [{**DIST, "dtype": "float64"}],
        get_prob=True,
        dtype="uint8",
    ), **_DRAWN},
    _r("shuffle_2d", "_shuffle", [{"shape": (5, 3)}]),
    _r("shuffle_alias_1d_int", "shuffle", [{"shape": (7,), "dtype": "int32", "low": 0, "high": 9}]),
]

CASES = _RANDOM + _LIKE + _SAMPLE
