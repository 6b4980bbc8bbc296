"""The size budget: how large a tensor, and a graph's live tensors together, may become.

A model file of a few hundred bytes can ask for any amount of memory (``_zeros`` of shape
``(40000, 40000)``, an input declared that large, a row_sparse array whose logical shape is
10**12). Shape inference therefore computes the size of every tensor before anything runs, and
whatever exceeds the budget is refused with :class:`~gluonport.errors.ResourceLimitError`
naming the node and the size, before any allocation.

Limits
------
``max_tensor_bytes`` (default 1 GiB)
    One tensor. The largest tensors of the model-zoo CNNs at batch 64 are 784 MiB (VGG16's
    first two convolution outputs), 196 MiB (ResNet-50, DenseNet-121); a large embedding
    (32000 x 4096 float32) is 500 MiB. 1 GiB admits all of these and refuses a float32
    ``(20000, 20000)`` (1.5 GiB) made from a 300-byte file. Bigger batches of VGG-sized
    models need a raised limit.
``max_graph_bytes`` (default 8 GiB)
    The peak of the tensors alive at once when a graph runs in topological order (inputs and
    parameters throughout, each intermediate from the node that makes it to its last reader,
    as the numpy executor frees them). ResNet-50 and VGG16 at batch 64 peak at about 1 and
    2.2 GiB. Never below ``max_tensor_bytes``.

Sizes are elements times the dtype's size; where shape inference does not know a tensor's
dtype it counts 4 bytes (float32).

Configuration, first match wins: :func:`set_size_limit` / :func:`size_limit` (the
``gluonport.set_size_limit`` API and a context manager), the environment variables
``GLUONPORT_MAX_TENSOR_BYTES`` and ``GLUONPORT_MAX_GRAPH_BYTES``, the defaults above. The CLI
takes ``--max-tensor-bytes``. Sizes are bytes or a number with a binary suffix (``512M``,
``8G``, ``2GiB``); ``none`` turns a limit off.

Loop bounds: attributes that set how many outputs or inputs a node has (``num_outputs``,
``sections``, ``num_args``) are bounded by :data:`MAX_NODE_ARITY` when they are parsed, since
the output list is built before any shape is known.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import ArgumentError, ResourceLimitError

__all__ = ["DEFAULT_MAX_TENSOR_BYTES", "DEFAULT_MAX_GRAPH_BYTES", "MAX_NODE_ARITY",
           "set_size_limit", "size_limit", "get_size_limit", "parse_size", "format_size",
           "check_tensor", "check_arity", "check_graph", "check_peak"]

DEFAULT_MAX_TENSOR_BYTES = 1 << 30
DEFAULT_MAX_GRAPH_BYTES = 8 << 30
#: The most outputs (or variadic inputs) one node may declare. MXNet graphs use a few dozen
#: (an LSTM's unrolled split); 65536 keeps names and shape lists small.
MAX_NODE_ARITY = 1 << 16

ENV_TENSOR = "GLUONPORT_MAX_TENSOR_BYTES"
ENV_GRAPH = "GLUONPORT_MAX_GRAPH_BYTES"

_KEEP: Any = object()
_UNLIMITED = "none"
#: Explicit settings (``set_size_limit``); ``None`` means "not set here: environment/default".
_settings: dict[str, Any] = {"max_tensor_bytes": None, "max_graph_bytes": None}

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(text: str | int | float | None) -> int | None:
    """``"8G"`` -> ``8 * 2**30``; an int passes; ``"none"``/``None``/``inf`` -> ``None``
    (no limit). Suffixes are binary (k, M, G, T, optionally followed by ``B`` or ``iB``)."""
    if text is None:
        return None
    if isinstance(text, bool):
        raise ArgumentError(f"size limit {text!r} is not a number of bytes")
    if isinstance(text, (int, float)):
        if math.isinf(text) and text > 0:
            return None
        if text != text or text < 0 or text != int(text):
            raise ArgumentError(f"size limit {text!r} is not a whole number of bytes >= 0")
        return int(text)
    t = str(text).strip().lower()
    if t in (_UNLIMITED, "unlimited", "off", "inf"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d*)?)\s*([kmgtp]?)(?:i?b)?", t)
    if not m:
        raise ArgumentError(f"size limit {text!r} is not a size: give bytes or a number with "
                            "k, M, G or T (e.g. 512M, 8G), or 'none' for no limit")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def format_size(n: int) -> str:
    """``1610612736`` -> ``'1.5 GiB'``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _from_env(name: str, default: int) -> int | None:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        return parse_size(text)
    except ArgumentError as exc:
        raise ArgumentError(f"environment variable {name}: {exc}") from None


