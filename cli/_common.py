"""Helpers shared by the CLI commands."""

from __future__ import annotations

import click

MODEL_HELP = ("MODEL is a .onnx file, a *-symbol.json file (its params found as "
              "PREFIX-NNNN.params, or given with --params), or a PREFIX with --epoch.")


def model_options(fn):
    """--params and --epoch, shared by every command that takes a MODEL."""
    fn = click.option("--epoch", type=int, default=None,
                      help="Epoch of PREFIX-NNNN.params (default: the newest).")(fn)
    fn = click.option("--params", "params_file", type=click.Path(dir_okay=False), default=None,
                      help="The .params file, when it is not PREFIX-NNNN.params.")(fn)
    return fn


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
