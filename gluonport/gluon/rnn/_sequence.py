"""Helpers of ``RecurrentCell.unroll`` (MXNet 1.9.1's ``rnn_cell`` module functions): split or
merge a sequence along its time axis, mask and reverse variable-length sequences.

They work on NDArrays and Symbols alike: ``F`` is the ``ndarray`` or ``symbol`` module.
"""

from __future__ import annotations

from typing import Any

from ... import ndarray as _nd
from ... import symbol as _sym
from ...errors import GluonportError, ShapeError
from ...ndarray import NDArray
from ...symbol import Symbol

__all__ = ["TENSOR_TYPES", "as_list", "format_sequence", "get_begin_state", "mask_sequence",
           "reverse_sequences"]

TENSOR_TYPES = (Symbol, NDArray)
"""MXNet's ``gluon.tensor_types``: what counts as one merged sequence tensor."""


def as_list(obj: Any) -> list:
    """``obj`` as a list (a lone array becomes ``[obj]``), as MXNet's ``_as_list``."""
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _split_symbol(inputs: Symbol, length: int | None, in_axis: int) -> list:
    if len(inputs.list_outputs()) != 1:
        raise GluonportError("unroll doesn't allow grouped symbol as input. Please convert to "
                             "list with list(inputs) first or let unroll handle splitting.")
    if length is None:
        raise GluonportError("unroll: give the sequence length to split a Symbol input")
    return list(_sym.split(inputs, axis=in_axis, num_outputs=length, squeeze_axis=1))


def _split_ndarray(inputs: NDArray, length: int | None, in_axis: int) -> list:
    steps = inputs.shape[in_axis]
    if length is not None and length != steps:
        raise ShapeError(f"unroll: length={length} but the input has {steps} steps on its time "
                         f"axis {in_axis} (shape {inputs.shape})")
    return as_list(_nd.split(inputs, axis=in_axis, num_outputs=steps, squeeze_axis=1))


def format_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                    in_layout: str | None = None) -> tuple[Any, int, Any, int]:
    """Bring ``inputs`` (one tensor or a list of per-step tensors) to the form ``merge`` asks
    for: a list of steps (False), one tensor with time on ``layout``'s T axis (True), or as
    given (None). Returns ``(inputs, time axis, F, batch size)``; the batch size is 0 for
    Symbols."""
    if inputs is None:
        raise GluonportError("unroll(inputs=None) has been deprecated. Please create input "
                             "variables outside unroll.")
    axis, batch_axis = layout.find("T"), layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    if isinstance(inputs, Symbol):
        F = _sym
        if merge is False:
            inputs = _split_symbol(inputs, length, in_axis)
    elif isinstance(inputs, NDArray):
        F = _nd
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            inputs = _split_ndarray(inputs, length, in_axis)
    else:
        if length is not None and len(inputs) != length:
            raise ShapeError(f"unroll: length={length} but {len(inputs)} steps were given")
        F = _sym if isinstance(inputs[0], Symbol) else _nd
        if F is _nd:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, TENSOR_TYPES) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def get_begin_state(cell: Any, F: Any, begin_state: Any, inputs: Any, batch_size: int) -> Any:
    """``begin_state`` or, when None, zeros from ``cell.begin_state`` (on the inputs' context
    for NDArrays)."""
    if begin_state is not None:
        return begin_state
    if F is _nd:
        ctx = inputs.context if isinstance(inputs, TENSOR_TYPES) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def mask_sequence(F: Any, data: Any, length: int, valid_length: Any, time_axis: int,
                  merge: bool) -> Any:
    """Zero the steps past each item's ``valid_length`` (``SequenceMask``); a list of steps
    when not ``merge``."""
    if not isinstance(data, TENSOR_TYPES):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                  squeeze_axis=True))
    return outputs


def reverse_sequences(sequences: Any, unroll_step: int, valid_length: Any = None) -> Any:
    """The steps in reverse order; with ``valid_length``, each item's valid steps reversed and
    its padding kept in place (``SequenceReverse``)."""
    F = _sym if isinstance(sequences[0], Symbol) else _nd
    if valid_length is None:
        return list(reversed(sequences))
    reversed_sequences = F.SequenceReverse(F.stack(*sequences, axis=0),
                                           sequence_length=valid_length,
                                           use_sequence_length=True)
    if unroll_step > 1 or F is _sym:
        return F.split(reversed_sequences, axis=0, num_outputs=unroll_step, squeeze_axis=True)
    return [reversed_sequences[0]]
