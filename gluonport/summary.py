"""What is in a model: the data behind ``gluonport inspect`` and the quickstart report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._modelpath import ModelFiles, resolve_model

__all__ = ["summarize", "input_shape_hints"]


def _mxnet_summary(files: ModelFiles) -> dict[str, Any]:
    from .formats import symbol_json
    from .model import split_params
    from .ndarray import load as nd_load
    from .symbol import load as sym_load

    graph = symbol_json.load(files.symbol_file)
    sym = sym_load(files.symbol_file)
    arg_params: dict[str, Any] = {}
    aux_params: dict[str, Any] = {}
    if files.params_file:
        loaded = nd_load(files.params_file)
        if isinstance(loaded, list) and loaded:  # an empty file of either kind loads as []
            from .errors import FormatError

            raise FormatError("holds an unnamed list of arrays (nd.save of a list, or a .npy), "
                              "not named parameters; give the PREFIX-NNNN.params that the "
                              "model's export wrote", files.params_file)
        if isinstance(loaded, dict):
            arg_params, aux_params = split_params(loaded, files.params_file)
    known = set(arg_params) | set(aux_params)
    no_onnx = _ops_without_onnx(sym)
    inputs = [n for n in sym.list_arguments() if n not in known]
    shapes = {k: tuple(v.shape) for k, v in {**arg_params, **aux_params}.items()}
    ops = Counter(n.op for n in graph.nodes if n.op != "null")
    arrays = list(arg_params.values()) + list(aux_params.values())
    return {
        "format": "mxnet",
        "symbol_file": files.symbol_file,
        "params_file": files.params_file,
        "mxnet_version": _version_text(graph.mxnet_version),
        "inputs": inputs,
        "input_shape_hints": input_shape_hints(sym, shapes),
        "outputs": sym.list_outputs(),
        "nodes": len(graph.nodes),
        "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "parameters": sum(int(np.prod(a.shape)) for a in arrays),
        "parameter_bytes": sum(int(a.asnumpy().nbytes) for a in arrays),
        "arg_params": len(arg_params),
        "aux_params": len(aux_params),
        "ops_without_onnx": no_onnx,
        "params_record_versions": _record_versions(files.params_file),
    }


def input_shape_hints(sym: Any, param_shapes: Mapping[str, tuple]) -> dict[str, str]:
    """What the first layer reading each data input implies about its shape, for inputs whose
    shape the graph does not record (Gluon's ``export`` records none).

    MXNet's shape inference never runs backwards from a weight to the data, so a graph alone
    cannot say ``data`` is ``(N, 3, 224, 224)``; but a Convolution's weight fixes the channel
    count and the spatial rank, a FullyConnected's weight the feature count and an Embedding
    the integer ids (each op's ``OpDef.input_hint``). The walk looks through ops that keep
    their data's shape (``OpDef.keeps_shape``, or no shape rule: input normalisation, casts,
    activations before the first layer). Returns e.g. ``{"data": "N,1,H,W (conv0 is a 2-D
    Convolution over 1 channel)"}``; inputs with a recorded shape or no recognisable first
    layer are left out.
    """
    from .symbol._graph import topo_order
    from .symbol._infer import var_shape_attr

    order = topo_order(m for m, _ in sym._outputs)
    readers: dict[int, list[Any]] = {}
    for node in order:
        for pos, (src, _) in enumerate(node.inputs):
            readers.setdefault(id(src), []).append((node, pos))
    hints: dict[str, str] = {}
    for var in order:
        if var.op is not None or var.name in param_shapes:
            continue
        recorded = var_shape_attr(var)
        if recorded and 0 not in recorded:
            continue
        frontier, seen = [var], set()
        while frontier:
            node = frontier.pop(0)
            for reader, pos in readers.get(id(node), []):
                if id(reader) in seen:
                    continue
                seen.add(id(reader))
                hint = _layer_hint(reader, pos, param_shapes)
                if hint:
                    hints.setdefault(var.name, hint)
                elif pos == 0 and (reader.op.infer_shape is None or reader.op.keeps_shape):
                    frontier.append(reader)
            if var.name in hints:
                break
    return hints


def _layer_hint(node: Any, pos: int, param_shapes: Mapping[str, tuple]) -> str | None:
    """What ``node``'s weight says about its data input (``OpDef.input_hint``), or None."""
    hint = getattr(node.op, "input_hint", None)
    if hint is None or pos != 0 or len(node.inputs) < 2:
        return None
    weight = param_shapes.get(node.inputs[1][0].name)
    if not weight:
        return None
    return hint(node.params, tuple(weight), node.name)


def _ops_without_onnx(sym: Any) -> list[str]:
    from .onnx.export import get_converter
    from .onnx.opset import DEFAULT_OPSET
    from .symbol._graph import topo_order

    return sorted({n.op.name for n in topo_order(m for m, _ in sym._outputs)
                   if n.op is not None and get_converter(n, DEFAULT_OPSET) is None})


def _record_versions(path: str | None) -> list[str]:
    if not path:
        return []
    from .formats.params import load_with_info

    info = load_with_info(path)
    return sorted({f"V{i.version}" for i in info.infos if i is not None})


def _onnx_summary(files: ModelFiles) -> dict[str, Any]:
    from ._core.dtypes import from_onnx
    from ._core.onnxfile import read_model

    model = read_model(files.onnx_file)[0]  # external data is checked, not read
    inits = {t.name: t for t in model.graph.initializer}

    def describe(vi: Any) -> dict[str, Any]:
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in t.shape.dim]
        try:
            dtype = from_onnx(t.elem_type).name
        except Exception:  # noqa: BLE001 - an exotic element type is still worth showing
            dtype = str(t.elem_type)
        return {"name": vi.name, "shape": dims, "dtype": dtype}

    ops = Counter(n.op_type for n in model.graph.node)
    n_params = sum(int(np.prod(t.dims)) for t in inits.values())
    return {
        "format": "onnx",
        "onnx_file": files.onnx_file,
        "ir_version": model.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "inputs": [describe(i) for i in model.graph.input if i.name not in inits],
        "outputs": [describe(o) for o in model.graph.output],
        "nodes": len(model.graph.node),
        "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "parameters": n_params,
        "metadata": {p.key: p.value for p in model.metadata_props},
    }


def _version_text(v: int) -> str:
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def summarize(model: str, params: str | None = None, epoch: int | None = None
              ) -> dict[str, Any]:
    """A JSON-able description of a model given as ``.onnx``, ``*-symbol.json`` or prefix."""
    files = resolve_model(model, params, epoch)
    if files.kind == "onnx":
        return _onnx_summary(files)
    return _mxnet_summary(files)
