"""Datasets: indexable collections of samples (``mxnet.gluon.data.dataset``).

A dataset is anything with ``__getitem__`` and ``__len__``; numpy arrays, NDArrays and lists
serve directly. :class:`Dataset` adds MXNet's chainable views: ``transform``,
``transform_first``, ``filter``, ``shard``, ``take`` and ``sample``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ...errors import ArgumentError
from ...ndarray import NDArray
from ._recordio import IndexedRecordReader

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` (the i-th sample) and
    ``__len__``. An MXNet or numpy array can be used as a dataset directly."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def filter(self, fn: Callable[[Any], bool]) -> Dataset:
        """The samples for which ``fn(sample)`` is true (every sample is read once, now).

        >>> list(SimpleDataset(list(range(6))).filter(lambda v: v % 2 == 0))
        [0, 2, 4]
        """
        from .sampler import FilterSampler

        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """The ``index``-th of ``num_shards`` contiguous parts; the first ``len % num_shards``
        parts hold one sample more (shard before shuffling, so that each worker of a
        distributed job sees its own samples).

        >>> [list(SimpleDataset(list(range(10))).shard(3, i)) for i in range(3)]
        [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
        """
        if not index < num_shards:
            raise ArgumentError(f"Shard index of out bound: {index} out of {num_shards}")
        if not num_shards > 0:
            raise ArgumentError("Number of shards must be greater than 0")
        if not index >= 0:
            raise ArgumentError("Index must be non-negative")
        shard_len, rest = divmod(len(self), num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler

        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count: int | None) -> Dataset:
        """The first ``count`` samples (all of them when ``count`` is None or too large)."""
        if count is None or count > len(self):
            count = len(self)
        if count < 0:
            raise ArgumentError(f"Dataset.take: count must be >= 0 or None, got {count}")
        from .sampler import SequentialSampler

        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler: Any) -> Dataset:
        """The samples at the indices ``sampler`` yields (a :class:`Sampler`)."""
        from .sampler import Sampler

        if not isinstance(sampler, Sampler):
            raise ArgumentError(f"Invalid sampler type: {type(sampler)}. Expected "
                                "gluon.data.Sampler instead.")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> Dataset:
        """Each sample passed through ``fn``; a tuple sample is passed as ``fn(*sample)``.

        With ``lazy=True`` (the default) ``fn`` runs whenever a sample is read, so a random
        augmentation differs between epochs; ``lazy=False`` runs it on every sample now and
        returns a :class:`SimpleDataset` of the results.
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> Dataset:
        """Like :meth:`transform`, but ``fn`` changes only the first element of a tuple sample
        (the data, leaving the label as it is)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array)."""

    def __init__(self, data: Any):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """``fn`` applied to each sample when it is read."""

    def __init__(self, data: Any, fn: Callable[..., Any]):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """``fn`` on the first element only (a class, not a closure, so that it pickles)."""

    def __init__(self, fn: Callable[[Any], Any]):
        self._fn = fn

    def __call__(self, x: Any, *args: Any) -> Any:
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the indices a sampler yields (drawn once, now)."""

    def __init__(self, dataset: Any, sampler: Any):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self) -> int:
        return len(self._sampler)

    def __getitem__(self, idx: int) -> Any:
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Several equally long dataset-like objects side by side: sample ``i`` is
    ``(a[i], b[i], ...)``, or ``a[i]`` alone when there is one.

    Members stay what they are (a numpy array is indexed as numpy, and the DataLoader's
    batchify makes NDArrays of the batch), except that a 1-D NDArray becomes a numpy array,
    as in MXNet, so that its samples are scalars rather than shape-``(1,)`` arrays.

    >>> ArrayDataset([1, 2, 3], ['a', 'b', 'c'])[1]
    (2, 'b')
    """

    def __init__(self, *args: Any):
        if len(args) == 0:
            raise ArgumentError("Needs at least 1 arrays")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ArgumentError(
                    f"All arrays must have the same length; array[0] has length "
                    f"{self._length} while array[{i + 1}] has {len(data)}.")
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """The raw records (``bytes``) of an MXNet RecordIO file, in the order of its index.

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file; the index is the ``.idx`` file of the same name.
    """

    def __init__(self, filename: str):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = IndexedRecordReader(self.idx_file, self.filename)

    def __getitem__(self, idx: int) -> bytes:
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)


class _DownloadedDataset(Dataset):
    """Base of the datasets MXNet downloads (MNIST, CIFAR...): ``_get_data`` fills
    ``self._data`` and ``self._label`` from files under ``root``."""

    def __init__(self, root: str, transform: Callable[[Any, Any], Any] | None):
        super().__init__()
        self._transform = transform
        self._data: Any = None
        self._label: Any = None
        self._root = os.path.expanduser(root)
        if not os.path.isdir(self._root):
            os.makedirs(self._root)
        self._get_data()

    def __getitem__(self, idx: int) -> Any:
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self) -> int:
        return len(self._label)

    def _get_data(self) -> None:
        raise NotImplementedError
