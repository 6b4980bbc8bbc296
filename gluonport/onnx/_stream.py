"""Write an ONNX model straight to disk without building it in memory.

protobuf's wire format is a sequence of tagged fields, and repeated fields may appear in any
order, so a ``ModelProto`` can be written as: the model's own fields, then field 7 (``graph``)
whose bytes are the skeleton graph followed by one field 5 (``initializer``) per weight. Each
weight's bytes go from the numpy buffer to the file once; nothing is copied into protobuf.
With ``external=True`` the weights go to ``<file>.data`` and the tensors only point there
(ONNX external data: ``location``, ``offset``, ``length``).
"""

from __future__ import annotations

import os
from typing import IO, Any

import numpy as np

from .. import dtypes
from ..formats._atomic import atomic_open

__all__ = ["write_model"]

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
    go to ``path + ".data"`` (also atomically) and the model points at them.
    """
    weights = [(name, _little_endian(arr)) for name, arr in weights]
    data_name = os.path.basename(path) + ".data"
    headers: list[bytes] = []
    offset = 0
    for name, arr in weights:
        headers.append(_tensor_header(name, arr, (data_name, offset) if external else None))
        offset += arr.nbytes
    graph_bytes = skeleton.graph.SerializeToString()
    entries = []
    for header, (_, arr) in zip(headers, weights):
        raw = b"" if external else _tag(_RAW_FIELD) + _varint(arr.nbytes)
        body = len(header) + len(raw) + (0 if external else arr.nbytes)
        entries.append(_tag(_INIT_FIELD) + _varint(body) + header + raw)
    graph_len = len(graph_bytes) + sum(len(e) for e in entries) + \
        (0 if external else sum(a.nbytes for _, a in weights))
    rest = type(skeleton)()
    rest.CopyFrom(skeleton)
    rest.ClearField("graph")
    if external:
        with atomic_open(os.path.join(os.path.dirname(os.path.abspath(path)), data_name),
                         "wb") as f:
            for _, arr in weights:
                _write_array(f, arr)
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
