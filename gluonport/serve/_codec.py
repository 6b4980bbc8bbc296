"""Requests and responses of a served model: JSON, ``.npy`` or ``.npz`` bodies, strictly checked.

A request carries the model's inputs by name:

- JSON (``Content-Type: application/json``)::

      {"inputs": {"data": {"data": [[...]], "dtype": "float32"}}}

  or ``{"inputs": {"data": [[...]]}}`` (nested lists in the input's own dtype). A ``dtype`` that
  is not the input's is refused, never cast.
- ``.npy`` bytes (``application/x-npy``): the one input of a one-input model.
- ``.npz`` bytes (``application/x-npz``): one ``NAME.npy`` member per input.

A body without a content type (or ``application/octet-stream``) is recognised by its first
bytes. The response holds every output by name, in the request's encoding: ``{"outputs":
{"prob": {"data": [...], "dtype": "float32", "shape": [2, 10]}}}``, a ``.npy`` (one output) or an
``.npz``. Bad requests raise a :class:`~gluonport.errors.GluonportError` naming the input;
:func:`http_status` maps it to 400 (malformed, missing input, wrong dtype or shape) or 413 (over
the size limit). Nothing is allocated beyond the body's own size before it is checked.
"""

from __future__ import annotations

import io
import json
import math
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import (
    ArgumentError,
    DTypeError,
    FormatError,
    GluonportError,
    GraphError,
    ResourceLimitError,
    ShapeError,
)
from ._model import TensorSpec

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "decode_request", "encode_response", "http_status",
           "check_inputs", "error_body", "JSON", "NPY", "NPZ"]

DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024
JSON, NPY, NPZ = "application/json", "application/x-npy", "application/x-npz"
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"
_SNIFF = ("", "application/octet-stream")
# numpy < 1.24 turns a ragged nested list into an object array with only this warning (1.24 on
# raise ValueError); made an error there (warnings filters are process-wide, so only there), a
# ragged input is refused as not rectangular on every numpy.
_RAGGED = getattr(np, "exceptions", np).VisibleDeprecationWarning
_RAGGED_WARNS = np.lib.NumpyVersion(np.__version__) < "1.24.0"


def http_status(exc: BaseException) -> int:
    """The HTTP status for an error raised while a request was handled: 413 over the size
    limit, 400 for a request that does not fit the model, 500 for anything else."""
    if isinstance(exc, ResourceLimitError):
        return 413
    if isinstance(exc, (FormatError, ShapeError, DTypeError, ArgumentError, GraphError)):
        return 400
    return 500


