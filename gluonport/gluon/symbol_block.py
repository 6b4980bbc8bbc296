"""``SymbolBlock``: a Block around an existing Symbol graph, and ``SymbolBlock.imports`` for
``*-symbol.json`` + ``.params`` files (MXNet 1.x semantics).

Beyond MXNet: Module-API checkpoints whose graphs end in ``SoftmaxOutput``-style ops carry label
variables that no params file holds. MXNet 1.9.1's ``imports`` refuses them; here such label
inputs are recognised (variables feeding only inputs named ``label``), treated as unused at
inference, and a log line says so.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from .. import symbol as _sym
from ..context import Context
from ..errors import GluonportError
from ..ndarray import NDArray
from ..symbol import Symbol
from ..symbol._graph import label_inputs
from ..symbol._infer import check_budget
from ._nested import flatten, regroup
from .hybrid import CachedGraph, HybridBlock
from .parameter import ParameterDict

__all__ = ["SymbolBlock", "import_to_gluon"]

log = logging.getLogger("gluonport")


def _common_prefix(names: list[str]) -> str:
    if not names:
        return ""
    prefix = names[0]
    for n in names[1:]:
        while not n.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


class _LabelFeed:
    """Zeros for label inputs, shaped by shape inference for the current data shapes."""

    def __init__(self, symbol: Symbol, labels: list[str], data_names: list[str]):
        self.symbol = symbol
        self.labels = labels
        self.data_names = data_names
        self._cache: dict[tuple, dict[str, np.ndarray]] = {}

    def __call__(self, data: list[NDArray]) -> dict[str, np.ndarray]:
        key = tuple(d.shape for d in data)
        if key not in self._cache:
            arg_s, _, _ = self.symbol.infer_shape_partial(
                **{n: d.shape for n, d in zip(self.data_names, data)})
            shapes = dict(zip(self.symbol.list_arguments(), arg_s))
            self._cache[key] = {n: np.zeros(tuple(d or 1 for d in shapes.get(n) or (1,)),
                                            np.float32) for n in self.labels}
        return self._cache[key]


def _load_checked(block: SymbolBlock, sym: Symbol, symbol_file: str, input_names: list[str],
                  param_file: str, ctx: Any, allow_missing: bool, ignore_extra: bool) -> None:
    """Load ``param_file`` into ``block`` and check that it fits the graph: names (as MXNet's
    ``imports``) and also shapes, so that a symbol file beside the params of another model (an
    interrupted export) fails here, naming the parameter and the file."""
    from .._paramcheck import check_params
    from ..errors import ParameterError
    from ..model import no_params_if_empty
    from ..ndarray import load

    loaded = no_params_if_empty(load(param_file))
    if not isinstance(loaded, dict):
        raise ParameterError(f"{param_file}: holds an unnamed list of arrays; parameters need "
                             "a file saved with names")
    # names first, with MXNet's messages; then the shapes, which MXNet checks only at bind
    block.collect_params().load_dict(loaded, ctx, allow_missing, ignore_extra,
                                     filename=param_file, cast_dtype=True, dtype_source="saved")
    shapes = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v.shape
              for k, v in loaded.items()}
    check_params(sym, shapes, symbol_file=symbol_file, params_file=param_file,
                 input_names=input_names, allow_missing=True, ignore_extra=True)


class SymbolBlock(HybridBlock):
    """Wrap a Symbol as a Block: ``SymbolBlock(outputs, inputs, params=None)``.

    Every argument of ``outputs`` that is not an input becomes a Parameter (allowing deferred
    initialization); auxiliary states get ``grad_req='null'``.
    """

    def __init__(self, outputs: Any, inputs: Any, params: ParameterDict | None = None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = flatten(inputs, "input")
        outs, self._out_format = flatten(outputs, "output")
        out = _sym.Group(outs)
        input_names = set()
        for s in syms:
            if len(s.get_internals().list_outputs()) != 1:
                raise GluonportError(f"Input symbols must be variable, but {s} is an output of "
                                     "operators")
            input_names.add(s.name)
        self._labels = sorted(n for n in label_inputs(out._topo()) if n not in input_names)
        for name in out.list_arguments():
            if name not in input_names and name not in self._labels:
                self.params.get(name, allow_deferred_init=True)
        for name in out.list_auxiliary_states():
            if name not in input_names:
                self.params.get(name, grad_req="null", allow_deferred_init=True)
        self._cached_graph = syms, out
        plen = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {k[plen:]: v for k, v in self._params.items()}
        if self._labels:
            log.info("SymbolBlock: label input(s) %s of the legacy output op(s) are not needed "
                     "for inference and are fed zeros", ", ".join(self._labels))

    def __repr__(self) -> str:
        out = self._cached_graph[1]
        return (f"{self.__class__.__name__}(\n{out} : {len(self._cached_graph[0])} -> "
                f"{len(out.list_outputs())}\n)")

    @staticmethod
    def imports(symbol_file: str, input_names: str | list[str], param_file: str | None = None,
                ctx: Context | list | None = None, allow_missing: bool = False,
                ignore_extra: bool = False) -> SymbolBlock:
        """Load ``symbol_file`` (+ ``param_file``) as a SymbolBlock, as MXNet's ``imports``.

        Parameter dtypes come from the file (``cast_dtype=True, dtype_source='saved'``).
        An ``.onnx`` file is imported (:func:`import_to_gluon`): its weights
        come from the model, so ``param_file`` must be None.
        """
        if str(symbol_file).lower().endswith(".onnx"):
            return SymbolBlock._imports_onnx(symbol_file, input_names, param_file, ctx)
        if not os.path.isfile(symbol_file):
            raise GluonportError(f"{symbol_file}: no such symbol file")
        sym = _sym.load(symbol_file)
        check_budget(sym._topo())  # declared input shapes, creation ops: before any array
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [_sym.var(i, dtype=np.float32) for i in input_names]
        else:
            inputs = [_sym.var(i) for i in input_names]
        missing = [n for n in input_names if n not in sym.list_inputs()]
        if missing:
            raise GluonportError(f"{symbol_file}: input(s) {missing} are not variables of the "
                                 f"graph; its inputs are {sym.list_inputs()}")
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            _load_checked(ret, sym, symbol_file, input_names, param_file, ctx, allow_missing,
                          ignore_extra)
        return ret

    @staticmethod
    def _imports_onnx(path: str, input_names: Any, param_file: Any, ctx: Any) -> SymbolBlock:
        if param_file is not None:
            raise GluonportError(f"{path}: an ONNX model holds its own weights; call "
                                 "SymbolBlock.imports(path, input_names) without param_file")
        net = import_to_gluon(path, ctx)
        names = [input_names] if isinstance(input_names, str) else list(input_names)
        have = [s.name for s in net._cached_graph[0]]
        if names != have:
            raise GluonportError(f"{path}: the model's inputs are {have}, not {names}")
        return net

    def _build_cache(self, *args: Any) -> None:
        data, out = self._cached_graph
        data_names = {d.name: i for i, d in enumerate(data)}
        params = self.collect_params()
        self._infer_if_deferred(params, out, *args)
        cargs: list[tuple[Any, Any]] = []
        for name in out.list_inputs():
            if name in data_names:
                cargs.append((True, data_names[name]))
            elif name in params:
                cargs.append((False, params[name]))
            elif name in self._labels:
                cargs.append((None, name))
            else:
                raise GluonportError(f"Unknown input to SymbolBlock: {name}")
        self._cached_op_args = cargs
        labels = _LabelFeed(out, self._labels, [d.name for d in data]) if self._labels else None
        self._cached_op = CachedGraph(out, cargs, self._backend, labels=labels,
                                      static_shape=dict(self._flags).get("static_shape", False))
        self._cached_op.monitor = self._callback

    def _infer_if_deferred(self, params: Any, out: Symbol, *args: Any) -> None:
        if not any(p._deferred_init for p in params.values()):
            return
        flat = [a for a in flatten(list(args), "input")[0] if a is not None]
        shapes = {d.name: a.shape for d, a in zip(self._cached_graph[0], flat)}
        arg_s, _, aux_s = out.infer_shape_partial(**shapes)
        sdict = dict(zip(out.list_arguments(), arg_s))
        sdict.update(zip(out.list_auxiliary_states(), aux_s))
        for p in params.values():
            if p._deferred_init and p.name in sdict:
                p.shape = sdict[p.name]
                p._finish_deferred_init()

    def forward(self, x: Any, *args: Any) -> Any:
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise GluonportError("HybridBlock requires the first argument to forward be either "
                                 f"Symbol or NDArray, but got {type(x)}")
        flat, in_fmt = flatten([x, *args], "input")
        ret = _sym.Group(list(self._cached_graph[1]))
        ret = ret.copy()
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return regroup(list(ret), self._out_format)

    def _clear_cached_op(self) -> None:
        graph = getattr(self, "_cached_graph", ())
        super()._clear_cached_op()
        self._cached_graph = graph

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def import_to_gluon(model_file: Any, ctx: Any = None, strict: bool = False,
                    restore_mxnet_ops: str = "auto") -> SymbolBlock:
    """Import an ONNX model as a Gluon :class:`SymbolBlock` (MXNet's
    ``mxnet.contrib.onnx.import_to_gluon``): inputs are the ONNX graph inputs, parameters loaded
    on ``ctx``; ``strict`` and ``restore_mxnet_ops`` as in
    :func:`gluonport.onnx.import_model`. Also reachable as ``gluonport.onnx.import_to_gluon``.
    """
    from ..onnx.importer import import_graph

    g = import_graph(model_file, strict=strict, restore_mxnet_ops=restore_mxnet_ops)
    net = SymbolBlock(g.sym, [_sym.var(n) for n in g.input_names])
    values = {**g.arg_params, **g.aux_params}
    net.collect_params().load_dict({k: NDArray(v) for k, v in values.items()}, ctx,
                                   allow_missing=False, ignore_extra=True, cast_dtype=True,
                                   dtype_source="saved")
    return net
