"""gluonport: Apache MXNet 1.x models and Gluon code, without MXNet.

``import gluonport as mx`` gives the familiar namespaces: ``mx.nd``, ``mx.sym``, ``mx.cpu()``,
``mx.gpu(i)``, ``mx.random``, ``mx.gluon``, ``mx.init``, ``mx.model``, ``mx.onnx``,
``mx.operator`` (Python custom ops), ``mx.mod.Module``/``mx.io`` (the legacy inference API),
and ``mx.load`` for serving.

Only the errors and contexts are imported here; every other name imports its module on first
use (PEP 562 ``__getattr__``), so ``import gluonport`` and the CLI's ``--help`` start fast.
``mx.nd``, ``from gluonport import gluon`` and ``import gluonport.gluon`` all work as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import errors
from ._core.budget import get_size_limit, set_size_limit, size_limit
from ._core.version import __version__
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .errors import GluonportError

if TYPE_CHECKING:  # pragma: no cover
    from . import (
        attribute,
        autograd,
        base,
        callback,
        gluon,
        image,
        initializer,
        io,
        kvstore,
        lr_scheduler,
        metric,
        model,
        module,
        name,
        ndarray,
        onnx,
        operator,
        optimizer,
        random,
        symbol,
        util,
    )
    from . import image as img
    from . import initializer as init
    from . import kvstore as kv
    from . import module as mod
    from . import ndarray as nd
    from . import optimizer as opt
    from . import symbol as sym
    from .attribute import AttrScope
    from .base import MXNetError
    from .executor import Executor
    from .runtime.predictor import Predictor, load

# public name -> (submodule, attribute of it; None: the submodule itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    **{m: (m, None) for m in ("attribute", "autograd", "base", "gluon", "image", "initializer",
                              "io", "metric", "model", "module", "name", "ndarray", "onnx",
                              "operator", "random", "symbol", "util", "optimizer",
                              "lr_scheduler", "kvstore", "callback")},
    "kv": ("kvstore", None),
    "opt": ("optimizer", None),
    "nd": ("ndarray", None), "sym": ("symbol", None), "init": ("initializer", None),
    "mod": ("module", None), "img": ("image", None),
    "AttrScope": ("attribute", "AttrScope"), "Executor": ("executor", "Executor"),
    "MXNetError": ("base", "MXNetError"),
    "Predictor": ("runtime.predictor", "Predictor"), "load": ("runtime.predictor", "load"),
}

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "nd", "sym",
           "ndarray", "symbol", "errors", "GluonportError", "AttrScope", "Executor", "name",
           "attribute", "initializer", "init", "model", "gluon", "random", "onnx", "operator",
           "io", "module", "mod", "image", "img", "metric", "autograd", "base", "util",
           "MXNetError", "load", "Predictor", "set_size_limit", "size_limit", "optimizer", "opt",
           "lr_scheduler", "kvstore", "kv", "callback",
           "get_size_limit", "__version__"]


def __getattr__(name: str) -> Any:
    """Import the module behind a public name the first time the name is used."""
    module, attr = _LAZY.get(name, (name, None))
    try:
        if name.startswith("__"):
            raise ModuleNotFoundError(name=f"{__name__}.{name}")
        value = importlib.import_module(f".{module}", __name__)
    except ModuleNotFoundError as exc:  # not a submodule (any submodule is, as when eager)
        if exc.name != f"{__name__}.{module}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
