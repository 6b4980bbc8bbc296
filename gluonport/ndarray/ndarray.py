"""``NDArray``: MXNet's imperative array, backed by a numpy array and carrying a Context."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import dtypes, recording
from .._opsurface import OpSurface
from ..context import Context, cpu, current_context
from ..errors import GluonportError, ShapeError
from ..ops import registry
from ..ops._call import bind_call
from . import _tape

__all__ = ["NDArray", "invoke", "array", "from_numpy"]

# MXNet's NDArray operators: broadcast_* for two arrays, _*_scalar with a number.
_NDARRAY_BINARY = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "truediv": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "pow": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "eq": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "ne": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "gt": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "ge": ("broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lt": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "le": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
}

# Hook for an op observer (HybridBlock.register_op_hook, a future autograd tape):
# called as hook(op_name, node_name, inputs, outputs) after every imperative op.
_OP_HOOKS: list = []


class NDArray(OpSurface):
    """An n-dimensional array on a device, mirroring ``mxnet.nd.NDArray`` (1.x).

    The data lives in a numpy array (``asnumpy()`` returns a copy, as in MXNet). Arithmetic
    broadcasts like MXNet's ``broadcast_*`` ops; comparisons return 1/0 in the array's dtype.

    >>> x = array([[1, 2], [3, 4]])
    >>> x
    <BLANKLINE>
    [[1. 2.]
     [3. 4.]]
    <NDArray 2x2 @cpu(0)>
    """

    __slots__ = ("_data", "_ctx", "_grad", "_ag", "_fresh_grad", "__weakref__")
    _BINARY_OPS = _NDARRAY_BINARY
    __array_priority__ = 1000.0  # numpy scalars defer to our reflected operators

    def __init__(self, data: np.ndarray, ctx: Context | None = None):
        self._data = data
        self._ctx = ctx if ctx is not None else current_context()
        self._grad = None
        self._ag = None  # the autograd graph entry (ndarray/_tape.py)
        self._fresh_grad = False

    # --- properties -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> type:
        """The numpy scalar type (``numpy.float32``), as MXNet returns it."""
        return self._data.dtype.type

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def stype(self) -> str:
        return "default"

    @property
    def grad(self) -> NDArray | None:
        """The gradient buffer ``attach_grad`` made (``None`` before), written by
        ``backward`` by the array's ``grad_req``."""
        return self._grad

    @property
    def T(self) -> NDArray:
        if self.ndim > 2:
            raise ShapeError("NDArray.T only works on 1-D and 2-D arrays; use transpose()")
        return self.transpose()

    # --- conversion -------------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the data (MXNet also copies)."""
        return np.array(self._data, copy=True)

    def asscalar(self) -> Any:
        """The value of a size-1 array as a numpy scalar."""
        if self.size != 1:
            raise ShapeError(f"asscalar() needs a size-1 array, shape is {self.shape}")
        return self._data.reshape(-1)[0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else self._data.astype(dtype)

    def as_in_context(self, context: Context) -> NDArray:
        """This array on ``context``: ``self`` when already there, else a copy."""
        if context == self._ctx:
            return self
        return NDArray(self._data.copy(), context)

    as_in_ctx = as_in_context

    def copyto(self, other: NDArray | Context) -> NDArray:
        """Copy into another NDArray (same shape) or onto a Context."""
        if isinstance(other, Context):
            return NDArray(self._data.copy(), other)
        if other is self:
            return other
        if other.shape != self.shape:
            raise ShapeError(f"copyto: shape {self.shape} does not match target {other.shape}")
        np.copyto(other._data, self._data, casting="unsafe")
        return other

    def copy(self) -> NDArray:
        return NDArray(self._data.copy(), self._ctx)

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        """Cast to ``dtype`` (``'float16'``, ``numpy.int32``...)."""
        target = dtypes.to_numpy(dtype)
        if not copy and target == self._data.dtype:
            return self
        if self._ag is not None and recording.is_recording():  # recorded, as MXNet's Cast
            return invoke("Cast", (self,), {"dtype": target})
        return NDArray(self._data.astype(target), self._ctx)

    def tolist(self) -> list:
        return self._data.tolist()

    def wait_to_read(self) -> None:
        """No-op: numpy is synchronous."""

    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Make this array a variable of autograd with a zero gradient buffer (``.grad``).

        As MXNet's: ``grad_req`` is ``'write'`` (each backward overwrites ``.grad``), ``'add'``
        (accumulates; zero it yourself) or ``'null'`` (no gradient). Only ``stype='default'``
        (dense) gradients exist here. Integer arrays have no gradient and are refused.
        """
        if stype not in (None, "default"):
            raise GluonportError(f"attach_grad: stype={stype!r} (sparse gradients) is not "
                                 "supported by gluonport; use the default dense storage")
        if self._data.dtype.kind != "f":
            raise GluonportError(f"attach_grad: an array of dtype {self._data.dtype} cannot have "
                                 "a gradient; cast it to a floating-point dtype first "
                                 "(x.astype('float32'))")
        self._grad = NDArray(np.zeros_like(self._data), self._ctx)
        _tape.mark_variable(self, self._grad, grad_req, own_grad=True)

    def detach(self) -> NDArray:
        """The same data, outside any recorded graph (no gradient flows through it)."""
        return NDArray(self._data, self._ctx)

    def backward(self, out_grad: NDArray | None = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:  # noqa: FBT001, FBT002 - MXNet's signature
        """Compute the gradients of this array with respect to the variables it was computed
        from (``autograd.backward([self], [out_grad])``)."""
        _tape.backward([self], [out_grad], retain_graph=retain_graph, train_mode=train_mode)

    # --- shape ------------------------------------------------------------------------------
    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        """Reshape with MXNet's special codes 0, -1, -2, -3, -4 (and ``reverse=True``).

        ``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` are both accepted, as in MXNet.
        """
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if "shape" in kwargs:
            shape = tuple(kwargs.pop("shape"))
        return self._invoke("Reshape", (self,), {"shape": shape, **kwargs})

    # --- indexing ---------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> NDArray:
        """MXNet 1.x indexing: a result that is contiguous in memory (leading integers, then
        at most one partial slice, then whole axes: ``x[1]``, ``x[1:3]``, ``x[1, 2:4]``) is a
        view that writes through; anything else (``x[:, 1]``, advanced indexing) is a copy."""
        key = _plain_index(key)
        out = self._data[key]
        if not isinstance(out, np.ndarray) or out.ndim == 0:
            # MXNet 1.x has no 0-d results: x[i] of a 1-D array is a shape-(1,) view
            whole = key if isinstance(key, tuple) else (key,)
            out = self._data[whole + (Ellipsis,)].reshape(1)
        elif not out.flags.c_contiguous:
            out = np.ascontiguousarray(out)
        result = NDArray(out, self._ctx)
        if self._ag is not None and recording.is_recording():
            _tape.record_function([self], [result], _index_backward(self, key), "__getitem__")
        return result

    def __setitem__(self, key: Any, value: Any) -> None:
        key = _plain_index(key)
        if isinstance(value, NDArray):
            value = value._data
        self._data[key] = value

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.size == 1:
            return bool(self._data.reshape(-1)[0])
        if self.size == 0:
            return False
        raise ValueError("The truth value of an NDArray with more than one element is "
                         "ambiguous.")

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    # in-place arithmetic writes into this array, as MXNet's does
    def _inplace(self, result: Any) -> NDArray:
        if result is NotImplemented:
            return result
        self._data[...] = result._data
        return self

    def __iadd__(self, other: Any) -> NDArray:
        return self._inplace(self.__add__(other))

    def __isub__(self, other: Any) -> NDArray:
        return self._inplace(self.__sub__(other))

    def __imul__(self, other: Any) -> NDArray:
        return self._inplace(self.__mul__(other))

    def __itruediv__(self, other: Any) -> NDArray:
        return self._inplace(self.__truediv__(other))

    def __imod__(self, other: Any) -> NDArray:
        return self._inplace(self.__mod__(other))

    # --- display ----------------------------------------------------------------------------
    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self.shape)  # MXNet prints nothing for 0-d
        return f"\n{self._data}\n<NDArray {shape} @{self._ctx}>"

    def __str__(self) -> str:
        return self.__repr__()

    def __reduce__(self):
        return (NDArray, (self._data, self._ctx))

    # --- op dispatch ------------------------------------------------------------------------
    def _invoke(self, op_name: str, args: tuple, kwargs: dict) -> Any:
        return invoke(op_name, args, kwargs)


def _index_backward(src: NDArray, key: Any):
    """The gradient of ``src[key]``: the head gradient scattered into zeros of ``src``'s shape
    (repeated indices add up)."""

    def backward(ograds: list) -> list:
        g = np.zeros_like(src._data)
        og = ograds[0]._data
        sel = g[key]
        if isinstance(sel, np.ndarray) and sel.shape == og.shape and not _is_advanced(key):
            g[key] += og
        else:
            np.add.at(g, key, og.reshape(np.shape(g[key])))
        return [NDArray(g, src._ctx)]

    return backward


def _is_advanced(key: Any) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (np.ndarray, list)) for k in keys)


def _plain_index(key: Any) -> Any:
    if isinstance(key, NDArray):
        return key._data.astype(np.int64) if key._data.dtype.kind == "f" else key._data
    if isinstance(key, tuple):
        return tuple(_plain_index(k) for k in key)
    return key


def _is_input(x: Any) -> bool:
    return isinstance(x, NDArray)


def invoke(op_name: str, args: Sequence[Any] = (), kwargs: dict | None = None, *,
           out: NDArray | None = None) -> Any:
    """Run one operator imperatively: the single dispatch point of the ``nd`` API.

    ``args``/``kwargs`` are bound as MXNet's generated ``nd.<op>`` functions bind them. Returns
    one NDArray, or a list when the op has several visible outputs.
    """
    kwargs = dict(kwargs or {})
    out = kwargs.pop("out", out)
    kwargs.pop("name", None)
    ctx = kwargs.pop("ctx", None)
    op = registry.get(op_name)
    call = bind_call(op, tuple(args), kwargs, _is_input)
    arrays = []
    for name, x in zip(call.input_names, call.inputs):
        if x is None:
            raise GluonportError(f"{op.name}: input {name!r} is required in imperative mode")
        arrays.append(x._data if isinstance(x, NDArray) else np.asarray(x))
    if ctx is None:
        ctx = next((x._ctx for x in call.inputs if isinstance(x, NDArray)), None)
        if ctx is not None and ctx.device_type in ("cpu_pinned", "cpu_shared"):
            ctx = cpu()  # as MXNet: a pinned/shared context does not propagate to outputs
    if isinstance(ctx, str):
        ctx = _parse_ctx(ctx)
    try:
        inplace = _writes_over_inputs(out, call)
        results = op.run(call.params, arrays, is_train=recording.is_training(),
                         inplace=inplace)
    except GluonportError:
        raise
    except (ValueError, IndexError, TypeError) as exc:  # a numpy failure on bad input
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ShapeError(f"{op.name}: failed on inputs of shapes [{shapes}] with "
                         f"{dict(call.attrs)}: {exc}") from exc
    n_vis = op.n_visible_outputs(call.params)
    outs = [NDArray(np.asarray(r), ctx) for r in results[:n_vis]]
    if recording.is_recording():
        every = outs + [NDArray(np.asarray(r), ctx) for r in results[n_vis:]]
        _tape.record_op(op, call.params, call.inputs, every, recording.is_training(),
                        dict(call.attrs))
    for hook in _OP_HOOKS:
        hook(op.name, op.name.lower(), call.inputs, outs)
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        for t, r in zip(targets, outs):
            t[...] = r
            if r._ag is not None:  # recorded: the target now holds the op's output
                t._ag = r._ag
        return out
    return outs[0] if n_vis == 1 else outs


def _writes_over_inputs(out: Any, call: Any) -> bool:
    """Whether ``out`` is the call's first input (OpDef.inplace_compute's case); with several
    targets (a multi-tensor optimizer update, ``out=weights``) each ``out[k]`` must be the
    input named like the first one with suffix ``_k`` (``weight_k``)."""
    targets = list(out) if isinstance(out, (list, tuple)) else [out]
    if out is None or not targets or not call.inputs or targets[0] is not call.inputs[0]:
        return False
    if len(targets) == 1:
        return True
    stem = call.input_names[0].rpartition("_")[0]
    named = dict(zip(call.input_names, call.inputs))
    return all(named.get(f"{stem}_{k}") is t for k, t in enumerate(targets))


def _parse_ctx(text: str) -> Context:
    name, _, rest = text.partition("(")
    return Context(name.strip(), int(rest.rstrip(")") or 0))


def from_numpy(a: np.ndarray, ctx: Context | None = None, zero_copy: bool = True) -> NDArray:
    """Wrap a numpy array (shared memory when ``zero_copy``)."""
    return NDArray(a if zero_copy else a.copy(), ctx)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray from any array-like, mirroring ``mx.nd.array`` (1.x).

    As in MXNet 1.9.1 the dtype defaults to float32 for everything but an NDArray source
    (whose dtype is kept), numpy arrays included: ``nd.array(np.arange(3))`` is float32.
    Pass ``dtype`` to keep another. A Python scalar gives a 0-d array, as in MXNet.
    """
    if isinstance(source_array, NDArray):
        src = source_array._data
        target = src.dtype if dtype is None else dtypes.to_numpy(dtype)
    else:
        src = source_array
        target = dtypes.to_numpy(np.float32 if dtype is None else dtype)
    return NDArray(np.array(src, dtype=target, copy=True), ctx)


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Number)
