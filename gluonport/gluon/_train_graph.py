"""The two graphs of a hybridized block's training step, and where they run.

A recorded call of a cached graph (``autograd.record()``) runs the forward graph of
:func:`gluonport.symbol._backward.build_backward` -- the outputs plus every value the backward
graph needs -- and puts one node on the autograd tape whose backward runs the backward graph.
Both are ordinary graphs, so they run where inference runs:

* on onnxruntime when the block's backend is onnxruntime (or automatic and every op of both
  graphs exports) and the forward has no training-only behaviour (Dropout masks and
  batch-statistics BatchNorm in training mode run on the numpy executor): plain ONNX, so the
  CUDA execution provider trains on a GPU without ``onnxruntime-training``. Models are
  exported per input shape (``static_shape``); parameters are inputs, so an update by the
  optimizer needs no new export;
* on the numpy executor otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..context import Context
from ..errors import GluonportError
from ..symbol._backward import BackwardGraph, build_backward
from ..symbol._graph import topo_order
from ..symbol.executor import GraphPlan

__all__ = ["TrainGraphs"]


class _Numpy:
    def __init__(self, symbol: Any):
        self.plan = GraphPlan(symbol, fuse=False)
        self.names = set(self.plan.var_slots)

    def __call__(self, feed: Mapping[str, np.ndarray], training: bool) -> list[np.ndarray]:
        return self.plan.run({k: v for k, v in feed.items() if k in self.names},
                             is_train=training)


class _Ort:
    def __init__(self, symbol: Any, ctx: Context):
        from ..runtime.graph import OnnxGraph
        from ..runtime.ort import RuntimeOptions

        self.names = symbol.list_inputs()
        self.graph = OnnxGraph(symbol, self.names, lambda: (0, dict), ctx,
                               RuntimeOptions(static_shape=True))

    def __call__(self, feed: Mapping[str, np.ndarray], training: bool) -> list[np.ndarray]:
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
        self.backend = self._choose(backend, training)
        if self.backend == "numpy" and ctx.device_type == "gpu":
            raise GluonportError(
                f"this block cannot train on {ctx}: its training graphs run on the numpy "
                "executor (CPU-only) because an op has no ONNX converter or the forward pass "
                "has a training-mode behaviour (Dropout, BatchNorm); use cpu()")
        make = (lambda s: _Ort(s, ctx)) if self.backend == "onnxruntime" else _Numpy
        self._fwd = make(self.bg.forward)
        self._bwd = None if self.bg.backward is None else make(self.bg.backward)

    def _choose(self, backend: str | None, training: bool) -> str:
        if backend == "numpy":
            return "numpy"
        if training and _has_training_behaviour(self.bg.forward):
            return "numpy"
        from ..runtime.graph import graph_exports

        exports = graph_exports(self.bg.forward) and (
            self.bg.backward is None or graph_exports(self.bg.backward))
        return "onnxruntime" if exports else "numpy"

    def forward(self, feed: Mapping[str, np.ndarray], training: bool
                ) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
        """(outputs, saved values)."""
        values = self._fwd(feed, training)
        n = self.bg.n_outputs
        return list(values[:n]), dict(zip(self.bg.saved, values[n:]))

    def backward(self, feed: Mapping[str, np.ndarray], saved: Mapping[str, np.ndarray],
                 ograds: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        """The gradients of ``wrt`` (``None`` where nothing flows)."""
        if self._bwd is None:
            return [None] * len(self.bg.wrt)
        bfeed = {**feed, **saved}
        for name in self.bg.ograds:
            bfeed[name] = ograds[int(name.rpartition(":")[2])]
        got = iter(self._bwd(bfeed, True))
        return [next(got) if has else None for has in self.bg.grad_of]
