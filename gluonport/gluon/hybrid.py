"""``HybridBlock``: ``hybrid_forward(F, x, ...)`` run eagerly (``F = nd``) or traced once into a
cached graph (``F = sym``) after ``hybridize()``, as in MXNet 1.x.

The cached graph runs on the numpy executor here; the onnxruntime path (every op exports) plugs
in through :class:`CachedGraph`'s backend choice.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import autograd
from .. import ndarray as _nd
from .. import symbol as _sym
from ..context import Context
from ..errors import DeferredInitializationError, GluonportError, ShapeError, UnsupportedOpError
from ..ndarray import NDArray, _tape
from ..symbol import Symbol
from ..symbol.executor import GraphPlan
from ._nested import flatten, regroup
from ._train_graph import TrainGraphs
from .block import Block

__all__ = ["HybridBlock", "CachedGraph"]


def _gather(args: list) -> tuple[bool, bool, list[Context]]:
    has_sym = has_nd = False
    ctxs: list[Context] = []
    for a in args:
        if isinstance(a, (list, tuple)):
            s, n, c = _gather(list(a))
            has_sym, has_nd = has_sym or s, has_nd or n
            ctxs += [x for x in c if x not in ctxs]
        elif isinstance(a, Symbol):
            has_sym = True
        elif isinstance(a, NDArray):
            has_nd = True
            if a.context not in ctxs:
                ctxs.append(a.context)
    return has_sym, has_nd, ctxs


class CachedGraph:
    """A traced graph compiled once and run many times (MXNet's ``CachedOp``).

    ``args`` are ``(is_data, index_or_parameter)`` pairs in the graph's ``list_inputs`` order,
    as MXNet's ``_cached_op_args`` (``is_data`` None marks an unused label input).

    ``backend``: ``"numpy"`` runs the reference executor; ``"onnxruntime"`` exports the graph
    to ONNX on first use and runs it there (CPU, or CUDA for ``gpu(i)`` inputs); ``None``
    picks onnxruntime when every op exports and no op hook is installed, else numpy, and on
    the CPU moves to numpy with a warning where onnxruntime cannot load the graph (a kernel an
    older onnxruntime lacks).
    """

    def __init__(self, symbol: Symbol, args: list[tuple[Any, Any]], backend: str | None = None,
                 labels: Any = None, static_shape: bool = False):
        self.symbol = symbol
        self.args = args
        self.names = symbol.list_inputs()
        self.requested = backend
        self._plan: GraphPlan | None = None
        self._onnx: dict[Context, Any] = {}
        self._exports: bool | None = None
        self.monitor: Any = None
        self.monitor_all = False
        self.labels = labels
        self.static_shape = static_shape
        self._train_graphs: dict[tuple, Any] = {}

    @property
    def backend(self) -> str:
        """The backend calls run on now (``"numpy"`` or ``"onnxruntime"``)."""
        if self.requested is not None:
            return self.requested
        if self.monitor is not None:
            return "numpy"
        if self._exports is None:
            from ..runtime.graph import graph_exports

            self._exports = graph_exports(self.symbol)
        return "onnxruntime" if self._exports else "numpy"

    def _inputs(self, data: list[NDArray], ctx: Context) -> list[NDArray | None]:
        """The arrays behind the graph's inputs, in ``list_inputs`` order (``None``: a label
        input SymbolBlock feeds itself)."""
        return [None if is_data is None else data[ref] if is_data else ref.data(ctx)
                for is_data, ref in self.args]

    def __call__(self, data: list[NDArray], ctx: Context) -> list[NDArray]:
        # training mode (autograd.record / train_mode): Dropout, batch-statistics BatchNorm;
        # onnxruntime runs inference graphs only, so such a call takes the numpy executor
        training = autograd.is_training()
        if autograd.is_recording():
            arrays = self._inputs(data, ctx)
            if any(a is not None and a._ag is not None for a in arrays):
                return self._record(data, arrays, ctx, training)
        if self.backend == "onnxruntime" and not training:
            try:
                outs = self._onnx_graph(ctx)([d._data for d in data])
            except UnsupportedOpError as exc:
                # onnxruntime was chosen automatically and cannot load the graph (a kernel an
                # older onnxruntime lacks): run on the numpy executor from now on, as the
                # training graphs do (_train_graph.TrainGraphs.forward)
                if self.requested is not None or ctx.device_type == "gpu":
                    raise
                warnings.warn(f"{exc}; this block runs on the numpy executor instead "
                              "(slower): upgrade onnxruntime, or hybridize(backend='numpy') "
                              "to choose it", stacklevel=3)
                self._exports = False
                outs = self._run_numpy(data, ctx, training)
        elif ctx.device_type == "gpu":
            why = ("a training-mode forward (autograd.record / train_mode) runs on the numpy "
                   "executor" if training else "it has ops without an ONNX converter, so it "
                   "runs on the numpy executor")
            raise GluonportError(
                f"this graph cannot run on {ctx}: {why}, which is CPU-only. Use cpu() or "
                "register converters (gluonport.onnx.register_converter)")
        else:
            outs = self._run_numpy(data, ctx, training)
        return [NDArray(np.asarray(o), ctx) for o in outs]

    def _record(self, data: list[NDArray], arrays: list[NDArray | None], ctx: Context,
                training: bool) -> list[NDArray]:
        """A recorded call: the forward graph keeps what the backward graph needs, and one
        node on the autograd tape runs the backward graph (``symbol/_backward.py``) when
        ``backward`` reaches it -- MXNet's CachedOp under ``autograd.record()``."""
        wrt = tuple(n for n, a in zip(self.names, arrays) if a is not None and a._ag is not None)
        key = (wrt, ctx, training, self.monitor is not None)
        graphs = self._train_graphs.get(key)
        if graphs is None:
            try:
                backend = "numpy" if self.monitor is not None else self.requested
                graphs = TrainGraphs(self.symbol, wrt, backend, ctx, training)
            except GluonportError as exc:  # as MXNet: recording works, backward refuses
                if ctx.device_type == "gpu":
                    raise
                graphs = exc
            self._train_graphs[key] = graphs
        tracked = [a for n, a in zip(self.names, arrays) if n in wrt]
        if isinstance(graphs, GluonportError):
            error = graphs
            outs = [NDArray(np.asarray(o), ctx) for o in self._run_numpy(data, ctx, training)]

            def refuse(ograds: list[NDArray]) -> list:
                raise error

            _tape.record_function(tracked, outs, refuse, "CachedOp")
            return outs
        feed = self._feed(data, ctx)
        monitor = None
        if self.monitor is not None:  # an op hook sees the forward graph's nodes, as MXNet's
            from ._op_hook import make_monitor

            monitor = make_monitor(self.monitor, self.monitor_all, training, feed,
                                   lambda a: NDArray(a, ctx))
        values, saved = graphs.forward(feed, training, monitor)
        outs = [NDArray(np.asarray(o), ctx) for o in values]

        def backward(ograds: list[NDArray], into: list | None = None) -> list[NDArray | None]:
            got = graphs.backward(feed, saved, [g._data for g in ograds], into)
            return [None if g is None else NDArray(np.asarray(g), ctx) for g in got]

        _tape.record_function(tracked, outs, backward, "CachedOp", takes_into=True)
        return outs

    def _feed(self, data: list[NDArray], ctx: Context) -> dict[str, np.ndarray]:
        feed = {}
        for name, (is_data, ref) in zip(self.names, self.args):
            if is_data is None:  # an unused label input (SymbolBlock)
                feed[name] = self.labels(data)[name]
            else:
                feed[name] = data[ref]._data if is_data else ref.data(ctx)._data
        return feed

    def _run_numpy(self, data: list[NDArray], ctx: Context,
                   training: bool = False) -> list[np.ndarray]:
        if self._plan is None:
            self._plan = GraphPlan(self.symbol)
        feed = self._feed(data, ctx)
        monitor = None
        if self.monitor is not None:
            from ._op_hook import make_monitor

            monitor = make_monitor(self.monitor, self.monitor_all, training, feed,
                                   lambda a: NDArray(a, ctx))
        return self._plan.run(feed, is_train=training, monitor=monitor)

    def _onnx_graph(self, ctx: Context) -> Any:
        graph = self._onnx.get(ctx)
        if graph is None:
            from ..runtime.graph import OnnxGraph
            from ..runtime.ort import RuntimeOptions

            data_names = [n for n, (is_data, ref) in sorted(
                ((n, a) for n, a in zip(self.names, self.args) if a[0]),
                key=lambda item: item[1][1])]
            params = [(n, ref) for n, (is_data, ref) in zip(self.names, self.args)
                      if is_data is False]

            def get_params():
                version = tuple(p._version for _, p in params)
                return version, lambda: {n: p.data(ctx)._data for n, p in params}

            graph = OnnxGraph(self.symbol, data_names, get_params, ctx,
                              RuntimeOptions(static_shape=self.static_shape))
            self._onnx[ctx] = graph
        return graph


