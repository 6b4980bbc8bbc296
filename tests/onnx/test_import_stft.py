"""STFT imported as framing (``take``), windowing and the DFT as constant-matrix products
(gluonport/onnx/importers/signal.py), against onnxruntime on the same model.

Random signals; frame steps that do not divide the signal (a tail left over); with and without
a window (a graph input), one-sided and full spectra, real and complex signals. gluonport
transforms in float64 and rounds once, onnxruntime's float32 FFT carries its own rounding:
rtol/atol 1e-4 on values of magnitude up to ~20.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.onnx._import_check import check_import, make_model, vi

F = TensorProto.FLOAT


@pytest.mark.parametrize("length, step, size, window, onesided, parts", [
    (64, 8, 16, False, 1, 1), (50, 7, 12, True, 1, 1), (40, 5, 10, True, 0, 1),
    (33, 4, 8, False, 0, 2)])
def test_stft_matches_onnxruntime(length, step, size, window, onesided, parts):
    frames = (length - size) // step + 1
    bins = size // 2 + 1 if onesided else size
    inits = [numpy_helper.from_array(np.array(step, np.int64), "step"),
             numpy_helper.from_array(np.array(size, np.int64), "size")]
    ins = [vi("x", F, [2, length, parts])] + ([vi("w", F, [size])] if window else [])
    node = helper.make_node("STFT", ["x", "step", "w" if window else "", "size"], ["y"],
                            onesided=onesided)
    model = make_model([node], ins, vi("y", F, [2, frames, bins, 2]), inits, opset=17)
    rng = np.random.default_rng(length)
    feeds = {"x": rng.normal(size=(2, length, parts)).astype(np.float32)}
    if window:
        feeds["w"] = np.hanning(size).astype(np.float32)
    check_import(model, feeds, rtol=1e-4, atol=1e-4, skip_without_kernel=False)
