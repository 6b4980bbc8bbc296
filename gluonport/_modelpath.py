"""Resolve how users name a model: ``.onnx``, ``*-symbol.json`` (+params), or a prefix + epoch.

MXNet's naming: ``PREFIX-symbol.json`` and ``PREFIX-NNNN.params`` (``save_checkpoint``,
``HybridBlock.export``).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from .errors import FormatError
from .formats._regular import check_regular

__all__ = ["ModelFiles", "resolve_model"]


@dataclass(frozen=True)
class ModelFiles:
    """The files of one model: ``kind`` is ``'onnx'`` or ``'mxnet'``."""

    kind: str
    symbol_file: str | None = None
    params_file: str | None = None
    onnx_file: str | None = None
    prefix: str | None = None
    epoch: int | None = None

    @property
    def main_file(self) -> str:
        return self.onnx_file if self.kind == "onnx" else self.symbol_file  # type: ignore


def _find_params(prefix: str, epoch: int | None) -> tuple[str | None, int | None]:
    if epoch is not None:
        path = f"{prefix}-{epoch:04d}.params"
        if not os.path.exists(path):
            raise FormatError(f"no params file for epoch {epoch}: {path} does not exist; "
                              "check --epoch or pass --params FILE")
        return path, epoch
    found = sorted(glob.glob(glob.escape(prefix) + "-[0-9][0-9][0-9][0-9].params"))
    if not found:
        return None, None
    path = found[-1]  # the newest epoch, as people usually mean
    return path, int(re.search(r"-(\d{4})\.params$", path).group(1))


def resolve_model(model: str, params: str | None = None, epoch: int | None = None) -> ModelFiles:
    """Find a model's files from what the user typed.

    ``model`` may be an ``.onnx`` file, a ``*-symbol.json`` file, or a prefix (``resnet`` for
    ``resnet-symbol.json`` + ``resnet-0000.params``). Without ``params``/``epoch`` the newest
    ``PREFIX-NNNN.params`` is used. Raises :class:`FormatError` naming what is missing.
    """
    if model.endswith(".onnx"):
        if not os.path.lexists(model):
            raise FormatError(f"{model}: no such file")
        check_regular(model, "ONNX model file")
        return ModelFiles("onnx", onnx_file=model)
    if model.endswith(".json"):
        symbol_file = model
        prefix = model[:-len("-symbol.json")] if model.endswith("-symbol.json") else model[:-5]
    else:
        prefix = model
        symbol_file = f"{prefix}-symbol.json"
    if not os.path.lexists(symbol_file):
        raise FormatError(f"{symbol_file}: no such file; give a .onnx file, a *-symbol.json "
                          "file or a PREFIX with PREFIX-symbol.json beside it")
    check_regular(symbol_file, "symbol JSON file")
    if params is not None:
        if not os.path.lexists(params):
            raise FormatError(f"{params}: no such params file")
        check_regular(params, "params file")
        return ModelFiles("mxnet", symbol_file, params, prefix=prefix, epoch=epoch)
    params_file, epoch = _find_params(prefix, epoch)
    return ModelFiles("mxnet", symbol_file, params_file, prefix=prefix, epoch=epoch)
