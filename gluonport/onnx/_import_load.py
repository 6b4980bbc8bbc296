"""Reading an ONNX model for import: protobuf, external data (safely), checker, shapes.

External data is where a hostile model can reach outside its folder: a tensor's ``location``
is a path chosen by whoever wrote the file. :mod:`gluonport._core.onnxfile` parses the protobuf,
checks every location (relative, inside the model's folder after resolving symlinks, a regular
file, offset and length within it and matching the dims) and reads the data itself. Every
failure is a :class:`~gluonport.errors.FormatError` naming the file.
"""

from __future__ import annotations

from typing import Any

import onnx

from .._core.onnxfile import external_tensors, load_external_data, model_label, read_model
from ..errors import FormatError

__all__ = ["load_model", "infer_value_info", "model_label"]


def load_model(model_file: Any, check: bool = True) -> tuple[onnx.ModelProto, str]:
    """Read, validate and return ``(model, label)``; external data is loaded after checking.

    ``model_file`` is a path, the serialized bytes or an ``onnx.ModelProto`` (not modified).
    Parsing and every external-data location go through :mod:`gluonport._core.onnxfile`, the gate
    shared with onnxruntime sessions and the CLI.
    """
    model, base_dir, label = read_model(model_file)
    if external_tensors(model):
        if isinstance(model_file, onnx.ModelProto):
            model = _copy(model)
        load_external_data(model, base_dir or "", label)
    if check:
        _check(model, label)
    return model, label


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def _check(model: onnx.ModelProto, label: str) -> None:
    try:
        if model.ByteSize() < 2 * 1024 ** 3 - 1:
            onnx.checker.check_model(model)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        raise FormatError(f"fails onnx.checker: {first}; fix the exporter that wrote it or "
                          "run onnx.checker.check_model for details", label) from None
    except Exception as exc:  # noqa: BLE001 - checker bugs must not escape as foreign errors
        raise FormatError(f"fails onnx.checker: {exc}", label) from None


def infer_value_info(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """``tensor name -> TypeProto`` from onnx shape inference (with data propagation), plus
    the graph's declared inputs/outputs. Inference failures leave names unknown."""
    types: dict[str, onnx.TypeProto] = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                     data_prop=True)
        infos = list(inferred.graph.value_info) + list(inferred.graph.output)
    except Exception:  # noqa: BLE001 - inference is a best effort; converters check shapes
        infos = list(model.graph.value_info) + list(model.graph.output)
    for vi in list(model.graph.input) + infos:
        if vi.type.HasField("tensor_type") and vi.name not in types:
            types[vi.name] = vi.type
    return types