def error_body(exc: BaseException) -> bytes:
    """``{"error": "<one line>"}`` for an error response."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return json.dumps({"error": text}).encode()


def _encoding(body: bytes, content_type: str | None) -> str:
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype in (JSON, "text/json") or ctype.endswith("+json"):
        return JSON
    if ctype in (NPY, "application/npy"):
        return NPY
    if ctype in (NPZ, "application/npz", "application/zip"):
        return NPZ
    if ctype in _SNIFF:
        if body.startswith(_NPY_MAGIC):
            return NPY
        if body.startswith(_ZIP_MAGIC):
            return NPZ
        return JSON
    raise FormatError(f"request: content type {ctype!r} is not served; send {JSON}, {NPY} or "
                      f"{NPZ}")


def decode_request(body: bytes, content_type: str | None, inputs: Sequence[TensorSpec], *,
                   batched: bool = False,
                   max_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> tuple[dict[str, np.ndarray],
                                                                        str]:
    """Parse and check a request body; returns ``({input: array}, encoding)``.

    ``inputs`` are the model's input specs; ``batched``: requests are batched along axis 0, so
    every input must have the same (non-zero) size there. Raises a GluonportError (see
    :func:`http_status`) for anything that does not fit.
    """
    if len(body) > max_bytes:
        raise ResourceLimitError(f"request: body of {len(body)} bytes is over the limit of "
                                 f"{max_bytes} bytes")
    enc = _encoding(body, content_type)
    if enc == JSON:
        arrays = _from_json(body, inputs)
    elif enc == NPY:
        if len(inputs) != 1:
            raise ArgumentError(f"request: a .npy body holds one array, but the model takes "
                                f"{len(inputs)} inputs {[s.name for s in inputs]}; send an "
                                ".npz with one NAME.npy per input, or JSON")
        arrays = {inputs[0].name: read_npy(body, "request (.npy)")}
    else:
        arrays = _from_npz(body, inputs, max_bytes)
    return check_inputs(arrays, inputs, batched), enc


def read_npy(buf: bytes, label: str) -> np.ndarray:
    """A ``.npy`` from bytes without trusting its header: the data must be exactly the size the
    header declares (no allocation from the header alone), no object dtype."""
    f = io.BytesIO(buf)
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"version {version} is not supported (1.0 and 2.0 are)")
    except Exception as exc:  # noqa: BLE001 - numpy's header parser raises many kinds
        raise FormatError(f"not a valid .npy: {' '.join(str(exc).split())}", label) from None
    if dtype.hasobject or dtype.kind not in "biufc":
        raise FormatError(f"dtype {dtype} is not a numeric dtype", label)
    count = math.prod(shape)
    offset = f.tell()
    if count * dtype.itemsize != len(buf) - offset:
        raise FormatError(f"header declares shape {shape} of {dtype} ({count * dtype.itemsize} "
                          f"bytes) but {len(buf) - offset} bytes of data follow", label,
                          offset)
    arr = np.frombuffer(buf, dtype, count, offset)
    arr = arr.reshape(shape[::-1]).T if fortran else arr.reshape(shape)
    if not dtype.isnative:
        arr = arr.astype(dtype.newbyteorder("="))
    return arr


def _from_npz(body: bytes, inputs: Sequence[TensorSpec], max_bytes: int) -> dict[str, np.ndarray]:
    label = "request (.npz)"
    try:
        zf = zipfile.ZipFile(io.BytesIO(body))
        infos = zf.infolist()
    except Exception as exc:  # noqa: BLE001 - any malformed archive
        raise FormatError(f"not a valid .npz: {exc}", label) from None
    names = {s.name for s in inputs}
    out: dict[str, np.ndarray] = {}
    total = 0
    for info in infos:
        key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        if key not in names or key in out:
            raise ArgumentError(f"{label}: member {info.filename!r} is not an input of the model "
                                f"(or comes twice); its inputs are {sorted(names)}")
        total += info.file_size
        if total > max_bytes:
            raise ResourceLimitError(f"{label}: members unpack to over {max_bytes} bytes")
        try:
            with zf.open(info) as member:
                data = member.read(max_bytes + 1)
        except Exception as exc:  # noqa: BLE001 - corrupt, encrypted, unknown compression
            raise FormatError(f"member {info.filename!r} cannot be read: {exc}", label) from None
        if len(data) != info.file_size:
            raise FormatError(f"member {info.filename!r} unpacks to {len(data)} bytes, not the "
                              f"{info.file_size} its header says", label)
        out[key] = read_npy(data, f"{label} member {info.filename!r}")
    return out


def _from_json(body: bytes, inputs: Sequence[TensorSpec]) -> dict[str, np.ndarray]:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"request: body is not valid JSON ({' '.join(str(exc).split())})"
                          ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("inputs"), dict):
        raise FormatError('request: JSON must be an object {"inputs": {NAME: value, ...}}, '
                          'a value being nested lists or {"data": nested lists, "dtype": '
                          '"float32"}')
    specs = {s.name: s for s in inputs}
    out = {}
    for name, value in doc["inputs"].items():
        spec = specs.get(name)
        if spec is None:
            raise ArgumentError(f"request: {name!r} is not an input of the model; its inputs "
                                f"are {list(specs)}")
        out[name] = _json_array(name, value, spec)
    return out


def _json_array(name: str, value: Any, spec: TensorSpec) -> np.ndarray:
    want = np.dtype(spec.dtype)
    if isinstance(value, dict):
        extra = sorted(set(value) - {"data", "dtype", "shape"})
        if "data" not in value or extra:
            raise FormatError(f'request: input {name!r} must be {{"data": ..., "dtype": ...}}'
                              + (f"; unknown keys {extra}" if extra else ""))
        given = value.get("dtype")
        if given is not None:
            try:
                gdt = np.dtype(given) if isinstance(given, str) else None
            except TypeError:
                gdt = None
            if gdt is None:
                raise DTypeError(f"request: input {name!r} has dtype {given!r}, which is not a "
                                 "numpy dtype name")
            if gdt != want:
                raise DTypeError(f"request: input {name!r} is {gdt.name}; the model takes "
                                 f"{want.name}")
        shape = value.get("shape")
        value = value["data"]
    else:
        shape = None
    try:
        if _RAGGED_WARNS:
            with warnings.catch_warnings():
                warnings.simplefilter("error", _RAGGED)
                arr = np.asarray(value)
        else:
            arr = np.asarray(value)
    except (ValueError, TypeError, RecursionError, _RAGGED):
        raise ShapeError(f"request: input {name!r} is not a rectangular nested list") from None
    if arr.dtype.kind not in "biuf":
        raise DTypeError(f"request: input {name!r} holds {arr.dtype.kind!r}-kind values "
                         "(strings, nulls, ragged lists or huge integers); numbers only")
    ok = {"b": "b", "i": "iu", "u": "iu", "f": "iuf", "c": "iufc"}.get(want.kind, "")
    if arr.size and arr.dtype.kind not in ok:
        raise DTypeError(f"request: input {name!r} holds {arr.dtype.name} values; the model "
                         f"takes {want.name}")
    if want.kind in "iu" and arr.size:
        info = np.iinfo(want)
        if int(arr.min()) < info.min or int(arr.max()) > info.max:
            raise DTypeError(f"request: input {name!r} has values outside {want.name}'s range")
    arr = arr.astype(want)
    if shape is not None:
        if not isinstance(shape, list) or [int(d) for d in arr.shape] != shape:
            raise ShapeError(f"request: input {name!r} has shape {list(arr.shape)}, not the "
                             f"declared {shape}")
    return arr


def _dims(dims: Sequence[int]) -> str:
    return "(" + ", ".join("N" if d < 0 else str(d) for d in dims) + ")"


def check_inputs(arrays: Mapping[str, np.ndarray], inputs: Sequence[TensorSpec],
                 batched: bool = False) -> dict[str, np.ndarray]:
    """Every input present, none unknown, each of the model's dtype, rank and fixed dims; with
    ``batched``, the same non-zero size on axis 0 everywhere."""
    names = [s.name for s in inputs]
    missing = [n for n in names if n not in arrays]
    extra = [n for n in arrays if n not in names]
    if missing or extra:
        raise ArgumentError(f"request: inputs {names} expected; missing {missing}"
                            + (f", unknown {extra}" if extra else ""))
    out = {}
    for s in inputs:
        a = arrays[s.name]
        if a.dtype != np.dtype(s.dtype):
            raise DTypeError(f"request: input {s.name!r} is {a.dtype.name}; the model takes "
                             f"{np.dtype(s.dtype).name}")
        if a.ndim != len(s.dims) or any(d > 0 and d != g for d, g in zip(s.dims, a.shape)):
            raise ShapeError(f"request: input {s.name!r} has shape {tuple(a.shape)}; the model "
                             f"takes {_dims(s.dims)}")
        if 0 in a.shape:
            raise ShapeError(f"request: input {s.name!r} has shape {tuple(a.shape)}, with no "
                             "elements")
        out[s.name] = a
    if batched:
        sizes = {n: a.shape[0] for n, a in out.items()}
        if len(set(sizes.values())) > 1:
            raise ShapeError(f"request: inputs have different batch sizes (axis 0): {sizes}")
    return out


def encode_response(outputs: Mapping[str, np.ndarray], encoding: str) -> tuple[bytes, str]:
    """``(body, content type)`` holding ``outputs`` in ``encoding`` (:data:`JSON`, :data:`NPY`
    for one output, else :data:`NPZ`)."""
    if encoding == JSON:
        doc = {"outputs": {n: {"data": np.asarray(a).tolist(), "dtype": np.asarray(a).dtype.name,
                               "shape": list(np.shape(a))} for n, a in outputs.items()}}
        return json.dumps(doc).encode(), JSON
    buf = io.BytesIO()
    if encoding == NPY and len(outputs) == 1:
        np.save(buf, np.asarray(next(iter(outputs.values()))), allow_pickle=False)
        return buf.getvalue(), NPY
    np.savez(buf, **{n: np.asarray(a) for n, a in outputs.items()})
    return buf.getvalue(), NPZ


def split_batch(outputs: Sequence[np.ndarray], sizes: Sequence[int]) -> list[list[np.ndarray]]:
    """Outputs of a batch of requests, cut back into each request's rows."""
    ends = np.cumsum(sizes)[:-1]
    per_output = [np.split(o, ends) for o in outputs]
    return [[parts[i] for parts in per_output] for i in range(len(sizes))]


def is_request_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the client's fault (a 4xx)."""
    return isinstance(exc, GluonportError) and http_status(exc) < 500
