"""Samplers: the order in which a DataLoader visits a dataset (``mxnet.gluon.data.sampler``).

A sampler is an iterable of indices with a length; :class:`BatchSampler` groups another
sampler's indices into mini-batches and decides what happens to the last, short one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...errors import ArgumentError

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler"]

LAST_BATCH_MODES = ("keep", "discard", "rollover")


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` (indices) and ``__len__``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``start, start + 1, ..., start + length - 1`` in order.

    >>> list(SequentialSampler(3, start=2))
    [2, 3, 4]
    """

    def __init__(self, length: int, start: int = 0):
        self._length = length
        self._start = start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """The indices ``0 .. length-1`` in a random order (without replacement), drawn anew on
    each pass with numpy's global RNG, as MXNet does (``np.random.seed`` makes it repeatable;
    the order is not the one MXNet draws)."""

    def __init__(self, length: int):
        self._length = length

    def __iter__(self) -> Iterator[np.int64]:
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices)

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true.

    The dataset is read once, when the sampler is made (as in MXNet).
    """

    def __init__(self, fn: Callable[[Any], bool], dataset: Any):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


def check_last_batch(last_batch: Any) -> str:
    """``last_batch`` itself when it is one of MXNet's three modes, else an ArgumentError."""
    if last_batch not in LAST_BATCH_MODES:
        raise ArgumentError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                            f"but got {last_batch}")
    return last_batch


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
        Where the indices come from.
    batch_size : int
        Size of a mini-batch.
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with the indices left over when ``batch_size`` does not divide the
        sampler's length: ``'keep'`` yields them as a short last batch, ``'discard'`` drops
        them, ``'rollover'`` puts them in front of the next pass's first batch. MXNet checks
        the mode only when a pass leaves indices over; it is checked here when the sampler is
        made, with MXNet's message.

    >>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    >>> rollover = BatchSampler(SequentialSampler(10), 3, 'rollover')
    >>> list(rollover), list(rollover)
    ([[0, 1, 2], [3, 4, 5], [6, 7, 8]], [[9, 0, 1], [2, 3, 4], [5, 6, 7]])
    """

    def __init__(self, sampler: Any, batch_size: int, last_batch: str = "keep"):
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ArgumentError(f"BatchSampler: batch_size must be a positive int, got "
                                f"{batch_size!r}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = check_last_batch(last_batch)
        self._prev: list = []

    def __iter__(self) -> Iterator[list]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self) -> int:
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
