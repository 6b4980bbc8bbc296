"""``gluon.contrib.estimator``: MXNet 1.9.1's high-level training loop for Gluon.

:class:`Estimator` trains a ``net`` with a ``loss`` and a ``Trainer`` over a ``DataLoader``;
what happens around each batch and epoch (stepping the trainer, updating metrics, validating,
logging, checkpointing, stopping) is done by event handlers (:mod:`.event_handler`), and the
forward/backward of one batch by a :class:`BatchProcessor`.
"""

from . import batch_processor, event_handler
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (
    BatchBegin,
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochBegin,
    EpochEnd,
    EventHandler,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
)

__all__ = ["Estimator", "BatchProcessor", "EventHandler", "TrainBegin", "TrainEnd",
           "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd", "StoppingHandler",
           "MetricHandler", "ValidationHandler", "LoggingHandler", "CheckpointHandler",
           "EarlyStoppingHandler", "GradientUpdateHandler", "batch_processor", "event_handler"]
