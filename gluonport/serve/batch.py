"""The engine every serving path runs (one ONNX model on onnxruntime), and
:class:`BatchPredictor`, a callable class for Ray Data's ``Dataset.map_batches``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ArgumentError
from ._codec import check_inputs
from ._model import ServeModel, check_device, prepare_model

__all__ = ["Engine", "BatchPredictor"]


class Engine:
    """A prepared model on onnxruntime: ``run({input: array}) -> {output: array}``.

    Thread-safe (onnxruntime sessions are); inputs are not checked here (see
    :func:`gluonport.serve._codec.check_inputs`).
    """

    def __init__(self, sm: ServeModel, device: Any = "cpu"):
        from ..runtime.ort import OrtRunner

        self.model = sm
        self.ctx = check_device(device)
        self.runner = OrtRunner(sm.onnx, self.ctx)

    def run(self, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        outs = self.runner.run({n: arrays[n] for n in self.model.input_names})
        return dict(zip(self.runner.output_names, outs))


class BatchPredictor:
    """Batch inference over a dataset with the engine Ray Serve replicas run.

    ``ray.data`` calls an instance once per batch with ``{column: array}`` and gets back the
    batch's columns with one column per model output added::

        ds = ray.data.from_items([{"data": x} for x in images])
        out = ds.map_batches(BatchPredictor, fn_constructor_kwargs={"model": "lenet_bn"},
                             batch_size=64, batch_format="numpy", concurrency=2)

    Parameters
    ----------
    model:
        Anything :func:`gluonport.load` accepts, or a prepared :class:`ServeModel` (prepare it
        once in the driver to skip the export in every worker).
    device:
        ``cpu`` or ``cuda:N``; a GPU onnxruntime cannot use is an error here.
    columns:
        ``{input name: column name}`` where they differ (default: the input's own name).
    keep_columns:
        Return the batch's own columns too (default); ``False``: outputs only.
    input_shapes, params, epoch:
        As for :func:`gluonport.serve.prepare_model`.

    A model whose batch axis is fixed takes only batches of exactly that size.
    """

    def __init__(self, model: str | os.PathLike | ServeModel, *, device: Any = "cpu",
                 columns: Mapping[str, str] | None = None, keep_columns: bool = True,
                 input_shapes: Mapping[str, Any] | None = None, params: str | None = None,
                 epoch: int | None = None):
        ctx = check_device(device)
        sm = model if isinstance(model, ServeModel) else prepare_model(
            model, input_shapes=input_shapes, params=params, epoch=epoch, ctx=ctx)
        self.model = sm
        self.columns = {n: (columns or {}).get(n, n) for n in sm.input_names}
        unknown = sorted(set(columns or {}) - set(sm.input_names))
        if unknown:
            raise ArgumentError(f"columns: {unknown} are not inputs of the model; its inputs "
                                f"are {sm.input_names}")
        self.keep_columns = keep_columns
        self._engine = Engine(sm, ctx)

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, np.ndarray]:
        missing = [c for c in self.columns.values() if c not in batch]
        if missing:
            raise ArgumentError(f"batch has no column(s) {missing} for the model's inputs; its "
                                f"columns are {list(batch)} (map them with columns=)")
        arrays = {}
        for n, c in self.columns.items():
            a = batch[c]
            if isinstance(a, np.ndarray) and a.dtype == object:
                a = np.stack(list(a))  # a column of equal-shape arrays Ray Data kept as objects
            arrays[n] = np.asarray(a)
        arrays = check_inputs(arrays, self.model.inputs, self.model.batch_dynamic)
        out = dict(batch) if self.keep_columns else {}
        out.update(self._engine.run(arrays))
        return out
