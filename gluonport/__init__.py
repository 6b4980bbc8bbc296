"""gluonport: Apache MXNet 1.x models and Gluon code, without MXNet.

``import gluonport as mx`` gives the familiar namespaces: ``mx.nd``, ``mx.sym``, ``mx.cpu()``,
``mx.gpu(i)``, ``mx.random``, ``mx.gluon``, ``mx.init``, ``mx.model``, ``mx.onnx``,
``mx.operator`` (Python custom ops), ``mx.mod.Module``/``mx.io`` (the legacy inference API),
and ``mx.load`` for serving.
"""

from __future__ import annotations

from . import errors
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .errors import GluonportError

__version__ = "0.1.0"

# Order matters: ndarray and symbol build their op namespaces from the registry first.
from . import attribute, name, ndarray, random, symbol  # noqa: E402, I001
from . import ndarray as nd  # noqa: E402
from . import symbol as sym  # noqa: E402
from .attribute import AttrScope  # noqa: E402
from .executor import Executor  # noqa: E402
from . import initializer, model  # noqa: E402
from . import initializer as init  # noqa: E402
from . import gluon  # noqa: E402
from . import onnx  # noqa: E402
from . import autograd, base, operator, util  # noqa: E402
from .base import MXNetError  # noqa: E402
from . import io, module  # noqa: E402
from . import image, image as img  # noqa: E402
from . import metric  # noqa: E402
from . import module as mod  # noqa: E402
from .runtime.predictor import Predictor, load  # noqa: E402

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "nd", "sym",
           "ndarray", "symbol", "errors", "GluonportError", "AttrScope", "Executor", "name",
           "attribute", "initializer", "init", "model", "gluon", "random", "onnx", "operator",
           "io", "module", "mod", "image", "img", "metric", "autograd", "base", "util",
           "MXNetError", "load", "Predictor", "__version__"]
