"""``gluonport.load``: load a model once, call it many times (serving code's entry point)."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._modelpath import ModelFiles, resolve_model
from ..context import Context, cpu
from ..errors import DeviceError, FormatError, GluonportError, UnsupportedOpError
from ..ndarray import NDArray
from ._providers import providers_for
from .ort import OrtRunner, RuntimeOptions

__all__ = ["load", "Predictor"]


def _plain(x: Any) -> np.ndarray:
    if isinstance(x, NDArray):
        return x._data
    return np.asarray(x)


class Predictor:
    """A loaded model: ``predictor(x)`` or ``predictor(data=x)`` returns the outputs.

    Outputs are numpy arrays (``as_ndarray=True`` gives NDArrays), one array for a
    single-output model, else a list. Calls are thread-safe.

    ``fallback`` (onnxruntime chosen automatically, on the CPU): makes the numpy executor's
    run, taken with a warning when onnxruntime cannot load the model (a kernel an older
    onnxruntime lacks); ``backend`` then says ``"numpy"``.
    """

    def __init__(self, run: Any, input_names: list[str], input_shapes: dict[str, Any],
                 output_names: list[str], backend: str, ctx: Context, as_ndarray: bool,
                 providers: Any, fallback: Callable[[], Any] | None = None):
        self._run = run
        self.input_names = input_names
        self.input_shapes = input_shapes
        self.output_names = output_names
        self.backend = backend
        self.ctx = ctx
        self.as_ndarray = as_ndarray
        self._providers = providers
        self._fallback = fallback
        self._lock = threading.Lock()

    @property
    def providers(self) -> list[str]:
        """onnxruntime providers in use (``[]`` on the numpy backend)."""
        return self._providers() if callable(self._providers) else list(self._providers)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if args and kwargs:
            raise GluonportError("pass inputs positionally or by name, not both")
        if args:
            if len(args) != len(self.input_names):
                raise GluonportError(f"{len(args)} inputs given; the model takes "
                                     f"{len(self.input_names)}: {self.input_names}")
            feed = dict(zip(self.input_names, args))
        else:
            missing = [n for n in self.input_names if n not in kwargs]
            extra = [n for n in kwargs if n not in self.input_names]
            if missing or extra:
                raise GluonportError(f"inputs {self.input_names} expected; missing {missing}, "
                                     f"unknown {extra}")
            feed = kwargs
        arrays = [_plain(feed[n]) for n in self.input_names]
        try:
            outs = self._run(arrays)
        except UnsupportedOpError as exc:
            if self._fallback is None:
                raise
            self._use_numpy(exc)
            outs = self._run(arrays)
        if self.as_ndarray:
            outs = [NDArray(np.asarray(o), self.ctx) for o in outs]
        return outs[0] if len(outs) == 1 else list(outs)

    def _use_numpy(self, why: Exception) -> None:
        with self._lock:
            if self._fallback is None:  # another thread switched already
                return
            make, self._fallback = self._fallback, None
            try:
                run = make()
            except GluonportError:  # the numpy executor cannot take it either (an ONNX op
                raise why from None  # gluonport does not import): onnxruntime's error stands
            warnings.warn(f"{why}; the model runs on the numpy executor instead (slower): "
                          "upgrade onnxruntime, or load(..., backend='numpy') to choose it",
                          stacklevel=3)
            self._run, self.backend, self._providers = run, "numpy", []

    def __repr__(self) -> str:
        return (f"<Predictor {self.backend} on {self.ctx}: inputs {self.input_names} -> "
                f"outputs {self.output_names}>")


def _from_onnx(files: ModelFiles, ctx: Context, backend: str | None, options: RuntimeOptions,
               as_ndarray: bool) -> Predictor:
    if backend == "numpy":
        from ..onnx.importer import import_model

        sym, arg, aux = import_model(files.onnx_file)
        params = {**arg, **aux}
        return _from_symbol(sym, params, None, ctx, "numpy", options, as_ndarray)
    runner = OrtRunner(files.onnx_file, ctx, options)

    def numpy_run() -> Any:
        return _from_onnx(files, ctx, "numpy", options, as_ndarray)._run

    return Predictor(lambda arrays: runner.run(arrays), runner.input_names, runner.input_shapes,
                     runner.output_names, "onnxruntime", ctx, as_ndarray,
                     lambda: runner.providers,
                     numpy_run if backend is None and ctx.device_type != "gpu" else None)


def _from_symbol(sym: Any, params: Mapping[str, Any], input_names: Sequence[str] | None,
                 ctx: Context, backend: str | None, options: RuntimeOptions,
                 as_ndarray: bool) -> Predictor:
    from ..symbol._graph import label_inputs, topo_order
    from ..symbol._infer import check_budget, var_shape_attr
    from ..symbol.executor import GraphPlan
    from .graph import OnnxGraph, graph_exports

    pvals = {k: _plain(v) for k, v in params.items()}
    order = topo_order(n for n, _ in sym._outputs)
    check_budget(order, {k: v.shape for k, v in pvals.items()})
    labels = label_inputs(order)
    data = list(input_names) if input_names else [
        n.name for n in order if n.op is None and n.name not in pvals and n.name not in labels]
    unknown = [n for n in data if n not in sym.list_inputs()]
    if unknown:
        raise GluonportError(f"input(s) {unknown} are not in the graph; its inputs are "
                             f"{sym.list_inputs()}")
    shapes = {n.name: var_shape_attr(n) for n in order if n.op is None and n.name in data}

    def numpy_run() -> Any:
        plan = GraphPlan(sym)
        label_zeros = {n: np.zeros((1,), np.float32) for n in labels if n not in pvals}

        def run(arrays):
            feed = dict(pvals)
            feed.update(label_zeros)
            feed.update(zip(data, arrays))
            return plan.run(feed)

        return run

    automatic = backend is None and ctx.device_type != "gpu"
    if backend is None:
        backend = "onnxruntime" if graph_exports(sym) else "numpy"
    if backend == "onnxruntime":
        # the graph is exported on the first call; a context onnxruntime cannot serve (gpu(0)
        # without the CUDA provider) is refused now, as an ONNX file's OrtRunner does
        providers_for(ctx, tensorrt=options.tensorrt, provider_options=options.provider_options)
        graph = OnnxGraph(sym, data, lambda: (0, lambda: pvals), ctx, options)
        run = graph
        providers: Any = lambda: graph.providers  # noqa: E731
    elif backend == "numpy":
        if ctx.device_type == "gpu":
            raise DeviceError(f"{ctx}: the numpy backend runs on the CPU only; use ctx=cpu() "
                              "or backend='onnxruntime'")
        run, providers, automatic = numpy_run(), [], False
    else:
        raise GluonportError(f"unknown backend {backend!r}; use 'onnxruntime' or 'numpy'")
    return Predictor(run, data, shapes, sym.list_outputs(), backend, ctx, as_ndarray, providers,
                     numpy_run if automatic else None)


def load(path_or_prefix: str | os.PathLike, epoch: int | None = None, ctx: Context | None = None,
         input_names: Sequence[str] | None = None, backend: str | None = None, *,
         params: str | None = None, options: RuntimeOptions | None = None,
         as_ndarray: bool = False, allow_missing: bool = False,
         ignore_extra: bool = False) -> Predictor:
    """Load a model for inference.

    Parameters
    ----------
    path_or_prefix:
        A ``.onnx`` file, a ``*-symbol.json`` file (params: ``PREFIX-NNNN.params``, the newest
        unless ``epoch`` or ``params`` says), or a ``PREFIX``.
    ctx:
        ``cpu()`` (default) or ``gpu(i)`` (onnxruntime's CUDA provider; an error if unusable).
    backend:
        ``"onnxruntime"``, ``"numpy"``, or ``None``: onnxruntime when every op exports (on the
        CPU, the numpy executor with a warning if onnxruntime then cannot load the model: a
        kernel an older onnxruntime lacks).
    as_ndarray:
        Return NDArrays instead of numpy arrays.
    allow_missing:
        MXNet files only. By default every parameter of the graph must be in the params file
        with the shape the graph implies, and a graph with parameters needs a params file: a
        symbol file beside the params of another model (an interrupted export) is refused with a
        :class:`~gluonport.errors.ParameterError` naming the parameter and the file. With
        ``allow_missing=True`` missing parameters become inputs that the caller feeds.
    ignore_extra:
        MXNet files only: accept a params file holding names the graph does not have.

    >>> import gluonport
    >>> model = gluonport.load("sample_models/mlp")             # doctest: +SKIP
    >>> y = model(np.zeros((4, 10), np.float32))                # doctest: +SKIP
    """
    ctx = ctx or cpu()
    options = options or RuntimeOptions()
    files = resolve_model(os.fspath(path_or_prefix), params, epoch)
    if files.kind == "onnx":
        return _from_onnx(files, ctx, backend, options, as_ndarray)
    from .._paramcheck import check_params
    from ..model import no_params_if_empty, split_params
    from ..ndarray import load as nd_load
    from ..symbol import load as sym_load

    sym = sym_load(files.symbol_file)
    # an empty file is "no parameters" (a block without parameters exports one)
    loaded = no_params_if_empty(nd_load(files.params_file)) if files.params_file else {}
    if isinstance(loaded, dict) and any(k.startswith(("arg:", "aux:")) for k in loaded):
        arg, aux = split_params(loaded, files.params_file)
        loaded = {**arg, **aux}
    if not isinstance(loaded, dict):
        raise FormatError("holds an unnamed list of arrays, not named parameters",
                          files.params_file)
    data = check_params(sym, {k: v.shape for k, v in loaded.items()},
                        symbol_file=files.symbol_file, params_file=files.params_file,
                        input_names=input_names, allow_missing=allow_missing,
                        ignore_extra=ignore_extra)
    return _from_symbol(sym, loaded, data, ctx, backend, options, as_ndarray)
