"""An ``.onnx`` file and its external data file must be of the same write.

Two files cannot be replaced in one atomic step. gluonport's writer (``gluonport.onnx._stream``)
therefore never overwrites a data file that a model on disk may still use: each write puts its
weights in a new file named after their digest, ``<model>.onnx.<12 hex digits>.data``, renames
the new ``.onnx`` (which points at it) into place last, and only then removes the data files of
earlier writes. A process killed at any moment leaves the old model with its old data or the new
model with its new data, plus at worst an unused data file that the next write removes.

As a second line of defence the writer records the sha256 of the data file in the model's
``metadata_props`` under :data:`DIGEST_KEY`, and :func:`check_data_digest` (run by the one gate
every ONNX load passes, ``onnxfile.read_model``) refuses a model whose data file does
not have that digest: a data file copied without its model, replaced by hand, or written by an
older gluonport that reused the name ``<model>.onnx.data``. Models without the key (older
files, other tools) load as before. The check reads the data file once (about 1 s per GB); the
operating system's cache then serves the session's own read.

onnx is not imported here: only protobuf messages are read.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from ..errors import FormatError

__all__ = ["DIGEST_KEY", "data_file_name", "is_data_file_of", "data_files_of",
           "check_data_digest", "file_sha256"]

#: ``metadata_props`` key holding the hex sha256 of the model's external data file.
DIGEST_KEY = "gluonport.external_data_sha256"

_CHUNK = 1 << 24


def data_file_name(model_base: str, digest: str) -> str:
    """The data file name for the model file ``model_base`` whose data has ``digest``."""
    return f"{model_base}.{digest[:12]}.data"


def is_data_file_of(name: str, model_base: str) -> bool:
    """Whether ``name`` is a data file that gluonport's writer made for ``model_base``."""
    return re.fullmatch(re.escape(model_base) + r"\.[0-9a-f]{12}\.data", name) is not None


def data_files_of(model_path: str) -> list[str]:
    """Paths of the data files that gluonport's writer made for ``model_path`` (after a
    completed write: the one its model uses)."""
    folder, base = os.path.split(os.path.abspath(model_path))
    try:
        names = sorted(n for n in os.listdir(folder) if is_data_file_of(n, base))
    except OSError:
        return []
    return [os.path.join(os.path.dirname(model_path), n) for n in names]


def file_sha256(path: str) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


# One load passes the gate two or three times (import, then each onnxruntime session); a file
# whose identity (device, inode, size, modification time) is unchanged is not hashed again.
_DIGESTS: dict[tuple[int, int, int, int], str] = {}


def _data_sha256(path: str) -> str:
    st = os.stat(path)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        digest = file_sha256(path)
        if len(_DIGESTS) > 256:
            _DIGESTS.clear()
        _DIGESTS[key] = digest
    return digest


def check_data_digest(proto: Any, external: list[Any], base_dir: str | None,
                      label: str) -> None:
    """Refuse ``proto`` (read from a file in ``base_dir``) if it records a data digest that its
    external data file does not have. ``external`` are its tensors stored outside the file
    (the reader lists them). Locations must already be checked (``check_model``)."""
    want = None
    for prop in proto.metadata_props:
        if prop.key == DIGEST_KEY:
            want = prop.value
    if want is None or base_dir is None:
        return
    locations = set()
    for tensor in external:
        for entry in tensor.external_data:
            if entry.key == "location":
                locations.add(entry.value)
    if not locations:
        return  # saved inline since: nothing to check
    if len(locations) != 1:
        raise FormatError(f"records an external data digest ({DIGEST_KEY}) but its tensors use "
                          f"{len(locations)} external data files, not one; the file was "
                          "altered after it was written. Re-export the model", label)
    location = locations.pop()
    try:
        got = _data_sha256(os.path.join(base_dir, location))
    except OSError as exc:
        raise FormatError(f"external data file {location!r} cannot be read: {exc}",
                          label) from None
    if got != want.lower():
        raise FormatError(f"external data file {location!r} is not the one this model was "
                          f"written with (its sha256 is {got[:16]}..., the model records "
                          f"{want[:16]}...): the .onnx file and its data are of different "
                          "writes (an interrupted export, or one file copied without the "
                          "other). Re-export the model, or copy both files together", label)
