"""The ops and parameter combinations of MXNet 1.9.1's own exporter tests
(``tests/python-pytest/onnx/test_operators.py``), as data for ``test_mxnet_exporter_suite.py``.

One entry per MXNet test function (131; where MXNet's module defines a name twice, only its
second definition runs there, and both are kept here with ``_v1``/``_v2``). Each entry names the
op as MXNet's ``def_model`` does (``"contrib.box_nms"`` is ``F.contrib.box_nms``), the parameter
axes MXNet parametrizes over (the same values), and ``build(rng, c)``, which returns, for one
combination ``c``, the block's inputs and keyword arguments in a dict:

    inputs  list of numpy arrays (the block's data0, data1, ...)
    params  keyword arguments of the op
    op      optional: another op, or a function ``f(F, *inputs)`` (MXNet's def_model_from_func)
    dummy   the op takes no input: the block returns (op(**params), data0), as MXNet's
    skip    MXNet's test returns early for this combination
    tol     (rtol, atol) instead of the dtype's default
    check   "range" (random ops: compare only shapes, dtypes and that values are finite) or
            "nan_to_num" (MXNet maps onnxruntime's NaN to 0 for avg pooling edge cases)

Nothing here imports gluonport; inputs come from ``rng`` (a seeded RandomState).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np

ALL5 = ["float16", "float32", "float64", "int32", "int64"]
F4I = ["float32", "float64", "int32", "int64"]


def u(rng, lo, hi, shape, dtype="float32"):
    return rng.uniform(lo, hi, shape).astype(dtype)


def ri(rng, lo, hi, shape, dtype="int32"):
    return rng.randint(lo, hi, shape).astype(dtype)


def arange(n, shape, dtype="float32"):
    return np.arange(n, dtype="float64").reshape(shape).astype(dtype)


def num(rng, lo, hi, shape, dtype):
    """MXNet's pattern: randint for integer dtypes, uniform otherwise."""
    return ri(rng, lo, hi, shape, dtype) if "int" in dtype else u(rng, lo, hi, shape, dtype)


def one(inputs, **params) -> dict:
    return {"inputs": inputs, "params": params}


E: list[dict[str, Any]] = []


def entry(name: str, op: Any, axes: dict[str, list] | None = None, **kw: Any):
    """Register ``build`` (the decorated function) for MXNet's ``test_onnx_export_<name>``."""

    def deco(build):
        E.append({"name": name, "op": op, "axes": axes or {}, "build": build, **kw})
        return build

    return deco


# --- creation ---------------------------------------------------------------------------------
@entry("abs", "abs")
def _(rng, c):
    return one([np.array([[-2, -1], [0, 99]], "float32")])


@entry("slice", "slice", {"dtype": ALL5, "params": [((0, 1), (2, 3), (1, 1)),
                                                   ((None, 1), (2, None), None),
                                                   ((0, 0, 0), (None, 4, 5), (None, 1, 2))]})
def _(rng, c):
    b, e, s = c["params"]
    return one([arange(60, (3, 4, 5), c["dtype"])], begin=b, end=e, step=s)


@entry("stack_v1", "stack")
def _(rng, c):
    return one([np.array([1, 2], "float32"), np.array([3, 4], "float32")])


SHAPES4 = [1, (1, 2), (2, 3, 4), (5, 6, 7)]
DT_NONE = [None, "float32", "float64", "int32", "int64"]


@entry("zeros", "zeros", {"dtype": DT_NONE, "shape": SHAPES4})
def _(rng, c):
    return {**one([np.array([1], "float32")], shape=c["shape"], dtype=c["dtype"]), "dummy": True}


@entry("ones", "ones", {"dtype": DT_NONE, "shape": SHAPES4})
def _(rng, c):
    return {**one([np.array([0], "float32")], shape=c["shape"], dtype=c["dtype"]), "dummy": True}


@entry("zeros_like", "zeros_like", {"dtype": DT_NONE, "shape": SHAPES4})
def _(rng, c):
    return one([u(rng, 0, 1, c["shape"])], dtype=c["dtype"])


@entry("ones_like", "ones_like", {"dtype": DT_NONE, "shape": SHAPES4})
def _(rng, c):
    return one([u(rng, 0, 1, c["shape"])], dtype=c["dtype"])


@entry("arange_like", "contrib.arange_like",
       {"dtype": ["float32", "float64"], "axis": [None, 0, 1], "start": [0, 0.5, 1],
        "step": [0.01, 0.1, 0.5, 1], "data": ["random", "list"]})
def _(rng, c):
    x = u(rng, 0, 1, (10, 20)) if c["data"] == "random" else \
        np.array([[0, 1, 2, 3, 4, 5], [4, 5, 6, 7, 8, 9], [8, 9, 10, 11, 12, 13]])
    return one([x.astype(c["dtype"])], axis=c["axis"], start=c["start"], step=c["step"])


@entry("arange", "arange", {"dtype": F4I, "params": [[0, 2, 1], [0, 50, 0.25], [-100, 100, 0.5],
                                                   [5, None, 1], [-5, None, -1]]})
def _(rng, c):
    start, stop, step = c["params"]
    if "int" in c["dtype"]:
        start, stop, step = int(start), None if stop is None else int(stop), int(step) or 1
    return {**one([np.array([1], "float32")], start=start, stop=stop, step=step,
                  dtype=c["dtype"]), "dummy": True}


# --- normalization and shape ops ----------------------------------------------------------------
@entry("layernorm", "LayerNorm", {"axis": [0, 1, 2, -1]})
def _(rng, c):
    x = u(rng, 1, 2, (3, 4, 5))
    n = x.shape[c["axis"]]
    return one([x, u(rng, 0, 1, (n,)), u(rng, 0, 1, (n,))], axis=c["axis"])


@entry("broadcast_axis", "broadcast_axis", {"dtype": ["float32", "float64", "int32"],
                                            "case": [0, 1, 2]})
def _(rng, c):
    d = c["dtype"]
    if c["case"] < 2:
        size = (3, 4) if c["case"] == 0 else (1, 5)
        return one([np.array([[[1], [2]]], d)], axis=(0, 2), size=size)
    return one([np.ones((1, 1, 3, 1, 1, 1), d)], axis=(1, 4), size=(3, 5))


@entry("SequenceMask", "SequenceMask", {"case": [0, 1]})
def _(rng, c):
    x = np.array([[[[1., 2., 3., 3.5]], [[4., 5., 6., 6.5]]],
                  [[[7., 8., 9., 9.5]], [[10., 11., 12., 12.5]]],
                  [[[13., 14., 15., 15.5]], [[16., 17., 18., 18.5]]]], "float32")
    if c["case"] == 0:
        return one([x, np.array([1, 2, 1], "float32")], use_sequence_length=True, axis=1,
                   value=-5)
    return one([x, np.array([1, 2], "float32")], use_sequence_length=True, axis=0, value=-99)


@entry("contrib_interleaved_matmul_selfatt_qk", "contrib.interleaved_matmul_selfatt_qk",
       {"case": [0, 1]})
def _(rng, c):
    if c["case"] == 0:
        return one([u(rng, 0, 1, (3, 3, 27))], heads=3)
    return one([u(rng, 0, 1, (7, 5, 120))], heads=5)


@entry("contrib_interleaved_matmul_selfatt_valatt", "contrib.interleaved_matmul_selfatt_valatt")
def _(rng, c):
    return one([u(rng, 0, 1, (4, 5, 126)), u(rng, 0, 1, (30, 4, 4))], heads=6)


@entry("slice_axis", "slice_axis", {"dtype": ["float32", "float64", "int32"],
                                    "params": [(0, 1, 3), (0, 1, None), (1, -3, -1),
                                               (-1, -3, None)]})
def _(rng, c):
    axis, b, e = c["params"]
    return one([arange(12, (3, 4), c["dtype"]) + 1], axis=axis, begin=b, end=e)


