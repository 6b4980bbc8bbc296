"""ResNet V1 and V2 (``mxnet.gluon.model_zoo.vision.resnet``, 1.9.1).

V1: "Deep Residual Learning for Image Recognition" (He et al. 2015); V2 (pre-activation):
"Identity Mappings in Deep Residual Networks" (He et al. 2016). Blocks, prefixes and the order
in which children are created are MXNet's, so parameter names (``resnetv10_stage1_conv0_weight``)
and exported graphs are the same.
"""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels: int, stride: int, in_channels: int) -> nn.Conv2D:
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _projection_v1(channels: int, stride: int, in_channels: int) -> nn.HybridSequential:
    seq = nn.HybridSequential(prefix="")
    seq.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels))
    seq.add(nn.BatchNorm())
    return seq


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with BatchNorm, added to the (projected) input, then ReLU
    (ResNet-18/34 V1)."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = self.body(x)
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + out, act_type="relu")


class BottleneckV1(HybridBlock):
    """1x1 -> 3x3 -> 1x1 convolutions (channels/4 inside), added to the input, then ReLU
    (ResNet-50/101/152 V1; the stride sits on the first 1x1 as in MXNet)."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        mid = channels // 4
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(mid, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(mid, 1, mid))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = self.body(x)
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(out + residual, act_type="relu")


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN-ReLU-conv3x3, BN-ReLU-conv3x3, plus the input
    (ResNet-18/34 V2)."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        return self.conv2(x) + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck: three BN-ReLU-conv steps (1x1, 3x3 with the stride, 1x1),
    plus the input (ResNet-50/101/152 V2)."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        mid = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.conv2(F.Activation(self.bn2(x), act_type="relu"))
        x = self.conv3(F.Activation(self.bn3(x), act_type="relu"))
        return x + residual


def _stage(block: type, num_blocks: int, channels: int, stride: int, index: int,
           in_channels: int) -> nn.HybridSequential:
    """``stage<index>_``: the first block changes width/stride, the rest keep it."""
    stage = nn.HybridSequential(prefix=f"stage{index}_")
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=""))
        for _ in range(num_blocks - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


def _stem(features: nn.HybridSequential, channels: int, thumbnail: bool) -> None:
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
        return
    features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
    features.add(nn.BatchNorm())
    features.add(nn.Activation("relu"))
    features.add(nn.MaxPool2D(3, 2, 1))


class ResNetV1(HybridBlock):
    """ResNet V1: stem, four stages of ``block``, global average pooling, ``Dense(classes)``.

    Parameters
    ----------
    block : type
        ``BasicBlockV1`` or ``BottleneckV1``.
    layers : list of int
        Blocks per stage.
    channels : list of int
        Stem width, then each stage's width (one longer than ``layers``).
    classes : int, default 1000
    thumbnail : bool, default False
        A single 3x3 convolution as the stem (for small images such as CIFAR).
    """

    def __init__(self, block: type, layers: list[int], channels: list[int],
                 classes: int = 1000, thumbnail: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise ValueError("ResNetV1: channels must be one longer than layers")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            _stem(self.features, channels[0], thumbnail)
            for i, num in enumerate(layers):
                self.features.add(_stage(block, num, channels[i + 1], 1 if i == 0 else 2,
                                         i + 1, channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet V2: input BatchNorm (no scale/center), stem, four pre-activation stages,
    BN-ReLU, global average pooling, flatten, ``Dense(classes)``.

    Parameters are as :class:`ResNetV1` (``block`` is ``BasicBlockV2`` or ``BottleneckV2``).
    """

    def __init__(self, block: type, layers: list[int], channels: list[int],
                 classes: int = 1000, thumbnail: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise ValueError("ResNetV2: channels must be one longer than layers")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _stem(self.features, channels[0], thumbnail)
            in_channels = channels[0]
            for i, num in enumerate(layers):
                self.features.add(_stage(block, num, channels[i + 1], 1 if i == 0 else 2,
                                         i + 1, in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}

resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version: int, num_layers: int, pretrained: bool = False,
               ctx: Context | None = None, root: str | None = None, **kwargs: Any) -> HybridBlock:
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101, 152) layers.

    ``pretrained=True`` loads ``resnet<N>_v<version>`` from ``root`` (default
    ``$MXNET_HOME/models``); gluonport never downloads it.
    """
    if num_layers not in resnet_spec:
        raise ValueError(f"Invalid number of layers: {num_layers}. Options are "
                         f"{sorted(resnet_spec)}")
    if version not in (1, 2):
        raise ValueError(f"Invalid resnet version: {version}. Options are 1 and 2.")
    block_type, layers, channels = resnet_spec[num_layers]
    block = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block, layers, channels, **kwargs)
    return finish(net, f"resnet{num_layers}_v{version}", pretrained, ctx or cpu(), root)


def _constructor(version: int, num_layers: int) -> Any:
    def make(**kwargs: Any) -> HybridBlock:
        return get_resnet(version, num_layers, **kwargs)

    make.__name__ = f"resnet{num_layers}_v{version}"
    make.__qualname__ = make.__name__
    make.__doc__ = (f"ResNet-{num_layers} V{version}; keyword arguments as "
                    ":func:`get_resnet` (``pretrained``, ``ctx``, ``root``, ``classes``, "
                    "``thumbnail``).")
    return make


resnet18_v1 = _constructor(1, 18)
resnet34_v1 = _constructor(1, 34)
resnet50_v1 = _constructor(1, 50)
resnet101_v1 = _constructor(1, 101)
resnet152_v1 = _constructor(1, 152)
resnet18_v2 = _constructor(2, 18)
resnet34_v2 = _constructor(2, 34)
resnet50_v2 = _constructor(2, 50)
resnet101_v2 = _constructor(2, 101)
resnet152_v2 = _constructor(2, 152)
