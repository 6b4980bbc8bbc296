"""ONNX lowering: the handler context, the one way to attach a handler, and shared helpers.

A lowering (ONNX export handler) is ``handler(ctx)`` with ``ctx`` a :class:`LoweringContext`:
it reads the MXNet node being converted (``ctx.params``, ``ctx.inputs``, ``ctx.in_shapes``...)
and defines every name in ``ctx.outputs`` with ``ctx.make(...)``. The exporter's
:class:`gluonport.onnx.ExportContext` implements the Protocol (``tests/ops/test_lowering.py``
checks every member exists there). A handler is attached in the file that defines its op::

    @lowering("Reshape")            # opsets >= 13; since=16 for a handler needing opset 16
    def _reshape_onnx(ctx: LoweringContext) -> None:
        ...

    lowering(op_def)(simple("Relu"))  # an OpDef works too, and a factory-made handler

The exporter picks the newest handler whose ``since`` is <= the target opset.

Shared helpers (documented interfaces; import them from here or the submodule named):

* this module: :func:`deliver` (the one way to make a tensor an output), :func:`simple`,
  :func:`scalar_binary`, :func:`const_like`, :func:`const_as`, :func:`reshape_to_rank`,
  :func:`onnx_reduce` (one ``Reduce*`` node at any opset);
* :mod:`.dims`: static/dynamic dims (:class:`~.dims.Dims`, ``build_shape``, ``reshape_to``,
  ``onnx_dims``, ``onnx_shape``, ``onnx_dim``);
* :mod:`.window`: pads, strides, windows and pooling pieces for conv/pool/resize lowerings;
* :mod:`.math`: elementwise math with MXNet's semantics on onnxruntime's kernels (``Builder``),
  and the work dtype of a lowering (``onnx_work_dtype``, ``onnx_compute``, ``onnx_input_as``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ...errors import ConversionError
    from ..registry import OpDef

__all__ = ["LoweringContext", "Lowering", "lowering", "deliver", "simple", "scalar_binary",
           "const_like", "const_as", "reshape_to_rank", "onnx_reduce"]


@runtime_checkable
class LoweringContext(Protocol):
    """What an ONNX export handler may use (implemented by ``gluonport.onnx.ExportContext``).

    Renaming: :func:`deliver` may rename the output of a node *this handler* emitted, never an
    input of the op or an initializer (those belong to other nodes or the graph). A handler may
    replace ``nodes`` with a scratch list for a sub-graph (Loop/Scan bodies) and restore it.
    """

    # --- the node being converted (set by the exporter before each handler call) -------------
    opset: int                      #: target ONNX opset
    node: Any                       #: the MXNet graph node (``.name``, ``.op``, ``.inputs``)
    params: Any                     #: the op's parsed attributes (``ctx.params.axis``...)
    inputs: list[str]               #: ONNX tensor names of the op's inputs
    outputs: list[str]              #: names the handler must define (see :meth:`wants`)
    in_shapes: list[tuple]          #: example input shapes
    in_dtypes: list[np.dtype]       #: input dtypes
    in_dynamic: list[tuple[bool, ...]]   #: per input, which dims vary with the dynamic axes
    out_shapes: list[tuple]         #: inferred output shapes
    out_dtypes: list[np.dtype]      #: inferred output dtypes
    out_dynamic: list[tuple[bool, ...]]  #: per output, which dims vary
    producers: list                 #: the MXNet node behind each input
    # --- the graph being built --------------------------------------------------------------
    nodes: list[Any]                #: ONNX nodes emitted so far (the last may be renamed)
    initializers: dict[str, np.ndarray]  #: constants by name (read to fold a known value)
    param_values: dict[str, np.ndarray]  #: parameter values by tensor name

    def make(self, op_type: str, inputs: list[str], outputs: list[str] | int | None = None,
             domain: str = "", name: str | None = None, **attrs: Any) -> Any:
        """Emit one ONNX node; its output name (or names when ``outputs`` > 1)."""

    def const(self, value: Any, hint: str = "const", dtype: Any = None) -> str:
        """Add an initializer; its name."""

    def ints(self, values: Any, hint: str = "ints") -> str:
        """An int64 1-D initializer (shapes, axes, pads)."""

    def fresh(self, hint: str) -> str:
        """A new unique tensor name."""

    def param(self, i: int) -> np.ndarray | None:
        """Input ``i``'s value when it is a parameter, else ``None``."""

    def is_zeros(self, i: int) -> bool:
        """Whether input ``i`` is an all-zero fill."""

    def cast_to(self, tensor: str, dtype: Any) -> str:
        """``Cast`` ``tensor`` to ``dtype``."""

    def body(self, symbol: Any, formal: list[int], outer: dict[int, str], shapes: list,
             dtypes: list, dynamic: list | None = None) -> Any:
        """A subgraph Symbol (a control-flow op's body) as an ONNX ``GraphProto``: inputs
        ``formal`` (indices into its ``list_inputs()``) become body inputs in that order,
        inputs in ``outer`` read those outer tensors; outputs in the Symbol's order."""

    def fail(self, message: str) -> ConversionError:
        """A ConversionError naming the node (``raise ctx.fail(...)``)."""

    @property
    def shape(self) -> tuple:
        """Input 0's example shape."""

    @property
    def dtype(self) -> np.dtype:
        """Input 0's dtype."""

    def wants(self, i: int) -> bool:
        """Whether output ``i`` is read later (a handler must define those)."""

    def is_dynamic(self, i: int = 0, axis: int | None = None) -> bool:
        """Whether input ``i`` (or one of its axes) varies with the dynamic dims."""