@entry("reshape", "reshape", {"dtype": F4I, "params": [((6, 1, 0, -1), False),
                                                      ((3, -1, 0, 0), True),
                                                      ((5, 1, 1, 1, 1, -1, 0), True),
                                                      ((-3, -1), False)]})
def _(rng, c):
    shape, rev = c["params"]
    return one([np.ones((2, 3, 4, 5, 6), c["dtype"])], shape=shape, reverse=rev)


@entry("reshape_special_cases", "reshape", {"dtype": F4I, "params": [
    ((8, 9), (0, -4, 1, -1)), ((8, 9, 10), (0, -4, 3, -1, 10)), ((8, 9, 10), (-4, 2, -1, 10, 9)),
    ((8, 9, 10), (-3, 0)), ((1, 2, 3, 4, 5, 6), (0, 0, -3, -3)),
    ((5, 8, 6, 7), (0, -4, -1, 4, 0, 0)), ((2, 3, 4, 5, 6), (0, 0, -4, 2, 2, 0, 0)),
    ((8, 7, 6, 5), (-4, 1, -1, 0, 0, 0)), ((1000, 2, 3), (-4, 1, 1000, 0, 0)),
    ((3, 96, 5), (0, -4, 12, -1, 0)), ((3, 96, 5), (0, -4, 16, -1, 0))]})
def _(rng, c):
    src, shape = c["params"]
    return one([np.ones(src, c["dtype"])], shape=shape)


@entry("embedding", "Embedding", {"dtype": ["int32", "int64"]})
def _(rng, c):
    return one([np.array([[1, 3], [0, 2]], c["dtype"]), arange(20, (4, 5), c["dtype"])],
               input_dim=4, output_dim=5)


@entry("fully_connected", "FullyConnected", {"dtype": F4I, "num_hidden": [1, 2, 7, 10, 20],
                                             "no_bias": [True, False], "flatten": [True, False]})
def _(rng, c):
    # MXNet's test builds float32 arrays whatever its dtype parameter says
    n = c["num_hidden"]
    ins = [u(rng, -0.5, 0.5, (3, 4, 5)), u(rng, 0, 1, (n, 20 if c["flatten"] else 5))]
    if not c["no_bias"]:
        ins.append(u(rng, 0, 1, (n,)))
    return one(ins, num_hidden=n, no_bias=c["no_bias"], flatten=c["flatten"])


@entry("LeakyReLU", "LeakyReLU", {"dtype": ["float32", "float16"],
                                  "shape": [(1,), (3,), (4, 5), (3, 4, 5)],
                                  "act_type": ["elu", "leaky", "prelu", "selu", "gelu"]})
def _(rng, c):
    # MXNet's test passes act_type='leaky' whatever its parameter says; here each act_type runs
    x = u(rng, -0.5, 0.5, c["shape"], c["dtype"])
    if c["act_type"] == "prelu":
        gamma = u(rng, 0, 0.5, (c["shape"][1] if len(c["shape"]) > 1 else 1,), c["dtype"])
        return one([x, gamma], act_type="prelu")
    return one([x], act_type=c["act_type"])


@entry("Concat", "Concat", {"dtype": ALL5, "dim": [0, 1]})
def _(rng, c):
    d = c["dtype"]
    x = np.array([[1, 1], [2, 2]], d)
    y = np.array([[3, 3], [4, 4], [5, 5]], d)
    z = np.array([[6, 6], [7, 7], [8, 8]], d)
    return one([x, y, z], dim=0) if c["dim"] == 0 else one([y, z], dim=1)


@entry("Activation", "Activation", {"dtype": ["float32", "float16"],
                                    "shape": [(1,), (3,), (4, 5), (3, 4, 5)],
                                    "act_type": ["tanh", "relu", "sigmoid", "softrelu",
                                                 "softsign"]})
def _(rng, c):
    return one([u(rng, -0.5, 0.5, c["shape"], c["dtype"])], act_type=c["act_type"])


@entry("transpose", "transpose", {"dtype": F4I, "axes": [None, [1, 0, 2]]})
def _(rng, c):
    x = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], c["dtype"])
    return one([x]) if c["axes"] is None else one([x], axes=c["axes"])


@entry("expand_dims", "expand_dims", {"dtype": ["float32", "float64"], "axis": [0, 1, 2]})
def _(rng, c):
    return one([u(rng, 0, 1, (2, 3, 4), c["dtype"])], axis=c["axis"])


@entry("broadcast_add", "broadcast_add", {"dtype": F4I})
def _(rng, c):
    return one([np.ones((2, 3), c["dtype"]), np.array([[0], [1]], c["dtype"])])


@entry("broadcast_equal", "broadcast_equal", {"dtype": F4I})
def _(rng, c):
    return one([np.zeros((4, 5, 6), c["dtype"]), np.ones((4, 5, 6), c["dtype"])])


@entry("broadcast_not_equal", "broadcast_not_equal", {"dtype": F4I, "case": [0, 1]})
def _(rng, c):
    d = c["dtype"]
    if c["case"] == 0:
        return one([np.zeros((4, 5, 6), d), np.ones((4, 5, 6), d)])
    return one([np.ones((4, 5, 6), d), np.ones((5, 6), d)])


@entry("broadcast_minimum", "broadcast_minimum", {"dtype": ALL5})
def _(rng, c):
    return one([num(rng, 0, 1000, (4, 5, 6), c["dtype"]),
                num(rng, 0, 1000, (4, 5, 6), c["dtype"])])


@entry("stack_v2", "stack", {"dtype": F4I, "axis": [0, 1, 2, -1]})
def _(rng, c):
    d = c["dtype"]
    mk = (lambda: ri(rng, 0, 90, (3, 4, 5), d)) if "int" in d else \
        (lambda: rng.normal(0, 90, (3, 4, 5)).astype(d))
    return one([mk(), mk()], axis=c["axis"])


@entry("dropout_v1", "Dropout", {"dtype": ["float32", "float64"], "p": [0.1, 0.2, 0.5, 0.8]})
def _(rng, c):
    x = np.array([[3, 0.5, -0.5, 2, 7], [2, -0.4, 7, 3, 0.2]], c["dtype"])
    return one([x], p=c["p"])


@entry("cast", "Cast", {"src": ["float16", "float32", "float64"],
                        "dst": ["bool", "float16", "float32", "float64", "int32", "int64", "int8",
                                "uint8"], "shape": [(2, 3), (4, 5, 6)]})
def _(rng, c):
    return one([np.ones(c["shape"], c["src"])], dtype=c["dst"])


@entry("softmax", "softmax", {"dtype": ["float16", "float32"],
                              "temperature": [None, .1, 1., 10.], "case": [1, 2, 3, 4]})
def _(rng, c):
    x = u(rng, 0, 1, (4, 5, 6), c["dtype"])
    if c["case"] == 1:
        return one([x])
    axis, lo, hi, shape = {2: (0, 0, 4, (5, 6)), 3: (-1, 1, 6, (4, 5)),
                           4: (1, 0, 5, (4, 6))}[c["case"]]
    length = u(rng, lo, hi, shape).astype("int32")
    return one([x, length], use_length=True, axis=axis, temperature=c["temperature"])


@entry("reverse", "reverse", {"dtype": ALL5, "axis": [0, 1, 2, 3]})
def _(rng, c):
    return one([arange(120, (2, 3, 4, 5), c["dtype"])], axis=c["axis"])


@entry("repeat", "repeat", {"dtype": ALL5, "axis": [None, 0, 1, 2, -1, -2, -3],
                            "repeats": [2, 1, 3]})
def _(rng, c):
    return one([arange(27, (3, 3, 3), c["dtype"])], axis=c["axis"], repeats=c["repeats"])


