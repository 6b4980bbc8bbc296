"""``gluonport.load(..., ctx=gpu(0))`` on an onnxruntime without a usable CUDA provider fails at
load time with a DeviceError (as ``OrtRunner`` and the CLI's ``--device cuda:0`` do), not at the
first call after a successful-looking load."""

from __future__ import annotations

import os

import onnxruntime
import pytest

import gluonport as mx
from gluonport.errors import DeviceError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "sample_models", "mlp")

pytestmark = pytest.mark.skipif(
    "CUDAExecutionProvider" in onnxruntime.get_available_providers(),
    reason="the CUDA provider is installed here")


@pytest.mark.parametrize("backend", [None, "onnxruntime"])
def test_mxnet_model_on_gpu_fails_at_load(backend):
    with pytest.raises(DeviceError) as err:
        mx.load(MLP, ctx=mx.gpu(0), backend=backend)
    text = str(err.value)
    assert "CUDAExecutionProvider" in text and "gluonport[gpu]" in text


def test_onnx_model_on_gpu_fails_at_load(tmp_path):
    onnx_file = str(tmp_path / "mlp.onnx")
    mx.onnx.export_model(f"{MLP}-symbol.json", f"{MLP}-0000.params", [(1, 10)],
                         onnx_file_path=onnx_file)
    with pytest.raises(DeviceError, match="CUDAExecutionProvider"):
        mx.load(onnx_file, ctx=mx.gpu(0))


def test_numpy_backend_on_gpu_is_a_device_error():
    with pytest.raises(DeviceError, match="numpy backend runs on the CPU only"):
        mx.load(MLP, ctx=mx.gpu(0), backend="numpy")


def test_cpu_load_still_works():
    model = mx.load(MLP, ctx=mx.cpu(), backend="onnxruntime")
    assert model.input_names == ["data"]
