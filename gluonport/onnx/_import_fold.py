"""Constant folding of an ONNX graph before import.

MXNet graphs are static where ONNX graphs compute shapes at run time: ``Reshape``'s shape,
``Slice``'s starts, ``Resize``'s sizes, ``Pad``'s pads are MXNet *attributes*. PyTorch exports
compute them with ``Shape -> Gather -> Unsqueeze -> Concat`` chains. We fold those away: every
node whose inputs are all known values is evaluated once (with onnx's reference evaluator), and
``Shape``/``Size`` of a tensor whose shape shape inference knows become constants. Folding and
shape inference alternate until nothing more folds (a folded Reshape shape can make the next
Shape static).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .._core.onnxfile import tensor_to_array
from ..errors import FormatError
from ._import_load import infer_value_info
from ._import_symbolic import known_vector, reshape_hints, try_symbolic
from ._import_unroll import Names, unroll

__all__ = ["Facts", "fold_model", "tensor_info", "NO_FOLD", "try_symbolic"]

NO_FOLD = frozenset({
    # random: a fixed draw baked into the graph would change the model's meaning
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
    "Bernoulli",
    # control flow and sequences are not MXNet tensors
    "If", "Loop", "Scan", "SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceAt",
    "SequenceErase", "SequenceLength", "SplitToSequence", "ConcatFromSequence", "SequenceMap",
    "Optional", "OptionalGetElement", "OptionalHasElement",
})
_MAX_ROUNDS = 8
# A sparse initializer made dense may not exceed this (its indices/values are checked first).
_MAX_DENSE = 1 << 31
_SMALL = 4096  # constants up to this size go to re-inference as values (data propagation)


@dataclass
class Facts:
    """What is known about the graph's tensors before conversion.

    ``consts`` maps tensor names to numpy values (initializers, Constant outputs, folded
    results); ``types`` maps names to ``(numpy dtype or None, shape or None)`` where a shape
    is a tuple of ints, strings (symbolic dims) or ``None`` (unknown dims).
    """

    consts: dict[str, np.ndarray] = field(default_factory=dict)
    types: dict[str, tuple] = field(default_factory=dict)
    nodes: list = field(default_factory=list)
    nonmx: dict[str, str] = field(default_factory=dict)  # sequence/optional/map values
    symbolic: dict[str, list] = field(default_factory=dict)  # shape vectors with named dims
    exprs: dict[str, tuple] = field(default_factory=dict)  # '(N*4)' -> ('Mul', 'N', 4)


def tensor_info(tp: onnx.TypeProto) -> tuple:
    """``(numpy dtype or None, shape tuple or None)`` of a tensor TypeProto."""
    tt = tp.tensor_type
    try:
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type) if tt.elem_type else None
    except (KeyError, ValueError, TypeError):
        dtype = None
    if not tt.HasField("shape"):
        return dtype, None
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dtype, tuple(dims)


def _static(shape: tuple | None) -> bool:
    return shape is not None and all(isinstance(d, int) and d >= 0 for d in shape)


def initial_consts(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Initializers (dense and sparse) as numpy arrays; a corrupt one is a FormatError."""
    consts = {t.name: tensor_to_array(t, None) for t in graph.initializer}
    for sp in graph.sparse_initializer:
        consts[sp.values.name] = _dense(sp)
    return consts


def _dense(sp: onnx.SparseTensorProto) -> np.ndarray:
    name = sp.values.name
    idx = tensor_to_array(sp.indices, None)
    vals = tensor_to_array(sp.values, None)
    dims = tuple(int(d) for d in sp.dims)
    if any(d < 0 for d in dims) or int(np.prod(dims, dtype=object)) * vals.itemsize > _MAX_DENSE:
        raise FormatError(f"sparse initializer {name!r}: dims {list(dims)} are negative or too "
                          f"large to make dense (over {_MAX_DENSE} bytes)")
    dense = np.zeros(dims, vals.dtype)
    try:
        if idx.ndim == 1:
            dense.reshape(-1)[idx] = vals
        else:
            dense[tuple(idx.T)] = vals
    except (IndexError, ValueError, TypeError) as exc:
        raise FormatError(f"sparse initializer {name!r}: indices {idx.shape} do not fit values "
                          f"{vals.shape} / dims {list(dims)}: {exc}") from None
    return dense


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _fold_shape(node: onnx.NodeProto, types: dict) -> list[np.ndarray] | None:
    shape = types.get(node.input[0], (None, None))[1]
    if not _static(shape):
        return None
    if node.op_type == "Size":
        return [np.array(int(np.prod(shape, dtype=np.int64)), np.int64)]
    start, end = _attr(node, "start", 0), _attr(node, "end", None)
    return [np.array(shape[slice(start, end)], np.int64)]


def _node_model(node: onnx.NodeProto, opsets: dict) -> onnx.ModelProto:
    """``node`` alone in a model of the graph's opsets (onnx's reference evaluator given a bare
    node runs it at the newest opset: an opset-11 Unsqueeze's ``axes`` attribute fails)."""
    ins = list(dict.fromkeys(n for n in node.input if n))
    graph = helper.make_graph([node], "fold", [onnx.ValueInfoProto(name=n) for n in ins],
                              [onnx.ValueInfoProto(name=n) for n in node.output if n])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v)
                                                   for d, v in opsets.items()])


def _evaluate(node: onnx.NodeProto, consts: dict, opsets: dict) -> list[np.ndarray] | None:
    from onnx.reference import ReferenceEvaluator

    feeds = {n: consts[n] for n in node.input if n}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ev = ReferenceEvaluator(_node_model(node, opsets))
            outs = ev.run(None, feeds)
    except Exception:  # noqa: BLE001 - not foldable here: the converter will deal with it
        return None
    result = []
    for o in outs:
        if not isinstance(o, (np.ndarray, np.generic)) or o.dtype == object:
            return None
        result.append(np.asarray(o))
    return result


