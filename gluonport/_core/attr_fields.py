"""Typed operator attributes: parse and print MXNet attribute strings.

MXNet keeps every operator attribute as a string (``kernel="(3, 3)"``, ``no_bias="True"``,
``eps="1e-05"``, ``axis="None"``) and parses it in C++ with dmlc::Parameter. This module is the
only place in gluonport where those strings are parsed. Each operator declares a
:class:`ParamSpec` of :class:`Field` s with MXNet's defaults; the strings themselves stay on the
graph node verbatim, as MXNet keeps them, so a file re-saved by gluonport writes back exactly what
it read.

The printed form is what MXNet's Python front end writes: ``str(value)`` of the value the user
passed (``(3, 3)`` -> ``"(3, 3)"``, ``True`` -> ``"True"``, ``1e-5`` -> ``"1e-05"``), except dtype
fields, which print the dtype's name (``numpy.float32`` -> ``"float32"``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import OpAttributeError

__all__ = [
    "REQUIRED",
    "Field",
    "Int",
    "Float",
    "Bool",
    "Str",
    "Enum",
    "Shape",
    "FloatTuple",
    "DType",
    "Optional",
    "Params",
    "ParamSpec",
    "to_attr_string",
    "is_hidden_key",
]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""Default of a field the user must give (``num_hidden`` of FullyConnected)."""


def _plain(value: Any) -> Any:
    """numpy scalars and arrays -> Python values, so ``str()`` prints what MXNet 1.x printed."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def to_attr_string(value: Any) -> str:
    """MXNet's Python front end's string for an attribute value: ``str(value)``.

    >>> to_attr_string((3, 3)), to_attr_string(True), to_attr_string(1e-5), to_attr_string(None)
    ('(3, 3)', 'True', '1e-05', 'None')
    """
    if isinstance(value, str):
        return value
    return str(_plain(value))


def is_hidden_key(key: str) -> bool:
    """Keys such as ``__layout__`` or ``__lr_mult__`` are annotations, not op parameters."""
    return key.startswith("__") and key.endswith("__")


class Field:
    """One typed attribute. Subclasses implement :meth:`parse` (string -> value)."""

    kind = "field"

    def __init__(self, default: Any = REQUIRED, doc: str = ""):
        self.default = default
        self.doc = doc

    def parse(self, text: str) -> Any:
        raise NotImplementedError

    def to_string(self, value: Any) -> str:
        """The attribute string MXNet's front end writes for ``value``."""
        return to_attr_string(value)

    def describe(self) -> str:
        return self.kind


class Int(Field):
    """An integer: ``"8"``."""

    kind = "int"

    def parse(self, text: str) -> int:
        t = text.strip()
        if t.endswith(("L", "l")):  # Python 2 longs in very old files
            t = t[:-1]
        try:
            return int(t)
        except ValueError:
            # dmlc accepts "3.0" for an int field? It does not; neither do we, but "True"/"False"
            # appear in the wild for int-typed flags written by Python's bool.
            if t in ("True", "False"):
                return int(t == "True")
            raise


class Float(Field):
    """A float: ``"1e-05"``, ``"0.9"``, ``"inf"``."""

    kind = "float"

    def parse(self, text: str) -> float:
        return float(text.strip())


class Bool(Field):
    """A bool: ``"True"``, ``"true"``, ``"1"``, ``"False"``, ``"false"``, ``"0"`` (dmlc's forms)."""

    kind = "bool"
    _VALUES = {"true": True, "1": True, "false": False, "0": False}

    def parse(self, text: str) -> bool:
        try:
            return self._VALUES[text.strip().lower()]
        except KeyError:
            raise ValueError("not a bool (True/False/1/0)") from None


class Str(Field):
    """Free text."""

    kind = "str"

    def parse(self, text: str) -> str:
        return text


