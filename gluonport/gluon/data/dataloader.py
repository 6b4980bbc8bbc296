"""``DataLoader``: mini-batches of a dataset (``mxnet.gluon.data.dataloader``).

MXNet 1.9.1 loads batches in worker processes (or threads) when ``num_workers > 0``, moving
NDArrays between processes through shared memory. gluonport's arrays are numpy arrays in this
process, so every batch is made in the calling process: ``num_workers``, ``prefetch``,
``thread_pool`` and ``timeout`` are accepted (and checked as MXNet checks them) and change
nothing but speed. The batches are the same as MXNet's, except that MXNet puts a worker's
batches on ``cpu_shared(0)`` where gluonport leaves them on ``cpu(0)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ... import ndarray as nd
from ...context import Context, cpu_pinned
from ...errors import ArgumentError, DTypeError, ShapeError
from ...ndarray import NDArray
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]

_RaggedWarning = getattr(np, "exceptions", np).VisibleDeprecationWarning


def default_batchify_fn(data: list) -> Any:
    """Collate a list of samples into a batch, as MXNet's ``default_batchify_fn``.

    - NDArray samples are stacked (``nd.stack``) along a new first axis;
    - tuple samples are batched element by element, giving a *list* of batches (nested
      tuples recurse);
    - anything else (numpy arrays, numbers, lists of numbers) goes through
      ``numpy.asarray`` and becomes an NDArray of the dtype numpy chose (so ``int`` labels
      give int64, Python floats float64, float32 numpy rows float32).

    >>> default_batchify_fn([(1, 0.5), (2, 1.5)])[0]
    <BLANKLINE>
    [1 2]
    <NDArray 2 @cpu(0)>
    """
    if len(data) == 0:
        raise ArgumentError("default_batchify_fn: got an empty batch; a batch sampler must "
                            "yield non-empty lists of indices")
    first = data[0]
    if isinstance(first, NDArray):
        _check_shapes([x.shape if isinstance(x, NDArray) else np.shape(x) for x in data])
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(column)) for column in zip(*data)]
    arr = _as_numpy_batch(data)
    return nd.array(arr, dtype=arr.dtype)


def default_mp_batchify_fn(data: list) -> Any:
    """MXNet's batchify for worker processes (it stacks into shared memory); here the same
    as :func:`default_batchify_fn`, since batches are made in this process."""
    return default_batchify_fn(data)


def _check_shapes(shapes: list) -> None:
    for i, shape in enumerate(shapes):
        if tuple(shape) != tuple(shapes[0]):
            raise ShapeError(
                f"DataLoader: sample 0 of a batch has shape {tuple(shapes[0])} but sample {i} "
                f"has shape {tuple(shape)}; samples are stacked into one array, so they must "
                "have equal shapes: resize or pad them in a transform, or pass a batchify_fn "
                "that pads them")


def _as_numpy_batch(data: list) -> np.ndarray:
    """``numpy.asarray(data)``, refusing ragged samples and non-numeric ones clearly."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", _RaggedWarning)  # numpy < 1.24 warns on ragged input
        try:
            arr = np.asarray(data)
        except (ValueError, _RaggedWarning):
            arr = None
    if arr is None or arr.dtype == object:
        shapes = []
        for x in data:
            try:
                shapes.append(np.shape(x))
            except ValueError:  # a ragged nested list has no shape
                shapes.append(("ragged",))
        _check_shapes(shapes)
        raise DTypeError(f"DataLoader: samples of type {type(data[0]).__name__} cannot be "
                         "batched into a numeric array; return numbers, numpy arrays or "
                         "NDArrays from the dataset (or a transform), or pass a batchify_fn")
    if arr.dtype.kind not in "biuf":  # strings, bytes, complex, dates: no MXNet dtype
        raise DTypeError(f"DataLoader: samples of type {type(data[0]).__name__} (dtype "
                         f"{arr.dtype}) cannot be batched into an NDArray; convert them to "
                         "numbers in a transform, or pass a batchify_fn that keeps them")
    return arr


