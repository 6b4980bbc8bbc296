"""End to end: the bundled sample checkpoints (sample_models/, made by MXNet 1.9.1 with
make_samples.py) exported from their files with ``export_model`` and run on onnxruntime equal
MXNet's recorded outputs."""

import os

import numpy as np
import pytest

from gluonport.onnx import export_model, max_opset
from gluonport.ops.registry import get
from tests.onnx._export_check import run_ort

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_models")


def _missing(*ops: str) -> list[str]:
    return [op for op in ops if not get(op).onnx_handlers]


def _export_and_run(name: str, shape: tuple, tmp_path, opset: int) -> None:
    prefix = os.path.join(SAMPLES, name)
    path = export_model(prefix + "-symbol.json", prefix + "-0000.params", in_shapes=[shape],
                        onnx_file_path=str(tmp_path / f"{name}.onnx"), opset_version=opset)
    import onnx

    model = onnx.load(path)
    assert [i.name for i in model.graph.input] == ["data"]
    got = run_ort(model, {"data": np.load(prefix + "-input.npy")})[0]
    want = np.load(prefix + "-output.npy")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", sorted({13, 17, max_opset()}))
def test_mlp(tmp_path, opset):
    _export_and_run("mlp", (4, 10), tmp_path, opset)


_LENET_MISSING = _missing("Convolution", "Pooling", "Flatten", "BatchNorm", "FullyConnected",
                          "Activation")


@pytest.mark.xfail(bool(_LENET_MISSING), strict=True,
                   reason=f"no ONNX handler yet for {_LENET_MISSING} (another family's work)")
@pytest.mark.parametrize("opset", sorted({13, max_opset()}))
def test_lenet_bn(tmp_path, opset):
    _export_and_run("lenet_bn", (2, 1, 28, 28), tmp_path, opset)
