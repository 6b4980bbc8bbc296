"""MXNet 1.9.1's ``BaseModule`` loops (``mxnet/module/base_module.py``): ``fit``, ``score``,
``predict``, ``iter_predict`` and ``forward_backward``, written over the primitive methods a
module defines (``bind``, ``init_params``, ``init_optimizer``, ``forward``, ``backward``,
``update``, ``update_metric``, ``get_outputs``, ``get_params``/``set_params``).

:class:`gluonport.module.Module` is the one module built on it.
"""

from __future__ import annotations

import logging
import time
from collections import namedtuple
from typing import Any

import numpy as np

from .errors import GluonportError
from .io import DataBatch, DataIter
from .ndarray import NDArray

__all__ = ["BaseModule", "BatchEndParam"]

#: What batch-end callbacks receive: mxnet.model.BatchEndParam (epoch, nbatch, eval_metric,
#: locals).
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])

MXNET_DEFAULT_INIT: Any = object()
"""``init_params``/``fit``'s default initializer: ``Uniform(0.01)``, as MXNet's."""


def _as_list(obj: Any) -> list:
    return obj if isinstance(obj, list) else [obj]


def call_back(callbacks: Any, param: BatchEndParam) -> None:
    """Call one callback or each of a list with ``param``."""
    if callbacks is None:
        return
    for callback in _as_list(callbacks):
        callback(param)


