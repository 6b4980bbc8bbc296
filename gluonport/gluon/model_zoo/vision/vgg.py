"""VGG 11/13/16/19, with or without BatchNorm (``mxnet.gluon.model_zoo.vision.vgg``, 1.9.1).

"Very Deep Convolutional Networks for Large-Scale Image Recognition" (Simonyan & Zisserman
2014). Initializers are MXNet's (Xavier gaussian/out/2 for convolutions, normal for dense).
"""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ....initializer import Xavier
from ... import nn
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]


class VGG(HybridBlock):
    """VGG: blocks of 3x3 convolutions (+BatchNorm) and max pooling, two ``Dense(4096)`` with
    dropout, then ``Dense(classes)``.

    Parameters
    ----------
    layers : list of int
        Convolutions per block.
    filters : list of int
        Channels per block.
    classes : int, default 1000
    batch_norm : bool, default False
    """

    def __init__(self, layers: list[int], filters: list[int], classes: int = 1000,
                 batch_norm: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError("VGG: layers and filters must have the same length")
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")

    def _make_features(self, layers: list[int], filters: list[int], batch_norm: bool
                       ) -> nn.HybridSequential:
        features = nn.HybridSequential(prefix="")
        for num, channels in zip(layers, filters):
            for _ in range(num):
                init = Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
                features.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                       weight_initializer=init, bias_initializer="zeros"))
                if batch_norm:
                    features.add(nn.BatchNorm())
                features.add(nn.Activation("relu"))
            features.add(nn.MaxPool2D(strides=2))
        return features

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers: int, pretrained: bool = False, ctx: Context | None = None,
            root: str | None = None, **kwargs: Any) -> VGG:
    """VGG with ``num_layers`` (11, 13, 16, 19) layers; ``batch_norm=True`` for the _bn nets."""
    if num_layers not in vgg_spec:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are "
                         f"{sorted(vgg_spec)}")
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    name = f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}"
    return finish(net, name, pretrained, ctx or cpu(), root)


def _constructor(num_layers: int, batch_norm: bool) -> Any:
    def make(**kwargs: Any) -> VGG:
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(num_layers, **kwargs)

    make.__name__ = make.__qualname__ = f"vgg{num_layers}{'_bn' if batch_norm else ''}"
    make.__doc__ = (f"VGG-{num_layers}{' with BatchNorm' if batch_norm else ''}; keyword "
                    "arguments as :func:`get_vgg`.")
    return make


vgg11, vgg13, vgg16, vgg19 = (_constructor(n, False) for n in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_constructor(n, True) for n in (11, 13, 16, 19))