class Enum(Field):
    """One string of a fixed set: ``act_type`` in ``relu, sigmoid, ...``."""

    def __init__(self, choices: Iterable[str], default: Any = REQUIRED, doc: str = ""):
        super().__init__(default, doc)
        self.choices = tuple(choices)

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "{" + ", ".join(self.choices) + "}"

    def parse(self, text: str) -> str:
        t = text.strip().strip("'\"")
        if t not in self.choices:
            raise ValueError(f"expected one of {', '.join(self.choices)}")
        return t


def _split_tuple(text: str) -> list[str]:
    t = text.strip()
    if (t[:1] in ("(", "[")) != (t[-1:] in (")", "]")):
        raise ValueError("unbalanced brackets")
    if t[:1] in ("(", "["):
        inner = t[1:-1].strip()
        if not inner:
            return []
        parts = [p.strip() for p in inner.split(",")]
        if parts and parts[-1] == "":  # "(3,)"
            parts.pop()
        if any(p == "" for p in parts):
            raise ValueError("empty element")
        return parts
    if not t:
        raise ValueError("empty")
    return [t]  # dmlc reads a bare number as a 1-tuple


class Shape(Field):
    """A tuple of ints: ``"(3, 3)"``, ``"(3,3)"``, ``"[3, 3]"``, ``"3"`` (a 1-tuple).

    ``None`` elements (``"(None, 2)"``, used by ``slice`` begin/end) parse when ``allow_none``.
    """

    kind = "tuple of ints"

    def __init__(self, default: Any = REQUIRED, doc: str = "", allow_none: bool = False):
        super().__init__(default, doc)
        self.allow_none = allow_none

    def parse(self, text: str) -> tuple:
        out: list[int | None] = []
        for part in _split_tuple(text):
            if self.allow_none and part == "None":
                out.append(None)
            else:
                p = part[:-1] if part.endswith(("L", "l")) else part
                out.append(int(p))
        return tuple(out)


class FloatTuple(Field):
    """A tuple of floats: ``"(0.1, 0.2)"`` (MultiBoxPrior sizes)."""

    kind = "tuple of floats"

    def parse(self, text: str) -> tuple[float, ...]:
        return tuple(float(p) for p in _split_tuple(text))


class DType(Field):
    """A dtype name: ``"float32"``. Printed as the dtype's name whatever the user passed."""

    kind = "dtype"

    def __init__(self, default: Any = REQUIRED, doc: str = "",
                 choices: Iterable[str] | None = None):
        super().__init__(default, doc)
        self.choices = tuple(choices) if choices is not None else None

    def parse(self, text: str) -> str:
        from . import dtypes

        name = text.strip().strip("'\"")
        # MXNet's dtype parameters are enums of names; never hand arbitrary text to numpy.
        if name not in {d.name for d in dtypes.TABLE}:
            raise ValueError("not a dtype name (float32, float16, int32, ...)")
        if self.choices is not None and name not in self.choices:
            raise ValueError(f"expected one of {', '.join(self.choices)}")
        return name

    def to_string(self, value: Any) -> str:
        from . import dtypes

        if isinstance(value, str):
            return value
        return dtypes.name_of(value)


class Optional(Field):
    """``dmlc::optional<T>``: ``"None"`` or a value of the inner field."""

    def __init__(self, inner: Field, default: Any = None, doc: str = ""):
        super().__init__(default, doc)
        self.inner = inner

    @property
    def kind(self) -> str:  # type: ignore[override]
        return f"{self.inner.kind} or None"

    def parse(self, text: str) -> Any:
        if text.strip() in ("None", ""):
            return None
        return self.inner.parse(text)

    def to_string(self, value: Any) -> str:
        if value is None:
            return "None"
        return self.inner.to_string(value)


class Params:
    """Parsed attributes of one node; read them as attributes (``p.kernel``).

    Immutable and hashable, so compute kernels can cache on it.
    """

    __slots__ = ("_values", "_hash")

    def __init__(self, values: dict[str, Any]):
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_hash", None)

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Params are read-only")

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Params) and self._values == other._values

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(tuple(sorted(
                (k, repr(v)) for k, v in self._values.items()))))
        return self._hash

    def __repr__(self) -> str:
        return "Params(" + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"


