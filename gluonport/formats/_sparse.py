"""The sparse arrays MXNet stores in ``.params`` files: ``row_sparse`` and ``csr``.

MXNet's ``RowSparseNDArray`` keeps the non-zero rows (``data``) and their row numbers
(``indices``); ``CSRNDArray`` is a 2-d compressed-sparse-row matrix (``data``, ``indices`` = column
of each value, ``indptr`` = where each row starts). :class:`SparseArray` holds the same fields as
numpy arrays, exactly as stored, and expands them with :meth:`SparseArray.todense`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError

__all__ = ["SparseArray", "STYPES"]

STYPES = ("row_sparse", "csr")


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"sparse shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ShapeError(f"sparse shape {out} has a negative dimension")
    return out


class SparseArray:
    """A ``row_sparse`` or ``csr`` array, as ``mx.nd.sparse`` stores it.

    Parameters
    ----------
    stype:
        ``'row_sparse'`` or ``'csr'`` (MXNet storage types 1 and 2).
    shape:
        The logical (dense) shape. csr arrays are 2-d.
    data:
        row_sparse: the stored rows, shape ``(nnz_rows, *shape[1:])``; csr: the values, ``(nnz,)``.
    indices:
        row_sparse: the row number of each stored row; csr: the column of each value. 1-d ints.
    indptr:
        csr only: ``(rows + 1,)`` ints, row ``i`` owns ``data[indptr[i]:indptr[i + 1]]``.

    Raises
    ------
    ShapeError
        When the parts do not fit together (the checks MXNet's constructor makes).

    >>> a = SparseArray("row_sparse", (3, 2), np.ones((1, 2), "f4"), np.array([2]))
    >>> a.todense().tolist()
    [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    """

    __slots__ = ("stype", "shape", "data", "indices", "indptr")

    def __init__(self, stype: str, shape: Any, data: Any, indices: Any, indptr: Any = None):
        if stype not in STYPES:
            raise ShapeError(f"unknown sparse storage type {stype!r}; use one of {STYPES}")
        self.stype = stype
        self.shape = _shape_tuple(shape)
        self.data = np.asarray(data)
        self.indices = np.asarray(indices)
        self.indptr = None if indptr is None else np.asarray(indptr)
        if stype == "row_sparse":
            self._check_row_sparse()
        else:
            self._check_csr()

    def _check_row_sparse(self) -> None:
        if not self.shape:
            raise ShapeError("a row_sparse array needs at least one dimension")
        nrows = self.data.shape[0] if self.data.ndim else -1
        if self.data.shape[1:] != self.shape[1:] or self.data.ndim != len(self.shape):
            raise ShapeError(f"row_sparse data shape {self.data.shape} does not match the array "
                             f"shape {self.shape}: expected (nnz_rows, *{self.shape[1:]})")
        if self.indices.shape != (nrows,) or nrows > self.shape[0]:
            raise ShapeError(f"row_sparse indices shape {self.indices.shape} must be ({nrows},) "
                             f"for data of shape {self.data.shape} in an array of {self.shape}")
        if self.indptr is not None:
            raise ShapeError("a row_sparse array has no indptr")
        _check_int("indices", self.indices)

    def _check_csr(self) -> None:
        if len(self.shape) != 2:
            raise ShapeError(f"a csr array is 2-d, got shape {self.shape}")
        if self.indptr is None:
            raise ShapeError("a csr array needs indptr")
        if self.data.ndim != 1 or self.indices.shape != self.data.shape:
            raise ShapeError(f"csr data {self.data.shape} and indices {self.indices.shape} must "
                             "be 1-d and of the same length (nnz,)")
        if self.indptr.shape != (self.shape[0] + 1,):
            raise ShapeError(f"csr indptr shape {self.indptr.shape} must be "
                             f"({self.shape[0] + 1},) for {self.shape[0]} rows")
        _check_int("indices", self.indices)
        _check_int("indptr", self.indptr)

    @classmethod
    def from_dense(cls, dense: Any, stype: str) -> SparseArray:
        """Compress a dense array the way ``mx.nd.array(x).tostype(stype)`` does (int64 aux)."""
        arr = np.asarray(dense)
        if stype == "row_sparse":
            flat = arr.reshape(arr.shape[0], -1) if arr.ndim else arr.reshape(1, 1)
            rows = np.flatnonzero(np.any(flat != 0, axis=1)).astype(np.int64)
            return cls(stype, arr.shape, arr[rows], rows)
        if stype == "csr":
            if arr.ndim != 2:
                raise ShapeError(f"a csr array is 2-d, got shape {arr.shape}")
            r, c = np.nonzero(arr)
            indptr = np.zeros(arr.shape[0] + 1, np.int64)
            np.cumsum(np.bincount(r, minlength=arr.shape[0]), out=indptr[1:])
            return cls(stype, arr.shape, arr[r, c], c.astype(np.int64), indptr)
        raise ShapeError(f"unknown sparse storage type {stype!r}; use one of {STYPES}")

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the stored values."""
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements of the dense array."""
        return math.prod(self.shape)

    def todense(self) -> np.ndarray:
        """The dense numpy array; :class:`ShapeError` for indices out of range,
        :class:`~gluonport.errors.ResourceLimitError` when the logical shape is over the size
        budget (:mod:`gluonport._core.budget`: a 100-byte file can declare 10**12 rows)."""
        from .._core.budget import check_tensor

        check_tensor(f"{self.stype} array made dense", self.shape, self.data.dtype.itemsize,
                     self.data.dtype)
        try:
            out = np.zeros(self.shape, self.data.dtype)
        except ValueError as exc:  # numpy: "array is too big"
            raise ShapeError(f"cannot densify a {self.stype} array of shape {self.shape}: "
                             f"{exc}") from None
        if self.stype == "row_sparse":
            _check_range("row_sparse indices", self.indices, self.shape[0])
            out[self.indices] = self.data
            return out
        indptr, nnz = self.indptr, self.data.shape[0]
        if indptr[0] != 0 or indptr[-1] != nnz or np.any(np.diff(indptr) < 0):
            raise ShapeError(f"csr indptr must rise from 0 to nnz={nnz}, got {indptr.tolist()}")
        _check_range("csr indices", self.indices, self.shape[1])
        rows = np.repeat(np.arange(self.shape[0]), np.diff(indptr))
        out[rows, self.indices] = self.data
        return out

    asnumpy = todense

    def tostype(self, stype: str) -> np.ndarray | SparseArray:
        """``'default'``: the dense array (:meth:`todense`); the own stype: ``self``."""
        if stype == "default":
            return self.todense()
        if stype == self.stype:
            return self
        return SparseArray.from_dense(self.todense(), stype)

    def __repr__(self) -> str:
        return (f"SparseArray({self.stype!r}, shape={self.shape}, dtype={self.dtype}, "
                f"stored={self.data.shape[0] if self.data.ndim else 0})")


def _check_int(what: str, arr: np.ndarray) -> None:
    if arr.dtype.kind not in "iu":
        raise ShapeError(f"sparse {what} must be integers, got dtype {arr.dtype}")


def _check_range(what: str, idx: np.ndarray, bound: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= bound):
        raise ShapeError(f"{what} must lie in [0, {bound}), got {idx.min()}..{idx.max()}")
