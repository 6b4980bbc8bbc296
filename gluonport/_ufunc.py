"""MXNet's hand-written namespace functions that are not operators: ``nd.maximum(x, 0)``,
``nd.power``, ``nd.add`` ... (NDArray or number on either side), ``sym.maximum``/``pow``/
``hypot``, and ``eye``, ``linspace``, ``split_v2``, ``moveaxis``, ``load_frombuffer``,
``histogram`` (nd and sym) and ``onehot_encode``.

They dispatch as MXNet 1.9.1's Python front ends do, and gluon code calls them through
``F.maximum`` etc., so the choice of op matters:

* ``nd.f(a, b)``: two NDArrays run the ``broadcast_*`` op; NDArray and number run the
  ``_*_scalar`` op (its reflected form, ``_rminus_scalar`` ..., when the number is on the left;
  the number is passed as ``float``); two numbers give the Python result.
* ``sym.maximum/minimum/hypot/pow(a, b)``: two Symbols build the *elementwise* ``_Maximum`` /
  ``_Minimum`` / ``_Hypot`` / ``_Power`` node (same shapes required: MXNet's trap, kept), a Symbol
  and a number the ``*Scalar`` node (the number unconverted, as MXNet writes it).
"""

from __future__ import annotations

import numbers
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import ArgumentError, GluonportError

__all__ = ["install_ndarray", "install_symbol", "contrib_checks"]


def _is_number(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.ndarray)


# name -> (NDArray-NDArray op, number-number function, NDArray-number op, number-NDArray op)
_ND_BINARY: dict[str, tuple[str, Callable, str, str | None]] = {
    "add": ("broadcast_add", operator.add, "_plus_scalar", None),
    "subtract": ("broadcast_sub", operator.sub, "_minus_scalar", "_rminus_scalar"),
    "multiply": ("broadcast_mul", operator.mul, "_mul_scalar", None),
    "divide": ("broadcast_div", operator.truediv, "_div_scalar", "_rdiv_scalar"),
    "modulo": ("broadcast_mod", operator.mod, "_mod_scalar", "_rmod_scalar"),
    "power": ("broadcast_power", operator.pow, "_power_scalar", "_rpower_scalar"),
    "maximum": ("broadcast_maximum", lambda x, y: x if x > y else y, "_maximum_scalar", None),
    "minimum": ("broadcast_minimum", lambda x, y: x if x < y else y, "_minimum_scalar", None),
    "equal": ("broadcast_equal", lambda x, y: 1 if x == y else 0, "_equal_scalar", None),
    "not_equal": ("broadcast_not_equal", lambda x, y: 1 if x != y else 0,
                  "_not_equal_scalar", None),
    "greater": ("broadcast_greater", lambda x, y: 1 if x > y else 0, "_greater_scalar",
                "_lesser_scalar"),
    "greater_equal": ("broadcast_greater_equal", lambda x, y: 1 if x >= y else 0,
                      "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lesser": ("broadcast_lesser", lambda x, y: 1 if x < y else 0, "_lesser_scalar",
               "_greater_scalar"),
    "lesser_equal": ("broadcast_lesser_equal", lambda x, y: 1 if x <= y else 0,
                     "_lesser_equal_scalar", "_greater_equal_scalar"),
    "logical_and": ("broadcast_logical_and", lambda x, y: 1 if x and y else 0,
                    "_logical_and_scalar", None),
    "logical_or": ("broadcast_logical_or", lambda x, y: 1 if x or y else 0,
                   "_logical_or_scalar", None),
    "logical_xor": ("broadcast_logical_xor", lambda x, y: 1 if bool(x) != bool(y) else 0,
                    "_logical_xor_scalar", None),
}
_ND_BINARY["true_divide"] = _ND_BINARY["divide"]

# name -> (Symbol-Symbol op, number-number function, Symbol-number op, number-Symbol op)
_SYM_BINARY: dict[str, tuple[str, Callable, str, str]] = {
    "maximum": ("_Maximum", lambda x, y: x if x > y else y, "_MaximumScalar", "_MaximumScalar"),
    "minimum": ("_Minimum", lambda x, y: x if x < y else y, "_MinimumScalar", "_MinimumScalar"),
    "hypot": ("_Hypot", lambda x, y: np.hypot(x, y), "_HypotScalar", "_HypotScalar"),
    "pow": ("_Power", operator.pow, "_PowerScalar", "_RPowerScalar"),
}
_SYM_BINARY["power"] = _SYM_BINARY["pow"]


def _nd_binary(name: str, invoke: Callable, array_type: type) -> Callable:
    array_op, py_fn, scalar_op, rscalar_op = _ND_BINARY[name]

    def fn(lhs: Any, rhs: Any) -> Any:
        if _is_number(lhs) and _is_number(rhs):
            return py_fn(lhs, rhs)
        if _is_number(lhs) and isinstance(rhs, array_type):
            return invoke(rscalar_op or scalar_op, (rhs,), {"scalar": float(lhs)})
        if isinstance(lhs, array_type) and _is_number(rhs):
            return invoke(scalar_op, (lhs,), {"scalar": float(rhs)})
        if isinstance(lhs, array_type) and isinstance(rhs, array_type):
            return invoke(array_op, (lhs, rhs), {})
        raise TypeError(f"nd.{name}: type {type(rhs)} not supported (NDArrays and numbers)")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(lhs, rhs)`` with broadcasting, as ``mx.nd.{name}``: "
                  f"``{array_op}`` for two NDArrays, ``{scalar_op}`` with a number.")
    return fn


