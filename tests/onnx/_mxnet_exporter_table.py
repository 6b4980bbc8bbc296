"""MXNet exporter-test entries, first half (creation, shape, nn, detection, pooling ops);
see _mxnet_exporter_base.py for the format."""

from __future__ import annotations

import numpy as np

from tests.onnx._mxnet_exporter_base import (
    ALL5,
    F4I,
    TWO_SHAPES,
    arange,
    entry,
    num,
    one,
    ri,
    u,
)


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
