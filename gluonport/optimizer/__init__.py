"""``mx.optimizer``: MXNet 1.9.1's optimizers, ``Updater``/``get_updater`` and the registry.

Training loops (``gluon.Trainer`` with gradients) arrive with autograd; these classes apply
updates to weights and gradients you provide.
"""

from . import contrib
from .adaptive import (
    FTML,
    LAMB,
    AdaDelta,
    AdaGrad,
    Adam,
    Adamax,
    Ftrl,
    Nadam,
    RMSProp,
    Test,
)
from .optimizer import Optimizer, OptimizerError, create, register
from .sgd import DCASGD, LARS, LBSGD, NAG, SGD, SGLD, Signum, ccSGD
from .updater import Updater, get_updater, load_states

__all__ = ["AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LARS", "LBSGD",
           "NAG", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "LAMB", "Test",
           "Updater", "ccSGD", "create", "get_updater", "register", "contrib", "OptimizerError",
           "load_states"]
