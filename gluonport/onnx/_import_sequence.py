"""Sequences of tensors whose structure is known while importing, expanded into tensors.

MXNet has no sequence values, but a sequence built and consumed inside one graph, with every
position and split size known (initializers, ``Constant`` values, or graph inputs the ONNX
backend specializes on), is only a bookkeeping of tensor names. :func:`expand_sequences`
walks the top-level graph before import, keeps each sequence as a list of tensor names and
rewrites its ops into tensor ops the importer maps onto MXNet ops:

* ``SequenceEmpty`` / ``SequenceConstruct`` / ``SequenceInsert`` / ``SequenceErase`` /
  ``Identity`` of a sequence: the list changes, no node;
* ``SequenceAt``: ``Identity`` of the element; ``SequenceLength``: a ``Constant``;
* ``ConcatFromSequence``: ``Concat`` (``Unsqueeze`` first with ``new_axis=1``);
* ``SplitToSequence``: ``Split`` (pieces of one size, or the given sizes; ``Squeeze`` of unit
  pieces with ``keepdims=0``), which needs the split axis's static size.

Optionals holding a tensor are resolved first where their presence is known while importing
(:func:`_optional_tensors`).

A position that is a graph input raises :class:`UnsupportedOpError` naming it in
``needs_const`` (the backend then imports once per value). A graph whose sequences reach a
graph output, a subgraph or any other op is left as it is (the importer names the sequence
as a non-tensor value).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import UnsupportedOpError

__all__ = ["expand_sequences"]

_SEQ_OPS = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase",
            "SequenceAt", "SequenceLength", "ConcatFromSequence", "SplitToSequence"}


class _Skip(Exception):
    """The graph's sequences are not all expandable: leave the graph as it is."""


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


class _Expander:
    def __init__(self, model: onnx.ModelProto):
        g = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.inputs = {i.name for i in g.input} - set(self.consts)
        self.seqs: dict[str, list[str]] = {}
        self.nodes: list[onnx.NodeProto] = []
        self.n = 0
        self.taken = {o for nd in g.node for o in nd.output} | {i.name for i in g.input} | \
            set(self.consts)
        self.shapes = _static_shapes(model)

    def fresh(self, base: str) -> str:
        while True:
            self.n += 1
            name = f"{base}__seq{self.n}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def const_ints(self, name: str) -> list[int]:
        if name in self.consts:
            return [int(v) for v in np.asarray(self.consts[name]).reshape(-1)]
        if name in self.inputs:
            err = UnsupportedOpError(f"sequence position / split {name!r} must be a constant "
                                     "to expand the sequence into tensors")
            err.needs_const = {name}
            raise err
        raise _Skip

    def position(self, node: onnx.NodeProto, i: int, length: int, default: int,
                 insert: bool = False) -> int:
        if len(node.input) <= i or not node.input[i]:
            return default
        pos = self.const_ints(node.input[i])[0]
        top = length if insert else length - 1
        if not -length <= pos <= top:
            raise UnsupportedOpError(f"node {node.name or node.output[0]!r} ({node.op_type}): "
                                     f"position {pos} is outside a sequence of {length}")
        return pos + length if pos < 0 else pos

    def emit(self, op: str, inputs: list[str], outputs: list[str], **attrs) -> None:
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))

    def int_const(self, values, base: str) -> str:
        name = self.fresh(base)
        self.emit("Constant", [], [name], value=numpy_helper.from_array(
            np.array(values, np.int64), name))
        return name

    def visit(self, node: onnx.NodeProto) -> None:
        op = node.op_type
        if node.domain in ("", "ai.onnx") and node.op_type == "Constant":
            value = _attr(node, "value", None)
            if isinstance(value, onnx.TensorProto):
                self.consts[node.output[0]] = numpy_helper.to_array(value)
        if node.domain not in ("", "ai.onnx") or (op not in _SEQ_OPS and not (
                op == "Identity" and node.input[0] in self.seqs)):
            if any(i in self.seqs for i in node.input) or any(
                    a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                    and self.seqs for a in node.attribute):
                raise _Skip  # a sequence read by an op (or subgraph) not expanded here
            self.nodes.append(node)
            return
        out = node.output[0]
        if op == "Identity":
            self.seqs[out] = list(self.seqs[node.input[0]])
        elif op == "SequenceEmpty":
            self.seqs[out] = []
        elif op == "SequenceConstruct":
            self.seqs[out] = list(node.input)
        elif op == "SplitToSequence":
            self.seqs[out] = self.split(node)
        else:
            seq = self.seqs.get(node.input[0])
            if seq is None:
                raise _Skip
            self.sequence_op(node, seq)

    def sequence_op(self, node: onnx.NodeProto, seq: list[str]) -> None:
        op, out = node.op_type, node.output[0]
        if op == "SequenceInsert":
            pos = self.position(node, 2, len(seq), len(seq), insert=True)
            self.seqs[out] = seq[:pos] + [node.input[1]] + seq[pos:]
        elif op == "SequenceErase":
            pos = self.position(node, 1, len(seq), len(seq) - 1)
            self.seqs[out] = seq[:pos] + seq[pos + 1:]
        elif op == "SequenceAt":
            self.emit("Identity", [seq[self.position(node, 1, len(seq), 0)]], [out])
        elif op == "SequenceLength":
            self.emit("Constant", [], [out], value=numpy_helper.from_array(
                np.array(len(seq), np.int64), out))
        elif op == "ConcatFromSequence":
            if not seq:
                raise UnsupportedOpError("ConcatFromSequence of an empty sequence")
            axis = int(_attr(node, "axis", 0))
            new_axis = int(_attr(node, "new_axis", 0))
            shape = self.shapes.get(seq[0])
            if axis < 0 and shape is not None:  # the importer's Concat wants it non-negative
                axis += len(shape) + new_axis
            parts = seq
            if new_axis:
                axes = self.int_const([axis], out)
                parts = [self.fresh(out) for _ in seq]
                for src, dst in zip(seq, parts):
                    self.emit("Unsqueeze", [src, axes], [dst])
            self.emit("Concat", parts, [out], axis=axis)

    def split(self, node: onnx.NodeProto) -> list[str]:
        data, out = node.input[0], node.output[0]
        axis = int(_attr(node, "axis", 0))
        keepdims = int(_attr(node, "keepdims", 1))
        split = self.const_ints(node.input[1]) if len(node.input) > 1 and node.input[1] \
            else None
        if split is not None and len(split) > 1:
            sizes, keepdims = split, 1  # ONNX ignores keepdims when split is given
        else:
            shape = self.shapes.get(data)
            if shape is None:
                raise _Skip  # pieces of one size need the axis's static size
            size = shape[axis + len(shape) if axis < 0 else axis]
            if split is None:
                sizes = [1] * size
            else:  # a scalar: pieces of that size, the last one shorter (one value as a 1-D
                # list must be the whole axis, which this gives too)
                chunk, keepdims = split[0], 1
                if chunk <= 0:
                    raise UnsupportedOpError(f"SplitToSequence split {chunk} is not positive")
                sizes = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
        pieces = [self.fresh(out) for _ in sizes]
        self.emit("Split", [data, self.int_const(sizes, out)], pieces, axis=axis)
        if keepdims:
            return pieces
        squeezed = [self.fresh(out) for _ in pieces]
        axes = self.int_const([axis], out)
        for src, dst in zip(pieces, squeezed):
            self.emit("Squeeze", [src, axes], [dst])
        return squeezed


