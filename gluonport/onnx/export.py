"""MXNet graph -> ONNX ``ModelProto``, verified by the checker and by onnxruntime.

``export_model`` accepts MXNet 1.9.1's ``mxnet.onnx.export_model`` arguments. Before converting
anything it lists *every* op without a handler in one :class:`UnsupportedOpError`; the model is
written to a temp file and renamed, so a failed export leaves no half-written file.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._core import dtypes
from .._core.hashing import file_digest
from .._core.version import __version__
from ..errors import ConversionError, GluonportError, InputShapeError, UnsupportedOpError
from ..ndarray import NDArray
from ..symbol import Symbol
from ..symbol import load as sym_load
from ..symbol._graph import Node, label_inputs, op_listing, topo_order
from ..symbol._infer import infer_shapes, infer_types
from ._context import ExportContext, Namer
from ._export_body import export_body, node_reads
from ._stream import remove_data_files, write_model
from .opset import check_opset, ir_version_for

__all__ = ["export_model", "export_symbol", "register_converter", "get_converter",
           "label_inputs", "file_sha256", "PROVENANCE_KEY", "ExportGraph", "load_params"]

PROVENANCE_KEY = "gluonport.provenance"

_CUSTOM: dict[str, list[tuple[int, Callable]]] = {}
_LOG = logging.getLogger("gluonport.onnx")
_BIG = 2 * 1024 ** 3 - 64 * 1024 ** 2  # protobuf's 2 GB limit, with headroom


def register_converter(op_name: str, since: int = 13):
    """Register your own ONNX converter for ``op_name`` (a custom op, or to override ours).

    The function receives an :class:`ExportContext` and must define ``ctx.outputs``::

        @gluonport.onnx.register_converter("MyRelu6")
        def _(ctx):
            ctx.make("Clip", [ctx.inputs[0], ctx.const(np.float32(0)), ctx.const(np.float32(6))],
                     outputs=ctx.outputs)
    """

    def deco(fn: Callable) -> Callable:
        handlers = _CUSTOM.setdefault(op_name, [])
        handlers[:] = [h for h in handlers if h[0] != since] + [(since, fn)]
        handlers.sort(key=lambda h: h[0])
        return fn

    return deco


def get_converter(node: Node, opset: int) -> Callable | None:
    """The handler for a node at ``opset``: a user's first, then the op's own."""
    best = None
    for since, fn in _CUSTOM.get(node.op.name, []):
        if since <= opset:
            best = fn
    if best is not None:
        return best
    return node.op.onnx_handler(opset)


def _numpy(v: Any) -> np.ndarray:
    if isinstance(v, NDArray):
        return v._data
    if hasattr(v, "asnumpy"):
        return v.asnumpy()
    return np.asarray(v)


def load_params(params: Any) -> dict[str, np.ndarray]:
    """The parameters of an export as numpy arrays keyed by name.

    Parameters
    ----------
    params : None, str, os.PathLike, dict or list of dict
        A ``.params`` file, or ``{name: array}`` dicts (``arg:``/``aux:`` prefixes dropped).

    Returns
    -------
    dict of str to numpy.ndarray
        The parameters; empty for ``None``.
    """
    if params is None:
        return {}
    if isinstance(params, (str, os.PathLike)):
        from ..formats import params as fmt
        from ..model import no_params_if_empty

        params = no_params_if_empty(fmt.load(os.fspath(params)))
        if not isinstance(params, dict):
            raise ConversionError("the params file holds an unnamed list, not named parameters")
    if isinstance(params, (list, tuple)):
        merged: dict[str, Any] = {}
        for d in params:
            merged.update(d)
        params = merged
    out = {}
    for k, v in params.items():
        name = k[4:] if k.startswith(("arg:", "aux:")) else k
        out[name] = _numpy(v)
    return out


class ExportGraph:
    """The MXNet side of one export: order, data inputs, inferred shapes/dtypes.

    Shared with :mod:`gluonport.onnx.verify` and the CLI's ``convert``, which replay the
    same graph in numpy.
    """

    def __init__(self, sym: Symbol, params: dict[str, np.ndarray], in_shapes: Any,
                 in_types: Any, dynamic_axes: dict[str, dict[int, str]]):
        self.sym = sym
        self.params = params
        self.order = topo_order(n for n, _ in sym._outputs)
        labels = label_inputs(self.order)
        self.data = [n for n in self.order if n.op is None and n.name not in params
                     and n.name not in labels]
        self.labels = [n for n in self.order if n.op is None and n.name in labels
                       and n.name not in params]
        inputs = [n for n in self.order if n.op is None and n.name not in params]
        self.shapes0 = self._data_shapes(drop_label_entries(in_shapes, inputs, labels,
                                                            "in_shapes"))
        self.types0 = self._data_types(drop_label_entries(in_types, inputs, labels, "in_types"))
        self.dynamic_axes = dynamic_axes
        self.shapes, self.dyn = self._infer()
        self.types = infer_types(self.order, {**self.types0, **{k: v.dtype for k, v in
                                                                params.items()}}, strict=False)

    def _data_shapes(self, in_shapes: Any) -> dict[str, tuple]:
        names = [n.name for n in self.data]
        if in_shapes is None or isinstance(in_shapes, Mapping):
            from ..symbol._infer import var_shape_attr

            given = dict(in_shapes or {})
            unknown = set(given) - set(names)
            if unknown:
                raise ConversionError(f"in_shapes names {sorted(unknown)} are not inputs; the "
                                      f"inputs are {names}")
            shapes = {n.name: tuple(int(d) for d in given[n.name]) if n.name in given
                      else var_shape_attr(n) for n in self.data}
            missing = [k for k, s in shapes.items() if k not in given and (not s or 0 in s)]
            if missing:
                raise InputShapeError(f"give in_shapes for the input(s) {missing}: their shapes "
                                      "are not recorded in the graph", missing)
            return shapes
        in_shapes = list(in_shapes)
        if len(in_shapes) == 1 and isinstance(in_shapes[0], int):
            in_shapes = [tuple(in_shapes)]
        if len(in_shapes) != len(names):
            raise ConversionError(f"{len(in_shapes)} in_shapes given for {len(names)} inputs "
                                  f"{names}")
        return {k: tuple(int(d) for d in s) for k, s in zip(names, in_shapes)}

    def _data_types(self, in_types: Any) -> dict[str, np.dtype]:
        names = [n.name for n in self.data]
        if isinstance(in_types, Mapping):
            return {k: dtypes.to_numpy(v) for k, v in in_types.items()}
        if not isinstance(in_types, (list, tuple)):
            in_types = [in_types] * len(names)
        if len(in_types) != len(names):
            raise ConversionError(f"{len(in_types)} in_types given for {len(names)} inputs")
        return {k: dtypes.to_numpy(t) for k, t in zip(names, in_types)}

    def _infer(self) -> tuple[dict, dict]:
        given = {**self.shapes0, **{k: v.shape for k, v in self.params.items()}}
        shapes = infer_shapes(self.order, given, strict=False)
        if not self.dynamic_axes:
            return shapes, {k: tuple(False for _ in s) for k, s in shapes.items()
                            if s is not None}
        # Dims that change when the dynamic input dims change are dynamic downstream too. The
        # probe multiplies each dynamic dim (an op may need it divisible, e.g. a Reshape -4
        # split of the batch axis), trying a few factors until inference accepts one.
        for name, axes in self.dynamic_axes.items():
            if name not in self.shapes0:
                raise ConversionError(f"dynamic axes given for {name!r}, which is not an input; "
                                      f"the inputs are {sorted(self.shapes0)}")
            for ax in axes:
                if not -len(self.shapes0[name]) <= ax < len(self.shapes0[name]):
                    raise ConversionError(f"dynamic axis {ax} of input {name!r} is out of range "
                                          f"for its shape {self.shapes0[name]}")
        other = None
        for factor in (2, 3, 5, 7):
            bumped = dict(given)
            for name, axes in self.dynamic_axes.items():
                s = list(bumped[name])
                for ax in axes:
                    s[ax] = s[ax] * factor
                bumped[name] = tuple(s)
            try:
                other = infer_shapes(self.order, bumped, strict=False, budget=False)
                break
            except GluonportError:
                continue
        if other is None:
            raise ConversionError("the graph accepts no other size for the dynamic axes "
                                  f"{self.dynamic_axes}: export with static shapes")
        dyn = {k: tuple(a != b for a, b in zip(s, other.get(k) or s))
               for k, s in shapes.items() if s is not None}
        return shapes, dyn


def drop_label_entries(values: Any, inputs: Sequence[Node], labels: set[str], what: str) -> Any:
    """``values`` (in_shapes, in_types or dynamic_input_shapes) without the entries given for
    the label inputs of output ops (``SoftmaxOutput``'s ``label``...), which are no inputs of the
    ONNX model: the names of a dict, or the positions of a list that has one entry for each
    non-parameter variable (labels included, in graph order). Logs what it dropped."""
    if not labels:
        return values
    if isinstance(values, Mapping):
        dropped = sorted(k for k in values if k in labels)
        kept = {k: v for k, v in values.items() if k not in labels}
    elif isinstance(values, (list, tuple)) and len(values) == len(inputs) and any(
            not isinstance(v, (int, np.integer)) for v in values):
        dropped = [n.name for n in inputs if n.name in labels]
        kept = [v for v, n in zip(values, inputs) if n.name not in labels]
    else:
        return values
    if dropped:
        _LOG.info("export: ignoring the %s given for %s: label input(s) of output ops are not "
                  "inputs of the ONNX model", what, dropped)
    return kept


def _tensor_names(order: list[Node], namer: Namer) -> dict[tuple[int, int], str]:
    names: dict[tuple[int, int], str] = {}
    for node in order:
        if node.op is None:
            names[(id(node), 0)] = namer.claim(node.name)
            continue
        n_out = node.num_outputs()
        outs = node.output_names()
        for i in range(n_out):
            base = node.name if n_out == 1 else outs[i]
            names[(id(node), i)] = namer.claim(base)
    return names


def _value_info(name: str, dtype: np.dtype, shape: tuple, dims: Sequence[Any] | None = None):
    from onnx import helper

    return helper.make_tensor_value_info(name, dtypes.onnx_of(dtype),
                                         list(dims) if dims is not None else list(shape))


def _dynamic_axes(g_data: list[Node], dynamic: bool, dynamic_input_shapes: Any,
                  dynamic_axes: Mapping[str, Any] | None) -> dict[str, dict[int, str]]:
    if dynamic_axes:
        out: dict[str, dict[int, str]] = {}
        for name, axes in dynamic_axes.items():
            if isinstance(axes, Mapping):
                out[name] = {int(a): str(n) for a, n in axes.items()}
            else:
                out[name] = {int(a): f"{name}_dim{a}" for a in axes}
        return out
    if not dynamic:
        return {}
    out = {}
    for k, node in enumerate(g_data):
        if dynamic_input_shapes is not None:
            spec = dynamic_input_shapes[k]
            out[node.name] = {a: f"{node.name}_dim{a}" for a, d in enumerate(spec) if d is None}
        else:
            out[node.name] = {0: "batch"}
    return out


_SMALL = 1024  # bytes: initializers up to this size stay in the skeleton (shape constants)


def export_symbol(sym: Symbol, params: Mapping[str, Any] | None, in_shapes: Any = None,
                  in_types: Any = np.float32, opset_version: int | None = None,
                  dynamic: bool = False, dynamic_input_shapes: Any = None,
                  dynamic_axes: Mapping[str, Any] | None = None,
                  metadata: Mapping[str, str] | None = None) -> Any:
    """Convert to an ``onnx.ModelProto`` (not written or checked; see :func:`export_model`)."""
    skeleton, weights = _build(sym, params, in_shapes, in_types, opset_version, dynamic,
                               dynamic_input_shapes, dynamic_axes, metadata)
    return _attach_weights(skeleton, weights)


def _build(sym: Symbol, params: Any, in_shapes: Any, in_types: Any, opset_version: int | None,
           dynamic: bool, dynamic_input_shapes: Any, dynamic_axes: Mapping[str, Any] | None,
           metadata: Mapping[str, str] | None) -> tuple[Any, list[tuple[str, np.ndarray]]]:
    """The model without its large initializers (the "skeleton"), and those initializers.

    Checking and shape inference run on the skeleton, where the large initializers are
    declared as graph inputs instead: protobuf copies every tensor it touches, and a 100 MB
    model would otherwise be copied and re-serialized by each pass.
    """
    from onnx import helper, numpy_helper

    opset = check_opset(opset_version)
    pvals = load_params(params)
    order = topo_order(n for n, _ in sym._outputs)
    _check_converters(order, opset)
    labels = label_inputs(order)
    data_nodes = [n for n in order if n.op is None and n.name not in pvals
                  and n.name not in labels]
    inputs = [n for n in order if n.op is None and n.name not in pvals]
    if dynamic_input_shapes is not None:
        dynamic_input_shapes = drop_label_entries(dynamic_input_shapes, inputs, labels,
                                                  "dynamic_input_shapes")
    if dynamic_axes:
        dynamic_axes = drop_label_entries(dynamic_axes, inputs, labels, "dynamic_axes")
    axes = _dynamic_axes(data_nodes, dynamic, dynamic_input_shapes, dynamic_axes)
    g = ExportGraph(sym, pvals, in_shapes, in_types, axes)
    namer = Namer()
    tnames = _tensor_names(g.order, namer)
    ctx = ExportContext(opset, namer)
    ctx.body_exporter = functools.partial(export_body, export_symbol)  # control-flow bodies
    ctx.param_values = {tnames[(id(n), 0)]: pvals[n.name] for n in g.order
                        if n.op is None and n.name in pvals}
    ctx.consumed = {tnames[(id(s), i)] for n in g.order if n.op is not None
                    for s, i in n.inputs} | {tnames[(id(n), i)] for n, i in sym._outputs}
    failed: list[tuple[set[str], ConversionError]] = []
    for node in g.order:
        if node.op is None:
            continue
        try:
            _convert_node(ctx, node, tnames, g)
        except ConversionError as exc:
            # Harmless if nothing ends up reading this node (a consumer's converter may not
            # need it: RNN omits an all-zero initial state); decided once all are converted.
            failed.append(({tnames[(id(node), i)] for i in range(node.num_outputs())}, exc))
    outputs = [tnames[(id(n), i)] for n, i in sym._outputs]
    ctx.nodes = _live_nodes(ctx.nodes, set(outputs))
    used = {i for n in ctx.nodes for i in node_reads(n)}
    for names, exc in failed:
        if names & (used | set(outputs)):
            raise exc
    weights = [(name, np.asarray(v)) for name, v in ctx.param_values.items() if name in used]
    weights += [(name, np.asarray(v)) for name, v in ctx.initializers.items()
                if name in used or name in outputs]
    small = [numpy_helper.from_array(v, name) for name, v in weights if v.nbytes <= _SMALL]
    large = [(name, v) for name, v in weights if v.nbytes > _SMALL]
    inputs = []
    for n in g.data:
        shape = g.shapes0[n.name]
        dims = [axes.get(n.name, {}).get(a, d) for a, d in enumerate(shape)]
        inputs.append(_value_info(tnames[(id(n), 0)], g.types0[n.name], shape, dims))
    inputs += [_value_info(name, v.dtype, v.shape) for name, v in large]
    outs = []
    for n, i in sym._outputs:
        key = (id(n), i)
        shape = g.shapes.get(key)
        dyn = g.dyn.get(key, ())
        dims = None if shape is None else [None if (k < len(dyn) and dyn[k]) else d
                                           for k, d in enumerate(shape)]
        outs.append(_value_info(tnames[key], g.types.get(key, np.dtype(np.float32)),
                                shape or (), dims))
    outs = _dedupe_outputs(ctx, outs)
    graph = helper.make_graph(ctx.nodes, "gluonport", inputs, outs, initializer=small)
    model = helper.make_model(graph, producer_name="gluonport", producer_version=__version__,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version_for(opset)
    meta = {"gluonport.converted_from": "mxnet",
            # ONNX graph output -> MXNet output name (list_outputs), the map back to the graph;
            # ONNX node names are "<MXNet node name>__<ONNX op>".
            "gluonport.output_names": json.dumps(
                {o.name: mx for o, mx in zip(outs, sym.list_outputs())}),
            # MXNet node key (each ONNX node's doc_string) -> {op, attrs, inputs, outputs}:
            # what the importer restores when it cannot import a node's lowering
            PROVENANCE_KEY: _provenance_json(ctx)}
    meta.update(metadata or {})
    for k, v in meta.items():
        model.metadata_props.add(key=k, value=str(v))
    return model, large


def _provenance_json(ctx: ExportContext) -> str:
    """The records of the MXNet nodes that still have an ONNX node, in graph order, as
    compact JSON (deterministic: insertion order, no whitespace)."""
    live = {n.doc_string for n in ctx.nodes if n.doc_string}
    records = {k: v for k, v in ctx.provenance.items() if k in live}
    return json.dumps(records, separators=(",", ":"), ensure_ascii=False)


def _drop_inputs(model: Any, names: set[str]) -> None:
    """Remove the graph inputs that stood in for the weights ``names`` in the skeleton."""
    keep = [i for i in model.graph.input if i.name not in names]
    del model.graph.input[:]
    model.graph.input.extend(keep)


def _attach_weights(model: Any, weights: list[tuple[str, np.ndarray]]) -> Any:
    """Move the large initializers into ``model`` (in place): drop their stand-in graph
    inputs, add each tensor once, its bytes written straight into the protobuf."""
    _drop_inputs(model, {name for name, _ in weights})
    for name, arr in weights:
        t = model.graph.initializer.add()
        t.name = name
        t.data_type = dtypes.onnx_of(arr.dtype)
        t.dims.extend(arr.shape)
        t.raw_data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"),
                                                      copy=False).tobytes()
    return model


def _live_nodes(nodes: list, outputs: set[str]) -> list:
    """``nodes`` (in topological order) without those whose outputs nobody reads: a handler
    that folds parameters at export time (RNN's re-laid-out weights) leaves the MXNet-side
    chain that built them unread, and its weights must not be stored twice."""
    live, kept = set(outputs), []
    for node in reversed(nodes):
        if any(o in live for o in node.output if o):
            kept.append(node)
            live.update(node_reads(node))  # subgraphs read outer tensors too
    return kept[::-1]


def _dedupe_outputs(ctx: ExportContext, outs: list) -> list:
    """The same tensor returned twice becomes an Identity copy (graph outputs are unique)."""
    seen: set[str] = set()
    result = []
    for vi in outs:
        if vi.name in seen:
            new = ctx.namer.claim(vi.name + "__dup")
            ctx.node = None
            ctx.make("Identity", [vi.name], outputs=[new])
            vi.name = new
        seen.add(vi.name)
        result.append(vi)
    return result


def _why_no_converter(node: Node, opset: int) -> str:
    """The reason an op has no converter at ``opset``: unknown op, by design, or too old."""
    if node.op.compute is None and not node.op.onnx_handlers:
        return "unknown to gluonport"
    later = [since for since, _ in node.op.onnx_handlers if since > opset]
    if later:
        return f"needs opset >= {min(later)}"
    if node.op.no_onnx:
        return node.op.no_onnx
    return "no converter yet"


def _check_converters(order: list[Node], opset: int) -> None:
    """One UnsupportedOpError naming every op (with its nodes and the reason) that cannot be
    converted, before anything is converted."""
    missing: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for n in order:
        if n.op is None or get_converter(n, opset) is not None:
            continue
        missing.setdefault(n.op.name, []).append(n.name)
        reasons.setdefault(n.op.name, _why_no_converter(n, opset))
    if missing:
        listing = op_listing(missing, reasons, limit=3)
        raise UnsupportedOpError(
            f"cannot export to ONNX opset {opset}: {len(missing)} operator(s) have no ONNX "
            f"converter: {listing}. Register one with gluonport.onnx.register_converter(op) "
            "or see gluonport/ops/OPERATORS.md", missing)


def _convert_node(ctx: ExportContext, node: Node, tnames: dict, g: ExportGraph) -> None:
    ctx.node = node
    ctx.params = node.params
    ctx.inputs = [tnames[(id(s), i)] for s, i in node.inputs]
    ctx.outputs = [tnames[(id(node), i)] for i in range(node.num_outputs())]
    ctx.in_shapes = [g.shapes.get((id(s), i)) for s, i in node.inputs]
    ctx.in_dtypes = [g.types.get((id(s), i)) for s, i in node.inputs]
    ctx.in_dynamic = [g.dyn.get((id(s), i), ()) for s, i in node.inputs]
    ctx.out_shapes = [g.shapes.get((id(node), i)) for i in range(node.num_outputs())]
    ctx.out_dtypes = [g.types.get((id(node), i)) for i in range(node.num_outputs())]
    ctx.out_dynamic = [g.dyn.get((id(node), i), ()) for i in range(node.num_outputs())]
    ctx.producers = [s for s, _ in node.inputs]
    handler = get_converter(node, ctx.opset)
    start = len(ctx.nodes)
    try:
        handler(ctx)
    except GluonportError:
        raise
    except Exception as exc:  # a handler bug must still name the node
        raise ctx.fail(f"ONNX conversion failed: {type(exc).__name__}: {exc}") from exc
    finally:
        ctx.record_provenance(start)


def file_sha256(path: str) -> str:
    """Hex sha256 of a file (recorded in exported models' metadata)."""
    return file_digest(path, "sha256")


def export_model(sym: Any, params: Any, in_shapes: Any = None, in_types: Any = np.float32,
                 onnx_file_path: str = "model.onnx", opset_version: int | None = None,
                 dynamic: bool = False, dynamic_input_shapes: Any = None,
                 run_shape_inference: bool = True, verbose: bool = False, *,
                 dynamic_axes: Mapping[str, Any] | None = None,
                 external_data: bool | None = None, input_type: Any = None,
                 input_shape: Any = None, metadata: Mapping[str, str] | None = None) -> str:
    """Export an MXNet model to ONNX, as ``mxnet.onnx.export_model`` (1.9.1) does, but with
    every op checked first, BatchNorm's ``fix_gamma`` honoured, dynamic axes kept dynamic
    through Reshape, and the result checked by ``onnx.checker`` (``full_check``).

    Parameters
    ----------
    sym : Symbol or str
        The graph, or a ``-symbol.json`` path.
    params : dict, [arg_params, aux_params], or str
        Parameters (``arg:``/``aux:`` prefixes allowed), or a ``.params`` path.
    in_shapes : list of tuple or dict, optional
        Shapes of the data inputs in graph order (default: their ``__shape__`` attributes).
    in_types : dtype or list of dtypes
    onnx_file_path : str
    opset_version : int, optional
        13 .. the newest supported by the installed onnx and onnxruntime; default 17.
    dynamic : bool
        Make input dims dynamic: those ``None`` in ``dynamic_input_shapes``, or the batch axis.
    dynamic_axes : dict, optional
        ``{"data": {0: "batch"}}`` or ``{"data": [0, 2]}``, as ``torch.onnx.export``.
    external_data : bool, optional
        Store weights beside the model; automatic above protobuf's 2 GB limit.
    metadata : dict, optional
        Extra ``metadata_props`` (file paths given for ``sym``/``params`` add their sha256).

    Returns
    -------
    str
        ``onnx_file_path``.
    """
    import onnx

    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    meta: dict[str, str] = dict(metadata or {})
    hashes = _HashFiles({"gluonport.source_symbol_sha256": sym,
                         "gluonport.source_params_sha256": params})
    if isinstance(sym, (str, os.PathLike)):
        sym = sym_load(os.fspath(sym))
    skeleton, weights = _build(sym, params, in_shapes, in_types, opset_version, dynamic,
                               dynamic_input_shapes, dynamic_axes, meta)
    _check(skeleton)
    if run_shape_inference:
        inferred = onnx.shape_inference.infer_shapes(skeleton)
        skeleton.graph.value_info.extend(
            v for v in inferred.graph.value_info if v.name not in {w for w, _ in weights})
    for key, value in hashes.result().items():
        skeleton.metadata_props.add(key=key, value=value)
    _drop_inputs(skeleton, {name for name, _ in weights})
    size = skeleton.ByteSize() + sum(w.nbytes for _, w in weights)
    big = size > _BIG if external_data is None else bool(external_data)
    write_model(onnx_file_path, skeleton, weights, external=big)
    if verbose:
        print(f"exported {onnx_file_path} (opset {skeleton.opset_import[0].version}, "
              f"{len(skeleton.graph.node)} nodes, {len(weights)} large initializers)")
    return onnx_file_path


class _HashFiles:
    """sha256 of the source files, computed in a thread while the conversion runs (hashlib
    releases the GIL on large buffers)."""

    def __init__(self, files: Mapping[str, Any]):
        import threading

        self._paths = {k: os.fspath(v) for k, v in files.items()
                       if isinstance(v, (str, os.PathLike))}
        self._out: dict[str, str] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for key, path in self._paths.items():
            self._out[key] = file_sha256(path)

    def result(self) -> dict[str, str]:
        self._thread.join()
        return dict(self._out)


def _check(model: Any) -> None:
    """``onnx.checker`` with ``full_check`` (strict shape inference) on the weight-free
    skeleton; a failure is a ConversionError."""
    import onnx

    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as exc:
        raise ConversionError(f"the exported model fails onnx.checker: {exc}") from None
    except Exception as exc:  # shape inference errors inside full_check
        raise ConversionError(f"the exported model fails onnx.checker (full_check): "
                              f"{type(exc).__name__}: {exc}") from None


def save_model(model: Any, path: str, external_data: bool = False) -> None:
    """Write ``model`` atomically; with ``external_data`` initializers of 1 KB or more go to a
    data file beside it, written as :func:`gluonport.onnx._stream.write_model` does (a new
    ``<file>.<digest>.data`` per write, the ``.onnx`` renamed into place last, the previous data
    file removed after), so a killed write never leaves a model beside another's weights."""
    import onnx
    from onnx import numpy_helper

    from ..formats._atomic import atomic_open

    if not external_data:
        with atomic_open(path, "wb") as f:
            f.write(model.SerializeToString())
        remove_data_files(*os.path.split(os.path.abspath(path)), keep=None)
        return
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    keep, weights = [], []
    for t in skeleton.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            raise ConversionError(f"save_model: initializer {t.name!r} still points at external "
                                  "data; load the model with its data before saving it")
        arr = numpy_helper.to_array(t)
        if arr.nbytes >= 1024 and t.data_type != onnx.TensorProto.STRING:
            weights.append((t.name, arr))
        else:
            keep.append(t)
    del skeleton.graph.initializer[:]
    skeleton.graph.initializer.extend(keep)
    write_model(path, skeleton, weights, external=True)
