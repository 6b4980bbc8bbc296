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


# initializers with more elements than this are given to onnx's checker and shape inference as
# typed graph inputs: both serialize the whole model first (twice, plus a ByteSize pass), which
# made them 80% of a 32 MB import. Shape-carrying tensors (Reshape's shape, Slice's starts, ...)
# are far smaller, so inference still sees their values; the tensors' own bytes are checked by
# gluonport._core.onnxfile when the file is read.
_LITE_ELEMENTS = 4096


def _lite(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` without its large main-graph initializers, each declared as a graph input of
    the same type and shape instead (the model is not modified; nodes are copied)."""
    big = [t for t in model.graph.initializer if _elements(t) > _LITE_ELEMENTS]
    if not big:
        return model
    lite = onnx.ModelProto()
    _copy_fields(lite, model, "graph")
    graph, src = lite.graph, model.graph
    _copy_fields(graph, src, "initializer")
    big_names = {t.name for t in big}
    graph.initializer.extend(t for t in src.initializer if t.name not in big_names)
    declared = {i.name for i in src.input}
    graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                       for t in big if t.name not in declared)
    return lite


def _copy_fields(dst: Any, src: Any, skip: str) -> None:
    for field, value in src.ListFields():
        if field.name == skip:
            continue
        if isinstance(value, (str, bytes, int, float)):
            setattr(dst, field.name, value)
        elif hasattr(value, "ListFields"):
            getattr(dst, field.name).CopyFrom(value)
        else:  # a repeated field
            getattr(dst, field.name).extend(value)


def _elements(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n


def _check(model: onnx.ModelProto, label: str) -> None:
    known = onnx.defs.onnx_opset_version()
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                default=0)
    if opset > known:  # the checker would blame the exporter for the installed onnx's age
        raise FormatError(f"is ONNX opset {opset}, and the installed onnx {onnx.__version__} "
                          f"knows opsets up to {known} (its checker cannot validate the model); "
                          "upgrade onnx (pip install -U onnx)", label)
    try:
        lite = _lite(model)
        if lite is not model or model.ByteSize() < 2 * 1024 ** 3 - 1:
            onnx.checker.check_model(lite)
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
        inferred = onnx.shape_inference.infer_shapes(_lite(model), check_type=False,
                                                     strict_mode=False, data_prop=True)
        infos = list(inferred.graph.value_info) + list(inferred.graph.output)
    except Exception:  # noqa: BLE001 - inference is a best effort; converters check shapes
        infos = list(model.graph.value_info) + list(model.graph.output)
    for vi in list(model.graph.input) + infos:
        if vi.type.HasField("tensor_type") and vi.name not in types:
            types[vi.name] = vi.type
    return types