def _static_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - no shapes: splits without them are left alone
        return {}
    out = {}
    g = inferred.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is not None and tt.HasField("shape") and all(
                d.HasField("dim_value") for d in tt.shape.dim):
            out[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    for t in g.initializer:
        out[t.name] = tuple(t.dims)
    return out


def _optional_tensors(model: onnx.ModelProto) -> onnx.ModelProto:
    """Optionals that hold a tensor as graph inputs become that tensor, which the caller must
    then feed (reading the element of an empty optional is an error in ONNX too), unless the
    graph asks whether it is there (``OptionalHasElement`` of a graph input: known only at
    run time, the model is left alone). ``OptionalHasElement`` of a tensor is ``true``, of
    nothing ``false``; ``OptionalGetElement`` of a tensor is ``Identity``. Optionals of
    sequences and the ``Optional`` op (an empty optional flowing on) are left alone."""
    g = model.graph
    if not any(n.op_type in ("OptionalHasElement", "OptionalGetElement") for n in g.node):
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    tensors = {i.name for i in g.input if i.type.HasField("tensor_type")} | {
        t.name for t in g.initializer} | {o for n in g.node for o in n.output
                                          if n.op_type != "Optional"}
    optional_inputs = set()
    for vi in g.input:
        if vi.type.HasField("optional_type") and \
                vi.type.optional_type.elem_type.HasField("tensor_type"):
            inner = onnx.TypeProto()
            inner.CopyFrom(vi.type.optional_type.elem_type)
            vi.type.CopyFrom(inner)
            optional_inputs.add(vi.name)
    nodes = []
    for n in g.node:
        src = n.input[0] if n.input else ""
        if n.op_type == "OptionalHasElement" and src in optional_inputs:
            return model  # whether the caller feeds it is known only at run time
        if n.op_type == "OptionalHasElement" and (not src or src in tensors):
            nodes.append(helper.make_node("Constant", [], list(n.output), name=n.name,
                                          value=numpy_helper.from_array(
                                              np.array(bool(src)), n.output[0])))
        elif n.op_type == "OptionalGetElement" and (src in tensors or src in optional_inputs) \
                and src not in _seq_names(g):
            nodes.append(helper.make_node("Identity", [src], list(n.output), name=n.name))
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    return out


def _seq_names(g: onnx.GraphProto) -> set[str]:
    return {i.name for i in g.input if i.type.HasField("sequence_type")} | {
        o for n in g.node if n.op_type in _SEQ_OPS and n.op_type not in (
            "SequenceAt", "SequenceLength", "ConcatFromSequence") for o in n.output}


def expand_sequences(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its sequence ops expanded into tensor ops (a new model), or ``model``
    itself when it has none or they cannot all be expanded (see the module docstring);
    optionals holding tensors are resolved first (:func:`_optional_tensors`)."""
    model = _optional_tensors(model)
    g = model.graph
    if not any(n.op_type in _SEQ_OPS for n in g.node):
        return model
    ex = _Expander(model)
    try:
        for node in g.node:
            ex.visit(node)
    except _Skip:
        return model
    if any(o.name in ex.seqs for o in g.output):
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(ex.nodes)
    keep = [vi for vi in out.graph.value_info if vi.name not in ex.seqs]
    del out.graph.value_info[:]
    out.graph.value_info.extend(keep)
    return out