def try_fold(node: onnx.NodeProto, consts: dict, types: dict, opsets: dict
             ) -> list[np.ndarray] | None:
    """Values of the node's outputs when they are known without running the model."""
    if node.domain not in ("", "ai.onnx") or node.op_type in NO_FOLD:
        return None
    if node.op_type in ("Shape", "Size") and node.input[0] not in consts:
        return _fold_shape(node, types)
    if node.op_type == "CastLike" and node.input[0] in consts:
        target = types.get(node.input[1], (None, None))[0]
        return None if target is None else [consts[node.input[0]].astype(target)]
    if not all(n in consts for n in node.input if n):
        return None
    outs = _evaluate(node, consts, opsets)
    if outs is None or len(outs) < len([o for o in node.output if o]):
        return None
    return outs


def _reinfer_model(model: onnx.ModelProto, nodes: list, consts: dict, hints: dict
                   ) -> onnx.ModelProto:
    """A model of the remaining nodes; small constants as initializers, big ones as typed
    inputs (shape inference needs only their types; copying weights would be waste); the
    ``hints`` (name -> (dtype, dims)) as value_info, which inference starts from."""
    used = {n for node in nodes for n in node.input} | {o.name for o in model.graph.output}
    inits, inputs = [], [i for i in model.graph.input if i.name not in consts]
    for name in sorted(used & set(consts)):
        value = consts[name]
        if value.size <= _SMALL:
            inits.append(numpy_helper.from_array(value, name))
        else:
            inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
    infos = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), dims)
             for name, (dtype, dims) in hints.items()]
    graph = helper.make_graph(nodes, "fold", inputs, list(model.graph.output), inits,
                              value_info=infos)
    out = helper.make_model(graph, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    out.functions.extend(model.functions)
    return out


def _non_tensors(model: onnx.ModelProto) -> dict[str, str]:
    """Graph inputs/outputs and inferred values that are sequences, optionals or maps."""
    out = {}
    infos = list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info)
    for vi in infos:
        kind = vi.type.WhichOneof("value")
        if kind not in (None, "tensor_type"):
            out[vi.name] = kind.replace("_type", "")
    return out


def _types(info: dict, consts: dict) -> dict:
    types = {k: tensor_info(v) for k, v in info.items()}
    for name, value in consts.items():
        types[name] = (value.dtype, tuple(value.shape))
    return types


def fold_model(model: onnx.ModelProto, opsets: dict[str, int]) -> Facts:
    """Fold constants (see module doc); returns the remaining nodes with known values/types."""
    consts = initial_consts(model.graph)
    nodes = list(model.graph.node)
    types = _types(infer_value_info(model), consts)
    _check_budget(types, nodes)
    symbolic: dict[str, list] = {}
    exprs: dict[str, tuple] = {}
    hints: dict[str, tuple] = {}
    for round_ in range(_MAX_ROUNDS):
        nodes, folded = _fold_round(nodes, consts, types, opsets, symbolic, exprs)
        new_hints = {**hints, **reshape_hints(nodes, types, consts, symbolic, exprs)}
        if (not folded and new_hints == hints) or round_ == _MAX_ROUNDS - 1:
            break
        # folded values (a Reshape's shape) and Reshape output shapes from named-dim vectors
        # let inference tell more shapes downstream
        hints = new_hints
        types = _types(infer_value_info(_reinfer_model(model, nodes, consts, hints)), consts)
        _check_budget(types, nodes)
        symbolic = {}
    return Facts(consts=consts, types=types, nodes=nodes, nonmx=_non_tensors(model),
                 symbolic=symbolic, exprs=exprs)


def _check_budget(types: dict, nodes: list) -> None:
    """Every tensor of known static shape against the size budget (:mod:`gluonport._core.budget`),
    and the graph's peak of live tensors, before folding evaluates anything or a converter
    builds a constant of that shape."""
    from .._core.budget import get_size_limit
    from ._sizes import check_onnx_graph

    if get_size_limit()[0] is None:
        return
    sizes = {name: (shape, np.dtype(dtype).itemsize if dtype is not None else 4)
             for name, (dtype, shape) in types.items() if _static(shape)}
    check_onnx_graph(nodes, sizes)


def _fold_round(nodes: list, consts: dict, types: dict, opsets: dict, symbolic: dict,
                exprs: dict) -> tuple[list, bool]:
    """One pass over ``nodes``: fold what is known (into ``consts``), note named-dim shape
    vectors (into ``symbolic``); returns the remaining nodes and whether anything folded."""
    remaining, folded = [], False
    names = None
    for node in nodes:
        if node.op_type in ("If", "Loop", "Scan"):  # iterations known: unrolled (next round)
            names = names or Names(nodes, set(consts) | set(types))
            body = unroll(node, consts, types, names, opsets.get("", 1))
            if body is not None:
                remaining.extend(body)
                folded = True
                continue
        outs = try_fold(node, consts, types, opsets)
        if outs is None:
            vec = try_symbolic(node, consts, types, symbolic, exprs) if node.output else None
            known = None if vec is None else known_vector(node, vec, types)
            if known is None:
                remaining.append(node)
                if vec is not None:
                    symbolic[node.output[0]] = vec
                continue
            outs = [known]
        folded = True
        for name, value in zip(node.output, outs):
            if name:
                consts[name] = value
                types[name] = (value.dtype, tuple(value.shape))
    return remaining, folded
