"""SqueezeNet 1.0 and 1.1 (``mxnet.gluon.model_zoo.vision.squeezenet``, 1.9.1):
"SqueezeNet: AlexNet-level accuracy with 50x fewer parameters" (Iandola et al. 2016)."""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...contrib.nn import HybridConcurrent
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]


def _fire_conv(channels: int, kernel_size: int, padding: int = 0) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation("relu"))
    return out


def _fire(squeeze: int, expand1x1: int, expand3x3: int) -> nn.HybridSequential:
    """A 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""
    out = nn.HybridSequential(prefix="")
    out.add(_fire_conv(squeeze, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_fire_conv(expand1x1, 1))
    paths.add(_fire_conv(expand3x3, 3, 1))
    out.add(paths)
    return out


# Feature layers per version: ("conv", channels, kernel), "pool", or (squeeze, e1, e3).
_LAYOUT = {
    "1.0": [("conv", 96, 7), "pool", (16, 64, 64), (16, 64, 64), (32, 128, 128), "pool",
            (32, 128, 128), (48, 192, 192), (48, 192, 192), (64, 256, 256), "pool",
            (64, 256, 256)],
    "1.1": [("conv", 64, 3), "pool", (16, 64, 64), (16, 64, 64), "pool", (32, 128, 128),
            (32, 128, 128), "pool", (48, 192, 192), (48, 192, 192), (64, 256, 256),
            (64, 256, 256)],
}


class SqueezeNet(HybridBlock):
    """SqueezeNet: a strided stem, fire modules with ceil-mode max pooling, dropout, then a
    1x1 convolution to ``classes``, ReLU and 13x13 average pooling.

    Parameters
    ----------
    version : {'1.0', '1.1'}
    classes : int, default 1000
    """

    def __init__(self, version: str, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        if version not in _LAYOUT:
            raise ValueError(f"Unsupported SqueezeNet version {version}:1.0 or 1.1 expected")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            for item in _LAYOUT[version]:
                if item == "pool":
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                elif item[0] == "conv":
                    self.features.add(nn.Conv2D(item[1], kernel_size=item[2], strides=2))
                    self.features.add(nn.Activation("relu"))
                else:
                    self.features.add(_fire(*item))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation("relu"))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def get_squeezenet(version: str, pretrained: bool = False, ctx: Context | None = None,
                   root: str | None = None, **kwargs: Any) -> SqueezeNet:
    """SqueezeNet ``version`` ('1.0' or '1.1')."""
    net = SqueezeNet(version, **kwargs)
    return finish(net, f"squeezenet{version}", pretrained, ctx or cpu(), root)


def squeezenet1_0(**kwargs: Any) -> SqueezeNet:
    """SqueezeNet 1.0; keyword arguments as :func:`get_squeezenet`."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs: Any) -> SqueezeNet:
    """SqueezeNet 1.1; keyword arguments as :func:`get_squeezenet`."""
    return get_squeezenet("1.1", **kwargs)
