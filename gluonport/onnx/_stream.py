"""Write an ONNX model straight to disk without building it in memory.

protobuf's wire format is a sequence of tagged fields, and repeated fields may appear in any
order, so a ``ModelProto`` can be written as: the model's own fields, then field 7 (``graph``)
whose bytes are the skeleton graph followed by one field 5 (``initializer``) per weight. Each
weight's bytes go from the numpy buffer to the file once; nothing is copied into protobuf.
With ``external=True`` the weights go to a data file beside it and the tensors only point
there (ONNX external data: ``location``, ``offset``, ``length``). The data file is named after
its digest, ``<file>.<12 hex digits>.data``, and written before the ``.onnx``; the data file of
the previous write is removed only after the new ``.onnx`` is in place, so the pair cannot tear
(see :mod:`gluonport._core.onnxdigest`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from typing import IO, Any

import numpy as np

from .._core import dtypes
from .._core.onnxdigest import DIGEST_KEY, data_file_name, is_data_file_of
from ..formats._atomic import atomic_open, create_temp

__all__ = ["write_model", "remove_data_files"]

_GRAPH_FIELD = 7        # ModelProto.graph
_INIT_FIELD = 5         # GraphProto.initializer
_RAW_FIELD = 9          # TensorProto.raw_data


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _tag(field: int) -> bytes:
    return _varint((field << 3) | 2)  # wire type 2: length-delimited


def _tensor_header(name: str, arr: np.ndarray, external: tuple[str, int] | None) -> bytes:
    from onnx import TensorProto

    t = TensorProto(name=name, data_type=dtypes.onnx_of(arr.dtype), dims=list(arr.shape))
    if external is not None:
        location, offset = external
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(offset)),
                           ("length", str(arr.nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
    return t.SerializeToString()


def _little_endian(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return arr


def write_model(path: str, skeleton: Any, weights: list[tuple[str, np.ndarray]],
                external: bool = False) -> None:
    """Write ``skeleton`` plus ``weights`` (as initializers) to ``path`` atomically.

    ``skeleton`` must not list the weights as graph inputs. With ``external`` the weight bytes
    go to ``<path>.<digest>.data`` (see the module docstring), the model records their sha256
    in ``metadata_props``, and data files of earlier writes of ``path`` are removed last.
    """
    weights = [(name, _little_endian(arr)) for name, arr in weights]
    rest = type(skeleton)()
    rest.CopyFrom(skeleton)
    rest.ClearField("graph")
    path = os.path.abspath(path)
    folder, base = os.path.split(path)
    if not external:
        _drop_meta(rest, DIGEST_KEY)
        _write_onnx(path, rest, skeleton.graph, weights, None)
        remove_data_files(folder, base, keep=None)
        return
    before = _data_files(folder, base)
    digest, tmp = _write_data(path, weights)
    data_name = data_file_name(base, digest)
    try:
        os.replace(tmp, os.path.join(folder, data_name))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _set_meta(rest, DIGEST_KEY, digest)
    try:
        _write_onnx(path, rest, skeleton.graph, weights, data_name)
    except BaseException:
        if data_name not in before:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, data_name))
        raise
    remove_data_files(folder, base, keep=data_name)


def remove_data_files(folder: str, base: str, keep: str | None) -> None:
    """Remove the data files of earlier writes (or killed ones) of ``base``, once the new
    ``.onnx`` is in place."""
    for name in _data_files(folder, base):
        if name != keep:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))


def _data_files(folder: str, base: str) -> set[str]:
    """Data files that gluonport's writer made for the model file ``base`` in ``folder``."""
    try:
        return {n for n in os.listdir(folder) if is_data_file_of(n, base)}
    except OSError:
        return set()


def _set_meta(model: Any, key: str, value: str) -> None:
    for prop in model.metadata_props:
        if prop.key == key:
            prop.value = value
            return
    entry = model.metadata_props.add()
    entry.key, entry.value = key, value


def _drop_meta(model: Any, key: str) -> None:
    keep = [(p.key, p.value) for p in model.metadata_props if p.key != key]
    if len(keep) != len(model.metadata_props):
        del model.metadata_props[:]
        for k, v in keep:
            _set_meta(model, k, v)


def _write_data(path: str, weights: list[tuple[str, np.ndarray]]) -> tuple[str, str]:
    """Write the weights to a fresh temp file beside ``path``; ``(sha256 hex, temp path)``."""
    fd, tmp = create_temp(path + ".data")
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as f:
            for _, arr in weights:
                if arr.nbytes:
                    view = memoryview(arr.reshape(-1).view(np.uint8))
                    h.update(view)
                    f.write(view)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return h.hexdigest(), tmp


def _write_onnx(path: str, rest: Any, graph: Any, weights: list[tuple[str, np.ndarray]],
                data_name: str | None) -> None:
    """The ``.onnx`` file, atomically: ``rest`` (the model without its graph), then the graph
    with one initializer per weight, inline or pointing into ``data_name``."""
    external = data_name is not None
    headers: list[bytes] = []
    offset = 0
    for name, arr in weights:
        headers.append(_tensor_header(name, arr, (data_name, offset) if external else None))
        offset += arr.nbytes
    graph_bytes = graph.SerializeToString()
    entries = []
    for header, (_, arr) in zip(headers, weights):
        raw = b"" if external else _tag(_RAW_FIELD) + _varint(arr.nbytes)
        body = len(header) + len(raw) + (0 if external else arr.nbytes)
        entries.append(_tag(_INIT_FIELD) + _varint(body) + header + raw)
    graph_len = len(graph_bytes) + sum(len(e) for e in entries) + \
        (0 if external else sum(a.nbytes for _, a in weights))
    with atomic_open(path, "wb") as f:
        f.write(rest.SerializeToString())
        f.write(_tag(_GRAPH_FIELD) + _varint(graph_len))
        f.write(graph_bytes)
        for entry, (_, arr) in zip(entries, weights):
            f.write(entry)
            if not external:
                _write_array(f, arr)


def _write_array(f: IO[bytes], arr: np.ndarray) -> None:
    if arr.nbytes:
        f.write(memoryview(arr.reshape(-1).view(np.uint8)))
