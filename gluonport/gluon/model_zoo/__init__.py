"""``gluon.model_zoo``: MXNet 1.9.1's predefined vision models (architectures and parameter
names; pretrained weights are used only when their file is already on disk)."""

from . import model_store, vision

__all__ = ["model_store", "vision"]
