"""The one gate every ONNX file passes: parse, check strings, check external-data locations.

A ``.onnx`` file is untrusted input. Two things in it reach past the protobuf itself:

* **External data.** A tensor's ``external_data`` names a file (``location``) and a byte range
  (``offset``/``length``) chosen by whoever wrote the model. onnxruntime and ``onnx.load``
  follow it, and depending on their versions they follow ``../secret``, absolute paths and
  symlinks leading out of the model's folder, or block forever on a FIFO.
  :func:`check_model` refuses every such location *before* any session is created or any
  data file is opened, whatever versions are installed: the location must be a relative path
  that, after resolving symlinks, names a regular file inside the real folder of the ``.onnx``
  file, and the byte range must lie within that file and match the tensor's dims and type.
* **Strings.** ONNX declares its text fields ``string``, but protobuf's ``upb`` hands back
  ``bytes`` when a field holds invalid UTF-8; code that then formats or compares the name
  fails with a ``TypeError`` far from the cause. :func:`check_model` checks every string field.

Every refusal is a :class:`~gluonport.errors.FormatError` naming the model file and the tensor
or field. onnx itself is imported lazily: this module only reads protobuf messages.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from ..errors import FormatError
from .onnxdigest import check_data_digest

__all__ = ["read_model", "check_model", "load_external_data", "external_tensors", "model_label",
           "tensor_to_array"]

_EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL
_STRING = 8  # TensorProto.STRING
_DIGITS = frozenset("0123456789")
# Bits per element by TensorProto.DataType (4- and 2-bit types are packed into bytes).
_BITS = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64,
         14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8,
         25: 2, 26: 2}


def model_label(model: Any) -> str:
    """How messages name a model: its path, or ``<bytes>`` / ``<ModelProto>``."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return "<ModelProto>"


def read_model(model: Any, label: str | None = None) -> tuple[Any, str | None, str]:
    """Parse and check a model; return ``(ModelProto, base_dir, label)``.

    ``model`` is a path, serialized bytes, or an ``onnx.ModelProto`` (checked, not copied).
    ``base_dir`` is the real folder of the file (``None`` for bytes and protos). External data
    is *not* loaded; every location is checked by :func:`check_model`.
    """
    import onnx

    label = label or model_label(model)
    base_dir = None
    if isinstance(model, onnx.ModelProto):
        proto = model
    elif isinstance(model, (bytes, bytearray, memoryview)):
        proto = _parse(bytes(model), label)
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if "\0" in path or not os.path.isfile(path):  # isfile: a FIFO or device is refused
            raise FormatError("no such file, or not a regular file", label)
        proto = _parse(_read_file(path, label), label)
        # the folder as given, as onnxruntime resolves locations (not the real folder of a
        # symlinked .onnx): every location must then resolve inside its real path
        base_dir = os.path.dirname(os.path.abspath(path))
    else:
        raise FormatError(f"cannot read an ONNX model from a {type(model).__name__}; give a "
                          "path, bytes or an onnx.ModelProto", label)
    if check_model(proto, base_dir, label):
        check_data_digest(proto, external_tensors(proto), base_dir, label)  # one write?
    return proto, base_dir, label