@entry("contrib_BilinearResize2D", "contrib.BilinearResize2D", {
    "dtype": ALL5, "shape": [(1, 3, 224, 224), (2, 2, 5, 8), (2, 4, 17, 23)],
    "params": [{"height": 7, "width": 13}, {"height": 10, "width": 16},
               {"height": 3, "width": 5}, {"height": 2, "width": 4},
               {"scale_height": 3, "scale_width": 2}, {"scale_height": 1.7, "scale_width": 2.3},
               {"scale_height": 0.5, "scale_width": 0.6},
               {"scale_height": 0.8, "scale_width": 0.13},
               {"scale_height": 2.5, "scale_width": 0.5}, {"scale_height": 3, "scale_width": 0.2}]})
def _(rng, c):
    # MXNet's test feeds float32 whatever its dtype parameter says
    return one([u(rng, 0, 1, c["shape"])], **c["params"])


_NMS_CORNER = [[[[[0.5, 0.1, 0.1, 0.2, 0.2], [0.4, 0.1, 0.1, 0.2, 0.2],
                  [0.7, 0.5, 0.5, 0.9, 0.9], [0.8, 0.1, 0.9, 0.11, 0.91],
                  [0.001, 0.01, 0.01, 0.02, 0.02]]]],
               [[[[0.5, 0.1, 0.1, 0.2, 0.2], [0.4, 0.1, 0.1, 0.2, 0.2],
                  [0.7, 0.5, 0.5, 0.9, 0.9], [0.8, 0.1, 0.9, 0.11, 0.91],
                  [0.001, 0.01, 0.01, 0.02, 0.02]]]],
               [[[[0.4, 0.1, 0.1, 0.2, 0.2], [0.3, 0.1, 0.1, 0.2, 0.2],
                  [0.7, 0.5, 0.5, 0.9, 0.9], [0.8, 0.1, 0.9, 0.11, 0.91],
                  [0.001, 0.01, 0.01, 0.02, 0.02]]]]]
_NMS_CENTER = [[[[[0.7, 0.5, 0.5, 0.2, 0.2], [0.6, 0.48, 0.48, 0.2, 0.2],
                  [0.8, 0.76, 0.76, 0.2, 0.2], [0.9, 0.7, 0.7, 0.2, 0.2],
                  [0.001, 0.5, 0.1, 0.02, 0.02]]]],
               [[[[0.5, 0.2, 0.2, 0.2, 0.2], [0.6, 0.4, 0.4, 0.21, 0.21],
                  [0.7, 0.5, 0.5, 0.9, 0.9], [0.8, 0.1, 0.9, 0.01, 0.01],
                  [0.001, 0.6, 0.1, 0.02, 0.02]]]]]


@entry("contrib_box_nms", "contrib.box_nms", {"topk": [-1, 2, 3, 4],
                                              "valid_thresh": [0.3, 0.4, 0.8],
                                              "overlap_thresh": [0.4, 0.7, 1.0],
                                              "fmt": ["corner", "center"]})
def _(rng, c):
    data = np.array([_NMS_CORNER] if c["fmt"] == "corner" else _NMS_CENTER, "float32")
    return one([data], coord_start=1, force_suppress=True, overlap_thresh=c["overlap_thresh"],
               valid_thresh=c["valid_thresh"], score_index=0, topk=c["topk"],
               in_format=c["fmt"], out_format=c["fmt"])


SCALARS = [0., 0.1, 0.5, 1., 5, 555.]


def _cmp_scalar(rng, c):
    d = c["dtype"]
    if "int" in d:
        return one([arange(12, (3, 4), d)], scalar=int(c["scalar"]))
    return one([u(rng, 0, 9999, (5, 10), d)], scalar=c["scalar"])


for _op in ("greater", "lesser", "equal"):
    entry(f"{_op}_scalar", f"_internal._{_op}_scalar",
          {"dtype": ALL5, "scalar": SCALARS})(_cmp_scalar)


@entry("where", "where", {"dtype": ["float16", "float32", "int32", "int64"],
                          "shape": [(5,), (3, 3), (10, 2), (20, 30, 40)],
                          "broadcast": [True, False]})
def _(rng, c):
    shape = c["shape"]
    cond = np.zeros(shape[:1] if c["broadcast"] else shape, "int32")  # randint(0, 1): zeros
    return one([cond, np.zeros(shape, c["dtype"]), np.ones(shape, c["dtype"])])


@entry("topk", "topk", {"dtype": ["float16", "float32", "int64"], "axis": [0, 2, -1, -2, -3],
                        "is_ascend": [True, False, 0, 1, None], "k": [1, 4],
                        "dtype_i": ["float32", "int32", "int64"],
                        "ret_typ": ["value", "indices", "both"]})
def _(rng, c):
    kw = {} if c["is_ascend"] is None else {"is_ascend": c["is_ascend"]}
    # distinct values: ties make the order of equal elements implementation-defined
    x = rng.permutation(120).reshape((4, 5, 6)).astype(c["dtype"])
    return one([x], axis=c["axis"], k=c["k"], dtype=c["dtype_i"], ret_typ=c["ret_typ"], **kw)


def _link1(F, x):
    out1, out2 = F.topk(x, k=3, ret_typ="both")
    return out1 ** 2, out2 ** 3


@entry("link_op_with_multiple_outputs", None, {"case": [1, 2, 3]})
def _(rng, c):
    fns = {1: _link1, 2: lambda F, x: F.topk(x, k=3, ret_typ="value") ** 3,
           3: lambda F, x: F.topk(x, k=3, ret_typ="indices") ** 3}
    x = rng.permutation(120).reshape((4, 5, 6)).astype("float32")
    return {"inputs": [x], "params": {}, "op": fns[c["case"]]}


def _with_right(op_name: str):
    """``F.<op>(x, right=5)`` as MXNet's test calls it (sym.maximum(left, right)); the
    imperative reference calls nd.maximum, whose parameters are (lhs, rhs), as in MXNet."""

    def fn(F, x):
        if hasattr(F, "Variable"):  # the symbol namespace
            return getattr(F, op_name)(x, right=5)
        return getattr(F, op_name)(x, rhs=5)

    return fn


for _op in ("maximum", "minimum"):
    @entry(f"{_op}_scalar", _op, {"dtype": ["float16", "float32", "float64"],
                                  "shape": [(3, 4, 5), (1, 4, 1, 7)]})
    def _(rng, c, _op=_op):
        return {**one([u(rng, 0, 10, c["shape"], c["dtype"])]), "op": _with_right(_op)}


@entry("contrib_box_decode", "contrib.box_decode", {"dtype": ["float16", "float32"],
                                                    "fmt": ["corner", "center"],
                                                    "clip": [-1., 0., .5, 5.],
                                                    "std": [False, True]})
def _(rng, c):
    # MXNet's test builds the std0..std3 model but exports the first one twice; both run here
    mul = np.array([-1, -1, 1, 1], c["dtype"])
    data = u(rng, 0, 1, (2, 3, 4), c["dtype"]) * mul
    anchors = u(rng, 0, 1, (1, 3, 4), c["dtype"]) * mul
    std = {"std0": 0.3, "std1": 1.4, "std2": 0.5, "std3": 1.6} if c["std"] else {}
    return {**one([data, anchors], format=c["fmt"], clip=c["clip"], **std),
            "tol": (1e-2, 1e-2) if c["dtype"] == "float16" else None}


@entry("contrib_AdaptiveAvgPooling2D", "contrib.AdaptiveAvgPooling2D",
       {"dtype": ["float16", "float32"], "output_size": [None, 1, [1], [1, 1]]})
def _(rng, c):
    x = u(rng, 0, 1, (1, 2, 3, 4), c["dtype"])
    return one([x]) if c["output_size"] is None else one([x], output_size=c["output_size"])


TWO_SHAPES = [((3, 3, 3), (1, 3)), ((4, 5, 6, 7), (6, 7))]


