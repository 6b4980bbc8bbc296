"""``gluon.utils``: splitting batches across devices, global-norm clipping and file helpers
(``mxnet.gluon.utils`` of MXNet 1.9.1).

gluonport never touches the network: :func:`download` returns a file that is already where
MXNet would have put it (checking its SHA-1 when one is given), and otherwise raises a
:class:`~gluonport.errors.GluonportError` that says which URL to fetch and where to save it.
"""

from __future__ import annotations

import itertools
import os
import warnings
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import ndarray as nd
from .._core.hashing import file_digest
from ..context import Context
from ..errors import ArgumentError, GluonportError, ShapeError
from ..ndarray import NDArray

__all__ = ["HookHandle", "split_data", "split_and_load", "clip_global_norm", "check_sha1",
           "download", "replace_file"]


def split_data(data: Any, num_slice: int, batch_axis: int = 0,
               even_split: bool = True) -> list:
    """Split ``data`` into ``num_slice`` slices along ``batch_axis``.

    Like MXNet, the first ``size % num_slice`` slices get one element more when
    ``even_split=False`` (slices may be empty when ``num_slice`` exceeds the size); with
    ``even_split=True`` an uneven size is an error. Slices along axis 0 are views of ``data``,
    along other axes copies. Always returns a list, even for one slice.

    >>> [s.shape for s in split_data(nd.zeros((5, 2)), 2, even_split=False)]
    [(3, 2), (2, 2)]
    """
    if not isinstance(num_slice, (int, np.integer)) or num_slice < 1:
        raise ArgumentError(f"split_data: num_slice must be a positive int, got {num_slice!r}")
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ShapeError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices "
            f"along axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            "even_split=False to allow uneven partitioning of data.")
    each, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extras + [each] * (num_slice - extras))
    if batch_axis == 0:
        return [data[int(bounds[i]):int(bounds[i + 1])] for i in range(num_slice)]
    return [nd.slice_axis(data, axis=batch_axis, begin=int(bounds[i]), end=int(bounds[i + 1]))
            for i in range(num_slice)]


def split_and_load(data: Any, ctx_list: list[Context], batch_axis: int = 0,
                   even_split: bool = True) -> list[NDArray]:
    """Split ``data`` into ``len(ctx_list)`` slices along ``batch_axis`` and put slice ``i``
    on ``ctx_list[i]`` (the data-parallel pattern ``for x in split_and_load(batch, ctxs)``).

    A numpy array (or list) is first made an NDArray on ``ctx_list[0]`` (float32, as
    ``nd.array`` does). With one context the whole array is returned in a list, unsplit.
    """
    if len(ctx_list) == 0:
        raise ArgumentError("split_and_load: ctx_list is empty; pass e.g. [mx.cpu()]")
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def clip_global_norm(arrays: list[NDArray], max_norm: float,
                     check_isfinite: bool = True) -> Any:
    """Scale ``arrays`` in place so that their global 2-norm is at most ``max_norm``.

    The global norm is ``sqrt(sum of every element squared)`` over all arrays; each array is
    multiplied by ``min(1, max_norm / (norm + 1e-8))``. Returns the norm before scaling: a
    float (numpy float32) when ``check_isfinite`` is true, which also warns when it is nan or
    inf, else a shape-``(1,)`` NDArray.
    """
    if len(arrays) == 0:
        raise ArgumentError("clip_global_norm: arrays is empty; pass the list of gradients "
                            "(or other NDArrays) to rescale")
    ctx = arrays[0].context
    squares = [nd.dot(a.reshape((-1,)), a.reshape((-1,))).as_in_context(ctx) for a in arrays]
    total_norm = nd.sqrt(nd.add_n(*squares))
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                  "undefined."), stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = nd.min(nd.concat(scale, nd.ones(1, ctx=ctx), dim=0))
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    return total_norm.asscalar() if check_isfinite else total_norm


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the SHA-1 of the file's content is ``sha1_hash`` (hex digits)."""
    return file_digest(filename, "sha1") == sha1_hash


def replace_file(src: str, dst: str) -> None:
    """Move ``src`` onto ``dst`` atomically (``os.replace``); on failure remove ``src`` and
    raise ``OSError``, as MXNet does for a downloaded temporary file."""
    try:
        os.replace(src, dst)
    except OSError as exc:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"Moving downloaded temp file - {src}, to {dst} failed. Please retry "
                      "the download.") from exc


def download(url: str, path: str | None = None, overwrite: bool = False,
             sha1_hash: str | None = None, retries: int = 5, verify_ssl: bool = True) -> str:
    """The local file MXNet's ``download(url, path)`` would have produced.

    The file name is chosen as MXNet chooses it (``path``; a directory ``path`` gets the
    URL's last component; no ``path``: that component in the current directory). When the
    file exists, ``overwrite`` is false and its SHA-1 matches ``sha1_hash`` (if given), its
    name is returned, as MXNet returns it without downloading. Otherwise gluonport, which
    does no network access, raises a GluonportError naming the URL and where to save it.
    """
    fname = _download_target(url, path)
    if retries < 0:
        raise ArgumentError(f"Number of retries should be at least 0, currently it's {retries}")
    if not overwrite and os.path.exists(fname):
        if not sha1_hash or check_sha1(fname, sha1_hash):
            return fname
        reason = f"it exists but its SHA-1 is not {sha1_hash} (incomplete or outdated copy)"
    elif overwrite:
        reason = "overwrite=True asks for a fresh download"
    else:
        reason = "it does not exist"
    check = f" and check that its SHA-1 is {sha1_hash}" if sha1_hash else ""
    raise GluonportError(
        f"{fname}: {reason}, and gluonport does not download files. Fetch {url} yourself "
        f"(for instance with curl -L -o), save it as {os.path.abspath(fname)}{check}, then "
        "run again" + (" without overwrite=True." if overwrite else "."))


def _download_target(url: str, path: str | None) -> str:
    """MXNet's choice of local file name for ``url``."""
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise ArgumentError(f"download: can't construct a file name from the URL {url!r}. "
                                "Please set the `path` option manually.")
        return fname
    path = os.path.expanduser(path)
    if os.path.isdir(path):
        return os.path.join(path, url.split("/")[-1])
    return path


class HookHandle:
    """Returned by ``register_forward_hook``; ``detach()`` removes the hook."""

    _ids = itertools.count()

    def __init__(self) -> None:
        self._hooks_dict_ref: Any = None
        self._id = next(HookHandle._ids)

    def attach(self, hooks_dict: OrderedDict, hook: Any) -> None:
        if self._hooks_dict_ref is not None:
            raise RuntimeError("The same handle cannot be attached twice.")
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()
