"""ONNX export of Pooling, Pooling_v1, AdaptiveAvgPooling2D, BilinearResize2D, Pad and Crop
(ops/nn/pool.py) against MXNet 1.9.1's goldens (tests/golden/ops/pool.npz), at opset 13
and the newest opset; plus what the table cannot say: windows where ONNX's ceil_mode and MXNet's
'full' convention differ, dynamic spatial dims, the ONNX ops chosen, dynamic batch.

Every row of the case table is exported (lowest and newest opset, weights as inputs and as
initializers) and imported back by the op test driver, tests/ops/test_ops.py; this file
keeps the export checks a row cannot express.
"""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import ConversionError
from gluonport.onnx import export_symbol
from tests._ort import avgpool_ceil_mode_differs
from tests.onnx._export_check import OPSETS, check_dynamic, export_case, run_ort
from tests.ops import cases_pool
from tests.ops._check import _compare, forward, load_golden

GOLDEN = load_golden("pool")
CASES = {c["name"]: c for c in cases_pool.CASES}


# --- the ONNX ops chosen -------------------------------------------------------------------------
def _ops(name: str, opset: int = 17) -> list[str]:
    model = export_case(CASES[name], GOLDEN[name], opset)[0]
    return [n.op_type for n in model.graph.node]


@pytest.mark.parametrize("name, ops", [
    ("max_valid_k2s2", ["MaxPool"]),
    ("max_pad1_resnet", ["MaxPool"]),
    ("avg_valid_pad1", ["AveragePool"]),
    ("avg_valid_pad1_exclude", ["AveragePool"]),
    ("avg_full_include", ["AveragePool", "Mul"]),  # MXNet's last-window divisor differs
    ("lp2_pad", ["LpPool"]),
    ("global_max", ["GlobalMaxPool"]),
    ("global_avg", ["GlobalAveragePool"]),
    ("global_lp2", ["ReduceL2"]),
    ("global_sum", ["ReduceSum"]),
    ("max_nhwc", ["Transpose", "MaxPool", "Transpose"]),
    ("max_float16", ["Cast", "MaxPool", "Cast"]),
    ("v1_max_pad_zeros", ["MaxPool", "Max"]),
    ("adaptive_default_1x1", ["GlobalAveragePool"]),
    ("adaptive_2x3", ["MatMul", "MatMul"]),
    ("resize_up_align", ["Resize"]),
    ("pad_reflect", ["Pad"]),
    ("crop_like_center", ["Slice"]),
])
def test_lowering(name, ops):
    assert _ops(name) == ops


@pytest.mark.parametrize("name", ["sum_float64", "adaptive_float64"])
def test_float64_avoids_ops_without_double_kernels(name):
    assert not {"AveragePool", "Resize"} & set(_ops(name))


def test_resize_no_align_is_pytorch_half_pixel():
    model = export_case(CASES["resize_down_no_align"], GOLDEN["resize_down_no_align"], 17)[0]
    attrs = {a.name: a.s.decode() for a in model.graph.node[-1].attribute if a.s}
    assert attrs["coordinate_transformation_mode"] == "pytorch_half_pixel"


# --- windows where ONNX's ceil_mode and MXNet differ ---------------------------------------------
def _x(shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


def _pool_sym(**attrs):
    return mx.sym.Pooling(mx.sym.var("x"), name="p", **attrs)


FULL_EDGES = [  # the last 'full' window starts in the padding (ONNX ceil_mode drops it)
    {"kernel": (2, 2), "stride": (3, 3), "pad": (1, 1), "pool_type": "max"},
    {"kernel": (2, 3), "stride": (3, 2), "pad": (1, 1), "pool_type": "avg"},
    {"kernel": (2, 2), "stride": (3, 3), "pad": (1, 1), "pool_type": "avg",
     "count_include_pad": False},
    {"kernel": (2, 2), "stride": (3, 3), "pad": (1, 1), "pool_type": "sum"},
    {"kernel": (2, 2), "stride": (3, 3), "pad": (1, 1), "pool_type": "lp", "p_value": 3},
    {"kernel": (3,), "stride": (4,), "pad": (2,), "pool_type": "avg"},
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", FULL_EDGES, ids=lambda a: "-".join(
    f"{k}{v}" for k, v in a.items()))
def test_full_convention_edges_match_mxnet(attrs, opset):
    """Checked against the numpy executor (itself checked against MXNet's goldens)."""
    shape = (2, 3, 8) if len(attrs["kernel"]) == 1 else (2, 3, 8, 7)
    x = _x(shape)
    sym = _pool_sym(pooling_convention="full", **attrs)
    want = forward(sym, {"x": x})[:1]
    model = export_symbol(sym, {}, in_shapes=[shape], opset_version=opset)
    _compare({"name": "full"}, run_ort(model, {"x": x}), want, "full edge")


