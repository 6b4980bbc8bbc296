"""``mx.base``: the names model code imports from MXNet's ``base`` module.

``MXNetError`` is :class:`~gluonport.errors.GluonportError`, so ``except mx.base.MXNetError``
(what MXNet raised for operator errors) catches gluonport's errors.
"""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np

from .errors import GluonportError

__all__ = ["MXNetError", "integer_types", "numeric_types", "string_types", "py_str",
           "data_dir", "data_dir_default"]

MXNetError = GluonportError
integer_types = (int, np.int32, np.int64)
numeric_types = (float, int, np.generic)
string_types = (str,)


def py_str(x: bytes | str) -> str:
    """``bytes`` -> ``str`` (UTF-8), as MXNet's helper; a ``str`` is returned as is (gluonport's
    op hooks pass names as str where MXNet passed bytes)."""
    return x if isinstance(x, str) else x.decode("utf-8")


def data_dir_default() -> str:
    """``%APPDATA%/mxnet`` on Windows, else ``~/.mxnet`` (where MXNet kept downloads)."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """``$MXNET_HOME``, else :func:`data_dir_default` (the model zoo's files live under it)."""
    return os.getenv("MXNET_HOME", data_dir_default())


class _NullType:
    """Placeholder for arguments not given (``mx.base._Null``)."""

    def __repr__(self) -> str:
        return "_Null"


_Null: Any = _NullType()