_warned: set[tuple[str, str]] = set()


class ParamSpec:
    """The attributes of one operator: name -> :class:`Field`, with MXNet's defaults."""

    def __init__(self, fields: Mapping[str, Field] | None = None):
        self.fields: dict[str, Field] = dict(fields or {})
        self._cache: dict[tuple, Params] = {}

    def parse(self, attrs: Mapping[str, str], *, op: str = "", node: str = "",
              strict: bool = True) -> Params:
        """Parse a node's attribute strings into :class:`Params`.

        Missing fields take their defaults; a missing required field, or a value that does not
        parse, raises :class:`OpAttributeError` naming the node and the attribute. Unknown keys
        raise under ``strict`` (a user call with a typo) and otherwise warn once and are
        ignored (a file written by an MXNet build with extra parameters). Keys of the form
        ``__name__`` are annotations and always pass.
        """
        key = tuple(sorted(attrs.items()))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        where = _where(op, node)
        values: dict[str, Any] = {}
        for name, text in attrs.items():
            if is_hidden_key(name):
                continue
            field = self.fields.get(name)
            if field is None and not self.fields:
                continue  # an op without parameters keeps any attribute unread, as MXNet's
            if field is None:
                if strict:
                    known = ", ".join(sorted(self.fields)) or "none"
                    raise OpAttributeError(
                        f"{where}unknown attribute {name}={text!r}; {op or 'this op'} takes: "
                        f"{known}")
                if (op, name) not in _warned:
                    _warned.add((op, name))
                    warnings.warn(f"{where}attribute {name}={text!r} is not known to gluonport "
                                  "and is ignored", stacklevel=3)
                continue
            if not isinstance(text, str):
                raise OpAttributeError(f"{where}attribute {name} must be a string, got "
                                       f"{type(text).__name__} {text!r}")
            try:
                values[name] = field.parse(text)
            except (ValueError, TypeError, OverflowError) as exc:
                raise OpAttributeError(
                    f"{where}attribute {name}={text!r} is not a valid {field.describe()}"
                    f" ({exc})") from None
        for name, field in self.fields.items():
            if name not in values:
                if field.default is REQUIRED:
                    raise OpAttributeError(f"{where}required attribute {name!r} "
                                           f"({field.describe()}) is missing")
                values[name] = field.default
        params = Params(values)
        if len(self._cache) < 4096:
            self._cache[key] = params
        return params

    def to_attrs(self, kwargs: Mapping[str, Any], *, op: str = "") -> dict[str, str]:
        """User keyword arguments -> attribute strings, as MXNet's front end writes them.

        Every keyword given is written, ``None`` as ``"None"`` (MXNet's generated functions
        skip only arguments *not* given); unknown names are refused, except by ops that take no
        parameters, which MXNet lets store anything.
        """
        out: dict[str, str] = {}
        for name, value in kwargs.items():
            field = self.fields.get(name)
            if field is None and not self.fields:
                # MXNet's ops without a parameter struct (zeros_like, relu, ...) have no
                # attribute parser: any keyword is stored and ignored (zeros_like(x,
                # dtype='int64') is float32 there, with "dtype" in the saved JSON)
                out[name] = to_attr_string(value)
                continue
            if field is None:
                if is_hidden_key(name):
                    out[name] = to_attr_string(value)
                    continue
                known = ", ".join(sorted(self.fields)) or "none"
                raise OpAttributeError(f"{op}: unknown argument {name}={value!r}; "
                                       f"{op} takes: {known}")
            out[name] = field.to_string(value)
        return out


def _where(op: str, node: str) -> str:
    if node and op:
        return f"node {node!r} ({op}): "
    if op:
        return f"{op}: "
    return ""


def is_close_float(a: float, b: float) -> bool:
    """Float attribute equality that treats NaN == NaN (used by graph comparisons)."""
    return a == b or (math.isnan(a) and math.isnan(b))
