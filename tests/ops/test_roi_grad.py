"""ROI pooling gradients beyond the case rows (``tests/ops/test_grads.py`` runs those against
MXNet 1.9.1's gradients; their random data has no ties and is too large for differences).

* ``_backward_ROIPooling`` on data with ties (ReLU-style zeros, rounded values), NaN, all -inf
  and ROIs naming no image, against a literal transcription of MXNet's forward scan
  (``roi_pooling.cc``: ``value > running max``, starting at -FLT_MAX, rows then columns) and
  its backward (``in_grad[argmax] += out_grad``);
* ROIAlign and PSROIPooling data gradients against float64 central differences on small
  inputs (both are linear in the data).
"""

from __future__ import annotations

import numpy as np
import pytest

import gluonport as mx
from gluonport.ops import registry
from tests.ops._gradcheck import check_grad_numeric

_FLT_MAX = float(np.finfo(np.float32).max)


def _scan_reference(data, rois, og, pooled, scale):
    """MXNet's ROIPoolForward argmax and ROIPoolBackwardAcc, one element at a time."""
    batch, chans, height, width = data.shape
    ph, pw = pooled
    grad = np.zeros_like(data)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        if b < 0 or b >= batch:
            continue
        x1, y1, x2, y2 = (int(np.sign(v) * np.floor(abs(v) + 0.5))
                          for v in np.float32(roi[1:5]) * np.float32(scale))
        bh = np.float32(max(y2 - y1 + 1, 1)) / np.float32(ph)
        bw = np.float32(max(x2 - x1 + 1, 1)) / np.float32(pw)
        for c in range(chans):
            for i in range(ph):
                for j in range(pw):
                    hs = min(max(int(np.floor(np.float32(i) * bh)) + y1, 0), height)
                    he = min(max(int(np.ceil(np.float32(i + 1) * bh)) + y1, 0), height)
                    ws = min(max(int(np.floor(np.float32(j) * bw)) + x1, 0), width)
                    we = min(max(int(np.ceil(np.float32(j + 1) * bw)) + x1, 0), width)
                    best, arg = -_FLT_MAX, None
                    for y in range(hs, he):
                        for x in range(ws, we):
                            if data[b, c, y, x] > best:
                                best, arg = data[b, c, y, x], (y, x)
                    if arg is not None:
                        grad[b, c, arg[0], arg[1]] += og[r, c, i, j]
    return grad


@pytest.mark.parametrize("case", ["ties", "nan", "minus_inf"])
def test_roi_pooling_backward_matches_mxnet_scan(case):
    rng = np.random.RandomState(7)
    data = np.round(np.maximum(rng.randn(2, 3, 9, 11), 0)).astype(np.float32)  # many ties
    if case == "nan":
        data[0, :, 2:5, 3] = np.nan
    if case == "minus_inf":
        data[1] = -np.inf
    rois = np.concatenate([rng.randint(-1, 3, (8, 1)), rng.uniform(-3, 14, (8, 4))], 1)
    rois[:, [1, 3]] = np.sort(rois[:, [1, 3]], 1)
    rois[:, [2, 4]] = np.sort(rois[:, [2, 4]], 1)
    rois = rois.astype(np.float32)
    og = rng.randn(8, 3, 3, 2).astype(np.float32)
    got = mx.nd._internal._backward_ROIPooling(
        mx.nd.array(og), mx.nd.array(data), mx.nd.array(rois), pooled_size=(3, 2),
        spatial_scale=0.8).asnumpy()
    want = _scan_reference(data, rois, og, (3, 2), 0.8)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert registry.get("ROIPooling").gradient is not None


_ROIS = [[0, 0.5, 0.7, 5.2, 4.9], [0, 2.0, 1.0, 3.5, 4.0], [0, -1.0, -0.5, 2.0, 7.5]]


@pytest.mark.parametrize("attrs", [
    {"pooled_size": (2, 2), "spatial_scale": 1.0},
    {"pooled_size": (2, 3), "spatial_scale": 0.9, "sample_ratio": 2, "aligned": True},
    {"pooled_size": (2, 2), "spatial_scale": 1.0, "position_sensitive": True},
])
def test_roi_align_gradient_vs_differences(attrs):
    chans = 8 if attrs.get("position_sensitive") else 2
    data = np.random.RandomState(3).uniform(-1, 1, (1, chans, 6, 5))
    check_grad_numeric("_contrib_ROIAlign", [data, np.array(_ROIS)], attrs, wrt=[0])


def test_psroi_pooling_gradient_vs_differences():
    data = np.random.RandomState(4).uniform(-1, 1, (1, 8, 6, 5))
    rois = np.array([[0, 0.0, 0.0, 7.0, 9.0], [0, 2.0, 1.0, 6.0, 4.0]])
    check_grad_numeric("_contrib_PSROIPooling", [data, rois],
                       {"spatial_scale": 0.5, "output_dim": 2, "pooled_size": 2}, wrt=[0])


@pytest.mark.parametrize("attrs", [
    {"pooled_size": (2, 3), "spatial_scale": 0.5},
    {"pooled_size": (2, 2), "spatial_scale": 0.7, "sample_ratio": 3, "aligned": True},
    {"pooled_size": (2, 2), "spatial_scale": 1.0, "position_sensitive": True},
])
def test_roi_align_backward_onnx(attrs):
    """The ONNX lowering of ``_backward_ROIAlign`` equals the numpy kernel, with ROIs on two
    images, one naming no image (-1) and one past the batch (2)."""
    pytest.importorskip("onnxruntime")
    from gluonport.onnx import export_symbol
    from tests.onnx._export_check import run_ort

    rng = np.random.RandomState(5)
    ph, pw = attrs["pooled_size"]
    chans = 2 * ph * pw if attrs.get("position_sensitive") else 3
    data = rng.uniform(-1, 1, (2, chans, 9, 8)).astype(np.float32)
    rois = np.array([[0, 1.0, 2.0, 12.0, 9.5], [1, -2.0, 0.5, 5.0, 17.0], [-1, 0, 0, 4, 4],
                     [2, 1, 1, 5, 5], [1, 3.3, 3.1, 3.9, 4.0]], np.float32)
    og = rng.randn(5, chans // (ph * pw) if attrs.get("position_sensitive") else chans,
                   ph, pw).astype(np.float32)
    want = mx.nd._internal._backward_ROIAlign(mx.nd.array(og), mx.nd.array(data),
                                              mx.nd.array(rois), **attrs).asnumpy()
    sym = mx.sym._internal._backward_ROIAlign(mx.sym.var("og"), mx.sym.var("data"),
                                              mx.sym.var("rois"), **attrs)
    feed = {"og": og, "data": data, "rois": rois}
    model = export_symbol(sym, {}, in_shapes={k: v.shape for k, v in feed.items()},
                          in_types={k: v.dtype for k, v in feed.items()}, opset_version=17)
    np.testing.assert_allclose(run_ort(model, feed)[0], want, rtol=1e-5, atol=1e-6)
