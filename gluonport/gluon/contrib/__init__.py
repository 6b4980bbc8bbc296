"""``gluon.contrib``: contributed Gluon layers (MXNet 1.9.1)."""

from . import nn

__all__ = ["nn"]
