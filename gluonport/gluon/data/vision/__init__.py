"""``gluon.data.vision``: MXNet 1.9.1's image transforms (``vision.transforms``)."""

from . import transforms

__all__ = ["transforms"]
