"""``ExportContext``: what an ONNX export handler sees and how it emits nodes.

A handler is ``handler(ctx)``; it reads the current MXNet node through ``ctx.params``,
``ctx.inputs`` (tensor names), ``ctx.in_shapes``/``ctx.in_dtypes`` (inferred for the example
input shapes), ``ctx.in_dynamic`` (which dims vary with the dynamic axes) and ``ctx.opset``, and
must define every name in ``ctx.outputs`` with ``ctx.make(...)``. Names it does not choose are
made unique and deterministic from the MXNet node name.

Provenance: after each handler the exporter calls :meth:`ExportContext.record_provenance`,
which tags every ONNX node the handler emitted with its MXNet node's key (``doc_string``) and
keeps one record per MXNet node (op, attribute strings, input and output tensor names); the
exporter writes the records of the live nodes to the model's ``gluonport.provenance``
metadata, which lets the importer restore an MXNet op whose lowering it cannot import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes
from ..errors import ConversionError

__all__ = ["ExportContext", "Namer"]


class Namer:
    """Unique, deterministic tensor/node names (ONNX graphs are SSA: every name once)."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def claim(self, base: str) -> str:
        name = base or "t"
        k = 1
        while name in self._used:
            name = f"{base}__{k}"
            k += 1
        self._used.add(name)
        return name


