"""AlexNet (``mxnet.gluon.model_zoo.vision.alexnet``, 1.9.1): "One weird trick for
parallelizing convolutional neural networks" (Krizhevsky 2014)."""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """Five convolutions with three max-pools, two ``Dense(4096)`` with dropout, then
    ``Dense(classes)``."""

    def __init__(self, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                add = self.features.add
                add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    add(nn.Conv2D(channels, kernel_size=3, padding=1, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Flatten())
                for _ in range(2):
                    add(nn.Dense(4096, activation="relu"))
                    add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def alexnet(pretrained: bool = False, ctx: Context | None = None, root: str | None = None,
            **kwargs: Any) -> AlexNet:
    """AlexNet; ``pretrained=True`` loads ``alexnet`` from ``root`` (never downloads)."""
    return finish(AlexNet(**kwargs), "alexnet", pretrained, ctx or cpu(), root)