def _as_in_context(data: Any, ctx: Context) -> Any:
    """NDArrays (in nested lists/tuples, which become lists) moved to ``ctx``."""
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class DataLoader:
    """Loads a dataset and returns mini-batches, as MXNet 1.9.1's ``gluon.data.DataLoader``.

    Parameters
    ----------
    dataset : Dataset
        The samples; numpy arrays, NDArrays and lists serve directly.
    batch_size : int
        Size of a mini-batch (required unless ``batch_sampler`` is given).
    shuffle : bool
        Visit the samples in a new random order each epoch (numpy's global RNG).
    sampler : Sampler
        The order of the samples; not together with ``shuffle``.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        What to do when ``batch_size`` does not divide ``len(dataset)``: keep a short last
        batch, discard it, or roll its samples over into the next epoch's first batch.
    batch_sampler : Sampler
        Yields the lists of indices of each batch; then ``batch_size``, ``shuffle``,
        ``sampler`` and ``last_batch`` must not be given.
    batchify_fn : callable
        Turns a list of samples into a batch; :func:`default_batchify_fn` by default.
    num_workers : int, default 0
        MXNet's number of worker processes. Accepted; batches are made in the calling process.
    pin_memory : bool, default False
        Put the batches' NDArrays on ``cpu_pinned(pin_device_id)``, as MXNet does.
    pin_device_id : int, default 0
        The device id of the pinned context.
    prefetch, thread_pool, timeout, auto_reload
        MXNet's worker settings; accepted (``timeout`` must be positive, as in MXNet).
    try_nopython : None
        MXNet 2.0's option; accepted and ignored.

    A pass over the loader yields one batch per list of indices of the batch sampler.
    """

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False,
                 sampler: Any = None, last_batch: str | None = None, batch_sampler: Any = None,
                 batchify_fn: Callable[[list], Any] | None = None, num_workers: int = 0,
                 pin_memory: bool = False, pin_device_id: int = 0, prefetch: int | None = None,
                 thread_pool: bool = False, timeout: float = 120, auto_reload: bool = False,
                 try_nopython: bool | None = None):
        if not timeout > 0:
            raise ArgumentError(f"timeout must be positive, given {timeout}")
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._batch_sampler = _make_batch_sampler(dataset, batch_size, shuffle, sampler,
                                                  last_batch, batch_sampler)
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        self._batchify_fn = batchify_fn if batchify_fn is not None else default_batchify_fn
        self.auto_reload = auto_reload
        self._iter: Iterator | None = None
        if self.auto_reload:
            self.refresh()

    def __iter__(self) -> Iterator[Any]:
        if self._iter is None:
            self.refresh()
        batches, self._iter = self._iter, None  # one prepared pass is used once
        yield from batches
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self) -> Iterator[Any]:
        for indices in self._batch_sampler:
            batch = self._batchify_fn([self._dataset[i] for i in indices])
            if self._pin_memory:
                batch = _as_in_context(batch, cpu_pinned(self._pin_device_id))
            yield batch

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def refresh(self) -> None:
        """Prepare the next pass over the data (MXNet starts its workers' prefetch here)."""
        self._iter = self._prefetch_iter()

    def clean(self) -> None:
        """Drop a prepared pass; the next ``iter()`` prepares a new one."""
        self._iter = None


def _make_batch_sampler(dataset: Any, batch_size: int | None, shuffle: bool, sampler: Any,
                        last_batch: str | None, batch_sampler: Any) -> Any:
    """The batch sampler MXNet's DataLoader builds from its arguments (or the one given)."""
    if batch_sampler is not None:
        if batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ArgumentError("batch_size, shuffle, sampler and last_batch must not be "
                                "specified if batch_sampler is specified.")
        return batch_sampler
    if batch_size is None:
        raise ArgumentError("batch_size must be specified unless batch_sampler is specified")
    if sampler is None:
        if shuffle:
            sampler = _sampler.RandomSampler(len(dataset))
        else:
            sampler = _sampler.SequentialSampler(len(dataset))
    elif shuffle:
        raise ArgumentError("shuffle must not be specified if sampler is specified")
    return _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else "keep")
