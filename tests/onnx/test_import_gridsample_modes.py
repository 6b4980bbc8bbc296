"""GridSample's nearest mode and border/reflection padding, imported as a moved grid in front
of MXNet's bilinear, zero-padded BilinearSampler (gluonport/onnx/importers/sampling.py), against
onnxruntime and onnx's reference evaluator on the same model.

Grid coordinates run to +-3.2 (several reflections), and for nearest mode a second grid sits
exactly on half-pixel ties (ONNX rounds them to even; MXNet's own rint would round them down).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from gluonport.errors import UnsupportedOpError
from gluonport.onnx.backend import prepare
from gluonport.onnx.importer import import_graph
from tests.onnx._import_check import check_import, make_model, vi

F = TensorProto.FLOAT
H, W = 4, 5


def _model(mode, padding, corners, grid_shape):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding,
                            align_corners=corners)
    return make_model([node], [vi("x", F, [2, 3, H, W]), vi("g", F, list(grid_shape))],
                      vi("y", F, [2, 3] + list(grid_shape[1:3])), opset=20)


def _tie_grid(corners):
    """Grid points at half-pixel positions (x + 1/2 for every x), both coordinates."""
    def norm(p, size):
        return 2 * p / (size - 1) - 1 if corners else (2 * p + 1) / size - 1
    px = np.arange(-1, W + 1) + 0.5
    py = np.arange(-1, H + 1) + 0.5
    gx, gy = np.meshgrid(norm(px, W), norm(py, H))
    return np.stack([gx, gy], -1)[None].repeat(2, 0).astype(np.float32)


# (linear + zeros is BilinearSampler unchanged: test_import_sampling.py)
@pytest.mark.parametrize("corners", [0, 1])
@pytest.mark.parametrize("mode, padding", [("nearest", "zeros"), ("nearest", "border"),
                                           ("nearest", "reflection"), ("linear", "border"),
                                           ("linear", "reflection")])
def test_grid_sample_modes_match_onnxruntime(mode, padding, corners):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, H, W)).astype(np.float32)
    grid = rng.uniform(-3.2, 3.2, (2, 6, 7, 2)).astype(np.float32)
    check_import(_model(mode, padding, corners, grid.shape), {"x": x, "g": grid}, rtol=1e-5,
                 atol=1e-5, skip_without_kernel=False)


@pytest.mark.parametrize("corners", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_nearest_ties_round_to_even(padding, corners):
    x = np.random.default_rng(8).normal(size=(2, 3, H, W)).astype(np.float32)
    grid = _tie_grid(corners)
    model = _model("nearest", padding, corners, grid.shape)
    want = ReferenceEvaluator(model).run(None, {"x": x, "g": grid})[0]
    got = prepare(model).run({"x": x, "g": grid})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_bicubic_is_refused():
    model = _model("cubic", "zeros", 0, (2, 3, 3, 2))
    with pytest.raises(UnsupportedOpError, match="cubic"):
        import_graph(model)