def _sym_binary(name: str, invoke: Callable, symbol_type: type) -> Callable:
    array_op, py_fn, scalar_op, rscalar_op = _SYM_BINARY[name]

    def fn(left: Any, right: Any) -> Any:
        if isinstance(left, symbol_type) and isinstance(right, symbol_type):
            return invoke(array_op, (left, right), {})
        if isinstance(left, symbol_type) and _is_number(right):
            return invoke(scalar_op, (left,), {"scalar": right})
        if _is_number(left) and isinstance(right, symbol_type):
            return invoke(rscalar_op, (right,), {"scalar": left})
        if _is_number(left) and _is_number(right):
            return py_fn(left, right)
        raise TypeError(f"types ({type(left)}, {type(right)}) not supported")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(left, right)`` as ``mx.sym.{name}``: an elementwise ``{array_op}`` "
                  f"node for two Symbols (same shapes), ``{scalar_op}`` with a number.")
    return fn


def _split_v2_args(indices_or_sections: Any, axis_size: int | None) -> dict[str, Any]:
    """MXNet's front-end rule: an int splits evenly, a tuple gives the cut points (lists, so
    the attribute strings read ``[0, 2]`` as MXNet writes them)."""
    if isinstance(indices_or_sections, int):
        if axis_size is None:
            return {"indices": [], "sections": indices_or_sections}
        if axis_size % indices_or_sections:
            raise ArgumentError("array split does not result in an equal division")
        size = axis_size // indices_or_sections
        return {"indices": [i * size for i in range(indices_or_sections)]}
    if isinstance(indices_or_sections, tuple):
        return {"indices": [0, *indices_or_sections]}
    raise ArgumentError("indices_or_sections must either int or tuple of ints")


