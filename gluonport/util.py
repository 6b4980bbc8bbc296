"""``mx.util``: the switches of MXNet's NumPy-compatible mode, and environment helpers.

gluonport runs MXNet 1.x's legacy array semantics only: ``is_np_array()`` and
``is_np_shape()`` are False (code that branches on them takes the legacy path), and turning
the NumPy mode on (``set_np``, ``use_np`` ...) raises a clear error instead of silently running
``mx.np`` code with other semantics.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .errors import GluonportError

__all__ = ["is_np_array", "is_np_shape", "set_np_shape", "set_np", "reset_np", "np_shape",
           "np_array", "use_np", "use_np_shape", "use_np_array", "get_gpu_count", "getenv",
           "setenv"]


def _numpy_mode(what: str) -> GluonportError:
    return GluonportError(f"util.{what}: MXNet's NumPy-compatible mode (mx.np / mx.npx) is not "
                          "supported; gluonport runs MXNet 1.x's legacy nd/sym semantics")


def is_np_array() -> bool:
    """False: arrays are legacy NDArrays."""
    return False


def is_np_shape() -> bool:
    """False: legacy shape semantics (0 = unknown dimension)."""
    return False


def set_np_shape(active: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Turning NumPy shape semantics on raises; off is the state already (returns False)."""
    if active:
        raise _numpy_mode("set_np_shape(True)")
    return False


def set_np(shape: bool = True, array: bool = True) -> None:  # noqa: FBT001, FBT002
    """Raises unless both are False (which is the state already)."""
    if shape or array:
        raise _numpy_mode("set_np")


def reset_np() -> None:
    """The legacy mode is the only mode: nothing to reset."""


def np_shape(active: bool = True) -> Any:  # noqa: FBT001, FBT002
    """``with np_shape(False):`` is a no-op scope; ``np_shape(True)`` raises."""
    if active:
        raise _numpy_mode("np_shape(True)")
    return _NoOpScope()


def np_array(active: bool = True) -> Any:  # noqa: FBT001, FBT002
    """``with np_array(False):`` is a no-op scope; ``np_array(True)`` raises."""
    if active:
        raise _numpy_mode("np_array(True)")
    return _NoOpScope()


class _NoOpScope:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _decorator(what: str) -> Callable[[Any], Any]:
    def deco(func: Any) -> Any:
        raise _numpy_mode(f"{what}({getattr(func, '__name__', func)})")

    deco.__name__ = what
    return deco


use_np = _decorator("use_np")
use_np_shape = _decorator("use_np_shape")
use_np_array = _decorator("use_np_array")


def get_gpu_count() -> int:
    """GPUs onnxruntime can use (CUDA execution provider present), as ``mx.context.num_gpus``."""
    from .context import num_gpus

    return num_gpus()


def getenv(name: str) -> str | None:
    """``os.environ.get(name)`` (MXNet's reads its C++ environment)."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set (or with None, remove) an environment variable."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
