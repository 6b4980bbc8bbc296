"""The ``nd`` namespace: MXNet 1.x's imperative API on numpy.

Every registered operator is a function here under MXNet's name (``nd.FullyConnected``,
``nd.broadcast_add``, ``nd.contrib.box_nms``...), generated from the op registry; creation
functions and ``save``/``load`` are written by hand.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .._core import dtypes, heap
from .._namespace import populate
from ..context import Context, current_context
from ..ops.registry import OpDef
from .ndarray import NDArray, array, from_numpy, invoke

__all__ = ["NDArray", "array", "from_numpy", "invoke", "zeros", "ones", "full", "empty",
           "arange", "save", "load", "concatenate", "waitall"]

heap.keep_freed_memory()  # arrays' memory is recycled, not page-faulted in every step


def _dtype(dtype: Any) -> np.dtype:
    return dtypes.to_numpy("float32" if dtype is None else dtype)


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An array of zeros, float32 unless ``dtype`` says otherwise (``mx.nd.zeros``)."""
    return NDArray(np.zeros(_shape(shape), _dtype(dtype)), ctx or current_context())


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """An array of ones (``mx.nd.ones``)."""
    return NDArray(np.ones(_shape(shape), _dtype(dtype)), ctx or current_context())


def full(shape: Any, val: float, ctx: Context | None = None, dtype: Any = None,
         out: NDArray | None = None) -> NDArray:
    """An array filled with ``val`` (``mx.nd.full``)."""
    res = NDArray(np.full(_shape(shape), val, _dtype(dtype)), ctx or current_context())
    if out is not None:
        out[...] = res
        return out
    return res


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An uninitialised array (``mx.nd.empty``); here zero-filled, for determinism."""
    return zeros(shape, ctx, dtype)


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           infer_range: bool | None = None, ctx: Context | None = None,
           dtype: Any = None) -> NDArray:
    """Evenly spaced values, each repeated ``repeat`` times (``mx.nd.arange``; float32).

    Runs the ``_arange`` operator, so values are computed in ``dtype`` exactly as MXNet does
    (``start + i * step`` in float32; integer dtypes truncate ``start`` and ``step`` first).
    ``infer_range`` is accepted and ignored, as in MXNet 1.9.1 (deprecated there).
    """
    return invoke("_arange", (), {"start": start, "stop": stop, "step": step, "repeat": repeat,
                                  "dtype": _dtype(dtype),
                                  "ctx": ctx or current_context()})


def concatenate(arrays: list[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """Join arrays along ``axis`` (``mx.nd.concatenate``)."""
    return NDArray(np.concatenate([a._data for a in arrays], axis=axis), arrays[0].context)


def waitall() -> None:
    """No-op: numpy is synchronous (``mx.nd.waitall``)."""


def save(fname: str, data: Any) -> None:
    """Save an NDArray, a list or a dict of NDArrays in MXNet's binary format (``mx.nd.save``).

    The file is byte-identical to what MXNet 1.9.1 writes (V2 records).
    """
    from ..formats import params

    params.save(fname, data)


def load(fname: str, ctx: Context | None = None) -> list[NDArray] | dict[str, NDArray]:
    """Load a file written by ``mx.nd.save`` (any MXNet version): a list or a dict of NDArrays.

    Like MXNet, arrays saved on a GPU load on ``cpu(0)`` here unless ``ctx`` is given.
    """
    from ..formats import params

    data = params.load(fname)
    ctx = ctx or current_context()
    if isinstance(data, dict):
        return {k: _wrap(v, ctx) for k, v in data.items()}
    return [_wrap(v, ctx) for v in data]


def _wrap(v: Any, ctx: Context) -> Any:
    if isinstance(v, np.ndarray):
        return NDArray(v, ctx)
    return v


def _make_function(name: str, op: OpDef):
    def fn(*args: Any, **kwargs: Any) -> Any:
        return invoke(name, args, kwargs)

    fn.__name__ = name.rsplit(".", 1)[-1]
    fn.__qualname__ = fn.__name__
    fn.__doc__ = op.doc or f"MXNet operator ``{op.name}`` (imperative)."
    return fn


from .._ufunc import contrib_checks, install_ndarray  # noqa: E402
from . import random  # noqa: E402, F401  (hand-written wrappers win over generated ones)

install_ndarray(globals(), invoke, NDArray, current_context)  # nd.maximum, nd.power, nd.eye...
populate(sys.modules[__name__], _make_function)
for _name, _fn in contrib_checks(globals()).items():  # nd.contrib.isinf/isfinite/isnan
    setattr(sys.modules[__name__].contrib, _name, _fn)
from ._optimizer_contrib import optimizer_wrappers  # noqa: E402

for _name, _fn in optimizer_wrappers(invoke, NDArray, full).items():  # nd.contrib.adamw_update
    setattr(sys.modules[__name__].contrib, _name, _fn)
from . import _control  # noqa: E402

for _name in _control.__all__:  # nd.contrib.foreach/while_loop/cond: Python loops
    setattr(sys.modules[__name__].contrib, _name, getattr(_control, _name))
