"""MXNet exporter-test entries, second half (pooling to split_v2, in MXNet's order); see
_mxnet_exporter_base.py for the format."""

from __future__ import annotations

import numpy as np

from tests.onnx._mxnet_exporter_base import (
    ALL5,
    F4I,
    TWO_SHAPES,
    arange,
    entry,
    one,
    ri,
    u,
)


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
