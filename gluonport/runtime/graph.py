"""Run an MXNet graph on onnxruntime: export it on first use, per input signature.

This is the fast path behind hybridized blocks, ``SymbolBlock`` and ``gluonport.load``. The
graph is exported with the parameters as initializers (so onnxruntime can fold and pre-pack
them) and a dynamic batch axis, so one session serves every batch size; a graph whose export
needs static shapes (or ``static_shape=True``) gets one model per input shape instead. When a
parameter changes (``set_data``, ``load_parameters``), the model is exported again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..context import Context, current_context
from ..errors import ConversionError
from ..symbol._graph import topo_order
from .ort import OrtRunner, RuntimeOptions

__all__ = ["OnnxGraph", "graph_exports"]

log = logging.getLogger("gluonport")


def graph_exports(symbol: Any, opset: int | None = None) -> bool:
    """Whether every op of ``symbol`` has an ONNX converter at ``opset`` (default opset)."""
    from ..onnx.export import get_converter
    from ..onnx.opset import check_opset

    opset = check_opset(opset)
    return all(node.op is None or get_converter(node, opset) is not None
               for node in topo_order(n for n, _ in symbol._outputs))


class OnnxGraph:
    """An MXNet Symbol run on onnxruntime.

    Parameters
    ----------
    symbol:
        The graph.
    data_names:
        Its data inputs, in call order (everything else is a parameter or a label input).
    get_params:
        Returns ``(version, values)``: a cheap version key of the current parameters, and
        ``values()`` giving ``{name: numpy array}``, called only when the version changed (the
        model is then exported again).
    ctx, options:
        Where and how onnxruntime runs (see :class:`RuntimeOptions`).
    """

    def __init__(self, symbol: Any, data_names: Sequence[str],
                 get_params: Callable[[], tuple[Any, Mapping[str, np.ndarray]]],
                 ctx: Context | None = None, options: RuntimeOptions | None = None,
                 opset: int | None = None):
        self.symbol = symbol
        self.data_names = list(data_names)
        self.get_params = get_params
        self.ctx = ctx or current_context()
        self.options = options or RuntimeOptions()
        self.opset = opset
        self._runners: dict[tuple, OrtRunner] = {}
        self._version: Any = None
        self._dynamic_ok = not self.options.static_shape
        self._lock = threading.Lock()
        self._checked: set[tuple] = set()
        self._checked_version: Any = object()
        self._param_shapes: dict[str, tuple] = {}

    def _key(self, arrays: Sequence[np.ndarray]) -> tuple:
        if self._dynamic_ok:
            return tuple((a.dtype.str, a.ndim, a.shape[1:]) for a in arrays)
        return tuple((a.dtype.str, a.shape) for a in arrays)

    def _export(self, arrays: Sequence[np.ndarray], params: Mapping[str, np.ndarray]) -> Any:
        from ..onnx.export import export_symbol

        shapes = {n: a.shape for n, a in zip(self.data_names, arrays)}
        types = {n: a.dtype for n, a in zip(self.data_names, arrays)}
        if self._dynamic_ok and all(a.ndim > 0 for a in arrays):
            axes = {n: {0: "batch"} for n in self.data_names}
            try:
                return export_symbol(self.symbol, params, shapes, types, self.opset,
                                     dynamic_axes=axes)
            except ConversionError as exc:
                # Not every graph has its batch on axis 0 of every input (RNNs in TNC layout):
                # one static model per input shape is correct, only less shareable.
                log.info("exporting with a dynamic batch axis failed (%s); using one model per "
                         "input shape", exc)
                self._dynamic_ok = False
        return export_symbol(self.symbol, params, shapes, types, self.opset)

    def _runner(self, arrays: Sequence[np.ndarray]) -> OrtRunner:
        version, values = self.get_params()
        key = self._key(arrays)
        runner = self._runners.get(key) if version == self._version else None
        if runner is not None:
            return runner
        with self._lock:
            if version != self._version:
                self._runners.clear()
                self._version = version
            runner = self._runners.get(key)
            if runner is None:
                model = self._export(arrays, values())
                runner = OrtRunner(model, self.ctx, self.options)
                self._runners[self._key(arrays)] = runner
            return runner

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run on data arrays given in ``data_names`` order; returns numpy outputs."""
        self._check_budget(arrays)
        runner = self._runner(arrays)
        feed = {n: a for n, a in zip(self.data_names, arrays) if n in runner.input_names}
        return runner.run(feed)

    def _check_budget(self, arrays: Sequence[np.ndarray]) -> None:
        """The size budget (:mod:`gluonport._core.budget`) for these input shapes, once per shape
        signature: one session serves every batch size, and a larger batch makes every
        intermediate larger."""
        sig = tuple(a.shape for a in arrays)
        if sig in self._checked:
            return
        from ..symbol._infer import check_budget

        version, values = self.get_params()
        if version != self._checked_version:
            self._checked.clear()
            self._param_shapes = {k: np.shape(v) for k, v in values().items()}
            self._checked_version = version
        order = topo_order(n for n, _ in self.symbol._outputs)
        check_budget(order, {**self._param_shapes, **dict(zip(self.data_names, sig))})
        if len(self._checked) > 64:
            self._checked.clear()
        self._checked.add(sig)

    @property
    def providers(self) -> list[str]:
        return next(iter(self._runners.values())).providers if self._runners else []