@entry("broadcast_mod", "broadcast_mod", {"dtype": ["float16", "float32", "int32", "int64"],
                                          "shapes": TWO_SHAPES})
def _(rng, c):
    a = u(rng, -300, 300, c["shapes"][0]).astype(c["dtype"])
    b = u(rng, -30, 30, c["shapes"][1]).astype(c["dtype"])
    b[-1] = 0  # MXNet's test divides by zero on purpose
    return {**one([a, b]), "tol": (1e-2, 1.0) if c["dtype"] == "float16" else None}


@entry("reshape_like", "reshape_like", {"dtype": ALL5, "params": [
    {}, {"lhs_begin": 0, "lhs_end": 2, "rhs_begin": 1, "rhs_end": 2},
    {"lhs_begin": -4, "lhs_end": -2, "rhs_begin": -3, "rhs_end": -2},
    {"lhs_begin": 0, "lhs_end": None, "rhs_begin": 1, "rhs_end": None}]})
def _(rng, c):
    d = c["dtype"]
    return one([num(rng, 0, 10, (2, 2, 3, 2), d), num(rng, 0, 10, (1, 4, 3, 2), d)],
               **c["params"])


@entry("gather_nd", "gather_nd", {"dtype": ALL5, "idx_shape": [(4, 4, 4), (2, 3, 4)]})
def _(rng, c):
    d = c["dtype"]
    return one([u(rng, -100, 100, (4, 5, 6, 7)).astype(d), ri(rng, -4, 4, c["idx_shape"], d)])


@entry("upsampling", "UpSampling", {"dtype": ["float16", "float32"],
                                    "shape": [(3, 4, 5, 6), (1, 1, 1, 1)], "scale": [1, 2, 3]})
def _(rng, c):
    return one([u(rng, 0, 1, c["shape"], c["dtype"])], scale=c["scale"], sample_type="nearest",
               num_args=1)


@entry("swap_axis", "SwapAxis", {"dtype": ALL5, "params": [
    ((4, 5, 6), (0, 2)), ((4, 5, 6), (0, 1)), ((1, 2, 3, 4, 1), (0, 4)), ((4, 5, 1, 6), (0, 2))]})
def _(rng, c):
    shape, (d1, d2) = c["params"]
    return one([u(rng, -100, 100, shape).astype(c["dtype"])], dim1=d1, dim2=d2)


@entry("slice_like", "slice_like", {"dtype": ALL5, "axes": [None, (0, 1, 2), (-2, -3), (-2, 0)],
                                    "like": [(2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6)]})
def _(rng, c):
    x = u(rng, 0, 1, (4, 5, 6, 7)).astype(c["dtype"])
    if c["axes"] is None:  # MXNet runs only the 4-d like-shape without axes
        return {**one([x, np.zeros((2, 3, 4, 5), c["dtype"])]), "skip": c["like"] != (2, 3, 4, 5)}
    return one([x, np.zeros(c["like"], c["dtype"])], axes=c["axes"])


@entry("slice_channel_v1", "SliceChannel", {"dtype": ["float16", "float32", "int32", "int64"],
                                            "axis": [None, 0, 2, -1], "num_outputs": [2, 5]})
def _(rng, c):
    x = np.zeros((10, 20, 30, 40), c["dtype"])
    kw = {} if c["axis"] is None else {"axis": c["axis"]}
    return one([x], num_outputs=c["num_outputs"], **kw)


AXES4 = [[1, 3], [3, 1], [-2, -4], [-4, -2]]


@entry("broadcast_like", "broadcast_like", {"dtype": ALL5, "lhs_axes": AXES4, "rhs_axes": AXES4,
                                            "axes_given": [False, True]})
def _(rng, c):
    d = c["dtype"]
    ins = [rng.normal(0, 10, (2, 1, 1, 1, 6)).astype(d), rng.normal(0, 10, (2, 3, 4, 5, 6))
           .astype(d)]
    if not c["axes_given"]:
        return one(ins)
    return one(ins, lhs_axes=c["lhs_axes"], rhs_axes=c["rhs_axes"])


@entry("contrib_ROIAlign", "contrib.ROIAlign", {"pooled_size": [(1, 1), (3, 3), (14, 14), (5, 7)],
                                                "spatial_scale": [1, 0.5, 0.0625],
                                                "sample_ratio": [1, 2, 3, 5]})
def _(rng, c):
    rois = np.array([[-1, 0, 0, 0, 0], [0, 0, 0, 63, 63], [1, 34, 52, 25, 85],
                     [2, 50, 50, 100, 100], [3, 0, 0, 127, 127], [4, 12, 84, 22, 94],
                     [0, 0, 0, 1, 1]], "float32")
    # (MXNet uses a 5x3x512x512 map; the rois reach 127, so 128x128 exercises the same cells)
    return {**one([u(rng, 0, 1, (5, 3, 128, 128)), rois], pooled_size=c["pooled_size"],
                  spatial_scale=c["spatial_scale"], sample_ratio=c["sample_ratio"]),
            "zero_first": True, "tol": (1e-4, 1e-4)}


@entry("batch_dot", "batch_dot", {"dtype": ["float32", "float64"], "transpose_a": [True, False],
                                  "transpose_b": [True, False], "case": [1, 2]})
def _(rng, c):
    d = c["dtype"]
    if c["case"] == 1:
        return one([rng.normal(0, 10, (2, 3, 4, 5, 6)).astype(d),
                    rng.normal(0, 10, (2, 3, 4, 6, 5)).astype(d)])
    return one([rng.normal(0, 10, (2, 3, 4, 5, 5)).astype(d),
                rng.normal(0, 10, (2, 3, 4, 5, 5)).astype(d)],
               transpose_a=c["transpose_a"], transpose_b=c["transpose_b"])


def _pool_kwargs(c: dict, nd: int) -> dict:
    kw = {k: c[k] for k in ("kernel", "stride", "pad") if c.get(k)}
    kw["layout"] = "NCHW" if nd == 2 else "NCDHW"
    return kw


def _pad_too_big(c: dict) -> bool:
    return bool(c["pad"]) and any(p >= k for p, k in zip(c["pad"], c["kernel"]))


POOL2 = {"shape": [(1, 3, 64, 64), (2, 1, 60, 60)], "kernel": [(3, 3), (4, 5), (14, 14)],
         "stride": [None, (1, 1), (2, 2), (3, 4), (4, 5)],
         "pad": [None, (1, 1), (3, 4), (4, 5)]}
POOL3 = {"shape": [(1, 3, 16, 16, 16), (1, 1, 10, 18, 18)],
         "kernel": [(1, 1, 1), (3, 3, 3), (1, 7, 7)], "stride": [None, (1, 1, 1), (1, 2, 3)],
         "pad": [None, (0, 1, 1), (1, 2, 3)]}


def _pool(kind: str, nd: int):
    def build(rng, c):
        skip = _pad_too_big(c) or (kind == "avg" and c["pooling_convention"] == "full"
                                   and c["count_include_pad"])
        kw = _pool_kwargs(c, nd)
        if kind == "avg":
            kw.update(count_include_pad=c["count_include_pad"],
                      pooling_convention=c["pooling_convention"])
        elif kind == "max":
            kw.update(pooling_convention=c["pooling_convention"])
        else:
            kw.update(pooling_convention="valid", p_value=c["p_value"])
        return {**one([u(rng, 0, 1, c["shape"])], pool_type=kind, **kw), "skip": skip,
                "check": "nan_to_num" if kind == "avg" else None}

    return build


for _nd, _axes in ((2, POOL2), (3, POOL3)):
    _sfx = "" if _nd == 2 else "_3d"
    entry(f"pooling_avg{_sfx}", "Pooling", {**_axes, "count_include_pad": [True, False],
                                             "pooling_convention": ["full", "valid"]})(
        _pool("avg", _nd))
    entry(f"pooling_max{_sfx}", "Pooling", {**_axes, "pooling_convention": ["full", "valid"]})(
        _pool("max", _nd))
    entry(f"pooling_lp{_sfx}", "Pooling", {**_axes, "p_value": [1, 2]})(_pool("lp", _nd))