class HybridBlock(Block):
    """A Block whose ``hybrid_forward(F, x, *args, **params)`` works for both ``F = nd`` and
    ``F = sym`` (``mxnet.gluon.HybridBlock``).

    Registered parameters arrive as keyword arguments: NDArrays on the input's context when
    running eagerly, Symbol variables while tracing. After ``hybridize()`` the first call traces
    ``hybrid_forward`` once; later calls run the cached graph without calling it.
    """

    def __init__(self, prefix: str | None = None, params: Any = None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph: tuple[list[Symbol], Symbol] | tuple = ()
        self._cached_op: CachedGraph | None = None
        self._cached_op_args: list[tuple[bool, Any]] = []
        self._out_format: Any = None
        self._in_format: Any = None
        self._active = False
        self._flags: list = []
        self._backend: str | None = None
        self._backend_opts: dict = {}
        self._callback: Any = None
        self._monitor_all = False

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def register_child(self, block: Block, name: str | None = None) -> None:
        if not isinstance(block, HybridBlock):
            raise ValueError(
                f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                f"{type(block)}. If you are using Sequential, please try HybridSequential "
                "instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active: bool = True, backend: str | None = None,
                  backend_opts: dict | None = None, clear: bool = True,
                  static_alloc: bool = False, static_shape: bool = False, **kwargs: Any) -> None:
        """Trace on the next call and run the cached graph afterwards.

        ``backend`` picks where the graph runs: ``"numpy"`` (the reference executor) or
        ``"onnxruntime"``; ``static_alloc``/``static_shape`` are accepted as in MXNet.
        """
        if backend not in (None, "numpy", "onnxruntime"):
            raise GluonportError(f"hybridize: unknown backend {backend!r}; use 'numpy' or "
                                 "'onnxruntime'")
        self._active = active
        self._backend = backend
        self._backend_opts = dict(backend_opts or {})
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape)]
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self.name}" is being hybridized while still having forward hook/'
                          "pre-hook. If \"{self.name}\" is a child of HybridBlock, the hooks "
                          "will not take effect.", stacklevel=2)
        super().hybridize(active, backend=backend, backend_opts=backend_opts, clear=clear,
                          static_alloc=static_alloc, static_shape=static_shape, **kwargs)

    def _clear_cached_op(self) -> None:
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []

    def cast(self, dtype: Any) -> None:
        self._clear_cached_op()
        super().cast(dtype)

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Call ``callback(name, op_name, NDArray)`` for the tensors of the cached graph
        (hybridized blocks only), node by node: each output, named ``<node>_<output>``
        (``dense0_fwd_output``, ``sigmoid0_0``), and with ``monitor_all`` first each input,
        ``<node>_<input>`` (``dense0_fwd_weight``, ``relu0_fwd_input0``), as MXNet 1.9.1 names
        and orders them (see :mod:`gluonport.gluon._op_hook`). MXNet passes the name as bytes
        and a raw NDArrayHandle; here they are a str and the NDArray (``mx.base.py_str``
        accepts both). The graph then runs on the numpy executor."""
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            if isinstance(child, HybridBlock):
                child.register_op_hook(callback, monitor_all)
        if self._cached_op is not None:
            self._cached_op.monitor = callback
            self._cached_op.monitor_all = monitor_all

    # --- tracing ------------------------------------------------------------------------------
    def _get_graph(self, *args: Any) -> tuple[list[Symbol], Symbol]:
        if not self._cached_graph:
            flat, self._in_format = flatten(list(args), "input")
            real = sum(a is not None for a in flat)
            if real == 0:
                raise ValueError(f"All args are None and we do not support such a case. "
                                 f"Received args={args}")
            inputs, sym_inputs, cnt = [], [], 0
            for a in flat:
                if a is None:
                    inputs.append(None)
                    continue
                v = _sym.var(f"data{cnt}" if real > 1 else "data")
                cnt += 1
                inputs.append(v)
                sym_inputs.append(v)
            grouped = regroup(inputs, self._in_format)
            params = {k: p.var() for k, p in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(_sym, *grouped, **params)
            outs, self._out_format = flatten(out, "output")
            self._cached_graph = sym_inputs, _sym.Group(outs)
        return self._cached_graph

    def _deferred_infer_shape(self, *args: Any) -> None:
        try:
            self.infer_shape(*args)
        except GluonportError as exc:
            raise ShapeError(f"Deferred initialization failed because shape cannot be "
                             f"inferred. {exc}") from None

    def _build_cache(self, *args: Any) -> None:
        data, out = self._get_graph(*args)
        data_names = {d.name: i for i, d in enumerate(data)}
        input_names = out.list_inputs()
        params = self.collect_params()
        for name in input_names:
            if name not in params and name not in data_names:
                raise GluonportError(f"Unknown input to HybridBlock: {name}")
        unused = [k for k in params.keys() if k not in set(input_names)]
        if unused:
            warnings.warn(f"Parameter {', '.join(unused)} is not used by any computation. Is "
                          "this intended?", stacklevel=4)
        flat = [a for a in flatten(list(args), "input")[0] if a is not None]
        try:
            for name in input_names:
                if name in params:
                    params[name].data()
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            for name in input_names:
                if name in params:
                    params[name]._finish_deferred_init()
        self._cached_op_args = [(True, data_names[n]) if n in data_names else (False, params[n])
                                for n in input_names]
        self._cached_op = CachedGraph(out, self._cached_op_args, self._backend,
                                      static_shape=dict(self._flags).get("static_shape", False))
        self._cached_op.monitor = self._callback
        self._cached_op.monitor_all = self._monitor_all
        del flat

    def _call_cached_op(self, *args: Any) -> Any:
        if self._cached_op is None:
            self._build_cache(*args)
        if self._callback is not None:  # as MXNet, the hook is (re)installed at every call
            self._cached_op.monitor = self._callback
            self._cached_op.monitor_all = self._monitor_all
        flat, fmt = flatten(list(args), "input")
        if fmt != self._in_format:
            raise ValueError("The argument structure of HybridBlock does not match the cached "
                             f"version. Stored format = {self._in_format}, input format = {fmt}")
        data = [a for a in flat if a is not None]
        ctx = data[0].context
        out = self._cached_op(data, ctx)
        return regroup(out, self._out_format)

    # --- public -------------------------------------------------------------------------------
    def forward(self, x: Any, *args: Any) -> Any:
        """Run ``hybrid_forward`` with ``F = nd`` (or the cached graph when hybridized), or
        build symbols with ``F = sym`` when given Symbols."""
        has_sym, has_nd, ctxs = _gather([x, *args])
        if has_sym and has_nd:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols types "
                             "for the input. Please check the type of the args.\n")
        if not has_sym and not has_nd:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.\n")
        if has_nd:
            ctx = ctxs[0]
            if self._active:
                if len(ctxs) > 1:
                    raise ValueError("Find multiple contexts in the input, After hybridized, the "
                                     "HybridBlock only supports one input context. Find all "
                                     f"contexts = {ctxs}")
                with ctx:
                    return self._call_cached_op(x, *args)
            with ctx:
                try:
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                except DeferredInitializationError:
                    self._deferred_infer_shape(x, *args)
                    for v in self.params.values():
                        v._finish_deferred_init()
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                return self.hybrid_forward(_nd, x, *args, **params)
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_sym, x, *args, **params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        """Override with the computation, written against ``F`` (``nd`` or ``sym``)."""
        raise NotImplementedError

    def _infer_attrs(self, infer_fn: str, attr: str, *args: Any) -> None:
        inputs, out = self._get_graph(*args)
        flat = [a for a in flatten(list(args), "input")[0] if a is not None]
        given = {i.name: (getattr(a, attr)) for i, a in zip(inputs, flat)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(**given)
        if arg_attrs is None:
            raise ShapeError(str(caught[0].message) if caught else
                             f"{infer_fn} could not infer every parameter {attr}")
        sdict = dict(zip(out.list_arguments(), arg_attrs))
        sdict.update(zip(out.list_auxiliary_states(), aux_attrs))
        for p in self.collect_params().values():
            if p.name in sdict:
                setattr(p, attr, sdict[p.name])

    def infer_shape(self, *args: Any) -> None:
        """Infer every parameter's shape from example inputs (fills deferred shapes)."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args: Any) -> None:
        """Infer every parameter's dtype from example inputs."""
        self._infer_attrs("infer_type", "dtype", *args)

    def optimize_for(self, x: Any, *args: Any, backend: str | None = None, clear: bool = False,
                     static_alloc: bool = False, static_shape: bool = False, **kwargs: Any
                     ) -> None:
        """Hybridize for ``backend`` and build the cached graph now, without running it."""
        self.hybridize(True, backend=backend, clear=clear, static_alloc=static_alloc,
                       static_shape=static_shape)
        self._build_cache(x, *args)

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True
               ) -> tuple[str, str]:
        """Write ``path-symbol.json`` and ``path-%04d.params`` as MXNet 1.9.1 does; returns both
        file names. Parameters are saved in graph-input order with ``arg:``/``aux:`` keys.

        The two files are written as one pair (:func:`gluonport.model.save_pair`): a process
        killed during the export leaves the old pair or the new one."""
        if not self._cached_graph:
            raise GluonportError("Please first call block.hybridize() and then run forward with "
                                 "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        if not self._cached_op_args:
            self._cached_op_args = _graph_param_args(sym, self.collect_params())
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for is_arg, param in self._cached_op_args:
            if is_arg:
                continue
            if param.name in arg_names:
                arg_dict[f"arg:{param.name}"] = param._reduce()
            elif param.name in aux_names:
                arg_dict[f"aux:{param.name}"] = param._reduce()
            else:
                warnings.warn(f'Parameter "{param.name}" is not found in the graph. ',
                              stacklevel=2)
        params_file = f"{path}-{epoch:04d}.params"
        from ..model import save_pair

        save_pair(sym, sym_file, params_file, arg_dict, remove_amp_cast)
        return sym_file, params_file

    def export_onnx(self, path: str, *inputs: Any, opset_version: int | None = None,
                    dynamic_batch: bool = False, dynamic_axes: dict | None = None,
                    in_shapes: Any = None, external_data: bool | None = None) -> str:
        """Write this block's graph as ONNX (parameters as initializers) and return ``path``.

        ``inputs`` are example NDArrays (they also trace the graph if that has not happened);
        or give ``in_shapes``. ``dynamic_batch`` makes axis 0 of every input dynamic.
        """
        from ..onnx import export_model

        if inputs:
            if not self._cached_graph:
                self._get_graph(*inputs)
            self._finish_params(*inputs)
        if not self._cached_graph:
            raise GluonportError("export_onnx: pass example inputs, or hybridize and run the "
                                 "block once first")
        data, sym = self._cached_graph
        names = [d.name for d in data]
        if inputs:
            flat = [a for a in flatten(list(inputs), "input")[0] if a is not None]
            in_shapes = [a.shape for a in flat]
            in_types = [np.dtype(a.dtype) for a in flat]
        else:
            in_types = np.float32
        params = {p.name: p.data()._data for p in self.collect_params().values()
                  if p.name in set(sym.list_inputs())}
        axes = dynamic_axes or ({n: {0: "batch"} for n in names} if dynamic_batch else None)
        return export_model(sym, params, in_shapes, in_types, path, opset_version=opset_version,
                            dynamic_axes=axes, external_data=external_data)

    def _finish_params(self, *args: Any) -> None:
        params = self.collect_params()
        if any(p._deferred_init for p in params.values()):
            self._deferred_infer_shape(*args)
            for p in params.values():
                p._finish_deferred_init()


def _graph_param_args(sym: Symbol, params: Any) -> list[tuple[bool, Any]]:
    out: list[tuple[bool, Any]] = []
    for i, name in enumerate(sym.list_inputs()):
        out.append((False, params[name]) if name in params else (True, i))
    return out
