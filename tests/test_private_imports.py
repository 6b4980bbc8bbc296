"""No module of ``gluonport/`` (or the CLI in ``cli/``) imports another module's private name.

A name that starts with one underscore is its module's own business; a helper that several
modules share is a documented interface (a public name in its module's ``__all__``, with a
docstring). Every ``from X import _name`` is read with :mod:`ast` -- module level and inside
functions, absolute or relative -- and fails the test unless ``X._name`` is itself a module or
package (``from . import _families`` imports a private *module*, which is fine). Dunder names
(``__version__``) are not private. Binding a public name to a private alias
(``from .image import interp_method as _get_interp_method``) is fine: what is imported is public.
"""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREES = ("gluonport", "cli")


def _python_files(top: str) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return out


def _package_of(path: str) -> list[str]:
    """The dotted package a file's relative imports start from, as a list of parts."""
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    return rel[:-1]  # a module's package; for __init__.py, the package itself


def _target(path: str, node: ast.ImportFrom) -> list[str]:
    """The module an ``from ... import`` names, as a list of parts."""
    if node.level == 0:
        return (node.module or "").split(".")
    base = _package_of(path)
    base = base[:len(base) - (node.level - 1)]
    return base + (node.module.split(".") if node.module else [])


def _is_module(parts: list[str]) -> bool:
    where = os.path.join(ROOT, *parts)
    return os.path.isfile(where + ".py") or os.path.isfile(os.path.join(where, "__init__.py"))


def private_imports(path: str, source: str) -> list[str]:
    """Every ``from X import _name`` in ``source`` where ``X._name`` is not a module."""
    found = []
    for node in ast.walk(ast.parse(source, filename=path)):
        if not isinstance(node, ast.ImportFrom):
            continue
        mod = _target(path, node)
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or name.startswith("__"):
                continue
            if _is_module(mod + [name]):
                continue
            found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: "
                         f"from {'.'.join(mod)} import {name}")
    return found


def test_no_private_name_imported_across_modules():
    bad = []
    for top in TREES:
        for path in _python_files(top):
            with open(path, encoding="utf-8") as f:
                bad += private_imports(path, f.read())
    assert not bad, ("private names imported from another module (make the helper a documented "
                     "public name in its module's __all__, or move it where it is used):\n"
                     + "\n".join(bad))


def test_the_check_catches_a_private_name_and_spares_a_private_module():
    # The detector itself must be able to fail: a private function imported relatively or
    # absolutely, at module level or inside a function, is caught; a private module is not.
    path = os.path.join(ROOT, "gluonport", "gluon", "nn", "basic_layers.py")
    source = ("from ..block import Block, _indent\n"
              "from gluonport.onnx.export import _Graph\n"
              "from .. import _text\n"
              "from gluonport.onnx import _stream\n"
              "from .._core.version import __version__\n"
              "def f():\n"
              "    from ...formats.params import _prepare\n")
    got = private_imports(path, source)
    assert got == [
        "gluonport/gluon/nn/basic_layers.py:1: from gluonport.gluon.block import _indent",
        "gluonport/gluon/nn/basic_layers.py:2: from gluonport.onnx.export import _Graph",
        "gluonport/gluon/nn/basic_layers.py:7: from gluonport.formats.params import _prepare",
    ]