def get_size_limit() -> tuple[int | None, int | None]:
    """The limits in force: ``(max_tensor_bytes, max_graph_bytes)``; ``None`` is no limit."""
    tensor = _settings["max_tensor_bytes"]
    tensor = _from_env(ENV_TENSOR, DEFAULT_MAX_TENSOR_BYTES) if tensor is None else tensor
    graph = _settings["max_graph_bytes"]
    graph = _from_env(ENV_GRAPH, DEFAULT_MAX_GRAPH_BYTES) if graph is None else graph
    tensor = None if tensor == _UNLIMITED else tensor
    graph = None if graph == _UNLIMITED else graph
    if graph is not None and tensor is not None:
        graph = max(graph, tensor)
    elif tensor is None:
        graph = None  # one unlimited tensor can exceed any total
    return tensor, graph


def set_size_limit(max_tensor_bytes: int | str | None = _KEEP,
                   max_graph_bytes: int | str | None = _KEEP) -> dict[str, Any]:
    """Set the size budget for this process; returns the previous settings, which passed back
    (``set_size_limit(**old)``) restore them.

    Parameters
    ----------
    max_tensor_bytes:
        The largest one tensor may be: bytes, or a string such as ``"512M"``, ``"8G"``;
        ``"none"`` for no limit; ``None`` for the default (``GLUONPORT_MAX_TENSOR_BYTES`` or
        1 GiB). Left out: unchanged.
    max_graph_bytes:
        The most a graph's live tensors may take together (default
        ``GLUONPORT_MAX_GRAPH_BYTES`` or 8 GiB), same forms.

    >>> import gluonport
    >>> old = gluonport.set_size_limit(max_tensor_bytes="4G")
    >>> gluonport.set_size_limit(**old)["max_tensor_bytes"]
    4294967296
    """
    old = dict(_settings)
    for key, value in (("max_tensor_bytes", max_tensor_bytes),
                       ("max_graph_bytes", max_graph_bytes)):
        if value is _KEEP:
            continue
        if value is None:
            _settings[key] = None
        else:
            size = parse_size(value)
            _settings[key] = _UNLIMITED if size is None else size
    return old


@contextlib.contextmanager
def size_limit(max_tensor_bytes: int | str | None = _KEEP,
               max_graph_bytes: int | str | None = _KEEP) -> Iterator[None]:
    """:func:`set_size_limit` for the duration of a ``with`` block.

    >>> import gluonport
    >>> with gluonport.size_limit(max_tensor_bytes="16G"):    # doctest: +SKIP
    ...     model = gluonport.load("big-model.onnx")
    """
    old = set_size_limit(max_tensor_bytes, max_graph_bytes)
    try:
        yield
    finally:
        set_size_limit(**old)


def _advice() -> str:
    return (f"raise the limit with gluonport.set_size_limit(), {ENV_TENSOR}/{ENV_GRAPH} or "
            "the CLI's --max-tensor-bytes if this is intended")


def shape_bytes(shape: Iterable[int], itemsize: int) -> int:
    """Bytes of a tensor (Python ints: no overflow)."""
    return math.prod(int(d) for d in shape) * int(itemsize)


def check_tensor(what: str, shape: Iterable[int], itemsize: int = 4,
                 dtype: Any = None) -> None:
    """Refuse a tensor of ``shape`` larger than ``max_tensor_bytes``; ``what`` names it
    (``"node 'z' (_zeros): output 0"``, ``"input 'data'"``)."""
    limit = get_size_limit()[0]
    shape = tuple(int(d) for d in shape)
    if limit is None:
        return
    nbytes = shape_bytes(shape, itemsize)
    if nbytes > limit:
        kind = f" {dtype}" if dtype is not None else ""
        raise ResourceLimitError(
            f"{what}: shape {shape}{kind} needs {format_size(nbytes)}, over the size limit of "
            f"{format_size(limit)} per tensor; {_advice()}")


