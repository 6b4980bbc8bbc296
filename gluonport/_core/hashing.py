"""File digests (sha256 in exported models' metadata, sha1 of model-zoo parameter files)."""

from __future__ import annotations

import hashlib
import os

__all__ = ["file_digest"]


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB chunks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
