"""``mx.autograd``: the recording and training-mode state, as MXNet 1.9.1's (per thread).

Model code reads this state even when it only runs inference: GluonCV's detectors branch on
``autograd.is_training()`` inside ``hybrid_forward``, scripts wrap evaluation in
``with autograd.predict_mode():``, and model files import ``autograd`` at the top. Those run
unchanged.

Training mode is honoured the way MXNet's forward pass honours it: inside ``record()`` (which
defaults to ``train_mode=True``) or ``train_mode()``, operators with a training behaviour run it
(Dropout drops, BatchNorm normalises with the batch's statistics), imperatively and in
hybridized blocks (which then run on the numpy executor). Unlike MXNet, BatchNorm's moving
statistics are not updated, and no gradients exist: ``backward``, ``grad`` and
``mark_variables`` raise, since gluonport runs trained models and does not train them.
"""

from __future__ import annotations

import threading
from typing import Any

from .errors import GluonportError

__all__ = ["set_recording", "set_training", "is_recording", "is_training", "record", "pause",
           "train_mode", "predict_mode", "mark_variables", "backward", "grad", "get_symbol",
           "Function"]

_state = threading.local()


def _flags() -> Any:
    if not hasattr(_state, "recording"):
        _state.recording = False
        _state.training = False
    return _state


def set_recording(is_recording: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Set whether operations are recorded; returns the previous state."""
    flags = _flags()
    prev, flags.recording = flags.recording, bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Set training (True) or predicting (False) mode; returns the previous state."""
    flags = _flags()
    prev, flags.training = flags.training, bool(train_mode)
    return prev


def is_recording() -> bool:
    """Whether this thread is inside ``record()`` (False by default)."""
    return _flags().recording


def is_training() -> bool:
    """Whether this thread's forward passes run in training mode (False by default)."""
    return _flags().training


class _RecordingStateScope:
    """Sets the recording and/or training flag for a ``with`` block and restores them."""

    def __init__(self, is_record: bool | None, train: bool | None):
        self._enter_record = is_record
        self._enter_train = train
        self._prev_record: bool | None = None
        self._prev_train: bool | None = None

    def __enter__(self) -> None:
        if self._enter_record is not None:
            self._prev_record = set_recording(self._enter_record)
        if self._enter_train is not None:
            self._prev_train = set_training(self._enter_train)

    def __exit__(self, *exc: object) -> None:
        if self._enter_record is not None and self._prev_record != self._enter_record:
            set_recording(bool(self._prev_record))
        if self._enter_train is not None and self._prev_train != self._enter_train:
            set_training(bool(self._prev_train))


def record(train_mode: bool = True) -> _RecordingStateScope:  # noqa: FBT001, FBT002
    """``with autograd.record():`` recording on, training mode ``train_mode`` (default on)."""
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> _RecordingStateScope:  # noqa: FBT001, FBT002
    """``with autograd.pause():`` recording off, training mode ``train_mode`` (default off)."""
    return _RecordingStateScope(False, train_mode)


def train_mode() -> _RecordingStateScope:
    """``with autograd.train_mode():`` training mode on, recording unchanged."""
    return _RecordingStateScope(None, True)


def predict_mode() -> _RecordingStateScope:
    """``with autograd.predict_mode():`` training mode off, recording unchanged."""
    return _RecordingStateScope(None, False)


def _no_gradients(what: str) -> GluonportError:
    return GluonportError(f"autograd.{what}: gluonport computes no gradients (it runs trained "
                          "models and does not train them); train with MXNet or port the model "
                          "to a framework that trains")


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """Not available: there are no gradients."""
    raise _no_gradients("mark_variables")


def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False,  # noqa: FBT001, FBT002
             train_mode: bool = True) -> None:  # noqa: FBT001, FBT002
    """Not available: there are no gradients."""
    raise _no_gradients("backward")


def grad(heads: Any, variables: Any, head_grads: Any = None, retain_graph: Any = None,
         create_graph: bool = False, train_mode: bool = True) -> Any:  # noqa: FBT001, FBT002
    """Not available: there are no gradients."""
    raise _no_gradients("grad")


def get_symbol(x: Any) -> Any:
    """Not available: nothing is recorded into a graph (hybridize a block to get a Symbol)."""
    raise GluonportError("autograd.get_symbol: gluonport records no graph; hybridize the block "
                         "and call it on mx.sym.var('data') (or use export) to get its Symbol")


class Function:
    """A user-defined differentiable function (MXNet's ``autograd.Function``): calling it runs
    ``forward`` (outside recording, as MXNet does); ``backward`` is never called here."""

    def __init__(self) -> None:
        self._saved_tensors: tuple = ()

    def save_for_backward(self, *args: Any) -> None:
        self._saved_tensors = args

    @property
    def saved_tensors(self) -> tuple:
        return self._saved_tensors

    def __call__(self, *inputs: Any) -> Any:
        with pause(train_mode=is_training()):
            return self.forward(*inputs)

    def forward(self, *inputs: Any) -> Any:
        raise NotImplementedError

    def backward(self, *output_grads: Any) -> Any:
        raise NotImplementedError
