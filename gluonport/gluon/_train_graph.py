"""The two graphs of a hybridized block's training step, and where they run.

A recorded call of a cached graph (``autograd.record()``) runs the forward graph of
:func:`gluonport.symbol._backward.build_backward` -- the outputs plus every value the backward
graph needs -- and puts one node on the autograd tape whose backward runs the backward graph.
Both are ordinary graphs, so they run where inference runs:

* on onnxruntime when the block's backend is onnxruntime (or automatic and every op of both
  graphs exports): plain ONNX, so the CUDA execution provider trains on a GPU without
  ``onnxruntime-training``. A training-mode forward first writes its BatchNorm and Dropout
  nodes out with ops that export (``symbol/_expand.py``: batch moments, a uniform draw); the
  new moving statistics are extra outputs of the forward graph, written into the auxiliary
  arrays when the backward pass runs, as MXNet's backward kernel writes them. Models are
  exported per input shape (``static_shape``); parameters are inputs, so an update by the
  optimizer needs no new export;
* on the numpy executor otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..context import Context
from ..errors import GluonportError
from ..symbol import Symbol
from ..symbol._backward import BackwardGraph, build_backward
from ..symbol._expand import expand_for_training
from ..symbol._graph import topo_order
from ..symbol.executor import GraphPlan

__all__ = ["TrainGraphs"]


class _Numpy:
    def __init__(self, symbol: Any):
        self.plan = GraphPlan(symbol, fuse=False)
        self.names = set(self.plan.var_slots)

    def __call__(self, feed: Mapping[str, np.ndarray], training: bool,
                 monitor: Any = None) -> list[np.ndarray]:
        return self.plan.run({k: v for k, v in feed.items() if k in self.names},
                             is_train=training, monitor=monitor)


def _train_options() -> Any:
    """Session options of the training graphs: static shapes, and intra-op threads that sleep
    instead of spinning once a run ends. A training step alternates onnxruntime runs with
    Python and numpy work (the tape, the loss, the optimizer); spinning pool threads took the
    cores that work needed (an MLP step on a loaded 2-core machine: 44-58 ms spinning, 11-18 ms
    not; bench_train.py). The pool has ``OMP_NUM_THREADS`` threads when that is set -- MXNet's
    knob for its CPU operators, which numpy's OpenBLAS also reads -- else onnxruntime's
    default (one per physical core)."""
    from ..runtime.ort import RuntimeOptions

    threads = os.environ.get("OMP_NUM_THREADS", "").strip()

    class _TrainOptions(RuntimeOptions):
        def session_options(self, dim_overrides: Mapping[str, int] | None = None) -> Any:
            so = super().session_options(dim_overrides)
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            so.add_session_config_entry("session.inter_op.allow_spinning", "0")
            return so

    return _TrainOptions(static_shape=True,
                         intra_op_num_threads=int(threads) if threads.isdigit() else None)


class _Ort:
    def __init__(self, symbol: Any, ctx: Context):
        from ..runtime.graph import OnnxGraph

        self.names = symbol.list_inputs()
        self.graph = OnnxGraph(symbol, self.names, lambda: (0, dict), ctx, _train_options())

    def __call__(self, feed: Mapping[str, np.ndarray], training: bool,
                 monitor: Any = None) -> list[np.ndarray]:
        return self.graph([np.ascontiguousarray(feed[n]) for n in self.names])


def _has_training_behaviour(symbol: Any) -> bool:
    return any(n.op is not None and n.op.train_compute is not None
               for n in topo_order(m for m, _ in symbol._outputs))


class TrainGraphs:
    """Forward and backward graphs of ``symbol`` for the gradients of inputs ``wrt``.

    ``backend``: ``"numpy"``, ``"onnxruntime"`` or ``None`` (onnxruntime when both graphs
    export). Raises :class:`GluonportError` when an op on the way has no gradient rule.
    """

    def __init__(self, symbol: Any, wrt: Sequence[str], backend: str | None, ctx: Context,
                 training: bool):
        self.bg: BackwardGraph = build_backward(symbol, wrt)
        self.updates: list[str] = []
        self.backend = "numpy"
        if backend != "numpy":
            self._try_onnxruntime(symbol, wrt, training)
        if self.backend == "numpy" and ctx.device_type == "gpu":
            raise GluonportError(
                f"this block cannot train on {ctx}: its training graphs run on the numpy "
                "executor (CPU-only) because an op has no ONNX converter or a training-mode "
                "form built from exportable ops; use cpu()")
        make = (lambda s: _Ort(s, ctx)) if self.backend == "onnxruntime" else _Numpy
        self._fwd = make(self.bg.forward)
        self._bwd = None if self.bg.backward is None else make(self.bg.backward)

    def _try_onnxruntime(self, symbol: Any, wrt: Sequence[str], training: bool) -> None:
        from ..runtime.graph import graph_exports

        bg, updates = self.bg, []
        if training and _has_training_behaviour(symbol):
            try:
                expanded, updates = expand_for_training(symbol)
            except GluonportError:  # a training-mode form these params do not have
                return
            bg = build_backward(expanded, wrt)
            bg.forward = Symbol(bg.forward._outputs + [e for _, e in updates])
        if graph_exports(bg.forward) and (bg.backward is None or graph_exports(bg.backward)):
            self.bg, self.updates, self.backend = bg, [n for n, _ in updates], "onnxruntime"

    def forward(self, feed: Mapping[str, np.ndarray], training: bool, monitor: Any = None
                ) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        """(outputs, saved values); new auxiliary values are saved under the aux names.
        ``monitor`` (an op hook; numpy backend) sees the forward graph's nodes."""
        values = self._fwd(feed, training, monitor)
        n, k = self.bg.n_outputs, len(self.bg.saved)
        saved = dict(zip(self.bg.saved, values[n:n + k]))
        saved.update(("_aux:" + a, v) for a, v in zip(self.updates, values[n + k:]))
        return list(values[:n]), saved

    def backward(self, feed: Mapping[str, np.ndarray], saved: Mapping[str, np.ndarray],
                 ograds: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        """The gradients of ``wrt`` (``None`` where nothing flows)."""
        for name in self.updates:  # MXNet's backward kernel updates the moving statistics
            np.copyto(feed[name], saved["_aux:" + name], casting="unsafe")
        if self._bwd is None:
            return [None] * len(self.bg.wrt)
        bfeed = {**feed, **saved}
        for name in self.bg.ograds:
            bfeed[name] = ograds[int(name.rpartition(":")[2])]
        got = iter(self._bwd(bfeed, True))
        return [next(got) if has else None for has in self.bg.grad_of]
