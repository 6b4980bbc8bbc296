"""The gluonport exception tree.

Every error gluonport raises on purpose is a :class:`GluonportError`. Each subclass also inherits
the builtin exception it refines, so code written against MXNet (which raised ``MXNetError``,
``ValueError`` or ``NotImplementedError``) keeps catching what it caught before.

Messages follow one pattern: the subject (file, node, byte offset), what went wrong, then the fix.
"""

from __future__ import annotations

__all__ = [
    "GluonportError",
    "FormatError",
    "OpAttributeError",
    "ShapeError",
    "DTypeError",
    "UnsupportedOpError",
    "GraphError",
    "DeviceError",
    "ExecutionError",
    "ConversionError",
    "InputShapeError",
    "ParameterError",
    "ParameterNotInitializedError",
    "DeferredInitializationError",
    "ValidationError",
    "NotImplementedForSymbol",
    "ArgumentError",
    "ResourceLimitError",
]


class GluonportError(Exception):
    """Base class of every error gluonport raises on purpose."""


class FormatError(GluonportError, ValueError):
    """A file (``.params``, symbol JSON, ONNX) is malformed, truncated or of an unknown version.

    Parameters
    ----------
    message:
        What is wrong and how to fix it.
    path:
        The file, when known; it is put in front of the message.
    offset:
        The byte offset where the problem was found, for binary files.
    """

    def __init__(self, message: str, path: str | None = None, offset: int | None = None):
        self.path = path
        self.offset = offset
        self.detail = message
        where = ""
        if path is not None:
            where = f"{path}: "
        if offset is not None:
            where += f"at byte {offset}: "
        super().__init__(where + message)


class OpAttributeError(GluonportError, ValueError):
    """An operator attribute is missing, unknown or has a value that does not parse."""


class ShapeError(GluonportError, ValueError):
    """Shapes do not agree (shape inference, or arrays given to an op)."""


class DTypeError(GluonportError, TypeError):
    """A dtype is unknown or not supported where it is used."""


class UnsupportedOpError(GluonportError, NotImplementedError):
    """One or more operators have no implementation (compute or converter).

    ``ops`` maps each unsupported op name to the node names that use it, so one error can list
    every problem in a graph at once.
    """

    def __init__(self, message: str, ops: dict[str, list[str]] | None = None):
        self.ops = dict(ops or {})
        super().__init__(message)


class GraphError(GluonportError, ValueError):
    """A graph is malformed: dangling inputs, cycles, unknown names, missing arguments."""


class DeviceError(GluonportError, RuntimeError):
    """A device (context) was asked for that cannot be used."""


class ExecutionError(GluonportError, RuntimeError):
    """A graph failed while it ran: the engine (onnxruntime) reported an error on valid inputs."""


class ConversionError(GluonportError, RuntimeError):
    """A conversion (MXNet <-> ONNX) failed for a reason other than an unsupported op."""


class InputShapeError(ConversionError):
    """Input shapes are needed and neither given nor recorded in the graph (Gluon's ``export``
    records none). ``inputs`` names the inputs whose shape is missing, so a front end (the CLI)
    can word the fix in its own terms."""

    def __init__(self, message: str, inputs: list[str]):
        self.inputs = list(inputs)
        super().__init__(message)


class ParameterError(GluonportError, ValueError):
    """A Gluon Parameter is used wrongly: missing, extra, shape or dtype mismatch."""


class ParameterNotInitializedError(ParameterError, RuntimeError):
    """A Parameter's data is used before ``initialize()`` (or on a context it was not
    initialized on). MXNet raises ``RuntimeError`` here, so this is one too."""


class DeferredInitializationError(GluonportError, RuntimeError):
    """A Parameter's shape is not known yet; it is initialized on the first forward pass.

    Mirrors ``mxnet.gluon.parameter.DeferredInitializationError``.
    """


class NotImplementedForSymbol(GluonportError, NotImplementedError):
    """An NDArray-only operation was used on a Symbol, usually inside ``hybrid_forward`` while
    a hybridized block is traced (mirrors ``mxnet.base.NotImplementedForSymbol``)."""


class ArgumentError(GluonportError, ValueError):
    """A function was called with arguments that do not fit together or are out of range
    (``DataLoader(batch_size=None)``, ``last_batch='drop'``); MXNet raised ``ValueError`` or
    failed an ``assert`` there."""


class ResourceLimitError(GluonportError, MemoryError):
    """A tensor, input or graph would need more memory than the size budget allows
    (:mod:`gluonport._core.budget`), or an attribute that drives a loop (``num_outputs``) is out of
    bounds. Raised before anything is allocated; the message names the node and the size.
    Also a ``MemoryError``, which is what the allocation would have raised (if anything)."""


class ValidationError(GluonportError, AssertionError):
    """Two results that must agree numerically do not."""
