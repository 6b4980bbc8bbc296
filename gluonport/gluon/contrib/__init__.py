"""``gluon.contrib``: contributed Gluon layers and the Estimator training loop (MXNet 1.9.1)."""

from . import estimator, nn

__all__ = ["nn", "estimator"]
