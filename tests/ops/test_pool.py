"""Pooling, Pooling_v1, AdaptiveAvgPooling2D, BilinearResize2D, Pad and Crop against MXNet 1.9.1
(tests/golden/ops/pool.npz), plus inference, hidden-output and error checks."""

import json

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import DTypeError, OpAttributeError, ShapeError
from gluonport.ops import registry


def test_aliases():
    assert registry.canonical_name("_npx_pooling") == "Pooling"
    assert registry.canonical_name("pad") == "Pad"


def test_param_order_matches_mxnet():
    assert list(registry.get("Pooling").params.fields) == [
        "kernel", "pool_type", "global_pool", "cudnn_off", "pooling_convention", "stride",
        "pad", "p_value", "count_include_pad", "layout"]
    assert list(registry.get("_contrib_BilinearResize2D").params.fields) == [
        "height", "width", "scale_height", "scale_width", "mode", "align_corners"]
    assert registry.get("_contrib_BilinearResize2D").params.fields["align_corners"].default


def test_max_pooling_has_mkldnn_workspace_output():
    # MXNet 1.9.1 (oneDNN build) saves node_row_ptr [0, 1, 3, 4, 5, 7, 8, 9, 10, 11] for
    # data -> max -> avg -> global max (no kernel) -> global max (kernel) -> sum -> NHWC max
    # -> lp -> Pooling_v1
    s = mx.sym.var("data")
    s = mx.sym.Pooling(s, kernel=(2, 2), name="p")
    s = mx.sym.Pooling(s, kernel=(2, 2), pool_type="avg", name="p2")
    s = mx.sym.Pooling(s, global_pool=True, name="p3")
    s = mx.sym.Pooling(s, global_pool=True, kernel=(1, 1), name="p4")
    s = mx.sym.Pooling(s, kernel=(1, 1), pool_type="sum", name="p5")
    s = mx.sym.Pooling(s, kernel=(1, 1), layout="NHWC", name="p6")
    s = mx.sym.Pooling(s, kernel=(1,), pool_type="lp", p_value=2, name="p7")
    s = mx.sym.Pooling_v1(s, kernel=(1, 1), name="p8")
    assert json.loads(s.tojson())["node_row_ptr"] == [0, 1, 3, 4, 5, 7, 8, 9, 10, 11]
    assert s.list_outputs() == ["p8_output"]
    internals = s.get_internals().list_outputs()
    assert "p_output" in internals and "p_workspace" not in internals


def test_max_pooling_workspace_type_and_visible_output():
    sym = mx.sym.Pooling(mx.sym.var("x"), kernel=(2, 2), name="p")
    _, out_types, _ = sym.infer_type(x=np.float32)
    assert len(out_types) == 1 and out_types[0] == np.float32
    out = mx.nd.Pooling(mx.nd.array(np.ones((1, 1, 4, 4))), kernel=(2, 2))
    assert out.shape == (1, 1, 3, 3)


@pytest.mark.parametrize("attrs, error", [
    (dict(kernel=(2, 2), pool_type="lp"), OpAttributeError),
    (dict(kernel=(2, 2), pool_type="lp", p_value=4), OpAttributeError),
    (dict(kernel=(2, 2), pooling_convention="same"), OpAttributeError),
    (dict(kernel=(2, 2, 2)), ShapeError),
    (dict(kernel=(9, 9)), ShapeError),
    (dict(), OpAttributeError),
])
def test_pooling_errors(attrs, error):
    with pytest.raises(error):
        mx.nd.Pooling(mx.nd.array(np.ones((1, 2, 6, 6))), **attrs)


def test_pooling_shape_error_names_node():
    sym = mx.sym.Pooling(mx.sym.var("x"), kernel=(7, 7), name="pool9")
    with pytest.raises(ShapeError, match="pool9"):
        sym.infer_shape(x=(1, 1, 3, 3))


def test_integer_pooling_refused_like_mxnet():
    with pytest.raises(DTypeError, match="int32"):
        mx.nd.Pooling(mx.nd.array(np.ones((1, 1, 4, 4)), dtype="int32"), kernel=(2, 2))


def test_max_ignores_nan_like_mxnet():
    x = np.array([[[[np.nan, 1.0], [2.0, np.nan]]]], np.float32)
    out = mx.nd.Pooling(mx.nd.array(x), kernel=(2, 2)).asnumpy()
    assert out.item() == 2.0


