"""ONNX opset range: what gluonport exports and what the installed packages can run.

We export opsets 13 up to the newest one that both the installed ``onnx`` and ``onnxruntime``
support, and default to 17 (widely deployed: onnxruntime >= 1.11, TensorRT 8.6, OpenVINO).
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import ConversionError

__all__ = ["MIN_OPSET", "DEFAULT_OPSET", "max_opset", "check_opset", "ir_version_for"]

MIN_OPSET = 13
DEFAULT_OPSET = 17


@lru_cache(maxsize=1)
def max_opset() -> int:
    """The newest default-domain opset both ``onnx`` and ``onnxruntime`` here support.

    onnxruntime has no API for it, so a one-node model is tried from onnx's newest opset down
    (once per process).
    """
    import onnx
    from onnx import TensorProto, helper

    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - onnxruntime is a dependency
        return onnx.defs.onnx_opset_version()
    for version in range(onnx.defs.onnx_opset_version(), MIN_OPSET - 1, -1):
        graph = helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])], "probe",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
        model.ir_version = ir_version_for(version)
        try:
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            return version
        except Exception:  # noqa: BLE001 - any failure means "not supported"
            continue
    return MIN_OPSET


def ir_version_for(opset: int) -> int:
    """The oldest ONNX IR version that carries ``opset`` (newer readers accept older IR)."""
    from onnx import helper

    return helper.find_min_ir_version_for([helper.make_opsetid("", opset)])


def check_opset(opset: int | None) -> int:
    """``opset`` or the default, checked against the supported range."""
    if opset is None:
        return min(DEFAULT_OPSET, max_opset())
    top = max_opset()
    if not MIN_OPSET <= opset <= top:
        raise ConversionError(f"opset {opset} is not supported: gluonport exports opsets "
                              f"{MIN_OPSET} to {top} (the newest the installed onnx and "
                              "onnxruntime both support)")
    return opset