#: A lowering: ``handler(ctx)``.
Lowering = Callable[[LoweringContext], None]


def lowering(op: str | OpDef, since: int = 13) -> Callable[[Lowering], Lowering]:
    """Decorator attaching an ONNX lowering to the registered op ``op`` (name, alias or
    OpDef) for opsets >= ``since``; the one way op files attach handlers."""
    from ..registry import get

    opdef = get(op) if isinstance(op, str) else op
    return opdef.to_onnx(since=since)


def deliver(ctx: LoweringContext, y: str, k: int = 0, dtype: Any = None) -> None:
    """Make tensor ``y`` the op's output ``k`` (cast from ``dtype`` to the output dtype when
    given and different).

    The node that just produced ``y`` writes the output name directly when this handler made
    it; ``y`` being one of the op's own inputs or an initializer (a no-op lowering) gets an
    ``Identity`` instead: their producers belong to other nodes and other consumers.
    """
    if dtype is not None and np.dtype(dtype) != np.dtype(ctx.out_dtypes[k] or dtype):
        y = ctx.cast_to(y, ctx.out_dtypes[k])
    last = ctx.nodes[-1] if ctx.nodes else None
    if (last is not None and list(last.output) == [y] and y not in ctx.initializers
            and y not in ctx.inputs):
        last.output[0] = ctx.outputs[k]
    else:
        ctx.make("Identity", [y], outputs=[ctx.outputs[k]])


def onnx_reduce(ctx: LoweringContext, op_type: str, x: str, axes: Any, keepdims: bool = True,
                outputs: list[str] | None = None) -> str:
    """One ONNX ``op_type`` (``ReduceSum``, ``ReduceMax``...) node over ``axes``: an attribute
    before opset 18 (ReduceSum: before 13), an input from then on."""
    axes = [int(a) for a in axes]
    if op_type == "ReduceSum" or ctx.opset >= 18:
        return ctx.make(op_type, [x, ctx.ints(axes, "axes")], outputs=outputs,
                        keepdims=int(keepdims))
    return ctx.make(op_type, [x], outputs=outputs, axes=axes, keepdims=int(keepdims))


def simple(op_type: str, **attrs: Any) -> Lowering:
    """One ONNX node with the op's inputs and outputs (``Relu``, ``Add``...)."""

    def handler(ctx: LoweringContext) -> None:
        ctx.make(op_type, ctx.inputs, outputs=ctx.outputs[:1], **attrs)

    handler.__name__ = f"to_{op_type}"
    return handler


def const_like(ctx: LoweringContext, value: Any, i: int = 0, hint: str = "scalar") -> str:
    """A scalar constant in the dtype of input ``i`` (ONNX needs equal dtypes)."""
    dt = ctx.in_dtypes[i] if ctx.in_dtypes and ctx.in_dtypes[i] is not None else np.float32
    return ctx.const(np.asarray(value, dtype=dt), hint)


def const_as(ctx: LoweringContext, value: Any, dtype: Any, hint: str = "c") -> str:
    """A constant of ``value`` in ``dtype``."""
    return ctx.const(np.asarray(value, dtype=dtype), hint)


def scalar_binary(op_type: str, reverse: bool = False) -> Lowering:
    """``x <op> scalar`` (or ``scalar <op> x``) with the scalar attribute as a constant."""

    def handler(ctx: LoweringContext) -> None:
        s = const_like(ctx, ctx.params.scalar)
        ins = [s, ctx.inputs[0]] if reverse else [ctx.inputs[0], s]
        ctx.make(op_type, ins, outputs=ctx.outputs[:1])

    handler.__name__ = f"to_{op_type}_scalar"
    return handler


def reshape_to_rank(ctx: LoweringContext, tensor: str, rank: int, axis: int = 1) -> str:
    """Reshape a 1-D per-channel tensor (C,) to broadcast along ``axis`` of a rank-``rank``
    tensor: (C, 1, ..., 1) with ``rank - axis - 1`` trailing ones."""
    shape = [-1] + [1] * (rank - axis - 1)
    return ctx.make("Reshape", [tensor, ctx.ints(shape, "bshape")])
