"""``gluon``: MXNet 1.x's imperative/hybrid model API on numpy."""

from . import contrib, data, loss, model_zoo, nn, rnn, utils
from .block import Block
from .hybrid import HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .symbol_block import SymbolBlock
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "Constant", "ParameterDict",
           "DeferredInitializationError", "nn", "rnn", "contrib", "model_zoo", "data", "utils",
           "loss", "Trainer"]
