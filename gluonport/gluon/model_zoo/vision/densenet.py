"""DenseNet 121/161/169/201 (``mxnet.gluon.model_zoo.vision.densenet``, 1.9.1):
"Densely Connected Convolutional Networks" (Huang et al. 2016)."""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...contrib.nn import HybridConcurrent, Identity
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]


def _dense_layer(growth_rate: int, bn_size: int, dropout: float) -> HybridConcurrent:
    """BN-ReLU-1x1 conv, BN-ReLU-3x3 conv, concatenated with the input (``Identity``)."""
    new = nn.HybridSequential(prefix="")
    new.add(nn.BatchNorm())
    new.add(nn.Activation("relu"))
    new.add(nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False))
    new.add(nn.BatchNorm())
    new.add(nn.Activation("relu"))
    new.add(nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity())
    out.add(new)
    return out


def _dense_block(num_layers: int, bn_size: int, growth_rate: int, dropout: float,
                 index: int) -> nn.HybridSequential:
    block = nn.HybridSequential(prefix=f"stage{index}_")
    with block.name_scope():
        for _ in range(num_layers):
            block.add(_dense_layer(growth_rate, bn_size, dropout))
    return block


def _transition(channels: int) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm())
    out.add(nn.Activation("relu"))
    out.add(nn.Conv2D(channels, kernel_size=1, use_bias=False))
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet: stem, dense blocks joined by halving transitions, BN-ReLU, 7x7 average
    pooling, ``Dense(classes)``.

    Parameters
    ----------
    num_init_features : int
        Stem width.
    growth_rate : int
        Channels each dense layer adds.
    block_config : list of int
        Layers per dense block.
    bn_size : int, default 4
        Bottleneck width multiplier (``bn_size * growth_rate`` 1x1 channels).
    dropout : float, default 0
    classes : int, default 1000
    """

    def __init__(self, num_init_features: int, growth_rate: int, block_config: list[int],
                 bn_size: int = 4, dropout: float = 0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_dense_block(num_layers, bn_size, growth_rate, dropout,
                                               i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_transition(num_features))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers: int, pretrained: bool = False, ctx: Context | None = None,
                 root: str | None = None, **kwargs: Any) -> DenseNet:
    """DenseNet with ``num_layers`` (121, 161, 169, 201) layers."""
    if num_layers not in densenet_spec:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are "
                         f"{sorted(densenet_spec)}")
    init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(init_features, growth_rate, block_config, **kwargs)
    return finish(net, f"densenet{num_layers}", pretrained, ctx or cpu(), root)


def _constructor(num_layers: int) -> Any:
    def make(**kwargs: Any) -> DenseNet:
        return get_densenet(num_layers, **kwargs)

    make.__name__ = make.__qualname__ = f"densenet{num_layers}"
    make.__doc__ = f"DenseNet-{num_layers}; keyword arguments as :func:`get_densenet`."
    return make


densenet121, densenet161, densenet169, densenet201 = (_constructor(n)
                                                      for n in (121, 161, 169, 201))