def _pool_global(nd: int):
    def build(rng, c):
        kw = _pool_kwargs(c, nd)
        return {**one([u(rng, 0, 1, c["shape"])], global_pool=True, pool_type=c["pool_type"],
                      pooling_convention="valid", p_value=c["p_value"], **kw),
                "skip": _pad_too_big(c)}

    return build


entry("pooling_global", "Pooling", {
    "shape": POOL2["shape"], "pool_type": ["avg", "max", "lp"], "p_value": [1, 2],
    "kernel": [(3, 3), (14, 14)], "stride": [None, (3, 4)], "pad": [None, (3, 4)]})(
    _pool_global(2))
entry("pooling_global_3d", "Pooling", {
    "shape": POOL3["shape"], "pool_type": ["avg", "max", "lp"], "p_value": [1, 2],
    "kernel": [(1, 1, 1), (3, 3, 3)], "stride": [None, (1, 1, 1)], "pad": [None, (0, 1, 1)]})(
    _pool_global(3))


@entry("log2", "log2", {"dtype": ["float16", "float32"]})
def _(rng, c):
    return one([rng.normal(0, 10, (2, 3, 4, 5)).astype(c["dtype"])])


@entry("sum", None, {"dtype": ALL5, "axis": [None, 1, [1, 2], -1], "operator": ["sum",
                                                                               "sum_axis"]})
def _(rng, c):
    d = c["dtype"]
    x = ri(rng, 0, 10, (5, 6, 7, 8), d) if "int" in d else rng.normal(0, 10, (5, 6, 7, 8)) \
        .astype(d)
    kw = {} if c["axis"] is None else {"axis": c["axis"]}
    tol = (1e-2, 1.0) if d == "float16" else None
    return {"inputs": [x], "params": kw, "op": c["operator"], "tol": tol}


@entry("broadcast_mul", "broadcast_mul", {"dtype": ALL5})
def _(rng, c):
    return one([np.array([[1, 2, 3], [4, 5, 6]], c["dtype"]), np.array([[0], [3]], c["dtype"])])


@entry("dropout_v2", "Dropout", {"dtype": ["float16", "float32", "float64"],
                                 "shape": [(3, 4, 5), (1, 2, 3, 2, 1)], "p": [0, 0.1, 0.5, 1]})
def _(rng, c):
    return one([u(rng, -100, 100, c["shape"]).astype(c["dtype"])], p=c["p"])