def check_arity(what: str, count: int, kind: str = "outputs") -> None:
    """Refuse a node declaring more than :data:`MAX_NODE_ARITY` outputs/inputs."""
    if count > MAX_NODE_ARITY:
        raise ResourceLimitError(f"{what}: {count} {kind} is more than a node may have "
                                 f"({MAX_NODE_ARITY})")


def itemsize_of(node: Any) -> int:
    """Bytes per element of a graph node's outputs as far as its attributes say (its
    ``dtype`` attribute, a variable's ``__dtype__``), else 4 (float32)."""
    from . import dtypes

    try:
        if node.op is None:
            flag = node.attrs.get("__dtype__")
            return dtypes.from_flag(int(flag)).numpy.itemsize if flag is not None else 4
        dt = node.params.get("dtype")
        if isinstance(dt, str) and dt not in ("None", ""):
            return max(1, dtypes.to_numpy(dt).itemsize)
    except Exception:  # noqa: BLE001 - a guess only; the op reports bad attributes itself
        pass
    return 4


def check_graph(order: list[Any], shapes: Mapping[tuple[int, int], Any]) -> None:
    """Check every known shape of a graph (``order``: nodes in topological order; ``shapes``
    keyed ``(id(node), output_index)`` as shape inference returns them) against the per-tensor
    limit, then the peak of the live tensors against the graph limit."""
    tensor_limit, graph_limit = get_size_limit()
    if tensor_limit is None and graph_limit is None:
        return
    sizes: dict[tuple[int, int], int] = {}
    for node in order:
        item = None
        n_out = 1 if node.op is None else node.num_outputs()
        for i in range(n_out):
            shape = shapes.get((id(node), i))
            if not shape or not all(shape):
                continue
            item = itemsize_of(node) if item is None else item
            nbytes = shape_bytes(shape, item)
            sizes[(id(node), i)] = nbytes
            if tensor_limit is not None and nbytes > tensor_limit:
                check_tensor(_describe(node, i, n_out), shape, item)
    if graph_limit is not None:
        _check_peak(order, sizes, graph_limit)


def _describe(node: Any, i: int, n_out: int) -> str:
    if node.op is None:
        return f"variable {node.name!r}"
    out = f" output {i}" if n_out > 1 else ""
    return f"node {node.name!r} ({node.op.name}){out}"


def _check_peak(order: list[Any], sizes: Mapping[tuple[int, int], int], limit: int) -> None:
    steps = [(_describe(n, 0, 1), [(id(s), i) for s, i in n.inputs if s.op is not None],
              [(id(n), i) for i in range(n.num_outputs())]) for n in order if n.op is not None]
    fixed = sum(sizes.get((id(n), 0), 0) for n in order if n.op is None)
    check_peak(steps, sizes, fixed, limit)


def check_peak(steps: list[tuple[str, list[Any], list[Any]]], sizes: Mapping[Any, int],
               fixed: int, limit: int | None = None, what: str = "") -> None:
    """Refuse a graph whose live tensors exceed ``limit`` (default: ``max_graph_bytes``).

    ``steps``: ``(name, input keys, output keys)`` per node in the order it runs; ``sizes``:
    bytes per key (unknown: absent); ``fixed``: bytes alive throughout (inputs, parameters).
    An intermediate lives from its step to the last step that reads it, as the executor frees
    it; ``what`` prefixes the message (a file name)."""
    limit = get_size_limit()[1] if limit is None else limit
    if limit is None:
        return
    where = f"{what}: " if what else ""
    if fixed > limit:
        raise ResourceLimitError(f"{where}the graph's inputs and parameters need "
                                 f"{format_size(fixed)}, over the size limit of "
                                 f"{format_size(limit)} per graph; {_advice()}")
    last: dict[Any, int] = {}
    for k, (_, ins, _) in enumerate(steps):
        for key in ins:
            last[key] = k
    release: dict[int, int] = {}
    for key, k in last.items():
        release[k] = release.get(k, 0) + sizes.get(key, 0)
    live = fixed
    for k, (name, _, outs) in enumerate(steps):
        live += sum(sizes.get(key, 0) for key in outs)
        if live > limit:
            raise ResourceLimitError(
                f"{where}{name}: the graph's live tensors reach {format_size(live)} here, over "
                f"the size limit of {format_size(limit)} per graph; {_advice()}")
        live -= release.get(k, 0)
