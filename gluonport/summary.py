"""What is in a model: the data behind ``gluonport inspect`` and the quickstart report."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ._modelpath import ModelFiles, resolve_model

__all__ = ["summarize"]


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
        if isinstance(loaded, dict):
            arg_params, aux_params = split_params(loaded, files.params_file)
    known = set(arg_params) | set(aux_params)
    no_onnx = _ops_without_onnx(sym)
    inputs = [n for n in sym.list_arguments() if n not in known]
    ops = Counter(n.op for n in graph.nodes if n.op != "null")
    arrays = list(arg_params.values()) + list(aux_params.values())
    return {
        "format": "mxnet",
        "symbol_file": files.symbol_file,
        "params_file": files.params_file,
        "mxnet_version": _version_text(graph.mxnet_version),
        "inputs": inputs,
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
    import onnx

    from .dtypes import from_onnx
    from .errors import FormatError

    try:
        model = onnx.load(files.onnx_file, load_external_data=False)
    except Exception as exc:  # protobuf decode errors have no common base class
        raise FormatError(f"not a valid ONNX model ({type(exc).__name__}: {exc})",
                          files.onnx_file) from None
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
