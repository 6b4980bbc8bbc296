"""``gluon.Trainer``: present so that model files and scripts that import it load; using it
raises, since gluonport runs trained models and does not train them (no gradients, no
optimizers)."""

from __future__ import annotations

from typing import Any

from ..errors import GluonportError

__all__ = ["Trainer"]


class Trainer:
    """MXNet's ``gluon.Trainer(params, optimizer, optimizer_params=None, kvstore='device',
    compression_params=None, update_on_kvstore=None)``; constructing one raises."""

    def __init__(self, params: Any, optimizer: Any, optimizer_params: Any = None,
                 kvstore: Any = "device", compression_params: Any = None,
                 update_on_kvstore: Any = None):
        raise GluonportError("gluon.Trainer: gluonport runs trained models and does not train "
                             "them (no gradients, no optimizers); train with MXNet and load the "
                             "parameters here with load_parameters / SymbolBlock.imports")