def install_ndarray(ns: dict[str, Any], invoke: Callable, array_type: type,
                    current_context: Callable) -> None:
    """Add the functions to the ``nd`` namespace ``ns`` (its module ``__dict__``)."""
    for name in _ND_BINARY:
        ns[name] = _nd_binary(name, invoke, array_type)

    def negative(arr: Any) -> Any:
        """``-arr`` (``mx.nd.negative``: ``multiply(arr, -1.0)``)."""
        return ns["multiply"](arr, -1.0)

    def eye(N: int, M: int = 0, k: int = 0, ctx: Any = None, dtype: Any = None,
            **kwargs: Any) -> Any:
        """``N x M`` (M=0: square) with ones on diagonal ``k`` (``mx.nd.eye``, float32)."""
        return invoke("_eye", (), {"N": N, "M": M, "k": k, "ctx": ctx or current_context(),
                                   "dtype": dtype or np.float32, **kwargs})

    def linspace(start: float, stop: float, num: int, endpoint: bool = True, ctx: Any = None,
                 dtype: Any = None) -> Any:
        """``num`` evenly spaced values over [start, stop] (``mx.nd.linspace``, float32)."""
        return invoke("_linspace", (), {"start": start, "stop": stop, "num": num,
                                        "endpoint": endpoint, "ctx": ctx or current_context(),
                                        "dtype": dtype or np.float32})

    def split_v2(ary: Any, indices_or_sections: Any, axis: int = 0,
                 squeeze_axis: bool = False) -> Any:
        """Split like ``numpy.split`` (``mx.nd.split_v2``): equal sections or cut points."""
        args = _split_v2_args(indices_or_sections, ary.shape[axis])
        return invoke("_split_v2", (ary,), {**args, "axis": axis, "squeeze_axis": squeeze_axis})

    def moveaxis(tensor: Any, source: Any, destination: Any) -> Any:
        """Move axes to new positions, the others keeping their order (``mx.nd.moveaxis``)."""
        src, dst = _axes(source, tensor.ndim), _axes(destination, tensor.ndim)
        if len(src) != len(dst):
            raise ArgumentError("`source` and `destination` arguments must have the same "
                                "number of elements")
        order = [n for n in range(tensor.ndim) if n not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return invoke("transpose", (tensor,), {"axes": tuple(order)})

    def load_frombuffer(buf: Any) -> Any:
        """Arrays from the bytes of an ``nd.save`` file (``mx.nd.load_frombuffer``)."""
        from .formats import params

        data = params.load(bytes(buf))
        ctx = current_context()
        if isinstance(data, dict):
            return {k: array_type(v, ctx) for k, v in data.items()}
        return [array_type(v, ctx) for v in data]

    def imdecode(*args: Any, **kwargs: Any) -> Any:
        """Not available: decoding images needs a codec gluonport does not ship."""
        raise GluonportError("nd.imdecode: gluonport ships no image codec; decode with Pillow "
                             "or OpenCV (e.g. numpy.asarray(PIL.Image.open(path))) and pass the "
                             "HWC uint8 array to mx.nd.array")

    def histogram(a: Any, bins: Any = 10, range: Any = None) -> Any:  # noqa: A002
        """Histogram of the flattened ``a`` (``mx.nd.histogram``): ``[counts, edges]``.

        ``bins`` an NDArray of edges, or an int with ``range=(low, high)`` (the
        ``_histogram`` op: int64 counts); an int without ``range`` gives numpy's histogram
        over ``(a.min(), a.max())`` as a tuple of float32 arrays, with MXNet's warning.
        """
        if isinstance(bins, array_type):
            return invoke("_histogram", (a, bins), {})
        if isinstance(bins, numbers.Integral):
            if range is None:
                warnings.warn("range is not specified, using numpy's result to ensure "
                              "consistency with numpy", stacklevel=2)
                res, edges = np.histogram(a.asnumpy(), bins=bins)
                ctx = current_context()
                return (array_type(res.astype(np.float32), ctx),
                        array_type(edges.astype(np.float32), ctx))
            return invoke("_histogram", (a,), {"bin_cnt": bins, "range": range})
        raise ArgumentError("bins argument should be either an integer or an NDArray")

    def onehot_encode(indices: Any, out: Any) -> Any:
        """One-hot rows written into ``out`` (``mx.nd.onehot_encode``; deprecated in MXNet for
        ``one_hot``): the ``_onehot_encode`` op with ``out=out``."""
        return invoke("_onehot_encode", (indices, out), {"out": out})

    for fn in (negative, eye, linspace, split_v2, moveaxis, load_frombuffer, imdecode,
               histogram, onehot_encode):
        ns[fn.__name__] = fn


def contrib_checks(ns: dict[str, Any]) -> dict[str, Callable]:
    """``nd.contrib.isinf/isfinite/isnan``: Python functions in MXNet (1 where true, else 0)."""

    def isinf(data: Any) -> Any:
        """1 where ``data`` is +-inf (``abs(data) == inf``)."""
        return data.abs() == np.inf

    def isfinite(data: Any) -> Any:
        """1 where ``data`` is neither inf nor NaN."""
        return ns["logical_and"](data.abs() != np.inf, data == data)

    def isnan(data: Any) -> Any:
        """1 where ``data`` is NaN (``data != data``)."""
        return data != data

    return {fn.__name__: fn for fn in (isinf, isfinite, isnan)}


def _axes(axes: Any, ndim: int) -> list[int]:
    out = [axes] if isinstance(axes, int) else list(axes)
    for a in out:
        if not -ndim <= a < ndim:
            raise ArgumentError(f"axis {a} is out of bounds for array of dimension {ndim}")
    out = [a % ndim for a in out]
    if len(set(out)) != len(out):
        raise ArgumentError(f"repeated axis in {axes}")
    return out


def install_symbol(ns: dict[str, Any], invoke: Callable, symbol_type: type) -> None:
    """Add the functions to the ``sym`` namespace ``ns`` (its module ``__dict__``)."""
    for name in _SYM_BINARY:
        ns[name] = _sym_binary(name, invoke, symbol_type)

    def eye(N: int, M: int = 0, k: int = 0, dtype: Any = None, **kwargs: Any) -> Any:
        """An ``_eye`` node (``mx.sym.eye``)."""
        return invoke("_eye", (), {"N": N, "M": M, "k": k, "dtype": dtype or np.float32,
                                   **kwargs})

    def linspace(start: float, stop: float, num: int, endpoint: bool = True,
                 name: str | None = None, dtype: Any = None) -> Any:
        """A ``_linspace`` node (``mx.sym.linspace``)."""
        return invoke("_linspace", (), {"start": start, "stop": stop, "num": num,
                                        "endpoint": endpoint, "name": name,
                                        "dtype": dtype or np.float32})

    def split_v2(ary: Any, indices_or_sections: Any, axis: int = 0,
                 squeeze_axis: bool = False) -> Any:
        """A ``_split_v2`` node (``mx.sym.split_v2``)."""
        args = _split_v2_args(indices_or_sections, None)
        return invoke("_split_v2", (ary,), {**args, "axis": axis, "squeeze_axis": squeeze_axis})

    def histogram(a: Any, bins: Any = 10, range: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        """A ``_histogram`` node (``mx.sym.histogram``): ``bins`` a Symbol of edges, or an int
        with ``range`` (required in symbol mode)."""
        if isinstance(bins, symbol_type):
            return invoke("_histogram", (a, bins), kwargs)
        if isinstance(bins, numbers.Integral):
            if range is None:
                raise ArgumentError("null range is not supported in symbol mode")
            return invoke("_histogram", (a,), {"bin_cnt": bins, "range": range, **kwargs})
        raise ArgumentError("bins argument should be either an integer or an NDArray")

    for fn in (eye, linspace, split_v2, histogram):
        ns[fn.__name__] = fn

