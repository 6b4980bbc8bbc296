"""The layer table in ``gluonport/ARCHITECTURE.md`` holds for every import in ``gluonport/``.

Every ``import`` statement is read with :mod:`ast` -- module level, inside functions, under
``if TYPE_CHECKING:``, absolute or relative -- and mapped to the top-level package or module of
``gluonport`` it names (``gluonport/ops/nn.py`` is in ``ops``, ``gluonport/errors.py`` is
``errors``, ``gluonport/__init__.py`` is the package root ``gluonport``). An import fails the test
when the layer it names is not one the importer's row allows ("may import"), or when imports
between two packages of one layer form a cycle. There is no exemption list: a violation is fixed
by moving code to the layer it belongs to (see ARCHITECTURE.md).

The table format (documented in ARCHITECTURE.md): a markdown table whose header starts with
``| layer | modules |`` and ends with ``may import |``; ``layer`` is an integer (0 = the bottom),
``modules`` lists backticked names, ``may import`` is ``nothing`` or layer numbers and ranges
(``0-3, 5``; an en dash also reads as a range).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "gluonport")
TABLE = os.path.join(PKG, "ARCHITECTURE.md")
ROOT_NAME = "gluonport"  # the package root's own layer name (gluonport/__init__.py)


@dataclass(frozen=True)
class Import:
    """One import statement: ``file``:``line`` in package ``src`` names package ``dst``."""

    file: str
    line: int
    src: str
    dst: str


@dataclass(frozen=True)
class Layers:
    """The parsed layer table: each package's layer and each layer's allowed lower layers."""

    layer_of: dict[str, int]
    allowed: dict[int, frozenset[int]]


def top_of(module: str, files: dict[str, str]) -> str:
    """The top-level package of dotted ``module`` (``gluonport.ops.nn`` -> ``ops``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return ROOT_NAME
    name = parts[1]
    # `from gluonport import __version__` / `from .. import nd`: an attribute of the root
    is_module = any(key == f"{ROOT_NAME}.{name}" or key.startswith(f"{ROOT_NAME}.{name}.")
                    for key in files)
    return name if is_module or name == "schemas" else ROOT_NAME


def imports_of(files: dict[str, str]) -> list[Import]:
    """Every import between top-level packages in ``files`` ({dotted module: source text}).

    Keys ending in ``.__init__`` are packages; other keys are plain modules.
    """
    known = {k.removesuffix(".__init__") for k in files}
    found: list[Import] = []
    for key, text in files.items():
        mod = key.removesuffix(".__init__")
        package = mod if key.endswith(".__init__") else mod.rpartition(".")[0]
        src = top_of(mod, known)
        for node in ast.walk(ast.parse(text, filename=key)):
            for target, line in _targets(node, package, known):
                if target == ROOT_NAME or target.startswith(ROOT_NAME + "."):
                    dst = top_of(target, known)
                    if dst != src:
                        found.append(Import(key, line, src, dst))
    return found


def _targets(node: ast.AST, package: str, known: set[str]) -> list[tuple[str, int]]:
    """The dotted modules one import node names (``from . import a, b`` names ``pkg.a``...)."""
    if isinstance(node, ast.Import):
        return [(alias.name, node.lineno) for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{module}.{alias.name}"
        out.append((sub if sub in known else module, node.lineno))
    return out


def read_package(pkg_dir: str) -> dict[str, str]:
    """{dotted module (``.__init__`` kept for packages): source} for every .py under pkg_dir."""
    files = {}
    parent = os.path.dirname(pkg_dir)
    for dirpath, dirnames, names in os.walk(pkg_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, parent).replace(os.sep, "/")
                with open(path, encoding="utf-8") as f:
                    files[rel[:-3].replace("/", ".")] = f.read()
    return files


def _layer_numbers(text: str, row: str) -> frozenset[int]:
    text = text.strip().strip("`")
    if text.lower() in ("nothing", "-", ""):
        return frozenset()
    out: set[int] = set()
    for part in text.replace("–", "-").split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", part)
        if not m:
            raise ValueError(f"layer table row {row!r}: 'may import' {text!r} is not layer "
                             "numbers such as '0-3, 5'")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        out.update(range(lo, hi + 1))
    return frozenset(out)


def parse_table(markdown: str) -> Layers:
    """The layer table of ARCHITECTURE.md (format in this module's docstring)."""
    rows, in_table = [], False
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells[:2] == ["layer", "modules"] \
                and cells[-1] == "may import":
            in_table = True
            continue
        if in_table:
            if not line.lstrip().startswith("|"):
                break
            if set(line.replace("|", "").strip()) <= set("-: "):
                continue
            rows.append(cells)
    if not rows:
        raise ValueError("no '| layer | modules | ... | may import |' table found")
    layer_of: dict[str, int] = {}
    allowed: dict[int, frozenset[int]] = {}
    for cells in rows:
        number = int(cells[0])
        for name in re.findall(r"`([A-Za-z_][\w]*)/?`", cells[1]):
            if name in layer_of:
                raise ValueError(f"{name!r} is in two rows of the layer table")
            layer_of[name] = number
        may = _layer_numbers(cells[-1], cells[1])
        if any(n >= number for n in may):
            raise ValueError(f"layer {number} may only import layers below it, not {sorted(may)}")
        allowed[number] = may
    return Layers(layer_of, allowed)


def violations(found: list[Import], layers: Layers) -> list[str]:
    """Messages for imports going up or across the table, and for cycles inside one layer."""
    out = []
    missing = sorted({name for imp in found for name in (imp.src, imp.dst)}
                     - set(layers.layer_of))
    out += [f"{name!r} has no row in the layer table" for name in missing]
    same: dict[str, dict[str, Import]] = {}
    for imp in found:
        if imp.src in missing or imp.dst in missing:
            continue
        a, b = layers.layer_of[imp.src], layers.layer_of[imp.dst]
        if a == b:
            same.setdefault(imp.src, {}).setdefault(imp.dst, imp)
        elif b not in layers.allowed[a]:
            out.append(f"{imp.file.replace('.', '/')}.py:{imp.line}: {imp.src} (layer {a}) "
                       f"imports {imp.dst} (layer {b}), which its row does not allow")
    out += _cycles(same)
    return out


def _cycles(edges: dict[str, dict[str, Import]]) -> list[str]:
    """One message per import cycle among same-layer packages (depth-first search)."""
    out, done, stack = [], set(), []

    def visit(node: str) -> None:
        stack.append(node)
        for nxt in sorted(edges.get(node, {})):
            if nxt in stack:
                loop = stack[stack.index(nxt):] + [nxt]
                back = edges[loop[-2]][nxt]
                out.append(f"{back.file.replace('.', '/')}.py:{back.line}: {back.src} imports "
                           f"{back.dst}, closing the cycle {' -> '.join(loop)}")
            elif nxt not in done:
                visit(nxt)
        stack.pop()
        done.add(node)

    for start in sorted(edges):
        if start not in done:
            visit(start)
    return out


def load_layers() -> Layers:
    with open(TABLE, encoding="utf-8") as f:
        return parse_table(f.read())


def test_every_package_has_a_row():
    known = {k.removesuffix(".__init__") for k in read_package(PKG)}
    tops = {top_of(module, known) for module in known}
    missing = tops - set(load_layers().layer_of)
    assert not missing, f"add rows to gluonport/ARCHITECTURE.md for {sorted(missing)}"
    stale = set(load_layers().layer_of) - tops - {"schemas"}
    assert not stale, f"layer table rows for packages that no longer exist: {sorted(stale)}"


def test_imports_follow_the_layer_table():
    problems = violations(imports_of(read_package(PKG)), load_layers())
    assert not problems, "\n".join(problems)


def test_docs_point_inside_the_repository():
    """The layer table and every document live in the repository: none points at ../shared."""
    bad = []
    for dirpath, dirnames, names in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
        for name in names:
            if name.endswith((".md", ".rst", ".txt")):
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                if "../shared" in text or "/work/shared" in text or "shared/ARCHITECTURE" in text:
                    bad.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    assert not bad, bad


# --- the checker itself catches what it must (synthetic packages) -------------------------------

SYNTHETIC = """
| layer | modules | owns | may import |
|---|---|---|---|
| 2 | `gluonport`, `top` | root | 0-1 |
| 1 | `mid`, `side` | middle | 0 |
| 0 | `low` | bottom | nothing |
"""


def check(files: dict[str, str]) -> list[str]:
    return violations(imports_of(files), parse_table(SYNTHETIC))


def test_checker_accepts_downward_imports():
    assert check({
        "gluonport.__init__": "from . import top\nfrom .low import x\n",
        "gluonport.top.__init__": "def f():\n    from ..mid import a\n    import gluonport.low\n",
        "gluonport.mid": "from .low import b\n",
        "gluonport.side": "from . import mid\n",
        "gluonport.low": "import os\n",
    }) == []


@pytest.mark.parametrize("source, where", [
    ("from .mid import a\n", "low.py:1"),                      # module level, relative
    ("def f():\n    import gluonport.top\n", "low.py:2"),      # function level, absolute
    ("def f():\n    from . import mid\n", "low.py:2"),         # `from . import module`
    ("from gluonport import __version__\n", "low.py:1"),       # an attribute of the root
    ("if True:\n    from .top.sub import c\n", "low.py:2"),    # nested package
])
def test_checker_catches_an_upward_import(source, where):
    got = check({"gluonport.__init__": "", "gluonport.top.__init__": "",
                 "gluonport.top.sub": "", "gluonport.mid": "", "gluonport.low": source})
    assert len(got) == 1 and got[0].startswith(f"gluonport/{where}:"), got
    assert "low (layer 0) imports" in got[0], got


def test_checker_catches_a_deep_relative_upward_import():
    got = check({"gluonport.low.__init__": "", "gluonport.low.inner": "from ...mid import a\n",
                 "gluonport.mid": ""})
    # three dots from gluonport/low/inner.py leave gluonport: not a gluonport import at all
    assert got == []
    got = check({"gluonport.low.__init__": "", "gluonport.low.inner": "from ..mid import a\n",
                 "gluonport.mid": ""})
    assert got == ["gluonport/low/inner.py:1: low (layer 0) imports mid (layer 1), which its "
                   "row does not allow"]


def test_checker_catches_a_cycle_within_a_layer():
    got = check({"gluonport.mid": "def f():\n    from . import side\n",
                 "gluonport.side": "from .mid import a\n"})
    assert len(got) == 1 and "cycle" in got[0] and "mid" in got[0] and "side" in got[0], got


def test_checker_names_a_package_without_a_row():
    got = check({"gluonport.low": "from . import stray\n", "gluonport.stray": ""})
    assert got == ["'stray' has no row in the layer table"]


def test_table_refuses_a_row_allowed_to_import_upwards():
    with pytest.raises(ValueError, match="only import layers below"):
        parse_table(SYNTHETIC.replace("| middle | 0 |", "| middle | 0-2 |"))