def _read_file(path: str, label: str) -> bytes:
    """The whole file, opened without blocking and read only if it is a regular file (a FIFO
    swapped in after the ``isfile`` check cannot hang the read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise FormatError(f"cannot be opened: {exc.strerror}", label) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FormatError("is not a regular file", label)
        return f.read()


def _parse(data: bytes, label: str) -> Any:
    import onnx

    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise FormatError(f"is not an ONNX model (protobuf decoding failed: {exc}); check "
                          "that the file is a complete .onnx file", label) from None
    if not proto.HasField("graph") and not proto.opset_import:
        raise FormatError("is not an ONNX model (no graph, no opset_import)", label)
    return proto


def check_model(proto: Any, base_dir: str | None, label: str) -> bool:
    """Check every string field and every external-data reference of ``proto``.

    ``base_dir`` is the folder of the ``.onnx`` file, ``None`` when the model came as bytes
    or a proto (then any external reference is refused: there is no folder to confine it to).
    Returns whether the model has external data. Nothing is opened or read.
    """
    tensors = _walk(proto, label)
    found = False
    real_base = os.path.realpath(base_dir) if base_dir is not None else None
    for tensor in tensors:
        if tensor.data_location == _EXTERNAL:  # stale entries without it are never read
            found = True
            _check_external(tensor, real_base, label)
        else:
            _check_embedded(tensor, label)
    return found


def _typed_field(data_type: int) -> tuple[str, int, int]:
    """(field holding a tensor's values when not raw, values per element, elements per value)."""
    if data_type in (1, 14):
        return "float_data", 2 if data_type == 14 else 1, 1
    if data_type in (11, 15):
        return "double_data", 2 if data_type == 15 else 1, 1
    if data_type == 7:
        return "int64_data", 1, 1
    if data_type in (12, 13):
        return "uint64_data", 1, 1
    if data_type == _STRING:
        return "string_data", 1, 1
    return "int32_data", 1, 8 // _BITS[data_type] if _BITS[data_type] < 8 else 1


def _check_embedded(tensor: Any, label: str) -> None:
    """The data in the file agrees with the dims and type (what onnxruntime would otherwise
    read past, in versions that do not check it)."""
    name = tensor.name
    if tensor.data_type not in _BITS and tensor.data_type != _STRING:
        raise FormatError(f"tensor {name!r}: unknown data_type {tensor.data_type}", label)
    if tensor.HasField("raw_data") and tensor.data_type != _STRING:
        want = _nbytes(tensor, label)
        if len(tensor.raw_data) != want:
            raise FormatError(f"tensor {name!r}: raw_data holds {len(tensor.raw_data)} bytes "
                              f"but dims {list(tensor.dims)} need {want}", label)
        return
    field, per_element, packed = _typed_field(tensor.data_type)
    want = -(-_count(tensor, label) // packed) * per_element
    have = len(getattr(tensor, field))
    if have != want and not tensor.HasField("segment"):
        raise FormatError(f"tensor {name!r}: {field} holds {have} values but dims "
                          f"{list(tensor.dims)} need {want}", label)


def load_external_data(proto: Any, base_dir: str, label: str) -> None:
    """Read every external tensor of ``proto`` (checked again here) into its ``raw_data``.

    The file is opened without following a final symlink and without blocking, and must be a
    regular file at the moment it is read, so swapping it after :func:`check_model` gains
    nothing. ``proto`` is modified in place.
    """
    real_base = os.path.realpath(base_dir)
    for tensor in external_tensors(proto):
        location, offset, want = _check_external(tensor, real_base, label)
        tensor.raw_data = _read_range(_inside(real_base, location) or "", offset, want,
                                      location, label)
        del tensor.external_data[:]
        tensor.data_location = 0


def _read_range(real: str, offset: int, length: int, location: str, label: str) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise FormatError(f"external data file {location!r} cannot be opened: {exc}",
                          label) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or offset + length > info.st_size:
            raise FormatError(f"external data file {location!r} changed while loading", label)
        chunks, pos = [], offset
        while pos < offset + length:
            chunk = os.pread(fd, min(offset + length - pos, 1 << 26), pos)
            if not chunk:
                raise FormatError(f"external data file {location!r} ended early", label)
            chunks.append(chunk)
            pos += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def external_tensors(proto: Any) -> list[Any]:
    """The tensors of ``proto`` whose data lives in external files."""
    return [t for t in _walk(proto, "<model>") if t.data_location == _EXTERNAL]


def _walk(proto: Any, label: str) -> list[Any]:
    """Every TensorProto anywhere in ``proto`` (graphs, subgraphs, functions, attributes,
    sparse tensors, training info); raises FormatError for a string field that is not UTF-8.
    Iterative, and never reads a tensor's ``bytes`` fields (its raw data is not copied)."""
    tensors = []
    stack: list[tuple[Any, Any]] = [(proto, None)]  # (message, (parent path, field, index))
    while stack:
        msg, path = stack.pop()
        if msg.DESCRIPTOR.name == "TensorProto":
            tensors.append(msg)
            fields = [(f, getattr(msg, f.name)) for f in _tensor_fields(msg.DESCRIPTOR)
                      if _repeated(f) or msg.HasField(f.name)]
        else:
            fields = msg.ListFields()
        for f, value in fields:
            repeated = _repeated(f)
            if f.type == f.TYPE_STRING:
                for text in value if repeated else (value,):
                    if not isinstance(text, str):
                        raise FormatError(f"{_where(path)}.{f.name} is not valid UTF-8 text "
                                          f"({bytes(text)[:40]!r}); the file is corrupt or "
                                          "was not written by an ONNX exporter", label)
            elif f.type == f.TYPE_MESSAGE:
                if repeated:
                    stack.extend((m, (path, f.name, i)) for i, m in enumerate(value))
                else:
                    stack.append((value, (path, f.name, None)))
    return tensors


def _where(path: Any) -> str:
    """``model.graph.node[3]`` from the walk's (parent, field, index) chain."""
    parts = []
    while path is not None:
        path, name, index = path
        parts.append(name if index is None else f"{name}[{index}]")
    return ".".join(["model", *reversed(parts)])


def _repeated(field: Any) -> bool:
    flag = getattr(field, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return field.label == field.LABEL_REPEATED


_TENSOR_FIELDS: dict[Any, list[Any]] = {}


def _tensor_fields(descriptor: Any) -> list[Any]:
    """A TensorProto's string and message fields (not its bytes: raw_data, string_data)."""
    fields = _TENSOR_FIELDS.get(descriptor)
    if fields is None:
        fields = [f for f in descriptor.fields if f.type in (f.TYPE_STRING, f.TYPE_MESSAGE)]
        _TENSOR_FIELDS[descriptor] = fields
    return fields


def _check_external(tensor: Any, real_base: str | None, label: str) -> tuple[str, int, int]:
    """(location, offset, byte length) of a checked external tensor."""
    name = tensor.name
    fields: dict[str, str] = {}
    for entry in tensor.external_data:
        if entry.key in fields:
            raise FormatError(f"tensor {name!r}: external data key {entry.key!r} appears twice",
                              label)
        fields[entry.key] = entry.value
    location = fields.get("location", "")
    if real_base is None:
        raise FormatError(f"tensor {name!r} keeps its data in external file {location!r}, but "
                          "the model was not given as a path; load it from its .onnx file so "
                          "the data is looked up beside it", label)
    real = _inside(real_base, location)
    if real is None:
        raise FormatError(f"tensor {name!r}: external data location {location!r} points "
                          "outside the model's folder (absolute, '..', or a symlink leading "
                          "out); external data must be a file inside the folder of the .onnx "
                          "file", label)
    try:
        info = os.stat(real)
    except OSError:
        raise FormatError(f"tensor {name!r}: external data file {location!r} does not exist "
                          "beside the model", label) from None
    if not stat.S_ISREG(info.st_mode):
        raise FormatError(f"tensor {name!r}: external data {location!r} is not a regular file "
                          "(a folder, FIFO or device); refusing to read it", label)
    offset, length = _check_range(tensor, fields, info.st_size, location, label)
    return location, offset, length


def _inside(real_base: str, location: str) -> str | None:
    """The real path of ``location`` if it is relative and stays inside ``real_base``."""
    if not location or "\0" in location or os.path.isabs(location) or \
            os.path.splitdrive(location)[0] or location.startswith(("/", "\\")):
        return None
    parts = location.replace("\\", "/").split("/")
    if ".." in parts:
        return None
    real = os.path.realpath(os.path.join(real_base, location))
    if real == real_base or os.path.commonpath([real_base, real]) != real_base:
        return None  # a symlink (file or folder) inside the folder points out of it
    return real


def _number(fields: dict[str, str], key: str, name: str, label: str) -> int | None:
    value = fields.get(key)
    if value is None:
        return None
    if not value or len(value) > 19 or not set(value) <= _DIGITS:
        raise FormatError(f"tensor {name!r}: external data {key} {value[:40]!r} is not a "
                          "non-negative decimal integer", label)
    return int(value)


def _check_range(tensor: Any, fields: dict[str, str], size: int, location: str,
                 label: str) -> tuple[int, int]:
    name = tensor.name
    offset = _number(fields, "offset", name, label) or 0
    length = _number(fields, "length", name, label)
    if offset > size or (length is not None and offset + length > size):
        raise FormatError(f"tensor {name!r}: external data offset {offset} / length {length} "
                          f"run past the end of {location!r} ({size} bytes)", label)
    want = _nbytes(tensor, label)
    have = length if length is not None else size - offset
    if have != want if length is not None else have < want:
        raise FormatError(f"tensor {name!r}: its dims {list(tensor.dims)} need {want} bytes "
                          f"but the external data holds {have}", label)
    return offset, want


def _nbytes(tensor: Any, label: str | None) -> int:
    """Bytes that a dense tensor of these dims and type takes (strings are refused)."""
    if tensor.data_type == _STRING:
        raise FormatError(f"tensor {tensor.name!r}: string tensors cannot use external data",
                          label)
    bits = _BITS.get(tensor.data_type)
    if bits is None:
        raise FormatError(f"tensor {tensor.name!r}: unknown data_type {tensor.data_type}",
                          label)
    return -(-_count(tensor, label) * bits // 8)


def _count(tensor: Any, label: str | None) -> int:
    count = 1
    for d in tensor.dims:
        if d < 0:
            raise FormatError(f"tensor {tensor.name!r}: negative dimension in dims "
                              f"{list(tensor.dims)}", label)
        count *= d
    return count


def _data_size(tensor: Any) -> int:
    """Elements (or bytes, for raw data) present in whichever data field is set."""
    if tensor.HasField("raw_data"):
        return len(tensor.raw_data)
    return max(len(tensor.float_data), len(tensor.int32_data), len(tensor.string_data),
               len(tensor.int64_data), len(tensor.double_data), len(tensor.uint64_data))


def tensor_to_array(tensor: Any, label: str | None) -> Any:
    """``onnx.numpy_helper.to_array`` for an untrusted tensor: unknown types, dims that
    disagree with the data, external data not loaded and decoding failures of any kind are a
    :class:`FormatError` naming the tensor, found before anything of the dims' size is made."""
    from onnx import numpy_helper

    name = tensor.name
    if tensor.data_location == _EXTERNAL:
        raise FormatError(f"tensor {name!r}: its external data was not loaded", label)
    if tensor.data_type not in _BITS and tensor.data_type != _STRING:
        raise FormatError(f"tensor {name!r}: unknown data_type {tensor.data_type}", label)
    count = _count(tensor, label)
    if tensor.HasField("raw_data") and tensor.data_type != _STRING:
        want = _nbytes(tensor, label)
        if len(tensor.raw_data) != want:
            raise FormatError(f"tensor {name!r}: raw_data holds {len(tensor.raw_data)} bytes "
                              f"but dims {list(tensor.dims)} need {want}", label)
    elif count > 4 * _data_size(tensor) + 1:  # typed fields: at most 4 (2-bit) values each
        raise FormatError(f"tensor {name!r}: dims {list(tensor.dims)} need {count} values but "
                          f"the tensor holds {_data_size(tensor)}", label)
    try:
        array = numpy_helper.to_array(tensor)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a corrupt tensor
        raise FormatError(f"tensor {name!r} cannot be decoded ({type(exc).__name__}: {exc})",
                          label) from None
    if array.size != count:
        raise FormatError(f"tensor {name!r}: decoded {array.size} values, dims "
                          f"{list(tensor.dims)} need {count}", label)
    return array