def _conv(kind: str, nd: int):
    def build(rng, c):
        shape = c["shape"]
        g, nf = c["num_group"], c["num_filter"]
        skip = shape[1] % g != 0
        if kind == "Deconvolution":
            skip = skip or any(s <= a for s, a in zip(c["stride"], c["adj"])) or nf % g != 0
            w_shape = (shape[1], nf // g) + c["kernel"]
        else:
            w_shape = (nf, shape[1] // g) + c["kernel"]
        ins = [u(rng, 0, 1, shape), u(rng, 0, 1, w_shape)]
        if not c["no_bias"]:
            ins.append(u(rng, 0, 1, (nf,)))
        kw = {k: c[k] for k in ("kernel", "stride", "pad", "dilate", "adj") if c.get(k)}
        return {**one(ins, num_filter=nf, num_group=g, no_bias=c["no_bias"],
                      layout="NCHW" if nd == 2 else "NCDHW", **kw), "skip": skip,
                "tol": (1e-4, 1e-3)}

    return build


entry("convolution", "Convolution", {
    "shape": [(1, 3, 64, 64), (2, 6, 60, 60)], "num_filter": [2, 4, 32], "num_group": [1, 2],
    "no_bias": [True, False], "kernel": [(3, 3), (4, 5), (14, 14)],
    "stride": [None, (1, 1), (2, 2), (3, 4), (4, 5)], "pad": [None, (1, 1), (3, 4), (4, 5)],
    "dilate": [None, (1, 1)]})(_conv("Convolution", 2))
entry("convolution_3D", "Convolution", {
    "shape": [(1, 4, 16, 16, 16), (1, 3, 10, 18, 18)], "num_filter": [2, 4, 32],
    "num_group": [1, 2], "no_bias": [True, False], "kernel": [(3, 3, 3), (1, 1, 1), (1, 7, 7)],
    "stride": [None, (1, 1, 1), (1, 2, 3)], "pad": [None, (0, 1, 1), (1, 2, 3)],
    "dilate": [None, [2, 2, 2]]})(_conv("Convolution", 3))


@entry("slice_channel_v2", "SliceChannel", {"dtype": ["float16", "float32"],
                                            "num_outputs": [1, 3, 9], "axis": [1, 2, -1, -2],
                                            "squeeze_axis": [True, False, 0, 1]})
def _(rng, c):
    shape = (3, 9, 18)
    skip = bool(c["squeeze_axis"]) and shape[c["axis"]] != c["num_outputs"]
    return {**one([u(rng, 0, 1, shape, c["dtype"])], num_outputs=c["num_outputs"],
                  axis=c["axis"], squeeze_axis=c["squeeze_axis"]), "skip": skip}


@entry("batchnorm", "BatchNorm", {"dtype": ["float32", "float64"], "momentum": [0.9, 0.5, 0.1]})
def _(rng, c):
    d = c["dtype"]
    ins = [rng.normal(0, 10, s).astype(d) for s in ((2, 3, 4, 5), 3, 3, 3)]
    ins.append(np.abs(rng.normal(0, 10, 3)).astype(d))
    return one(ins, eps=1e-5, momentum=c["momentum"], fix_gamma=False, use_global_stats=False)


@entry("argsort", "argsort", {"dtype": ["float32", "int64"], "axis": [0, 2, -1, -2, -3],
                              "is_ascend": [True, False, 0, 1, None],
                              "dtype_i": ["float32", "int32", "int64"]})
def _(rng, c):
    kw = {} if c["is_ascend"] is None else {"is_ascend": c["is_ascend"]}
    x = rng.permutation(120).reshape((4, 5, 6)).astype(c["dtype"])
    return one([x], axis=c["axis"], dtype=c["dtype_i"], **kw)


@entry("tile", "tile", {"dtype": ALL5, "reps": [(2, 3), (2,), (2, 3, 4)]})
def _(rng, c):
    return one([rng.normal(0, 100, (5, 6)).astype(c["dtype"])], reps=c["reps"])


@entry("take", "take", {"dtype": ALL5, "axis": [-3, -2, -1, 0, 1, 2], "mode": ["clip", "wrap"],
                        "defaults": [True, False]})
def _(rng, c):
    d = c["dtype"]
    ins = [rng.normal(0, 10, (3, 4, 5)).astype(d), ri(rng, -100, 100, (6, 7), d)]
    return one(ins) if c["defaults"] else one(ins, axis=c["axis"], mode=c["mode"])


@entry("take_raise", "take", {"dtype": ALL5, "axis": [-3, -2, -1, 0, 1, 2]})
def _(rng, c):
    d = c["dtype"]
    return one([rng.normal(0, 10, (3, 4, 5)).astype(d), ri(rng, 0, 3, (6, 7), d)],
               axis=c["axis"], mode="raise")


@entry("one_hot", "one_hot", {"dtype": ["float16", "float32", "int64"], "depth": [1, 3, 5, 10],
                              "shape": [(1, 1), (1, 5), (5, 5), (3, 4, 5)]})
def _(rng, c):
    return one([ri(rng, 0, 10, c["shape"], "int64")], depth=c["depth"], dtype=c["dtype"])


@entry("sequence_reverse", "SequenceReverse", {"dtype": ALL5, "params": [
    ((6, 5, 4), [1, 2, 4, 5, 6]), ((7, 3, 5), [1, 7, 4]), ((3, 2, 1), [1, 2])],
    "use_length": [False, True]})
def _(rng, c):
    shape, lengths = c["params"]
    x = u(rng, 0, 10, shape).astype(c["dtype"])
    if not c["use_length"]:
        return one([x])
    return one([x, np.array(lengths, "float32")], use_sequence_length=True)


@entry("RNN", "RNN", {"mode": ["lstm", "gru", "rnn_tanh", "rnn_relu"], "state_size": [16, 32],
                      "input_size": [16, 32, 64], "num_layers": [1, 2], "batch_size": [1, 2, 4],
                      "bidirectional": [True, False]})
def _(rng, c):
    mode, h, i, nl = c["mode"], c["state_size"], c["input_size"], c["num_layers"]
    bi = c["bidirectional"]
    skip = (nl >= 2 and i != h) or (bi and (mode != "lstm" or nl != 1))
    b = 2 if bi else 1
    f = {"gru": 3, "lstm": 4}.get(mode, 1)
    n_param = b * nl * f * h * i + b * nl * f * h * h + b * nl * 2 * f * h
    ins = [rng.normal(0, 10, (16, c["batch_size"], i)).astype("float32"),
           rng.normal(0, 1, n_param).astype("float32"),
           u(rng, -1, 1, (b * nl, c["batch_size"], h))]
    if mode == "lstm":
        ins.append(u(rng, -1, 1, (b * nl, c["batch_size"], h)))
    tol = {"rnn_relu": (1e-3, 1e20), "lstm": (1e-4, 1e-3)}.get(mode, (1e-4, 1e-2))
    return {**one(ins, mode=mode, state_size=h, state_outputs=True, num_layers=nl, p=0,
                  bidirectional=bi), "skip": skip, "tol": tol}


for _op in ("broadcast_lesser_equal", "broadcast_greater_equal"):
    @entry(_op, _op, {"dtype": ["float16", "float32", "int32", "int64"], "shapes": TWO_SHAPES})
    def _(rng, c):
        return one([u(rng, 0, 5, s).astype("int32").astype(c["dtype"]) for s in c["shapes"]])


SHAPES3 = [(3, 4, 5), (6, 7), (8,)]


@entry("contrib_div_sqrt_dim", "contrib.div_sqrt_dim", {"dtype": ["float16", "float32",
                                                                  "float64"], "shape": SHAPES3})
def _(rng, c):
    return one([u(rng, -100, 100, c["shape"]).astype(c["dtype"])])


@entry("ufunc_v1", None, {"dtype": ["float16", "float32"], "shape": SHAPES3,
                          "operator": ["sin", "cos", "tan", "tanh", "arcsin", "arccos", "arctan",
                                       "sigmoid", "relu", "exp", "identity", "BlockGrad",
                                       "MakeLoss"]})
def _(rng, c):
    x = u(rng, -100, 100, c["shape"]).astype(c["dtype"])
    tol = (1e-2, 1e-1) if c["dtype"] == "float16" else None
    if c["operator"] == "tan":  # tan of float16 near its poles differs by float16 ulps
        tol = (5e-2, 1.0) if c["dtype"] == "float16" else (1e-3, 1e-3)
    return {"inputs": [x], "params": {}, "op": c["operator"], "tol": tol}


entry("deconvolution", "Deconvolution", {
    "shape": [(1, 3, 64, 64), (2, 6, 60, 60)], "num_filter": [4, 16, 256], "num_group": [1, 2],
    "no_bias": [False, True], "kernel": [(2, 2), (3, 4)], "stride": [(1, 1), (2, 2)],
    "pad": [None, (0, 0), (1, 1)], "dilate": [None, (1, 1)], "adj": [(0, 0), (1, 1)]})(
    _conv("Deconvolution", 2))


@entry("pad", "pad", {"dtype": ["float32", "float16", "float64"],
                      "mode": ["edge", "constant", "reflect"],
                      "params": [((3, 4, 5, 6), (0, 0, 0, 0, 2, 3, 4, 5)),
                                 ((7, 6, 5, 4, 3), (0, 0, 0, 0, 4, 4, 3, 3, 2, 1))]})
def _(rng, c):
    shape, width = c["params"]
    return one([u(rng, 0, 1, shape, c["dtype"])], mode=c["mode"], constant_value=9999.55,
               pad_width=width)


@entry("dot", "dot", {"dtype": ["float32", "float64"], "params": [
    ((4, 5), (5, 6), False, False), ((5, 4), (5, 6), True, False), ((5, 4), (6, 5), True, True),
    ((4, 5), (6, 5), False, True), ((4, 5), 5, False, False), ((4,), (4, 5), False, False),
    ((4, 5), (5,), False, False)]})
def _(rng, c):
    a, b, ta, tb = c["params"]
    d = c["dtype"]
    return one([u(rng, 0, 1, a, d), u(rng, 0, 1, b, d)], transpose_a=ta, transpose_b=tb)


@entry("flatten", "flatten", {"dtype": F4I, "shape": [(3, 4, 5, 6), (7, 8)]})
def _(rng, c):
    return one([u(rng, 0, 1, c["shape"]).astype(c["dtype"])])


@entry("linalg_gemm2", "linalg.gemm2", {"dtype": ["float32", "float64"], "alpha": [1, 1.5],
                                        "params": [((4, 5), (5, 4), False, False),
                                                   ((4, 5, 6), (4, 6, 5), False, False),
                                                   ((4, 5, 6, 7), (4, 5, 6, 7), True, False),
                                                   ((4, 5, 6, 7), (4, 5, 6, 7), False, True),
                                                   ((4, 5, 9, 7), (4, 5, 6, 9), True, True)]})
def _(rng, c):
    a, b, ta, tb = c["params"]
    d = c["dtype"]
    return one([u(rng, 0, 1, a, d), u(rng, 0, 1, b, d)], alpha=c["alpha"], transpose_a=ta,
               transpose_b=tb)


@entry("LogisticRegressionOutput", "LogisticRegressionOutput", {"shape": SHAPES3})
def _(rng, c):
    return one([u(rng, 0, 1, c["shape"]), np.zeros(c["shape"], "float32")])


@entry("SoftmaxOutput", "SoftmaxOutput", {"dtype": ["float32", "float64"],
                                          "shape": [(4, 5, 6), (6, 7), (3, 4, 5, 6, 7)]})
def _(rng, c):
    s, d = c["shape"], c["dtype"]
    return one([u(rng, 0, 1, s, d), np.zeros(s[:-1], d)])


@entry("L2Normalization", "L2Normalization", {"shape": [(3, 4, 5), (3, 4, 5, 6, 7)]})
def _(rng, c):
    return one([u(rng, 0, 1, c["shape"])], mode="channel")


@entry("InstanceNorm", "InstanceNorm", {"shape": [(3, 4, 5), (3, 4, 5, 6, 7)],
                                        "eps": [0.001, 0.00001]})
def _(rng, c):
    s = c["shape"]
    return {**one([u(rng, 0, 1, s), u(rng, 0, 1, s[1:2]), u(rng, 0, 1, s[1:2])], eps=c["eps"]),
            "tol": (1e-4, 1e-3)}


@entry("LRN", "LRN", {"alpha": [0.001, 0.00001], "beta": [0.75, 0.8], "knorm": [1, 2],
                      "nsize": [3, 5]})
def _(rng, c):
    return one([u(rng, 0, 1, (4, 5, 6, 7))], alpha=c["alpha"], beta=c["beta"], knorm=c["knorm"],
               nsize=c["nsize"])


@entry("Crop", "Crop", {"shape": [(1, 3, 224, 224), (5, 6, 64, 64)], "h_w": [(10, 10), (7, 11)],
                        "offset": [(7, 13), (10, 10)], "shape2": [None, (10, 10, 16, 16)]})
def _(rng, c):
    ins = [u(rng, 0, 1, c["shape"])]
    if c["shape2"] is not None:
        ins.append(u(rng, 0, 1, c["shape2"]))
    return one(ins, h_w=c["h_w"], offset=c["offset"], center_crop=False)


@entry("reciprocal", "reciprocal", {"dtype": ["float16", "float32"],
                                    "shape": [(100,), (3, 4, 5), (6, 7)]})
def _(rng, c):
    return {**one([u(rng, -100, 100, c["shape"]).astype(c["dtype"])]),
            "tol": (1e-2, 1e-3) if c["dtype"] == "float16" else None}


for _op in ("_internal._power", "broadcast_power"):
    @entry(_op.split(".")[-1].lstrip("_"), _op, {"dtype": ALL5, "shape": [(1, 3), (3, 4, 5)]})
    def _(rng, c):
        d = c["dtype"]
        x, y = u(rng, -5, 5, c["shape"]).astype(d), u(rng, -10, 10, c["shape"]).astype(d)
        if "int" in d:  # a negative integer exponent is undefined for integer types
            y = np.abs(y)
        return {**one([x, y]), "tol": (1e-2, 1e-1) if d == "float16" else (2e-6, 1e-6)}


@entry("sqrt", "sqrt", {"dtype": ["float16", "float32", "float64"], "shape": SHAPES3})
def _(rng, c):
    return one([u(rng, -100, 100, c["shape"]).astype(c["dtype"])])


@entry("depth_to_space", "depth_to_space", {"dtype": ["float16", "float32"],
                                            "params": [((1, 4, 2, 3), 1), ((1, 4, 2, 3), 2)]})
def _(rng, c):
    shape, block = c["params"]
    return one([arange(int(np.prod(shape)), shape, c["dtype"])], block_size=block)


@entry("space_to_depth", "space_to_depth", {"dtype": ["float16", "float32"],
                                            "params": [((1, 4, 2, 3), 1), ((1, 1, 4, 6), 2)]})
def _(rng, c):
    shape, block = c["params"]
    return one([arange(int(np.prod(shape)), shape, c["dtype"])], block_size=block)


SHAPES_A = [(10,), (1, 2, 3), (4, 5, 6)]


for _op in ("square", "shape_array"):
    @entry(_op, _op, {"dtype": ALL5, "shape": SHAPES_A})
    def _(rng, c):
        return one([arange(int(np.prod(c["shape"])), c["shape"], c["dtype"])])


@entry("hard_sigmoid", "hard_sigmoid", {"dtype": ["float16", "float32"], "shape": SHAPES_A,
                                        "alpha": [None, 0.1, 0.4567, 0.9],
                                        "beta": [None, 0.1, 0.4567, 0.5, 0.9]})
def _(rng, c):
    kw = {k: c[k] for k in ("alpha", "beta") if c[k] is not None}
    return one([arange(int(np.prod(c["shape"])), c["shape"], c["dtype"])], **kw)


for _op in ("broadcast_lesser", "broadcast_greater"):
    @entry(_op, _op, {"dtype": ALL5, "shape": SHAPES_A})
    def _(rng, c):
        return one([u(rng, -100, 100, c["shape"]).astype(c["dtype"]) for _ in range(2)])


@entry("log_softmax", "log_softmax", {"dtype": ["float16", "float32"],
                                      "shape": [(10, 5), (1, 2, 3), (4, 5, 6)], "axis": [None, 1]})
def _(rng, c):
    kw = {} if c["axis"] is None else {"axis": c["axis"]}
    return {**one([u(rng, 0, 1, c["shape"], c["dtype"])], **kw),
            "tol": (1e-2, 1e-2) if c["dtype"] == "float16" else None}


for _op in ("broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor"):
    @entry(_op, _op, {"dtype": ALL5, "shape": [(10,), (2, 3), (4, 5, 6)]})
    def _(rng, c):
        return one([u(rng, -1, 1, c["shape"]).astype(c["dtype"]) for _ in range(2)])


@entry("broadcast_to", "broadcast_to", {"dtype": ALL5, "shapes": [
    [(1, 3), (2, 3)], [(2, 1, 3, 1), (2, 8, 3, 9)], [(1, 3, 6), (5, 3, 6)]]})
def _(rng, c):
    src, to = c["shapes"]
    return one([u(rng, -100, 100, src).astype(c["dtype"])], shape=to)


@entry("clip", "clip", {"dtype": ["float16", "float32", "int64"],
                        "shape": [(1,), (2, 3), (4, 5, 6)]})
def _(rng, c):
    x = u(rng, -100, 100, c["shape"]).astype(c["dtype"])
    lo, hi = float(x.astype("float32").min()) + 5, float(x.astype("float32").max()) - 5
    return one([x], a_min=lo, a_max=hi)


def _scalar_funcs(s: np.float64) -> list:
    """MXNet's seven lambdas; ``s`` is a numpy float64 (np.random.rand(1)[0]), so three of them
    put a numpy scalar on the left of the Symbol while the block is traced."""
    return [lambda F, x: x + s * 100, lambda F, x: x * s * 100, lambda F, x: x - s * 100,
            lambda F, x: s * 100 - x, lambda F, x: x / (s * 100 + 1),
            lambda F, x: s * 100 / x, lambda F, x: x ** s * 10]


@entry("scalar_op", None, {"dtype": ["float16", "float32", "int32", "int64"], "shape": SHAPES3,
                           "func": list(range(7))})
def _(rng, c):
    x = u(rng, 1, 100, c["shape"]).astype(c["dtype"])
    fn = _scalar_funcs(np.float64(rng.rand()))[c["func"]]
    return {"inputs": [x], "params": {}, "op": fn,
            "tol": (1e-2, 1e-1) if c["dtype"] == "float16" else (1e-5, 1e-5)}


@entry("arg_max_min", None, {"dtype": ["float16", "float32", "int32"],
                             "shape": [(1, 1, 1), (2, 3, 4), (5, 6, 7, 8)],
                             "axis": ["None", 0, 1, 2, -1, -2], "keepdims": [True, False],
                             "op_name": ["argmax", "argmin"]})
def _(rng, c):
    n = int(np.prod(c["shape"]))
    x = rng.permutation(n).reshape(c["shape"]).astype(c["dtype"])  # no ties
    return {"inputs": [x], "params": {"axis": c["axis"], "keepdims": c["keepdims"]},
            "op": c["op_name"], "skip": c["dtype"] == "float16" and n > 2048}


@entry("maximum_minimum", None, {"dtype": ["float16", "float32", "int32", "int64"],
                                 "shape": [(2, 3), (5, 4)], "op_name": ["maximum", "minimum"]})
def _(rng, c):
    return {"inputs": [u(rng, 1, 100, c["shape"]).astype(c["dtype"]) for _ in range(2)],
            "params": {}, "op": c["op_name"]}


@entry("reduce_op", None, {"dtype": ["float16", "float32", "int32", "int64"],
                           "shape": [(2, 3), (4, 5, 6)], "axis": [None, 0, 1, -1, (0, 1)],
                           "keepdims": [True, False], "op_name": ["max", "min", "mean", "prod"]})
def _(rng, c):
    skip = c["dtype"] == "int64" and c["op_name"] == "mean"
    x = u(rng, 1, 100, c["shape"]).astype(c["dtype"])
    if c["op_name"] == "prod":
        # MXNet's values (1..99) overflow every dtype over 120 elements, where onnxruntime
        # saturates integer ReduceProd at INT_MAX and numpy (and MXNet) wrap around: keep the
        # products representable (floats near 1; integers: ones with at most ten 2s and 3s)
        if "float" in c["dtype"]:
            x = u(rng, 0.5, 1.5, c["shape"]).astype(c["dtype"])
        else:
            x = np.ones(c["shape"], c["dtype"])
            x.flat[rng.choice(x.size, min(10, x.size), replace=False)] = rng.randint(2, 4, min(
                10, x.size))
    tol = (1e-2, 1e-1) if c["dtype"] == "float16" else None
    return {"inputs": [x], "params": {"axis": c["axis"], "keepdims": c["keepdims"]},
            "op": c["op_name"], "skip": skip, "tol": tol}


@entry("elemwise_op", None, {"dtype": ALL5, "shape": [(1,), (3,), (4, 5), (3, 4, 5)],
                             "op_name": ["elemwise_add", "elemwise_sub", "elemwise_mul",
                                         "elemwise_div"]})
def _(rng, c):
    tol = (1e-2, 1e-1) if c["dtype"] == "float16" else None
    return {"inputs": [u(rng, 1, 100, c["shape"]).astype(c["dtype"]) for _ in range(2)],
            "params": {}, "op": c["op_name"], "tol": tol}


@entry("broadcast_op", None, {"dtype": ALL5, "shape": [[(3, 4), (3, 4)], [(3, 4), (3, 1)],
                                                       [(3, 4), 4]],
                              "op_name": ["broadcast_sub", "broadcast_div"]})
def _(rng, c):
    tol = (1e-2, 1e-1) if c["dtype"] == "float16" else None
    return {"inputs": [u(rng, 1, 100, s).astype(c["dtype"]) for s in c["shape"]],
            "params": {}, "op": c["op_name"], "tol": tol}


SHAPES_N = [(1,), (3,), (4, 5), (3, 4, 5)]


@entry("negative", "negative", {"dtype": ALL5, "shape": SHAPES_N})
def _(rng, c):
    return one([u(rng, -100, 100, c["shape"]).astype(c["dtype"])])


@entry("addn", "add_n", {"dtype": ["float16", "float32"], "shape": SHAPES_N})
def _(rng, c):
    return one([u(rng, -100, 100, c["shape"]).astype(c["dtype"])])


@entry("ufunc_v2", None, {"dtype": ["float16", "float32"], "shape": SHAPES_N,
                          "op_name": ["ceil", "floor", "log"]})
def _(rng, c):
    return {"inputs": [u(rng, -100, 100, c["shape"]).astype(c["dtype"])], "params": {},
            "op": c["op_name"]}


@entry("squeeze", "squeeze", {"dtype": ALL5, "shape_axis": [
    [(1, 1), None], [(3, 1, 2, 1), None], [(3, 1, 2, 1), 1], [(3, 1, 2, 1), (1, 3)]]})
def _(rng, c):
    shape, axis = c["shape_axis"]
    return one([u(rng, 1, 100, shape).astype(c["dtype"])], axis=axis)


@entry("norm", "norm", {"dtype": ["float16", "float32"], "order": [1, 2], "keepdims": [0, 1],
                        "axis": [None, 0, 1, 2, -1, (0, 2), (0, 1, 2)],
                        "shape": [(4, 5, 6), (3, 4, 5, 6)]})
def _(rng, c):
    kw = {"ord": c["order"], "keepdims": c["keepdims"]}
    if c["axis"] is not None:
        kw["axis"] = c["axis"]
    return {**one([rng.normal(0, 10, c["shape"]).astype(c["dtype"])], **kw),
            "tol": (1e-2, 1.0) if c["dtype"] == "float16" else (1e-4, 1e-3)}


@entry("logical_not", "logical_not", {"dtype": ALL5, "shape": [(10,), (2, 3), (4, 5, 6)]})
def _(rng, c):
    return one([u(rng, -1, 1, c["shape"]).astype(c["dtype"])])


@entry("random_uniform_like", "random.uniform_like", {"dtype": ["float16", "float32", "float64"],
                                                      "shape": SHAPES_A})
def _(rng, c):
    return {**one([np.zeros(c["shape"], c["dtype"])]), "check": "range"}


@entry("random_uniform", "random_uniform", {"dtype": ["float32", "float64"], "shape": SHAPES_A})
def _(rng, c):
    return {**one([np.array([1], "float32")], low=-10, high=10, shape=c["shape"],
                  dtype=c["dtype"]), "dummy": True, "check": "range"}


@entry("random_normal", "random_normal", {"dtype": ["float32", "float64"], "shape": SHAPES_A,
                                          "loc": [None, 0, 1, 2], "scale": [None, 1, 2]})
def _(rng, c):
    kw = {k: c[k] for k in ("loc", "scale") if c[k] is not None}
    return {**one([np.array([1], "float32")], dtype=c["dtype"], shape=c["shape"], **kw),
            "dummy": True, "check": "range"}


@entry("roi_pooling", "ROIPooling", {"dtype": ["float16", "float32"],
                                     "spatial_scale": [0.7, 1.0]})
def _(rng, c):
    return one([arange(48, (1, 1, 8, 6), c["dtype"]), np.array([[0, 0, 0, 4, 4]], c["dtype"])],
               pooled_size=(2, 2), spatial_scale=c["spatial_scale"])


@entry("rnn_param_concat", "_internal._rnn_param_concat",
       {"dtype": ALL5, "shape": [(1, 2, 3), (1, 10)], "axis": [None, 0, 1]})
def _(rng, c):
    kw = {} if c["axis"] is None else {"dim": c["axis"]}
    return one([u(rng, -1, 1, c["shape"]).astype(c["dtype"]) for _ in range(2)], **kw)


@entry("size_array", "size_array", {"dtype": ALL5, "shape": SHAPES_A})
def _(rng, c):
    return one([u(rng, -1, 1, c["shape"]).astype(c["dtype"])])


@entry("sample_multinomial", "sample_multinomial", {"dtype": ["float16", "float32"],
                                                    "shape": [(1, 5), (2, 10), (4, 5)],
                                                    "sample_shape": [1, 2]})
def _(rng, c):
    a = u(rng, 0, 1, c["shape"]).astype(c["dtype"])
    return {**one([a / a.sum(axis=1, keepdims=True)], shape=c["sample_shape"]),
            "check": "range"}


@entry("split_v2", "split_v2", {"dtype": ["float32", "int32", "int64"], "params": [
    ((2, 4, 6), (1,), 0, True), ((4, 5, 6), (2, 4), 1, False), ((4, 5, 6, 7), (0, 2, 4), 2, False),
    ((4, 5, 6, 7), 3, -2, False), ((2, 6, 8), 8, -1, True)]})
def _(rng, c):
    shape, ios, axis, squeeze = c["params"]
    return one([u(rng, 0, 10, shape).astype(c["dtype"])], indices_or_sections=ios, axis=axis,
               squeeze_axis=squeeze)


# --- combinations -----------------------------------------------------------------------------
def full_count(e: dict) -> int:
    """How many combinations MXNet's parametrize grid has for this entry."""
    n = 1
    for values in e["axes"].values():
        n *= len(values)
    return n


def combinations(e: dict, cap: int, seed: int) -> Iterator[dict]:
    """Every combination when there are at most ``cap``; otherwise an endless seeded stream
    whose first ``max(len(values))`` rows give every value of every axis at least once (each
    axis walks its values in its own shuffled order), then random rows. The caller stops after
    ``cap`` combinations that MXNet does not skip."""
    names = list(e["axes"])
    grid = [e["axes"][n] for n in names]
    if full_count(e) <= cap:
        for vals in itertools.product(*grid):
            yield dict(zip(names, vals))
        return
    rng = np.random.RandomState(seed)
    orders = [rng.permutation(len(v)) for v in grid]
    for i in range(max(len(v) for v in grid)):
        yield dict(zip(names, (v[o[i % len(v)]] for v, o in zip(grid, orders))))
    while True:
        yield dict(zip(names, (v[rng.randint(len(v))] for v in grid)))
