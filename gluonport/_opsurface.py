"""Operators and fluent methods written once for both :class:`NDArray` and :class:`Symbol`.

Each class supplies one hook, ``_invoke(op_name, args, kwargs)``, and a map from Python operator
to MXNet op names, because MXNet itself used different ops for the two: ``NDArray.__add__`` calls
``broadcast_add`` while ``Symbol.__add__`` builds an ``elemwise_add`` (``_Plus``) node. Scalars
always use the ``_*_scalar`` ops.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["OpSurface", "FLUENT_METHODS"]

# Python operator -> key in the class's _BINARY_OPS map, which gives
# (array-array op, array-scalar op, scalar-array op) names. The names differ between NDArray and
# Symbol exactly as in MXNet, which matters for Symbol: the called name is the node name hint
# (``x + y`` -> ``_plus0``, ``x + 1`` -> ``_plusscalar0``).
_ARITH = ("add", "sub", "mul", "truediv", "mod", "pow")
_COMPARE = ("eq", "ne", "gt", "ge", "lt", "le")

# Fluent methods MXNet gives both NDArray and Symbol: method name -> op name.
FLUENT_METHODS: dict[str, str] = {
    name: name for name in (
        "flatten", "expand_dims", "tile", "transpose", "flip", "depth_to_space",
        "space_to_depth", "diag", "split", "split_v2", "slice", "slice_axis", "slice_like",
        "take", "one_hot", "pick", "sort", "topk", "argsort", "argmax", "argmax_channel",
        "argmin", "clip", "abs", "sign", "sum", "nansum", "prod", "nanprod", "mean", "max",
        "min", "norm", "round", "rint", "fix", "floor", "ceil", "trunc", "sin", "cos", "tan",
        "arcsin", "arccos", "arctan", "degrees", "radians", "sinh", "cosh", "tanh", "arcsinh",
        "arccosh", "arctanh", "exp", "expm1", "log", "log10", "log2", "log1p", "sqrt", "rsqrt",
        "cbrt", "rcbrt", "square", "reciprocal", "relu", "sigmoid", "softmax", "log_softmax",
        "softmin", "squeeze", "repeat", "pad", "swapaxes", "broadcast_to", "broadcast_axes",
        "broadcast_like", "reshape_like", "zeros_like", "ones_like", "shape_array",
        "size_array", "tostype",
    )
}
FLUENT_METHODS.update({"swapaxes": "SwapAxis", "pad": "Pad", "tostype": "cast_storage"})


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.ndarray)


class OpSurface:
    """Mixin: Python operators and fluent methods routed through ``_invoke``."""

    __slots__ = ()
    # Subclasses map each key of _ARITH and _COMPARE to (op, scalar op, reflected scalar op).
    _BINARY_OPS: dict[str, tuple[str, str, str]] = {}
    # A numpy scalar on the left (``np.float64(2) - x``) defers to our reflected operator
    # instead of converting ``x`` to an array, as MXNet's classes (priority 1000) do.
    __array_priority__ = 1000.0

    def _invoke(self, op_name: str, args: tuple, kwargs: dict) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _binary(self, key: str, other: Any, reflected: bool = False) -> Any:
        op, scalar_op, rscalar_op = self._BINARY_OPS[key]
        if _is_scalar(other):
            return self._invoke(rscalar_op if reflected else scalar_op, (self,),
                                {"scalar": other})
        if isinstance(other, type(self)):
            lhs, rhs = (other, self) if reflected else (self, other)
            return self._invoke(op, (lhs, rhs), {})
        return NotImplemented

    def __floordiv__(self, other: Any) -> Any:
        # MXNet defines no ``//``. Raising here (not returning NotImplemented) keeps a numpy
        # scalar's reflected ``//`` from turning ``x // np.float64(2)`` into a numpy array.
        raise TypeError(f"unsupported operand type(s) for //: {type(self).__name__!r} and "
                        f"{type(other).__name__!r} (MXNet has no floor division operator; "
                        "use floor(a / b))")

    def __rfloordiv__(self, other: Any) -> Any:
        raise TypeError(f"unsupported operand type(s) for //: {type(other).__name__!r} and "
                        f"{type(self).__name__!r} (MXNet has no floor division operator; "
                        "use floor(a / b))")

    def __neg__(self) -> Any:
        return self.__mul__(-1.0)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return self._invoke("abs", (self,), {})


def _make_binary(key: str):
    def fwd(self, other):
        return self._binary(key, other)

    def rev(self, other):
        return self._binary(key, other, reflected=True)

    return fwd, rev


for _key in _ARITH:
    _f, _r = _make_binary(_key)
    _f.__name__, _r.__name__ = f"__{_key}__", f"__r{_key}__"
    setattr(OpSurface, f"__{_key}__", _f)
    setattr(OpSurface, f"__r{_key}__", _r)


def _make_compare(key: str):
    def cmp(self, other):
        return self._binary(key, other)

    cmp.__name__ = f"__{key}__"
    return cmp


for _key in _COMPARE:
    setattr(OpSurface, f"__{_key}__", _make_compare(_key))
OpSurface.__hash__ = object.__hash__  # type: ignore[assignment]


def _make_fluent(method: str, op_name: str):
    def fluent(self, *args, **kwargs):
        return self._invoke(op_name, (self, *args), kwargs)

    fluent.__name__ = method
    fluent.__doc__ = f"Fluent form of ``{op_name}(self, ...)``; see that operator."
    return fluent


for _method, _op in FLUENT_METHODS.items():
    setattr(OpSurface, _method, _make_fluent(_method, _op))
