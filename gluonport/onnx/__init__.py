"""MXNet <-> ONNX conversion. See README.md in this folder.

The public names load on first use (PEP 562): ``import gluonport`` must not import ``onnx``
(about half of gluonport's start-up time), so nothing here is imported until it is asked for.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ._context import ExportContext
    from .export import export_model, export_symbol, register_converter, save_model
    from .importer import (
        export_mxnet,
        get_model_metadata,
        import_graph,
        import_model,
    )
    from .opset import DEFAULT_OPSET, MIN_OPSET, max_opset
    from .verify import BisectResult, VerifyReport, bisect, verify

# public name -> the submodule that defines it
_LAZY = {
    "ExportContext": "_context",
    "export_model": "export", "export_symbol": "export", "register_converter": "export",
    "save_model": "export",
    "export_mxnet": "importer", "get_model_metadata": "importer", "import_graph": "importer",
    "import_model": "importer",
    "DEFAULT_OPSET": "opset", "MIN_OPSET": "opset", "max_opset": "opset",
    "BisectResult": "verify", "VerifyReport": "verify", "bisect": "verify", "verify": "verify",
}
# re-exports of names defined a layer above, kept for existing code: {name: (module, attribute)}.
# import_to_gluon builds a Gluon SymbolBlock, so it lives in gluon/ (which imports onnx/, never
# the reverse). Nothing in onnx/ calls it; the name is looked up only when first used
# (ARCHITECTURE.md, "Layers"). Code below gluon/ that needs it gets it handed in instead.
_ALIASES = {"import_to_gluon": ("gluonport.gluon.symbol_block", "import_to_gluon")}
_SUBMODULES = frozenset({"backend", "export", "importer", "opset", "verify"})

__all__ = ["export_model", "export_symbol", "register_converter", "save_model",
           "ExportContext", "verify", "VerifyReport", "bisect", "BisectResult", "DEFAULT_OPSET",
           "MIN_OPSET", "max_opset", "import_model", "get_model_metadata", "import_to_gluon",
           "export_mxnet", "import_graph"]


def __getattr__(name: str) -> Any:
    """Import the submodule behind a public name the first time the name is used."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _ALIASES:
        module, attr = _ALIASES[name]
        value = globals()[name] = getattr(importlib.import_module(module), attr)
        return value
    try:  # any submodule, as when the package imported them all
        if name.startswith("__"):
            raise ModuleNotFoundError(name=f"{__name__}.{name}")
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_ALIASES) | _SUBMODULES)


class _Package(types.ModuleType):
    """``gluonport.onnx.verify`` is the function, as when it was imported eagerly: importing the
    submodule of the same name must not rebind the package attribute to the module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