class ExportContext:
    """Shared state of one export plus the view of the node being converted.

    Implements :class:`gluonport.ops.lowering.LoweringContext`, the typed view the op files'
    ONNX lowerings are written against (``tests/ops/test_lowering.py`` checks every member).
    """

    def __init__(self, opset: int, namer: Namer):
        self.opset = opset
        self.namer = namer
        self.nodes: list[Any] = []
        self.initializers: dict[str, np.ndarray] = {}
        self.param_values: dict[str, np.ndarray] = {}  # tensor name -> value, for params
        # tensor names read by some node or returned by the graph (None: not known)
        self.consumed: set[str] | None = None
        # per-node view, set by the exporter before each handler call
        self.node: Any = None
        self.params: Any = None
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.in_shapes: list[tuple] = []
        self.in_dtypes: list[np.dtype] = []
        self.in_dynamic: list[tuple[bool, ...]] = []
        self.out_shapes: list[tuple] = []
        self.out_dtypes: list[np.dtype] = []
        self.out_dynamic: list[tuple[bool, ...]] = []
        self.producers: list = []  # the MXNet node behind each input
        # provenance key (MXNet node name, '#k' on a repeat) -> record (see record_provenance)
        self.provenance: dict[str, dict[str, Any]] = {}
        # export_body(ctx, symbol, ...) for control-flow subgraphs (set by export.py)
        self.body_exporter: Any = None
        self._counter = 0

    # --- emitting ---------------------------------------------------------------------------
    def make(self, op_type: str, inputs: list[str], outputs: list[str] | int | None = None,
             domain: str = "", name: str | None = None, **attrs: Any) -> Any:
        """Add one ONNX node; returns its output name (or the list of names when several).

        ``outputs`` is a list of names to define, or a count of fresh names (default 1).
        ``None`` attributes are dropped; ``""`` in ``inputs`` marks an omitted optional input.
        """
        from onnx import helper

        if outputs is None or isinstance(outputs, int):
            count = 1 if outputs is None else outputs
            outputs = [self.fresh(op_type.lower()) for _ in range(count)]
        node_name = self.namer.claim(name or f"{self.node.name if self.node else 'g'}"
                                     f"__{op_type}")
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs),
                                           name=node_name, domain=domain or None, **attrs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def record_provenance(self, start: int) -> None:
        """Tag the ONNX nodes emitted since ``ctx.nodes[start]`` with the current MXNet node.

        Each node's ``doc_string`` becomes the MXNet node's key (its name; ``name#1``... when
        two MXNet nodes share a name), and ``provenance[key]`` records the MXNet op name, its
        attribute strings verbatim, and its input and output tensor names (the ONNX names).
        ``doc_string`` is allowed at every IR version (``NodeProto.metadata_props`` needs IR
        10, opset 21's), and checkers and runtimes ignore it. A node a handler re-tags (an
        earlier node's output renamed) keeps its first tag.
        """
        node = self.node
        key, k = node.name, 0
        while key in self.provenance:
            k += 1
            key = f"{node.name}#{k}"
        self.provenance[key] = {"op": node.op.name, "attrs": dict(node.attrs),
                                "inputs": list(self.inputs), "outputs": list(self.outputs)}
        for onnx_node in self.nodes[start:]:
            if not onnx_node.doc_string:
                onnx_node.doc_string = key

    def fresh(self, hint: str) -> str:
        """A new unique tensor name derived from the current MXNet node."""
        base = self.node.name if self.node is not None else "g"
        return self.namer.claim(f"{base}__{hint}")

    def const(self, value: Any, hint: str = "const", dtype: Any = None) -> str:
        """A constant tensor (an initializer); returns its name."""
        arr = np.asarray(value, dtype=dtype) if dtype is not None else np.asarray(value)
        name = self.fresh(hint)
        self.initializers[name] = arr
        return name

    def ints(self, values: Any, hint: str = "ints") -> str:
        """An int64 1-D constant (shapes, axes, pads)."""
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1), hint)

    def param(self, i: int) -> np.ndarray | None:
        """The value of input ``i`` when it is a parameter (for re-layout), else ``None``."""
        return self.param_values.get(self.inputs[i])

    def is_zeros(self, i: int) -> bool:
        """Whether input ``i`` is an all-zero fill (its producer's ``OpDef.all_zeros``:
        ``_zeros``, or ``_full`` of 0): an ONNX op whose optional input defaults to zeros can
        then omit it (RNN initial states)."""
        src = self.producers[i] if i < len(self.producers) else None
        if src is None or src.op is None:
            return False
        all_zeros = getattr(src.op, "all_zeros", None)  # OpDef.all_zeros
        return bool(all_zeros is not None and all_zeros(src.params))

    def cast_to(self, tensor: str, dtype: Any) -> str:
        """``Cast`` ``tensor`` to ``dtype`` (numpy dtype or name)."""
        return self.make("Cast", [tensor], to=dtypes.onnx_of(dtype))

    def body(self, symbol: Any, formal: list[int], outer: dict[int, str], shapes: list,
             dtypes: list, dynamic: list | None = None) -> Any:
        """A subgraph Symbol as an ONNX ``GraphProto`` (Scan/Loop/If bodies): its inputs
        ``formal`` (indices into ``list_inputs()``, in that order) are body inputs, those in
        ``outer`` read the named outer tensors; see ``onnx/_export_body.py``."""
        if self.body_exporter is None:
            raise self.fail("subgraphs are exported only by gluonport.onnx.export_model")
        return self.body_exporter(self, symbol, formal, outer, shapes, dtypes, dynamic)

    def fail(self, message: str) -> ConversionError:
        """A ConversionError naming the current node."""
        where = f"node {self.node.name!r} ({self.node.op.name})" if self.node else "graph"
        return ConversionError(f"{where}: {message}")

    # --- views ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        """Shape of input 0 (the example shape; see ``in_dynamic`` for varying dims)."""
        return self.in_shapes[0]

    @property
    def dtype(self) -> np.dtype:
        return self.in_dtypes[0]

    def wants(self, i: int) -> bool:
        """Whether output ``i`` is read by a later node or returned by the graph (a handler
        must define those); without that knowledge, whether it is a visible output."""
        if self.consumed is not None:
            return self.outputs[i] in self.consumed
        return i < self.node.num_visible_outputs()

    def is_dynamic(self, i: int = 0, axis: int | None = None) -> bool:
        """Whether input ``i`` (or one axis of it) changes with the dynamic input dims."""
        dyn = self.in_dynamic[i]
        return any(dyn) if axis is None else dyn[axis]