DYNAMIC_SPATIAL = [
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pooling_convention": "full"},
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
     "pooling_convention": "full"},
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
     "pooling_convention": "full", "count_include_pad": False},
    {"kernel": (2, 2), "stride": (2, 2), "pool_type": "sum"},
    {"kernel": (3, 3), "stride": (1, 1), "pad": (1, 1), "pool_type": "lp", "p_value": 2},
    {"kernel": (2, 2), "stride": (2, 2), "pool_type": "lp", "p_value": 3},
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", DYNAMIC_SPATIAL, ids=lambda a: "-".join(
    f"{k}{v}" for k, v in a.items()))
def test_dynamic_spatial_dims(attrs, opset):
    if (attrs.get("pool_type") == "avg" and attrs.get("pooling_convention") == "full"
            and attrs.get("count_include_pad", True)):
        # exported as AveragePool with ceil_mode=1 and count_include_pad=1, which by the spec
        # divides as MXNet does (no window starts in the padding: the export refuses those)
        why = avgpool_ceil_mode_differs(opset, 1)
        if why:
            pytest.skip(why)
    sym = _pool_sym(**attrs)
    model = export_symbol(sym, {}, in_shapes=[(1, 2, 7, 7)], opset_version=opset,
                          dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
    for shape in [(1, 2, 7, 7), (3, 2, 8, 9), (1, 2, 10, 5)]:
        x = _x(shape, 1)
        _compare({"name": "dyn"}, run_ort(model, {"x": x}), forward(sym, {"x": x})[:1],
                 f"size {shape}")


@pytest.mark.parametrize("attrs, why", [
    ({"kernel": (2, 2), "stride": (3, 3), "pad": (1, 1), "pooling_convention": "full"},
     "drops a last window"),
    ({"kernel": (2, 2), "stride": (2, 2), "pool_type": "sum", "pooling_convention": "full"},
     "pool_type='sum'"),
])
def test_dynamic_spatial_dims_refused_where_onnx_differs(attrs, why):
    with pytest.raises(ConversionError, match=f"'p'.*{why}.*spatial dims fixed"):
        export_symbol(_pool_sym(**attrs), {}, in_shapes=[(1, 2, 7, 7)],
                      dynamic_axes={"x": {2: "h"}})


# --- BilinearResize2D / Crop / AdaptiveAvgPooling2D with dynamic spatial dims --------------------
RESIZE_DYNAMIC = [
    {"height": 5, "width": 7},
    {"height": 5, "width": 7, "align_corners": False},
    {"height": 1, "width": 3, "align_corners": False},  # one row reads row 0: not half_pixel
    {"scale_height": 1.5, "scale_width": 0.6},
    {"mode": "odd_scale", "scale_height": 2.0, "scale_width": 0.5},
    {"mode": "to_even_down"}, {"mode": "to_even_up"}, {"mode": "to_odd_down"},
    {"mode": "to_odd_up", "align_corners": False},
]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("attrs", RESIZE_DYNAMIC, ids=lambda a: "-".join(
    f"{k}{v}" for k, v in a.items()))
def test_resize_dynamic_spatial_dims(attrs, opset):
    """The size modes computed at run time (Shape arithmetic) equal MXNet's."""
    sym = mx.sym.contrib.BilinearResize2D(mx.sym.var("x"), **attrs)
    model = export_symbol(sym, {}, in_shapes=[(1, 2, 4, 6)], opset_version=opset,
                          dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
    for shape in [(1, 2, 4, 6), (2, 2, 5, 7), (1, 2, 6, 3)]:
        x = _x(shape, 2)
        _compare({"name": "resize", "rtol": 1e-5, "atol": 1e-6}, run_ort(model, {"x": x}),
                 forward(sym, {"x": x}), f"size {shape}")


@pytest.mark.parametrize("opset", OPSETS)
def test_resize_like_and_crop_like_follow_run_time_shapes(opset):
    x, like = mx.sym.var("x"), mx.sym.var("like")
    r = mx.sym.contrib.BilinearResize2D(x, like, mode="like", name="r")
    c = mx.sym.Crop(x, like, center_crop=True, num_args=2, name="c")
    sym = mx.sym.Group([r, c])
    model = export_symbol(sym, {}, in_shapes={"x": (1, 2, 9, 8), "like": (1, 1, 4, 3)},
                          opset_version=opset,
                          dynamic_axes={"x": {0: "n", 2: "h", 3: "w"},
                                        "like": {2: "lh", 3: "lw"}})
    for xs, ls in [((1, 2, 9, 8), (1, 1, 4, 3)), ((2, 2, 10, 7), (1, 1, 5, 6))]:
        feed = {"x": _x(xs, 3), "like": _x(ls, 4)}
        _compare({"name": "like"}, run_ort(model, feed), forward(sym, feed), f"{xs} {ls}")


def test_adaptive_general_with_dynamic_spatial_dims_is_refused():
    sym = mx.sym.contrib.AdaptiveAvgPooling2D(mx.sym.var("x"), output_size=(2, 3), name="a")
    with pytest.raises(ConversionError, match="'a'.*H and W fixed"):
        export_symbol(sym, {}, in_shapes=[(1, 2, 6, 6)], dynamic_axes={"x": {2: "h"}})


@pytest.mark.parametrize("opset", OPSETS)
def test_adaptive_even_division_is_average_pool(opset):
    sym = mx.sym.contrib.AdaptiveAvgPooling2D(mx.sym.var("x"), output_size=(3, 2))
    model = export_symbol(sym, {}, in_shapes=[(2, 3, 6, 8)], opset_version=opset)
    node = model.graph.node[0]
    assert node.op_type == "AveragePool"
    assert [list(a.ints) for a in node.attribute if a.name == "kernel_shape"] == [[2, 4]]
    x = _x((2, 3, 6, 8))
    _compare({"name": "ad"}, run_ort(model, {"x": x}), forward(sym, {"x": x}), "even")


def test_adaptive_1x1_with_dynamic_spatial_dims():
    sym = mx.sym.contrib.AdaptiveAvgPooling2D(mx.sym.var("x"))
    model = export_symbol(sym, {}, in_shapes=[(1, 2, 6, 6)], dynamic_axes={"x": [0, 2, 3]})
    x = _x((2, 2, 5, 9))
    _compare({"name": "ad"}, run_ort(model, {"x": x}), forward(sym, {"x": x}), "1x1")


# --- dynamic batch -------------------------------------------------------------------------------
DYNAMIC = ["max_valid_k2s2", "max_full_pad1", "avg_full_include", "avg_valid_pad1_exclude",
           "sum_full_pad", "lp3_full", "global_avg", "global_lp2", "max_nhwc", "avg_ndhwc",
           "max_window_all_padding_f64", "sum_float64", "avg_float16", "v1_avg_full_pad",
           "adaptive_3", "adaptive_2x3", "resize_up_align", "resize_up_no_align",
           "resize_scale", "resize_to_odd_up", "resize_float16", "pad_reflect", "crop_h_w_center",
           "crop_like"]


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_batch(name, opset):
    check_dynamic(CASES[name], GOLDEN[name], opset, {"in0": 0})


# --- Pad then Pooling: onnxruntime's PadFusion ---------------------------------------------------
PAD_THEN_POOL = [
    {"kernel": (3, 3), "stride": (2, 2)},
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pooling_convention": "full"},
    {"kernel": (2, 2), "stride": (2, 2), "pool_type": "avg"},  # fused pads would reach k
    {"kernel": (2, 2), "stride": (1, 1), "pool_type": "sum"},
]


# dynamic H/W with the 'full' convention here (stride > kernel - pad) is refused, as tested above
PAD_POOL_VARIANTS = [(a, d) for a in PAD_THEN_POOL for d in (False, True)
                     if not (d and a.get("pooling_convention") == "full")]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("attrs, dynamic", PAD_POOL_VARIANTS, ids=[
    "-".join(f"{k}{v}" for k, v in a.items()) + ("-dynamic" if d else "")
    for a, d in PAD_POOL_VARIANTS])
def test_zero_pad_then_pooling(attrs, dynamic, dtype):
    """onnxruntime >= 1.17 folds a zero Pad into a following MaxPool's pads (which never win
    the max) and into AveragePool pads it then refuses (>= kernel): on all-negative data a
    fused MaxPool would give the data's maximum instead of the padding's 0."""
    x = mx.sym.var("x")
    sym = mx.sym.Pooling(mx.sym.Pad(x, mode="constant", pad_width=(0, 0, 0, 0, 2, 2, 2, 2)),
                         **attrs)
    data = -np.random.RandomState(5).uniform(1, 2, (1, 2, 5, 6)).astype(dtype)
    axes = {"x": {0: "n", 2: "h", 3: "w"}} if dynamic else None
    model = export_symbol(sym, {}, in_shapes=[data.shape], in_types=dtype, dynamic_axes=axes)
    tol = {"rtol": 2e-3, "atol": 2e-3} if dtype == np.float16 else {}
    _compare({"name": "pad-pool", **tol}, run_ort(model, {"x": data}),
             forward(sym, {"x": data})[:1], "pad then pool")
