"""Python custom operators, as ``mxnet.operator``: ``CustomOp``, ``CustomOpProp``, ``register``.

MXNet 1.x let users write an operator in Python: a ``CustomOpProp`` subclass declares inputs,
outputs, auxiliary states and shape/type inference, and creates a ``CustomOp`` whose ``forward``
fills ``out_data`` with ``self.assign``. ``@mx.operator.register("name")`` makes it callable as
``mx.nd.Custom(x, op_type="name", **kwargs)`` / ``mx.sym.Custom(...)`` / ``F.Custom(...)``, and
graphs that use it are saved as ``Custom`` nodes whose attributes are ``op_type`` plus the
keyword arguments as strings. Porting code that defines one needs only the import changed::

    import gluonport as mx

    @mx.operator.register("scale")
    class ScaleProp(mx.operator.CustomOpProp):
        def __init__(self, factor):
            super().__init__(need_top_grad=False)
            self.factor = float(factor)      # keyword arguments arrive as strings, as in MXNet
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Scale(self.factor)

    class Scale(mx.operator.CustomOp):
        def __init__(self, factor):
            super().__init__()
            self.factor = factor
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * self.factor)

Custom ops take part in autograd as in MXNet: ``forward`` gets ``is_train=True`` in a
training-mode call (``autograd.record()``, an executor's ``forward(is_train=True)``), and a
backward pass calls ``backward(req, out_grad, in_data, out_data, in_grad, aux)``, which writes
``in_grad`` with :meth:`CustomOp.assign` (``req`` is ``'write'``; the ``in_grad`` arrays start
as zeros). ``CustomOpProp.declare_backward_dependency`` says which of ``out_grad``/``in_data``/
``out_data`` the backward reads (the others arrive as ``None``); ``need_top_grad=False`` (a
loss) leaves ``out_grad`` out. The backward runs on the ``CustomOp`` object whose ``forward``
made the outputs, so state kept on ``self`` carries over, as in MXNet.

A saved graph with a ``Custom`` node loads without its class (to
inspect or convert the rest), but running it needs the module that registers the ``op_type``
imported first, as in MXNet. Custom ops have no ONNX form; give one with
``gluonport.onnx.register_converter("Custom")`` (``ctx.params.op_type`` names the op type).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import GluonportError
from .ops import custom as _custom_op

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators"]

_PROPS: dict[str, type] = {}


class CustomOp:
    """Base class of a custom operator's computation (MXNet's ``mx.operator.CustomOp``)."""

    def __init__(self) -> None:
        pass

    def forward(self, is_train: bool, req: list[str], in_data: list, out_data: list,
                aux: list) -> None:
        """Compute ``out_data`` from ``in_data`` (lists of NDArrays), writing each output with
        :meth:`assign` and its ``req`` (``'write'`` here)."""

    def backward(self, req: list[str], out_grad: list, in_data: list, out_data: list,
                 in_grad: list, aux: list) -> None:
        """Write the inputs' gradients into ``in_grad`` with :meth:`assign` (MXNet's base
        class does nothing, leaving them zero)."""

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Write ``src`` into ``dst`` as ``req`` says: ``'null'`` skips, ``'write'`` and
        ``'inplace'`` copy, ``'add'`` accumulates (MXNet's semantics; a 0-d ``dst`` too)."""
        if req == "null":
            return
        index = () if len(getattr(dst, "shape", ())) == 0 else slice(None)
        if req in ("write", "inplace"):
            dst[index] = src
        elif req == "add":
            dst[index] += src
        else:
            raise GluonportError(f"CustomOp.assign: unknown req {req!r}; expected one of "
                                 "'null', 'write', 'inplace', 'add'")


