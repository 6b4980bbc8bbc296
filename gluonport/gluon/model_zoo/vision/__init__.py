"""``gluon.model_zoo.vision``: MXNet 1.9.1's vision models, same architectures and parameter
names (AlexNet, DenseNet, Inception V3, ResNet V1/V2, SqueezeNet, VGG, MobileNet V1/V2).

>>> from gluonport.gluon.model_zoo import vision
>>> net = vision.get_model("resnet18_v1", classes=10)
>>> type(net).__name__
'ResNetV1'

Pretrained weights are never downloaded: ``pretrained=True`` uses MXNet's file when it is
already in ``root`` (default ``$MXNET_HOME/models``), else raises an error saying where to put
it; or call ``net.load_parameters(path)`` yourself.
"""

from __future__ import annotations

from typing import Any

from ...hybrid import HybridBlock
from .alexnet import AlexNet, alexnet
from .densenet import DenseNet, densenet121, densenet161, densenet169, densenet201
from .inception import Inception3, inception_v3
from .mobilenet import (
    MobileNet,
    MobileNetV2,
    get_mobilenet,
    get_mobilenet_v2,
    mobilenet0_5,
    mobilenet0_25,
    mobilenet0_75,
    mobilenet1_0,
    mobilenet_v2_0_5,
    mobilenet_v2_0_25,
    mobilenet_v2_0_75,
    mobilenet_v2_1_0,
)
from .resnet import (
    BasicBlockV1,
    BasicBlockV2,
    BottleneckV1,
    BottleneckV2,
    ResNetV1,
    ResNetV2,
    get_resnet,
    resnet18_v1,
    resnet18_v2,
    resnet34_v1,
    resnet34_v2,
    resnet50_v1,
    resnet50_v2,
    resnet101_v1,
    resnet101_v2,
    resnet152_v1,
    resnet152_v2,
)
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1
from .vgg import VGG, get_vgg, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

__all__ = ["get_model", "MODELS", "AlexNet", "alexnet", "DenseNet", "densenet121",
           "densenet161", "densenet169", "densenet201", "Inception3", "inception_v3",
           "MobileNet", "MobileNetV2", "get_mobilenet", "get_mobilenet_v2", "mobilenet1_0",
           "mobilenet0_75", "mobilenet0_5", "mobilenet0_25", "mobilenet_v2_1_0",
           "mobilenet_v2_0_75", "mobilenet_v2_0_5", "mobilenet_v2_0_25", "ResNetV1",
           "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2",
           "get_resnet", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "VGG", "get_vgg",
           "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn"]

MODELS = {
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1, "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1, "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2, "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn, "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121, "densenet161": densenet161, "densenet169": densenet169,
    "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75, "mobilenet0.5": mobilenet0_5,
    "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
}
"""``get_model`` names (MXNet's) -> constructor functions."""


def get_model(name: str, **kwargs: Any) -> HybridBlock:
    """A model-zoo network by MXNet's name (``'resnet50_v1'``, ``'mobilenetv2_0.25'``, ...).

    Parameters
    ----------
    name : str
        Case-insensitive model name; see :data:`MODELS`.
    pretrained : bool, default False
        Load published weights (only from a file already on disk; nothing is downloaded).
    classes : int
        Number of classes of the output layer.
    ctx : Context, default cpu()
        Where to load pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Where pretrained ``.params`` files are looked for.
    """
    key = name.lower()
    if key not in MODELS:
        raise ValueError("Model {} is not supported. Available options are\n\t{}".format(
            name, "\n\t".join(sorted(MODELS))))
    return MODELS[key](**kwargs)
