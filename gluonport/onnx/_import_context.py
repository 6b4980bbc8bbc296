"""The ONNX import table and the context its handlers build MXNet graphs with.

A handler converts one ONNX node. It is registered for an ONNX op type (and domain) with the
first ONNX version of the op it serves, takes the node's inputs as :class:`Value` s and the
node's attributes as keyword arguments with ONNX's defaults, and returns the output Symbols
(or numpy arrays, for outputs known without running the model)::

    @importer("LeakyRelu", since=6)
    def leaky_relu(ctx, x, *, alpha=0.01):
        return ctx.op("LeakyReLU", x.sym, act_type="leaky", slope=alpha)

The importer picks the newest handler whose ``since`` is <= the model's version of the op
(the op's ``since_version`` in onnx's schema for the model's opset).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core import dtypes
from ..errors import DTypeError, UnsupportedOpError
from ..symbol import Symbol
from ..symbol.symbol import invoke, var

__all__ = ["importer", "Handler", "handlers_for", "select_handler", "Value", "ImportContext",
           "REVIEWED_OPSET", "unsupported", "op_version"]

REVIEWED_OPSET = 28
"""The newest default-domain opset whose op versions the handlers were written against
(onnx 1.23's). An op whose version in a model is newer than its version at this opset may
have changed meaning: it imports with a warning (an error with ``strict=True``)."""


@dataclass(frozen=True)
class Handler:
    op_type: str
    domain: str
    since: int
    fn: Callable[..., Any]
    attrs: frozenset[str] | None  # keyword attributes it takes; None = any (**kwargs)


_TABLE: dict[tuple[str, str], list[Handler]] = {}


def _keywords(fn: Callable) -> frozenset[str] | None:
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind is p.KEYWORD_ONLY)


def importer(op_type: str | tuple[str, ...], since: int = 1, domain: str = ""
             ) -> Callable[[Callable], Callable]:
    """Register ``fn`` as the import handler of ``op_type`` (one name or several) for op
    versions >= ``since``; the same ``(domain, op_type, since)`` twice is refused."""
    names = (op_type,) if isinstance(op_type, str) else tuple(op_type)

    def deco(fn: Callable) -> Callable:
        for name in names:
            rows = _TABLE.setdefault((domain, name), [])
            if any(h.since == since for h in rows):
                raise ValueError(f"two ONNX import handlers for {domain or 'ai.onnx'}::{name} "
                                 f"since version {since}")
            rows.append(Handler(name, domain, since, fn, _keywords(fn)))
            rows.sort(key=lambda h: h.since)
        return fn

    return deco


def handlers_for(domain: str, op_type: str) -> list[Handler]:
    """Handlers of one op, oldest first (empty when the op is not supported)."""
    return list(_TABLE.get((_norm_domain(domain), op_type), ()))


def all_handlers() -> dict[tuple[str, str], list[Handler]]:
    return {k: list(v) for k, v in _TABLE.items()}


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def op_version(op_type: str, domain: str, opset: int) -> int | None:
    """The op's ``since_version`` in effect at ``opset`` (onnx's schema), or None if unknown."""
    import onnx

    try:
        return onnx.defs.get_schema(op_type, max_inclusive_version=opset,
                                    domain=_norm_domain(domain)).since_version
    except Exception:  # noqa: BLE001 - SchemaError: unknown op or too old an opset
        return None


def select_handler(op_type: str, domain: str, opset: int) -> tuple[Handler | None, int, str]:
    """``(handler, op version, problem)``: the newest handler whose ``since`` <= the model's
    version of the op; ``problem`` is '' or why the op cannot be imported as asked."""
    rows = handlers_for(domain, op_type)
    if not rows:
        return None, 0, "no import handler"
    version = op_version(op_type, domain, opset)
    if version is None:
        version = opset  # a custom domain without schemas: its opset is the op's version
    best = None
    for h in rows:
        if h.since <= version:
            best = h
    if best is None:
        return None, version, f"version {version} is older than the oldest handled " \
                              f"({rows[0].since})"
    return best, version, ""


def unsupported(node: str, op_type: str, why: str) -> UnsupportedOpError:
    """The error a handler raises for a node it cannot convert (collected and reported with
    every other problem of the graph)."""
    return UnsupportedOpError(f"node {node!r} ({op_type}): {why}", {op_type: [node]})


class Value:
    """One input of the node being converted.

    ``const`` is its numpy value when known without running the model (initializers,
    constants, folded subgraphs); ``shape`` and ``dtype`` come from ONNX shape inference
    (dims are ints, or ``None``/a name when not static). ``sym`` is the MXNet Symbol; for a
    constant it is created on first use, as a parameter variable named after the tensor.
    """

    __slots__ = ("name", "const", "shape", "dtype", "_sym", "_ctx")

    def __init__(self, ctx: ImportContext, name: str, sym: Symbol | None = None,
                 const: np.ndarray | None = None, shape: tuple | None = None,
                 dtype: np.dtype | None = None):
        self._ctx = ctx
        self.name = name
        self._sym = sym
        self.const = const
        self.shape = tuple(const.shape) if const is not None else shape
        self.dtype = const.dtype if const is not None else dtype

    @property
    def sym(self) -> Symbol:
        if self._sym is None:
            self._sym = self._ctx.param(self.name, self.const)
        return self._sym

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def static_shape(self) -> tuple[int, ...] | None:
        """The shape when every dim is a known int, else None."""
        if self.shape is None or not all(isinstance(d, int) for d in self.shape):
            return None
        return tuple(self.shape)

    def ints(self) -> list[int]:
        """The constant's values as Python ints (an input that must be constant)."""
        if self.const is None:
            self._ctx.needs_const.add(self.name)
            raise self._ctx.fail(f"input {self.name!r} must be a constant (an initializer or "
                                 "computable from constants) to map onto MXNet attributes")
        return [int(v) for v in np.asarray(self.const).reshape(-1)]

    def floats(self) -> list[float]:
        if self.const is None:
            self._ctx.needs_const.add(self.name)
            raise self._ctx.fail(f"input {self.name!r} must be a constant (an initializer or "
                                 "computable from constants) to map onto MXNet attributes")
        return [float(v) for v in np.asarray(self.const).reshape(-1)]

    def __repr__(self) -> str:
        kind = "const" if self.const is not None else "sym"
        return f"<Value {self.name} {kind} {self.shape} {self.dtype}>"