def test_resize_like_needs_second_input_name():
    sym = mx.sym.contrib.BilinearResize2D(mx.sym.var("a"), mx.sym.var("b"), mode="like",
                                          name="r")
    assert sym.list_arguments() == ["a", "b"]
    _, outs, _ = sym.infer_shape(a=(1, 2, 3, 3), b=(1, 1, 6, 7))
    assert outs[0] == (1, 2, 6, 7)


def test_resize_scale_height_without_width():
    with pytest.raises(OpAttributeError, match="scale_width"):
        mx.nd.contrib.BilinearResize2D(mx.nd.array(np.ones((1, 1, 3, 3))), scale_height=2.0)


@pytest.mark.parametrize("attrs, error", [
    (dict(mode="constant", pad_width=(1, 0, 0, 0, 1, 1, 1, 1)), OpAttributeError),
    (dict(mode="constant", pad_width=(0, 0, 0, 0, 1, 1)), OpAttributeError),
    (dict(mode="reflect", pad_width=(0, 0, 0, 0, 3, 0, 0, 0)), OpAttributeError),
])
def test_pad_errors(attrs, error):
    with pytest.raises(error):
        mx.nd.Pad(mx.nd.array(np.ones((1, 1, 3, 3))), **attrs)


def test_pad_3d_data_refused():
    with pytest.raises(ShapeError, match="4-D or 5-D"):
        mx.nd.Pad(mx.nd.array(np.ones((1, 3, 3))), mode="edge", pad_width=(0, 0, 0, 0, 1, 1))


def test_crop_offset_outside_is_an_error():
    with pytest.raises(ShapeError, match="offset"):
        mx.nd.Crop(mx.nd.array(np.ones((1, 1, 4, 4))), h_w=(3, 3), offset=(2, 0))


def test_crop_like_inputs_are_variadic():
    sym = mx.sym.Crop(mx.sym.var("a"), mx.sym.var("b"), name="c")
    assert sym.attr_dict()["c"]["num_args"] == "2"
    _, outs, _ = sym.infer_shape(a=(1, 2, 8, 8), b=(1, 5, 3, 4))
    assert outs[0] == (1, 2, 3, 4)


def test_adaptive_windows_overlap():
    # 5 -> 3: windows [0, 2), [1, 4), [3, 5) (floor/ceil of i*5/3)
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 1, 5)
    out = mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(x), output_size=(1, 3)).asnumpy()
    np.testing.assert_allclose(out.ravel(), [0.5, 2.0, 3.5])


def _first_max_reference(og, x, kernel, stride, pad, out_sp):
    """Direct loops: each output gradient to the first maximum of its window (row-major taps;
    padding never wins)."""
    dx = np.zeros_like(x)
    for idx in np.ndindex(*og.shape):
        n, c, *o = idx
        best, where = None, None
        for tap in np.ndindex(*kernel):
            pos = [oi * s + t - p for oi, s, t, p in zip(o, stride, tap, pad)]
            if all(0 <= q < size for q, size in zip(pos, x.shape[2:])):
                v = x[(n, c, *pos)]
                if best is None or v > best:
                    best, where = v, pos
        dx[(n, c, *where)] += og[idx]
    return dx


@pytest.mark.parametrize("shape, kernel, stride, pad", [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0)),    # windows tile the data (lenet's 2x2/2)
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0)),    # disjoint, a row and a column left over
    ((2, 2, 9, 9), (2, 2), (3, 3), (0, 0)),    # disjoint with gaps between windows
    ((2, 2, 9, 9), (3, 3), (2, 2), (1, 1)),    # overlapping and padded (resnet's 3x3/2)
    ((2, 2, 8), (2,), (2,), (0,)),             # 1-D tiled
])
def test_max_pool_backward_routes_ties_to_the_first_maximum(shape, kernel, stride, pad):
    # values on a coarse grid so most windows hold tied maxima; the gradient of each window
    # must reach its first maximum only (MXNet's routing), on every path of the kernel
    from gluonport.ops.nn.pool import pool_backward, pool_nd, pool_out_size

    rng = np.random.RandomState(7)
    x = rng.randint(-1, 2, shape).astype(np.float32)
    out_sp = [pool_out_size(v, k, s, p, "valid") for v, k, s, p in
              zip(shape[2:], kernel, stride, pad)]
    y = pool_nd(x, kernel, stride, pad, out_sp)
    og = rng.randint(1, 9, y.shape).astype(np.float32)  # small integers: sums are exact
    dx = pool_backward(og, x, y, kernel, stride, pad, out_sp, "max")
    np.testing.assert_array_equal(dx, _first_max_reference(og, x, kernel, stride, pad, out_sp))


