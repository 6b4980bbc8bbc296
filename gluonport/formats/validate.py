"""Validate symbol JSON against ``gluonport.schemas`` (``symbol.schema.json``)."""

from __future__ import annotations

from typing import Any

from ..errors import FormatError
from .symbol_json import graph_from_object, parse_json

__all__ = ["validate_symbol_json", "schema_violations"]

_SHOWN = 5


def _json_path(parts: Any) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _shorten(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


def schema_violations(obj: Any) -> list[str] | None:
    """Every way ``obj`` breaks the symbol schema, as ``"<JSON path>: <message>"``, sorted.

    Returns ``None`` when the optional ``jsonschema`` package is not installed.
    """
    try:
        import jsonschema
    except ImportError:
        return None
    from ..schemas import load_schema

    validator = jsonschema.Draft202012Validator(load_schema("symbol.schema.json"))
    errors = sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_json_path(e.absolute_path)}: {_shorten(e.message)}" for e in errors]


def validate_symbol_json(obj_or_text: Any, path: str | None = None) -> None:
    """Check that a symbol JSON file (text, bytes, or the parsed object) is well formed.

    With ``jsonschema`` installed (the ``test`` extra) the structure is checked against
    ``symbol.schema.json`` and the first few violations are listed with their JSON paths.
    Without it, the reader's own structural checks stand in for the schema. Either way the
    reader's checks then run too, since a schema cannot check cross references (an input or
    head naming a node that does not exist or comes later, arg_nodes that are not variables).
    MXNet's own reader makes the same checks, one error at a time.

    Raises
    ------
    FormatError
        Naming ``path`` and what is wrong.

    Examples
    --------
    >>> validate_symbol_json('{"nodes": [], "arg_nodes": [], "heads": []}')
    """
    if isinstance(obj_or_text, (str, bytes, bytearray)):
        obj = parse_json(obj_or_text, path)
    else:
        obj = obj_or_text
    problems = schema_violations(obj)
    if problems:
        shown = "; ".join(problems[:_SHOWN])
        more = f" (and {len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
        raise FormatError(f"not a valid MXNet symbol JSON: {len(problems)} schema violation(s): "
                          f"{shown}{more}", path)
    graph_from_object(obj, path)