_NAME_OK = re.compile(r"[^A-Za-z0-9_.\-/:]")


class ImportContext:
    """State of one import: names, parameters, and the node being converted.

    Handlers use :meth:`op` to create MXNet nodes (named after the ONNX node, made unique),
    :meth:`param` for constant tensors, :meth:`fail` for what they cannot convert, and
    ``ctx.opset`` / ``ctx.version`` (the model's opset for the domain / the op's version).
    """

    def __init__(self, reserved: set[str], strict: bool = False):
        self.reserved = frozenset(reserved)
        self.used: set[str] = set(reserved)
        self.params: dict[str, np.ndarray] = {}
        self.strict = strict
        self.node_name = ""
        self.op_type = ""
        self.opset = 0
        self.version = 0
        self.out_types: list[tuple] = []
        self._created: list = []
        self._param_syms: dict[str, Symbol] = {}
        self.needs_const: set[str] = set()
        # why MXNet 1.9.1 itself cannot run what was built (_import_mxlimits.py); the importer
        # warns once per model
        self.mxnet_limits: list[str] = []
        self.symbolic: dict[str, list] = {}  # shape vectors with named dims (folding)
        self.dim_sources: dict[str, tuple[Symbol, int]] = {}  # named dim -> (graph input, axis)
        # set by the importer, for control-flow bodies (_import_body.py): the Value of an
        # enclosing-graph tensor by name, the model's opsets, and import_graph itself
        self.lookup: Callable[[str], Value | None] | None = None
        self.opsets: dict[str, int] = {}
        self.graph_importer: Callable[..., Any] | None = None

    # --- per node ---------------------------------------------------------------------------
    def begin(self, node_name: str, op_type: str, opset: int, version: int,
              out_types: list[tuple]) -> str:
        base = _NAME_OK.sub("_", node_name) or op_type.lower()
        self.node_name = self.unique(base)
        self.op_type, self.opset, self.version = op_type, opset, version
        self.out_types = out_types
        self._created = []
        return self.node_name

    def unique(self, base: str) -> str:
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def fail(self, why: str) -> UnsupportedOpError:
        """The error to raise for something this node uses that MXNet cannot express."""
        return unsupported(self.node_name, self.op_type, why)

    # --- building ---------------------------------------------------------------------------
    def op(self, op_name: str, *inputs: Symbol, **attrs: Any) -> Symbol:
        """An MXNet node ``op_name(*inputs, **attrs)`` with a unique name from the ONNX node."""
        name = self.unique(f"{self.node_name}_{op_name.lstrip('_').lower()}")
        out = invoke(op_name, inputs, {**attrs, "name": name})
        self._created.append(out._outputs[0][0])
        return out

    def created_ops(self) -> list[str]:
        """The MXNet op names this node's handler has created so far."""
        return [getattr(n.op, "name", n.op) for n in self._created]

    def mxnet_cannot(self, why: str) -> None:
        """Note that MXNet 1.9.1 cannot run what this node became (the import still succeeds;
        :func:`~gluonport.onnx.importer.import_graph` warns)."""
        self.mxnet_limits.append(f"{self.op_type} {self.node_name!r}: {why}")

    def finish_names(self, outputs: list) -> None:
        """Give the node's main MXNet node the ONNX node's name (MXNet names nodes so)."""
        first = next((o for o in outputs if isinstance(o, Symbol)), None)
        if first is None:
            return
        node = first._outputs[0][0]
        if any(node is c for c in self._created):
            self.used.discard(node.name)
            node.name = self.node_name

    def param(self, name: str, value: np.ndarray) -> Symbol:
        """A parameter variable holding ``value`` (an ``arg_params`` entry named ``name``)."""
        if name in self._param_syms:
            return self._param_syms[name]
        key = name
        if name in self.used and name not in self.reserved:
            name = self.unique(name)  # a tensor named like an MXNet node made before
        s = self._register(name, value)
        self._param_syms[key] = s
        return s

    def _register(self, name: str, value: np.ndarray) -> Symbol:
        value = np.asarray(value)
        if value.ndim == 0:
            value = value.reshape(1)  # MXNet 1.x has no 0-d arrays (as its importer does)
        try:
            dt = dtypes.from_numpy(value.dtype)
        except DTypeError:
            raise self.fail(f"tensor {name!r} has type {value.dtype}, which MXNet 1.x "
                            "parameters cannot hold") from None
        self.used.add(name)
        self.params[name] = value
        return var(name, shape=value.shape, dtype=dt.name)

    def new_param(self, hint: str, value: Any, dtype: Any = None) -> Symbol:
        """A new parameter ``value`` named ``hint`` (made unique): weights a handler
        re-lays out (transposed Gemm weights, RNN's flat parameter vector)."""
        arr = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
        return self._register(self.unique(hint), arr)

    def const(self, value: Any, dtype: Any = np.float32, hint: str = "const") -> Symbol:
        """A new parameter holding ``value`` (for values a handler computes)."""
        return self.new_param(f"{self.node_name}_{hint}", value, dtype)

    def out_shape(self, i: int = 0) -> tuple | None:
        """Shape inference's shape of output ``i`` (dims may be None / names)."""
        return self.out_types[i][1] if i < len(self.out_types) else None

    def out_dtype(self, i: int = 0) -> np.dtype | None:
        return self.out_types[i][0] if i < len(self.out_types) else None

    def static_out_shape(self, i: int = 0) -> tuple[int, ...] | None:
        s = self.out_shape(i)
        if s is None or not all(isinstance(d, int) for d in s):
            return None
        return tuple(s)
