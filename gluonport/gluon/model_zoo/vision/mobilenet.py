"""MobileNet V1 and V2 (``mxnet.gluon.model_zoo.vision.mobilenet``, 1.9.1).

V1: "MobileNets: Efficient Convolutional Neural Networks for Mobile Vision Applications"
(Howard et al. 2017); V2: "Inverted Residuals and Linear Bottlenecks" (Sandler et al. 2018).
"""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["MobileNet", "MobileNetV2", "RELU6", "LinearBottleneck", "mobilenet1_0",
           "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75", "mobilenet0_5",
           "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet",
           "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """``clip(x, 0, 6)`` (the op node is named ``relu6``)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out: nn.HybridSequential, channels: int = 1, kernel: int = 1, stride: int = 1,
              pad: int = 0, num_group: int = 1, active: bool = True, relu6: bool = False
              ) -> None:
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out: nn.HybridSequential, dw_channels: int, channels: int, stride: int,
                 relu6: bool = False) -> None:
    """Depthwise 3x3 then pointwise 1x1, each with BatchNorm and activation."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels,
              relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """Expand (1x1, ``t`` times), depthwise 3x3, project (1x1, no activation); adds the input
    when shapes allow (``stride == 1`` and ``in_channels == channels``)."""

    def __init__(self, in_channels: int, channels: int, t: int, stride: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                      num_group=in_channels * t, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _scaled(values: list[int], multiplier: float) -> list[int]:
    return [int(v * multiplier) for v in values]


class MobileNet(HybridBlock):
    """MobileNet V1 with width ``multiplier``.

    Parameters
    ----------
    multiplier : float, default 1.0
        Channel width multiplier.
    classes : int, default 1000
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                dw_channels = _scaled([32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024],
                                      multiplier)
                channels = _scaled([64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2,
                                   multiplier)
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNet V2 with width ``multiplier``.

    Parameters
    ----------
    multiplier : float, default 1.0
        Channel width multiplier (the last 1x1 stays 1280 wide unless ``multiplier > 1``).
    classes : int, default 1000
    """

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                in_group = _scaled([32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                                   + [160] * 3, multiplier)
                out_group = _scaled([16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                                    + [160] * 3 + [320], multiplier)
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_group, out_group, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def _suffix(multiplier: float) -> str:
    """MXNet's file-name spelling of a multiplier: 1.0, 0.75, 0.5, 0.25."""
    text = f"{multiplier:.2f}"
    return text[:-1] if text in ("1.00", "0.50") else text


def get_mobilenet(multiplier: float, pretrained: bool = False, ctx: Context | None = None,
                  root: str | None = None, **kwargs: Any) -> MobileNet:
    """MobileNet V1 with width ``multiplier``."""
    net = MobileNet(multiplier, **kwargs)
    return finish(net, f"mobilenet{_suffix(multiplier)}", pretrained, ctx or cpu(), root)


def get_mobilenet_v2(multiplier: float, pretrained: bool = False, ctx: Context | None = None,
                     root: str | None = None, **kwargs: Any) -> MobileNetV2:
    """MobileNet V2 with width ``multiplier``."""
    net = MobileNetV2(multiplier, **kwargs)
    return finish(net, f"mobilenetv2_{_suffix(multiplier)}", pretrained, ctx or cpu(), root)


def _constructor(getter: Any, multiplier: float, name: str) -> Any:
    def make(**kwargs: Any) -> HybridBlock:
        return getter(multiplier, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"MobileNet{' V2' if getter is get_mobilenet_v2 else ''} with width "
                    f"multiplier {multiplier}; keyword arguments as :func:`{getter.__name__}`.")
    return make


mobilenet1_0 = _constructor(get_mobilenet, 1.0, "mobilenet1_0")
mobilenet0_75 = _constructor(get_mobilenet, 0.75, "mobilenet0_75")
mobilenet0_5 = _constructor(get_mobilenet, 0.5, "mobilenet0_5")
mobilenet0_25 = _constructor(get_mobilenet, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _constructor(get_mobilenet_v2, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _constructor(get_mobilenet_v2, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _constructor(get_mobilenet_v2, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _constructor(get_mobilenet_v2, 0.25, "mobilenet_v2_0_25")
