"""``Estimator``: MXNet 1.9.1's high-level Gluon training loop
(``gluon/contrib/estimator/estimator.py``)."""

from __future__ import annotations

import copy
import logging
import sys
import warnings
from typing import Any

from ....context import Context, cpu, gpu, num_gpus
from ....errors import ArgumentError, GluonportError, ValidationError
from ....metric import Loss as MetricLoss
from ...data import DataLoader
from ...loss import Loss as GluonLoss
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (
    BatchBegin,
    BatchEnd,
    EpochBegin,
    EpochEnd,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
    check_event_handlers,
)
from .utils import check_handler_metric_ref, check_metrics, suggest_metric_for_loss

__all__ = ["Estimator"]


class Estimator:
    """Trains ``net`` with ``loss`` (a ``gluon.loss.Loss``) and ``trainer``, as MXNet 1.9.1's.

    ``train_metrics`` default to Accuracy (for a SoftmaxCrossEntropyLoss) plus a
    ``metric.Loss`` named after the loss, renamed ``training <name>``; ``val_metrics`` default
    to copies renamed ``validation <name>``. An uninitialized ``net`` is initialized with
    ``initializer`` on ``context`` (default: gpu(0) when there is a GPU, else cpu()); without
    ``trainer``, SGD with learning rate 0.001 (warned). ``val_net``/``val_loss`` default to
    ``net``/``loss``. ``batch_processor`` (``fit_batch``/``evaluate_batch``) defaults to
    :class:`BatchProcessor`. The logger writes to stdout, as MXNet's.
    """

    logger: Any = None

    def __init__(self, net: Any, loss: Any, train_metrics: Any = None, val_metrics: Any = None,
                 initializer: Any = None, trainer: Any = None, context: Any = None,
                 val_net: Any = None, val_loss: Any = None, batch_processor: Any = None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = check_metrics(train_metrics)
        self._val_metrics = check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self._check_loss(val_loss) if val_loss is not None else self.loss
        self.val_net = val_net if val_net is not None else self.net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch: int | None = None
        self.max_batch: int | None = None
        self.batch_axis = 0

    # --- checks -------------------------------------------------------------------------------
    @staticmethod
    def _check_loss(loss: Any) -> Any:
        if not isinstance(loss, GluonLoss):
            raise ArgumentError(f"loss must be a Loss, refer to gluon.loss.Loss:{loss}")
        return loss

    @staticmethod
    def _check_context(context: Any) -> list[Context]:
        gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default.To "
                              "utilize all your GPUs, specify context as a list of gpus, e.g. "
                              "context=[mx.gpu(0), mx.gpu(1)] ", stacklevel=3)
            return [gpus[0]] if gpus else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ArgumentError("context must be a Context or a list of Context, for example "
                                "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to "
                                f"mxnet.Context:{context}")
        for ctx in context:
            if ctx not in gpus and not str(ctx).startswith("cpu"):
                raise ValidationError(f"{ctx} is not available, please make sure your context "
                                      "is in one of: mx.cpu(), "
                                      + ", ".join(str(g) for g in gpus))
        return context

    @staticmethod
    def _check_batch_processor(batch_processor: Any) -> Any:
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise ArgumentError("Customized Batch Processor must contain fit_batch() and "
                                "evaluate_batch() methods")
        return batch_processor

    def _is_initialized(self) -> bool:
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except (GluonportError, RuntimeError):
                return False
        return True

    def _initialize(self, initializer: Any) -> None:
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your net. "
                          "You can use net.initialize(init=your_initializer, "
                          "force_reinit=True)to force re-initialize.", stacklevel=3)

    def _check_trainer(self, trainer: Any) -> Any:
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.", stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ArgumentError("Trainer must be a Gluon Trainer instance, refer to "
                                f"gluon.Trainer:{trainer}")
        return trainer

    def _add_default_training_metrics(self) -> None:
        if not self._train_metrics:
            suggested = suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(MetricLoss(self.loss.name.rstrip("1234567890")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self) -> None:
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self) -> list:
        return self._train_metrics

    @property
    def val_metrics(self) -> list:
        return self._val_metrics

    # --- loops --------------------------------------------------------------------------------
    def evaluate(self, val_data: Any, batch_axis: int = 0, event_handlers: Any = None) -> None:
        """Run ``val_data`` (a DataLoader) through ``val_net``/``val_loss``, updating and
        logging ``val_metrics`` (default MetricHandler and LoggingHandler)."""
        if not isinstance(val_data, DataLoader):
            raise ArgumentError("Estimator only support input as Gluon DataLoader. "
                                "Alternatively, you can transform your DataIter or any NDArray "
                                "into Gluon DataLoader. Refer to gluon.data.DataLoader")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = self._categorize(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data: Any, val_data: Any = None, epochs: int | None = None,
            event_handlers: Any = None, batches: int | None = None,
            batch_axis: int = 0) -> None:
        """Train on ``train_data`` (a DataLoader) for ``epochs`` epochs or ``batches`` batches
        (exactly one), validating on ``val_data`` after each epoch when given. Default handlers
        are added where the list lacks one of their kind: StoppingHandler (always),
        GradientUpdateHandler, MetricHandler(train_metrics), ValidationHandler, LoggingHandler;
        all run sorted by priority."""
        if not isinstance(train_data, DataLoader):
            raise ArgumentError("Estimator only support input as Gluon DataLoader. "
                                "Alternatively, you can transform your DataIter or any NDArray "
                                "into Gluon DataLoader. Refer to gluon.data.dataloader")
        if (not epochs) == (not batches):
            raise ArgumentError("Fit only support exactly one type of iteration, train by "
                                "number of epochs or number of batches.Please specify one and "
                                "only one of: epochs or batches.")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize(handlers)
        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                stops = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                         for handler in batch_end]
                if any(stops):
                    break
            if any([handler.epoch_end(self) for handler in epoch_end]):  # noqa: C419 - all run
                break
        for handler in train_end:
            handler.train_end(self)

    def _prepare_default_handlers(self, val_data: Any, event_handlers: Any) -> list:
        handlers = check_event_handlers(event_handlers)
        added: list = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if not any(isinstance(h, ValidationHandler) for h in handlers) and val_data:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            known = set(self.train_metrics + self.val_metrics)
            for handler in handlers:
                check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    def _prepare_default_validation_handlers(self, event_handlers: Any) -> list:
        handlers = check_event_handlers(event_handlers)
        added: list = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            known = set(self.val_metrics)
            for handler in handlers:
                check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    @staticmethod
    def _categorize(handlers: list) -> tuple[list, list, list, list, list, list]:
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in handlers if isinstance(h, kind)]  # type: ignore[return-value]
                     for kind in kinds)
