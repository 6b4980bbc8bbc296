"""The Estimator's event handlers (MXNet 1.9.1's ``gluon/contrib/estimator/event_handler.py``).

A handler subclasses the mixins of the events it handles (``TrainBegin``, ``EpochBegin``,
``BatchBegin``, ``BatchEnd``, ``EpochEnd``, ``TrainEnd``); the Estimator calls each with itself
and, at batch events, ``batch``/``pred``/``label``/``loss`` keywords. ``batch_end`` and
``epoch_end`` returning True stop training. Handlers run in ascending ``priority`` (default 0):
GradientUpdateHandler -2000, MetricHandler and ValidationHandler -1000, LoggingHandler last.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np

from ....errors import ArgumentError, ValidationError
from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as MetricLoss
from .utils import check_metrics

__all__ = ["EventHandler", "TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin",
           "BatchEnd", "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler",
           "check_event_handlers"]


class EventHandler:
    """Base class of the event handlers."""


def check_event_handlers(handlers: Any) -> list:
    """A list of EventHandlers from one handler or a list."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ArgumentError("handlers must be an EventHandler or a list of EventHandler, "
                            f"got: {handlers}")
    return handlers


class TrainBegin(EventHandler):
    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops after ``max_epoch`` epochs or ``max_batch`` batches (the Estimator's fit adds
    one and gives it the limits at train begin)."""

    def __init__(self, max_epoch: int | None = None, max_batch: int | None = None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at each epoch begin and updates them after each batch: a
    ``metric.Loss`` with the loss, the others with ``(label, pred)``."""

    def __init__(self, metrics: Any, priority: float = -1000):
        self.metrics = check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        for metric in self.metrics:
            if isinstance(metric, MetricLoss):
                metric.update(0, kwargs["loss"])
            else:
                metric.update(kwargs["label"], kwargs["pred"])
        return False


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Calls ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` every
    ``epoch_period`` epochs and/or ``batch_period`` batches."""

    def __init__(self, val_data: Any, eval_fn: Any, epoch_period: int | None = 1,
                 batch_period: int | None = None, priority: float = -1000,
                 event_handlers: Any = None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_batch = 0
        self.current_epoch = 0

    def _validate(self, estimator: Any) -> None:
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)
        return False

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)
        return False


def _line(metrics: list) -> str:
    return "".join("%s: %.4f, " % metric.get() for metric in metrics)  # noqa: UP031


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs to ``estimator.logger``, MXNet's lines: the optimizer and learning rate at train
    begin, ``[Epoch e] Begin``/``Finished in ...s, <metric>: <value>, ...`` per epoch (or
    ``Validation Begin`` for validation metrics), every ``log_interval`` batches when it is an
    int, and a summary at train end."""

    def __init__(self, log_interval: int | str = "epoch", metrics: Any = None,
                 priority: float = np.inf):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ArgumentError("log_interval must be either an integer or string 'epoch'")
        self.metrics = check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0.0

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0.0

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        seconds = time.time() - self.train_start
        msg = "Train finished using total %ds with %d epochs. " % (seconds,  # noqa: UP031
                                                                   self.current_epoch)
        estimator.logger.info((msg + _line(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        if isinstance(self.log_interval, int):
            self.processed_samples += kwargs["batch"][0].shape[0]
            self.log_interval_time += time.time() - self.batch_start
            msg = "[Epoch %d][Batch %d][Samples %s] " % (  # noqa: UP031
                self.current_epoch, self.batch_index, self.processed_samples)
            if self.batch_index % self.log_interval == 0:
                msg += "time/interval: %.3fs " % self.log_interval_time  # noqa: UP031
                self.log_interval_time = 0.0
                estimator.logger.info((msg + _line(self.metrics)).rstrip(", "))
        self.batch_index += 1
        return False

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.epoch_start = time.time()
        if any("training" in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch,  # noqa: UP031
                                                 time.time() - self.epoch_start)
        estimator.logger.info((msg + _line(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0
        return False


def _monitor_op(mode: str, monitor: EvalMetric, who: str) -> Any:
    """np.less / np.greater for ``mode``. In 'auto' MXNet 1.9.1 always picks ``greater``
    (its test ``'acc' or 'f1' in name`` is always true); that is kept, with its warning."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who} mode {mode} is unknown, fallback to auto mode. CheckpointHandler "
                      "will usemax mode for f1 and accuracy metric comparison and use min mode "
                      "other wise", RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    warnings.warn(f"`greater` operator will be used to determine if {monitor.get()[0]} has "
                  "improved. Please specify `mode='min'` to use the `less` operator. Specify "
                  "`mode='max' to disable this warning.`", stacklevel=3)
    return np.greater


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves ``net.save_parameters`` and ``trainer.save_states`` as
    ``<model_dir>/<prefix>-epoch<E>batch<B>.params/.states`` every ``epoch_period`` epochs or
    ``batch_period`` batches (keeping the last ``max_checkpoints``), the symbol of a
    hybridized net once, and with ``save_best`` ``<prefix>-best`` when ``monitor`` improves;
    ``resume_from_checkpoint`` loads the latest checkpoint at train begin and trains the rest.
    """

    def __init__(self, model_dir: str, model_prefix: str = "model", monitor: Any = None,
                 verbose: int = 0, save_best: bool = False, mode: str = "auto",
                 epoch_period: int | None = 1, batch_period: int | None = None,
                 max_checkpoints: int = 5, resume_from_checkpoint: bool = False):
        self.monitor = monitor
        self.verbose = verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.save_best = save_best
        if save_best and not isinstance(monitor, EvalMetric):
            raise ArgumentError("To save best model only, please provide one of the metric "
                                "objects from estimator.train_metrics and "
                                "estimator.val_metrics as monitor.")
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints: list[str] = []
        self.trained_epoch = self.trained_batch = -1
        if save_best:
            self.monitor_op = _monitor_op(mode, monitor, "ModelCheckpoint")
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            same = ("To use resume from checkpoint, you must only specify the same type of "
                    "period you used for training.For example, if you are training based on "
                    "number of epochs,you must save only based on epochs, and set batch_period "
                    "to None.")
            if estimator.max_batch and not (self.batch_period and not self.epoch_period):
                raise ValidationError(same)
            if estimator.max_epoch and not (self.epoch_period and not self.batch_period):
                raise ValidationError(same)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1
        return False

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1
        return False

    def _save_checkpoint(self, estimator: Any) -> None:
        if self.resume_from_checkpoint:
            epoch = self.current_epoch + self.trained_epoch + 1
            batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        else:
            epoch, batch = self.current_epoch, self.current_batch
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if not self.save_best:
            return
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"Skipping save best because {name} is not updated, make sure you pass one of "
                "the metric objects estimator.train_metrics and estimator.val_metrics as "
                "monitor"), stacklevel=2)
        elif self.monitor_op(value, self.best):
            prefix = self.model_prefix + "-best"
            self._save_params_and_trainer(estimator, prefix)
            self.best = value
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                      "%0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, prefix)
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_batch,
                                  name, self.best)

    def _save_symbol(self, estimator: Any) -> None:
        symbol_file = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        cached = getattr(estimator.net, "_cached_graph", None)
        if cached:
            cached[1].save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator in "
                "order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator: Any, file_prefix: str) -> None:
        estimator.net.save_parameters(os.path.join(self.model_dir, file_prefix + ".params"))
        estimator.trainer.save_states(os.path.join(self.model_dir, file_prefix + ".states"))
        if "best" not in file_prefix:
            self.saved_checkpoints.append(file_prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for fname in os.listdir(self.model_dir):
                if fname.startswith(old):
                    os.remove(os.path.join(self.model_dir, fname))

    def _resume_from_checkpoint(self, estimator: Any) -> None:
        prefix = self.model_prefix + "-epoch"
        self.trained_epoch = self._find_max_iteration(prefix, "epoch", "batch",
                                                      self.saved_checkpoints)
        prefix += str(self.trained_epoch)
        self.trained_batch = self._find_max_iteration(prefix, "batch", ".params")
        if self.trained_epoch == -1:
            what = (f"{estimator.max_batch} batches" if estimator.max_batch
                    else f"{estimator.max_epoch} epochs")
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for %s", what)
            return
        msg = (f"CheckpointHandler: Checkpoint resumed from epoch {self.trained_epoch} batch "
               f"{self.trained_batch}, continue to train for ")
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ArgumentError(f"Found checkpoint with maximum number of epoch "
                                    f"{estimator.max_epoch} reached, please specify "
                                    "resume_from_checkpoint=False (default value) if you wan "
                                    "to train from scratch.")
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += f"{estimator.max_epoch} epochs "
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ArgumentError(f"Found checkpoint with maximum number of batch "
                                    f"{self.trained_batch} reached, please "
                                    "specifyresume_from_checkpoint=False (default value) if "
                                    "you wan to train from scratch.")
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += f"{estimator.max_batch} batches "
        base = os.path.join(self.model_dir, f"{self.model_prefix}-epoch{self.trained_epoch}"
                                            f"batch{self.trained_batch}")
        for path in (base + ".params", base + ".states"):
            if not os.path.exists(path):
                raise ValidationError(f"Failed to load checkpoint, {path} does not exist")
        estimator.net.load_parameters(base + ".params", ctx=estimator.context)
        estimator.trainer.load_states(base + ".states")
        estimator.logger.warning(msg)

    def _find_max_iteration(self, prefix: str, start: str, end: str,
                            saved_checkpoints: list | None = None) -> int:
        best = -1
        for fname in os.listdir(self.model_dir):
            if not (fname.startswith(prefix) and ".params" in fname):
                continue
            if saved_checkpoints:  # MXNet appends only to a non-empty list
                saved_checkpoints.append(fname[:fname.find(".params")])
            try:
                best = max(best, int(fname[fname.find(start) + len(start):fname.find(end)]))
            except ValueError:
                raise ArgumentError(
                    "Error parsing checkpoint file, please check your checkpoints have the "
                    "format: {model_name}-epoch{epoch_number}batch{batch_number}.params, there "
                    "should also be a .states file for each .params file ") from None
        return best


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved by ``min_delta`` for ``patience``
    epochs (from ``baseline`` when given)."""

    def __init__(self, monitor: Any, min_delta: float = 0, patience: int = 0,
                 mode: str = "auto", baseline: float | None = None):
        if not isinstance(monitor, EvalMetric):
            raise ArgumentError("Please provide one of the metric objects from "
                                "estimator.train_metrics and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ArgumentError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                                "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(mode, monitor, "EarlyStopping")
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.best = np.inf

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"{name} is not updated, make sure you pass one of the metric objects "
                "fromestimator.train_metrics and estimator.val_metrics as monitor."),
                stacklevel=2)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHanlder: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """``trainer.step(batch_size)`` after each batch, the batch size summed over the
    contexts' losses."""

    def __init__(self, priority: float = -2000):
        self.priority = priority

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(each.shape[0] for each in losses))
        return False