@pytest.mark.parametrize("shape, kernel, stride, pad, convention", [
    ((4, 8, 9, 9), (3, 3), (2, 2), (1, 1), "valid"),   # resnet's 3x3/2, N*C = 32
    ((4, 8, 9, 9), (3, 3), (2, 2), (1, 1), "full"),    # and an end-padded last window
    ((3, 12, 10, 7), (3, 2), (1, 1), (1, 0), "valid"),  # stride 1, unequal kernel
    ((2, 16, 11), (3,), (2,), (1,), "valid"),          # 1-D
    ((2, 16, 5, 6, 5), (3, 3, 2), (2, 2, 1), (1, 1, 0), "valid"),  # 3-D
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_max_pool_backward_spatial_first_route(shape, kernel, stride, pad, convention, dtype,
                                               monkeypatch):
    # overlapping windows with short output rows and many (N, C) rows take the spatial-first
    # copies (pool._max_grad_spatial_first); ties must still reach each window's first
    # maximum, padding included, and the channels-first route must give the same bits
    from gluonport.ops.nn import pool

    rng = np.random.RandomState(11)
    x = rng.randint(-1, 2, shape).astype(dtype)
    out_sp = [pool.pool_out_size(v, k, s, p, convention) for v, k, s, p in
              zip(shape[2:], kernel, stride, pad)]
    y = pool.pool_nd(x, kernel, stride, pad, out_sp)
    og = rng.randint(1, 9, y.shape).astype(dtype)  # small integers: sums are exact
    monkeypatch.setattr(pool, "_BLOCK_ROWS", 5)  # several blocks, the last one short
    calls = []
    real = pool._max_grad_spatial_first
    monkeypatch.setattr(pool, "_max_grad_spatial_first",
                        lambda *a: calls.append(1) or real(*a))
    dx = pool.pool_backward(og, x, y, kernel, stride, pad, out_sp, "max")
    assert calls, "the spatial-first route was not taken"
    assert dx.dtype == dtype and dx.shape == x.shape
    want = _first_max_reference(og.astype(np.float32), x.astype(np.float32), kernel, stride,
                                pad, out_sp)
    np.testing.assert_array_equal(dx, want.astype(dtype))
    monkeypatch.setattr(pool, "_SHORT_ROWS", 0)  # the channels-first route
    np.testing.assert_array_equal(pool.pool_backward(og, x, y, kernel, stride, pad, out_sp,
                                                     "max"), dx)
    assert len(calls) == 1


@pytest.mark.parametrize("shape, kernel, stride, pad, layout", [
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), None),    # tiled (lenet): MaxPool of keys, Resize
    ((2, 8, 8, 3), (2, 2), (2, 2), (0, 0), "NHWC"),  # tiled, channels-last
    ((2, 3, 9, 9), (3, 3), (3, 3), (0, 0), None),    # tiled 3x3/3
    ((2, 2, 8), (2,), (2,), (0,), None),             # tiled 1-D
    ((1, 2, 4, 6, 6), (2, 2, 3), (2, 2, 3), (0, 0, 0), None),  # tiled 3-D, unequal kernel
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0), None),    # tiled with a row and a column left over
    ((2, 2, 9, 9), (2, 2), (3, 3), (0, 0), None),    # gaps between windows: MaxUnpool
    ((2, 2, 9, 9), (3, 3), (2, 2), (1, 1), None),    # overlapping: scatter-add
])
def test_max_pool_backward_ties_on_onnxruntime(shape, kernel, stride, pad, layout):
    # the exported backward graph routes each window's gradient to its first maximum too
    # (small integers: the sums are exact, so the check is equality)
    from gluonport.ops.nn.pool import pool_out_size
    from tests.ops._gradcheck import graph_grads

    rng = np.random.RandomState(11)
    x = rng.randint(-1, 2, shape).astype(np.float32)
    last = layout is not None
    xc = np.moveaxis(x, -1, 1) if last else x
    out_sp = [pool_out_size(v, k, s, p, "valid") for v, k, s, p in
              zip(xc.shape[2:], kernel, stride, pad)]
    og_c = rng.randint(1, 9, xc.shape[:2] + tuple(out_sp)).astype(np.float32)
    want = _first_max_reference(og_c, xc, kernel, stride, pad, out_sp)
    attrs = dict(kernel=kernel, stride=stride, pad=pad, pool_type="max")
    if layout:
        attrs["layout"] = layout
    og = np.ascontiguousarray(np.moveaxis(og_c, 1, -1)) if last else og_c
    got = graph_grads({"op": "Pooling", "attrs": attrs}, [x], [og], backend="onnxruntime")[0]
    np.testing.assert_array_equal(np.moveaxis(got, -1, 1) if last else got, want)