class BaseModule:
    """The loops MXNet's ``BaseModule`` runs over a module's primitive methods."""

    logger: Any = logging
    binded = False
    for_training = False
    inputs_need_grad = False
    params_initialized = False
    optimizer_initialized = False

    # --- primitives a module defines -----------------------------------------------------------
    def bind(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - Module defines it
        raise NotImplementedError

    def init_params(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def init_optimizer(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:  # pragma: no cover
        raise NotImplementedError

    def backward(self, out_grads: Any = None) -> None:  # pragma: no cover
        raise NotImplementedError

    def update(self) -> None:  # pragma: no cover
        raise NotImplementedError

    def update_metric(self, eval_metric: Any, labels: Any,
                      pre_sliced: bool = False) -> None:  # pragma: no cover
        raise NotImplementedError

    def get_outputs(self, merge_multi_context: bool = True) -> list:  # pragma: no cover
        raise NotImplementedError

    def get_params(self) -> tuple[dict, dict]:  # pragma: no cover
        raise NotImplementedError

    def set_params(self, arg_params: dict, aux_params: dict, allow_missing: bool = False,
                   force_init: bool = True, allow_extra: bool = False) -> None:  # pragma: no cover
        raise NotImplementedError

    def install_monitor(self, mon: Any) -> None:
        """Attach an ``mx.monitor.Monitor``: gluonport has no monitor; refused."""
        raise GluonportError("Module.install_monitor: gluonport has no mx.monitor.Monitor; "
                             "read outputs with get_outputs() or register an op hook on a "
                             "HybridBlock instead")

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Prepare for ``data_batch`` (MXNet pulls row_sparse parameters here; all gluonport
        parameters are dense, so nothing is to be done)."""

    # --- loops ---------------------------------------------------------------------------------
    def forward_backward(self, data_batch: Any) -> None:
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data: Any, eval_metric: Any, num_batch: int | None = None,
              batch_end_callback: Any = None, score_end_callback: Any = None,
              reset: bool = True, epoch: int = 0, sparse_row_id_fn: Any = None) -> list:
        """Run ``eval_data`` through the model and evaluate ``eval_metric`` (an EvalMetric or
        anything ``mx.metric.create`` takes: ``'acc'``, a list, a function), as MXNet's: the
        metric is reset, updated per batch with ``batch.label`` and the outputs (padded samples
        included, as MXNet counts them), and ``get_name_value()`` is returned. Callbacks get a
        ``BatchEndParam(epoch, nbatch, eval_metric, locals)``."""
        from . import metric

        if not (self.binded and self.params_initialized):
            raise GluonportError("Module.score: call bind() and set_params()/init_params() first")
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            call_back(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            actual_num_batch += 1
        if score_end_callback:
            call_back(score_end_callback,
                      BatchEndParam(epoch, actual_num_batch, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data: DataIter, num_batch: int | None = None,
                     reset: bool = True, sparse_row_id_fn: Any = None):
        """Yield ``(outputs, batch index, batch)`` per batch, padding removed."""
        if not (self.binded and self.params_initialized):
            raise GluonportError("Module.iter_predict: call bind() and "
                                 "set_params()/init_params() first")
        if reset:
            eval_data.reset()
        for k, batch in enumerate(eval_data):
            if num_batch is not None and k == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            yield [o[0:o.shape[0] - pad] for o in self.get_outputs()], k, batch

    def predict(self, eval_data: Any, num_batch: int | None = None,
                merge_batches: bool = True, reset: bool = True,
                always_output_list: bool = False, sparse_row_id_fn: Any = None) -> Any:
        """Outputs over a DataIter (padding removed, batches concatenated); an NDArray or
        numpy array is one batch."""
        from . import ndarray as nd

        if not (self.binded and self.params_initialized):
            raise GluonportError("Module.predict: call bind() and set_params()/init_params() "
                                 "first")
        if isinstance(eval_data, (NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))  # is_train: for_training, as MXNet
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise GluonportError("Module.predict: eval_data must be a DataIter, an NDArray or "
                                 "a numpy array")
        if reset:
            eval_data.reset()
        batches: list[list[NDArray]] = []
        for k, batch in enumerate(eval_data):
            if num_batch is not None and k == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            batches.append([o[0:o.shape[0] - pad].copy() for o in self.get_outputs()])
        if not batches:
            return []
        if not merge_batches:
            return batches
        merged = [nd.concat(*parts, dim=0) for parts in zip(*batches)]
        if len(merged) == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data: Any, eval_data: Any = None, eval_metric: Any = "acc",
            epoch_end_callback: Any = None, batch_end_callback: Any = None,
            kvstore: Any = "local", optimizer: Any = "sgd",
            optimizer_params: Any = (("learning_rate", 0.01),),
            eval_end_callback: Any = None, eval_batch_end_callback: Any = None,
            initializer: Any = MXNET_DEFAULT_INIT, arg_params: dict | None = None,
            aux_params: dict | None = None, allow_missing: bool = False,
            force_rebind: bool = False, force_init: bool = False, begin_epoch: int = 0,
            num_epoch: int | None = None, validation_metric: Any = None, monitor: Any = None,
            sparse_row_id_fn: Any = None) -> None:
        """Train for epochs ``begin_epoch`` .. ``num_epoch - 1``, as MXNet 1.9.1's
        ``BaseModule.fit``: bind to ``train_data.provide_data``/``provide_label`` for training,
        ``init_params`` (``initializer`` default ``Uniform(0.01)``, or ``arg_params``/
        ``aux_params``), ``init_optimizer``; then per batch ``forward_backward``, ``update``,
        ``update_metric(eval_metric, batch.label)`` and the ``batch_end_callback``\\ s with a
        ``BatchEndParam``; per epoch the log lines ``Epoch[e] Train-<name>=<value>`` and
        ``Epoch[e] Time cost=<s>``, ``epoch_end_callback(epoch, symbol, arg_params,
        aux_params)``, and with ``eval_data`` a :meth:`score` with ``validation_metric``
        (default ``eval_metric``) logged as ``Epoch[e] Validation-<name>=<value>``."""
        from . import metric

        if num_epoch is None:
            raise GluonportError("Module.fit: please specify number of epochs (num_epoch)")
        if not all(hasattr(train_data, a) for a in ("provide_data", "provide_label", "reset")):
            raise GluonportError(f"Module.fit: train_data must be an mx.io.DataIter (e.g. "
                                 f"NDArrayIter: provide_data, provide_label, reset), got "
                                 f"{type(train_data).__name__}")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            try:
                next_data_batch = next(data_iter)
            except StopIteration:
                raise GluonportError("Module.fit: train_data gave no batch") from None
            eval_name_vals: list = []
            while not end_of_batch:
                data_batch = next_data_batch
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                call_back(batch_end_callback,
                          BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                        locals=locals()))
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg, aux = self.get_params()
            self.set_params(arg, aux)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg, aux)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)
            train_data.reset()

    @property
    def symbol(self) -> Any:  # pragma: no cover - Module defines it
        raise NotImplementedError

