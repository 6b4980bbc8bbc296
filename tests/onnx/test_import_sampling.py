"""Col2Im -> col2im, RoiAlign -> _contrib_ROIAlign, GridSample -> BilinearSampler, AffineGrid ->
GridGenerator (gluonport/onnx/importers/sampling.py), against onnxruntime on the same model.

A chain AffineGrid -> GridSample -> RoiAlign plus an asymmetric-pads Col2Im (both align_corners),
written with ``export_mxnet``, was also run in MXNet 1.9.1 by hand: within 3e-7 of onnxruntime.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

_vi = vi
_model = partial(make_model, opset=18, name="sampling")
_check = partial(check_import, rtol=1e-5, atol=1e-5, check_dtype=False)


@pytest.mark.parametrize("pads,strides,dilations", [
    ([1, 0, 2, 1], [1, 1], [1, 1]),  # asymmetric: folded into a padded image and sliced
    ([1, 1, 1, 1], [2, 1], [1, 2]),
])
def test_col2im_matches_onnxruntime(pads, strides, dilations):
    image, block = [6, 7], [2, 3]
    sizes = [(image[d] + pads[d] + pads[d + 2] - dilations[d] * (block[d] - 1) - 1)
             // strides[d] + 1 for d in range(2)]
    cols = 2 * block[0] * block[1]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], pads=pads,
                            strides=strides, dilations=dilations)
    inits = [numpy_helper.from_array(np.array(image, np.int64), "image"),
             numpy_helper.from_array(np.array(block, np.int64), "block")]
    length = sizes[0] * sizes[1]
    model = _model([node], [_vi("x", TensorProto.FLOAT, [2, cols, length])],
                   [_vi("y", TensorProto.FLOAT, [2, 2] + image)], inits)
    x = np.random.default_rng(0).standard_normal((2, cols, length)).astype(np.float32)
    _check(model, {"x": x})


def _roi_model(opset, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="roi",
                            output_height=3, output_width=4, **attrs)
    return _model([node], [_vi("x", TensorProto.FLOAT, [2, 3, 10, 12]),
                           _vi("rois", TensorProto.FLOAT, [5, 4]),
                           _vi("idx", TensorProto.INT64, [5])],
                  [_vi("y", TensorProto.FLOAT, [5, 3, 3, 4])], opset=opset)


@pytest.mark.parametrize("opset,attrs", [
    (10, {}),  # opset 10: output_half_pixel, the only behaviour then
    (16, {}),  # opset 16's default: half_pixel (MXNet's aligned=True)
    (16, {"coordinate_transformation_mode": "output_half_pixel", "sampling_ratio": 2,
          "spatial_scale": 0.5}),
])
def test_roi_align_matches_onnxruntime(opset, attrs):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    corner = rng.uniform(0, 6, (5, 2))
    rois = np.concatenate([corner, corner + rng.uniform(1.5, 5, (5, 2))], 1)
    feeds = {"x": x, "rois": rois.astype(np.float32), "idx": np.array([0, 1, 1, 0, 1])}
    _check(_roi_model(opset, **attrs), feeds)


def test_roi_align_max_is_refused():
    with pytest.raises(UnsupportedOpError, match=r"'roi'.*mode='max'.*averages"):
        import_graph(_roi_model(16, mode="max"))


@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_matches_onnxruntime(align_corners):
    """Grid points inside, on and beyond the border (zero padding)."""
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align_corners)
    model = _model([node], [_vi("x", TensorProto.FLOAT, [2, 3, 5, 7]),
                            _vi("grid", TensorProto.FLOAT, [2, 4, 6, 2])],
                   [_vi("y", TensorProto.FLOAT, [2, 3, 4, 6])], opset=16)
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((2, 3, 5, 7)).astype(np.float32),
             "grid": rng.uniform(-1.3, 1.3, (2, 4, 6, 2)).astype(np.float32)}
    _check(model, feeds)


@pytest.mark.parametrize("align_corners", [0, 1])
def test_affine_grid_then_sample_matches_onnxruntime(align_corners):
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"],
                              align_corners=align_corners),
             helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align_corners)]
    size = numpy_helper.from_array(np.array([2, 3, 4, 6], np.int64), "size")
    model = _model(nodes, [_vi("x", TensorProto.FLOAT, [2, 3, 5, 7]),
                           _vi("theta", TensorProto.FLOAT, [2, 2, 3])],
                   [_vi("y", TensorProto.FLOAT, [2, 3, 4, 6])], [size], opset=20)
    rng = np.random.default_rng(4)
    theta = np.array([[1, 0, 0], [0, 1, 0]]) + rng.uniform(-0.3, 0.3, (2, 2, 3))
    feeds = {"x": rng.standard_normal((2, 3, 5, 7)).astype(np.float32),
             "theta": theta.astype(np.float32)}
    _check(model, feeds)


@pytest.mark.parametrize("attrs,match", [
    ({"mode": "bicubic"}, "mode='bicubic'"),
    ({"mode": "bicubic", "padding_mode": "border"}, "padding_mode='border'")])
def test_grid_sample_unsupported_modes_are_refused(attrs, match):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", **attrs)
    model = _model([node], [_vi("x", TensorProto.FLOAT, [1, 1, 3, 3]),
                            _vi("grid", TensorProto.FLOAT, [1, 2, 2, 2])],
                   [_vi("y", TensorProto.FLOAT, [1, 1, 2, 2])], opset=16)
    with pytest.raises(UnsupportedOpError, match=f"'gs'.*{match}"):
        import_graph(model)
