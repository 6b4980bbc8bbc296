"""Reading an ONNX model for import: protobuf, external data (safely), checker, shapes.

External data is where a hostile model can reach outside its folder: a tensor's ``location``
is a path chosen by whoever wrote the file. We load the protobuf with
``load_external_data=False``, check every location (relative, inside the model's folder after
resolving symlinks, an existing file, offset and length within it) and only then let onnx read
the data. Every failure is a :class:`~gluonport.errors.FormatError` naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import onnx
from onnx import TensorProto

from ..errors import FormatError

__all__ = ["load_model", "iter_tensors", "check_external_locations", "infer_value_info",
           "model_label"]


def model_label(model_file: Any) -> str:
    """How error messages name the model: its path, or ``<ModelProto>`` / ``<bytes>``."""
    if isinstance(model_file, (str, os.PathLike)):
        return os.fspath(model_file)
    if isinstance(model_file, (bytes, bytearray)):
        return "<bytes>"
    return "<ModelProto>"


def iter_tensors(model: onnx.ModelProto) -> Iterator[TensorProto]:
    """Every TensorProto of a model: initializers, Constant values and tensor attributes, in
    the main graph, its subgraphs and local functions."""
    for graph in _graphs(model.graph):
        yield from graph.initializer
        for sparse in graph.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        for node in graph.node:
            yield from _attr_tensors(node)
    for fn in model.functions:
        for node in fn.node:
            yield from _attr_tensors(node)


def _attr_tensors(node: onnx.NodeProto) -> Iterator[TensorProto]:
    for attr in node.attribute:
        if attr.HasField("t"):
            yield attr.t
        yield from attr.tensors
        if attr.HasField("sparse_tensor"):
            yield attr.sparse_tensor.values
            yield attr.sparse_tensor.indices


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _graphs(attr.g)
            for g in attr.graphs:
                yield from _graphs(g)


def _external_fields(tensor: TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in tensor.external_data}


def _inside(base: str, location: str) -> str | None:
    """The real path of ``location`` if it stays inside ``base``; ``None`` otherwise."""
    if not location or os.path.isabs(location) or os.path.splitdrive(location)[0]:
        return None
    norm = os.path.normpath(location)
    if norm == os.pardir or norm.startswith(os.pardir + os.sep) or "\0" in location:
        return None
    real_base = os.path.realpath(base)
    real = os.path.realpath(os.path.join(real_base, norm))
    if os.path.commonpath([real_base, real]) != real_base:
        return None  # a symlink inside the folder points out of it
    return real


def _as_int(value: str | None, what: str, tensor: str, label: str) -> int | None:
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise FormatError(f"tensor {tensor!r}: external data {what} {value!r} is not an "
                          "integer", label) from None
    if number < 0:
        raise FormatError(f"tensor {tensor!r}: external data {what} {number} is negative",
                          label)
    return number


def check_external_locations(model: onnx.ModelProto, base_dir: str | None, label: str) -> bool:
    """Validate every external-data reference; returns whether there are any.

    Raises :class:`FormatError` for a location that is absolute, climbs out of ``base_dir``
    (``../``, or a symlink leading out), is missing, or whose offset/length lie past the end
    of the file. Nothing is read.
    """
    found = False
    for tensor in iter_tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        found = True
        fields = _external_fields(tensor)
        location = fields.get("location", "")
        if base_dir is None:
            raise FormatError(f"tensor {tensor.name!r} keeps its data in external file "
                              f"{location!r}, but the model was not given as a path; load it "
                              "from its file so the data can be found beside it", label)
        real = _inside(base_dir, location)
        if real is None:
            raise FormatError(f"tensor {tensor.name!r}: external data location {location!r} "
                              "points outside the model's folder; external data must be a "
                              "relative path inside the folder of the .onnx file", label)
        if not os.path.isfile(real):
            raise FormatError(f"tensor {tensor.name!r}: external data file {location!r} does "
                              "not exist beside the model", label)
        size = os.path.getsize(real)
        offset = _as_int(fields.get("offset"), "offset", tensor.name, label) or 0
        length = _as_int(fields.get("length"), "length", tensor.name, label)
        end = offset + (length if length is not None else 0)
        if offset > size or end > size:
            raise FormatError(f"tensor {tensor.name!r}: external data offset {offset} / length "
                              f"{length} run past the end of {location!r} ({size} bytes)",
                              label)
    return found


def _parse(data: bytes, label: str) -> onnx.ModelProto:
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise FormatError(f"is not an ONNX model (protobuf decoding failed: {exc}); check "
                          "that the file is a complete .onnx file", label) from None
    if not model.HasField("graph") and not model.opset_import:
        raise FormatError("is not an ONNX model (no graph, no opset_import)", label)
    return model


def _read(model_file: Any, label: str) -> tuple[onnx.ModelProto, str | None]:
    if isinstance(model_file, onnx.ModelProto):
        return model_file, None
    if isinstance(model_file, (bytes, bytearray)):
        return _parse(bytes(model_file), label), None
    if not isinstance(model_file, (str, os.PathLike)):
        raise FormatError(f"cannot read a model from a {type(model_file).__name__}; give a "
                          "path, bytes or an onnx.ModelProto", label)
    path = os.fspath(model_file)
    if not os.path.isfile(path):
        raise FormatError("no such file", label)
    with open(path, "rb") as f:
        data = f.read()
    return _parse(data, label), os.path.dirname(os.path.abspath(path))


def load_model(model_file: Any, check: bool = True) -> tuple[onnx.ModelProto, str]:
    """Read, validate and return ``(model, label)``; external data is loaded after checking.

    ``model_file`` is a path, the serialized bytes or an ``onnx.ModelProto`` (not modified).
    """
    label = model_label(model_file)
    model, base_dir = _read(model_file, label)
    if check_external_locations(model, base_dir, label):
        if isinstance(model_file, onnx.ModelProto):
            model = _copy(model)
        try:
            onnx.external_data_helper.load_external_data_for_model(model, base_dir)
        except (OSError, ValueError) as exc:
            raise FormatError(f"reading external data failed: {exc}", label) from None
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
