"""JSON Schemas of MXNet's file formats, shipped with gluonport as ``gluonport.schemas``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["load_schema", "SCHEMAS"]

SCHEMAS = ("symbol.schema.json",)


@cache
def load_schema(name: str = "symbol.schema.json") -> dict[str, Any]:
    """The parsed JSON Schema ``name`` (one of :data:`SCHEMAS`)."""
    return json.loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))
