"""Generate ``OPERATORS.md`` from the registry (``python -m gluonport.ops._doc``).

A test checks the committed file is current, so the table never drifts from the code.
"""

from __future__ import annotations

import os
import sys

from . import registry
from ._targets import MX2ONNX_OPS

__all__ = ["render", "PATH"]

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "OPERATORS.md")


def _row(op: registry.OpDef) -> str:
    module = (op.compute.__module__.removeprefix("gluonport.ops.")
              if op.compute is not None and hasattr(op.compute, "__module__") else "-")
    shape = "rule" if op.infer_shape is not None else "elementwise"
    dtype = "rule" if op.infer_type is not None else "same as input"
    if op.onnx_handlers:
        onnx = "opset " + ", ".join(str(s) for s, _ in op.onnx_handlers) + "+"
    else:
        onnx = f"no: {op.no_onnx}" if op.no_onnx else "not yet"
    aliases = ", ".join(f"`{a}`" for a in sorted(op.aliases))
    compute = "yes" if op.compute is not None else "**no**"
    return (f"| `{op.name}` | {aliases} | {module} | {compute} | {shape} | {dtype} | "
            f"{onnx} |")


def render() -> str:
    """The whole ``OPERATORS.md`` text."""
    ops = registry.all_ops()
    aliases = registry.aliases()
    lines = [
        "# Supported operators",
        "",
        "Generated from the registry by `python -m gluonport.ops._doc`; "
        "`tests/ops/test_coverage.py` checks it is current.",
        "",
        f"{len(ops)} operators ({len(aliases)} aliases).",
        "",
        "| op | aliases | file (gluonport/ops/) | compute | shape inference | type inference "
        "| ONNX export |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [_row(ops[name]) for name in sorted(ops, key=str.lower)]
    known = set(ops) | set(aliases)
    missing = [n for n in MX2ONNX_OPS if n not in known]
    lines += [
        "",
        "## Left to do",
        "",
        f"Of the {len(MX2ONNX_OPS)} ops MXNet 1.9.1's ONNX exporter knows, "
        f"{len(MX2ONNX_OPS) - len(missing)} are registered here; missing:",
        "",
        ", ".join(f"`{n}`" for n in missing) if missing else "none.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    text = render()
    with open(PATH, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
