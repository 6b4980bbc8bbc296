"""The recording and training-mode flags of ``mx.autograd``, per thread (MXNet 1.9.1's).

They live at the bottom of the package because everything reads them: the imperative dispatch
point (``ndarray``) records operators while recording is on, operators with a training behaviour
(Dropout, BatchNorm) run it in training mode, hybridized blocks pick their graph by them.
:mod:`gluonport.autograd` re-exports every name here; use that.
"""

from __future__ import annotations

import threading

__all__ = ["set_recording", "set_training", "is_recording", "is_training", "record", "pause",
           "train_mode", "predict_mode", "RecordingStateScope"]

class _State(threading.local):
    """Per-thread flags; the class attributes are each new thread's starting values."""

    recording = False
    training = False
    discarded: tuple = ()  # (op name, input indices): see discarded_grads


_state = _State()


def discarded_grads(op: str) -> frozenset:
    """The inputs of ``op`` whose gradients the imperative backward pass will throw away,
    while it runs the gradient rule of an ``op`` node (inputs outside the recorded graph:
    MXNet's ``kNullOp`` requests, which its backward kernels skip); empty otherwise. A
    ``_backward_<op>`` kernel may then return zeros for those gradients."""
    got = _state.discarded
    return got[1] if got and got[0] == op else frozenset()


def set_discarded_grads(op: str, inputs: frozenset) -> tuple:
    """Declare (the imperative tape does, around one rule call) which inputs of ``op`` get
    no gradient; returns the previous declaration, to be restored with
    ``restore_discarded_grads``."""
    prev, _state.discarded = _state.discarded, (op, inputs) if inputs else ()
    return prev


def restore_discarded_grads(prev: tuple) -> None:
    """Undo :func:`set_discarded_grads`."""
    _state.discarded = prev


def set_recording(is_recording: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Set whether operations are recorded; returns the previous state."""
    flags = _state
    prev, flags.recording = flags.recording, bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:  # noqa: FBT001 - MXNet's signature
    """Set training (True) or predicting (False) mode; returns the previous state."""
    flags = _state
    prev, flags.training = flags.training, bool(train_mode)
    return prev


def is_recording() -> bool:
    """Whether this thread is inside ``record()`` (False by default)."""
    return _state.recording


def is_training() -> bool:
    """Whether this thread's forward passes run in training mode (False by default)."""
    return _state.training


class RecordingStateScope:
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


def record(train_mode: bool = True) -> RecordingStateScope:  # noqa: FBT001, FBT002
    """``with autograd.record():`` recording on, training mode ``train_mode`` (default on)."""
    return RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> RecordingStateScope:  # noqa: FBT001, FBT002
    """``with autograd.pause():`` recording off, training mode ``train_mode`` (default off)."""
    return RecordingStateScope(False, train_mode)


def train_mode() -> RecordingStateScope:
    """``with autograd.train_mode():`` training mode on, recording unchanged."""
    return RecordingStateScope(None, True)


def predict_mode() -> RecordingStateScope:
    """``with autograd.predict_mode():`` training mode off, recording unchanged."""
    return RecordingStateScope(None, False)
