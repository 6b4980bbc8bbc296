"""STFT imported as framing (``take``), windowing and the DFT as constant-matrix products
(gluonport/onnx/importers/signal.py), against onnxruntime on the same model where onnxruntime
agrees with numpy's FFT, else (onnxruntime 1.19 on a complex signal) against numpy's FFT.

Random signals; frame steps that do not divide the signal (a tail left over); with and without
a window (a graph input), one-sided and full spectra, real and complex signals. gluonport
transforms in float64 and rounds once, onnxruntime's float32 FFT carries its own rounding:
rtol/atol 1e-4 on values of magnitude up to ~20.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from gluonport.onnx.backend import prepare
from tests._ort import session
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
    want = _numpy_stft(feeds["x"], step, size, feeds.get("w"), onesided)
    ort_out = session(model).run(None, feeds)[0]
    if not np.allclose(ort_out, want, rtol=1e-4, atol=1e-4):
        # onnxruntime 1.19's STFT of a complex signal returns uninitialised memory (7.9e37):
        # gluonport is held to numpy's FFT there instead
        import onnxruntime

        assert parts == 2, f"onnxruntime {onnxruntime.__version__} disagrees with numpy's FFT"
        np.testing.assert_allclose(prepare(model).run(feeds)[0], want, rtol=1e-4, atol=1e-4)
        return
    check_import(model, feeds, rtol=1e-4, atol=1e-4, skip_without_kernel=False)


def _numpy_stft(x, step, size, window, onesided):
    """ONNX STFT by numpy's FFT: (batch, frames, bins, 2)."""
    signal = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    frames = (signal.shape[1] - size) // step + 1
    cut = np.stack([signal[:, f * step:f * step + size] for f in range(frames)], 1)
    spec = np.fft.fft(cut * (1 if window is None else window), axis=-1)
    if onesided:
        spec = spec[..., :size // 2 + 1]
    return np.stack([spec.real, spec.imag], -1)
