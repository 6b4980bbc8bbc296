"""Inception V3 (``mxnet.gluon.model_zoo.vision.inception``, 1.9.1): "Rethinking the
Inception Architecture for Computer Vision" (Szegedy et al. 2015). Expects 299x299 inputs."""

from __future__ import annotations

from typing import Any

from ....context import Context, cpu
from ... import nn
from ...contrib.nn import HybridConcurrent
from ...hybrid import HybridBlock
from ._common import finish

__all__ = ["Inception3", "inception_v3"]

_SETTING_NAMES = ("channels", "kernel_size", "strides", "padding")


def _basic_conv(**kwargs: Any) -> nn.HybridSequential:
    """Convolution without bias, BatchNorm (eps 1e-3), ReLU."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation("relu"))
    return out


def _branch(pool: str | None, *conv_settings: tuple) -> nn.HybridSequential:
    """An optional pool ('avg' 3x3/1/1 or 'max' 3x3/2), then basic convolutions; each setting
    is (channels, kernel_size, strides, padding) with None for the default."""
    out = nn.HybridSequential(prefix="")
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {k: v for k, v in zip(_SETTING_NAMES, setting) if v is not None}
        out.add(_basic_conv(**kwargs))
    return out


def _concurrent(prefix: str, *branches: tuple) -> HybridConcurrent:
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for pool, *settings in branches:
            out.add(_branch(pool, *settings))
    return out


def _make_A(pool_features: int, prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (None, (64, 1, None, None)),
                       (None, (48, 1, None, None), (64, 5, None, 2)),
                       (None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                       ("avg", (pool_features, 1, None, None)))


def _make_B(prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (None, (384, 3, 2, None)),
                       (None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                       ("max",))


def _make_C(c7: int, prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (None, (192, 1, None, None)),
                       (None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0))),
                       (None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                        (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                        (192, (1, 7), None, (0, 3))),
                       ("avg", (192, 1, None, None)))


def _make_D(prefix: str) -> HybridConcurrent:
    return _concurrent(prefix,
                       (None, (192, 1, None, None), (320, 3, 2, None)),
                       (None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                       ("max",))


def _split_3x3(*first: tuple) -> nn.HybridSequential:
    """Convolutions, then parallel 1x3 and 3x1 convolutions concatenated (block E)."""
    seq = nn.HybridSequential(prefix="")
    seq.add(_branch(None, *first))
    split = HybridConcurrent(axis=1, prefix="")
    seq.add(split)
    split.add(_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_branch(None, (384, (3, 1), None, (1, 0))))
    return seq


def _make_E(prefix: str) -> HybridConcurrent:
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        out.add(_branch(None, (320, 1, None, None)))
        out.add(_split_3x3((384, 1, None, None)))
        out.add(_split_3x3((448, 1, None, None), (384, 3, None, 1)))
        out.add(_branch("avg", (192, 1, None, None)))
    return out


def make_aux(classes: int) -> nn.HybridSequential:
    """The auxiliary classifier head (defined by MXNet, unused by ``Inception3``)."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_basic_conv(channels=128, kernel_size=1))
    out.add(_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception V3 without the auxiliary head.

    Parameters
    ----------
    classes : int, default 1000
    """

    def __init__(self, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            add = self.features.add
            add(_basic_conv(channels=32, kernel_size=3, strides=2))
            add(_basic_conv(channels=32, kernel_size=3))
            add(_basic_conv(channels=64, kernel_size=3, padding=1))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_basic_conv(channels=80, kernel_size=1))
            add(_basic_conv(channels=192, kernel_size=3))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_A(32, "A1_"))
            add(_make_A(64, "A2_"))
            add(_make_A(64, "A3_"))
            add(_make_B("B_"))
            add(_make_C(128, "C1_"))
            add(_make_C(160, "C2_"))
            add(_make_C(160, "C3_"))
            add(_make_C(192, "C4_"))
            add(_make_D("D_"))
            add(_make_E("E1_"))
            add(_make_E("E2_"))
            add(nn.AvgPool2D(pool_size=8))
            add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def inception_v3(pretrained: bool = False, ctx: Context | None = None, root: str | None = None,
                 **kwargs: Any) -> Inception3:
    """Inception V3; ``pretrained=True`` loads ``inceptionv3`` from ``root`` (never
    downloads)."""
    return finish(Inception3(**kwargs), "inceptionv3", pretrained, ctx or cpu(), root)
