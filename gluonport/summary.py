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
    }


def _version_text(v: int) -> str:
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def summarize(model: str, params: str | None = None, epoch: int | None = None
              ) -> dict[str, Any]:
    """A JSON-able description of a model given as ``.onnx``, ``*-symbol.json`` or prefix."""
    files = resolve_model(model, params, epoch)
    if files.kind == "onnx":
        raise NotImplementedError("ONNX summaries arrive with the ONNX importer")
    return _mxnet_summary(files)
