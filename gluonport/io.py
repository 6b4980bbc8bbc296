"""``mx.io`` for inference code: ``DataDesc``, ``DataBatch``, ``DataIter``, ``NDArrayIter``.

Legacy MXNet inference scripts feed a ``Module`` with ``mx.io.DataBatch(data=[x])`` or iterate
an ``NDArrayIter``; these mirror MXNet 1.9.1's classes (names, defaults, the padding of the last
batch). Record-file and image iterators (``ImageRecordIter``, ...) read MXNet's C++ data
pipeline formats and are not provided: read images with your own code and wrap the arrays.
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Iterator
from typing import Any

import numpy as np

from .errors import GluonportError
from .ndarray import NDArray
from .ndarray import array as nd_array

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """``(name, shape)`` plus ``dtype`` and ``layout`` attributes, as MXNet's ``DataDesc``
    (a namedtuple, so ``('data', (1, 3, 224, 224))`` tuples and DataDescs mix freely)."""

    def __new__(cls, name: str, shape: Any, dtype: Any = np.float32, layout: str = "NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """Index of ``N`` in ``layout`` (0 when there is no layout)."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes: list, types: list | None) -> list[DataDesc]:
        """DataDescs from ``(name, shape)`` pairs and optional ``(name, dtype)`` pairs."""
        if types is None:
            return [DataDesc(n, s) for n, s in shapes]
        dtypes = dict(types)
        return [DataDesc(n, s, dtypes[n]) for n, s in shapes]


class DataBatch:
    """One batch: ``data`` (a list of NDArrays), ``label``, ``pad`` (samples at the end that
    only fill the batch), ``index``, ``bucket_key``, ``provide_data``, ``provide_label``."""

    def __init__(self, data: Any, label: Any = None, pad: int | None = None,
                 index: Any = None, bucket_key: Any = None, provide_data: Any = None,
                 provide_label: Any = None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise GluonportError("DataBatch: data must be a list of NDArrays, e.g. "
                                 "DataBatch(data=[x])")
        if label is not None and not isinstance(label, (list, tuple)):
            raise GluonportError("DataBatch: label must be a list of NDArrays")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data = [d.shape for d in self.data] if self.data else None
        label = [lb.shape for lb in self.label] if self.label else None
        return f"{self.__class__.__name__}: data shapes: {data} label shapes: {label}"


class DataIter:
    """Base iterator: ``reset``, ``next`` (raises StopIteration), ``iter_next``, ``getdata``,
    ``getlabel``, ``getindex``, ``getpad``; iterating yields DataBatches."""

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[DataBatch]:
        return self

    def reset(self) -> None:
        pass

    def next(self) -> DataBatch:
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        return False

    def getdata(self) -> list[NDArray]:
        return []

    def getlabel(self) -> list[NDArray]:
        return []

    def getindex(self) -> Any:
        return None

    def getpad(self) -> int:
        return 0


def _named(data: Any, default: str) -> OrderedDict[str, np.ndarray]:
    """MXNet's ``_init_data``: an array, a list of arrays (``_0_data``, ...) or a dict."""
    if data is None:
        return OrderedDict()
    if isinstance(data, (np.ndarray, NDArray)) or np.isscalar(data):
        items = [(default, data)]
    elif isinstance(data, (list, tuple)):
        items = ([(default, data[0])] if len(data) == 1 else
                 [(f"_{i}_{default}", d) for i, d in enumerate(data)])
    elif isinstance(data, dict):
        items = list(data.items())
    else:
        raise GluonportError(f"NDArrayIter: data must be an array, a list or a dict of arrays, "
                             f"not {type(data).__name__}")
    out = OrderedDict()
    for name, value in items:
        value = value.asnumpy() if isinstance(value, NDArray) else np.asarray(value)
        out[name] = value
    return out


class NDArrayIter(DataIter):
    """Batches over in-memory arrays, as MXNet's ``NDArrayIter``.

    ``last_batch_handle``: ``'pad'`` (default; the last batch is filled from the start of the
    data and ``pad`` says how many samples are filler), ``'discard'`` (the incomplete batch is
    dropped) or ``'roll_over'`` (it is dropped from this pass and its samples start the next;
    as in MXNet, that first batch reports their count as ``pad``).
    ``shuffle`` permutes the samples once, at construction, with numpy's global generator.
    """

    def __init__(self, data: Any, label: Any = None, batch_size: int = 1,
                 shuffle: bool = False, last_batch_handle: str = "pad",
                 data_name: str = "data", label_name: str = "softmax_label"):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise GluonportError(f"NDArrayIter: last_batch_handle={last_batch_handle!r} is not "
                                 "'pad', 'discard' or 'roll_over'")
        if batch_size < 1:
            raise GluonportError(f"NDArrayIter: batch_size must be >= 1, got {batch_size}")
        self.data = _named(data, data_name)
        self.label = _named(label, label_name)
        sizes = {v.shape[0] for v in list(self.data.values()) + list(self.label.values())}
        if len(sizes) != 1:
            raise GluonportError(f"NDArrayIter: all arrays need the same first dimension, got "
                                 f"{sorted(sizes)}")
        self.num_data = sizes.pop()
        self.idx = np.arange(self.num_data)
        if shuffle:
            np.random.shuffle(self.idx)
        self.last_batch_handle = last_batch_handle
        self._order = self.idx
        self._carried = 0
        self.cursor = -batch_size

    @property
    def provide_data(self) -> list[DataDesc]:
        return [DataDesc(k, (self.batch_size, *v.shape[1:]), v.dtype)
                for k, v in self.data.items()]

    @property
    def provide_label(self) -> list[DataDesc]:
        return [DataDesc(k, (self.batch_size, *v.shape[1:]), v.dtype)
                for k, v in self.label.items()]

    def reset(self) -> None:
        carry = self.idx[:0]
        if self.last_batch_handle == "roll_over" and 0 <= self.cursor < len(self._order):
            carry = self._order[self.cursor:]  # what the last pass left: it starts this one
        self._order = np.concatenate([carry, self.idx]) if len(carry) else self.idx
        self._carried = len(carry)
        self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        n = len(self._order)
        if self.last_batch_handle == "pad":
            return self.cursor < n
        return self.cursor + self.batch_size <= n

    def _take(self, arrays: OrderedDict[str, np.ndarray]) -> list[NDArray]:
        n = len(self._order)
        picks = np.arange(self.cursor, self.cursor + self.batch_size) % n
        return [nd_array(v[self._order[picks]], dtype=v.dtype) for v in arrays.values()]

    def getdata(self) -> list[NDArray]:
        return self._take(self.data)

    def getlabel(self) -> list[NDArray]:
        return self._take(self.label)

    def getindex(self) -> np.ndarray:
        picks = np.arange(self.cursor, self.cursor + self.batch_size) % len(self._order)
        return self._order[picks]

    def getpad(self) -> int:
        n = len(self._order)
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > n:
            return self.cursor + self.batch_size - n
        if self.last_batch_handle == "roll_over" and self.cursor == 0:
            return self._carried  # MXNet reports the carried samples as the first batch's pad
        return 0
