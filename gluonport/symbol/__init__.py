"""The ``sym`` namespace: MXNet 1.x's symbolic API.

Every registered operator is a function here under MXNet's name (``sym.Convolution``,
``sym.contrib.box_nms``...), generated from the op registry, creating graph nodes.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .._namespace import populate, short_name
from ..ops.registry import OpDef
from .symbol import Group, Symbol, Variable, create, invoke, load, load_json, var

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "create", "invoke",
           "zeros", "ones", "full", "arange"]


def zeros(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A ``_zeros`` node of ``shape`` (``mx.sym.zeros``)."""
    return invoke("_zeros", (), {"shape": shape, "dtype": dtype or np.float32, **kwargs})


def ones(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A ``_ones`` node of ``shape`` (``mx.sym.ones``)."""
    return invoke("_ones", (), {"shape": shape, "dtype": dtype or np.float32, **kwargs})


def full(shape: Any, val: float, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A ``_full`` node (``mx.sym.full``)."""
    return invoke("_full", (), {"shape": shape, "value": val, "dtype": dtype or np.float32,
                                **kwargs})


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           infer_range: bool = False, name: str | None = None, dtype: Any = None) -> Symbol:
    """An ``_arange`` node (``mx.sym.arange``)."""
    return invoke("_arange", (), {"start": start, "stop": stop, "step": step, "repeat": repeat,
                                  "infer_range": infer_range, "name": name,
                                  "dtype": dtype or np.float32})


def _make_function(name: str, op: OpDef):
    hint = short_name(name).lower()

    def fn(*args: Any, **kwargs: Any) -> Symbol:
        return invoke(name, args, kwargs, hint=hint)

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = op.doc or f"MXNet operator ``{op.name}`` (symbolic)."
    return fn


from .._ufunc import install_symbol  # noqa: E402
from . import random  # noqa: E402, F401  (hand-written wrappers win over generated ones)


def _hinted(name: str, args: tuple, kwargs: dict) -> Symbol:
    return invoke(name, args, kwargs, hint=short_name(name).lower())


install_symbol(globals(), _hinted, Symbol)  # sym.maximum, sym.pow, sym.eye, ...
populate(sys.modules[__name__], _make_function)
from . import _control  # noqa: E402

for _name in _control.__all__:  # sym.contrib.foreach/while_loop/cond: _foreach/... nodes
    setattr(sys.modules[__name__].contrib, _name, getattr(_control, _name))
