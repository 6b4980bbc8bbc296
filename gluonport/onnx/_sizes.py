"""The size budget (``_core/budget.py``) for ONNX graphs: every tensor whose shape is known
before running (declared inputs, initializers, what onnx shape inference derives from constant
shapes: ``ConstantOfShape``, ``Expand``, ``Tile``, ``Range``) is checked, so an 80-byte model
asking for gigabytes is refused before the importer folds it or onnxruntime runs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import onnx
from onnx import helper

from .._core.budget import check_peak, check_tensor, get_size_limit, shape_bytes

__all__ = ["check_onnx_sizes", "check_onnx_input_shapes", "check_onnx_graph", "skeleton",
           "skeleton_types"]

_SMALL = 4096  # initializers up to this many elements keep their values (data propagation)


def skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model for shape inference: large initializers become typed inputs
    (inference needs only their types, and the copy stays small), small ones keep their
    values (data propagation reads shape constants)."""
    g = model.graph
    inputs = list(g.input)
    have = {i.name for i in inputs}
    inits = []
    for t in g.initializer:
        n = 1
        for d in t.dims:
            n *= int(d)
        external = t.data_location == onnx.TensorProto.EXTERNAL
        if n <= _SMALL and not external:
            inits.append(t)
        elif t.name not in have:
            inputs.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    graph = helper.make_graph(list(g.node), g.name or "sizes", inputs, list(g.output), inits,
                              value_info=list(g.value_info))
    skel = helper.make_model(graph, opset_imports=list(model.opset_import))
    skel.ir_version = model.ir_version
    skel.functions.extend(model.functions)
    return skel


def skeleton_types(skel: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """``tensor name -> TypeProto`` of a :func:`skeleton` from onnx shape inference with data
    propagation, and its declared inputs/outputs/value_info."""
    g = skel.graph
    types: dict[str, onnx.TypeProto] = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(skel, check_type=False, strict_mode=False,
                                                     data_prop=True)
        infos = list(inferred.graph.value_info) + list(inferred.graph.output)
    except Exception:  # noqa: BLE001 - inference is a best effort; declared shapes remain
        infos = list(g.value_info) + list(g.output)
    for vi in list(g.input) + infos:
        if vi.type.HasField("tensor_type") and vi.name not in types:
            types[vi.name] = vi.type
    return types


def _static(tp: onnx.TypeProto) -> tuple[tuple[int, ...] | None, int]:
    tt = tp.tensor_type
    try:
        item = helper.tensor_dtype_to_np_dtype(tt.elem_type).itemsize if tt.elem_type else 4
    except (KeyError, ValueError, TypeError):
        item = 4
    if not tt.HasField("shape"):
        return None, item
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value") or d.dim_value < 0:
            return None, item
        dims.append(int(d.dim_value))
    return tuple(dims), item


def check_onnx_sizes(model: onnx.ModelProto, label: str) -> onnx.ModelProto | None:
    """Refuse (:class:`~gluonport.errors.ResourceLimitError`) an ONNX model with a tensor of
    statically known shape over the per-tensor size limit; the message names the tensor, the
    node making it and the size. Returns the model's :func:`skeleton` when an input has
    dynamic dims (for :func:`check_onnx_input_shapes` once they are known), else None."""
    if get_size_limit()[0] is None:
        return None
    skel = skeleton(model)
    _check_types(skel, skeleton_types(skel), label)
    inits = {t.name for t in model.graph.initializer}
    dynamic = any(_static(vi.type)[0] is None for vi in model.graph.input
                  if vi.name not in inits)
    return skel if dynamic else None


def check_onnx_input_shapes(skel: onnx.ModelProto, label: str,
                            shapes: Mapping[str, tuple[int, ...]]) -> None:
    """:func:`check_onnx_sizes` with the inputs' dims set to ``shapes`` (a run's arrays): a
    dynamic dim can make an intermediate (an ``Expand`` to ``(N, N)``) over the limit."""
    if get_size_limit()[0] is None:
        return
    pinned = onnx.ModelProto()
    pinned.CopyFrom(skel)
    for vi in pinned.graph.input:
        if vi.name in shapes and vi.type.HasField("tensor_type"):
            dims = vi.type.tensor_type.shape.dim
            del dims[:]
            for d in shapes[vi.name]:
                dims.add().dim_value = int(d)
    _check_types(pinned, skeleton_types(pinned), label)


def _check_types(model: onnx.ModelProto, types: Mapping[str, onnx.TypeProto],
                 label: str) -> None:
    sizes = {}
    for name, tp in types.items():
        shape, item = _static(tp)
        if shape is not None:
            sizes[name] = (shape, item)
    check_onnx_graph(list(model.graph.node), sizes, label)


def check_onnx_graph(nodes: list[onnx.NodeProto], sizes: Mapping[str, tuple[tuple, int]],
                     label: str = "") -> None:
    """Check ``sizes`` (tensor name -> (static shape, itemsize)) of a graph whose ``nodes``
    run in this order: each tensor against the per-tensor limit (naming the node making it),
    then the peak of the live tensors (what no node makes lives throughout) against the
    graph limit."""
    made_by = {o: n for n in nodes for o in n.output if o}
    where = f"{label}: " if label else ""
    nbytes = {}
    for name, (shape, item) in sizes.items():
        node: Any = made_by.get(name)
        what = (f"{where}tensor {name!r}" + (f" (output of {node.op_type} node "
                                             f"{node.name or node.output[0]!r})" if node
                                             else ""))
        check_tensor(what, shape, item)
        nbytes[name] = shape_bytes(shape, item)
    steps = [(f"{n.op_type} node {n.name or (n.output[0] if n.output else '')!r}",
              [i for i in n.input if i in made_by], [o for o in n.output if o]) for n in nodes]
    fixed = sum(b for name, b in nbytes.items() if name not in made_by)
    check_peak(steps, nbytes, fixed, what=label)