class CustomOpProp:
    """Base class of a custom operator's declaration (MXNet's ``mx.operator.CustomOpProp``).

    Defaults as in MXNet: one input ``data``, one output ``output``, no auxiliary states; every
    output has the first input's shape and dtype.
    """

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list) -> tuple:
        """``(input shapes, output shapes[, aux shapes])`` from the input shapes."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type: list) -> tuple:
        """``(input dtypes, output dtypes, aux dtypes)`` from the input dtypes."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype: list) -> tuple:
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def declare_backward_dependency(self, out_grad: list, in_data: list,
                                    out_data: list) -> list:
        deps = list(in_data) + list(out_data)
        return list(out_grad) + deps if self.need_top_grad_ else deps

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        return CustomOp()


def register(reg_name: str):
    """Class decorator registering a :class:`CustomOpProp` subclass as op type ``reg_name``
    (re-registering a name replaces the earlier class, as re-running a notebook cell does)."""

    def deco(prop_cls: type) -> type:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise GluonportError(f"operator.register({reg_name!r}): {prop_cls!r} is not a "
                                 "CustomOpProp subclass")
        _PROPS[reg_name] = prop_cls
        return prop_cls

    return deco


def get_all_registered_operators() -> list[str]:
    """The op types registered with :func:`register`, in registration order. (MXNet's function
    of this name lists its built-in operators; those are :func:`gluonport.ops.registry.all_ops`.)
    """
    return list(_PROPS)


#: the CustomOp that made a forward output: id(output array) -> (weakref to it, the op)
_MADE_BY: dict[int, tuple[Any, CustomOp]] = {}


def _remember(outputs: list[np.ndarray], op: CustomOp) -> None:
    import weakref

    for arr in outputs[:1]:
        key = id(arr)
        _MADE_BY[key] = (weakref.ref(arr), op)
        weakref.finalize(arr, _MADE_BY.pop, key, None)


def _maker(first_output: np.ndarray) -> CustomOp | None:
    hit = _MADE_BY.get(id(first_output))
    if hit is not None and hit[0]() is first_output:
        return hit[1]
    return None


def _run(prop: CustomOpProp, args: list[np.ndarray], aux: list[np.ndarray],
         out_shapes: list[tuple], out_types: list[np.dtype],
         is_train: bool = False) -> list[np.ndarray]:
    """Create ``prop``'s CustomOp and run its ``forward`` on NDArrays."""
    from .context import cpu
    from .ndarray import NDArray

    op = prop.create_operator(cpu(), [list(a.shape) for a in args],
                              [a.dtype.type for a in args])
    out_data = [NDArray(np.zeros(s, t)) for s, t in zip(out_shapes, out_types)]
    op.forward(is_train=bool(is_train), req=["write"] * len(out_data),
               in_data=[NDArray(a) for a in args], out_data=out_data,
               aux=[NDArray(a) for a in aux])
    outs = [o.asnumpy() for o in out_data]
    _remember(outs, op)
    return outs


def _run_backward(prop: CustomOpProp, out_grad: list, in_data: list, out_data: list,
                  aux: list, in_shapes: list, in_types: list,
                  first_output: np.ndarray) -> list[np.ndarray]:
    """Run the ``backward`` of the CustomOp that made ``out_data`` (a new one from
    ``create_operator`` when that is gone) and return ``in_grad``."""
    from .context import cpu
    from .ndarray import NDArray

    op = _maker(first_output) or prop.create_operator(cpu(), [list(s) for s in in_shapes],
                                                  [np.dtype(t).type for t in in_types])
    in_grad = [NDArray(np.zeros(s, t)) for s, t in zip(in_shapes, in_types)]

    def wrap(arrays: list) -> list:
        return [None if a is None else NDArray(np.ascontiguousarray(a)) for a in arrays]

    op.backward(req=["write"] * len(in_grad), out_grad=wrap(out_grad), in_data=wrap(in_data),
                out_data=wrap(out_data), in_grad=in_grad, aux=wrap(aux))
    return [g.asnumpy() for g in in_grad]


# the Custom op (ops/custom.py) runs the props registered here
_custom_op.attach_runtime(_PROPS, _run, _run_backward)
